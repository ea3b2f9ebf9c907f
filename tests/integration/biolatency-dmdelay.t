#!/usr/bin/env bash
# A bio-based device under its own name: dm-delay over a loop device holds every write 20 ms.
# dm has no requests of its own, so its bios are measured from block_bio_queue to
# block_bio_complete. Known answers: 50 direct 4 KiB writes to the dm device give
# `biolatency -d dm-N` 50 writes with p50 in the 16384-32767 usecs bucket (16-32 ms), and 50
# biosnoop write rows on dm-N carrying the writer's pid.
# Needs device-mapper's delay target (the vmtest guests have it; the host has no dm: skip).
source "$(dirname "$0")/lib.sh"
require_root
require_cmd jq jq
require_cmd dmsetup dmsetup
modprobe -q dm-delay 2>/dev/null || dmsetup targets 2>/dev/null | grep -qw delay ||
	skip_all "no dm-delay target in this kernel"
plan 11

N=50
img=/dev/shm/iolayer-bldm-$$.img
truncate -s 64M "$img"; at_exit "rm -f $img"
LOOPDEV=$(losetup -f --show "$img") || { echo "Bail out! losetup failed"; exit 1; }
at_exit "losetup_retry $LOOPDEV"
DM=iolayer-bldelay-$$
# reads undelayed, writes (and flushes) held 20 ms
echo "0 $(blockdev --getsz "$LOOPDEV") delay $LOOPDEV 0 0 $LOOPDEV 0 20" | dmsetup create "$DM" ||
	{ echo "Bail out! dmsetup create failed"; exit 1; }
at_exit "dmsetup remove --retry $DM"
udevadm settle 2>/dev/null || true
DMNAME=$(basename "$(readlink -f "/dev/mapper/$DM")")
# udev re-reads a block device after a writer closes it (blkid): hold its event queue, and
# count writes only (reads go through dm-delay undelayed).
if command -v udevadm >/dev/null && udevadm control --stop-exec-queue 2>/dev/null; then
	at_exit "udevadm control --start-exec-queue"
fi
check "the dm device is $DMNAME, bio-based (no blk-mq)" test -b "/dev/$DMNAME" -a ! -e "/sys/block/$DMNAME/mq"
BL=$(tool biolatency)
BS=$(tool biosnoop)

check "biolatency starts (-d $DMNAME -F --json)" tool_start "$TMPD/b.json" "$TMPD/b.err" $BL -d "$DMNAME" -F --json -v
BL_PID=$TOOL_PID
check "biosnoop starts (-d $DMNAME --json)" tool_start "$TMPD/s.json" "$TMPD/s.err" $BS -d "$DMNAME" --json
dd if=/dev/zero of="/dev/mapper/$DM" bs=4k count=$N oflag=direct status=none &
DD=$!
wait $DD
is "$?" 0 "dd wrote $N blocks to $DMNAME with O_DIRECT"
sleep 0.2
tool_stop
TOOL_PID=$BL_PID tool_stop
is "$TOOL_RC" 0 "biolatency: exit status 0 after Ctrl-C"

total=$(jq -s '[.[] | .histograms? // [] | .[] | select(.op == "write") | .total] | add // 0' "$TMPD/b.json")
p50=$(jq -s '[.[] | .histograms? // [] | .[] | select(.op == "write") | .percentiles.p50.low] | first' "$TMPD/b.json")
is "$total" "$N" "biolatency -d $DMNAME: $N writes"
is "$p50" 16384 "write p50 in the 16384-32767 usecs bucket (dm-delay holds each write 20 ms)"
W='select(.disk == $d and (.rwbs | startswith("W")))'
rows=$(jq -s --arg d "$DMNAME" "[.[] | $W] | length" "$TMPD/s.json")
mine=$(jq -s --arg d "$DMNAME" --argjson p "$DD" "[.[] | $W | select(.pid == \$p and .bio_based)] | length" "$TMPD/s.json")
is "$rows" "$N" "biosnoop -d $DMNAME: $N write rows"
is "$mine" "$N" "each carrying the writer's pid ($DD)"
med=$(jq -s --arg d "$DMNAME" "[.[] | $W | .device_us] | sort | .[length / 2 | floor] // 0" "$TMPD/s.json")
check "biosnoop: the median write's time at $DMNAME is 16 ms or more ($med us)" \
	test "$(printf '%.0f' "$med")" -ge 16000
diag "answer: dm-delay: biolatency total=$total p50_low=$p50; biosnoop rows=$rows with_writer_pid=$mine"
[ "$total" = "$N" ] || { diag_file "$TMPD/b.err"; diag_file "$TMPD/b.json"; }
is "$(bpf_progs_named blk_bio_ blk_submit_)" "" "no bio-tracking BPF program left after exit"

done_testing
