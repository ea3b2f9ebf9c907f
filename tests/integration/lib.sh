# shellcheck shell=bash
# TAP helpers and fixtures shared by the integration tests (sourced, not run).
# Environment:
#   IOLAYER_BUILD   build folder holding bin/ and workloads/ (default: ./build)
#   IOLAYER_ATTACH  when set (fentry|kprobe|tracepoint), passed to every tool as --attach=...
#                   so `make vmtest` runs the same suite under each attach method.
set -u

IOLAYER_BUILD=${IOLAYER_BUILD:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build}
BIN=$IOLAYER_BUILD/bin
WL=$IOLAYER_BUILD/workloads
TMPD=$(mktemp -d /tmp/iolayer-test.XXXXXX)
_tap_n=0
_tap_fail=0
_cleanups=()

plan() { echo "1..$1"; }
skip_all() { echo "1..0 # SKIP $*"; exit 0; }
ok() { # ok CONDITION_STATUS DESCRIPTION; a description with "# TODO ..." is a known gap:
	# reported, never failing the file (TAP's TODO directive, as prove reads it)
	_tap_n=$((_tap_n + 1))
	if [ "$1" = 0 ]; then echo "ok $_tap_n - $2"; return; fi
	echo "not ok $_tap_n - $2"
	case $2 in *"# TODO"*) ;; *) _tap_fail=1 ;; esac
}
check() { # check DESCRIPTION COMMAND... : ok when the command succeeds
	local d=$1; shift
	if "$@"; then ok 0 "$d"; else ok 1 "$d"; fi
}
is() { # is GOT EXPECTED DESCRIPTION
	if [ "$1" = "$2" ]; then ok 0 "$3"; else ok 1 "$3"; echo "#   got:      '$1'"; echo "#   expected: '$2'"; fi
}
skip() { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n # SKIP $*"; }
diag() { echo "# $*"; }
diag_file() { sed 's/^/#   /' "$1"; }

at_exit() { _cleanups+=("$*"); }
# umount that waits for processes killed a moment ago to let go of the mount (up to 10 s).
umount_retry() {
	local i
	for ((i = 0; i < 100; i++)); do umount "$1" 2>/dev/null && return 0; sleep 0.1; done
	umount -l "$1"
}
# losetup -d that waits for processes killed a moment ago to let go of the device (up to
# 10 s): detached at once while busy, it would stay attached after the test.
losetup_retry() {
	local i
	for ((i = 0; i < 100; i++)); do losetup -d "$1" 2>/dev/null && return 0; sleep 0.1; done
	losetup -d "$1"
}
_run_cleanups() {
	local _ci # not i: a cleanup may run a loop of its own over i
	for ((_ci = ${#_cleanups[@]} - 1; _ci >= 0; _ci--)); do
		eval "${_cleanups[$_ci]}" >/dev/null 2>&1 || true
	done
	rm -rf "$TMPD"
}
trap _run_cleanups EXIT

# Path of tool NAME plus the forced attach option, if any: "$(tool biolatency)" -D ...
tool() {
	local t="$BIN/$1"
	[ -x "$t" ] || { echo "not ok - $t is not built" >&2; exit 1; }
	if [ -n "${IOLAYER_ATTACH:-}" ]; then echo "$t --attach=$IOLAYER_ATTACH"; else echo "$t"; fi
}

# wait_for SECONDS COMMAND...: until the command succeeds, every 0.05 s (eval '...' to
# evaluate anew); 1 on timeout
wait_for() {
	local i n=$(($1 * 20)); shift
	for ((i = 0; i < n; i++)); do "$@" && return 0; sleep 0.05; done
	return 1
}

# A TCP port on 127.0.0.1 that nothing listens on now.
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# make_loop NAME SIZE: a loop device over a sparse file of SIZE in /dev/shm, both removed at
# exit; sets LOOPDEV (/dev/loopN) and LOOPNAME (loopN).
make_loop() {
	local img=/dev/shm/iolayer-$1-$$.img
	truncate -s "$2" "$img"; at_exit "rm -f $img"
	LOOPDEV=$(losetup -f --show "$img") || { echo "Bail out! losetup $img failed"; exit 1; }
	at_exit "losetup_retry $LOOPDEV"
	LOOPNAME=${LOOPDEV#/dev/}
}

# require_cmd PACKAGE COMMAND...: every command is installed, else a bail-out naming the
# Debian package. tools/install-deps (which make check runs) installs them all, so a missing
# one is a broken set-up, never a reason to skip.
require_cmd() {
	local pkg=$1 c
	shift
	for c in "$@"; do
		command -v "$c" >/dev/null ||
			{ echo "Bail out! $c is not installed: tools/install-deps installs it ($pkg)"; exit 1; }
	done
}
require_root() { [ "$(id -u)" = 0 ] || skip_all "needs root"; }

# A loop device over a file in /dev/shm, formatted ext4 and mounted.
# Sets LOOPDEV (/dev/loopN), LOOPNAME (loopN), MNT. Size in MiB (default 256).
loop_ext4_setup() {
	local size=${1:-256} img=/dev/shm/iolayer-test-$$-$RANDOM.img
	truncate -s "${size}M" "$img"
	at_exit "rm -f $img"
	LOOPDEV=$(losetup -f --show "$img") || { echo "Bail out! losetup failed"; exit 1; }
	at_exit "losetup_retry $LOOPDEV"
	LOOPNAME=${LOOPDEV#/dev/}
	mkfs.ext4 -q -F "$LOOPDEV" || { echo "Bail out! mkfs.ext4 failed"; exit 1; }
	MNT=$TMPD/mnt
	mkdir -p "$MNT"
	mount "$LOOPDEV" "$MNT" || { echo "Bail out! mount failed"; exit 1; }
	at_exit "umount_retry $MNT"
}

# throttled_cgroup NAME DEV IOPS: a cgroup NAME that holds its writes to disk DEV (MAJ:MIN) to
# IOPS a second: v1 blkio.throttle.write_iops_device where a blkio hierarchy is mounted, else
# v2 io.max; removed at exit (once its processes are gone). Sets CG (its directory).
throttled_cgroup() {
	local v1 v2
	v1=$(awk '$3 == "cgroup" && $4 ~ /(^|,)blkio(,|$)/ { print $2; exit }' /proc/mounts)
	v2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	if [ -n "$v1" ] && [ -e "$v1/blkio.throttle.write_iops_device" ]; then
		CG=$v1/$1; mkdir "$CG" && echo "$2 $3" >"$CG/blkio.throttle.write_iops_device"
	else
		grep -qw io "$v2/cgroup.subtree_control" || echo +io >"$v2/cgroup.subtree_control"
		CG=$v2/$1; mkdir "$CG" && echo "$2 wiops=$3" >"$CG/io.max"
	fi || { echo "Bail out! cannot set the throttle"; exit 1; }
	at_exit "for i in \$(seq 50); do rmdir $CG 2>/dev/null && break; sleep 0.1; done"
}

# The four dirty settings (vm.dirty_bytes, dirty_ratio, dirty_background_bytes,
# dirty_background_ratio), to set tiny limits for a test and put them back as they were:
# dirty_save (also restored on any exit), dirty_restore, dirty_now (the four, for a check).
dirty_now() { echo $(cat /proc/sys/vm/dirty_bytes /proc/sys/vm/dirty_ratio \
	/proc/sys/vm/dirty_background_bytes /proc/sys/vm/dirty_background_ratio); }
dirty_save() { DIRTY_SAVED=$(dirty_now); at_exit dirty_restore; }
# writing a *_ratio clears its *_bytes twin: write the one that was set
dirty_restore() {
	set -- $DIRTY_SAVED
	if [ "$1" != 0 ]; then echo "$1" >/proc/sys/vm/dirty_bytes; else echo "$2" >/proc/sys/vm/dirty_ratio; fi
	if [ "$3" != 0 ]; then echo "$3" >/proc/sys/vm/dirty_background_bytes
	else echo "$4" >/proc/sys/vm/dirty_background_ratio; fi
}

# Start a tool in the background: tool_start NAME OUT ERR CMD...
# Waits until the tool says it is tracing (the "Hit Ctrl-C" line on stderr) or exits.
# Sets TOOL_PID. Returns 1 when the tool never got ready (its stderr is printed as diag).
tool_start() {
	local out=$1 err=$2 i; shift 2
	"$@" >"$out" 2>"$err" &
	TOOL_PID=$!
	at_exit "kill -9 $TOOL_PID"
	for ((i = 0; i < 600; i++)); do
		grep -q 'Hit Ctrl-C' "$err" 2>/dev/null && return 0
		kill -0 "$TOOL_PID" 2>/dev/null || break
		sleep 0.1
	done
	diag "tool did not get ready: $*"; diag_file "$err"
	return 1
}

# Stop the tool started by tool_start with SIGINT (Ctrl-C) and wait; sets TOOL_RC.
tool_stop() {
	kill -INT "$TOOL_PID" 2>/dev/null
	wait "$TOOL_PID"
	TOOL_RC=$?
}

# bss_vars PID MAP VAR...: the values of global variables VAR of the .bss map MAP (e.g.
# fsslower.bss) of the BPF object that process PID holds, one line, in order; an array's
# entries summed. Empty when PID holds no such map.
bss_vars() {
	local pid=$1 map=$2 id f; shift 2
	for f in /proc/"$pid"/fdinfo/*; do
		id=$(awk '/^map_id:/ {print $2}' "$f" 2>/dev/null)
		[ -n "$id" ] && bpftool map show id "$id" 2>/dev/null | grep -q "name $map " && break
		id=
	done
	[ -n "$id" ] || return 0
	bpftool -j map dump id "$id" | jq -r --args '.[0].formatted.value[".bss"] as $b |
		[$ARGS.positional[] as $v | $b[] | select(has($v)) | .[$v] |
		 if type == "array" then add else . end] | map(tostring) | join(" ")' "$@"
}

# BPF programs currently loaded whose name starts with one of the given prefixes and that no
# live process holds (an fd of the program or of a link to it: prog_id in /proc/*/fdinfo).
# Called after the tool under test has exited, so whatever it loaded and did not release is
# listed, while the same programs of other tools still running (a parallel test, a user's
# own tracer) are not.
bpf_progs_named() {
	local re ids line
	re=$(printf '%s|' "$@"); re=${re%|}
	ids=" $(cat /proc/[0-9]*/fdinfo/* 2>/dev/null | awk '/^prog_id:/{print $2}' | sort -u | tr '\n' ' ') "
	bpftool prog show 2>/dev/null | grep -E "name ($re)" | while read -r line; do
		case $ids in *" ${line%%:*} "*) ;; *) echo "$line" ;; esac
	done
}

# bad DESCRIPTION EXPECTED_REGEX CMD...: CMD must fail with exit status 1 and exactly one line
# on stderr that matches EXPECTED_REGEX (bad input gets one clear line).
bad() {
	local d=$1 re=$2; shift 2
	"$@" >/dev/null 2>"$TMPD/bad.err" </dev/null; local rc=$?
	if [ "$rc" = 1 ] && [ "$(wc -l <"$TMPD/bad.err")" = 1 ] && grep -qE "$re" "$TMPD/bad.err"; then
		ok 0 "$d"
	else
		ok 1 "$d"; diag "exit $rc"; diag_file "$TMPD/bad.err"
	fi
}

# wl_launch OUT CMD...: start a workload that prints "pid N" and then waits for $TMPD/go (the
# -g option of the bundled workloads), so a tracer can attach to its pid first. Sets WL_BG
# (the shell job) and WL_PID (the process id). wl_go releases it, waits, and sets WL_RC.
wl_launch() {
	local out=$1 i; shift
	rm -f "$TMPD/go" "$out" # a pid line left from an earlier launch must not be read
	"$@" >"$out" 2>&1 &
	WL_BG=$!
	at_exit "kill -9 $WL_BG"
	for ((i = 0; i < 100; i++)); do
		WL_PID=$(awk '/^pid /{print $2; exit}' "$out" 2>/dev/null)
		[ -n "$WL_PID" ] && return 0
		sleep 0.05
	done
	echo "Bail out! workload did not start: $*"; exit 1
}
wl_go() { touch "$TMPD/go"; wait "$WL_BG"; WL_RC=$?; }

done_testing() { [ "$_tap_fail" = 0 ]; exit $?; }
