#!/usr/bin/env bash
# biosnoop: one row per request, with the submitter, disk, file and times. Known answer: 100
# direct 4 KiB writes from one process (dd) to one file on ext4 over a loop device give 100
# rows for that file, each with dd's pid and comm, whose bytes sum to what dd wrote; none of
# the file's rows belong to anyone else (dd's other rows: ext4 reading its bitmaps). Then the filters (-p, -d, -m), text output, bad input.
source "$(dirname "$0")/lib.sh"
require_root
require_cmd jq jq
plan 24

N=100
loop_ext4_setup 64
F=$MNT/data
BS=$(tool biosnoop)

# 1. JSON, no filter: the file's rows are dd's 100 writes
check "biosnoop starts (--json)" tool_start "$TMPD/a.json" "$TMPD/a.err" $BS --json -v
dd if=/dev/zero of="$F" bs=4k count=$N oflag=direct status=none &
DD=$!
wait $DD
is "$?" 0 "dd wrote $N blocks with O_DIRECT"
sleep 0.2
tool_stop
is "$TOOL_RC" 0 "exit status 0 after Ctrl-C"
q() { jq -c -s --arg f "$F" --argjson p "$DD" "$1" "$TMPD/a.json"; }
rows=$(q '[.[] | select(.file == $f)] | length')
mine=$(q '[.[] | select(.file == $f and .pid == $p and .comm == "dd")] | length')
bytes=$(q '[.[] | select(.file == $f) | .bytes] | add // 0')
# dd's other writes: the filesystem's metadata (the block device's own pages), or no file (its
# reads may name a file: its own program, read in when the page cache has let it go)
other=$(q '[.[] | select(.pid == $p and .file != $f and (.rwbs | startswith("W"))) | select(.file // "" | test("^(/dev/.*)?$") | not)] | length')
diag "answer: biosnoop: rows_for_file=$rows with_dd_pid_and_comm=$mine bytes=$bytes"
is "$rows" "$N" "$N writes in, $N rows for $F"
is "$mine" "$N" "each with dd's pid ($DD) and comm"
is "$bytes" "$((N * 4096))" "their bytes sum to what dd wrote ($((N * 4096)))"
is "$other" 0 "dd's other writes name no other file"
[ "$other" = 0 ] || q '.[] | select(.pid == $p and .file != $f)' | head -5 | diag_file /dev/stdin
is "$(q '[.[] | select(.file == $f) | .disk] | unique')" "[\"$LOOPNAME\"]" "the rows are on $LOOPNAME"
is "$(q '[.[] | select(.file == $f) | .rwbs | startswith("W")] | all')" true "the rows are writes (RWBS W...)"
is "$(q '[.[] | select(.file == $f) | .device_us != null and .queue_us != null] | all')" true \
	"every row has its queue and device times"
is "$(jq -s '[.[] | select(.lost) | .lost.ringbuf_full] | add' "$TMPD/a.json")" 0 "no row lost"
[ "$rows" = "$N" ] || { diag_file "$TMPD/a.err"; head -5 "$TMPD/a.json" | diag_file /dev/stdin; }

# 2. -p PID (a writer started first, waiting), text output
wl_launch "$TMPD/wl.out" sh -c "echo pid \$\$; while [ ! -e $TMPD/go ]; do sleep 0.05; done;
	exec dd if=/dev/zero of=$F bs=4k count=50 oflag=direct conv=notrunc status=none"
check "biosnoop starts (-p $WL_PID, text)" tool_start "$TMPD/p.out" "$TMPD/p.err" $BS -p "$WL_PID"
dd if=/dev/zero of="$MNT/other" bs=4k count=20 oflag=direct status=none # another process
wl_go
sleep 0.2
tool_stop
is "$(head -1 "$TMPD/p.out" | awk '{ print $1, $2, $3, $4 }')" "TIME(s) COMM PID DISK" "text header"
is "$(awk -v p="$WL_PID" 'NR > 1 && $3 == p && $2 == "dd"' "$TMPD/p.out" | grep -c " $F$")" 50 \
	"-p $WL_PID: its 50 writes, with the file's path"
is "$(awk 'NR > 1' "$TMPD/p.out" | grep -vc " $F$")" 0 "-p: no other process's rows"

# 3. -d of another disk: nothing of ours; -m 1000: nothing that fast
check "biosnoop starts (-d $LOOPNAME -m 1000 --json)" tool_start "$TMPD/m.json" "$TMPD/m.err" $BS -d "$LOOPNAME" -m 1000 --json
dd if=/dev/zero of="$F" bs=4k count=20 oflag=direct conv=notrunc status=none
tool_stop
is "$(jq -s '[.[] | select(.file)] | length' "$TMPD/m.json")" 0 "-m 1000: no I/O of 1 s or more"

# 4. Buffered rewrites inside a large folio (PostgreSQL's WAL pattern): 4 MiB written and
# synced, then $N 8 KiB rewrites at 4 KiB past a folio boundary, each fdatasync'ed. Where ext4
# caches the file in large folios (6.16+), each sync writes only the dirty blocks, so the
# request's first page is a tail page of the folio: its file is the folio's.
F2=$MNT/wal
require_cmd python3 python3
check "biosnoop starts (--json, rewrites)" tool_start "$TMPD/w.json" "$TMPD/w.err" $BS -d "$LOOPNAME" --json
python3 - "$F2" "$N" >"$TMPD/w.pid" <<'PY'
import os, sys
print(os.getpid(), flush=True)
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.pwrite(fd, b"y" * (4 << 20), 0)
os.fsync(fd)
for i in range(1, int(sys.argv[2]) + 1):
    os.pwrite(fd, b"x" * 8192, i * 8192 + 4096)
    os.fdatasync(fd)
PY
sleep 0.2
tool_stop
WP=$(cat "$TMPD/w.pid")
wq() { jq -s --arg f "$F2" --argjson p "$WP" "$1" "$TMPD/w.json"; }
wrows=$(wq '[.[] | select(.pid == $p and (.rwbs | startswith("W")) and .bytes > 0)] | length')
named=$(wq '[.[] | select(.pid == $p and (.rwbs | startswith("W")) and .bytes > 0 and .file == $f)] | length')
diag "rewrites: write rows $wrows, named $named"
# answers compared across attach methods: only what does not depend on how requests merge
diag "answer: rewrites: at_least_N=$([ "$wrows" -ge "$N" ] && echo yes || echo no) all_named=$([ "$named" = "$wrows" ] && echo yes || echo no)"
ok "$([ "$wrows" -ge "$N" ] && echo 0 || echo 1)" "$N synced rewrites: at least $N write rows of the writer ($wrows)"
is "$named" "$wrows" "every one names $F2"
[ "$named" = "$wrows" ] || wq '.[] | select(.pid == $p and .file != $f)' | head -3 | diag_file /dev/stdin

# 5. bad input: one line, exit 1
bad "unknown disk: one line, exit 1" "no block device named 'nosuchdisk'" $BS -d nosuchdisk
bad "unknown cgroup: one line, exit 1" "no cgroup 'no/such/cgroup'" $BS -C no/such/cgroup
bad "--ringbuf 0: one line, exit 1" "must be a whole number from 1 to 1024, got '0'" $BS --ringbuf 0
is "$(bpf_progs_named blk_bio_ blk_submit_)" "" "no biosnoop BPF program left after exit"

done_testing
