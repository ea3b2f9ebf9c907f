#!/usr/bin/env bash
# iolayer's block numbers for direct I/O on ext4 over a loop device with mq-deadline (so
# requests are inserted): 32 O_DIRECT writes of 64 KiB (2 MiB) by io_loop to one file.
# Known answers: the file's disk_write_bytes is 2 MiB, its process's too (direct I/O's pages
# are the process's, in no page cache: the file comes from the direct I/O itself); the
# insert -> issue phase has a maximum, between its average and its total; no block-layer
# verdict and no cgroup named, nothing being held before the queue.
source "$(dirname "$0")/lib.sh"
require_root
require_cmd jq jq

loop_ext4_setup 64
SCHED=/sys/block/$LOOPNAME/queue/scheduler
# Debian's 5.10 has mq-deadline built in, but its loop driver offers no I/O scheduler
grep -qw mq-deadline "$SCHED" 2>/dev/null ||
	skip_all "$LOOPNAME offers no mq-deadline (scheduler: $(cat "$SCHED" 2>/dev/null))"
echo mq-deadline >"$SCHED" || skip_all "cannot set mq-deadline on $LOOPNAME"
plan 12

F=$MNT/f1
N=32 S=65536 TOTAL=$((32 * 65536))
dd if=/dev/zero of="$F" bs=1M count=2 status=none && sync
IL=$(tool iolayer)
wl_launch "$TMPD/wl.out" sh -c "echo pid \$\$; while [ ! -e $TMPD/go ]; do sleep 0.05; done;
	exec $WL/io_loop -m direct -s $S -n $N -w $TOTAL $F"
check "iolayer starts (-p $WL_PID --json)" tool_start "$TMPD/o.json" "$TMPD/o.err" $IL -p "$WL_PID" -d 600 --json
wl_go
is "$WL_RC" 0 "io_loop wrote $N x $S bytes with O_DIRECT"
sleep 0.2
tool_stop
is "$TOOL_RC" 0 "exit status 0 after Ctrl-C"

j() { jq -r "$1" "$TMPD/o.json"; }
fw=$(j "[.files[] | select(.path == \"$F\") | .disk_write_bytes] | add // 0")
pw=$(j ".processes[] | select(.pid == $WL_PID) | .disk_write_bytes")
cnt=$(j .layers.block_phases.i2d.count) tot=$(j .layers.block_phases.i2d.total_ns) mx=$(j .layers.block_phases.i2d.max_ns)
diag "file $F disk_write_bytes $fw, process $pw; i2d count $cnt total $tot max $mx"
diag "verdict: $(j .verdict.layer) -- $(j .verdict.reason)"
diag "answer: iolayer-block: file_disk_write_bytes=$fw process=$pw i2d_max_set=$([ "${mx:-0}" -gt 0 ] && echo yes || echo no)"
is "$fw" "$TOTAL" "the file's disk_write_bytes = bytes written with O_DIRECT ($TOTAL)"
is "$pw" "$TOTAL" "the process's disk_write_bytes = $TOTAL"
check "insert -> issue was seen (mq-deadline): count $cnt > 0" test "${cnt:-0}" -gt 0
check "insert -> issue has a maximum: $mx > 0" test "${mx:-0}" -gt 0
check "its maximum is between the average and the total" test "$((mx * cnt))" -ge "$tot" -a "$mx" -le "$tot"
is "$(j .layers.block_held)" 0 "no bio held before the queue"
check "the verdict is not the block layer ($(j .verdict.layer))" test "$(j .verdict.layer)" != "block layer"
is "$(j '.layers.block_cgroup // ""')" "" "no cgroup named for bios held before the queue"
is "$(bpf_progs_named blk_rq_ blk_bio_ who_bio_)" "" "no iolayer BPF program left after exit"

done_testing
