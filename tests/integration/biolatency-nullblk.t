#!/usr/bin/env bash
# biolatency on a device whose latency is known in advance: null_blk completing every request
# after 5 ms (irqmode=2 = timer, completion_nsec=5000000). 200 direct 4 KiB writes and 200
# direct reads → exactly 200 + 200 requests, none faster than the 5 ms the device holds them
# (no request below the 4096 usecs slot) and the median of each in the 4096-8191 usecs slot.
# How far above 5 ms a request ends depends on the host (a TCG guest's timers slip when the
# host is busy), so the upper side is only held by the median.
# Needs the null_blk module (the vmtest guests have it; a kernel without it skips).
source "$(dirname "$0")/lib.sh"
require_root
modprobe -n null_blk 2>/dev/null || skip_all "no null_blk module in this kernel"
[ -e /sys/module/null_blk ] && skip_all "null_blk is already loaded (its parameters are not ours)"
plan 8

N=200
modprobe null_blk nr_devices=1 irqmode=2 completion_nsec=5000000 queue_mode=2 gb=1 ||
	{ echo "Bail out! modprobe null_blk failed"; exit 1; }
at_exit "rmmod null_blk"
udevadm settle 2>/dev/null || true
check "null_blk made /dev/nullb0" test -b /dev/nullb0
BL=$(tool biolatency)

# jq over biolatency --json -D -F lines: COUNT of disk nullb0 / OP, all intervals summed
total_of() { # FILE OP
	jq -s --arg o "$2" '[.[] | .histograms? // [] | .[] | select(.disk == "nullb0" and .op == $o) | .total] | add // 0' "$1"
}
slot_of() { # FILE OP LOW: requests in the bucket starting at LOW usecs
	jq -s --arg o "$2" --argjson l "$3" '[.[] | .histograms? // [] | .[] | select(.disk == "nullb0" and .op == $o)
		| .buckets[] | select(.low == $l) | .count] | add // 0' "$1"
}
below_of() { # FILE OP LOW: requests in buckets below LOW usecs
	jq -s --arg o "$2" --argjson l "$3" '[.[] | .histograms? // [] | .[] | select(.disk == "nullb0" and .op == $o)
		| .buckets[] | select(.low < $l) | .count] | add // 0' "$1"
}
p50_of() { # FILE OP: the low end of the bucket holding the median
	jq -s --arg o "$2" '[.[] | .histograms? // [] | .[] | select(.disk == "nullb0" and .op == $o)
		| .percentiles.p50.low] | first' "$1"
}

check "biolatency starts (-D -F --json -d nullb0)" tool_start "$TMPD/o" "$TMPD/e" $BL -D -F --json -d nullb0
dd if=/dev/zero of=/dev/nullb0 oflag=direct bs=4k count=$N status=none
dd if=/dev/nullb0 of=/dev/null iflag=direct bs=4k count=$N status=none
tool_stop
is "$TOOL_RC" 0 "exit status 0 after Ctrl-C"

w=$(total_of "$TMPD/o" write) r=$(total_of "$TMPD/o" read)
ws=$(slot_of "$TMPD/o" write 4096) rs=$(slot_of "$TMPD/o" read 4096)
diag "answer: writes=$w reads=$r"
diag "writes in 4096-8191 usecs: $ws of $w; reads: $rs of $r"
is "$w" "$N" "$N direct writes in, $N write requests out"
is "$r" "$N" "$N direct reads in, $N read requests out"
is "$(below_of "$TMPD/o" write 4096) $(below_of "$TMPD/o" read 4096)" "0 0" \
	"no write and no read below the 4096 usecs slot (null_blk holds each 5 ms)"
is "$(p50_of "$TMPD/o" write) $(p50_of "$TMPD/o" read)" "4096 4096" \
	"write and read p50 in the 4096-8191 usecs bucket"
is "$(jq -s '[.[] | select(.lost) | .lost.ringbuf_full] | add' "$TMPD/o")" 0 "no lost events reported"
[ "$w" = "$N" ] || diag_file "$TMPD/o"

done_testing
