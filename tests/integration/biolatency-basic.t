#!/usr/bin/env bash
# biolatency: exact request counts on a loop device, filters, bad input, clean detach.
source "$(dirname "$0")/lib.sh"
require_root
plan 23

img=/dev/shm/iolayer-bl-$$.img
truncate -s 64M "$img"; at_exit "rm -f $img"
LOOPDEV=$(losetup -f --show "$img"); at_exit "losetup_retry $LOOPDEV"
LOOPNAME=${LOOPDEV#/dev/}
BL=$(tool biolatency)
# udev re-reads a block device after a writer closes it (blkid); hold its event queue so the
# only requests on the loop device are the test's own.
if command -v udevadm >/dev/null && udevadm control --stop-exec-queue 2>/dev/null; then
	at_exit "udevadm control --start-exec-queue"
fi

# total requests of one disk/op in biolatency --json -D -F output (all lines summed)
count_of() { # FILE DISK OP
	jq -s --arg d "$2" --arg o "$3" \
		'[.[] | .histograms? // [] | .[] | select(.disk == $d and .op == $o) | .total] | add // 0' "$1"
}

# 1. 1000 direct 4 KiB writes -> exactly 1000 write requests on the loop device, no reads
check "biolatency starts (-D -F --json)" tool_start "$TMPD/w.out" "$TMPD/w.err" $BL -D -F --json
dd if=/dev/zero of="$LOOPDEV" oflag=direct bs=4k count=1000 status=none
tool_stop
is "$TOOL_RC" 0 "exit status 0 after Ctrl-C"
is "$(count_of "$TMPD/w.out" "$LOOPNAME" write)" 1000 "1000 writes in, 1000 write requests out"
is "$(count_of "$TMPD/w.out" "$LOOPNAME" read)" 0 "no read requests on $LOOPNAME"
diag "answer: write job: $(count_of "$TMPD/w.out" "$LOOPNAME" write) writes, $(count_of "$TMPD/w.out" "$LOOPNAME" read) reads"
is "$(jq -s '[.[] | select(.lost) | .lost.ringbuf_full] | add' "$TMPD/w.out")" 0 "lost counters reported in JSON"

# 2. a read job -> reads only; -d keeps other disks out
check "biolatency starts (-d $LOOPNAME)" tool_start "$TMPD/r.out" "$TMPD/r.err" $BL -D -F --json -d "$LOOPNAME"
dd if="$LOOPDEV" of=/dev/null iflag=direct bs=4k count=500 status=none
tool_stop
is "$(count_of "$TMPD/r.out" "$LOOPNAME" read)" 500 "500 direct reads in, 500 read requests out"
diag "answer: read job: $(count_of "$TMPD/r.out" "$LOOPNAME" read) reads"
is "$(count_of "$TMPD/r.out" "$LOOPNAME" write)" 0 "no write requests in the read job"
is "$(jq -s '[.[] | .histograms? // [] | .[] | select(.disk != $d)] | length' --arg d "$LOOPNAME" "$TMPD/r.out")" 0 \
	"-d $LOOPNAME shows no other disk"

# 3. -Q (insert -> complete) counts the same requests
check "biolatency -Q starts" tool_start "$TMPD/q.out" "$TMPD/q.err" $BL -Q -D -F --json -d "$LOOPNAME"
dd if=/dev/zero of="$LOOPDEV" oflag=direct bs=4k count=300 status=none
tool_stop
is "$(count_of "$TMPD/q.out" "$LOOPNAME" write)" 300 "-Q: 300 writes in, 300 out"
diag "answer: -Q job: $(count_of "$TMPD/q.out" "$LOOPNAME" write) writes"

# 4. text output: the classic layout, and interval/count ends by itself
tool_start "$TMPD/i.out" "$TMPD/i.err" $BL -T -D -d "$LOOPNAME" 1 2
dd if=/dev/zero of="$LOOPDEV" oflag=direct bs=4k count=100 status=none
wait "$TOOL_PID"
is "$?" 0 "interval 1 count 2 exits 0 by itself"
is "$(grep -cE '^[0-9]{2}:[0-9]{2}:[0-9]{2}$' "$TMPD/i.out")" 2 "-T: two timestamped intervals"
check "text histogram has the usecs header" grep -q 'usecs *: count *distribution' "$TMPD/i.out"
check "-D: the line 'disk = $LOOPNAME' ends with the name (no trailing blank)" grep -qx "disk = $LOOPNAME" "$TMPD/i.out"

# 5. --breakdown with flushes: ext4 on the loop device, 30 writes each fdatasync'ed. The
# journal's commit asks for a preflush, which the kernel's flush machinery sends as requests
# of its own, with no bio and so no Q: their I2D and D2C count in the I/Os' lives too, and the
# disjoint phases' shares (before Q, Q2G, G2I, I2D, D2C) add up to at most 100%.
mkfs.ext4 -q -F "$LOOPDEV" || { echo "Bail out! mkfs.ext4 failed"; exit 1; }
mkdir -p "$TMPD/mnt"
mount "$LOOPDEV" "$TMPD/mnt" || { echo "Bail out! mount failed"; exit 1; }
at_exit "umount_retry $TMPD/mnt"
check "biolatency starts (--breakdown --json -d $LOOPNAME)" tool_start "$TMPD/b.json" "$TMPD/b.err" \
	$BL --breakdown --json -d "$LOOPNAME"
for i in $(seq 30); do
	dd if=/dev/zero of="$TMPD/mnt/f" bs=4k count=1 seek="$i" conv=notrunc,fdatasync status=none
done
tool_stop
bd() { jq -s --arg d "$LOOPNAME" "[.[] | .breakdown? // [] | .[] | select(.disk == \$d)] | last | $1" "$TMPD/b.json"; }
diag "breakdown: ios=$(bd .ios) d2c=$(bd .phases.d2c.count) q2c=$(bd .phases.q2c.count) shares=$(bd '[.phases[] | .share] | map(. * 1000 | round / 1000) | join(",")')"
check "some requests have no Q (the flush machinery's): D2C $(bd .phases.d2c.count) > Q2C $(bd .phases.q2c.count)" \
	test "$(bd .phases.d2c.count)" -gt "$(bd .phases.q2c.count)"
is "$(bd '[.phases[] | .share <= 1] | all')" true "no phase's share passes 100%"
is "$(bd '[.phases | .before_q, .q2g, .g2i, .i2d, .d2c | .share] | add <= 1.000001')" true \
	"the disjoint phases' shares add up to at most 100%"

# 6. bad input: one line on stderr, exit 1
bad "unknown disk: one line, exit 1" "no block device named 'nosuchdisk'" $BL -d nosuchdisk
bad "negative interval: one line, exit 1" "interval .* got '-1'" $BL -- -1
bad "non-root: one line, exit 1" "must run as root" setpriv --reuid=65534 --regid=65534 --clear-groups $BL

# 7. nothing of ours stays loaded after Ctrl-C
is "$(bpf_progs_named blk_rq_)" "" "no biolatency BPF program left after exit"

done_testing
