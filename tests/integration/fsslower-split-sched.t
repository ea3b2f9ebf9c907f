#!/usr/bin/env bash
# fsslower --split against the kernel's own counters: split_sched does 4 MiB pwrites and
# fsyncs, and sums around each call its thread CPU clock (schedstat field 1, up to date),
# schedstat's run_delay (field 2) and its switch-ins (field 3). The tool's on-CPU and
# run-queue sums for that thread (its per-process aggregate, -m 100000: no rows, so no event
# is built inside the calls) are compared with them:
#  1. alone on its CPU: on-CPU;
#  2. beside two CPU hogs pinned to the same CPU (run-queue time real: one hog left it under
#     10 ms in 1 run of 8): on-CPU and run queue, and who ran on its CPU while it waited in
#     the run queue: the holders' parts add up to the run queue's exactly (each wait is
#     closed once, at its switch-in, and split among the runs it spanned), a hog the
#     largest.
# Where the kernel's counters and the tracepoints differ (measured on this VM, per call,
# against ftrace's own sched_switch, sched_stat_runtime and raw_syscalls times; the tool
# matches ftrace's on-CPU time between sys_enter and sys_exit within 1-6 us a call):
#  - under load the thread CPU clock (the rq's clock_task) falls short of the time the
#    thread was current by 0.4 to 7 ms per 4 MiB write, and run_delay is long by as much
#    (the hypervisor's time, not in /proc/stat's steal column here): the two kernel sums
#    still add up to the tool's on-CPU + run queue;
#  - the clock counts, besides the call, what lies outside the tool's window (sys_enter to
#    sys_exit): the bracket's own cost (the clock reads' syscall entry and exit, a tracer's
#    programs around the traced call: 3-7 us; 15-30 us more when the call was switched, as
#    the return to user space then runs cold), and at each switch-in the time before the
#    sched_switch tracepoint: the kernel starts the thread's clock at __schedule's rq clock
#    update (a median 31 us before the tracepoint when the thread takes its CPU back from
#    the hog, 12 us when it gives it up), and when a wake-up preempts the hog the update is
#    skipped (rq_clock_skip_update): the wait from the enqueue counts on CPU, run_delay 0.
#    Per fsync (3 switch-ins beside the hog, woken from the other CPU) 70-90 us; with
#    0.5 ms writes (a quiet machine) some 3 ms of 25-45 ms in all, beyond the old "at least
#    95 % of the clock" (it failed in 1 run of 3). split_sched measures both (bracket_ns: a
#    bracket around a traced call with nothing to do; switch_ns: brackets that switched once
#    around a sched_yield, a 1 ms sleep and a wake-up from another CPU, less bracket_ns, the
#    largest), so K_OUT = calls x bracket_ns + switches x switch_ns is the clock's time
#    outside the calls.
# So the checks are:
#  - the tool counted each call: 40 fsyncs, 40 pwrites (41 writes when the workload's own
#    output at its exit, into $TMPD, goes to a filesystem the tool traces: not a guest's
#    /tmp, a tmpfs);
#  - the tool's parts of the calls add up to no more than the wall clock (CLOCK_MONOTONIC,
#    the tool's own clock) between reads just around each call, and to at least 95 % of it
#    less K_OUT and what run_delay holds beyond the tool's run queue (preemptions on the way
#    back to user space, after the syscall exit: outside the tool's window, inside the
#    reads): no time of a call is lost or counted twice;
#  - alone: the tool's on-CPU is at least 95 % of the CPU clock less K_OUT (its window is
#    inside the clock reads: it can never have less);
#  - at most 105 % of the clock plus what run_delay holds beyond the tool's run queue (where
#    this kernel puts the time its clock leaves out), and no more;
#  - the tool's on-CPU + run queue is at most 105 % of the CPU clock + run_delay (which also
#    count the clock reads and preemptions on the way back to user space, outside the call).
# Known gaps (TODO below): run queue against run_delay alone, for the same reasons; and
# beside the hogs, on-CPU against the clock from below. CI's machine once counted 53.8 ms on
# its CPU clock where the tool saw 18.9 ms on CPU and 7.9 ms in the run queue (run_delay
# 32.6 ms; 80 calls, 116 switch-ins): the clock's share of each switch-in, skipped rq clock
# updates included, is the hypervisor's to decide there, beyond K_OUT's calibration. The
# wall-clock check above is the one that holds the tool to every nanosecond of the calls.
source "$(dirname "$0")/lib.sh"
require_root
require_cmd jq jq
plan 13

