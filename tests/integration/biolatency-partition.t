#!/usr/bin/env bash
# biolatency -d PARTITION: requests carry the whole disk, so a partition is matched on the
# request's own partition. A loop device with one partition (sfdisk), ext4 on it, 50 direct
# 4 KiB writes to a file there and 10 to the disk outside the partition: `-d loopNp1` counts
# the writes /proc/diskstats counts for loopNp1 (not those outside it), -D still labels them
# with the disk, and `-d loopN` counts the writes of the whole disk.
# No sync inside the measured window: sync(2) on ext4 ends with an empty PREFLUSH write that
# /proc/diskstats counts as a write but that never reaches the driver (biolatency sees the
# flush request it becomes); commit=60 keeps ext4's journal commit out of the window too, and
# no_prefetch_block_bitmaps the background reads of block bitmaps after the mount (5.9 and later).
source "$(dirname "$0")/lib.sh"
require_root
require_cmd fdisk sfdisk
plan 12

BL=$(tool biolatency)
img=/dev/shm/iolayer-bpart-$$.img
truncate -s 64M "$img"; at_exit "rm -f $img"
echo 'start=2048, type=83' | sfdisk -q "$img" || { echo "Bail out! sfdisk failed"; exit 1; }
LOOPDEV=$(losetup -fP --show "$img") || { echo "Bail out! losetup failed"; exit 1; }
at_exit "losetup_retry $LOOPDEV"
LOOPNAME=${LOOPDEV#/dev/}
PART=${LOOPNAME}p1
udevadm settle 2>/dev/null || true
[ -b "/dev/$PART" ] || partx -a "$LOOPDEV" 2>/dev/null
check "the loop device has its partition /dev/$PART" test -b "/dev/$PART" -a -e "/sys/class/block/$PART/partition"
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "/dev/$PART" || { echo "Bail out! mkfs.ext4 failed"; exit 1; }
MNT=$TMPD/mnt
mkdir -p "$MNT"
mount -o commit=60,no_prefetch_block_bitmaps "/dev/$PART" "$MNT" 2>/dev/null ||
	mount -o commit=60 "/dev/$PART" "$MNT" || { echo "Bail out! mount failed"; exit 1; }
at_exit "umount_retry $MNT"
sync
# udev re-reads a block device after a writer closes it (blkid): hold its event queue so the
# only requests on the loop device are the test's own.
if command -v udevadm >/dev/null && udevadm control --stop-exec-queue 2>/dev/null; then
	at_exit "udevadm control --start-exec-queue"
fi

# field N of the /proc/diskstats line of device NAME (4: reads, 8: writes completed)
diskstat() { awk -v n="$1" -v f="$2" '$3 == n { print $f }' /proc/diskstats; }
count_of() { # FILE OP: requests of op OP, all disks and lines summed
	jq -s --arg o "$2" '[.[] | .histograms? // [] | .[] | select(.op == $o) | .total] | add // 0' "$1"
}
workload() { # 50 direct writes to a file on the partition, 10 to the disk's first MiB (before it)
	dd if=/dev/zero of="$MNT/data" oflag=direct bs=4k count=50 status=none
	dd if=/dev/zero of="$LOOPDEV" oflag=direct bs=4k count=10 status=none
}

# 1. -d PARTITION
check "biolatency starts (-D -F --json -d $PART)" tool_start "$TMPD/p.out" "$TMPD/p.err" $BL -D -F --json -d "$PART"
pw0=$(diskstat "$PART" 8) pr0=$(diskstat "$PART" 4) dw0=$(diskstat "$LOOPNAME" 8)
workload
pw1=$(diskstat "$PART" 8) pr1=$(diskstat "$PART" 4) dw1=$(diskstat "$LOOPNAME" 8)
tool_stop
pw=$((pw1 - pw0)) pr=$((pr1 - pr0)) dw=$((dw1 - dw0))
is "$TOOL_RC" 0 "exit status 0 after Ctrl-C"
check "/proc/diskstats: >= 50 writes on $PART ($pw)" test "$pw" -ge 50
check "/proc/diskstats: >= 10 more writes on $LOOPNAME than on $PART ($dw vs $pw)" test "$((dw - pw))" -ge 10
is "$(count_of "$TMPD/p.out" write)" "$pw" "-d $PART counts the writes /proc/diskstats counts for $PART"
is "$(count_of "$TMPD/p.out" read)" "$pr" "-d $PART counts the reads /proc/diskstats counts for $PART"
is "$(jq -s -c '[.[] | .histograms? // [] | .[] | .disk] | unique' "$TMPD/p.out")" "[\"$LOOPNAME\"]" \
	"-D labels the partition's requests with the disk, $LOOPNAME"
is "$(jq -s '[.[] | select(.lost) | .lost | to_entries[] | .value] | add' "$TMPD/p.out")" 0 "nothing reported lost"
diag "answer: partition: diskstats writes $pw reads $pr, biolatency writes $(count_of "$TMPD/p.out" write) reads $(count_of "$TMPD/p.out" read); disk: diskstats writes $dw"

# 2. -d DISK of a partitioned disk: every write of the disk, the partition's included
rm -f "$MNT/data"; sync
check "biolatency starts (-F --json -d $LOOPNAME)" tool_start "$TMPD/d.out" "$TMPD/d.err" $BL -F --json -d "$LOOPNAME"
dw0=$(diskstat "$LOOPNAME" 8)
workload
dw1=$(diskstat "$LOOPNAME" 8)
tool_stop
is "$TOOL_RC" 0 "-d $LOOPNAME: exit status 0 after Ctrl-C"
is "$(count_of "$TMPD/d.out" write)" "$((dw1 - dw0))" "-d $LOOPNAME counts the writes /proc/diskstats counts for $LOOPNAME"
diag "answer: -d disk: diskstats writes $((dw1 - dw0)), biolatency writes $(count_of "$TMPD/d.out" write)"

done_testing
