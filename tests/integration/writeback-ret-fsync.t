#!/usr/bin/env bash
# writeback-ret: N write+fsync -> N ext4_writepages returns of 0 with WB_SYNC_ALL for the
# file's inode, pages written > 0; filters; text layout; do_writepages by inode; clean detach.
source "$(dirname "$0")/lib.sh"
require_root
source "$(dirname "$0")/writeback-ret-lib.sh"
wr_require_method
plan 19
loop_ext4_setup
N=20

# 1. JSON rows of one process
wl_launch "$TMPD/wl.out" "$WL/fsync_loop" -n $N -g "$TMPD/go" "$MNT/f"
check "writeback-ret starts (-p $WL_PID --json)" tool_start "$TMPD/j.out" "$TMPD/j.err" $WR -p "$WL_PID" --json
wl_go
is "$WL_RC" 0 "workload: $N write+fsync succeeded"
INO=$(stat -c %i "$MNT/f")
tool_stop
is "$TOOL_RC" 0 "exit status 0 after Ctrl-C"
rows() { jq -c 'select(.func)' "$TMPD/j.out"; }
is "$(rows | jq -s --argjson ino "$INO" '[.[] | select(.ino == $ino)] | length')" $N \
	"$N fsyncs in, $N ext4_writepages rows out for inode $INO"
is "$(rows | jq -s '[.[] | select(.ret != 0 or .sync_mode != "WB_SYNC_ALL")] | length')" 0 \
	"every row: ret 0, WB_SYNC_ALL"
is "$(rows | jq -s '[.[] | select((.pages // 0) < 1)] | length')" 0 "every row: pages written > 0"
is "$(rows | jq -s '[.[] | select(.pid != '"$WL_PID"' or .comm != "fsync_loop")] | length')" 0 \
	"-p $WL_PID: only that process"
is "$(rows | jq -s -r '[.[] | .dev + ":" + .file] | unique | join(",")')" "$LOOPNAME:$MNT/f" \
	"device and file of the row: $LOOPNAME, the full path $MNT/f"
is "$(jq -s '[.[] | .summary? // [] | .[] | select(.ret == 0 and .sync_mode == "WB_SYNC_ALL") | .count] | add' "$TMPD/j.out")" $N \
	"summary: $N calls returned 0 with WB_SYNC_ALL"
is "$(jq -s '[.[] | .lost? // {} | to_entries[] | .value] | add' "$TMPD/j.out")" 0 "nothing lost"
diag "answer: fsync rows $(rows | jq -s -c '[.[] | [.ret, .sync_mode, .pages]] | group_by(.) | map(.[0] + [length])')"

# 2. --tid: a thread that does not write sees nothing; text layout
wl_launch "$TMPD/wl2.out" "$WL/fsync_loop" -n 5 -g "$TMPD/go" "$MNT/g"
check "writeback-ret starts (text, --tid of the writing thread)" \
	tool_start "$TMPD/t.out" "$TMPD/t.err" $WR --tid "$(wl_tid "$TMPD/wl2.out")"
wl_go
tool_stop
check "text header has the issue's columns" \
	grep -qE '^TIME +COMM +PID +TID +FUNC +RET +SYNC_MODE +PAGES +LAT\(us\) +DEV +INO +FILE$' "$TMPD/t.out"
is "$(grep -cE "^[0-9:]{8} +fsync_loop +$WL_PID +[0-9]+ +ext4_writepages +0 +WB_SYNC_ALL +[1-9][0-9]* " "$TMPD/t.out")" 5 \
	"--tid: 5 text rows '0 WB_SYNC_ALL' with pages > 0"
check "text summary line: ext4_writepages 0 WB_SYNC_ALL 5" \
	grep -qE '^ext4_writepages +0 +WB_SYNC_ALL +5 ' "$TMPD/t.out"

# 3. do_writepages: dirty 5 pages without fsync, then syncfs -> the flusher writes them; the
#    rows of that inode add up to 5 pages (fexit/kretprobe: ret 0; tracepoints: ret unknown).
check "writeback-ret -f do_writepages starts" \
	tool_start "$TMPD/d.out" "$TMPD/d.err" $WR -v -f do_writepages --json
dd if=/dev/zero of="$MNT/h" bs=4096 count=5 status=none
HINO=$(stat -c %i "$MNT/h")
sync -f "$MNT/h"
tool_stop
is "$(jq -s --argjson ino "$HINO" '[.[] | select(.func == "do_writepages" and .ino == $ino) | .pages] | add' "$TMPD/d.out")" 5 \
	"do_writepages: 5 dirty pages of inode $HINO written"
if grep -qE 'attaching with (tp_btf|raw_tp)' "$TMPD/d.err"; then
	check "tracepoint mode says the return value is invisible" grep -q 'return value is invisible' "$TMPD/d.err"
else
	is "$(jq -s --argjson ino "$HINO" '[.[] | select(.ino == $ino and .ret != 0)] | length' "$TMPD/d.out")" 0 \
		"do_writepages returned 0 for inode $HINO"
fi

# 4. -d ends by itself
$WR -d 1 >"$TMPD/dur.out" 2>"$TMPD/dur.err"
is "$?" 0 "-d 1 ends by itself with status 0"

# 5. nothing of ours stays loaded
for ((i = 0; i < 30; i++)); do [ -z "$(bpf_progs_named wb_)" ] && break; sleep 0.1; done # freed after an RCU grace period
is "$(bpf_progs_named wb_)" "" "no writeback-ret BPF program left after exit"

done_testing
