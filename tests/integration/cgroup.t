#!/usr/bin/env bash
# --cgroup and containers by name, on cgroup paths made by hand the way Docker (systemd
# driver) and Kubernetes (cgroupfs driver) make them, in each v1 hierarchy a runtime uses
# (blkio, memory, cpu; the cgroup2 root where no blkio hierarchy is mounted). Three
# fork_tree workloads at once, each a process whose children and grandchildren, forked after
# tracing began, make a known number of fsyncs: A in the Docker container (5 processes x 7),
# C in the pod's container (3 x 4), B outside (5 x 5). --cgroup must count exactly A's (or C's)
# calls, children included, and nothing of B; the names come out in text, JSON and
# Prometheus; bad --cgroup values are one line, exit 1.
source "$(dirname "$0")/lib.sh"
require_root
require_cmd jq jq
require_cmd curl curl
plan 41

loop_ext4_setup 64
FS=$(tool fsslower)
IL=$(tool iolayer)
WB=$(tool writeback-ret)
IW=$(tool iowaitstack)
BS=$(tool biosnoop)

V1=$(awk '$3 == "cgroup" && $4 ~ /(^|,)blkio(,|$)/ { print $2; exit }' /proc/mounts)
if [ -n "$V1" ]; then
	ROOT=$V1
	HIER=$(for c in blkio memory cpu; do
		awk -v c="$c" '$3 == "cgroup" && $4 ~ "(^|,)" c "(,|$)" { print $2; exit }' /proc/mounts; done | tr '\n' ' ')
else
	ROOT=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	HIER=$ROOT
fi
[ -n "$ROOT" ] || { echo "Bail out! no cgroup hierarchy"; exit 1; }

# ids of this run: a Docker container, a pod and its container; a second container dir whose
# id shares A's first 6 digits, so that prefix is not unique
hex() { head -c 64 /dev/urandom | sha256sum | cut -c1-"$1"; }
ID=$(hex 64)
IDX=${ID:0:6}$(hex 58)
ID2=$(hex 64)
ID3=$(hex 64)
U=$(hex 32)
UID_=${U:0:8}-${U:8:4}-${U:12:4}-${U:16:4}-${U:20:12}
DOCKER=/system.slice/docker-$ID.scope
POD=/kubepods/burstable/pod$UID_/$ID2
OTHER=/docker/$IDX
DOCKER3=/system.slice/docker-$ID3.scope

# mkcg PATH: PATH in every hierarchy; what did not exist is removed at exit, deepest first,
# once its processes are gone. On cgroup2, the io controller is enabled in every cgroup above
# the leaf (bios are charged to the nearest cgroup that has it)
mkcg() {
	local h d p
	for h in $HIER; do
		p=
		for d in $(tr / ' ' <<<"$1"); do
			[ -z "$V1" ] && { grep -qw io "$h$p/cgroup.subtree_control" || echo +io >"$h$p/cgroup.subtree_control"; }
			p=$p/$d
			[ -d "$h$p" ] && continue
			mkdir "$h$p" || { echo "Bail out! mkdir $h$p"; exit 1; }
			at_exit "for i in \$(seq 50); do rmdir $h$p 2>/dev/null && break; sleep 0.1; done"
		done
	done
}
mkcg "$DOCKER"
mkcg "$POD"
mkcg "$OTHER"
mkcg "$DOCKER3"
# enter PATH CMD...: CMD run in cgroup PATH of every hierarchy
enter() { local p=$1; shift; sh -c 'p=$1; shift; for h in '"$HIER"'; do echo $$ >"$h$p/cgroup.procs" || exit 9; done; exec "$@"' sh "$p" "$@"; }

