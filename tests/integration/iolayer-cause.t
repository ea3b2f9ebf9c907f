#!/usr/bin/env bash
# iolayer's verdict follows the wait to who makes it slow (user/lib/cause.c), on the issue's
# known answers:
#  1. noisy neighbour on the slow disk (FUSE fixture: every request 300 us, 64 MiB/s): a
#     loop of 10-byte write+fsync beside two loops of short-lived `dd bs=1M oflag=direct`;
#     with -p VICTIM and without: the victim's fsync and file, dd (a group of pids) the
#     culprit with most of the disk's bytes;
#  2. the same on a fast disk (the fixture at 100 us a request, no bandwidth limit), traced
#     five times: the same layer and culprit each time (stable);
#  3. a direct 4 KiB dd in a blkio cgroup limited to 50 write IOPS beside an unthrottled
#     fio: with -p DD and without, the block layer, the throttle, its cgroup and rule, never
#     fio; dd's disk bytes its own, not the workers' that queue its held bios;
#  4. CPU starvation: an fsync loop pinned to one CPU with four busy loops there (in a cgroup
#     of their own): the run-queue part dominates and the verdict names the busy loops (CPU),
#     their pids and cgroup, not a disk; 4c: busy processes of 30 ms each, one after another
#     on every CPU: they are the culprit (their CPU time from their exits), not the victim;
#  6. a buffered ETL writer beside the fsync loop, -p the loop: the writer, known as the
#     dirtier of the pages the flusher writes back, is the culprit (not the flusher);
#  7. four processes appending to one file and syncing it, -p one: its share of the disk's
#     bytes is its own (a quarter), the three others a neighbour;
#  5. lock wait: a small appender and lock_holder on one ext4 file (ext4 serialises
#     buffered writes on the inode lock; each of the holder's appends holds it 20 ms asleep
#     in a page fault, userfaultfd, so the small one sleeps rather than spins, on any
#     machine's speed): the small one's time is mostly other waits, and the verdict names
#     the holder (lock).
#  8. xfs: an fsync loop beside a buffered dd loop, -p the loop: the log's completions end its
#     waits, and the dd behind them is the culprit (not the kworkers that run them);
#  9. fio through io_uring beside a trickle of small writes: the device and fio (the layers'
#     decision: io_uring is not split), not "none" for the trickle's calls;
# 10. a buffered write+fdatasync loop in the throttled cgroup of 3, beside direct dd loops:
#     a kernel worker queues its held writeback bios; the throttle, its cgroup, not the disk.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/slowdisk-lib.sh"
require_root
require_cmd jq jq
require_cmd fio fio
require_cmd python3 python3
require_cmd xfsprogs mkfs.xfs
slowdisk_available || skip_all "no FUSE (the slow-disk fixture needs it)"
plan 51

IL=$(tool iolayer)
HOG=$TMPD/hog
cp "$(command -v yes)" "$HOG" # a CPU hog named hog

