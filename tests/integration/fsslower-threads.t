#!/usr/bin/env bash
# fsslower: -p TGID covers every thread (-L shows their TIDs); --tid keeps one; -p of a
# parent whose children do the I/O says so instead of printing bare zeros, counting the
# children that exited too, and not the process's own threads that exited.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fsslower-lib.sh"
require_root
plan 19

loop_ext4_setup
FS=$(tool fsslower)

# 1. 4 threads x 20 write+fsync, each on its own file
wl_start "$TMPD/wl.out" -n 20 -t 4 "$MNT/f"
check "fsslower -p TGID -L starts" tool_start "$TMPD/a.out" "$TMPD/a.err" $FS -m 0 -p "$WL_PID" -L
wl_go
tool_stop
tids=$(awk '/^tid /{print $2}' "$TMPD/wl.out" | sort -n | tr '\n' ' ')
is "$(awk 'NR > 1 && $5 == "F" {print $4}' "$TMPD/a.out" | sort -n | uniq | tr '\n' ' ')" "$tids" \
	"-L shows the 4 thread ids of the workload"
# A kretprobe keeps room for a fixed number of calls in flight (the kernel's default is one per
# CPU on kernels without CONFIG_PREEMPTION): the tool asks tracefs for more, so 4 threads
# sleeping in fsync at once on 2 CPUs lose nothing. Where tracefs cannot be used, a lost call
# has no row and is reported as a missed return: rows plus misses must still add up.
missed=$(missed_returns "$TMPD/a.out")
[ "$missed" = 0 ] || diag "returns reported missed: $missed"
f=$(awk 'NR > 1 && $5 == "F"' "$TMPD/a.out" | wc -l)
if [ "$missed" = 0 ]; then
	is "$f" 80 "80 fsyncs in: 80 F rows"
else # the misses may include writes: rows must not exceed 80 and rows + misses must reach it
	check "80 fsyncs in: $f F rows + $missed missed returns cover them" test "$f" -le 80 -a $((f + missed)) -ge 80
fi
if [ "$missed" = 0 ]; then
	is "$(awk 'NR > 1 && $5 == "F" {print $4}' "$TMPD/a.out" | sort | uniq -c | awk '{print $1}' | sort -u)" 20 \
		"20 F rows from each thread"
else
	skip "per-thread counts: $missed returns missed by the kretprobe on this kernel"
fi
is "$(awk -v p="$WL_PID" 'NR > 1 && /^[0-9][0-9]:/ && $3 != p' "$TMPD/a.out" | wc -l)" 0 "every row has PID = TGID"
diag "answer: -p: $f F rows + $missed missed returns"
is "$(awk 'NR > 1 && $5 == "F" {print $4, $NF}' "$TMPD/a.out" | sort -u | wc -l)" 4 \
	"each thread's fsyncs are on one file (4 thread/file pairs)"

# 2. --tid: one thread only
wl_start "$TMPD/wl2.out" -n 20 -t 4 "$MNT/g"
one=$(awk '/^tid /{print $2; exit}' "$TMPD/wl2.out")
check "fsslower --tid starts" tool_start "$TMPD/b.out" "$TMPD/b.err" $FS -v -m 0 --tid "$one" -L
wl_go
tool_stop
is "$(awk 'NR > 1 && /^[0-9][0-9]:/ {print $4}' "$TMPD/b.out" | sort -u)" "$one" "--tid $one: only that thread"
f=$(awk 'NR > 1 && $5 == "F"' "$TMPD/b.out" | wc -l)
missed=$(missed_returns "$TMPD/b.out")
if [ "$missed" = 0 ]; then
	is "$f" 20 "--tid: its 20 F rows"
else
	check "--tid: $f F rows + $missed missed returns cover its 20 fsyncs" test "$f" -le 20 -a $((f + missed)) -ge 20
fi

