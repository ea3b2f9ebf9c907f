#!/usr/bin/env bash
# iolayer samples the I/O-wait stacks (iw_cfg.sampled): every sleep of 1 ms or more has its
# stack walked, shorter ones while a CPU's budget of walks lasts, and past it with a chance of
# their length, each standing for the wait it was picked for, so a stack's time is an
# unbiased estimate. The counts and times are every sleep's.
# Known answers, from iowaitstack, which walks every sleep, tracing the same sleeps at the
# same time: a writer held by a blkio throttle (4 KiB direct writes, 5 ms sleeps: every one
# walked) beside a reader of 4 KiB direct reads (tens of thousands of sleeps of microseconds,
# most not walked). iolayer's top stack is the writer's, as iowaitstack's largest, and the
# wait iolayer gives it, its share of the sampled stacks' weight times the layer's total, is
# within a tenth of what iowaitstack measured under it. Were the reader's sampled sleeps
# weighed by their own length, its stack would keep a tenth of its time and the writer's
# estimate would be a quarter too high.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/iowaitstack-lib.sh"
require_root
require_cmd jq jq
plan 5

IOL=$(tool iolayer)
loop_raw_setup 64
RD=$LOOPDEV
loop_raw_setup 64
WR=$LOOPDEV
throttled_cgroup "iolayer-stacks-$$" "$(cat "/sys/class/block/${WR#/dev/}/dev")" 200

$IWS --json >"$TMPD/iws.json" 2>"$TMPD/iws.err" &
IWSP=$!
at_exit "kill -9 $IWSP"
check "iowaitstack starts" wait_for 30 grep -q 'Hit Ctrl-C' "$TMPD/iws.err"
check "iolayer starts" tool_start "$TMPD/iol.json" "$TMPD/iol.err" $IOL --json -d 600

sh -c "echo \$\$ >$CG/cgroup.procs && exec dd if=/dev/zero of=$WR bs=4k count=400 oflag=direct status=none" &
DD=$!
at_exit "kill -9 $DD"
"$WL/direct_read" -n 40000 -s 4096 "$RD" >"$TMPD/rd.out"
wait "$DD"
sleep 0.2
tool_stop
kill -INT "$IWSP"; wait "$IWSP"

w_exact=$(iw_sum "$TMPD/iws.json" usecs any 'sys_write')
r_exact=$(iw_sum "$TMPD/iws.json" usecs any 'sys_pread64')
top=$(jq -r '.top_iowait_stack | join(" ")' "$TMPD/iol.json")
est=$(jq -r '.top_iowait_stack_usecs' "$TMPD/iol.json")
diag "iowaitstack: writer $w_exact us, reader $r_exact us in $(iw_sum "$TMPD/iws.json" waits any 'sys_pread64') sleeps;" \
	"iolayer: top stack $est us, I/O wait $(jq '.layers.iowait.total_ns / 1000 | floor' "$TMPD/iol.json" 2>/dev/null) us"
check "the writer's sleeps are iowaitstack's largest stack ($w_exact us against the reader's $r_exact)" \
	test "$w_exact" -gt "$r_exact" -a "$r_exact" -gt 0
check "iolayer's top I/O-wait stack is the writer's: ${top:0:120}" grep -q 'sys_write' <<<"$top"
check "its wait, estimated from the sampled stacks ($est us), is within a tenth of iowaitstack's ($w_exact us)" \
	test $((est * 10)) -ge $((w_exact * 9)) -a $((est * 10)) -le $((w_exact * 11))
done_testing
