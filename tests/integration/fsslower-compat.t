#!/usr/bin/env bash
# fsslower: 32-bit system calls (int 0x80, as a 32-bit process makes them). 10 writes and 10
# fsyncs the 64-bit way, then 10 of each the 32-bit way. Where the filesystem's own functions
# are traced (fentry, kprobe) every call is a row: 20 W, 20 F. At raw_syscalls (the tracepoint
# method) a 32-bit call's number means another call and its arguments sit elsewhere: the 64-bit
# calls are rows (10 W, 10 F) and the 32-bit ones are counted as not measured (20), never
# dropped silently. Either way, calls in = rows + calls counted as not measured.
source "$(dirname "$0")/lib.sh"
require_root
plan 6

loop_ext4_setup
FS=$(tool fsslower)
F=$MNT/compat

wl_launch "$TMPD/wl.out" "$WL/compat_calls" -g "$TMPD/go" -n 10 "$F"
check "fsslower --json starts" tool_start "$TMPD/j.out" "$TMPD/j.err" $FS -v --json -m 0 -p "$WL_PID"
wl_go
tool_stop
if [ "$WL_RC" = 3 ]; then
	for i in 1 2 3 4 5; do skip "this kernel has no 32-bit system call entry (int 0x80)"; done
	exit 0
fi
is "$WL_RC $(tr '\n' ' ' <"$TMPD/wl.out" | sed 's/pid [0-9]* //')" "0 writes64 10 fsyncs64 10 writes32 10 fsyncs32 10 " \
	"the workload made 10 writes and 10 fsyncs each way"
is "$TOOL_RC" 0 "exit status 0 after Ctrl-C"
sel() { jq -c --arg f "$F" "select(.file == \$f) | $1" "$TMPD/j.out"; }
w=$(sel 'select(.op == "W")' | wc -l)
f=$(sel 'select(.op == "F")' | wc -l)
lost=$(jq -s '[.[] | select(.summary) | .lost.compat_syscall // 0] | add // 0' "$TMPD/j.out")
diag "W $w F $f compat_not_measured $lost" # the split depends on the method
diag "answer: calls accounted for (rows + not measured) $((w + f + lost)) of 40"
if grep -qE 'attaching with (tp_btf|tracepoint)' "$TMPD/j.err"; then
	is "$w $f" "10 10" "raw_syscalls: the 64-bit calls are rows (10 W, 10 F)"
	is "$lost" 20 "raw_syscalls: the 20 32-bit calls are counted as not measured"
else
	is "$w $f" "20 20" "file operations: every call is a row (20 W, 20 F)"
	is "$lost" 0 "file operations: nothing counted as not measured"
fi
is "$((w + f + lost))" 40 "40 calls in = rows + calls counted as not measured"
done_testing
