#!/usr/bin/env bash
# fsslower on xfs and btrfs (loop devices in /dev/shm), together with ext4 in one run:
# exact W/F counts per filesystem, no call counted twice when several filesystems share the
# syscall tracepoints, -t keeps one type, -f finds a btrfs file (whose st_dev names the
# subvolume, not the superblock).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fsslower-lib.sh"
require_root
require_cmd xfsprogs mkfs.xfs
require_cmd btrfs-progs mkfs.btrfs
plan 13

loop_ext4_setup
FS=$(tool fsslower)
# loop_fs FS: a loop device over /dev/shm formatted FS, mounted at $TMPD/FS
loop_fs() {
	local img=/dev/shm/iolayer-test-$$-$1.img dev
	truncate -s 400M "$img"; at_exit "rm -f $img"
	dev=$(losetup -f --show "$img") || { echo "Bail out! losetup failed"; exit 1; }
	at_exit "losetup_retry $dev"
	"mkfs.$1" -q -f "$dev" >/dev/null 2>&1 || { echo "Bail out! mkfs.$1 failed"; exit 1; }
	mkdir -p "$TMPD/$1"
	mount "$dev" "$TMPD/$1" 2>/dev/null || skip_all "cannot mount $1 (no $1 in this kernel)"
	at_exit "umount $TMPD/$1"
}
loop_fs xfs
loop_fs btrfs

# 1. every type at once, system-wide: 30 pairs on each -> 30 W and 30 F rows per file. The
#    three filesystems share the syscall tracepoints on a kernel without fentry/kprobes:
#    each call must still show once.
check "fsslower -t ext4,xfs,btrfs starts" tool_start "$TMPD/a.out" "$TMPD/a.err" $FS -m 0 -t ext4,xfs,btrfs
for f in "$MNT/e" "$TMPD/xfs/x" "$TMPD/btrfs/b"; do "$WL/fsync_loop" -n 30 "$f" >/dev/null; done
tool_stop
is "$TOOL_RC" 0 "three filesystems traced at once, exit 0"
for f in "$MNT/e" "$TMPD/xfs/x" "$TMPD/btrfs/b"; do
	is "$(rows "$TMPD/a.out" W "$f") $(rows "$TMPD/a.out" F "$f")" "30 30" "30 W and 30 F rows for $f"
done

run_on() { # OUT FILE ARGS...: trace the workload's 30 write+fsync pairs on FILE
	local out=$1 file=$2; shift 2
	wl_start "$TMPD/wl.out" -n 30 "$file"
	tool_start "$out" "$TMPD/err" $FS -m 0 -p "$WL_PID" "$@" || return 1
	wl_go
	tool_stop
}

# 2. -t xfs leaves the ext4 file out
run_on "$TMPD/t.out" "$MNT/e2" -t xfs
is "$(awk '/^[0-9][0-9]:/' "$TMPD/t.out" | wc -l)" 0 "-t xfs: no row for a file on ext4"
is "$(summary_count "$TMPD/t.out" F)" 0 "-t xfs: no ext4 fsync counted"

# 3. -f on btrfs
"$WL/fsync_loop" -n 1 "$TMPD/btrfs/only" >/dev/null
wl_start "$TMPD/wl.out" -n 30 "$TMPD/btrfs/only"
check "fsslower -f BTRFS_FILE starts" tool_start "$TMPD/f.out" "$TMPD/f.err" $FS -m 0 -f "$TMPD/btrfs/only"
"$WL/fsync_loop" -n 10 "$TMPD/btrfs/other" >/dev/null
wl_go
tool_stop
is "$(rows "$TMPD/f.out" F "$TMPD/btrfs/only")" 30 "-f on btrfs: 30 F rows for the file"
is "$(awk '/^[0-9][0-9]:/ && $NF != f' f="$TMPD/btrfs/only" "$TMPD/f.out" | wc -l)" 0 "-f on btrfs: no other file"

# 4. O_SYNC on xfs: the W rows are there (the nested sync is seen by fentry/kprobe only)
wl_start "$TMPD/wl.out" -n 20 -m osync "$TMPD/xfs/o"
check "fsslower starts (O_SYNC on xfs)" tool_start "$TMPD/o.out" "$TMPD/o.err" $FS -v -m 0 -p "$WL_PID"
wl_go
tool_stop
is "$(rows "$TMPD/o.out" W "$TMPD/xfs/o")" 20 "xfs O_SYNC: 20 W rows"
if grep -qE 'xfs file operations: attaching with (tp_btf|tracepoint)' "$TMPD/o.err"; then
	is "$(rows "$TMPD/o.out" F "$TMPD/xfs/o")" 0 "xfs O_SYNC, tracepoint method: the nested sync is not seen (no xfs tracepoint for it)"
else
	is "$(rows "$TMPD/o.out" F "$TMPD/xfs/o")" 20 "xfs O_SYNC, xfs_file_fsync traced: 20 nested F rows"
fi
done_testing