loop_ext4_setup 768
FS=$(tool fsslower)
F=$MNT/data

# run_case HOG: the workload on CPU 1, with two hogs there when HOG is 1; sets K_ON K_RQ
# K_OUT K_WALL T_ON T_RQ T_ALL T_WRITES T_FSYNCS HOGS
run_case() {
	local hog=$1
	wl_launch "$TMPD/wl.out" taskset -c 1 "$WL/split_sched" -g "$TMPD/go" -n 40 -s 4194304 "$F"
	tool_start "$TMPD/j.out" "$TMPD/j.err" $FS --split --json -m 100000 -p "$WL_PID" || return 1
	HOGS=
	if [ "$hog" = 1 ]; then
		for _ in 1 2; do
			taskset -c 1 sh -c 'while :; do :; done' &
			HOGS="$HOGS $!"
			at_exit "kill $!"
		done
	fi
	wl_go
	[ -n "$HOGS" ] && kill $HOGS
	tool_stop
	K_ON=$(awk '$1 == "oncpu_ns" {print $2}' "$TMPD/wl.out")
	K_RQ=$(awk '$1 == "runq_ns" {print $2}' "$TMPD/wl.out")
	# what the CPU clock counts outside the calls: each bracket's own cost and each switch-in's
	K_OUT=$(awk '$1 == "calls" {n = $2} $1 == "switches" {s = $2} $1 == "bracket_ns" {b = $2}
		$1 == "switch_ns" {w = $2} END {print n * b + s * w}' "$TMPD/wl.out")
	K_WALL=$(awk '$1 == "wall_ns" {print $2}' "$TMPD/wl.out")
	read -r T_ON T_RQ T_ALL T_WRITES T_FSYNCS < <(jq -r --argjson p "$WL_PID" 'select(.summary) |
		[.split.processes[] | select(.pid == $p and (.op == "write" or .op == "fsync"))] |
		"\(map(.on_cpu_us) | add * 1000 | floor) \(map(.runq_us) | add * 1000 | floor) \(map(.on_cpu_us + .runq_us + .iowait_block_us + .iowait_task_us + .other_us) | add * 1000 | floor) \(map(select(.op == "write").calls) | add) \(map(select(.op == "fsync").calls) | add)"' "$TMPD/j.out")
	# the CPU holders' sum (ns, rounded down per row as the parts are) and the largest one's pid
	read -r H_RQ H_TOP H_ROWS < <(jq -r --argjson p "$WL_PID" 'select(.summary) | [.split.cpu_holders[] |
		select(.pid == $p and (.op == "write" or .op == "fsync"))] |
		"\(map(.usecs) | add // 0 | . * 1000 | floor) \(max_by(.usecs).holder_pid // "none") \(length)"' "$TMPD/j.out")
	diag "hog=$hog CPU holders: $(jq -r --argjson p "$WL_PID" 'select(.summary) | [.split.cpu_holders[] | select(.pid == $p) | "\(.holder) \(.holder_pid) \(.op) \(.usecs) us \(.runs) runs"] | join("; ")' "$TMPD/j.out")"
	diag "hog=$hog kernel: on-CPU $K_ON ns, run queue $K_RQ ns, wall $K_WALL ns, outside the calls $K_OUT ns ($(awk '$1 ~ /^(calls|switches|bracket_ns|switch_ns)$/ {printf "%s %s ", $1, $2}' "$TMPD/wl.out")); tool: $T_ON ns, $T_RQ ns, all parts $T_ALL ns"
	diag "hog=$hog tool: calls $(jq -r --argjson p "$WL_PID" 'select(.summary) | [.split.processes[] | select(.pid == $p) | "\(.op) \(.calls) (run queue \(.runq_us) us)"] | join(", ")' "$TMPD/j.out"); lost $(jq -c 'select(.summary) | .summary.lost // .lost // null' "$TMPD/j.out")"
	[ "$WL_RC" = 0 ] && [ "$TOOL_RC" = 0 ] && [ -n "$T_ON" ]
}
# within5 A B: |A - B| <= 5 % of B
within5() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= b * 0.05) }'; }
# oncpu_lower: 0.95 (K_ON - K_OUT) <= T_ON
oncpu_lower() { awk -v t="$T_ON" -v k="$K_ON" -v o="$K_OUT" 'BEGIN { exit !(k > 0 && t >= (k - o) * 0.95) }'; }
# oncpu_upper: T_ON <= 1.05 K_ON + max(0, K_RQ - T_RQ), and T_ON + T_RQ <= 1.05 (K_ON + K_RQ)
oncpu_upper() {
	awk -v t="$T_ON" -v tr="$T_RQ" -v k="$K_ON" -v kr="$K_RQ" 'BEGIN {
		x = kr - tr; if (x < 0) x = 0
		exit !(k > 0 && t <= k * 1.05 + x && t + tr <= (k + kr) * 1.05) }'
}
# oncpu_ok: both
oncpu_ok() { oncpu_lower && oncpu_upper; }

