#!/usr/bin/env bash
# biolatency: a request the driver completes in parts is one request, timed whole, and an error
# completion is counted as an error. A loop device with direct I/O over a file that is then
# truncated under it: a 64 KiB direct read that starts 8 KiB before the file's new end is
# completed in two parts by the loop driver (a short read: 8 KiB, then the request is requeued
# and its re-read finds nothing, so the rest ends with an I/O error). /proc/diskstats counts one
# read for it; so must biolatency, with one request completed with an error.
source "$(dirname "$0")/lib.sh"
require_root
BL=$(tool biolatency)
KiB=1024 MiB=$((1024 * 1024))

# The backing file: in /dev/shm when tmpfs takes O_DIRECT (6.6 and later), else on ext4 over a
# loop device of its own (older kernels, where losetup --direct-io=on over tmpfs fails), so that
# the loop device really does direct I/O.
dio_of() { cat "/sys/block/${1#/dev/}/loop/dio" 2>/dev/null; }
img=/dev/shm/iolayer-bp-$$.img
truncate -s 8M "$img"; at_exit "rm -f $img"
if LOOPDEV=$(losetup -f --show --direct-io=on "$img" 2>/dev/null) && [ "$(dio_of "$LOOPDEV")" = 1 ]; then
	at_exit "losetup_retry $LOOPDEV"
else
	[ -z "$LOOPDEV" ] || losetup -d "$LOOPDEV" # attached, but without direct I/O
	diag "no direct I/O over /dev/shm: backing file on ext4 instead"
	loop_ext4_setup 64
	img=$MNT/backing.img
	truncate -s 8M "$img"
	LOOPDEV=$(losetup -f --show --direct-io=on "$img") || { echo "Bail out! losetup --direct-io=on failed"; exit 1; }
	at_exit "losetup_retry $LOOPDEV"
fi
LOOPNAME=${LOOPDEV#/dev/}
[ "$(dio_of "$LOOPDEV")" = 1 ] || skip_all "loop device without direct I/O"
plan 11
truncate -s $((4 * MiB + 8 * KiB)) "$img" # the device keeps its 8 MiB; the file ends 8 KiB past 4 MiB
if command -v udevadm >/dev/null && udevadm control --stop-exec-queue 2>/dev/null; then
	at_exit "udevadm control --start-exec-queue"
fi

# field N of the /proc/diskstats line of device NAME (4: reads completed)
diskstat() { awk -v n="$1" -v f="$2" '$3 == n { print $f }' /proc/diskstats; }
count_of() { # FILE OP: requests of op OP on our device, all lines summed
	jq -s --arg d "$LOOPNAME" --arg o "$2" \
		'[.[] | .histograms? // [] | .[] | select(.disk == $d and .op == $o) | .total] | add // 0' "$1"
}
partial_read() { dd if="$LOOPDEV" of=/dev/null iflag=direct bs=64k skip=64 count=1 status=none 2>/dev/null; }

# 1. JSON: one read request, one error
check "biolatency starts (-D -F --json -d $LOOPNAME)" tool_start "$TMPD/j.out" "$TMPD/j.err" $BL -D -F --json -d "$LOOPNAME"
r0=$(diskstat "$LOOPNAME" 4)
partial_read; dd_rc=$?
r1=$(diskstat "$LOOPNAME" 4)
tool_stop
is "$TOOL_RC" 0 "exit status 0 after Ctrl-C"
is "$dd_rc" 1 "the read past the file's end fails (I/O error on its second part)"
is "$((r1 - r0))" 1 "/proc/diskstats: 1 read completed on $LOOPNAME"
is "$(count_of "$TMPD/j.out" read)" "$((r1 - r0))" "biolatency counts the reads /proc/diskstats counts"
is "$(jq -s '[.[] | .errors? // 0] | add' "$TMPD/j.out")" 1 "1 request completed with an error"
is "$(jq -s '[.[] | select(.lost) | .lost | to_entries[] | .value] | add' "$TMPD/j.out")" 0 "nothing reported lost"
diag "answer: diskstats reads $((r1 - r0)), biolatency reads $(count_of "$TMPD/j.out" read), errors $(jq -s '[.[] | .errors? // 0] | add' "$TMPD/j.out"), dd exit $dd_rc"

# 2. text, -Q (timed from insertion): the requeue of the rest of the request does not restart it
check "biolatency -Q starts (text)" tool_start "$TMPD/t.out" "$TMPD/t.err" $BL -Q -d "$LOOPNAME"
r0=$(diskstat "$LOOPNAME" 4)
partial_read
r1=$(diskstat "$LOOPNAME" 4)
tool_stop
is "$TOOL_RC" 0 "-Q: exit status 0 after Ctrl-C"
total=$(awk '$2 == "->" && $4 == ":" { n += $5 } END { print n + 0 }' "$TMPD/t.out")
is "$total" "$((r1 - r0))" "-Q: the text histogram holds the $((r1 - r0)) read /proc/diskstats counts"
check "text: '1 requests completed with an error'" grep -qx '1 requests completed with an error' "$TMPD/t.out"
diag "answer: -Q text: diskstats reads $((r1 - r0)), histogram total $total"
diag_file "$TMPD/t.out"

done_testing
