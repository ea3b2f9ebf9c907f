#!/usr/bin/env bash
# writeback-ret: a shut-down ext4 (EXT4_IOC_SHUTDOWN, NOLOGFLUSH) makes ext4_writepages
# return -EIO under sync_file_range(WAIT_BEFORE|WRITE|WAIT_AFTER). fexit and kretprobe show
# one row "-5 EIO" WB_SYNC_ALL and --errors shows only it; on the tracepoint path that early
# return happens before ext4:ext4_writepages_result, and the tool must say so at start.
source "$(dirname "$0")/lib.sh"
require_root
source "$(dirname "$0")/writeback-ret-lib.sh"
wr_require_method
plan 12

loop_ext4_setup
COUNT=3
wl_launch "$TMPD/wl.out" "$WL/shutdown_eio" -n $COUNT -g "$TMPD/go" "$MNT/f"

# Two tracers on the same process: every row (text, -v to learn the method) and --errors
# with stacks (JSON).
check "writeback-ret starts (all rows)" tool_start "$TMPD/a.out" "$TMPD/a.err" $WR -v -p "$WL_PID"
A_PID=$TOOL_PID
check "writeback-ret starts (--errors --stack --json)" \
	tool_start "$TMPD/e.out" "$TMPD/e.err" $WR --errors --stack --json -p "$WL_PID"
E_PID=$TOOL_PID
wl_go
is "$WL_RC" 0 "workload: $COUNT fsyncs ok, then shutdown, then sync_file_range failed with EIO"
diag "$(tail -1 "$TMPD/wl.out")"
TOOL_PID=$E_PID; tool_stop; E_RC=$TOOL_RC
TOOL_PID=$A_PID; tool_stop; A_RC=$TOOL_RC
is "$A_RC $E_RC" "0 0" "both exit 0 after Ctrl-C"

is "$(grep -cE "^[0-9:]{8} +shutdown_eio +$WL_PID +$WL_PID +ext4_writepages +0 +WB_SYNC_ALL +[1-9]" "$TMPD/a.out")" $COUNT \
	"$COUNT fsyncs before the shutdown: $COUNT rows '0 WB_SYNC_ALL', pages > 0"
diag "answer: rows before the shutdown $(grep -cE " ext4_writepages +0 +WB_SYNC_ALL " "$TMPD/a.out")"
erows() { jq -s '[.[] | select(.func)]' "$TMPD/e.out"; }
is "$(erows | jq '[.[] | select(.ret == 0)] | length')" 0 "--errors: no row with ret 0"

if grep -qE 'attaching with (tp_btf|raw_tp)' "$TMPD/a.err"; then
	diag "tracepoint path: the early -EIO return is invisible here"
	check "start-up notice: returns before the tracepoint are invisible" \
		grep -q 'returns taken before the tracepoint .* are invisible in this mode' "$TMPD/a.err"
	check "the notice is said without -v too" \
		grep -q 'are invisible in this mode' "$TMPD/e.err"
	# A kernel whose tracepoint does see the early return must still show it as -5 EIO.
	is "$(erows | jq '[.[] | select(.ret != -5 or .errno != "EIO" or .sync_mode != "WB_SYNC_ALL")] | length')" 0 \
		"--errors rows, if any: -5 EIO WB_SYNC_ALL"
	skip "the -5 EIO row needs fexit or kretprobe (tracepoint path on this kernel)"
	skip "the -5 EIO stack needs fexit or kretprobe (tracepoint path on this kernel)"
	skip "the -5 EIO stack needs fexit or kretprobe (tracepoint path on this kernel)"
else
	is "$(grep -cE "^[0-9:]{8} +shutdown_eio +$WL_PID +$WL_PID +ext4_writepages +-5 EIO +WB_SYNC_ALL " "$TMPD/a.out")" 1 \
		"one row '-5 EIO WB_SYNC_ALL' after the shutdown"
	check "summary: ext4_writepages -5 EIO WB_SYNC_ALL 1" \
		grep -qE '^ext4_writepages +-5 EIO +WB_SYNC_ALL +1 ' "$TMPD/a.out"
	is "$(erows | jq -c '[.[] | [.ret, .errno, .sync_mode, .ino != null]]')" '[[-5,"EIO","WB_SYNC_ALL",true]]' \
		"--errors: exactly that row, same signed value"
	is "$(erows | jq '[.[0].stack[]? | select(test("^(__)?filemap_fdatawrite|^do_writepages|^file_write_and_wait|sync_file_range"))] | length > 0')" true \
		"--stack: the row's kernel stack goes through the writeback path"
	is "$(erows | jq -r '.[0].stack[0] // "none" | sub("\\+.*"; "")')" ext4_writepages \
		"--stack: the innermost frame is ext4_writepages itself (no tracer frames)"
	diag "stack of the -EIO call: $(erows | jq -r '[.[0].stack[]?] | join(" <- ")')"
	skip "start-up notice applies to the tracepoint path only"
fi

done_testing
