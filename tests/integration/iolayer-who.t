#!/usr/bin/env bash
# iolayer's attribution (who) against known answers: the kernel's own counters (/proc/PID/io,
# /proc/diskstats), what the workloads did, and what Redis says of itself.
#  1. fsync loop on disk A under -p, heavier direct I/O on disk B at the same time: bytes
#     through syscalls = wchar, bytes to the disk = write_bytes, requests = diskstats;
#     the block rows and the verdict name A, never B.
#  2. two processes in two cgroups (one fsyncs, one reads with O_DIRECT), no -p: each shows
#     under its own cgroup path, after it has exited.
#  3. a Python logger through RotatingFileHandler, no -p: python3 and the log file (both names
#     after the rotation), bytes = N x (M + 1).
#  4. redis-server, appendfsync always, redis-benchmark SADD, no -p: redis-server and its AOF,
#     fsyncs = the members added, bytes = the growth of aof_current_size.
#  5. an inode number reused: a file written and fsynced, deleted, and a new file in another
#     directory that gets its inode number: two files[] rows, each with its own path, bytes
#     and fsyncs; the new file's sync_file_range calls are not fsyncs; a file six processes
#     wrote lists four and says there were more, and is the top file of all six; an opened
#     directory is no file, one synced is; a process that execs is named by its new program.
source "$(dirname "$0")/lib.sh"
require_root
require_cmd python3 python3
require_cmd redis-server redis-server
require_cmd redis-tools redis-benchmark redis-cli
plan 45

IL=$(tool iolayer)

# mkloop NAME SIZE_MB: a loop device over /dev/shm, ext4 made without lazy init (so
# ext4lazyinit writes nothing during the test), mounted on $TMPD/NAME. Sets NAME_DEV (loopN).
# Nothing but the test's workloads then uses the disk, so its request counts can be compared.
mkloop() {
	local img=/dev/shm/iolayer-who-$$-$1.img dev
	truncate -s "$2M" "$img"
	at_exit "rm -f $img"
	dev=$(losetup -f --show "$img") || { echo "Bail out! losetup failed"; exit 1; }
	at_exit "losetup_retry $dev"
	mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$dev" || { echo "Bail out! mkfs.ext4 failed"; exit 1; }
	mkdir -p "$TMPD/$1"
	# no_prefetch_block_bitmaps: else ext4lazyinit reads the block bitmaps seconds after mount;
	# commit=60: no periodic journal commit lands between iolayer's detach and the test's read
	# of /proc/diskstats (the requests are compared one for one)
	mount -o no_prefetch_block_bitmaps,commit=60 "$dev" "$TMPD/$1" 2>/dev/null ||
		mount -o commit=60 "$dev" "$TMPD/$1" ||
		{ echo "Bail out! mount failed"; exit 1; }
	at_exit "umount_retry $TMPD/$1"
	printf -v "${1}_DEV" %s "${dev#/dev/}"
}
mkloop a 256
mkloop b 128
# udev probes a device that mkfs wrote (blkid, a few reads, seconds later): let it finish so
# that nothing but the workloads uses the disks while the request counts are compared
command -v udevadm >/dev/null && udevadm settle -t 10
A=$TMPD/a B=$TMPD/b

