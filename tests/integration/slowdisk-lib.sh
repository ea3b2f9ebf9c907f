# shellcheck shell=bash
# The slow-disk fixture (sourced after lib.sh, not run by prove): a loop device over
# MOUNT/disk.img, a file served by the FUSE daemon tests/workloads/slowdisk, whose every
# request takes a known delay, optionally at a bandwidth limit, one request at a time
# (docs/slowdisk.md).
#
#   slowdisk_start DELAY_US [BW_BYTES_PER_S [SIZE_MIB]]
#       daemon + loop device (direct I/O, requests of at most 512 KiB: one FUSE request per
#       block request); sets SLOWDISK_DEV (/dev/loopN), SLOWDISK_NAME (loopN),
#       SLOWDISK_STATS (the daemon's counters, see slowdisk_stat) and SLOWDISK_PID.
#   slowdisk_mkfs_ext4      ext4 on it, mounted; sets SLOWDISK_MNT
#   slowdisk_stat KEY       one of the daemon's counters: reads, writes, fsyncs, read_bytes,
#                           write_bytes, min_us, max_us
#   slowdisk_stop           unmount, detach, stop the daemon; at exit too (failed test or not),
#                           and running it twice is harmless

# The FUSE module and device (a module on Debian's kernels); 1 when there is no FUSE.
slowdisk_available() {
	[ -c /dev/fuse ] || modprobe -q fuse 2>/dev/null
	[ -c /dev/fuse ] && [ -x "$WL/slowdisk" ]
}

slowdisk_start() {
	local delay=$1 bw=${2:-0} size=${3:-64} i
	SLOWDISK_FUSE=$TMPD/slowdisk-fuse
	SLOWDISK_STATS=$SLOWDISK_FUSE/stats
	mkdir -p "$SLOWDISK_FUSE"
	"$WL/slowdisk" -f --delay-us "$delay" --bw "$bw" --size "$size" "$SLOWDISK_FUSE" \
		</dev/null >"$TMPD/slowdisk.log" 2>&1 &
	SLOWDISK_PID=$!
	at_exit slowdisk_stop
	for ((i = 0; i < 100; i++)); do
		[ -e "$SLOWDISK_FUSE/disk.img" ] && break
		kill -0 "$SLOWDISK_PID" 2>/dev/null || break
		sleep 0.05
	done
	[ -e "$SLOWDISK_FUSE/disk.img" ] || {
		echo "Bail out! slowdisk did not mount $SLOWDISK_FUSE"; diag_file "$TMPD/slowdisk.log"; exit 1
	}
	SLOWDISK_DEV=$(losetup -f --show --direct-io=on "$SLOWDISK_FUSE/disk.img") ||
		{ echo "Bail out! losetup over $SLOWDISK_FUSE/disk.img failed"; exit 1; }
	SLOWDISK_NAME=${SLOWDISK_DEV#/dev/}
	# the daemon's largest request (max_write): a longer block request would be two of its
	echo 512 >"/sys/block/$SLOWDISK_NAME/queue/max_sectors_kb"
}

slowdisk_mkfs_ext4() {
	mkfs.ext4 -q -F -E nodiscard "$SLOWDISK_DEV" || { echo "Bail out! mkfs.ext4 on $SLOWDISK_DEV failed"; exit 1; }
	SLOWDISK_MNT=$TMPD/slowdisk-mnt
	mkdir -p "$SLOWDISK_MNT"
	mount "$SLOWDISK_DEV" "$SLOWDISK_MNT" || { echo "Bail out! mount $SLOWDISK_DEV failed"; exit 1; }
}

# mounted PATH: from the mount table, not stat(2), which fails on a dead daemon's mount
_slowdisk_mounted() { awk -v p="$1" '$2 == p {f = 1} END {exit !f}' /proc/self/mounts; }

slowdisk_stat() { awk -v k="$1" '$1 == k {print $2}' "$SLOWDISK_STATS"; }

slowdisk_stop() {
	local i
	if [ -n "${SLOWDISK_MNT:-}" ]; then
		_slowdisk_mounted "$SLOWDISK_MNT" && umount_retry "$SLOWDISK_MNT"
		SLOWDISK_MNT=
	fi
	if [ -n "${SLOWDISK_DEV:-}" ]; then
		losetup_retry "$SLOWDISK_DEV"
		# until the loop device lets go of the FUSE file, which it may do a moment later
		for ((i = 0; i < 50; i++)); do [ -e "/sys/block/$SLOWDISK_NAME/loop" ] || break; sleep 0.1; done
		SLOWDISK_DEV=
	fi
	if [ -n "${SLOWDISK_PID:-}" ]; then
		# unmounting ends the daemon; lazily when something still holds the file (then the
		# daemon serves it until let go): a daemon that does not end is killed
		_slowdisk_mounted "$SLOWDISK_FUSE" && umount_retry "$SLOWDISK_FUSE"
		for ((i = 0; i < 50; i++)); do kill -0 "$SLOWDISK_PID" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$SLOWDISK_PID" 2>/dev/null
		wait "$SLOWDISK_PID" 2>/dev/null
		SLOWDISK_PID=
		rmdir "$SLOWDISK_FUSE" 2>/dev/null
	fi
	return 0
}
