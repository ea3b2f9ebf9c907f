#!/usr/bin/env bash
# iowaitstack: bad input gives exactly one line on stderr and exit 1; help and attach choice.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/iowaitstack-lib.sh"
require_root
plan 15

bad_input "unknown pid" "no process with pid 999999999" $IWS -p 999999999
bad_input "unknown tid" "no thread with tid 999999999" $IWS --tid 999999999
bad_input "-p with --tid: one of them" "^iowaitstack: -p and --tid cannot be combined" $IWS -p $$ --tid $$
bad_input "DURATION not a number" "duration .*'abc'" $IWS abc
bad_input "DURATION not a number, with -d" "duration .*'extra-arg'" $IWS extra-arg -d 1
bad_input "-m larger than -M" "-m 500 is larger than -M 100" $IWS -m 500 -M 100
bad_input "pid not a number" "(pid|PID) must be a whole number" $IWS -p abc
bad_input "interval 0" "interval .* got '0'" $IWS -i 0
bad_input "-c without -i" "-c needs -i" $IWS -c 3
bad_input "two output formats" "choose one of --folded and --json" $IWS --folded --json
bad_input "--top not a number" "--top must be a whole number" $IWS --top x
bad_input "non-root" "must run as root" setpriv --reuid=65534 --regid=65534 --clear-groups $IWS

$IWS --help >"$TMPD/h.out" 2>&1
check "--help teaches by examples" grep -q 'EXAMPLES' "$TMPD/h.out"

# -v names the attach method; the duration ends the run by itself with exit 0
$IWS -v --top 0 1 >"$TMPD/v.out" 2>"$TMPD/v.err"; rc=$?
is "$rc" 0 "a 1-second run (--top 0: every stack, as iolayer's 0 is all) exits 0 by itself"
check "-v says which attach method sched_switch uses" \
	grep -qE 'sched_switch.*attaching with (tp_btf|raw_tp)' "$TMPD/v.err"
done_testing