mkdir -p "$MNT/a" "$MNT/b" "$MNT/c"
wl() { # wl NAME PATH|- CHILDREN CALLS: a fork_tree held at its start, in cgroup PATH
	local out=$TMPD/$1.out
	if [ "$2" = - ]; then "$WL/fork_tree" -g "$TMPD/go" -c "$3" -n "$4" "$MNT/$1" >"$out" 2>&1 &
	else enter "$2" "$WL/fork_tree" -g "$TMPD/go" -c "$3" -n "$4" "$MNT/$1" >"$out" 2>&1 & fi
	at_exit "kill -9 $!"
	eval "BG_$1=$!"
	wait_for 5 grep -qs "^pid " "$out" || { cat "$out"; echo "Bail out! workload $1 did not start"; exit 1; }
}

rm -f "$TMPD/go"
wl a "$DOCKER" 2 7
wl b - 2 5
wl c "$POD" 1 4
# direct writes of one block each, from a shell's child (dd): D in a second container, E outside
ddw() { # ddw NAME PATH|- COUNT
	local cmd="while [ ! -e $TMPD/go ]; do sleep 0.02; done; dd if=/dev/zero of=$MNT/$1 bs=4k count=$3 oflag=direct status=none"
	if [ "$2" = - ]; then sh -c "$cmd" & else enter "$2" sh -c "$cmd" & fi
	at_exit "kill -9 $!"
	eval "BG_$1=$!"
}
ddw d "$DOCKER3" 20
ddw e - 10
check "workload A is in the Docker container's cgroup" grep -qx "$(awk '/^pid /{print $2}' "$TMPD/a.out")" "$ROOT$DOCKER/cgroup.procs"

# the tracers, all at once over the same run
check "fsslower --cgroup ID-PREFIX starts" tool_start "$TMPD/fa.json" "$TMPD/fa.err" $FS --json -m 0 --cgroup "${ID:0:12}"
FA=$TOOL_PID
check "fsslower --cgroup an ancestor of the pod (relative path) starts" \
	tool_start "$TMPD/fc.json" "$TMPD/fc.err" $FS --json -m 0 --cgroup "kubepods/burstable"
FC=$TOOL_PID
check "iolayer --json --cgroup the full cgroupfs path starts" \
	tool_start "$TMPD/ia.json" "$TMPD/ia.err" $IL --json --top 0 -d 30 --cgroup "$ROOT$DOCKER"
IA=$TOOL_PID
check "iolayer --cgroup the pod's container (text) starts" \
	tool_start "$TMPD/ic.txt" "$TMPD/ic.err" $IL --top 0 -d 30 --cgroup "$POD"
IC=$TOOL_PID
PORT=$(free_port)
check "iolayer --serve --cgroup starts" \
	tool_start "$TMPD/is.out" "$TMPD/is.err" $IL --serve "127.0.0.1:$PORT" --cgroup "$ID2"
IS=$TOOL_PID
check "biosnoop -C an ancestor of the container starts" \
	tool_start "$TMPD/bs.json" "$TMPD/bs.err" $BS --json -d "$LOOPNAME" -C /system.slice
BSP=$TOOL_PID
check "writeback-ret --cgroup starts" tool_start "$TMPD/wb.json" "$TMPD/wb.err" $WB --json --cgroup "$ID"
WBP=$TOOL_PID
check "iowaitstack --cgroup starts" tool_start "$TMPD/iw.json" "$TMPD/iw.err" $IW --json --cgroup "$ID"
IWP=$TOOL_PID

touch "$TMPD/go"
wait "$BG_a"; RA=$?
wait "$BG_b"; RB=$?
wait "$BG_c"; RC=$?
wait "$BG_d"; RD=$?
wait "$BG_e"; RE=$?
is "$RA/$RB/$RC/$RD/$RE" 0/0/0/0/0 "the five workloads made all their calls"
PA=$(awk '/^pids /{$1 = ""; print}' "$TMPD/a.out" | tr ' ' '\n' | grep . | sort -n | tr '\n' ' ')
PC=$(awk '/^pids /{$1 = ""; print}' "$TMPD/c.out" | tr ' ' '\n' | grep . | sort -n | tr '\n' ' ')
diag "A: $(grep fsyncs "$TMPD/a.out"), pids $PA; C: $(grep fsyncs "$TMPD/c.out"), pids $PC; B: $(grep fsyncs "$TMPD/b.out")"
METRICS=$(curl -sf "http://127.0.0.1:$PORT/metrics")
for p in $FA $FC $WBP $IWP $IA $IC $IS $BSP; do kill -INT "$p" 2>/dev/null; done
for p in $FA $FC $WBP $IWP $IA $IC $IS $BSP; do wait "$p"; done

