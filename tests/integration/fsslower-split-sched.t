#!/usr/bin/env bash
# fsslower --split against the kernel's own counters: split_sched does 4 MiB pwrites and
# fsyncs, and sums around each call its thread CPU clock (schedstat field 1, up to date) and
# schedstat's run_delay (field 2). The tool's on-CPU and run-queue sums for that thread (its
# per-process aggregate, -m 100000: no rows, so no event is built inside the calls) must
# match within 5 %:
#  1. alone on its CPU: on-CPU;
#  2. beside a CPU hog pinned to the same CPU (run-queue time real): on-CPU and run queue.
# Known gap (TODO below): beside the hog, some runs put one or more whole hog slices (ms) of
# what the kernel counts as run_delay into the tool's on-CPU time; under study.
source "$(dirname "$0")/lib.sh"
require_root
require_cmd jq jq
plan 6

loop_ext4_setup 768
FS=$(tool fsslower)
F=$MNT/data

# run_case HOG: the workload on CPU 1, with a hog there when HOG is 1; sets K_ON K_RQ T_ON T_RQ (ns)
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

check "alone: workload and tool ran" run_case 0
check "alone: on-CPU within 5 % of the thread CPU clock" within5 "$T_ON" "$K_ON"
check "beside a hog: workload and tool ran" run_case 1
check "beside a hog: run queue is real (over 10 ms)" test "$K_RQ" -gt 10000000
if within5 "$T_ON" "$K_ON"; then ok 0 "beside a hog: on-CPU within 5 %"; else ok 1 "beside a hog: on-CPU within 5 % # TODO whole hog slices counted on CPU in some runs"; fi
if within5 "$T_RQ" "$K_RQ"; then ok 0 "beside a hog: run queue within 5 % of run_delay"; else ok 1 "beside a hog: run queue within 5 % of run_delay # TODO as above"; fi
done_testing
