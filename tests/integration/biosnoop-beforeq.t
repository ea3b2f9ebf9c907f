#!/usr/bin/env bash
# biosnoop: the time before Q is the bio's own (issue: stale starts). With tracepoints only, a
# bio's start once came from its inode's last writeback, kept per inode and never cleared:
# jbd2's journal writes (pages of the block device's inode) took the start of a sync's
# writeback of that inode seconds earlier, and one writepages of many bios counted every
# earlier bio's wait again in each later bio. On an ext4 loop device: 32 MiB written, 20
# write+fsync and a sync; 2 s idle; 20 write+fsync (jbd2 writes the journal); dd of 64 MiB
# with conv=fsync
# (one writepages, many bios, in dd's task). Known answers, whatever the method:
#   - a task's bios are submitted one after the other, so the times before Q of one task's
#     rows are disjoint: per submitter, their sum <= the trace's length;
#   - dd's rows for its file sum to <= dd's wall time, and each has its time before Q (the
#     writeback is dd's own);
#   - no row waits 1 s before Q (nothing is throttled; the idle gap is 2 s), jbd2's included.
source "$(dirname "$0")/lib.sh"
require_root
require_cmd jq jq
plan 9

loop_ext4_setup 256
F=$MNT/data
BS=$(tool biosnoop)

check "biosnoop starts (--json -d $LOOPNAME)" tool_start "$TMPD/a.json" "$TMPD/a.err" $BS --json -d "$LOOPNAME" -v
t0=$(date +%s%N)
# metadata the journal committed, dirty in the block device's page cache: the sync's flusher
# writes that inode back (writeback_single_inode_start), then nothing for 2 s
dd if=/dev/zero of="$MNT/warm" bs=1M count=32 status=none
"$WL/fsync_loop" -n 20 -s 4096 "$MNT/journal0" >/dev/null
sync
sleep 2
"$WL/fsync_loop" -n 20 -s 4096 "$MNT/journal" >/dev/null
d0=$(date +%s%N)
dd if=/dev/zero of="$F" bs=1M count=64 conv=fsync status=none &
DD=$!
wait $DD
is "$?" 0 "dd wrote 64 MiB with conv=fsync"
d1=$(date +%s%N)
sleep 0.3
tool_stop
t1=$(date +%s%N)
is "$TOOL_RC" 0 "exit status 0 after Ctrl-C"
trace_us=$(((t1 - t0) / 1000)) dd_us=$(((d1 - d0) / 1000))

q() { jq -s --arg f "$F" --argjson p "$DD" "$1" "$TMPD/a.json"; }
ddrows=$(q '[.[] | select(.file == $f and .pid == $p)] | length')
ddq=$(q '[.[] | select(.file == $f and .pid == $p) | .before_q_us] | map(select(. != null)) | length')
ddsum=$(q '[.[] | select(.file == $f and .pid == $p) | .before_q_us // 0] | add // 0 | floor')
ddmax=$(q '[.[] | select(.file == $f and .pid == $p) | .before_q_us // 0] | max // 0 | floor')
# per submitter: the sum of its rows' times before Q, the largest first
sums=$(q '[.[] | select(.before_q_us != null and .pid != null)] | group_by(.pid) |
	map({pid: .[0].pid, comm: .[0].comm, rows: length, sum: (map(.before_q_us) | add | floor),
	     max: (map(.before_q_us) | max | floor)}) | sort_by(-.sum)')
top=$(jq -r '.[0].sum // 0' <<<"$sums")
maxq=$(q '[.[] | .before_q_us // 0] | max // 0 | floor')
jbd=$(q '[.[] | select(.comm // "" | startswith("jbd2")) | .before_q_us // 0] | max // 0 | floor')
diag "trace ${trace_us} us; dd ${dd_us} us: $ddrows rows for $F, $ddq with before Q, sum ${ddsum} us, max ${ddmax} us"
diag "per submitter (before Q, us): $(jq -c '.[:5]' <<<"$sums")"
diag "answer: beforeq: dd_rows_measured=$([ "$ddrows" -gt 0 ] && [ "$ddq" = "$ddrows" ] && echo yes || echo no) dd_sum_le_wall=$([ "$ddsum" -le "$dd_us" ] && echo yes || echo no) per_task_le_trace=$([ "$top" -le "$trace_us" ] && echo yes || echo no) max_lt_1s=$([ "$maxq" -lt 1000000 ] && echo yes || echo no)"

check "dd's writeback made rows for $F ($ddrows)" test "$ddrows" -gt 0
is "$ddq" "$ddrows" "each of dd's rows has its time before Q (dd's own writeback)"
check "dd's rows' times before Q sum to <= dd's wall time (${ddsum} <= ${dd_us} us)" test "$ddsum" -le "$dd_us"
check "per submitter, the times before Q sum to <= the trace (largest ${top} <= ${trace_us} us)" \
	test "$top" -le "$trace_us"
check "no row waits 1 s before Q (largest ${maxq} us; jbd2's ${jbd} us)" test "$maxq" -lt 1000000
is "$(bpf_progs_named blk_bio_ blk_submit_)" "" "no biosnoop BPF program left after exit"

done_testing
