#!/usr/bin/env bash
# fsslower --split against the kernel's own counters: split_sched does 4 MiB pwrites and
# fsyncs, and sums around each call its thread CPU clock (schedstat field 1, up to date) and
# schedstat's run_delay (field 2). The tool's on-CPU and run-queue sums for that thread (its
# per-process aggregate, -m 100000: no rows, so no event is built inside the calls) are
# compared with them:
#  1. alone on its CPU: on-CPU;
#  2. beside a CPU hog pinned to the same CPU (run-queue time real): on-CPU and run queue.
# Where the kernel's counters and the tracepoints differ (measured on this VM under load,
# per call, against ftrace's own sched_switch/sched_wakeup times): the tool matches the
# tracepoints to the microsecond, while the thread CPU clock (the rq's clock_task) falls short
# of the time the thread was current by 0.4 to 7 ms per 4 MiB write and run_delay is long by
# as much: the two kernel sums still add up to the tool's on-CPU + run queue. The time the
# task clock leaves out (the hypervisor's, not seen in /proc/stat's steal column here) is
# what made the old "on-CPU within 5 %" check fail in 1 run of 4. So the checks are:
#  - the tool's on-CPU is at least 95 % of the CPU clock (its window is inside the clock
#    reads: it can never have less);
#  - at most 105 % of it plus what run_delay holds beyond the tool's run queue (where this
#    kernel puts the time its clock leaves out), and no more;
#  - the tool's on-CPU + run queue is at most 105 % of the CPU clock + run_delay (which also
#    count the clock reads and preemptions on the way back to user space, outside the call).
# Known gap (TODO below): run queue against run_delay alone, for the same reason.
source "$(dirname "$0")/lib.sh"
require_root
require_cmd jq jq
plan 6

loop_ext4_setup 768
FS=$(tool fsslower)
F=$MNT/data

# run_case HOG: the workload on CPU 1, with a hog there when HOG is 1; sets K_ON K_RQ T_ON T_RQ
run_case() {
	local hog=$1
	wl_launch "$TMPD/wl.out" taskset -c 1 "$WL/split_sched" -g "$TMPD/go" -n 40 -s 4194304 "$F"
	tool_start "$TMPD/j.out" "$TMPD/j.err" $FS --split --json -m 100000 -p "$WL_PID" || return 1
	if [ "$hog" = 1 ]; then
		taskset -c 1 sh -c 'while :; do :; done' &
		HOG=$!
		at_exit "kill $HOG"
	fi
	wl_go
	[ "$hog" = 1 ] && kill "$HOG"
	tool_stop
	K_ON=$(awk '$1 == "oncpu_ns" {print $2}' "$TMPD/wl.out")
	K_RQ=$(awk '$1 == "runq_ns" {print $2}' "$TMPD/wl.out")
	read -r T_ON T_RQ < <(jq -r --argjson p "$WL_PID" 'select(.summary) | [.split.processes[] |
		select(.pid == $p and (.op == "write" or .op == "fsync"))] |
		"\(map(.on_cpu_us) | add * 1000 | floor) \(map(.runq_us) | add * 1000 | floor)"' "$TMPD/j.out")
	diag "hog=$hog kernel: on-CPU $K_ON ns, run queue $K_RQ ns; tool: $T_ON ns, $T_RQ ns"
	[ "$WL_RC" = 0 ] && [ "$TOOL_RC" = 0 ] && [ -n "$T_ON" ]
}
# within5 A B: |A - B| <= 5 % of B
within5() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= b * 0.05) }'; }
# oncpu_ok: 0.95 K_ON <= T_ON <= 1.05 K_ON + max(0, K_RQ - T_RQ), and
# T_ON + T_RQ <= 1.05 (K_ON + K_RQ)
oncpu_ok() {
	awk -v t="$T_ON" -v tr="$T_RQ" -v k="$K_ON" -v kr="$K_RQ" 'BEGIN {
		x = kr - tr; if (x < 0) x = 0
		exit !(k > 0 && t >= k * 0.95 && t <= k * 1.05 + x && t + tr <= (k + kr) * 1.05) }'
}

check "alone: workload and tool ran" run_case 0
check "alone: on-CPU within 5 % of the thread CPU clock, plus run_delay's excess" oncpu_ok
check "beside a hog: workload and tool ran" run_case 1
check "beside a hog: run queue is real (over 10 ms)" test "$K_RQ" -gt 10000000
check "beside a hog: on-CPU within 5 % of the thread CPU clock, plus run_delay's excess" oncpu_ok
if within5 "$T_RQ" "$K_RQ"; then ok 0 "beside a hog: run queue within 5 % of run_delay"; else ok 1 "beside a hog: run queue within 5 % of run_delay # TODO run_delay also holds the time the CPU clock leaves out, and preemptions on the way back to user space"; fi
done_testing
