#!/usr/bin/env bash
# fsslower --split: where each call's time went. Known answers:
#  1. the parts add up: for every traced call of a write+fsync loop on a loop ext4, on_cpu +
#     runq + iowait_block + iowait_task + other = its latency, within 1 % (JSON, -m 0);
#  2. an fsync loop on ext4: at least 95 % of the fsyncs that slept name as main waker the
#     journal thread jbd2/LOOP-8 (a kernel thread) or their block I/O on LOOP, the others
#     a kernel thread (ext4's end-of-I/O kworker); where jbd2 is the main waker its own I/O
#     wait during the sleep it ended is not zero, on LOOP, for 90 % of them or more;
#  3. lock wait: two processes writing one file, a 4 KiB appender and lock_holder, whose
#     appends hold the inode lock (ext4 serialises buffered writes on it) 20 ms each, asleep
#     in a page fault of their source page (userfaultfd), so the waiter sleeps on the lock
#     rather than spins, on any machine's speed: the small writer's slow writes that slept
#     are mostly other-wait, and 80 % of them or more name the holder as their main waker
#     (the flusher's kworker may end another's wait). (The 64 MiB dd it replaces spent some
#     0.5 s reading /dev/zero into its buffer, on a CPU shared with a hog, before its first
#     write: the 4 KiB dd started 50 ms after it had finished by then, and never waited);
#  4. the text rows keep their columns, CSV has the documented header, fsslower(8) names
#     every member of a row's split;
#  5. the count of threads that may have a call in flight (split_busy, and its buckets by
#     tid) is back to 0 once the caller sleeps: a thread stays counted from its first call
#     until a switch-out finds it with none, so 100 writes in a row count it once, and a
#     count left behind would make every switch of the machine pay the in-flight cost.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fsslower-lib.sh"
require_root
require_cmd jq jq
plan 19

loop_ext4_setup 768
FS=$(tool fsslower)
F=$MNT/data
MAN8=$(cd "$(dirname "$0")/../.." && pwd)/docs/man/fsslower.8

# 1 and 2: 200 write+fsync pairs, every call
wl_start "$TMPD/wl.out" -n 200 "$F"
check "fsslower --split --json starts" tool_start "$TMPD/j.out" "$TMPD/j.err" $FS --split --json -m 0 -p "$WL_PID"
wl_go
tool_stop
is "$WL_RC/$TOOL_RC" "0/0" "workload and tool exit 0"
jq -c --arg f "$F" 'select(.file == $f and .split)' "$TMPD/j.out" >"$TMPD/rows"
is "$(jq -r '.op' "$TMPD/rows" | sort | uniq -c | awk '{printf "%s%s ", $1, $2}')" "200F 1O 200W " \
	"200 W, 200 F and the open, each with a split"
