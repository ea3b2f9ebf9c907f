#!/usr/bin/env bash
# A disk with known latency (the slow-disk fixture, slowdisk-lib.sh): a loop device over a FUSE
# file whose every request takes D = 2000 us plus its length at 16 MiB/s, one at a time.
# Known answers:
#  1. N direct 4 KiB writes -> N write requests (biolatency, /proc/diskstats, the daemon),
#     none in a histogram slot below D's, each at the device for D + 4 KiB/16 MiB/s or more
#     (biosnoop); a loop device over /dev/shm, same writes, is the control: it has some.
#  2. two writers of 8 x 128 KiB each share the one device: together they take 16 requests'
#     time, not 8.
#  3. ext4 on it: each of 10 write+fsync pairs gives an fsync of D or more (fsslower) and a
#     cache flush at the device.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fsslower-lib.sh"
source "$(dirname "$0")/slowdisk-lib.sh"
require_root
require_cmd jq jq
slowdisk_available || skip_all "no FUSE in this kernel (or $WL/slowdisk not built)"
plan 18

D=2000 BW=$((16 << 20)) N=50
svc() { echo $((D + $1 * 1000000 / BW)); } # the device's time for one request of $1 bytes, us
slowdisk_start $D $BW
make_loop fast 16M
SLOT=1
while ((SLOT * 2 <= D)); do SLOT=$((SLOT * 2)); done # low end of D's log2 slot (1024)
BL=$(tool biolatency)
BS=$(tool biosnoop)

diskstat_writes() { awk -v n="$1" '$3 == n {print $8}' /proc/diskstats; }
now_us() { echo $(($(date +%s%N) / 1000)); }
# writes of DISK in biolatency -D -F --json output: total, and how many below slot SLOT
writes_of() { jq -s --arg d "$2" '[.[] | .histograms? // [] | .[] | select(.disk == $d and .op == "write") | .total] | add // 0' "$1"; }
below_slot() {
	jq -s --arg d "$2" --argjson s "$SLOT" \
		'[.[] | .histograms? // [] | .[] | select(.disk == $d and .op == "write") | .buckets[] | select(.low < $s) | .count] | add // 0' "$1"
}

# ---- 1. N direct 4 KiB writes -----------------------------------------------------------
check "biolatency starts (-D -F --json)" tool_start "$TMPD/b.json" "$TMPD/b.err" $BL -D -F --json
BL_PID=$TOOL_PID
check "biosnoop starts (-d $SLOWDISK_NAME --json)" tool_start "$TMPD/s.json" "$TMPD/s.err" $BS -d "$SLOWDISK_NAME" --json
ds0=$(diskstat_writes "$SLOWDISK_NAME") sd0=$(slowdisk_stat writes)
t0=$(now_us)
dd if=/dev/zero of="$SLOWDISK_DEV" oflag=direct bs=4k count=$N status=none
rc1=$?
t1=$(now_us)
dd if=/dev/zero of="$LOOPDEV" oflag=direct bs=4k count=$N status=none
rc2=$?
ds1=$(diskstat_writes "$SLOWDISK_NAME") sd1=$(slowdisk_stat writes)
tool_stop
TOOL_PID=$BL_PID tool_stop
is "$rc1 $rc2" "0 0" "dd wrote $N blocks to $SLOWDISK_NAME and $N to $LOOPNAME"
is "$(writes_of "$TMPD/b.json" "$SLOWDISK_NAME")" $N "biolatency: $N writes in, $N write requests out"
is "$((ds1 - ds0))" $N "/proc/diskstats: $N writes completed on $SLOWDISK_NAME"
is "$((sd1 - sd0))" $N "the daemon served $N writes: one FUSE request per block request"
is "$(below_slot "$TMPD/b.json" "$SLOWDISK_NAME")" 0 "no write request of $SLOWDISK_NAME below the $SLOT-usecs slot (D = $D us)"
check "the control ($LOOPNAME over /dev/shm) has writes below that slot" \
	test "$(below_slot "$TMPD/b.json" "$LOOPNAME")" -gt 0
