#!/usr/bin/env bash
# fsslower and iolayer count every call of each family: N rounds of call_families on a loop
# ext4 (write, writev, pwritev, pwritev2, O_DIRECT pwrite, io_uring WRITE; read, readv,
# preadv, preadv2; open, creat, openat2 after two openat; sync_file_range; fsync, io_uring
# FSYNC) give exactly 6N W, 4N R, 3N+2 O, N S and 2N F, with the sizes and positions the
# workload used; iolayer agrees. Where the method tells the interface (the syscall
# tracepoints), N W and N F rows are io_uring requests and the rest syscalls, row by row and
# in the summary's lines.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fsslower-lib.sh"
require_root
plan 24

loop_ext4_setup
FS=$(tool fsslower)
IL=$(tool iolayer)
F=$MNT/data
N=20
R=$((4 * N)) W=$((6 * N)) O=$((3 * N + 2)) S=$N FS_=$((2 * N))

# 1. fsslower --json -m 0 -p PID: every call is an event, and the summary counts them all.
wl_launch "$TMPD/wl.out" "$WL/call_families" -g "$TMPD/go" -n $N "$F"
check "fsslower --json -m 0 -p PID starts" tool_start "$TMPD/j.out" "$TMPD/j.err" $FS -v --json -m 0 -p "$WL_PID"
wl_go
tool_stop
is "$WL_RC" 0 "workload ran $N rounds of every call"
is "$TOOL_RC" 0 "exit status 0 after Ctrl-C"

sum() { jq -s "[.[] | select(.summary) | .summary.$1.count] | add" "$TMPD/j.out"; }
ev() { jq -s --arg f "$F" "[.[] | select(.op and .file == \$f) | $1]" "$TMPD/j.out"; }
rows_of() { ev "select(.op == \"$1\")" | jq length; }
got="R $(sum read) W $(sum write) O $(sum open) S $(sum sync_range) F $(sum fsync)"
is "$got" "R $R W $W O $O S $S F $FS_" \
	"summary: 4N reads, 6N writes, 3N+2 opens, N sync_file_range, 2N fsync (N=$N)"
is "$(rows_of R) $(rows_of W) $(rows_of O) $(rows_of S) $(rows_of F)" "$R $W $O $S $FS_" \
	"one event per call on $F, R W O S F"
is "$(jq -s '[.[] | select(.op)] | length' "$TMPD/j.out")" $((R + W + O + S + FS_)) \
	"no event for another file or process"
is "$(ev 'select(.op == "R" or .op == "W") | "\(.bytes) \(.size)"' | jq -r 'unique | .[]')" "4096 4096" \
	"every R and W moved 4096 bytes, size 4096 (a vectored call's size: what it moved)"
is "$(ev 'select(.op == "W") | .offset' | jq -c 'group_by(.) | map([.[0], length])')" \
	"[[0,$N],[4096,$N],[8192,$N],[12288,$N],[16384,$N],[20480,$N]]" \
	"W positions: write, writev at the file position, pwritev at pos_l, pwritev2 -1 at the file position, pwrite, io_uring"
is "$(ev 'select(.op == "R") | .offset' | jq -c 'group_by(.) | map([.[0], length])')" \
	"[[0,$N],[4096,$N],[8192,$N],[12288,$N]]" "R positions: read, readv, preadv, preadv2"
is "$(ev 'select(.op == "S") | "\(.offset) \(.size) \(.bytes)"' | jq -r 'unique | .[]')" "0 20480 0" \
	"S: the range's start and length, return 0"
is "$(ev 'select(.op == "F") | .sync' | jq -r 'unique | .[]')" "fsync" "F: fsync, none nested"
is "$(jq -s '[.[] | select(.lost) | .lost | to_entries[] | .value] | add' "$TMPD/j.out")" 0 "nothing lost"
diag "answer: fsslower R $(sum read) W $(sum write) O $(sum open) S $(sum sync_range) F $(sum fsync)"

# The interface: io_uring's requests are rows of their own where the syscall tracepoints are
# used (their tracepoints come with them); the file operations (fentry, kprobe) cannot tell.
by_if() { ev "select(.op == \"$1\") | .interface" | jq -r 'group_by(.) | map("\(.[0]):\(length)") | join(" ")'; }
sum_if() { jq -s -r "[.[] | select(.summary) | .summary.$1.interfaces[] | \"\(.interface):\(.count)\"] | join(\" \")" "$TMPD/j.out"; }
if grep -qE 'attaching with (tp_btf|tracepoint)' "$TMPD/j.err"; then
	is "W $(by_if W) F $(by_if F)" "W io_uring:$N syscall:$((5 * N)) F io_uring:$N syscall:$N" \
		"rows: N io_uring writes and N io_uring fsyncs, the rest syscalls"
	is "$(ev 'select(.interface == "io_uring") | "\(.op) \(.offset) \(.size) \(.bytes)"' | jq -r 'unique | join(",")')" \
		"F 0 0 0,W 20480 4096 4096" "io_uring rows: the write's position and size, the fsync's return"
	is "W $(sum_if write) F $(sum_if fsync) R $(sum_if read)" \
		"W syscall:$((5 * N)) io_uring:$N F syscall:$N io_uring:$N R syscall:$R" \
		"summary lines by interface: syscall and io_uring"
