#!/usr/bin/env bash
# iowaitstack at its edges (issue 13):
#  - a sleep still under way when tracing ends is reported as "still waiting", with its thread
#    and the time waited so far, in text and JSON: a dd oflag=direct whose writes the cgroup-v1
#    blkio throttle holds to one per second sleeps 16 s in D state, across `iowaitstack 4`;
#  - -U puts back the caller of the libc wrapper that a frame-pointer walk skips: main ->
#    middle -> leaf_fsync -> fsync (tests/workloads/fsync_levels, frame pointers) shows all four.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/iowaitstack-lib.sh"
require_root
plan 12

# ---- 1. still waiting ------------------------------------------------------------------------
BLKIO=/sys/fs/cgroup/blkio
if [ ! -e "$BLKIO/blkio.throttle.write_iops_device" ]; then
	for i in 1 2 3 4 5 6; do skip "no cgroup-v1 blkio throttle at $BLKIO"; done
else
	loop_raw_setup 64
	majmin=$(lsblk -dno MAJ:MIN "$LOOPDEV" | tr -d ' ')
	CG=$BLKIO/iolayer-edges-$$
	mkdir "$CG"
	at_exit "for i in \$(seq 100); do rmdir $CG && break; sleep 0.1; done"
	echo "$majmin 1" >"$CG/blkio.throttle.write_iops_device"
	at_exit "echo '$majmin 0' > $CG/blkio.throttle.write_iops_device"
	# 8 MiB in one write: its bios leave the throttle at 1 per second, ~16 s in all, and dd
	# sleeps once, until the last one completes
	start_paused dd if=/dev/zero of="$LOOPDEV" bs=8M count=1 oflag=direct status=none
	dd_pid=$PAUSED_PID
	echo "$dd_pid" >"$CG/cgroup.procs"
	tool_start "$TMPD/sw.json" "$TMPD/sw.jerr" $IWS -p "$dd_pid" --json 4 || true
	json_tool=$TOOL_PID
	tool_start "$TMPD/sw.txt" "$TMPD/sw.terr" $IWS -p "$dd_pid" 4 || true
	text_tool=$TOOL_PID
	release_paused
	wait "$json_tool"; json_rc=$?
	wait "$text_tool"; text_rc=$?
	diag "dd state when tracing ended: $(ps -o stat= -p "$dd_pid")"
	echo "$majmin 0" >"$CG/blkio.throttle.write_iops_device"   # let dd finish
	wait "$dd_pid"
	is "$json_rc $text_rc" "0 0" "iowaitstack 4 (--json and text) ends by itself with exit 0"
	is "$(jq -c '[.still_waiting[]? | [.comm, .pid, .tid]]' "$TMPD/sw.json")" "[[\"dd\",$dd_pid,$dd_pid]]" \
		"JSON: one sleep still waiting, dd's (pid = tid = $dd_pid)"
	usecs=$(jq '.still_waiting[0].usecs // 0' "$TMPD/sw.json")
	diag "answer: dd still waiting after $usecs usecs of a 4 s trace"
	check "JSON: waited so far is most of the 4 s trace (2.5..4.3 s, got $usecs usecs)" \
		test "$usecs" -ge 2500000 -a "$usecs" -le 4300000
	is "$(jq -r '.still_waiting[0].kernel_stack // [] | join(" ") | test("io_schedule") and test("direct_IO|dio")' "$TMPD/sw.json")" \
		true "JSON: its kernel stack is the direct write's wait in io_schedule"
	is "$(grep -cE "^still waiting: dd pid $dd_pid tid $dd_pid, [0-9]+ usecs so far$" "$TMPD/sw.txt")" 1 \
		"text: one 'still waiting: dd pid $dd_pid tid $dd_pid, N usecs so far' line"
	check "text: the sleep is not in the totals (no I/O wait ended while tracing)" \
		grep -q '^no I/O wait ended while tracing$' "$TMPD/sw.txt"
	diag_file "$TMPD/sw.txt"
fi

# ---- 2. -U: the wrapper's caller -----------------------------------------------------------
loop_ext4_setup 64
wl_launch "$TMPD/lv.out" "$WL/fsync_levels" -n 30 -g "$TMPD/go" "$MNT/f"
check "iowaitstack -U --json starts" tool_start "$TMPD/u.json" "$TMPD/u.jerr" $IWS -U -p "$WL_PID" --json
json_tool=$TOOL_PID
tool_start "$TMPD/u.txt" "$TMPD/u.terr" $IWS -U -p "$WL_PID" || true
text_tool=$TOOL_PID
tool_start "$TMPD/u.folded" "$TMPD/u.ferr" $IWS -U -p "$WL_PID" --folded || true
folded_tool=$TOOL_PID
wl_go
is "$WL_RC" 0 "fsync_levels made its 30 writes and fsyncs"
kill -INT "$json_tool" "$text_tool" "$folded_tool"
wait "$json_tool" "$text_tool" "$folded_tool"

# The user stacks of the sleeps under fsync, as function names, outermost levels cut at main.
# (a frame with "fsync" in its name: do_fsync is inlined into __x64_sys_fsync on some 5.10 builds)
ufuncs=$(jq -c '[.stacks[] | select(.kernel_stack // [] | join(" ") | test("fsync"))
	| .user_stack // [] | map(sub("\\+0x.*$"; "") | sub(" .*$"; ""))
	| .[0:(index("main") // 10) + 1]] | unique' "$TMPD/u.json")
diag "answer: user stacks under fsync: $ufuncs"
[ "$ufuncs" = "[]" ] && diag "kernel stacks: $(jq -c '[.stacks[] | .kernel_stack // [] | .[0:12]]' "$TMPD/u.json")"
is "$ufuncs" '[["fsync","leaf_fsync","middle","main"]]' \
	"JSON: every fsync sleep's user stack is fsync, leaf_fsync, middle, main"
# text: the first four user frames (after "--") of each stack, one line per stack
txt=$(awk '/^    --$/ { n = 4; s = ""; next }
	/^    COMM / && n > 0 { print s; n = 0 }
	n > 0 { sub(/^    /, ""); sub(/\+0x.*/, ""); s = s (s == "" ? "" : " ") $0; if (--n == 0) print s }' "$TMPD/u.txt")
diag "text user stacks: $(tr '\n' '|' <<<"$txt")"
check "text: a user stack fsync leaf_fsync middle main" grep -qx 'fsync leaf_fsync middle main' <<<"$txt"
check "--folded: main;middle;leaf_fsync;fsync before the kernel frames" \
	grep -q ';main;middle;leaf_fsync;fsync;-;' "$TMPD/u.folded"
# the totals line and each stack's line: "1 wait", "1 stack", the plural for any other count
check "text: 'wait'/'stack' in the singular for 1 only (the totals line and every stack's)" \
	awk '/^[0-9]+ usecs of I\/O wait in / { n++; w = $8; sub(/,$/, "", w)
		if ((w == "waits") != ($7 != 1) || ($10 == "stacks") != ($9 != 1)) bad++ }
	/^#[0-9]+  [0-9]+ usecs in [0-9]+ waits? / { if (($6 == "waits") != ($5 != 1)) bad++ }
	END { exit !(n == 1 && !bad) }' "$TMPD/u.txt"

done_testing
