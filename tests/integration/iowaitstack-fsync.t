#!/usr/bin/env bash
# iowaitstack: the bundled write+fsync workload sleeps in I/O wait under the fsync path
# (ext4_sync_file, jbd2), at least once per fsync that waited; -p covers every thread,
# --tid one thread.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/iowaitstack-lib.sh"
require_root
plan 11

N=200
FSYNC='ext4_sync_file|jbd2'
loop_ext4_setup 128

# Start fsync_loop -t 2 held at its go file; sets WL_PID and WL_TIDS.
start_fsync_loop() { # TAG
	rm -f "$TMPD/go.$1"
	"$WL/fsync_loop" -n $N -t 2 -g "$TMPD/go.$1" "$MNT/f.$1" >"$TMPD/wl.$1" &
	WL_PID=$!
	at_exit "kill -9 $WL_PID"
	for ((i = 0; i < 100; i++)); do
		[ "$(grep -cs '^tid' "$TMPD/wl.$1")" = 2 ] && break
		sleep 0.05
	done
	WL_TIDS=$(awk '/^tid/ { print $2 }' "$TMPD/wl.$1" | sort -n | tr '\n' ' ')
}

# 1. -p: both threads, each with >= 90% of its N fsyncs sleeping under the fsync path
start_fsync_loop p
check "iowaitstack -p starts" tool_start "$TMPD/p.out" "$TMPD/p.err" $IWS -p "$WL_PID" --json
touch "$TMPD/go.p"
wait "$WL_PID"; is "$?" 0 "workload: $N write+fsync per thread, all succeeded"
tool_stop
is "$TOOL_RC" 0 "exit status 0 after Ctrl-C"
for t in $WL_TIDS; do
	w=$(jq -s --argjson t "$t" --arg re "$FSYNC" '[.[] | .stacks[] | select((.kernel_stack // []) | join(" ") | test($re))
		| .threads[] | select(.tid == $t) | .waits] | add // 0' "$TMPD/p.out")
	diag "thread $t: $w sleeps under the fsync path for $N fsyncs"
	check "thread $t: >= $((N * 9 / 10)) sleeps under $FSYNC (got $w)" test "$w" -ge $((N * 9 / 10))
done
tids=$(jq -s -r '[.[] | .stacks[] | .threads[] | .tid] | unique | map(tostring) | join(" ")' "$TMPD/p.out")
is "$tids " "$WL_TIDS" "-p shows both threads of the workload and nothing else"
check "no tracer frames in the stacks" no_tracer_frames "$TMPD/p.out"

# 2. --tid: only the chosen thread, still with its fsync sleeps
start_fsync_loop t
one=${WL_TIDS%% *}
check "iowaitstack --tid starts" tool_start "$TMPD/t.out" "$TMPD/t.err" $IWS --tid "$one" --json
touch "$TMPD/go.t"
wait "$WL_PID"
tool_stop
is "$(jq -s -r '[.[] | .stacks[] | .threads[] | .tid] | unique | map(tostring) | join(" ")' "$TMPD/t.out")" "$one" \
	"--tid $one shows that thread only"
w=$(iw_sum "$TMPD/t.out" waits "$WL_PID" "$FSYNC")
check "--tid: >= $((N * 9 / 10)) sleeps under the fsync path (got $w)" test "$w" -ge $((N * 9 / 10))

is "$(bpf_progs_named iw_switch)" "" "no iowaitstack BPF program left after exit"
done_testing
