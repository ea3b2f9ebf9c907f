#!/usr/bin/env bash
# iowaitstack: direct reads of a loop device sleep in io_schedule under the direct-I/O path,
# charged to the reader; -p, -m/-M, intervals, folded and user stacks.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/iowaitstack-lib.sh"
require_root
plan 28

N=2000
loop_raw_setup 64
DIRECT='direct_IO|dio_'

# 1. -p of dd: N direct reads -> sleeps under io_schedule and the direct-I/O path, at most one
#    per read (a read the device completes before dd reaches schedule() does not sleep; the
#    exact count is checked against voluntary switches in iowaitstack-sum.t), all charged to
#    dd, while a second reader (another pid) runs at the same time.
start_paused dd if="$LOOPDEV" of=/dev/null iflag=direct bs=4k count=$N status=none
dd_pid=$PAUSED_PID
check "iowaitstack -p starts" tool_start "$TMPD/p.out" "$TMPD/p.err" $IWS -p "$dd_pid" --json
dd if="$LOOPDEV" of=/dev/null iflag=direct bs=4k count=$N status=none &
noise=$!
release_paused
wait "$dd_pid"; wait "$noise"
tool_stop
is "$TOOL_RC" 0 "exit status 0 after Ctrl-C"
waits=$(iw_sum "$TMPD/p.out" waits "$dd_pid" "io_schedule.*($DIRECT)")
diag "dd: $waits sleeps under io_schedule and the direct-I/O path for $N reads"
check "$N direct reads -> between 1 and $N sleeps (got $waits)" test "$waits" -ge 1 -a "$waits" -le $N
is "$(iw_pids "$TMPD/p.out")" "$dd_pid" "-p shows only dd (not the other reader)"
is "$(jq -s '[.[] | .lost.stack + .lost.map_full] | add' "$TMPD/p.out")" 0 "no stack or map drops"
check "no tracer frames in the stacks" no_tracer_frames "$TMPD/p.out"
# stacks are merged once the tracer's frames are hidden: no two print alike, and under one
# stack a thread has one row
is "$(jq -c '.stacks[] | .kernel_stack' "$TMPD/p.out" | sort | uniq -d | wc -l)" 0 \
	"--json: no two stacks with the same frames"
is "$(jq -c '.stacks[] | .threads | map(.tid) | length - (unique | length)' "$TMPD/p.out" | sort -u | tr '\n' ' ')" "0 " \
	"--json: one row per thread under each stack"

# 2. without -p: both readers show up, each charged with its own sleeps
check "iowaitstack (all) starts" tool_start "$TMPD/a.out" "$TMPD/a.err" $IWS --json
dd if="$LOOPDEV" of=/dev/null iflag=direct bs=4k count=500 status=none & r1=$!
dd if="$LOOPDEV" of=/dev/null iflag=direct bs=4k count=300 status=none & r2=$!
wait $r1 $r2
tool_stop
w1=$(iw_sum "$TMPD/a.out" waits $r1 "$DIRECT"); w2=$(iw_sum "$TMPD/a.out" waits $r2 "$DIRECT")
check "reader 1: 500 reads -> 1..500 sleeps (got $w1)" test "$w1" -ge 1 -a "$w1" -le 500
check "reader 2: 300 reads -> 1..300 sleeps (got $w2)" test "$w2" -ge 1 -a "$w2" -le 300

# 3. -m 1000000: no sleep of a loop-device read lasts a second -> nothing for dd
start_paused dd if="$LOOPDEV" of=/dev/null iflag=direct bs=4k count=500 status=none
check "iowaitstack -m starts" tool_start "$TMPD/m.out" "$TMPD/m.err" $IWS -p "$PAUSED_PID" -m 1000000 --json
release_paused; wait "$PAUSED_PID"
tool_stop
is "$(iw_sum "$TMPD/m.out" waits any .)" 0 "-m 1000000: no sleep counted"

