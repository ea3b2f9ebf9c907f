#!/usr/bin/env bash
# fsslower on a device whose write latency is known in advance: ext4 on dm-delay, every write
# (and flush) held 20 ms. 20 write+fsync pairs → exactly 20 F rows for the file, each >= 20 ms
# (an fsync waits for at least one delayed write), and 20 W rows.
# Needs device-mapper's delay target (the vmtest guests have it; a kernel without it skips).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fsslower-lib.sh"
require_root
require_cmd dmsetup dmsetup
modprobe -q dm-delay 2>/dev/null || skip_all "no dm-delay module in this kernel"
plan 6

N=20
img=/dev/shm/iolayer-dmdelay-$$.img
truncate -s 128M "$img"; at_exit "rm -f $img"
LOOPDEV=$(losetup -f --show "$img") || { echo "Bail out! losetup failed"; exit 1; }
at_exit "losetup_retry $LOOPDEV"
DM=iolayer-delay-$$
# dm-delay table: reads from LOOPDEV undelayed, writes (incl. flushes) delayed by 20 ms.
echo "0 $(blockdev --getsz "$LOOPDEV") delay $LOOPDEV 0 0 $LOOPDEV 0 20" | dmsetup create "$DM" ||
	{ echo "Bail out! dmsetup create failed"; exit 1; }
at_exit "dmsetup remove --retry $DM"
mkfs.ext4 -q -F "/dev/mapper/$DM" || { echo "Bail out! mkfs.ext4 failed"; exit 1; }
MNT=$TMPD/mnt
mkdir -p "$MNT"
mount "/dev/mapper/$DM" "$MNT" || { echo "Bail out! mount failed"; exit 1; }
at_exit "umount $MNT"
F=$MNT/data
FS=$(tool fsslower)

wl_start "$TMPD/wl.out" -n $N "$F"
check "fsslower starts (--json -m 0 -p PID)" tool_start "$TMPD/o" "$TMPD/e" $FS --json -m 0 -p "$WL_PID"
wl_go
tool_stop
is "$WL_RC" 0 "workload ran $N write+fsync pairs"
is "$TOOL_RC" 0 "exit status 0 after Ctrl-C"

f=$(jq -r --arg f "$F" 'select(.file == $f and .op == "F") | .usecs' "$TMPD/o" | wc -l)
w=$(jq -r --arg f "$F" 'select(.file == $f and .op == "W") | .usecs' "$TMPD/o" | wc -l)
fast=$(jq -r --arg f "$F" 'select(.file == $f and .op == "F" and .usecs < 20000) | .usecs' "$TMPD/o" | wc -l)
min=$(jq -r --arg f "$F" 'select(.file == $f and .op == "F") | .usecs' "$TMPD/o" | sort -n | head -1)
diag "answer: fsync_rows=$f write_rows=$w fsyncs_under_20ms=$fast"
diag "fastest fsync: $min usecs"
is "$f" "$N" "$N fsyncs in, $N F rows out"
is "$w" "$N" "$N writes in, $N W rows out"
is "$fast" 0 "every fsync row >= 20000 usecs (dm-delay holds each write 20 ms)"
[ "$f" = "$N" ] || diag_file "$TMPD/e"

done_testing
