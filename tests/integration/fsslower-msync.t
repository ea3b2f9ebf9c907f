#!/usr/bin/env bash
# msync is a sync of the mapped file: N stores into a shared mapping of a file on a loop ext4,
# each followed by msync(MS_SYNC) of the page (fsync_loop -m msync: one ext4_sync_file each,
# no write call) -> exactly N F rows for that file, marked msync in the sync column, no W row,
# the summary's F count N; iolayer -p counts the N fsyncs in its layer table, the process's
# and the file's rows and /metrics, and file operations take a share of the time above 0.
# Where the method cannot find a mapping's file (the syscall tracepoints on a kernel without
# bpf_find_vma, before 5.17), the N syncs are said not measured, in the normal output.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fsslower-lib.sh"
require_root
require_cmd curl curl
plan 25
N=1000 # msyncs per run

loop_ext4_setup
F=$MNT/data FS=$(tool fsslower) IL=$(tool iolayer)

# not_measured FILE: the count of the "msync syncs not measured" line of a text summary (0
# when absent).
not_measured() { awk '/^msync syncs not measured/ {n = $NF} END {print n + 0}' "$1"; }

# One run of N msyncs watched by four tools at once (under TCG a run takes minutes):
# fsslower -m 0 (text) and --json, iolayer --json and iolayer --serve (/metrics), all -p PID.
PORT=$(free_port)
wl_start "$TMPD/wl.out" -n $N -m msync "$F"
check "fsslower -v -m 0 -p PID starts" tool_start "$TMPD/t.out" "$TMPD/t.err" $FS -v -m 0 -p "$WL_PID"
FS_PID=$TOOL_PID
check "fsslower --json -m 0 -p PID starts" tool_start "$TMPD/j.out" "$TMPD/j.err" $FS --json -m 0 -p "$WL_PID"
FJ_PID=$TOOL_PID
check "iolayer --json -p PID starts" tool_start "$TMPD/i.json" "$TMPD/i.err" $IL --json -d 600 -p "$WL_PID"
IL_PID=$TOOL_PID
check "iolayer --serve -p PID starts" tool_start "$TMPD/s.out" "$TMPD/s.err" $IL --serve "127.0.0.1:$PORT" -p "$WL_PID"
SV_PID=$TOOL_PID
wl_go
is "$WL_RC" 0 "workload ran $N stores + msync(MS_SYNC)"
curl -s "http://127.0.0.1:$PORT/metrics" >"$TMPD/metrics.txt"
TOOL_PID=$SV_PID tool_stop
TOOL_PID=$FS_PID tool_stop
is "$TOOL_RC" 0 "fsslower: exit status 0"
TOOL_PID=$FJ_PID tool_stop
is "$TOOL_RC" 0 "fsslower --json: exit status 0"
TOOL_PID=$IL_PID tool_stop
is "$TOOL_RC" 0 "iolayer: exit status 0"

# What this method can see: every sync, but for the syscall tracepoints without bpf_find_vma.
SEEN=$N
if grep -qE 'attaching with (tp_btf|tracepoint)' "$TMPD/t.err" && ! grep -qw bpf_find_vma /proc/kallsyms; then
	SEEN=0
fi
diag "method: $(grep -oE 'attaching with [a-z_]+' "$TMPD/t.err" | head -1); syncs it can see: $SEEN of $N"
is "$(rows "$TMPD/t.out" F "$F")" $SEEN "$SEEN F rows for $F"
is "$(rows "$TMPD/t.out" W "$F") $(rows "$TMPD/t.out" O "$F")" "0 1" "no W row (stores are no call), one O row"
is "$(summary_count "$TMPD/t.out" F)" $SEEN "summary counts $SEEN F"
is "$(not_measured "$TMPD/t.out")" $((N - SEEN)) "$((N - SEEN)) said not measured, after the summary"
diag "answer: msync syncs in F rows + said not measured: $(($(rows "$TMPD/t.out" F "$F") + $(not_measured "$TMPD/t.out")))"

il() { jq -r "$1" "$TMPD/i.json"; }
il_true() { jq -e "$1" "$TMPD/i.json" >/dev/null; }
is "$(il '.layers.syscall.fsync.count')" $SEEN "iolayer: $SEEN fsyncs in its layer table"
is "$(il "[.processes[] | select(.pid == $WL_PID) | .ops.fsync.count] | add")" $SEEN \
	"iolayer: the process's row, $SEEN fsyncs"
is "$(jq -r --arg f "$F" '[.files[] | select(.path == $f) | .fsyncs] | add // 0' "$TMPD/i.json")" $SEEN \
	"iolayer: the file's row, $SEEN fsyncs"
is "$(il '.lost.msync')" $((N - SEEN)) "iolayer: $((N - SEEN)) msync syncs said not measured"
if [ $SEEN -gt 0 ]; then
	check "iolayer: file operations' share of the time above 0" \
		il_true '.layers.syscall.fsync.total_ns / (.duration_s * 1e9) > 0'
else
	check "iolayer: not measured, in its output" il_true '.lost.msync > 0'
fi
is "$(il '"\(.verdict.victim.op) \(.verdict.victim.calls)"')" "$([ $SEEN -gt 0 ] && echo "fsync $SEEN" || echo "open 1")" \
	"iolayer: the verdict's victim is the process's top operation, $SEEN msync syncs"
diag "iolayer verdict: $(il '.verdict.reason')"

is "$(jq -r --arg f "$F" 'select(.op == "F" and .file == $f) | .sync' "$TMPD/j.out" | sort | uniq -c | awk '{print $1, $2}')" \
	"$([ $SEEN -gt 0 ] && echo "$SEEN msync")" "--json: $SEEN F rows, each sync=msync"
is "$(jq -s '[.[] | select(.summary) | .summary.fsync.count] | add' "$TMPD/j.out")" $SEEN "--json summary: $SEEN fsyncs"
is "$(jq -s '[.[] | select(.lost) | .lost.msync] | add' "$TMPD/j.out")" $((N - SEEN)) "--json lost.msync: $((N - SEEN))"
is "$(awk '$1 == "iolayer_fs_op_duration_seconds_count{op=\"fsync\"}" {print $2}' "$TMPD/metrics.txt")" $SEEN \
	"/metrics: fsync _count $SEEN"
is "$(awk -v f="iolayer_file_fsyncs_total{path=\"$F\"}" '$1 == f {n = $2} END {print n + 0}' "$TMPD/metrics.txt")" \
	$SEEN "/metrics: the file's fsyncs: $SEEN"
is "$(awk '$1 == "iolayer_lost_events_total{kind=\"msync\"}" {print $2}' "$TMPD/metrics.txt")" $((N - SEEN)) \
	"/metrics: $((N - SEEN)) msync syncs lost"
is "$(bpf_progs_named fs_ | wc -l)" 0 "no fs_ BPF program left after exit"
done_testing
