#!/usr/bin/env bash
# Linux AIO, as fio does it: N 4 KiB direct writes through libaio (iodepth 8), an fsync after
# every write (fio issues one per write it has completed: a few less than N when writes
# overlap; its JSON says how many). The fsyncs are exactly as many F rows as fio reports
# syncs; the writes cannot be timed per request at the syscall layer, so fsslower says so in
# one line per process, with the number of requests io_submit took: N, within 1 %. fio runs
# as threads of one process (--thread), started by a shell that prints its pid and waits for
# the go file before it becomes fio (exec).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fsslower-lib.sh"
require_root
require_cmd fio fio
plan 12

loop_ext4_setup
FS=$(tool fsslower)
F=$MNT/fio.dat
N=400

wl_launch "$TMPD/wl.out" bash -c 'echo "pid $$"; while [ ! -e "$1" ]; do sleep 0.01; done
	exec fio --name=aio --filename="$2" --ioengine=libaio --direct=1 --rw=write --bs=4k \
		--size=$(($3 * 4))k --iodepth=8 --fsync=1 --thread --output-format=json --output="$4"' \
	_ "$TMPD/go" "$F" "$N" "$TMPD/fio.json"
check "fsslower -v (text) starts" tool_start "$TMPD/t.out" "$TMPD/t.err" $FS -v -m 0 -p "$WL_PID"
PT=$TOOL_PID
check "fsslower --json starts" tool_start "$TMPD/j.out" "$TMPD/j.err" $FS --json -m 0 -p "$WL_PID"
PJ=$TOOL_PID
check "iolayer --json starts" tool_start "$TMPD/i.out" "$TMPD/i.err" $(tool iolayer) --json -p "$WL_PID" -d 600
PI=$TOOL_PID
wl_go
rcs=
for p in $PT $PJ $PI; do TOOL_PID=$p; tool_stop; rcs+="$TOOL_RC "; done
is "$WL_RC $rcs" "0 0 0 0 " "fio and the three tracers exit 0"
SYNCS=$(jq '.jobs[0].sync.total_ios' "$TMPD/fio.json")
is "$(jq '.jobs[0].write.total_ios' "$TMPD/fio.json")" "$N" "fio wrote $N times (its JSON)"
is "$(jq -r 'select(.op == "F") | .file' "$TMPD/j.out" | grep -cxF -- "$F")" "$SYNCS" \
	"fio's $SYNCS fsyncs: $SYNCS F rows on $F"
diag "answer: F rows $(jq -r 'select(.op == "F") | .file' "$TMPD/j.out" | grep -cxF -- "$F") (fio: $SYNCS syncs, $N writes)"

# within TARGET 1 %: 100 * |GOT - TARGET| <= TARGET
within1() { [ -n "$1" ] && [ $((100 * ($1 > $2 ? $1 - $2 : $2 - $1))) -le "$2" ]; }
if grep -qE 'attaching with (tp_btf|tracepoint)' "$TMPD/t.err"; then
	line=$(grep "^pid $WL_PID submitted" "$TMPD/t.out")
	got=$(sed -nE 's/^pid [0-9]+ submitted ([0-9,]+) requests through Linux AIO: not timed per call here.*/\1/p' <<<"$line" | tr -d ,)
	check "text: one AIO line for pid $WL_PID ('$line')" test "$(grep -c 'through Linux AIO' "$TMPD/t.out")" = 1
	check "text: its request count $got is $N within 1 %" within1 "$got" "$N"
	jgot=$(jq -r --argjson p "$WL_PID" 'select(.aio) | .aio[] | select(.pid == $p) | .requests' "$TMPD/j.out")
	check "JSON: aio[].requests $jgot is $N within 1 %" within1 "$jgot" "$N"
	is "$(jq -r --argjson p "$WL_PID" 'select(.aio) | .aio[] | select(.pid == $p) | (.io_submit_calls > 0 and .io_getevents_calls > 0)' "$TMPD/j.out")" \
		true "JSON: io_submit and io_getevents calls counted"
	is "$(jq -r --arg f "$F" 'select(.op == "W" and .file == $f) | .interface' "$TMPD/j.out" | sort -u | tr '\n' ' ')" "" \
		"no W row for the AIO writes (the syscall layer cannot time them)"
	igot=$(jq -r --argjson p "$WL_PID" '.aio[] | select(.pid == $p) | .requests' "$TMPD/i.out")
	check "iolayer: aio[].requests $igot is $N within 1 % (its notice: never a silent zero)" within1 "$igot" "$N"
	diag "answer: AIO requests text $got json $jgot iolayer $igot (N=$N)"
else
	for i in 1 2 3 4 5 6; do skip "AIO is counted where the syscall tracepoints are used (the file operations time its writes)"; done
fi

done_testing
