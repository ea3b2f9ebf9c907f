#!/usr/bin/env bash
# iolayer: bad input, and an attach method forced where this kernel cannot use it, give one
# line on stderr and exit 1 (README: "A tool that cannot use it on this kernel refuses with
# one line"). And -h says what iolayer's -d, -j and -p do.
source "$(dirname "$0")/lib.sh"
require_root
plan 8

IL=$BIN/iolayer
[ -x "$IL" ] || { echo "Bail out! $IL is not built"; exit 1; }
nopid=$(( $(cat /proc/sys/kernel/pid_max) - 1 ))
while [ -e "/proc/$nopid" ]; do nopid=$((nopid - 1)); done
bad "-p of a pid that does not exist" "no process with pid $nopid" $IL -p "$nopid"
bad "--serve with --json" "^iolayer: --serve and --json cannot be combined" $IL --serve 19435 --json
bad "-d 0" "duration" $IL -d 0
if $IL -V | grep -q 'fentry/fexit *no'; then
	bad "--attach=fentry without fentry on this kernel" "cannot trace .* with the forced attach method" \
		$IL --attach=fentry -d 1
else
	skip "fentry works on this kernel"
fi
if $IL -V | grep -q 'kprobe/kretprobe *no'; then
	bad "--attach=kprobe without kprobes on this kernel" "cannot trace .* with the forced attach method" \
		$IL --attach=kprobe -d 1
else
	skip "kprobes work on this kernel"
fi
$IL -h | tr -s ' \n' '  ' >"$TMPD/h.out" # one line: argp wraps the options' help
is "$(grep -cE 'until Ctrl-C|one object per line|all disks' "$TMPD/h.out")" 0 \
	"-h: no 'until Ctrl-C' (default 10 s), no 'one object per line', no 'all disks'"
check "-h: -d defaults to 10 s, -j prints one object" grep -q 'print the verdict (default 10; Ctrl-C ends early) -j, --json JSON output: one object' "$TMPD/h.out"
check "-h: -p covers a process's threads, not its children" grep -q 'all its threads, not its children' "$TMPD/h.out"
done_testing
