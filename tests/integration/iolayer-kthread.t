#!/usr/bin/env bash
# A kernel thread doing its own I/O is a neighbour like a process: on a fresh ext4 of the
# slow-disk fixture (100 us a request, 32 MiB/s), ext4lazyinit zeroes the inode tables
# (init_itable=0: one group after another, no pause) beside a 10-byte write+fsync loop, -p
# the loop. The verdict names [ext4lazyinit] as the neighbour the loop waits behind, with its
# share of the disk's bytes; the bytes by submitter add up to /proc/diskstats' sectors, and
# ext4lazyinit's to the inode tables it zeroed (dumpe2fs: the groups that became
# ITABLE_ZEROED, each its table's blocks past the inodes in use). ext4lazyinit runs only
# between two remounts (init_itable=0, then noinit_itable) inside the trace, the loop between
# go and end files, so the disk's counters and iolayer's see the same writes.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/slowdisk-lib.sh"
require_root
require_cmd jq jq
require_cmd python3 python3
require_cmd e2fsprogs dumpe2fs
slowdisk_available || skip_all "no FUSE (the slow-disk fixture needs it)"
plan 9

IL=$(tool iolayer)

# the disk: 2 GiB, an inode per 4 KiB: 16 groups of 8 MiB of inode table, which mkfs leaves
# to ext4lazyinit (nodiscard, as slowdisk_mkfs_ext4)
slowdisk_start 100 $((32 << 20)) 2048
mkfs.ext4 -q -F -E nodiscard,lazy_itable_init=1 -i 4096 "$SLOWDISK_DEV" ||
	{ echo "Bail out! mkfs.ext4 on $SLOWDISK_DEV failed"; exit 1; }
# zeroed groups' table blocks, from dumpe2fs of the unmounted disk: SUM over ITABLE_ZEROED
# groups of (blocks per table - blocks of the inodes in use)
zeroed() {
	dumpe2fs "$SLOWDISK_DEV" 2>/dev/null | awk '
		/^Inodes per group:/ { ipg = $4 } /^Inode size:/ { isz = $3 } /^Block size:/ { bs = $3 }
		/^Group [0-9]+:/ { z = /ITABLE_ZEROED/ }
		/unused inodes/ && z { for (i = 1; i <= NF; i++) if ($(i + 1) == "unused") u = $i
			used = int(((ipg - u) * isz + bs - 1) / bs); sum += ipg * isz / bs - used }
		END { print sum * bs }'
}
Z0=$(zeroed)
SLOWDISK_MNT=$TMPD/slowdisk-mnt
mkdir -p "$SLOWDISK_MNT"
# commit=60: no periodic commit outside the loop's; no_prefetch_block_bitmaps: ext4lazyinit
# reads no bitmaps
mount -o noinit_itable,commit=60,no_prefetch_block_bitmaps "$SLOWDISK_DEV" "$SLOWDISK_MNT" ||
	{ echo "Bail out! mount $SLOWDISK_DEV failed"; exit 1; }
command -v udevadm >/dev/null && udevadm settle -t 10

python3 -c "
import os, time
fd = os.open('$SLOWDISK_MNT/small', os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
while not os.path.exists('$TMPD/go'): time.sleep(0.01)
while not os.path.exists('$TMPD/end'):
    os.write(fd, b'0123456789'); os.fsync(fd)" &
VICTIM=$!
at_exit "kill $VICTIM"
sleep 0.5 # its start-up's reads (of another disk) before the trace
sect() { awk -v d="$SLOWDISK_NAME" '$3 == d { print $6 + $10 }' /proc/diskstats; } # read + written
inflight() { awk -v d="$SLOWDISK_NAME" '$3 == d { print $12 }' /proc/diskstats; }
written() { slowdisk_stat write_bytes; }

check "iolayer -p starts on the loop" tool_start "$TMPD/k.json" "$TMPD/k.err" $IL -p "$VICTIM" -d 600 --json
wait_for 5 eval '[ "$(inflight)" = 0 ]'
s0=$(sect)
# ext4lazyinit starts the filesystem's work within 5 s of the remount (a random delay,
# ext4_li_request_new())
w0=$(written)
mount -o remount,init_itable=0 "$SLOWDISK_MNT"
wait_for 10 eval '[ $(($(written) - w0)) -gt $((4 << 20)) ]' || diag "ext4lazyinit wrote nothing in 10 s"
touch "$TMPD/go"
sleep 3
# (the remount waits for the group being zeroed: ext4lazyinit holds s_umount meanwhile)
mount -o remount,noinit_itable "$SLOWDISK_MNT"
touch "$TMPD/end"
wait "$VICTIM" 2>/dev/null
wait_for 5 eval '[ "$(inflight)" = 0 ]'
s1=$(sect)
tool_stop
is "$TOOL_RC" 0 "iolayer exit status 0"
umount_retry "$SLOWDISK_MNT"
Z1=$(zeroed)

v() { jq -r ".verdict.$1" "$TMPD/k.json"; }
diag "verdict: $(v layer) -- $(v summary)"
jq -r '.verdict.evidence[]? | "    " + .' "$TMPD/k.json" | sed 's/^/# /'
all=$(jq .layers.own_io.disk_bytes "$TMPD/k.json") # every submitter's on the verdict's disk
lazy=$(awk -v s="$(v culprit.disk_share)" -v a="$all" 'BEGIN { printf "%.0f", s * a }')
disk=$(((s1 - s0) * 512)) zero=$((Z1 - Z0))
diag "bytes: ext4lazyinit $lazy, every submitter $all; $SLOWDISK_NAME's /proc/diskstats $disk, inode tables zeroed $zero"
is "$(v culprit.kind)/$(v culprit.comm)/$(v culprit.kthread)" "neighbour/ext4lazyinit/true" \
	"the loop waits behind ext4lazyinit, a kernel thread, its neighbour"
check "the line says so: 'behind [ext4lazyinit] on $SLOWDISK_NAME'" \
	grep -q "behind \[ext4lazyinit\] on $SLOWDISK_NAME, " <<<"$(v summary)"
# its fsyncs wait for the journal's commits, whose writes wait behind ext4lazyinit's; not
# through the worker that ended a write or two
is "$(v culprit.via)" "jbd2/$SLOWDISK_NAME-8" "through the journal, [jbd2/$SLOWDISK_NAME-8]"
# within GOT WANT PCT: |GOT - WANT| <= PCT % of WANT (WANT > 0)
within() { awk -v g="$1" -v w="$2" -v p="$3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(w > 0 && d * 100 <= w * p) }'; }
is "$(v disk)" "$SLOWDISK_NAME" "the verdict's disk is the loop's, $SLOWDISK_NAME"
check "the submitters' bytes add up to /proc/diskstats' ($all vs $disk)" within "$all" "$disk" 1
check "ext4lazyinit's bytes (its share of them) are the inode tables it zeroed ($lazy vs $zero)" within "$lazy" "$zero" 1
check "its share of the disk's bytes is the tables' share of /proc/diskstats' ($(v culprit.disk_share) vs $zero / $disk)" \
	awk -v s="$(v culprit.disk_share)" -v z="$zero" -v d="$disk" 'BEGIN { x = s - z / d; exit !(d > 0 && x < 0.01 && x > -0.01) }'
