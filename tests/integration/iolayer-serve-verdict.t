#!/usr/bin/env bash
# One measurement path: iolayer --serve's /verdict and iolayer --json, run side by side over the
# same workload, give the same verdict object: layer, process, file and disk. The scenarios are
# those of the other iolayer tests: a write+fsync loop (-p), three processes appending and
# fsyncing one file (every process), a direct writer held by a blkio throttle (-p; the verdict
# is the block layer, which /verdict could not give before it shared the path), and a buffered
# writer throttled in balance_dirty_pages under tiny dirty limits (every process).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/slowdisk-lib.sh"
require_root
require_cmd jq jq
require_cmd curl curl
require_cmd python3 python3
slowdisk_available || skip_all "no FUSE (the slow-disk fixture needs it)"
plan 17

loop_ext4_setup 128
IL=$(tool iolayer)
DEV=$(cat "/sys/class/block/$LOOPNAME/dev")

# both SCENARIO ARGS...: start iolayer --json and iolayer --serve with ARGS, run the workload
# launched with wl_launch (it waits for $TMPD/go), take /verdict as it ends, stop both, compare.
both() {
	local name=$1 port js sv; shift
	port=$(free_port)
	tool_start "$TMPD/$name.json" "$TMPD/$name.err" $IL "$@" -d 600 --json || return 1
	js=$TOOL_PID
	tool_start "$TMPD/$name.sv" "$TMPD/$name.sverr" $IL "$@" --serve "127.0.0.1:$port" || return 1
	sv=$TOOL_PID
	wl_go
	curl -sf "http://127.0.0.1:$port/verdict" >"$TMPD/$name.verdict"
	TOOL_PID=$js tool_stop
	TOOL_PID=$sv tool_stop
	for f in layer process.pid file disk; do
		a=$(jq -c ".verdict.$f" "$TMPD/$name.json") b=$(jq -c ".verdict.$f" "$TMPD/$name.verdict")
		diag "$name: verdict.$f: --json $a, /verdict $b"
		[ "$a" = "$b" ] || return 1
	done
}
v() { jq -r ".verdict.$2" "$TMPD/$1.json"; }

# 1. a write+fsync loop, -p, on the slow disk (every request 1 ms): its time is the device's
# beyond doubt (on a loop device over memory the journal's CPU work and the device's are near
# halves, and two windows a moment apart may each name another)
slowdisk_start 1000
slowdisk_mkfs_ext4
wl_launch "$TMPD/wl1.out" "$WL/fsync_loop" -g "$TMPD/go" -n 150 -s 4096 "$SLOWDISK_MNT/data"
check "fsync loop (-p): the same verdict both ways" both fsync -p "$WL_PID"
is "$(v fsync process.pid)" "$WL_PID" "... naming the fsync loop"
is "$(v fsync file)" "$SLOWDISK_MNT/data" "... and its file"
diag "answer: serve-verdict fsync: $(v fsync layer)"

# 2. three processes append and fsync one file, every process traced; one makes three times
# the others' calls (three equal ones tie, and two windows may each name another), enough for
# its calls to take a clear share of the windows (near IL_CAUSE_IDLE, 5 %, one said "none");
# on the slow disk too (on the loop device over memory, device and journal were near halves)
rm -f "$TMPD/go"
wl_launch "$TMPD/wl2.out" sh -c "echo pid \$\$; while [ ! -e $TMPD/go ]; do sleep 0.05; done;
	for n in 300 100 100; do python3 -c \"import os
fd = os.open('$SLOWDISK_MNT/shared', os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
for _ in range(\$n):
    os.write(fd, b'x' * 4096); os.fsync(fd)\" & done; wait"
check "three appenders (every process): the same verdict both ways" both shared
is "$(v shared file)" "$SLOWDISK_MNT/shared" "... naming the shared file"
diag "answer: serve-verdict shared: $(v shared layer)"
slowdisk_stop

# 3. a direct writer in a blkio cgroup throttled to 20 write IOPS, -p
CGNAME=iolayer-test-serve-$$
throttled_cgroup "$CGNAME" "$DEV" 20
dd if=/dev/zero of="$MNT/held" bs=4k count=40 status=none && sync
rm -f "$TMPD/go"
wl_launch "$TMPD/wl3.out" sh -c "echo \$\$ >$CG/cgroup.procs && echo pid \$\$ &&
	while [ ! -e $TMPD/go ]; do sleep 0.05; done &&
	exec dd if=/dev/zero of=$MNT/held bs=4k count=40 oflag=direct conv=notrunc"
check "throttled writer (-p): the same verdict both ways" both throttle -p "$WL_PID"
diag "throttle: $(v throttle layer) -- $(v throttle reason)"
is "$(jq -r .verdict.layer "$TMPD/throttle.verdict")" "block layer" "/verdict: the block layer (bios held before the queue)"
check "/verdict names the cgroup /$CGNAME and its rule" grep -q "/$CGNAME.*throttle" "$TMPD/throttle.verdict"
is "$(jq -r .layers.block_cgroup "$TMPD/throttle.verdict")" "/$CGNAME" "/verdict's layers carry the throttled cgroup"
diag "answer: serve-verdict throttle: $(v throttle layer)"

# 4. a buffered writer throttled in balance_dirty_pages (tiny dirty limits), every process
dirty_save
echo $((2 << 20)) >/proc/sys/vm/dirty_bytes
echo $((1 << 20)) >/proc/sys/vm/dirty_background_bytes
rm -f "$TMPD/go"
wl_launch "$TMPD/wl4.out" sh -c "echo pid \$\$; while [ ! -e $TMPD/go ]; do sleep 0.05; done;
	exec dd if=/dev/zero of=$MNT/dirty bs=1M count=48"
check "dirty-throttled writer (every process): the same verdict both ways" both dirty
dirty_restore
is "$(dirty_now)" "$DIRTY_SAVED" "dirty settings restored"
diag "dirty: $(v dirty layer) -- $(v dirty reason)"
check "/verdict's layers carry the I/O-wait layer and the writeback layer" \
	jq -e '.layers.iowait.count > 0 and .layers.writeback.count > 0' "$TMPD/dirty.verdict"
diag "answer: serve-verdict dirty: $(v dirty layer)"

for s in fsync shared throttle dirty; do
	check "$s: --json and /verdict are valid JSON" sh -c "jq -e . $TMPD/$s.json $TMPD/$s.verdict >/dev/null"
done
is "$(bpf_progs_named blk_rq_ fs_sys_ wb_ext4_ iw_switch)" "" "no iolayer BPF program left after exit"
done_testing