W='select(.disk == $d and (.rwbs | startswith("W")))'
rows=$(jq -s --arg d "$SLOWDISK_NAME" "[.[] | $W] | length" "$TMPD/s.json")
min=$(jq -s --arg d "$SLOWDISK_NAME" "[.[] | $W | .device_us] | min // 0 | floor" "$TMPD/s.json")
is "$rows" $N "biosnoop: $N write rows on $SLOWDISK_NAME"
diag "answer: biolatency=$(writes_of "$TMPD/b.json" "$SLOWDISK_NAME") diskstats=$((ds1 - ds0)) daemon=$((sd1 - sd0)) biosnoop=$rows"
check "biosnoop: every write at the device for $(svc 4096) us or more (shortest: $min us)" \
	test "$min" -ge "$(svc 4096)"
check "dd took $N x $(svc 4096) us or more ($((t1 - t0)) us)" test $((t1 - t0)) -ge $((N * $(svc 4096)))
diag "measured: $N writes of 4 KiB: $((t1 - t0)) us in all, $(((t1 - t0) / N)) us each; shortest at the device $min us;" \
	"daemon min $(slowdisk_stat min_us) us max $(slowdisk_stat max_us) us"
diag "slowdisk histogram: $(jq -c -s --arg d "$SLOWDISK_NAME" '[.[] | .histograms? // [] | .[] | select(.disk == $d) | .buckets[]]' "$TMPD/b.json")"

# ---- 2. two writers share the device ----------------------------------------------------
sd0=$(slowdisk_stat writes)
t0=$(now_us)
dd if=/dev/zero of="$SLOWDISK_DEV" oflag=direct bs=128k count=8 status=none &
dd if=/dev/zero of="$SLOWDISK_DEV" oflag=direct bs=128k count=8 seek=256 status=none
rc1=$?
wait $!
rc2=$?
t1=$(now_us)
is "$rc1 $rc2 $(($(slowdisk_stat writes) - sd0))" "0 0 16" "two writers: 16 requests of 128 KiB"
check "together they took 16 x $(svc 131072) us or more ($((t1 - t0)) us), not 8" \
	test $((t1 - t0)) -ge $((16 * $(svc 131072)))
diag "measured: two writers, 16 x 128 KiB: $((t1 - t0)) us (one request alone: $(svc 131072) us)"

# ---- 3. fsync on ext4 -------------------------------------------------------------------
t0=$(now_us)
slowdisk_mkfs_ext4
diag "mkfs.ext4 + mount on the slow disk: $(($(now_us) - t0)) us"
F=$SLOWDISK_MNT/data
FS=$(tool fsslower)
f0=$(slowdisk_stat fsyncs)
wl_start "$TMPD/wl.out" -n 10 "$F"
check "fsslower starts (--json -m 0 -p PID)" tool_start "$TMPD/f.json" "$TMPD/f.err" $FS --json -m 0 -p "$WL_PID"
wl_go
tool_stop
is "$WL_RC $TOOL_RC" "0 0" "10 write+fsync pairs ran, fsslower exits 0"
fs=$(jq -r --arg f "$F" 'select(.file == $f and .op == "F") | .usecs' "$TMPD/f.json" | sort -n)
is "$(grep -c . <<<"$fs")" 10 "fsslower: 10 fsync rows"
diag "answer: fsync_rows=$(grep -c . <<<"$fs")"
check "every fsync took $D us or more (shortest: $(head -1 <<<"$fs") us)" test "$(head -1 <<<"${fs:-0}" | cut -d. -f1)" -ge $D
check "each fsync flushed the device's cache ($(($(slowdisk_stat fsyncs) - f0)) flushes)" \
	test $(($(slowdisk_stat fsyncs) - f0)) -ge 10
diag "measured: fsyncs on ext4: $(tr '\n' ' ' <<<"$fs")us"

done_testing
