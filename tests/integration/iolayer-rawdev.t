#!/usr/bin/env bash
# iolayer -p of a process that writes a block device directly, past the filesystems traced
# (fio on /dev/nvme0n1, a database on a raw partition), after a few bytes to a file on ext4:
# its disk is the device it sends its bytes to, not its one traced file's. Known answers:
# N 4 KiB O_DIRECT writes by io_loop to a raw loop device: the verdict's disk is that device,
# the device count N (as /proc/diskstats' writes completed), the sentence "sends ... on DEV".
# Without -p, 4,096 such writes beside a trickle of appends to a file on ext4 (the calls the
# time split sees, a trifle of the window): the window's disk is still the raw device, with its
# 4,096 requests (it moved to the trickle's disk, whose process made the most call time), and
# the JSON verdict has its line (summary) with no cause named.
source "$(dirname "$0")/lib.sh"
require_root
require_cmd jq jq
plan 12

loop_ext4_setup 64
EXT4=$LOOPNAME
make_loop rawdev 64M
RAW=$LOOPDEV
N=512
IL=$(tool iolayer)
diskstat_w() { awk -v d="$1" '$3 == d { print $8 }' /proc/diskstats; }

# one process: the shell writes its line to a file on ext4, then becomes io_loop
wl_launch "$TMPD/wl.out" sh -c "echo pid \$\$; while [ ! -e $TMPD/go ]; do sleep 0.05; done;
	echo started >$MNT/log; exec $WL/io_loop -m direct -s 4096 -n $N $RAW"
check "iolayer starts (-p $WL_PID --json)" tool_start "$TMPD/o.json" "$TMPD/o.err" $IL -p "$WL_PID" -d 600 --json
w0=$(diskstat_w "$LOOPNAME")
wl_go
is "$WL_RC" 0 "io_loop wrote $N x 4 KiB to $RAW with O_DIRECT"
sleep 0.2
w1=$(diskstat_w "$LOOPNAME")
tool_stop
is "$TOOL_RC" 0 "exit status 0 after Ctrl-C"

j() { jq -r "$1" "$TMPD/o.json"; }
diag "verdict: $(j .verdict.layer) -- $(j .verdict.who // .verdict.reason); disk $(j .verdict.disk)"
diag "answer: iolayer-rawdev: disk=$([ "$(j .verdict.disk)" = "$LOOPNAME" ] && echo raw || echo other) own=$(j .own_io.requests // .verdict.own_io.requests)"
is "$((w1 - w0))" "$N" "/proc/diskstats: $N writes completed on $LOOPNAME"
is "$(j .verdict.disk)" "$LOOPNAME" "the verdict's disk is the raw device written ($LOOPNAME), not its file's ($EXT4)"
is "$(j .layers.device.count)" "$N" "the device row counts the $N requests"
check "the process's file on ext4 was seen ($MNT/log)" grep -q "\"$MNT/log\"" "$TMPD/o.json"
who=$(j .verdict.who)
check "the verdict's sentence gives the bytes it sends to $LOOPNAME, not its file ($who)" \
	test "${who%" on $LOOPNAME"}" != "$who" -a "${who#*"$MNT/log"}" = "$who"

# ---- without -p: a burst of raw writes beside a trickle of file calls -------------------------
sh -c "while :; do echo x >>$MNT/trickle; sleep 0.05; done" &
TRICKLE=$!
at_exit "kill $TRICKLE"
sleep 0.3
check "iolayer starts (--json, every process)" tool_start "$TMPD/a.json" "$TMPD/a.err" $IL -d 600 --json
N2=4096 # the burst: the process with the most I/O time of the window, beside a busy machine's
w0=$(diskstat_w "$LOOPNAME")
"$WL/io_loop" -m direct -s 4096 -n $N2 "$RAW" >/dev/null
sleep 0.3
w1=$(diskstat_w "$LOOPNAME")
tool_stop
kill "$TRICKLE"; wait "$TRICKLE" 2>/dev/null
a() { jq -r "$1" "$TMPD/a.json"; }
diag "verdict: $(a .verdict.layer) -- $(a .verdict.who // .verdict.reason); disk $(a .verdict.disk)"
is "$((w1 - w0))" "$N2" "/proc/diskstats: $N2 writes completed on $LOOPNAME"
check "no -p: the window's disk is the raw device the burst went to ($(a .verdict.disk))" \
	test "$(a .verdict.disk)" = "$LOOPNAME" -a "$(a .layers.device.count)" = "$N2"
check "the JSON verdict has its line, the summary, with no cause named too ($(a .verdict.summary))" \
	test "$(a .verdict.summary)" != null -a -n "$(a .verdict.summary)"

done_testing
