#!/usr/bin/env bash
# iowaitstack: a writer dirtying pages faster than the device drains them, under tiny dirty
# limits, is throttled in balance_dirty_pages (io_schedule_timeout) -- the case study's
# "dirty ratio exceeded" stack. vm.dirty_bytes / vm.dirty_background_bytes are set for the
# writer only and restored after (also on any exit).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/iowaitstack-lib.sh"
require_root
plan 7

loop_ext4_setup 256

dirty_save

start_paused dd if=/dev/zero of="$MNT/big" bs=64k count=1600 status=none
dd_pid=$PAUSED_PID
check "iowaitstack -p starts" tool_start "$TMPD/d.out" "$TMPD/d.err" $IWS -p "$dd_pid" --json
echo $((2 << 20)) >/proc/sys/vm/dirty_bytes
echo $((1 << 20)) >/proc/sys/vm/dirty_background_bytes
release_paused
wait "$dd_pid"; rc=$?
dirty_restore
is "$rc" 0 "writer: 100 MiB buffered, succeeded"
is "$(dirty_now)" "$DIRTY_SAVED" "dirty settings restored"
tool_stop
is "$TOOL_RC" 0 "exit status 0 after Ctrl-C"

w=$(iw_sum "$TMPD/d.out" waits "$dd_pid" 'balance_dirty_pages')
u=$(iw_sum "$TMPD/d.out" usecs "$dd_pid" 'balance_dirty_pages')
diag "dd: $w sleeps, $u usecs under balance_dirty_pages"
check "dd sleeps under balance_dirty_pages (got $w)" test "$w" -ge 1
top=$(jq -s -r '[.[] | .stacks[]] | sort_by(-.usecs) | .[0].kernel_stack | join(" ")' "$TMPD/d.out")
check "the stack with most wait is the dirty throttle" grep -q 'io_schedule.*balance_dirty_pages' <<<"$top"
check "no tracer frames in the stacks" no_tracer_frames "$TMPD/d.out"
done_testing
