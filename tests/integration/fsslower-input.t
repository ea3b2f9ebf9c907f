#!/usr/bin/env bash
# fsslower: bad input and missing filesystems give one line on stderr and exit 1.
source "$(dirname "$0")/lib.sh"
require_root
plan 10

FS=$(tool fsslower)
nopid=$(( $(cat /proc/sys/kernel/pid_max) - 1 ))
while [ -e "/proc/$nopid" ]; do nopid=$((nopid - 1)); done
bad "-p of a pid that does not exist" "no process with pid $nopid" $FS -p "$nopid"
bad "--tid of a thread that does not exist" "no thread with tid $nopid" $FS --tid "$nopid"
bad "-p with --tid: one of them" "^fsslower: -p and --tid cannot be combined" $FS -p $$ --tid $$
bad "--csv with --json" "^fsslower: --csv and --json cannot be combined" $FS --csv --json
bad "-t of an unknown type" "unknown filesystem type 'zfs'" $FS -t zfs
bad "-m -1" "threshold.*'-1'" $FS -m -1
bad "-m not a number" "threshold.*'ten'" $FS -m ten
bad "-f of a file on /proc" "not on an ext4, xfs or btrfs" $FS -f /proc/self/status
bad "-f of a missing file" "cannot read /nonexistent" $FS -f /nonexistent/file
if grep -q ' btrfs ' /proc/self/mounts; then
	skip "a btrfs filesystem is mounted here"
else
	bad "-t btrfs with none mounted" "no btrfs filesystem is mounted" $FS -t btrfs
fi
done_testing