else
	# The filesystem's functions cannot tell the interface; sync_file_range is taken at its
	# syscall tracepoints in every method, so its rows can.
	is "$(ev 'select(.op != "S") | .interface' | jq -r 'unique | join(",")')" "" \
		"fentry/kprobe: no row but S claims an interface"
	is "$(ev 'select(.op == "S") | .interface' | jq -r 'unique | join(",")')" "syscall" \
		"fentry/kprobe: S rows come from the syscall"
	is "W $(sum_if write) F $(sum_if fsync)" "W null:$W F null:$FS_" \
		"fentry/kprobe: one summary line per call, its interface unknown (null), counting every call"
fi
# Not answers: they differ by method by design (the file operations cannot tell the interface).
diag "rows by interface W $(by_if W) F $(by_if F)"
diag "summary by interface W $(sum_if write) F $(sum_if fsync)"

# 2. iolayer --json on the same workload: the syscall/VFS counts are fsslower's.
wl_launch "$TMPD/wl2.out" "$WL/call_families" -g "$TMPD/go" -n $N "$F"
check "iolayer --json -p PID starts" tool_start "$TMPD/i.json" "$TMPD/i.err" $IL -p "$WL_PID" -d 600 --json
wl_go
tool_stop
is "$WL_RC $TOOL_RC" "0 0" "workload and iolayer --json exit 0"
j() { jq -r ".layers.syscall.$1.count" "$TMPD/i.json"; }
is "R $(j read) W $(j write) O $(j open) S $(j sync_range) F $(j fsync)" "R $R W $W O $O S $S F $FS_" \
	"iolayer --json counts the same calls"
diag "answer: iolayer R $(j read) W $(j write) O $(j open) S $(j sync_range) F $(j fsync)"
# Attribution: the workload's process is credited with every call, io_uring's requests too
# (their completions run in io_uring's workers or elsewhere, not in the call of a syscall).
pj() { jq -r ".processes[] | select(.pid == $WL_PID) | .ops.$1.count" "$TMPD/i.json"; }
is "R $(pj read) W $(pj write) O $(pj open) S $(pj sync_range) F $(pj fsync)" "R $R W $W O $O S $S F $FS_" \
	"iolayer's top process (the workload) is credited with each call, io_uring's included"
diag "answer: iolayer process R $(pj read) W $(pj write) O $(pj open) S $(pj sync_range) F $(pj fsync)"
# of them, io_uring's requests (timed from submission to completion, not split): where the
# syscall tracepoints tell the interface, N writes and N fsyncs; else none told apart
uring="W $(jq .layers.syscall.write.io_uring "$TMPD/i.json") F $(jq .layers.syscall.fsync.io_uring "$TMPD/i.json") R $(jq .layers.syscall.read.io_uring "$TMPD/i.json")"
if grep -qE 'attaching with (tp_btf|tracepoint)' "$TMPD/j.err"; then
	is "$uring" "W $N F $N R 0" "iolayer --json: of them, N writes and N fsyncs were io_uring requests"
else
	is "$uring" "W 0 F 0 R 0" "iolayer --json (fentry/kprobe): no io_uring request told apart"
fi

# 3. iolayer's table: one row per operation, sync_file_range included.
wl_launch "$TMPD/wl3.out" "$WL/call_families" -g "$TMPD/go" -n $N "$F"
check "iolayer -p PID starts" tool_start "$TMPD/i.txt" "$TMPD/i.err2" $IL -p "$WL_PID" -d 600
wl_go
tool_stop
is "$WL_RC $TOOL_RC" "0 0" "workload and iolayer exit 0"
row() { awk -v w="$1" '$1 == "syscall/VFS" && $2 == w {print $3}' "$TMPD/i.txt"; }
is "$(row read) $(row write) $(row open) $(row sync_file_range) $(row fsync)" "$R $W $O $S $FS_" \
	"iolayer's table: read, write, open, sync_file_range, fsync rows count the same"
if grep -qE 'attaching with (tp_btf|tracepoint)' "$TMPD/j.err"; then
	is "$(grep -c "^io_uring requests in the rows: write $N of $W, fsync $N of $FS_; each timed from submission to completion" "$TMPD/i.txt")" 1 \
		"iolayer's text says which of the rows' calls were io_uring requests, and that they are not split"
else
	is "$(grep -c '^io_uring requests' "$TMPD/i.txt")" 0 "iolayer's text (fentry/kprobe): no io_uring line"
fi

done_testing
