#!/usr/bin/env bash
# A call that does not return within the window is in none of the numbers (a call counts when
# it returns): a dd whose one 16 MiB O_DIRECT write a throttle holds (2 writes a second, 32
# requests) for the whole window gave "none -- made no file operations", a silent zero.
# Known answers: the dd is in D state in write(2) when iolayer starts and when it ends; the
# text says it is still in flight, blocked all the window; JSON in_flight lists it with
# whole_window true; a process with no call blocked gets no such line. A call begun inside
# the window and still blocked at its end (a write a throttle holds) was said only when
# the whole window had passed: its time in flight is said, from the start the fs layer
# recorded, between the time from the workload's start to the end and the window, and where
# it went so far: held by the throttle, not on CPU.
source "$(dirname "$0")/lib.sh"
require_root
require_cmd jq jq
plan 11

loop_ext4_setup 128
IL=$(tool iolayer)
MM=$(lsblk -dno MAJ:MIN "$LOOPDEV" | tr -d ' ')
# 2 writes a second (cgroup2's io.max takes no fewer), 64 MiB in requests of 1.25 MiB or less
# (a loop device's max_sectors_kb): 25 s and more, longer than these runs even in a slow guest
throttled_cgroup iolayer-inflight-$$ "$MM" 2
CG1=$CG
(echo "$BASHPID" >"$CG/cgroup.procs" && exec dd if=/dev/zero of="$MNT/f" bs=64M count=1 oflag=direct status=none) &
DD=$!
at_exit "kill $DD"
# unthrottle cgroup $1 (its dd then ends, and the cgroup can go)
unthrottle() {
	echo "$MM 0" >"$1/blkio.throttle.write_iops_device" 2>/dev/null || echo "$MM wiops=max" >"$1/io.max"
}
at_exit "unthrottle $CG1"
# until it sleeps in the write (a short D state in exec or open comes first on a loaded machine);
# the state as seen then: a second read may catch it awake between two of its bios ("D running")
st=
for ((i = 0; i < 100; i++)); do
	st="$(awk '/^State:/ {print $2}' "/proc/$DD/status" 2>/dev/null) $(cut -d' ' -f1 "/proc/$DD/syscall" 2>/dev/null)"
	[ "$st" = "D 1" ] && break
	sleep 0.05
done
is "$st" "D 1" "the dd is blocked in write(2) (D state, syscall 1)"
check "iolayer -p DD -d 2 runs" sh -c "$IL -p $DD -d 2 >$TMPD/t.out 2>$TMPD/t.err"
grep -E '^(verdict|still)' "$TMPD/t.out" | sed 's/^/# /'
is "$(grep -cE "^still in flight: dd \(pid $DD\) write, blocked \(D state\) all [0-9.]+ s without returning" "$TMPD/t.out")" 1 \
	"text: the write is still in flight, blocked all the window"
check "iolayer -p DD -d 1 --json runs" sh -c "$IL -p $DD -d 1 --json >$TMPD/j.out 2>$TMPD/j.err"
is "$(jq -c "[.in_flight[] | select(.pid == $DD) | [.call, .whole_window, .blocked_usecs]]" "$TMPD/j.out")" \
	'[["write",true,null]]' "JSON: in_flight lists the write, whole_window true, begun before tracing (no time)"
sleep 0.2 &
is "$($IL -p "$!" -d 1 2>/dev/null | grep -c '^still in flight')" 0 "a process with no blocked call: no such line"

# A 16 MiB O_DIRECT write in a cgroup that writes 2 requests a second, begun inside a 2 s window
# (the dd waits for a file first): blocked at its end. (Direct: a buffered write's fsync
# was seen to return at once when another process's sync had the flusher write its pages.)
throttled_cgroup iolayer-inflight2-$$ "$MM" 2
(echo "$BASHPID" >"$CG/cgroup.procs" && while [ ! -e "$TMPD/go2" ]; do sleep 0.02; done &&
	exec dd if=/dev/zero of="$MNT/g" bs=16M count=1 oflag=direct status=none) &
FL=$!
at_exit "kill $FL"
at_exit "unthrottle $CG"
tool_start "$TMPD/f.out" "$TMPD/f.err" $IL -p "$FL" -d 2
t0=$(date +%s%N)
touch "$TMPD/go2"
wait "$TOOL_PID"
TOOL_RC=$?
t1=$(date +%s%N)
grep -E '^(verdict|still)' "$TMPD/f.out" | sed 's/^/# /'
secs=$(sed -n "s/^still in flight: dd (pid $FL) write, blocked (D state) for \([0-9.]*\) s when tracing ended.*/\1/p" "$TMPD/f.out")
is "$TOOL_RC" 0 "iolayer -p DD -d 2: exit 0"
awk -v s="$secs" -v go="$(( (t1 - t0) / 1000000 ))" 'BEGIN { exit !(s != "" && s * 1000 <= go + 100 && s >= 1.0) }'
ok $? "text: the write begun inside the window is still in flight, blocked ${secs:-?} s (at most the $(( (t1 - t0) / 1000000 )) ms since it could start, at least 1 s)"
is "$(grep -c '^still in flight' "$TMPD/f.out")" 1 "one such line"
check "text: where its time went so far: I/O wait, its bios held by the throttle" \
	grep -qE "^still in flight: dd .*; so far: on CPU [0-9]+%, run queue [0-9]+%, I/O wait (9[0-9]|100)%, other waits [0-9]+%\):" "$TMPD/f.out"
# "but" when it was blocked for half the window or more (a slow guest's start-up can take
# more than the rest of it)
pct=$(sed -n 's/^still in flight: dd .* (\([0-9]*\)% of the window.*/\1/p' "$TMPD/f.out")
is "$(grep -c '^verdict: none -- .*; but a call is still in flight, blocked for most of the window (below)$' "$TMPD/f.out")" \
	"$([ "${pct:-0}" -ge 50 ] && echo 1 || echo 0)" \
	"the verdict on the calls that returned says that one did not, when it was blocked half the window (${pct:-?}%)"
unthrottle "$CG"
unthrottle "$CG1"
wait "$FL" "$DD"
done_testing
