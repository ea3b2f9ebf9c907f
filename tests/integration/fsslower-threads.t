#!/usr/bin/env bash
# fsslower: -p TGID covers every thread (-L shows their TIDs); --tid keeps one.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fsslower-lib.sh"
require_root
plan 8

loop_ext4_setup
FS=$(tool fsslower)

# 1. 4 threads x 20 write+fsync, each on its own file
wl_start "$TMPD/wl.out" -n 20 -t 4 "$MNT/f"
check "fsslower -p TGID -L starts" tool_start "$TMPD/a.out" "$TMPD/a.err" $FS -m 0 -p "$WL_PID" -L
wl_go
tool_stop
tids=$(awk '/^tid /{print $2}' "$TMPD/wl.out" | sort -n | tr '\n' ' ')
is "$(awk 'NR > 1 && $5 == "F" {print $4}' "$TMPD/a.out" | sort -n | uniq | tr '\n' ' ')" "$tids" \
	"-L shows the 4 thread ids of the workload"
is "$(awk 'NR > 1 && $5 == "F" {print $4}' "$TMPD/a.out" | sort | uniq -c | awk '{print $1}' | sort -u)" 20 \
	"20 F rows from each thread"
is "$(awk -v p="$WL_PID" 'NR > 1 && /^[0-9][0-9]:/ && $3 != p' "$TMPD/a.out" | wc -l)" 0 "every row has PID = TGID"
is "$(awk 'NR > 1 && $5 == "F" {print $4, $NF}' "$TMPD/a.out" | sort -u | wc -l)" 4 \
	"each thread's fsyncs are on one file (4 thread/file pairs)"

# 2. --tid: one thread only
wl_start "$TMPD/wl2.out" -n 20 -t 4 "$MNT/g"
one=$(awk '/^tid /{print $2; exit}' "$TMPD/wl2.out")
check "fsslower --tid starts" tool_start "$TMPD/b.out" "$TMPD/b.err" $FS -m 0 --tid "$one" -L
wl_go
tool_stop
is "$(awk 'NR > 1 && /^[0-9][0-9]:/ {print $4}' "$TMPD/b.out" | sort -u)" "$one" "--tid $one: only that thread"
is "$(awk 'NR > 1 && $5 == "F"' "$TMPD/b.out" | wc -l)" 20 "--tid: its 20 F rows"
done_testing