# wall_ok: 0.95 (K_WALL - K_OUT - max(0, K_RQ - T_RQ)) <= T_ALL <= K_WALL
wall_ok() {
	awk -v t="$T_ALL" -v w="$K_WALL" -v o="$K_OUT" -v kr="$K_RQ" -v tr="$T_RQ" 'BEGIN {
		x = kr - tr; if (x < 0) x = 0
		exit !(w > 0 && t <= w && t >= (w - o - x) * 0.95) }'
}
# the workload's output write at its exit: traced when $TMPD is on ext4, xfs or btrfs
case $(stat -f -c %T "$TMPD") in ext2/ext3 | xfs | btrfs) WRITES=41 ;; *) WRITES=40 ;; esac
check "alone: workload and tool ran" run_case 0
is "$T_WRITES $T_FSYNCS" "$WRITES 40" "alone: every call counted ($WRITES writes, 40 fsyncs)"
check "alone: the parts add up to the calls' wall-clock time (less what lies outside the tool's window)" wall_ok
check "alone: on-CPU within 5 % of the thread CPU clock (less its time outside the calls), plus run_delay's excess" oncpu_ok
check "beside the hogs: workload and tool ran" run_case 1
is "$T_WRITES $T_FSYNCS" "$WRITES 40" "beside the hogs: every call counted ($WRITES writes, 40 fsyncs)"
check "beside the hogs: run queue is real (over 10 ms)" test "$K_RQ" -gt 10000000
check "beside the hogs: the parts add up to the calls' wall-clock time (less what lies outside the tool's window)" wall_ok
check "beside the hogs: on-CPU at most 105 % of the thread CPU clock, plus run_delay's excess" oncpu_upper
# each row's usecs rounded to 0.001 us: up to 1 ns a row apart
check "beside the hogs: the CPU holders' time is the run queue's ($H_RQ ns in $H_ROWS rows, run queue $T_RQ ns)" \
	awk -v a="$H_RQ" -v b="$T_RQ" -v n="$H_ROWS" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= n + 4) }'
case " $HOGS " in *" $H_TOP "*) ok 0 "beside the hogs: a hog held the CPU the longest";; *) ok 1 "beside the hogs: a hog held the CPU the longest ($H_TOP, hogs$HOGS)";; esac
if within5 "$T_RQ" "$K_RQ"; then ok 0 "beside the hogs: run queue within 5 % of run_delay"; else ok 1 "beside the hogs: run queue within 5 % of run_delay # TODO run_delay also holds the time the CPU clock leaves out, and preemptions on the way back to user space"; fi
if oncpu_lower; then ok 0 "beside the hogs: on-CPU at least 95 % of the thread CPU clock less its time outside the calls"; else ok 1 "beside the hogs: on-CPU at least 95 % of the thread CPU clock less its time outside the calls # TODO the clock's share of a switch-in under a hypervisor, beyond K_OUT"; fi
done_testing
