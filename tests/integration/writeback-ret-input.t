#!/usr/bin/env bash
# writeback-ret: generic mode (-f FUNC) where fexit/kretprobes exist, its one-line refusal
# where they do not, and bad input: one line on stderr, exit 1.
source "$(dirname "$0")/lib.sh"
require_root
plan 15

source "$(dirname "$0")/writeback-ret-lib.sh"


bad "-f of a function that does not exist" "no kernel function named 'iolayer_no_such_func'" \
	$WR -f iolayer_no_such_func
bad "-f of a function that does not return int" "d_path does not return int" $WR -f d_path
bad "-p not a number" "(pid|PID) must be a whole number" $WR -p abc
bad "-p of no process" "no process with pid" $WR -p 2147483647
bad "--tid of no thread" "^writeback-ret: no thread with tid 2147483647$" $WR --tid 2147483647
bad "-p with --tid: one of them" "^writeback-ret: -p and --tid cannot be combined" $WR -p $$ --tid $$
bad "-d 0" "duration .* got '0'" $WR -d 0
bad "non-root" "must run as root" setpriv --reuid=65534 --regid=65534 --clear-groups $WR

# --errors where no return value can be seen: do_writepages through tracepoints (forced here,
# so every kernel takes that path) has RET ? in every row, so --errors could never print one.
bad "--errors with do_writepages through tracepoints: refused, one line" \
	"^writeback-ret: --errors cannot show anything here: do_writepages is traced with (tp_btf|raw_tp), which does not see its return value" \
	"$BIN/writeback-ret" --attach=tracepoint -f do_writepages --errors -d 2
# ... while ext4_writepages' tracepoint carries the return value: --errors still runs there.
"$BIN/writeback-ret" --attach=tracepoint --errors -d 1 >/dev/null 2>"$TMPD/e4.err" </dev/null
is "$?" 0 "--errors with ext4_writepages through tracepoints runs (exit 0)"
# What tracepoint mode cannot see is said on every run, once: also with -v
is "$(grep -c 'ext4_writepages_result' "$TMPD/e4.err")" 1 "tracepoint mode: its blind spot said once"
"$BIN/writeback-ret" --attach=tracepoint -v -d 1 >/dev/null 2>"$TMPD/v.err" </dev/null
is "$(grep -c 'ext4_writepages_result' "$TMPD/v.err")" 1 "tracepoint mode with -v: its blind spot said once"

# Generic mode: vfs_fsync_range returns int and runs once per fsync.
kprobes=no
[ -e /sys/bus/event_source/devices/kprobe/type ] && kprobes=yes
$WR -f vfs_fsync_range -d 1 >"$TMPD/g0.out" 2>"$TMPD/g0.err" </dev/null
rc=$?
if [ "$rc" = 1 ]; then
	# Only a kernel without kprobes may refuse, and then in one line naming what it lacks.
	is "$kprobes" no "generic mode refused only where kprobes are missing"
	bad "generic mode without fexit and kprobes: one line, exit 1" \
		"needs fexit or kretprobes, and this kernel has neither" $WR -f vfs_fsync_range
	skip "generic mode rows need fexit or kretprobes (this kernel has neither)"
else
	is "$rc" 0 "generic mode runs (-f vfs_fsync_range)"
	loop_ext4_setup
	wl_launch "$TMPD/wl.out" "$WL/fsync_loop" -n 7 -g "$TMPD/go" "$MNT/f"
	check "generic mode starts on the workload" \
		tool_start "$TMPD/g.out" "$TMPD/g.err" $WR -f vfs_fsync_range -p "$WL_PID" --json
	wl_go
	tool_stop
	is "$(jq -s -c '[.[] | select(.func == "vfs_fsync_range") | .ret] | group_by(.) | map([.[0], length])' "$TMPD/g.out")" \
		'[[0,7]]' "7 fsyncs in, 7 vfs_fsync_range returns of 0 out"
fi

done_testing
