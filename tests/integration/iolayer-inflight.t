#!/usr/bin/env bash
# A call that does not return within the window is in none of the numbers (a call counts when
# it returns): a dd whose one 4 MiB O_DIRECT write a throttle holds (1 write a second, 8+
# requests) for the whole window gave "none -- made no file operations", a silent zero.
# Known answers: the dd is in D state in write(2) when iolayer starts and when it ends; the
# text says it is still in flight, blocked all the window; JSON in_flight lists it with
# whole_window true; a process with no call blocked gets no such line.
source "$(dirname "$0")/lib.sh"
require_root
require_cmd jq jq
plan 6

loop_ext4_setup 128
IL=$(tool iolayer)
throttled_cgroup iolayer-inflight-$$ "$(lsblk -dno MAJ:MIN "$LOOPDEV" | tr -d ' ')" 1
(echo "$BASHPID" >"$CG/cgroup.procs" && exec dd if=/dev/zero of="$MNT/f" bs=4M count=1 oflag=direct status=none) &
DD=$!
at_exit "kill $DD"
# until it sleeps in the write (a short D state in exec or open comes first on a loaded machine)
for ((i = 0; i < 100; i++)); do
	grep -q '^State:.*D' "/proc/$DD/status" 2>/dev/null &&
		[ "$(cut -d' ' -f1 "/proc/$DD/syscall" 2>/dev/null)" = 1 ] && break
	sleep 0.05
done
is "$(awk '/^State:/ {print $2}' "/proc/$DD/status") $(cut -d' ' -f1 "/proc/$DD/syscall")" "D 1" \
	"the dd is blocked in write(2) (D state, syscall 1)"
check "iolayer -p DD -d 2 runs" sh -c "$IL -p $DD -d 2 >$TMPD/t.out 2>$TMPD/t.err"
grep -E '^(verdict|still)' "$TMPD/t.out" | sed 's/^/# /'
is "$(grep -c "^still in flight: dd (pid $DD) write, blocked (D state) all 2.0 s without returning" "$TMPD/t.out")" 1 \
	"text: the write is still in flight, blocked all the window"
check "iolayer -p DD -d 1 --json runs" sh -c "$IL -p $DD -d 1 --json >$TMPD/j.out 2>$TMPD/j.err"
is "$(jq -c "[.in_flight[] | select(.pid == $DD) | [.call, .whole_window]]" "$TMPD/j.out")" '[["write",true]]' \
	"JSON: in_flight lists the write, whole_window true"
sleep 0.2 &
is "$($IL -p "$!" -d 1 2>/dev/null | grep -c '^still in flight')" 0 "a process with no blocked call: no such line"
done_testing
