#!/usr/bin/env bash
# fsslower: an O_SYNC write syncs inside the write. Both rows appear: the nested F first
# (it ends first), then its W, whose latency includes the F's.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fsslower-lib.sh"
require_root
plan 7

loop_ext4_setup
FS=$(tool fsslower)
F=$MNT/osync

wl_start "$TMPD/wl.out" -n 100 -m osync "$F"
check "fsslower --json starts" tool_start "$TMPD/j.out" "$TMPD/j.err" $FS --json -m 0 -p "$WL_PID"
wl_go
tool_stop
is "$TOOL_RC" 0 "exit status 0 after Ctrl-C"
sel() { jq -c --arg f "$F" "select(.file == \$f) | $1" "$TMPD/j.out"; }
is "$(sel 'select(.op == "W")' | wc -l)" 100 "100 O_SYNC writes in, 100 W rows"
is "$(sel 'select(.op == "F")' | wc -l)" 100 "100 nested syncs, 100 F rows"
diag "answer: W $(sel 'select(.op == "W")' | wc -l) F $(sel 'select(.op == "F")' | wc -l)"
is "$(sel 'select(.op == "F") | .sync' | sort -u)" '"o_sync"' "each F is marked o_sync (nested, not an fsync call)"
# pair each F with the W that follows it (same thread): the W must last at least as long
is "$(jq -rs --arg f "$F" '[.[] | select(.file == $f and (.op == "F" or .op == "W"))] as $r
	| [range(0; $r | length; 2) | select($r[.].op != "F" or $r[. + 1].op != "W"
	    or $r[. + 1].usecs < $r[.].usecs)] | length' "$TMPD/j.out")" 0 \
	"rows come as F then W, and each W lasts at least as long as its F"
is "$(jq -s '[.[] | select(.summary) | .summary.fsync.count] | add' "$TMPD/j.out")" 100 \
	"summary: 100 fsyncs, no fsync counted twice"
done_testing