# 4. -M 100: every sleep counted is at most 100 usecs
start_paused dd if="$LOOPDEV" of=/dev/null iflag=direct bs=4k count=500 status=none
check "iowaitstack -M starts" tool_start "$TMPD/M.out" "$TMPD/M.err" $IWS -p "$PAUSED_PID" -M 100 --json
release_paused; wait "$PAUSED_PID"
tool_stop
is "$(jq -s '[.[] | .stacks[] | .threads[] | select(.max_usecs > 100)] | length' "$TMPD/M.out")" 0 \
	"-M 100: no counted sleep above 100 usecs"

# 5. interval mode: per-thread rows every second; Ctrl-C prints the last, partial interval,
#    so the rows of all intervals add up to the whole run however long dd takes (no -p: that
#    would end tracing when dd exits, before the second report)
start_paused dd if="$LOOPDEV" of=/dev/null iflag=direct bs=4k count=$N status=none
check "iowaitstack -i 1 starts" tool_start "$TMPD/i.out" "$TMPD/i.err" $IWS -i 1 --top 1000
release_paused; wait "$PAUSED_PID"
sleep 1.2 # at least one report while tracing
tool_stop
is "$TOOL_RC" 0 "-i 1: exit status 0 after Ctrl-C"
check "at least two interval reports" test "$(grep -c 'I/O wait per thread' "$TMPD/i.out")" -ge 2
isum=$(awk -v p="$PAUSED_PID" '/^dd / && $2 == p && $3 == p { s += $4 } END { print s + 0 }' "$TMPD/i.out")
ptot=$(awk -v p="$PAUSED_PID" '$1 == "dd" && $2 == p && $3 == p && /^    / { s += $4 } END { print s + 0 }' "$TMPD/i.out")
is "$isum" "$ptot" "per-thread rows of dd add up to its rows under the stacks ($isum)"
check "1..$N sleeps for $N reads (got $isum)" test "$isum" -ge 1 -a "$isum" -le $N
$IWS -i 1 -c 2 >"$TMPD/c.out" 2>"$TMPD/c.err"
is "$?" 0 "-i 1 -c 2 exits 0 by itself"
is "$(grep -c 'I/O wait per thread' "$TMPD/c.out")" 2 "-c 2: two interval reports"

# 6. folded output: comm;frames usecs, outermost frame first
start_paused dd if="$LOOPDEV" of=/dev/null iflag=direct bs=4k count=500 status=none
check "iowaitstack --folded starts" tool_start "$TMPD/f.out" "$TMPD/f.err" $IWS -p "$PAUSED_PID" --folded
release_paused; wait "$PAUSED_PID"
tool_stop
check "folded: a dd line ending in io_schedule frames and a number" \
	grep -qE '^dd;.*;io_schedule[a-z_]*(;[^; ]+)* [0-9]+$' "$TMPD/f.out"
is "$(sed 's/ [0-9]*$//' "$TMPD/f.out" | sort | uniq -d | wc -l)" 0 "folded: no key printed twice"

# 7. -U: dd's user stack starts in libc (named through libdw), after the kernel stack. The
#    tool reads a process's mappings when it first sleeps; dd must outlive that (~ms).
start_paused dd if="$LOOPDEV" of=/dev/null iflag=direct bs=4k count=$N status=none
check "iowaitstack -U starts" tool_start "$TMPD/u.out" "$TMPD/u.err" $IWS -U -p "$PAUSED_PID" --json
release_paused; wait "$PAUSED_PID"
tool_stop
ufirst=$(jq -s -r '[.[] | .stacks[] | select((.kernel_stack // []) | join(" ") | test("'"$DIRECT"'"))
	| .user_stack[0]] | first // "none"' "$TMPD/u.out")
diag "first user frame of dd's direct-read stack: $ufirst"
check "-U: first user frame is in libc" grep -qE '\(libc\.so' <<<"$ufirst"

is "$(bpf_progs_named iw_switch)" "" "no iowaitstack BPF program left after exit"
done_testing
