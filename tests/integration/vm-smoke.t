#!/usr/bin/env bash
# The test machine itself: what every other integration test takes for granted (BTF, tracefs,
# /dev/shm, a loop-backed ext4, the built tools). Runs on the host and in every vmtest guest,
# so a broken guest shows here first instead of as a confusing tool failure.
source "$(dirname "$0")/lib.sh"
require_root
plan 9

diag "kernel $(uname -r), attach ${IOLAYER_ATTACH:-default}"
check "uname -r names a release" test -n "$(uname -r)"
check "kernel BTF at /sys/kernel/btf/vmlinux" test -s /sys/kernel/btf/vmlinux

mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
check "tracefs has block:block_rq_complete" test -d /sys/kernel/tracing/events/block/block_rq_complete

check "/dev/shm is writable" dd if=/dev/zero of=/dev/shm/iolayer-smoke-$$ bs=4k count=1 status=none
rm -f /dev/shm/iolayer-smoke-$$

loop_ext4_setup 64
check "loop-backed ext4 is mounted" test "$(findmnt -n -o FSTYPE "$MNT")" = ext4
# A known answer through the whole stack: 64 KiB written and fsynced reads back identically.
head -c 65536 /dev/urandom >"$TMPD/src"
dd if="$TMPD/src" of="$MNT/f" bs=64k conv=fsync status=none
echo 3 >/proc/sys/vm/drop_caches
check "64 KiB written, fsynced and read back unchanged" cmp -s "$TMPD/src" "$MNT/f"
is "$(stat -c %s "$MNT/f")" 65536 "file size is 65536 bytes"

# Every built tool answers -h with exit 0 (it loads, links and parses options here).
n=0 bad=""
for t in "$BIN"/*; do
	[ -x "$t" ] || continue
	n=$((n + 1))
	"$t" -h >/dev/null 2>&1 || bad="$bad $(basename "$t")"
done
check "$n built tools found in $BIN" test "$n" -gt 0
is "$bad" "" "every built tool answers -h with exit 0"

done_testing