# within GOT WANT PCT: |GOT - WANT| <= PCT % of WANT (WANT > 0)
within() { awk -v g="$1" -v w="$2" -v p="$3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(w > 0 && d * 100 <= w * p) }'; }
io() { awk -v k="$2:" '$1 == k { print $2 }' "$1"; }            # io FILE KEY: a /proc/PID/io field
reqs() { awk -v d="$1" '$3 == d { print $4 + $8 }' /proc/diskstats; } # reads + writes completed
wsect() { awk -v d="$1" '$3 == d { print $10 }' /proc/diskstats; }      # sectors written
inflight() { awk -v d="$1" '$3 == d { print $12 }' /proc/diskstats; }

# ---- 1. numbers against the kernel's accounting; two disks --------------------------------
N=300
sync -f "$A"; sync -f "$B"
(while :; do dd if=/dev/zero of="$B/big" bs=1M count=64 oflag=direct status=none || exit; done) &
DD=$!
at_exit "kill $DD"
rm -f "$TMPD/go" "$TMPD/end"
"$WL/fsync_loop" -g "$TMPD/go" -w "$TMPD/end" -n $N -s 4096 "$A/f1" >"$TMPD/wl1.out" 2>&1 &
WB=$!
at_exit "kill -9 $WB"
wait_for 5 grep -q '^tid ' "$TMPD/wl1.out" || { echo "Bail out! fsync_loop did not start"; exit 1; }
P1=$(awk '/^pid /{ print $2 }' "$TMPD/wl1.out")
check "iolayer -p starts on the fsync loop" tool_start "$TMPD/1.json" "$TMPD/1.err" $IL -p "$P1" -d 600 --json
wait_for 5 eval '[ "$(inflight "$a_DEV")" = 0 ]'
cp "/proc/$P1/io" "$TMPD/io0"
r0=$(reqs "$a_DEV") sa0=$(wsect "$a_DEV") sb0=$(wsect "$b_DEV")
touch "$TMPD/go"
check "the fsync loop finishes its $N write+fsync" wait_for 30 grep -qE '^Threads:[[:space:]]+1$' "/proc/$P1/status"
cp "/proc/$P1/io" "$TMPD/io1"
sa1=$(wsect "$a_DEV") sb1=$(wsect "$b_DEV")
tool_stop
r1=$(reqs "$a_DEV") # after the tool: what completed until it detached counts on both sides
touch "$TMPD/end"
wait "$WB"
is "$?" 0 "fsync_loop exit status 0"
kill "$DD"; wait "$DD" 2>/dev/null
is "$TOOL_RC" 0 "iolayer exit status 0"

j1() { jq -r "$1" "$TMPD/1.json"; }
proc1() { j1 ".processes[] | select(.pid == $P1) | $1"; }
wchar=$(($(io "$TMPD/io1" wchar) - $(io "$TMPD/io0" wchar)))
wbytes=$(($(io "$TMPD/io1" write_bytes) - $(io "$TMPD/io0" write_bytes)))
rbytes=$(($(io "$TMPD/io1" read_bytes) - $(io "$TMPD/io0" read_bytes)))
# answer lines: exact counts only, the same under every attach method (docs/vmtest.md)
diag "answer: fsync_loop wchar_delta=$wchar write_bytes=$(proc1 .write_bytes)"
diag "fsync loop: /proc write_bytes delta $wbytes read_bytes delta $rbytes, iolayer disk_write_bytes $(proc1 .disk_write_bytes) disk_bytes $(proc1 .disk_bytes)"
diag "$a_DEV: diskstats reads+writes delta $((r1 - r0)), iolayer requests $(jq -c .layers.device.requests "$TMPD/1.json")"
diag "sectors written: $a_DEV $((sa1 - sa0)), $b_DEV $((sb1 - sb0))"
is "$wchar" $((N * 4096)) "wchar grew by exactly the bytes the workload wrote ($N x 4096)"
check "write_bytes through syscalls = wchar delta within 1 % ($(proc1 .write_bytes) vs $wchar)" \
	within "$(proc1 .write_bytes)" "$wchar" 1
check "bytes written to disks = /proc write_bytes delta within 5 % ($(proc1 .disk_write_bytes) vs $wbytes)" \
	within "$(proc1 .disk_write_bytes)" "$wbytes" 5
check "bytes sent to disks = read_bytes + write_bytes deltas within 5 % ($(proc1 .disk_bytes) vs $((rbytes + wbytes)))" \
	within "$(proc1 .disk_bytes)" $((rbytes + wbytes)) 5
is "$(j1 .layers.disk)" "$a_DEV" "-p: the block rows are the fsync loop's disk $a_DEV"
is "$(j1 '.layers.device.requests.read + .layers.device.requests.write')" $((r1 - r0)) \
	"requests completed on $a_DEV = its /proc/diskstats reads + writes delta"
check "disk B ($b_DEV) was the busier one: more sectors written than on $a_DEV" test $((sb1 - sb0)) -gt $((sa1 - sa0))
is "$(j1 .verdict.disk)" "$a_DEV" "the verdict's disk is $a_DEV"
# (a process's or kernel thread's name is not the disk's: on 5.10 the loop driver's thread
# for disk B is "loop1", which may hold the CPU the victim waits for: "cpu [loop1]")
names_b=$(jq -c --arg d "$b_DEV" '.verdict | [paths(type == "string") as $p |
	select($p[-1] != "comm" and $p[-1] != "via") | {at: $p, v: getpath($p)} |
	select(.v == $d or (.v | test("on " + $d + "\\b")))]' "$TMPD/1.json")
is "$(jq length <<<"$names_b")" 0 "the verdict never names $b_DEV"
[ "$names_b" = "[]" ] || diag "names $b_DEV: $names_b"
is "$(j1 .verdict.process.pid)/$(j1 .verdict.process.comm)/$(j1 .verdict.file)" "$P1/fsync_loop/$A/f1" \
	"the verdict names the fsync loop (pid, comm) and its file"
is "$(j1 "[.processes[] | select(.pid != $P1 and (.kthread | not))] | length") $(j1 "[.files[] | select(.pids | index($P1) | not)] | length")" "0 0" \
	"-p: no other process (dd on $b_DEV) in the top processes, no file of others in the top files"

# ---- 2. two workloads in two cgroups --------------------------------------------------------
if [ -d /sys/fs/cgroup/blkio ]; then CG=/sys/fs/cgroup/blkio
elif [ -f /sys/fs/cgroup/cgroup.controllers ]; then CG=/sys/fs/cgroup
else CG=; fi
if [ -z "$CG" ]; then
	for i in 1 2 3 4 5 6; do skip "no blkio (v1) or cgroup2 hierarchy mounted"; done
else
	rmdir "$CG/iolayer-test-a" "$CG/iolayer-test-b" 2>/dev/null
	mkdir "$CG/iolayer-test-a" "$CG/iolayer-test-b" || { echo "Bail out! cannot make cgroups in $CG"; exit 1; }
	at_exit "rmdir $CG/iolayer-test-a $CG/iolayer-test-b"
	dd if=/dev/urandom of="$A/r" bs=1M count=8 status=none && sync -f "$A"
	rm -f "$TMPD/go2"
	# each joins its cgroup, then becomes the workload (exec: same pid, new comm); both exit
	# before iolayer stops, so their cgroups come from what the kernel recorded
	sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$CG/iolayer-test-a" \
		"$WL/fsync_loop" -g "$TMPD/go2" -n 100 "$A/c1" >"$TMPD/wl2.out" 2>&1 &
	PA=$!
	sh -c 'echo $$ > "$1/cgroup.procs" && read -r x <"$3"; while [ ! -e "$2" ]; do sleep 0.02; done && exec dd if="$3" of=/dev/null bs=64k iflag=direct status=none' \
		sh "$CG/iolayer-test-b" "$TMPD/go2" "$A/r" &
	PB=$!
	at_exit "kill -9 $PA $PB"
	check "iolayer (no -p) starts" tool_start "$TMPD/2.json" "$TMPD/2.err" $IL -d 600 --json --top 0
	touch "$TMPD/go2"
	wait "$PA"; ra=$?
	wait "$PB"; rb=$?
	is "$ra/$rb" 0/0 "both workloads ran"
	tool_stop
	is "$TOOL_RC" 0 "iolayer exit status 0"
	p2() { jq -r ".processes[] | select(.pid == $1) | \"\\(.comm) \\(.cgroup)\"" "$TMPD/2.json"; }
	diag "answer: cgroups $(p2 $PA | tr ' ' =) $(p2 $PB | tr ' ' =)"
	is "$(p2 $PA)" "fsync_loop /iolayer-test-a" "the fsync loop shows under /iolayer-test-a, named after its exec"
	is "$(p2 $PB)" "dd /iolayer-test-b" "the reader shows under /iolayer-test-b, named after its exec"
	check "the reader's 8 MiB of direct reads are charged to it" \
		test "$(jq -r ".processes[] | select(.pid == $PB) | .disk_bytes" "$TMPD/2.json")" -ge $((8 << 20))
fi

# ---- 3. a Python logger with a rotating log -------------------------------------------------
# 16 records of 2 MiB; maxBytes 20 MiB: the 10th record would pass it (10 x (2 MiB + 1)
# >= 20 MiB), so 9 records stay in app.log.1 and 7 go to the new app.log (one rotation).
# No formatter: each record is the message plus the handler's terminator, "\n".
NR=16 M=$((2 << 20)) MAXB=$((20 << 20))
mkdir -p "$A/logs"
cat >"$TMPD/logger.py" <<'EOF'
import logging, logging.handlers, sys
path, n, m, maxb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
h = logging.handlers.RotatingFileHandler(path, maxBytes=maxb, backupCount=2)
log = logging.getLogger("iolayer-test")
log.addHandler(h)
log.setLevel(logging.INFO)
log.propagate = False
rec = "x" * m
for i in range(n):
    log.info(rec)
h.close()
EOF
pycomm=$(python3 -c 'import sys; sys.stdout.write(open("/proc/self/comm").read().strip())')
check "iolayer (no -p) starts" tool_start "$TMPD/3.json" "$TMPD/3.err" $IL -d 600 --json --top 0
python3 "$TMPD/logger.py" "$A/logs/app.log" $NR $M $MAXB &
PY=$!
wait "$PY"
is "$?" 0 "the logger ran"
tool_stop
j3() { jq -r "$1" "$TMPD/3.json"; }
logbytes=$(j3 "[.files[] | select(.path == \"$A/logs/app.log\" or .path == \"$A/logs/app.log.1\") | .write_bytes] | add // 0")
diag "logger: $(stat -c '%n %s' "$A"/logs/* | tr '\n' ' ')"
diag "answer: logger $(j3 "[.files[] | select(.path | startswith(\"$A/logs/\")) | \"\\(.path | ltrimstr(\"$A/logs/\"))=\\(.write_bytes)\"] | sort | join(\" \")")"
is "$(j3 "[.files[] | select(.path | startswith(\"$A/logs/\")) | .path] | sort | join(\" \")")" \
	"$A/logs/app.log $A/logs/app.log.1" "files[] names both app.log and the rotated app.log.1"
check "bytes written to the log = $NR x ($M + 1) within 1 % ($logbytes)" within "$logbytes" $((NR * (M + 1))) 1
is "$(j3 "[.files[] | select(.path | startswith(\"$A/logs/\")) | \"\(.path | ltrimstr(\"$A/logs/\")):\(.renamed_from // \"-\")\"] | sort | join(\" \")")" \
	"app.log.1:app.log app.log:-" "the rotated file says it was app.log when written (renamed_from)"
# Without -p the verdict weighs every process on the machine. The logger's writes land in
# the page cache and take little time (tens of ms), so where another program, not this
# test's, spends a quarter of that or more in file operations and I/O wait meanwhile (other
# tests on a shared machine), the layer and the process named may rightly be its: then, and
# only then, these three skip, saying who.
busy="(([.ops[].total_ns] | add) + .iowait_ns)"
pyb=$(j3 "[.processes[] | select(.pid == $PY) | $busy] | add // 0")
read -r rb rpid rcomm < <(j3 "[.processes[] | select(.pid != $PY and (.kthread | not)) | {pid, comm, b: $busy}] |
	max_by(.b) // {b: 0} | \"\\(.b) \\(.pid) \\(.comm)\"")
diag "logger: python3 $pyb ns in file operations and I/O wait; the busiest other process: $rcomm (pid $rpid) $rb ns"
if [ "$((rb * 4))" -ge "$pyb" ]; then
	why="another process, $rcomm (pid $rpid), spent $rb ns in I/O meanwhile, the logger $pyb ns"
	skip "$why"; skip "$why"; skip "$why"
else
	vp=$(j3 .verdict.process.pid)
	is "$vp/$(j3 .verdict.process.comm)" "$PY/$pycomm" "the verdict names $pycomm and its pid"
	check "the verdict names the log file ($(j3 .verdict.file))" \
		test "$(j3 .verdict.file)" = "$A/logs/app.log" -o "$(j3 .verdict.file)" = "$A/logs/app.log.1"
	is "$(j3 .verdict.disk)" "$a_DEV" "the verdict's disk is the log's, $a_DEV"
fi

# ---- 4. Redis, appendfsync always -----------------------------------------------------------
for ((i = 0; i < 50; i++)); do # a free port on 127.0.0.1
	port=$((20000 + RANDOM % 30000))
	(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || break
done
mkdir -p "$A/redis"
redis-server --bind 127.0.0.1 --port "$port" --dir "$A/redis" --appendonly yes --appendfsync always \
	--save "" --daemonize no --logfile "$TMPD/redis.log" &
RPID=$!
at_exit "kill $RPID; wait $RPID"
rcli() { redis-cli -p "$port" "$@" 2>/dev/null | tr -d '\r'; }
aofsize() { rcli info persistence | awk -F: '$1 == "aof_current_size" { print $2 }'; }
wait_for 10 eval '[ "$(rcli ping)" = PONG ]' || { diag_file "$TMPD/redis.log"; echo "Bail out! redis-server did not start"; exit 1; }
NS=1000
s0=$(rcli scard myset) z0=$(aofsize)
check "iolayer (no -p) starts" tool_start "$TMPD/4.json" "$TMPD/4.err" $IL -d 600 --json --top 0
# one client, no pipelining, random members: each SADD that adds a member is one write and
# one fdatasync of the AOF (appendfsync always)
redis-benchmark -p "$port" -t sadd -n $NS -c 1 -P 1 -r 1000000000 -q >/dev/null 2>&1
tool_stop
s1=$(rcli scard myset) z1=$(aofsize)
j4() { jq -r "$1" "$TMPD/4.json"; }
aof=$(j4 .verdict.file)
aofrow() { j4 ".files[] | select(.path == \"$aof\") | $1"; }
# Redis 7.0's INFO persistence has no count of AOF fsyncs (aof_delayed_fsync counts only
# the postponed ones of everysec): the known answer is the members SADD added (SCARD
# growth, at most $NS; a repeated random member adds none and writes nothing), one
# fdatasync each; the AOF's bytes are INFO's aof_current_size growth.
diag "redis: $NS SADDs, $((s1 - s0)) members added, aof_current_size +$((z1 - z0)); iolayer: $aof"
diag "answer: redis members_added=$((s1 - s0)) aof_fsyncs=$(aofrow .fsyncs) aof_growth=$((z1 - z0)) aof_write_bytes=$(aofrow .write_bytes)"
is "$(j4 .verdict.process.pid)/$(j4 .verdict.process.comm)" "$RPID/redis-server" "the verdict names redis-server"
check "the verdict names its appendonly file ($aof)" \
	eval '[[ $aof =~ ^$A/redis/appendonlydir/[^/]+\.incr\.aof$ ]]'
is "$(aofrow .fsyncs)" $((s1 - s0)) "fsyncs of the AOF = members added (SCARD growth)"
is "$(aofrow .write_bytes)" $((z1 - z0)) "bytes written to the AOF = aof_current_size growth"
check "about one SADD in $NS adds a member ($((s1 - s0)))" test $((s1 - s0)) -ge $((NS - 10))

# 5. inode reuse (PostgreSQL deletes pg_internal.init, then a new WAL segment elsewhere may
# take its number): files are told apart by inode.i_generation too
NR=100
mkdir -p "$A/reuse/d1" "$A/reuse/d2"
check "iolayer (no -p) starts" tool_start "$TMPD/5.json" "$TMPD/5.err" $IL -d 600 --json --top 0
python3 - "$A/reuse" "$NR" >"$TMPD/reuse.out" <<'PY'
import ctypes, os, sys
base, n = sys.argv[1], int(sys.argv[2])
old, new = base + "/d1/old.init", base + "/d2/new.wal"
fd = os.open(old, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, b"a" * 4096)
os.fsync(fd)
os.close(fd)
ino = os.stat(old).st_ino
os.unlink(old)
fd = os.open(new, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
print(ino, os.fstat(fd).st_ino)
for i in range(n):
    os.write(fd, b"w" * 8192)
    os.fdatasync(fd)
libc = ctypes.CDLL(None, use_errno=True)
for i in range(7):  # (fd, offset, nbytes, SYNC_FILE_RANGE_WRITE)
    if libc.sync_file_range(fd, ctypes.c_int64(0), ctypes.c_int64(0), 2):
        raise OSError(ctypes.get_errno(), "sync_file_range")
os.close(fd)
os.listdir(base + "/d2")  # opens the directory
dfd = os.open(base + "/d1", os.O_RDONLY | os.O_DIRECTORY)  # syncs a directory 3 times
for i in range(3):
    os.fsync(dfd)
os.close(dfd)
PY
is "$?" 0 "the workload ran"
# six processes, one after the other, append 4 KiB and fsync 20 times each to one file: its
# PIDS holds 4 and says there are more; it is the top file of each, the last two included
many=()
for i in 1 2 3 4 5 6; do
	python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
for i in range(20):
    os.write(fd, b"m" * 4096)
    os.fsync(fd)' "$A/reuse/many" &
	many+=($!)
	wait $!
done
# a process that writes as bash, then execs dd and writes again: named dd, the exec seen
bash -c 'echo x >>"$1"; exec dd if=/dev/zero of="$2" bs=4k count=4 conv=fsync status=none' \
	sh "$A/reuse/sh.out" "$A/reuse/dd.out" &
EXECPID=$!
wait $EXECPID
tool_stop
read -r ino_old ino_new <"$TMPD/reuse.out"
j5() { jq -r ".files[] | select(.path == \"$1\") | \"\(.write_bytes) \(.fsyncs) \(.sync_ranges)\"" "$TMPD/5.json"; }
diag "answer: reuse inode_reused=$([ "$ino_old" = "$ino_new" ] && echo yes) new=$(j5 "$A/reuse/d2/new.wal") old=$(j5 "$A/reuse/d1/old.init (deleted)")"
is "$ino_new" "$ino_old" "the new file got the deleted file's inode number ($ino_old)"
is "$(j5 "$A/reuse/d2/new.wal")" "$((NR * 8192)) $NR 7" \
	"the new file: its own row, $NR x 8 KiB, $NR fsyncs, and its 7 sync_file_range calls apart"
is "$(j5 "$A/reuse/d1/old.init (deleted)")" "4096 1 0" "the deleted file: its 4 KiB and 1 fsync"
is "$(jq -r ".files[] | select(.path == \"$A/reuse/many\") | \"\(.pids | length) \(.more_pids) \(.write_bytes) \(.fsyncs)\"" "$TMPD/5.json")" \
	"4 true $((6 * 20 * 4096)) 120" "a file six processes wrote: 4 pids listed, more_pids, 6 x 20 x 4 KiB, 120 fsyncs"
tops=$(for p in "${many[@]}"; do jq -r ".processes[] | select(.pid == $p) | .top_file" "$TMPD/5.json"; done | sort | uniq -c | awk '{ print $1, $2 }')
diag "answer: many top_files=$(echo $tops | sed "s|$A/||")"
is "$tops" "6 $A/reuse/many" "the shared file is the top file of all six writers, the two its PIDS cannot hold included"
is "$(jq -r "[.files[] | select(.path == \"$A/reuse/d2\")] | length" "$TMPD/5.json")" 0 \
	"an opened directory is not among the files"
is "$(jq -r "[.files[] | select(.path == \"$A/reuse/d1\") | \"\(.fsyncs) \(.dir)\"] | join(\",\")" "$TMPD/5.json")" "3 true" \
	"a directory synced 3 times is: its 3 fsyncs (SQLite's, a rename's), marked dir"
is "$(jq -r ".processes[] | select(.pid == $EXECPID) | \"\(.comm) \(.top_file)\"" "$TMPD/5.json")" \
	"dd $A/reuse/dd.out" "a process that wrote as bash and then exec'd dd is named dd, dd's file its top file"

done_testing