# victim FILE: a 10-byte write+fsync loop (python3), pid in VICTIM
victim() {
	python3 -c "
import os
fd = os.open('$1', os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
while True:
    os.write(fd, b'0123456789'); os.fsync(fd)" &
	VICTIM=$!
	at_exit "kill $VICTIM"
}
# neighbours DIR: two loops of short-lived direct dd's, pids in DDS
neighbours() {
	local i pids=
	for i in 1 2; do
		sh -c "while :; do dd if=/dev/zero of=$1/big$i bs=1M count=4 oflag=direct conv=notrunc status=none; done" &
		pids="$pids $!"
	done
	DDS=$pids
	at_exit "kill $pids; pkill -f 'of=$1/big'"
}
# beside_writer NAME COMMAND PATTERN FILE: COMMAND in a loop (its processes matched by
# PATTERN, for pkill) beside a victim on FILE, -p the victim traced 3 s into NAME
beside_writer() {
	sh -c "while :; do $2; done" &
	local w=$!
	at_exit "kill $w; pkill -f '$3'"
	victim "$4"
	sleep 1
	trace "$1" -p "$VICTIM" -d 3
	kill "$w" "$VICTIM"; pkill -f "$3"; wait "$w" "$VICTIM" 2>/dev/null
}
stop_neighbours() { kill $DDS 2>/dev/null; pkill -f "of=$1/big"; wait $DDS 2>/dev/null; }
v() { jq -r ".verdict.$2" "$TMPD/$1.json"; }
trace() { # trace NAME ARGS...: iolayer ARGS --json into $TMPD/NAME.json
	local name=$1; shift
	$IL "$@" --json >"$TMPD/$name.json" 2>"$TMPD/$name.err" || diag_file "$TMPD/$name.err"
	diag "$name: $(v "$name" layer) -- $(v "$name" 'summary // .verdict.reason')"
	jq -r '.verdict.evidence[]? | "    " + .' "$TMPD/$name.json" | sed 's/^/# /'
}

# ---- 1. noisy neighbour on the slow disk --------------------------------------------------
slowdisk_start 300 $((64 << 20)) 256
slowdisk_mkfs_ext4
victim "$SLOWDISK_MNT/small"
neighbours "$SLOWDISK_MNT"
sleep 1
trace slow-p -p "$VICTIM" -d 4
trace slow-all -d 4
stop_neighbours "$SLOWDISK_MNT"
kill "$VICTIM"; wait "$VICTIM" 2>/dev/null
is "$(v slow-p victim.pid)/$(v slow-p victim.op)/$(v slow-p victim.file)" "$VICTIM/fsync/$SLOWDISK_MNT/small" \
	"slow disk, -p: the victim's fsync and file"
is "$(v slow-p culprit.kind)/$(v slow-p culprit.comm)" "neighbour/dd" "slow disk, -p: dd is the culprit"
check "slow disk, -p: dd is a group of pids ($(v slow-p culprit.npids))" test "$(v slow-p culprit.npids)" -gt 1
check "slow disk, -p: dd has most of the disk's bytes ($(v slow-p culprit.disk_share))" \
	jq -e '.verdict.culprit.disk_share > 0.5' "$TMPD/slow-p.json"
is "$(v slow-all victim.pid)" "$VICTIM" "slow disk, every process: the fsync loop is the one that suffers"
is "$(v slow-all culprit.kind)/$(v slow-all culprit.comm)" "neighbour/dd" "slow disk, every process: the same culprit"
check "the parts of the victim's time add up to it" \
	jq -e '([.verdict.breakdown[].ns] | add) == .verdict.victim.time_ns' "$TMPD/slow-p.json"
check "the verdict line (verdict: LAYER -- summary) is one line of at most 200 bytes" \
	jq -e '(("verdict: " + .verdict.layer + " -- " + .verdict.summary) | utf8bytelength) <= 200 and (.verdict.summary | test("\n") | not)' "$TMPD/slow-p.json"
check "at most five lines of evidence" jq -e '(.verdict.evidence | length) <= 5' "$TMPD/slow-p.json"
slowdisk_stop

# ---- 2. noisy neighbour on a fast disk, five times -------------------------------------------
# The slow-disk fixture at 100 us a request and no bandwidth limit: a disk that the dd's keep
# busy, as they would an SSD. (On a loop device over memory, the "disk" is CPU work in the
# loop's kernel workers: there the fsync loop's time went to the journal's and the workers'
# wait for a CPU, machine-dependent shares of it, and no single culprit held from one
# machine to the next.)
slowdisk_start 100 0 256
slowdisk_mkfs_ext4
victim "$SLOWDISK_MNT/small"
neighbours "$SLOWDISK_MNT"
sleep 1
answers=
for i in 1 2 3 4 5; do
	trace loop$i -p "$VICTIM" -d 2
	answers="$answers $(v loop$i layer)/$(v loop$i culprit.kind)/$(v loop$i culprit.comm)"
done
trace loop-all -d 3
stop_neighbours "$SLOWDISK_MNT"
kill "$VICTIM"; wait "$VICTIM" 2>/dev/null
slowdisk_stop
loop_ext4_setup 512
diag "five runs:$answers"
is "$(tr ' ' '\n' <<<"$answers" | sed '/^$/d' | sort -u | wc -l)" 1 "fast disk: the same verdict five times"
is "$(v loop1 culprit.kind)/$(v loop1 culprit.comm)" "neighbour/dd" "fast disk, -p: dd is the culprit"
is "$(v loop-all victim.pid)/$(v loop-all culprit.comm)" "$VICTIM/dd" "fast disk, every process: the fsync loop suffers, dd is the culprit"

# ---- 3. a throttled cgroup beside an unthrottled neighbour ---------------------------------
DEV=$(cat "/sys/class/block/$LOOPNAME/dev")
CGNAME=iolayer-test-cause-$$
throttled_cgroup "$CGNAME" "$DEV" 50
dd if=/dev/zero of="$MNT/held" bs=4k count=2000 status=none && sync
sh -c "echo \$\$ >$CG/cgroup.procs && exec dd if=/dev/zero of=$MNT/held bs=4k count=2000 oflag=direct conv=notrunc status=none" &
DD=$!
at_exit "kill $DD"
fio --name=neighbour --filename="$MNT/fio" --size=64M --rw=write --bs=64k --direct=1 \
	--time_based --runtime=30 --output=/dev/null &
FIO=$!
at_exit "kill $FIO"
sleep 1
w0=$(awk '/^write_bytes/ {print $2}' "/proc/$DD/io")
trace thr-p -p "$DD" -d 3
w1=$(awk '/^write_bytes/ {print $2}' "/proc/$DD/io")
trace thr-all -d 3
kill "$FIO" "$DD" 2>/dev/null; wait "$FIO" "$DD" 2>/dev/null
is "$(v thr-p layer)" "block layer" "throttle, -p dd: the block layer"
is "$(v thr-p culprit.kind)/$(v thr-p culprit.cgroup)" "throttle//$CGNAME" "throttle, -p dd: the throttle of its cgroup"
check "throttle, -p dd: its rule ($(v thr-p culprit.rule))" grep -q "$DEV" <<<"$(v thr-p culprit.rule)"
is "$(v thr-all culprit.kind)/$(v thr-all culprit.cgroup)" "throttle//$CGNAME" "throttle, every process: the same culprit"
is "$(v thr-all victim.comm)" dd "throttle, every process: dd suffers"
check "throttle: fio is never the culprit" test "$(v thr-all culprit.comm)" != fio -a "$(v thr-p culprit.comm)" != fio
# the throttle's workers queue dd's held bios: dd's bytes all the same, as many as the block
# layer saw complete of its requests (its own I/O, counted at completion by the submitter it
# followed from the bio: apart by those held or in flight at the window's ends, and bios the
# throttle let go together, merged after the request took its first one's size: within a
# tenth or 3 requests, where the workers' share was over half),
# and at most what /proc/PID/io says it wrote (write_bytes, counted at submission) over a span
# a little longer than the window
ddb=$(jq "[.processes[] | select(.pid == $DD) | .disk_bytes] | add // 0" "$TMPD/thr-p.json")
kwb=$(jq '[.processes[] | select(.comm | startswith("kworker")) | .disk_bytes] | add // 0' "$TMPD/thr-p.json")
own=$(jq '.layers.own_io.bytes' "$TMPD/thr-p.json")
tol=$((own / 10 > 3 * 4096 ? own / 10 : 3 * 4096))
check "throttle, -p dd: its disk bytes are its own ($ddb; its requests completed $own, $((w1 - w0)) written), none a worker's ($kwb)" \
	test "$kwb" = 0 -a "$ddb" -le $((w1 - w0)) -a "$ddb" -ge $((own - tol)) -a "$ddb" -le $((own + tol))

# ---- 10. the throttle holds a buffered writer's writeback ----------------------------------
# the same cgroup, a 100-byte write+fdatasync loop in it beside the direct dd loops (not in
# it): its pages' bios go to the throttle from its fdatasync's writeback and a kernel worker
# queues them when the throttle lets them go; with tracepoints only, the worker's bio is the
# writer's from the writeback it began (blk_wb_sub), held before Q: the throttle, not the disk.
# Nothing earlier left dirty for a flusher to write in the window (under load, a kworker's 4 KiB
# of an earlier section's pages once came in: "none a worker's (4096)")
sync
sh -c "echo \$\$ >$CG/cgroup.procs && exec python3 -c \"
import os
fd = os.open('$MNT/thr-log', os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
while True:
    os.write(fd, b'x' * 100); os.fdatasync(fd)\"" &
LOGGER=$!
at_exit "kill $LOGGER"
neighbours "$MNT"
sleep 1
trace thrwb-p -p "$LOGGER" -d 3
trace thrwb-all -d 3
stop_neighbours "$MNT"
kill "$LOGGER"; wait "$LOGGER" 2>/dev/null
is "$(v thrwb-p layer)/$(v thrwb-p culprit.kind)/$(v thrwb-p culprit.cgroup)" "block layer/throttle//$CGNAME" \
	"throttled writeback, -p the writer: the throttle of its cgroup"
is "$(v thrwb-all victim.pid)/$(v thrwb-all culprit.kind)/$(v thrwb-all culprit.cgroup)" "$LOGGER/throttle//$CGNAME" \
	"throttled writeback, every process: the writer suffers, the throttle of its cgroup"
# its held bios are its own: a worker queued them, none of the disk's bytes the workers' but
# the one page the throttle may hold from before the window (its writeback began unseen: the
# throttle's worker, kthrotld's kworker/N:M, is then the only submitter known; the writer's
# fdatasync waits for each 100-byte write's page, so one at a time), as with the dd's above
kwb=$(jq '[.processes[] | select(.comm | startswith("kworker")) | .disk_bytes] | add // 0' "$TMPD/thrwb-p.json")
lgb=$(jq "[.processes[] | select(.pid == $LOGGER) | .disk_bytes] | add // 0" "$TMPD/thrwb-p.json")
check "throttled writeback, -p the writer: its disk bytes its own ($lgb), a worker's at most the page held at the start ($kwb)" \
	test "$kwb" -le 4096 -a "$lgb" -gt 0
[ "$kwb" = 0 ] || diag "the workers': $(jq -c '[.processes[] | select(.comm | startswith("kworker"))]' "$TMPD/thrwb-p.json")"

# ---- 4. CPU starvation -------------------------------------------------------------------------
CPU=$(($(nproc) - 1))
# the hogs in a cgroup of their own: the cpu controller's on cgroup v1, else cgroup2's
v1=$(awk '$3 == "cgroup" && $4 ~ /(^|,)cpu(,|$)/ { print $2; exit }' /proc/mounts)
HOGCG=/iolayer-test-hogs-$$
mkdir "${v1:-$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)}$HOGCG" || echo "Bail out! no cgroup for the hogs"
at_exit "rmdir ${v1:-$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)}$HOGCG"
# (v1: their group weighs as one task; the fsync loop's own group, a quarter of it, weighs as
# a quarter, and gets the fifth of the CPU it had beside four hogs with no cgroups; cgroup2's
# cpu controller is left off, its weights do not apply, the five are tasks alike)
[ -n "$v1" ] && mkdir "$v1$HOGCG-victim" && echo 256 >"$v1$HOGCG-victim/cpu.shares" &&
	at_exit "rmdir $v1$HOGCG-victim"
HOGS=
for i in 1 2 3 4; do
	sh -c "echo \$\$ >${v1:-$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)}$HOGCG/cgroup.procs && exec taskset -c $CPU $HOG >/dev/null" &
	HOGS="$HOGS $!"
	at_exit "kill $!"
done
sh -c "[ -z '$v1' ] || echo \$\$ >$v1$HOGCG-victim/cgroup.procs; exec taskset -c $CPU python3 -c \"
import os
fd = os.open('$MNT/cpu', os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
while True:
    os.write(fd, b'x' * 4096); os.fdatasync(fd)\"" &
STARVED=$!
at_exit "kill $STARVED"
sleep 1
trace cpu -p "$STARVED" -d 3
pkill -f "^$HOG" ; kill "$STARVED"; wait "$STARVED" 2>/dev/null
is "$(v cpu layer)" CPU "CPU starvation: the verdict is the CPU (run queue)"
is "$(v cpu culprit.kind)/$(v cpu culprit.comm)" "cpu/hog" "CPU starvation: the busy loops are the culprit"
is "$(jq -c '.verdict.culprit.pids | sort' "$TMPD/cpu.json")/$(v cpu culprit.cgroup)" \
	"$(tr ' ' '\n' <<<"$HOGS" | sed '/^$/d' | sort -n | jq -sc .)/$HOGCG" \
	"CPU starvation: the busy loops' pids and their cgroup, to find them by"
check "CPU starvation: the line gives them ($(v cpu summary))" grep -q "behind hog (4 pids: .*, \.\.\.) of cgroup $HOGCG" <<<"$(v cpu summary)"
check "CPU starvation: the run-queue part is the largest" \
	jq -e '(.verdict.breakdown | max_by(.ns) | .part) == "runq"' "$TMPD/cpu.json"
check "CPU starvation: no disk named as the culprit ($(v cpu culprit.disk))" test "$(v cpu culprit.disk)" = null
is "$(v cpu victim.op)/$(v cpu 'victim.fdatasync_calls == .verdict.victim.calls')" fsync/true \
	"CPU starvation: the victim's syncs, every one an fdatasync ($(v cpu victim.fdatasync_calls) of $(v cpu victim.calls))"
check "CPU starvation: the line names fdatasync" grep -q "(pid $STARVED) fdatasync on " <<<"$(v cpu summary)"

# ---- 4b. its own threads on its CPU -----------------------------------------------------------
# spin_sync: 4 threads spin beside the thread that appends and fdatasyncs, all on one CPU:
# they ran there while it waited in the run queue, not another process
taskset -c $CPU "$WL/spin_sync" -b 4 -s 6 "$MNT/own" >"$TMPD/own.out" &
OWN=$!
at_exit "kill $OWN"
sleep 1
trace own -p "$OWN" -d 3
wait "$OWN"
is "$(v own layer)/$(v own culprit.kind)" CPU/self "own threads: the CPU, and the process itself"
check "own threads: the line says so ($(v own summary | sed 's/.*: //'))" \
	grep -qE "waits for a CPU(, [0-9]+%)? behind its own threads" <<<"$(v own summary)"

# ---- 4c. CPU hogs that come and go ------------------------------------------------------------
# a loop of 30 ms CPU burners on each CPU (each a new sh, gone before the window ends: /proc
# never holds their time; split_exited does) beside a write+fdatasync loop: the burners are
# the culprit, not the victim's own threads (it has one)
BURN=
for c in $(seq 0 $(($(nproc) - 1))); do
	taskset -c "$c" sh -c 'while :; do timeout 0.03 sh -c "while :; do :; done"; done' &
	BURN="$BURN $!"
done
at_exit "kill $BURN; pkill -f 'while :; do :; done'"
python3 -c "
import os
fd = os.open('$MNT/burnt', os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
while True:
    os.write(fd, b'x' * 100); os.fdatasync(fd)" &
BURNT=$!
at_exit "kill $BURNT"
sleep 1
trace burn -p "$BURNT" -d 3
kill $BURN "$BURNT"; pkill -f 'while :; do :; done'; wait $BURN "$BURNT" 2>/dev/null
is "$(v burn layer)/$(v burn culprit.kind)/$(v burn culprit.comm)" "CPU/cpu/sh" \
	"short-lived CPU hogs: the CPU, and the burners (sh) the culprit"
check "short-lived CPU hogs: a group of many of them ($(v burn culprit.npids))" test "$(v burn culprit.npids)" -ge 10

# ---- 5. lock wait ----------------------------------------------------------------------------
G=$MNT/shared
"$WL/lock_holder" -n 0 -t 20 -z "$G" >/dev/null &
BIG=$!
at_exit "kill $BIG"
python3 -c "
import os
fd = os.open('$G', os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
while True:
    os.write(fd, b'x' * 4096)" &
SMALL=$!
at_exit "kill $SMALL"
sleep 1
trace lock -p "$SMALL" -d 3
kill -0 "$BIG" 2>/dev/null || diag "lock wait: lock_holder had ended before the trace did"
kill "$SMALL" "$BIG"; wait "$SMALL" "$BIG" 2>/dev/null
is "$(v lock victim.op)" write "lock wait: the small appender's writes"
is "$(v lock culprit.kind)/$(v lock culprit.comm)" "lock/lock_holder" "lock wait: the holder holds what it waits for"
check "lock wait: other waits are the largest part" \
	jq -e '(.verdict.breakdown | max_by(.ns) | .part) == "other"' "$TMPD/lock.json"

# ---- 6. a buffered ETL writer's writeback, -p the fsync loop ----------------------------------
# Its pages are written back by the flusher (kernel threads), and with -p its own writes are not
# traced: the writer is known as the dirtier of the pages (writeback_mark_inode_dirty).
# room for its 400 MiB on the 512 MiB filesystem: the earlier cases' files go (the lock case's
# alone is 384 MiB; a full filesystem fails the writer's writes, ENOSPC, and few pages are dirty)
find "$MNT" -maxdepth 1 -type f -delete
sync
dirty_save
echo $((64 << 20)) >/proc/sys/vm/dirty_background_bytes
cp "$(command -v dd)" "$TMPD/etl"
beside_writer etl "$TMPD/etl if=/dev/zero of=$MNT/etl.dat bs=1M count=400 status=none" "$TMPD/etl" "$MNT/small2"
dirty_restore
is "$(v etl culprit.kind)/$(v etl culprit.comm)" "neighbour/etl" "buffered ETL writer, -p: the writer whose pages the flusher writes is the culprit"

# ---- 7. four processes appending to one file, each syncing it (a database's WAL), -p one ------
# With -p the others' calls are not traced: the file's users are not all known, and the others'
# syncs, which write the pages all four wrote, were taken as written back for the victim (it
# read 96% of the disk's bytes, its own requests 21%). Each is a quarter.
find "$MNT" -maxdepth 1 -type f -delete
WALS=
for i in 1 2 3 4; do
	python3 -c "
import os
fd = os.open('$MNT/wal', os.O_WRONLY | os.O_CREAT, 0o644)
i = 0
while True:
    os.pwrite(fd, b'w' * 8192, (i * 8192) % (8 << 20)); os.fdatasync(fd); i += 1" &
	WALS="${WALS:+$WALS }$!"
	at_exit "kill $!"
done
sleep 1
trace wal -p "${WALS%% *}" -d 3
kill $WALS; wait $WALS 2>/dev/null
own=$(jq -r '.verdict.evidence[] | select(test("bytes by submitter")) | capture("\\(the victim\\) (?<p>[0-9]+)%").p' "$TMPD/wal.json")
check "shared file, -p: the victim's share of the disk's bytes is its own, about a quarter (${own:-?}%)" \
	test -n "$own" -a "${own:-100}" -le 50
is "$(jq -r '[.verdict.causes[] | select(.kind == "neighbour") | "\(.comm) \(.npids)"] | first' "$TMPD/wal.json")" "python3 3" \
	"shared file, -p: the three others are a neighbour"

# ---- 8. xfs: an fsync loop beside a buffered writer, -p the loop --------------------------------
# xfs's fsync is woken by the workqueue workers that end its log writes (xlog_ioend_work, on
# kworker/N), which wait for no I/O of their own: the wait is for the disk, which the writer's
# writeback keeps busy (it read "waits for kernel thread [kworker/0]", with or without it)
XIMG=/dev/shm/iolayer-test-cause-$$-xfs.img
truncate -s 400M "$XIMG"; at_exit "rm -f $XIMG"
XDEV=$(losetup -f --show "$XIMG") || echo "Bail out! losetup failed"
at_exit "losetup_retry $XDEV"
mkfs.xfs -q -f "$XDEV" >/dev/null 2>&1 || echo "Bail out! mkfs.xfs failed"
mkdir -p "$TMPD/xfs" && mount "$XDEV" "$TMPD/xfs" || echo "Bail out! cannot mount xfs"
at_exit "umount $TMPD/xfs"
beside_writer xfs "dd if=/dev/zero of=$TMPD/xfs/big bs=1M count=100 status=none" "of=$TMPD/xfs/big" "$TMPD/xfs/small"
is "$(v xfs culprit.kind)/$(v xfs culprit.comm)" "neighbour/dd" \
	"xfs, -p the fsync loop: the buffered writer behind the log's completions is the culprit"

# ---- 9. fio through io_uring beside a process whose few calls are split ------------------------
# io_uring's requests have no thread in them to split: the only calls split are the trickle's,
# a trifle of the window (it read "none -- no layer stands out: python3's write calls took
# 0.0%" with the disk busy with fio's requests). fio's requests are its writes, their time
# in the block layer its I/O wait: fio the victim, on its own disk (the device, or its queue).
find "$MNT" -maxdepth 1 -type f -delete
fio --name=ur --ioengine=io_uring --rw=randwrite --bs=4k --direct=1 --iodepth=32 --size=64M \
	--filename="$MNT/ur" --time_based --runtime=30 >/dev/null 2>&1 &
FIO=$!
at_exit "kill $FIO"
python3 -c "
import os, time
fd = os.open('$MNT/trickle', os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
while True:
    os.write(fd, b'x'); time.sleep(0.1)" &
TRICKLE=$!
at_exit "kill $TRICKLE"
sleep 2
trace uring -d 3
kill "$FIO" "$TRICKLE"; wait "$FIO" "$TRICKLE" 2>/dev/null
check "io_uring beside a trickle of split calls: the layers' decision, the disk and fio ($(v uring layer), $(v uring process.comm))" \
	grep -qxE "(device|block queue)/fio" <<<"$(v uring layer)/$(v uring process.comm)"
check "io_uring: fio's requests are the victim's writes ($(v uring victim.comm) $(v uring victim.op), $(v uring victim.requests) requests of $(v uring victim.calls) calls)" \
	jq -e '.verdict.victim.comm == "fio" and .verdict.victim.op == "write" and .verdict.victim.requests > 1000 and .verdict.victim.requests == .verdict.victim.calls' "$TMPD/uring.json"

# ---- every run ----------------------------------------------------------------------------------
for r in slow-p slow-all loop1 thr-p cpu lock; do
	check "$r: valid JSON with a victim and a culprit" jq -e '.verdict.victim.pid > 0 and .verdict.culprit.kind != null' "$TMPD/$r.json"
done
miss=
for r in slow-all loop-all thr-all; do # (with -p the tables are the process's alone)
	# (a group, "dd (128 pids)", by its name: its members alike, which one the table ranks
	# higher is its time in the window)
	jq -e '.verdict.culprit as $c | $c.pid == null or $c.kthread or
		([.processes[].pid] | index($c.pid)) != null or
		($c.npids > 1 and ([.processes[].comm] | index($c.comm)) != null)' "$TMPD/$r.json" >/dev/null || {
		miss="$miss $r"
		diag "$r: culprit $(jq -c '.verdict.culprit | {pid, comm, npids, pids}' "$TMPD/$r.json"), processes $(jq -c '[.processes[] | [.pid, .comm]]' "$TMPD/$r.json")"
	}
done
is "${miss# }" "" "every run without -p: the culprit the verdict names is among the top processes"
is "$(bpf_progs_named blk_rq_ fs_sys_ split_ iw_switch)" "" "no iolayer BPF program left after exit"