# fsslower: exactly the container's fsyncs and processes
fsyncs() { jq -s '[.[] | select(.summary) | .summary.fsync.count] | add' "$1"; }
pids() { jq -r 'select(.pid) | .pid' "$1" | sort -nu | tr '\n' ' '; }
is "$(fsyncs "$TMPD/fa.json")" 35 "--cgroup ${ID:0:12}: 35 fsyncs in (5 processes x 7), 35 counted"
is "$(pids "$TMPD/fa.json")" "$PA" "--cgroup ${ID:0:12}: rows of A's 5 processes, children and grandchildren, none other"
is "$(fsyncs "$TMPD/fc.json")" 12 "--cgroup kubepods/burstable: the pod's container below it, 12 fsyncs (3 x 4)"
is "$(pids "$TMPD/fc.json")" "$PC" "--cgroup kubepods/burstable: rows of C's 3 processes only"
check "fsslower says what it traces: the cgroup and its short name" \
	grep -qF "Only cgroup $DOCKER (docker:${ID:0:12}) and those below it: 1 process now" "$TMPD/fa.err"

# writeback-ret: one ext4_writepages per process of A (its first fsync writes its byte)
is "$(jq -s '[.[] | select(.summary) | .summary[].count] | add' "$TMPD/wb.json")" 5 \
	"writeback-ret --cgroup: 5 writepages calls, one per process of A"
is "$(pids "$TMPD/wb.json")" "$PA" "writeback-ret --cgroup: A's processes only"
is "$(jq -r '.stacks[]?.threads[].pid' "$TMPD/iw.json" | sort -nu | tr '\n' ' ')" "$PA" \
	"iowaitstack --cgroup: the I/O waits of A's 5 processes only"

# biosnoop: the container's direct writes, by the cgroup its bios are charged to
bsw() { jq -r --arg f "$MNT/$1" 'select(.file == $f and (.rwbs | startswith("W"))) | "\(.bytes) \(.cgroup) \(.container_id)"' "$TMPD/bs.json" | sort | uniq -c | awk '{$1 = $1; print}'; }
is "$(bsw d)" "20 4096 $DOCKER3 $ID3" "biosnoop -C /system.slice: D's 20 direct writes below it, with its container_id"
is "$(bsw e)" "" "biosnoop -C /system.slice: none of E's outside"

# iolayer: the processes whose calls it traced, and names; it lists no other process (a
# kernel thread that wrote to the disk aside: the culprits it weighs are in the verdict)
procs() { jq -r '.processes[] | select(.ops.fsync.count > 0) | .pid' "$1" | sort -n | tr '\n' ' '; }
is "$(procs "$TMPD/ia.json")" "$PA" "iolayer --json --cgroup: A's 5 processes have traced calls"
is "$(jq '[.processes[].ops.fsync.count] | add' "$TMPD/ia.json")" 35 "iolayer --cgroup: their 35 fsyncs, no other"
is "$(jq -r --arg cg "$DOCKER" '[.processes[] | select((.kthread | not) and .cgroup != $cg and (.cgroup | startswith($cg + "/") | not))] | length' "$TMPD/ia.json")" 0 \
	"iolayer --cgroup: no process of another cgroup in its table"
is "$(jq -r '[.processes[] | select(.ops.fsync.count > 0) | "\(.container_id) \(.runtime) \(.cgroup)"] | unique | join(",")' "$TMPD/ia.json")" \
	"$ID docker $DOCKER" "iolayer --json: each carries container_id, runtime docker and the cgroup path"
