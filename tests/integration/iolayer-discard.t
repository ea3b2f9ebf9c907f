#!/usr/bin/env bash
# A discard's size is a range, not bytes moved: fstrim beside an fsync loop on one ext4
# loop device (each round it frees 32 MiB and trims it: the loop device punches the file's
# holes) must not be named as the neighbour whose bytes the victim waits behind. Before, the
# trimmed ranges counted as fstrim's bytes: "loop2 bytes by submitter: fstrim (27 pids) 50%",
# and "neighbour fstrim" among the causes. Known answers: fstrim trimmed (its own -v count),
# the victim's calls were judged, fstrim is not among the causes, and its share of the disk's
# bytes is at most 5% (the block bitmaps it may read).
source "$(dirname "$0")/lib.sh"
require_root
require_cmd jq jq
require_cmd util-linux fstrim
plan 6

loop_ext4_setup 256
IL=$(tool iolayer)
trims() {
	local i
	for ((i = 0; i < 40; i++)); do
		dd if=/dev/zero of="$MNT/big" bs=1M count=32 status=none && sync &&
			rm -f "$MNT/big" && sync && fstrim -v "$MNT"
		[ -e "$TMPD/stop" ] && break
	done >"$TMPD/trim.out" 2>&1
}
"$WL/fsync_loop" -n 1000000 -s 4096 "$MNT/v" >/dev/null 2>&1 &
VICTIM=$!
at_exit "kill $VICTIM"
trims &
TRIMS=$!
at_exit "touch $TMPD/stop; kill $TRIMS"
sleep 0.5
check "iolayer -p (the fsync loop) -d 4 --json runs" sh -c "$IL -p $VICTIM -d 4 --json >$TMPD/o.json 2>$TMPD/o.err"
touch "$TMPD/stop"
kill "$VICTIM"
wait "$TRIMS"
trimmed=$(awk '/trimmed/ {n++} END {print n + 0}' "$TMPD/trim.out")
check "fstrim trimmed ($trimmed rounds)" test "$trimmed" -gt 0
j() { jq -r "$1" "$TMPD/o.json"; }
diag "verdict: $(j '.verdict.summary // .verdict.reason')"
j '.verdict.evidence[]?' | sed 's/^/#   /'
is "$(j '.verdict.victim.pid')" "$VICTIM" "the fsync loop's calls were judged"
check "the evidence has the disk's bytes by submitter" sh -c "jq -r '.verdict.evidence[]' $TMPD/o.json | grep -q ' bytes by submitter: '"
is "$(j '[.verdict.causes[] | .comm // ""] | map(select(test("fstrim"))) | length')" 0 \
	"fstrim is not among the causes"
# fstrim may read a few block bitmaps to find the free ranges (ext4_mb_load_buddy(), in its
# own context when they are not cached): data it moved, a sliver; its discards were half
fshare=$(j '.verdict.evidence[]' | grep ' bytes by submitter: ' | grep -oE 'fstrim( \([0-9]+ pids\))? [0-9]+%' | grep -oE '[0-9]+%$' | tr -d %)
check "fstrim's share of the disk's bytes is its data alone, 5% or less (${fshare:-0}%; its discards counted made it 50%)" \
	test "${fshare:-0}" -le 5
jq -c "[.processes[] | select(.comm == \"dd\") | .pid] | length" "$TMPD/o.json" | sed "s/^/# dd processes: /"
jq -c "[.verdict.causes[] | {comm, npids}]" "$TMPD/o.json" | sed "s/^/# /"
done_testing