# 3. With kretprobes: the tool's tracefs return probes (iolayer/r<pid>_<n>) go away when it
# exits, and the next tool removes those of one that was killed with SIGKILL.
kprobe_events() { # tracefs, where the tool mounted it (also seen under debugfs: read once)
	if [ -e /sys/kernel/tracing/kprobe_events ]; then cat /sys/kernel/tracing/kprobe_events
	else cat /sys/kernel/debug/tracing/kprobe_events; fi 2>/dev/null
}
if grep -q 'kprobe/kretprobe' "$TMPD/b.err"; then
	is "$(kprobe_events | grep -c ':iolayer/')" 0 "no iolayer kprobe event left after Ctrl-C"
	tool_start "$TMPD/c.out" "$TMPD/c.err" $FS -vv -t ext4 -m 0
	kill -9 "$TOOL_PID"; wait "$TOOL_PID" 2>/dev/null
	n=$(grep -c 'through tracefs, maxactive' "$TMPD/c.err")
	check "-vv names the return probes made in tracefs ($n)" test "$n" -gt 0
	is "$(kprobe_events | grep -c ":iolayer/r${TOOL_PID}_")" "$n" \
		"SIGKILL leaves those $n return probes defined (nothing attached to them)"
	tool_start "$TMPD/d.out" "$TMPD/d.err" $FS -v -t ext4 -m 0
	tool_stop
	is "$(kprobe_events | grep -c ':iolayer/')" 0 "the next fsslower removed them and its own"
else
	for i in 1 2 3 4; do skip "no kretprobes with this attach method"; done
fi
# 4. -p of a parent whose three children write (dd, 50 x 4 KiB each: 50 reads and 50 writes):
# two exit (the parent reaps them, and the kernel adds what they did to its own counters),
# one stays. The parent made no file operation; a note says what its children did, the
# exited ones included (their /proc/PID/io), and how many still run
at_exit "touch $TMPD/stop"
wl_launch "$TMPD/par.out" sh -c "echo pid \$\$; while [ ! -e $TMPD/go ]; do sleep 0.05; done
	for i in 1 2; do dd if=/dev/zero of=$MNT/kid\$i bs=4k count=50 status=none & done
	sh -c 'dd if=/dev/zero of=$MNT/kid3 bs=4k count=50 status=none
		while [ ! -e $TMPD/stop ]; do sleep 0.05; done' & wait"
check "fsslower -p PARENT starts" tool_start "$TMPD/k.out" "$TMPD/k.err" $FS -p "$WL_PID"
touch "$TMPD/go"
wait_for 10 eval '[ "$(cat "$MNT/kid1" "$MNT/kid2" "$MNT/kid3" 2>/dev/null | wc -c)" = $((3 * 50 * 4096)) ]'
sleep 1.2 # a sample of the children after the first two have exited
tool_stop
touch "$TMPD/stop"
note=$(grep '^note: process' "$TMPD/k.out")
calls=$(sed -n "s/^note: process $WL_PID's children made \([0-9]*\) read and write calls.*/\1/p" "$TMPD/k.out")
running=$(echo "$note" | sed -n 's/.* \([0-9]*\) running;.*/\1/p')
diag "$note"
diag "answer: children: running=$running at_least_300=$([ "${calls:-0}" -ge 300 ] && echo yes || echo no)"
check "the note counts the 3 children's calls, the 2 that exited included: at least 3 x 100 ($calls)" \
	test "${calls:-0}" -ge 300
is "$running" 1 "the note says 1 child still runs"
is "$(awk '$1 == "W" || $1 == "F" { s += $2 } END { print s + 0 }' "$TMPD/k.out")" 0 \
	"the parent's own summary: no write or fsync"

# 5. -p of a process whose 4 threads (20 x pwrite + fsync each) exit while it lives on: the
# kernel adds what an exited thread did to its process's counters, as it adds a reaped
# child's, but these threads were traced: 80 writes and 80 fsyncs, and no note of children
wl_start "$TMPD/t5.out" -n 20 -t 4 -w "$TMPD/end5" "$MNT/t5"
check "fsslower -p TGID starts (its threads exit)" tool_start "$TMPD/t5.txt" "$TMPD/t5.err" $FS -p "$WL_PID"
touch "$TMPD/go"
wait_for 20 eval '[ "$(ls "/proc/$WL_PID/task" 2>/dev/null | wc -l)" = 1 ]'
sleep 1.2 # a sample of the process after its threads exited
tool_stop
touch "$TMPD/end5"
wait "$WL_BG"
got="W $(summary_count "$TMPD/t5.txt" W) F $(summary_count "$TMPD/t5.txt" F) notes $(grep -c '^note: process' "$TMPD/t5.txt")"
diag "answer: exited threads: $got"
is "$got" "W 80 F 80 notes 0" "4 threads that exited: their 80 writes and 80 fsyncs, and no note of children"

done_testing
