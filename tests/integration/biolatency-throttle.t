#!/usr/bin/env bash
# The block layer before the queue (issue 11): a cgroup whose writes to a loop device are
# throttled to 20 IOPS (cgroup v1 blkio.throttle.write_iops_device, or v2 io.max wiops), and
# in it 60 direct 4 KiB writes to a file on ext4 there (overwrites of a written file: no
# allocation, commit=60 keeps the journal out). The throttle holds the bios before
# block_bio_queue, so the 60 writes take about 3 s while the device takes microseconds.
# Known answers: 60 I/Os and 60 bios of that cgroup on the disk (biolatency --breakdown -C);
# their time before Q sums to >= 80 % of dd's wall time, their device time (D2C) to < 5 %;
# iolayer's verdict is the block layer, names the throttle, the loop device and the cgroup.
source "$(dirname "$0")/lib.sh"
require_root
require_cmd jq jq

# The cgroup hierarchy that throttles block I/O: v1 blkio when mounted, else v2 with io.
V1=$(awk '$3 == "cgroup" && $4 ~ /(^|,)blkio(,|$)/ { print $2; exit }' /proc/mounts)
V2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if [ -n "$V1" ] && [ -e "$V1/blkio.throttle.write_iops_device" ]; then
	CGROOT=$V1
elif [ -n "$V2" ] && grep -qw io "$V2/cgroup.controllers" 2>/dev/null; then
	CGROOT=$V2
	grep -qw io "$V2/cgroup.subtree_control" || echo +io >"$V2/cgroup.subtree_control" 2>/dev/null ||
		skip_all "cannot enable the io controller in $V2"
else
	skip_all "no blk-throttle: neither a v1 blkio hierarchy with throttling nor a v2 io controller"
fi

N=60
loop_ext4_setup 64
mount -o remount,commit=60 "$MNT" || { echo "Bail out! remount failed"; exit 1; }
F=$MNT/data
dd if=/dev/zero of="$F" bs=4k count=$N status=none && sync
DEV=$(cat "/sys/class/block/$LOOPNAME/dev")

CGNAME=iolayer-test-throttle-$$
CG=$CGROOT/$CGNAME
mkdir "$CG" || { echo "Bail out! mkdir $CG failed"; exit 1; }
# rmdir once the writer is gone (its kill, registered later, runs first)
at_exit "for i in \$(seq 50); do rmdir $CG 2>/dev/null && break; sleep 0.1; done"
if [ "$CGROOT" = "$V1" ]; then
	echo "$DEV 20" >"$CG/blkio.throttle.write_iops_device"
else
	echo "$DEV wiops=20" >"$CG/io.max"
fi || { echo "Bail out! cannot set the throttle"; exit 1; }
plan 12

BL=$(tool biolatency)
IL=$(tool iolayer)
# The writer: joins the cgroup, says its pid, waits for go, becomes dd (same pid). Each tool
# gets a run of its own (tracing is slow in emulated guests: one tracer at a time).
writer() {
	wl_launch "$TMPD/dd.out" sh -c "echo \$\$ >$CG/cgroup.procs && echo pid \$\$ &&
		while [ ! -e $TMPD/go ]; do sleep 0.05; done &&
		exec dd if=/dev/zero of=$F bs=4k count=$N oflag=direct conv=notrunc"
}

writer
check "biolatency starts (--breakdown -C --json -d $LOOPNAME)" tool_start "$TMPD/b.json" "$TMPD/b.err" \
	$BL --breakdown -C --json -d "$LOOPNAME" -v
wl_go
is "$WL_RC" 0 "dd wrote $N blocks in the throttled cgroup"
tool_stop
is "$TOOL_RC" 0 "biolatency: exit status 0 after Ctrl-C"

# dd's own wall time: "... copied, 2.90263 s, 84.7 kB/s"
wall_ns=$(awk '/copied/ { for (i = 1; i < NF; i++) if ($i == "copied,") printf "%.0f", $(i + 1) * 1e9 }' "$TMPD/dd.out")
diag "dd: $(grep copied "$TMPD/dd.out")"
bd() { jq -s --arg d "$LOOPNAME" --arg c "/$CGNAME" "[.[] | .breakdown? // [] | .[] |
	select(.disk == \$d and .cgroup == \$c) | $1] | add // 0" "$TMPD/b.json"; }
ios=$(bd .ios) bios=$(bd .bios) before=$(bd .phases.before_q.total_ns) d2c=$(bd .phases.d2c.total_ns)
diag "cgroup /$CGNAME on $LOOPNAME: $ios I/Os, $bios bios, before Q $before ns, D2C $d2c ns, dd wall $wall_ns ns"
is "$ios" "$N" "$N writes in, $N I/Os of the cgroup on $LOOPNAME"
is "$bios" "$N" "$N bios"
before_ok=no; [ -n "$wall_ns" ] && [ "$((before * 100))" -ge "$((wall_ns * 80))" ] && before_ok=yes
dev_ok=no; [ -n "$wall_ns" ] && [ "$((d2c * 100))" -lt "$((wall_ns * 5))" ] && dev_ok=yes
# Direct I/O's submission point: submit_bio (fentry/kprobe) or iomap:iomap_dio_rw_begin.
noq=
if grep -qE 'bio submission .*attaching with (tp_btf|raw_tp)' "$TMPD/b.err" &&
	! [ -e /sys/kernel/tracing/events/iomap/iomap_dio_rw_begin ] &&
	! [ -e /sys/kernel/debug/tracing/events/iomap/iomap_dio_rw_begin ]; then
	noq="no submission point for direct I/O here (no fentry/kprobe on submit_bio with this method, no iomap:iomap_dio_rw_begin)"
fi
if [ -n "$noq" ]; then skip "time before Q: $noq"; else
	is "$before_ok" yes "time held before Q >= 80 % of dd's wall time"; fi
is "$dev_ok" yes "device time (D2C) < 5 % of dd's wall time"
[ "$before_ok" = yes ] || { diag_file "$TMPD/b.err"; diag_file "$TMPD/b.json"; }

writer
check "iolayer starts (-p $WL_PID)" tool_start "$TMPD/i.json" "$TMPD/i.err" $IL -p "$WL_PID" -d 600 --json
wl_go
tool_stop
is "$TOOL_RC" 0 "iolayer: exit status 0 after Ctrl-C"
layer=$(jq -r '.verdict.layer' "$TMPD/i.json")
reason=$(jq -r '.verdict.reason' "$TMPD/i.json")
diag "iolayer verdict: $layer -- $reason"
names=no
case "$reason" in *throttle*"$LOOPNAME"*|*"$LOOPNAME"*throttle*) case "$reason" in *"/$CGNAME"*) names=yes ;; esac ;; esac
if [ -n "$noq" ]; then
	skip "verdict: $noq"
	skip "verdict names: $noq"
else
	is "$layer" "block layer" "iolayer's verdict: the block layer"
	is "$names" yes "the verdict names the throttle, $LOOPNAME and the cgroup /$CGNAME"
fi
# A method that cannot see before Q gives no known answer (vmtest compares them across methods).
if [ -n "$noq" ]; then
	diag "throttle (before Q not measured): ios=$ios bios=$bios device_lt_5pct=$dev_ok"
else
	diag "answer: throttle: ios=$ios bios=$bios before_q_ge_80pct=$before_ok device_lt_5pct=$dev_ok verdict=$layer names=$names"
fi
is "$(bpf_progs_named blk_bio_ blk_submit_)" "" "no bio-tracking BPF program left after exit"

done_testing