is "$(jq -r .traced_cgroup "$TMPD/ia.json")" "$DOCKER" "iolayer --json: traced_cgroup, the full path given made relative"
check "iolayer text says it traced the pod's container and those below it" \
	grep -qF "s traced: the processes of cgroup pod:${UID_:0:8}/${ID2:0:12} and of those below it" "$TMPD/ic.txt"
# text: PID COMM CGROUP READ_KB/s WRITE_KB/s FSYNC/s ...
toprows() { awk '/^top processes:/ {t = 1; next} t && /^$/ {t = 0} t && $1 ~ /^[0-9]+$/ && $6 > 0' "$1"; }
is "$(toprows "$TMPD/ic.txt" | awk '{print $3}' | sort -u)" "pod:${UID_:0:8}/${ID2:0:12}" \
	"iolayer text: the pod's processes as pod:UID/ID"
is "$(toprows "$TMPD/ic.txt" | awk '{print $1}' | sort -n | tr '\n' ' ')" "$PC" \
	"iolayer text --cgroup POD: C's 3 processes make fsyncs, no other"
lines=$(grep -c "^iolayer_process_fs_ops_total{.*,container_id=\"$ID2\",pod_uid=\"$UID_\",unit=\"\",op=\"fsync\"} 4\$" <<<"$METRICS")
is "$lines" 3 "/metrics: C's 3 processes, 4 fsyncs each, labelled container_id and pod_uid"
is "$(grep '^iolayer_process_fs_ops_total{pid="[0-9]*".*op="fsync"}' <<<"$METRICS" | grep -vc ' 0$')" 3 \
	"/metrics --cgroup ID2: no other process made an fsync"

# bad values: one line, exit 1
bad "-p with --cgroup" "cgroup and -p cannot be combined" $FS -p $$ --cgroup "$DOCKER"
bad "--tid with --cgroup" "cgroup and --tid cannot be combined" $FS --tid $$ --cgroup "$DOCKER"
bad "no such cgroup" "no cgroup '/no/such/cgroup' in $ROOT" $IL --cgroup /no/such/cgroup
bad "no such container" "no cgroup, container or unit 'abcdef0123' in $ROOT" $IW --cgroup abcdef0123
bad "a prefix two containers share" "'${ID:0:6}' is not unique: 2 cgroups" $WB --cgroup "${ID:0:6}"
bad "'..' in the path" "without '.' or '..'" $FS --cgroup "$DOCKER/../.."
if [ -n "$V1" ] && [ -d "$(awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ { print $2; exit }' /proc/mounts)$DOCKER" ]; then
	bad "a path in another hierarchy" "is not in the io controller's cgroup hierarchy" \
		$FS --cgroup "$(awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ { print $2; exit }' /proc/mounts)$DOCKER"
else
	bad "a path outside any hierarchy" "is not in the io controller's cgroup hierarchy" $FS --cgroup /tmp
fi
check "fsslower --help documents --cgroup" grep -q -- "--cgroup=CGROUP" <($FS --help)

# the cgroup goes (a container stopped): the tool ends as with a -p process that exited, with
# its summary, exit 0
GONE=/iolayer-test-gone-$$
mkcg "$GONE"
check "fsslower --cgroup of a cgroup about to be removed starts" \
	tool_start "$TMPD/gone.txt" "$TMPD/gone.err" $FS -m 0 --cgroup "$GONE"
for h in $HIER; do rmdir "$h$GONE"; done
for ((i = 0; i < 30; i++)); do kill -0 "$TOOL_PID" 2>/dev/null || break; sleep 0.1; done
alive=$(kill -0 "$TOOL_PID" 2>/dev/null && echo alive || echo ended)
tool_stop
is "$alive $TOOL_RC" "ended 0" "the cgroup removed: fsslower ends by itself within 3 s, exit 0"
check "... saying the cgroup was removed" grep -q "cgroup $ROOT$GONE was removed" "$TMPD/gone.err"
done_testing