bad=$(jq -r 'select(((.split | .on_cpu_us + .runq_us + .iowait_block_us + .iowait_task_us + .other_us) - .usecs | fabs) > (.usecs * 0.01 + 0.005)) | "\(.op) \(.usecs) \(.split)"' "$TMPD/rows")
is "$bad" "" "every call's parts add up to its latency within 1 %"
diag "largest error of a sum: $(jq -s 'map(((.split | .on_cpu_us + .runq_us + .iowait_block_us + .iowait_task_us + .other_us) - .usecs | fabs) / .usecs * 100) | max' "$TMPD/rows") %"
jq -c 'select(.op == "F" and .split.waker.kind != "none")' "$TMPD/rows" >"$TMPD/fsyncs"
diag "fsync main wakers: $(jq -r '.split.waker | "\(.kind) \(.comm // .disk // "")"' "$TMPD/fsyncs" | sort | uniq -c | tr '\n' ';')"
check "at least 190 of the 200 fsyncs slept" test "$(wc -l <"$TMPD/fsyncs")" -ge 190
jbd2_or_block='.split.waker | (.kind == "task" and .comm == $j and .kthread) or (.kind == "block" and .disk == $d)'
check "at least 95 % of them: main waker the kernel thread jbd2/$LOOPNAME-8 or block I/O on $LOOPNAME" \
	test "$(jq -r --arg j "jbd2/$LOOPNAME-8" --arg d "$LOOPNAME" "select($jbd2_or_block)" "$TMPD/fsyncs" | jq -s length)" -ge \
	"$(($(wc -l <"$TMPD/fsyncs") * 95 / 100))"
is "$(jq -r --arg j "jbd2/$LOOPNAME-8" --arg d "$LOOPNAME" "select(($jbd2_or_block | not) and (.split.waker.kthread | not)) | .split.waker" "$TMPD/fsyncs")" "" \
	"the others: a kernel thread"
# (the commit's I/O may have ended before the fsync slept: a few, in a slow guest, find none)
nj=$(jq -r --arg j "jbd2/$LOOPNAME-8" 'select(.split.waker.comm == $j) | .op' "$TMPD/fsyncs" | wc -l)
nio=$(jq -r --arg j "jbd2/$LOOPNAME-8" --arg d "$LOOPNAME" 'select(.split.waker.comm == $j and .split.waker.io_usecs > 0 and .split.waker.io_disk == $d) | .op' "$TMPD/fsyncs" | wc -l)
diag "jbd2 the main waker of $nj fsyncs, with its own I/O wait on $LOOPNAME in $nio"
check "where jbd2 is the main waker, its own I/O wait during the sleep is > 0, on $LOOPNAME, for 90 % of them or more ($nio of $nj)" \
	test "$nj" -gt 0 -a "$((nio * 100))" -ge "$((nj * 90))"

# 3. lock wait: lock_holder holds the inode lock 20 ms in each of its 10 appends
G=$MNT/shared
: >"$G"
check "fsslower --split -f starts" tool_start "$TMPD/l.out" "$TMPD/l.err" $FS --split --json -m 1 -f "$G"
"$WL/lock_holder" -n 10 -t 20 -z "$G" >"$TMPD/holder.out" &
BIG=$!
at_exit "kill $BIG"
dd if=/dev/zero of="$G" bs=4k count=1000000 oflag=append conv=notrunc status=none &
SMALL=$!
at_exit "kill $SMALL"
wait $BIG
is "$?/$(awk '$1 == "holds" {print $2}' "$TMPD/holder.out")" "0/10" "lock_holder held the lock in its 10 appends"
kill $SMALL
wait $SMALL
tool_stop
jq -c --argjson p "$SMALL" 'select(.pid == $p and .op == "W" and .usecs >= 5000 and .split.waker.kind != "none")' "$TMPD/l.out" >"$TMPD/small"
diag "small writer: $(wc -l <"$TMPD/small") writes of 5 ms or more; main wakers: $(jq -r '.split.waker | "\(.kind) \(.pid // "") \(.comm // "")"' "$TMPD/small" | sort | uniq -c | tr '\n' ';')"
check "the small writer has 3 or more writes of 5 ms or more that slept (on the inode lock)" \
	test "$(wc -l <"$TMPD/small")" -ge 3
is "$(jq -c 'select(.split.other_us < .usecs / 2) | [.usecs, .split]' "$TMPD/small")" "" \
	"each of them is mostly other-wait (not on CPU, not I/O wait)"
n_big=$(jq -r --argjson b "$BIG" 'select(.split.waker.pid == $b) | .usecs' "$TMPD/small" | wc -l)
check "at least 80 % of them name lock_holder (pid $BIG) as their main waker ($n_big of $(wc -l <"$TMPD/small"))" \
	test "$((n_big * 100))" -ge "$(($(wc -l <"$TMPD/small") * 80))"

# 4. text columns, CSV header, the man page
wl_start "$TMPD/wl4.out" -n 20 "$F"
check "fsslower --split (text) starts" tool_start "$TMPD/t.out" "$TMPD/t.err" $FS --split -m 0 -p "$WL_PID"
wl_go
tool_stop
is "$(awk -v f="$F" '$4 == "F" && $NF == f && NF != 19' "$TMPD/t.out" | wc -l)" 0 \
	"text: 19 columns on each F row (LAT, IF, 5 parts, WAKER, WPID, W_MS, W_IO, W_DISK, FILENAME)"
json_doc=$(awk '/^\.B \\-\\-split/ {p = 1; next} p && /^\.TP/ {exit} p' "$MAN8")
undocumented=$(jq -r '.split | (keys[], (.waker | keys[]))' "$TMPD/rows" | sort -u |
	while read -r k; do grep -qw -- "$k" <<<"$json_doc" || echo "$k"; done | tr '\n' ' ')
is "$undocumented" "" "fsslower(8) --split names every member of a row's split"

# 5. split_busy after 100 writes in a row, the writer asleep (no exit to clear it)
B=$MNT/busy
perl -e '$| = 1; print "pid $$\n"; select(undef, undef, undef, 0.02) until -e $ARGV[1];
	open(my $f, ">", $ARGV[0]) or die; syswrite($f, "x" x 64) == 64 or die for 1 .. 100;
	print "done\n"; select(undef, undef, undef, 0.02) until -e $ARGV[2]' \
	"$B" "$TMPD/go5" "$TMPD/end5" >"$TMPD/w5.out" &
W5=$!
at_exit "touch $TMPD/end5"
check "fsslower --split -p (a writer) starts" tool_start "$TMPD/b.out" "$TMPD/b.err" $FS --split -m 0 -p "$W5"
is "$(bss_vars "$TOOL_PID" fsslower.bss split_busy split_busy_tid)" "0 0" "split_busy 0 before the writes"
touch "$TMPD/go5"
wait_for 10 grep -q done "$TMPD/w5.out"
sleep 0.3
busy=$(bss_vars "$TOOL_PID" fsslower.bss split_busy split_busy_tid)
touch "$TMPD/end5"
wait $W5
tool_stop
is "$(rows "$TMPD/b.out" W "$B")/$busy" "100/0 0" \
	"100 writes traced; then, the writer asleep, split_busy and its buckets 0"
done_testing
