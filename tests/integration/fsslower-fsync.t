#!/usr/bin/env bash
# fsslower: 200 write+fsync pairs on a loop ext4 -> exactly 200 W and 200 F rows for that
# file, none from other processes; JSON and CSV agree; -f keeps one file; clean detach.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fsslower-lib.sh"
require_root
plan 22

loop_ext4_setup
FS=$(tool fsslower)
F=$MNT/data

# Another process writing and fsyncing on the same filesystem the whole time: -p must
# keep it out of the output.
( while [ ! -e "$TMPD/stop-noise" ]; do
	dd if=/dev/zero of="$MNT/noise" bs=4k count=8 conv=fsync status=none
done ) &
at_exit "touch $TMPD/stop-noise; kill $!"

# 1. text output, -m 0 -p PID
wl_start "$TMPD/wl.out" -n 200 "$F"
check "fsslower starts (-m 0 -p PID)" tool_start "$TMPD/t.out" "$TMPD/t.err" $FS -m 0 -p "$WL_PID"
wl_go
tool_stop
is "$WL_RC" 0 "workload ran 200 write+fsync pairs"
is "$TOOL_RC" 0 "exit status 0 after Ctrl-C"
is "$(rows "$TMPD/t.out" W "$F")" 200 "200 writes in, 200 W rows for $F"
is "$(rows "$TMPD/t.out" F "$F")" 200 "200 fsyncs in, 200 F rows for $F"
is "$(rows "$TMPD/t.out" O "$F")" 1 "one open, one O row"
is "$(awk -v p="$WL_PID" 'NR > 1 && /^[0-9][0-9]:/ && $3 != p' "$TMPD/t.out" | wc -l)" 0 \
	"no row from another process"
is "$(awk -v f="$F" '$4 == "W" && $NF == f {print $5}' "$TMPD/t.out" | sort -u)" 4096 \
	"every W row moved 4096 bytes"
is "$(awk -v f="$F" '$4 == "W" && $NF == f {print $6}' "$TMPD/t.out" | sort -n | tail -1)" 796 \
	"last write at offset 796 KiB (199 * 4 KiB)"
is "$(summary_count "$TMPD/t.out" F)" 200 "summary counts 200 F"
check "-m 0: the summary says its rows are every call" grep -qx 'Summary of every traced call (rows above: every call):' "$TMPD/t.out"
diag "answer: rows W $(rows "$TMPD/t.out" W "$F") F $(rows "$TMPD/t.out" F "$F") O $(rows "$TMPD/t.out" O "$F"), summary F $(summary_count "$TMPD/t.out" F)"
is "$(bpf_progs_named fs_ | wc -l)" 0 "no fsslower BPF program left after exit"

# 2. --json: the same counts, fdatasync named as such
wl_start "$TMPD/wl2.out" -n 100 -m data "$F"
check "fsslower --json starts" tool_start "$TMPD/j.out" "$TMPD/j.err" $FS --json -m 0 -p "$WL_PID"
wl_go
tool_stop
is "$(jq -r --arg f "$F" 'select(.file == $f and .op == "F") | .sync' "$TMPD/j.out" | sort | uniq -c | awk '{print $1, $2}')" \
	"100 fdatasync" "--json: 100 F rows, each sync=fdatasync"
is "$(jq -s '[.[] | select(.summary) | .summary.write.count] | add' "$TMPD/j.out")" 100 \
	"--json summary: 100 writes"
is "$(jq -s '[.[] | select(.lost) | .lost.ringbuf_full] | add' "$TMPD/j.out")" 0 "no event lost"
# fsslower(8) documents what the code writes: every member of a JSON row, the CSV header
MAN8=$(cd "$(dirname "$0")/../.." && pwd)/docs/man/fsslower.8
json_doc=$(awk '/^\.B \\-\\-json/ {p = 1; next} p && /^\.TP/ {exit} p' "$MAN8")
undocumented=$(jq -r 'select(.op) | keys[]' "$TMPD/j.out" | sort -u |
	while read -r k; do grep -qw -- "$k" <<<"$json_doc" || echo "$k"; done | tr '\n' ' ')
is "$undocumented" "" "fsslower(8) --json names every member of a row"

# 3. --csv -f FILE: only that file, though the noise process writes on the same fs
wl_start "$TMPD/wl3.out" -n 50 "$F"
check "fsslower --csv -f starts" tool_start "$TMPD/c.out" "$TMPD/c.err" $FS --csv -m 0 -f "$F"
wl_go
tool_stop
is "$(awk -F, 'NR > 1 && $5 == "F"' "$TMPD/c.out" | wc -l)" 50 "--csv -f: 50 F rows"
is "$(awk -F, -v f="$F" 'NR > 1 && $NF != f' "$TMPD/c.out" | wc -l)" 0 "-f: no row for another file"
is "$(head -1 "$TMPD/c.out")" "time,comm,pid,tid,op,bytes,offset,lat_us,errno,sync,interface,deleted,file" "CSV header"
check "fsslower(8) --csv gives the header as written" grep -qF "$(head -1 "$TMPD/c.out")" "$MAN8"
done_testing
