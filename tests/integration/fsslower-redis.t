#!/usr/bin/env bash
# fsslower on a real program: redis-server with appendonly on a loop ext4.
# appendfsync always -> one write + one fdatasync on the AOF per SADD (one client);
# appendfsync everysec -> about one fdatasync per second, from redis's bio_aof_fsync thread.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fsslower-lib.sh"
require_root
require_cmd redis-server redis-server
require_cmd redis-tools redis-benchmark redis-cli
plan 9

loop_ext4_setup
FS=$(tool fsslower)
dir=$MNT/redis
mkdir -p "$dir"
port=$((30000 + $$ % 20000))
redis-server --bind 127.0.0.1 --port "$port" --dir "$dir" --appendonly yes --appendfsync always \
	--save "" --daemonize no --logfile "$TMPD/redis.log" &
RPID=$!
at_exit "kill $RPID; wait $RPID"
for ((i = 0; i < 100; i++)); do
	[ "$(redis-cli -p "$port" ping 2>/dev/null)" = PONG ] && break
	sleep 0.1
done
[ "$(redis-cli -p "$port" ping 2>/dev/null)" = PONG ] || { echo "Bail out! redis-server did not start"; diag_file "$TMPD/redis.log"; exit 1; }
# T is the 6th field from the end: T BYTES OFF_KB LAT(ms) IF FILENAME
aof() { awk -v d="$dir/appendonlydir/" -v op="$2" '$0 ~ /^[0-9][0-9]:/ && $(NF-5) == op && index($NF, d) == 1 && $NF ~ /\.aof$/' "$1"; }

# 1. appendfsync always: 1000 SADDs of distinct members from one client
n=1000
check "fsslower -p REDIS starts" tool_start "$TMPD/a.out" "$TMPD/a.err" $FS -m 0 -p "$RPID"
redis-benchmark -p "$port" -t sadd -n "$n" -c 1 -r 1000000000 -q >/dev/null 2>&1
tool_stop
w=$(aof "$TMPD/a.out" W | wc -l)
f=$(aof "$TMPD/a.out" F | wc -l)
diag "appendfsync always: $n SADDs -> $w W and $f F rows on the AOF"
check "about one F per SADD ($f of $n; equal distinct members may be skipped)" \
	test "$f" -ge $((n - 10)) -a "$f" -le "$n"
is "$w" "$f" "every AOF write is followed by its fdatasync (W rows = F rows)"
is "$(aof "$TMPD/a.out" F | awk -v p="$RPID" '$3 != p' | wc -l)" 0 "every F row is redis-server's pid"
is "$(awk -v p="$RPID" '/^[0-9][0-9]:/ && $3 != p' "$TMPD/a.out" | wc -l)" 0 "no row from another process"

# 2. appendfsync everysec: the F rate falls to about one per second
redis-cli -p "$port" config set appendfsync everysec >/dev/null
redis-benchmark -p "$port" -t sadd -n 1000000000 -c 1 -r 1000000000 -q >/dev/null 2>&1 &
bench=$!
at_exit "kill $bench"
sleep 0.5
$FS -m 0 -p "$RPID" -d 4 -L >"$TMPD/e.out" 2>"$TMPD/e.err"
is "$?" 0 "-d 4 ends by itself with status 0"
kill "$bench"; wait "$bench" 2>/dev/null
fe=$(awk -v d="$dir/appendonlydir/" '$0 ~ /^[0-9][0-9]:/ && $5 == "F" && index($NF, d) == 1' "$TMPD/e.out" | wc -l)
we=$(awk -v d="$dir/appendonlydir/" '$0 ~ /^[0-9][0-9]:/ && $5 == "W" && index($NF, d) == 1' "$TMPD/e.out" | wc -l)
diag "appendfsync everysec, 4 s: $we W and $fe F rows on the AOF"
check "about one F per second ($fe in 4 s)" test "$fe" -ge 2 -a "$fe" -le 6
check "writes go on at full rate ($we W rows, > 50 per F)" test "$we" -gt $((50 * fe))
is "$(awk '$0 ~ /^[0-9][0-9]:/ && $5 == "F" {print $2}' "$TMPD/e.out" | sort -u)" bio_aof_fsync \
	"-L: the fsyncs come from redis's bio_aof_fsync thread"
done_testing
