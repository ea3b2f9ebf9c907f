# shellcheck shell=bash
# Helpers for the iowaitstack tests (sourced after lib.sh).

IWS=$(tool iowaitstack)

# A bare loop device (no file system) over an allocated file in /dev/shm: sets LOOPDEV.
# Allocated, so direct reads of it are real I/O (reads of holes never reach the device).
loop_raw_setup() { # SIZE_MIB
	local img=/dev/shm/iolayer-iw-$$-$RANDOM.img
	at_exit "rm -f $img"
	dd if=/dev/zero of="$img" bs=1M count="$1" status=none
	LOOPDEV=$(losetup -f --show "$img") || { echo "Bail out! losetup failed"; exit 1; }
	at_exit "losetup_retry $LOOPDEV"
}

# Start "CMD..." in the background, stopped before it runs: its pid is known (PAUSED_PID)
# before it does any I/O, so the tool can be started with -p first. release_paused lets it go.
start_paused() {
	local fifo=$TMPD/go.$RANDOM
	mkfifo "$fifo"
	PAUSED_FIFO=$fifo
	bash -c 'read -r _ < "$0"; exec "$@"' "$fifo" "$@" &
	PAUSED_PID=$!
	at_exit "kill -9 $PAUSED_PID"
}
release_paused() { echo go >"$PAUSED_FIFO"; }

# Sum of a field ("waits" or "usecs") over the --json reports in FILE, for threads of process
# PID (any pid when PID is "any") under kernel stacks whose frames match the regex RE.
iw_sum() { # FILE FIELD PID RE
	jq -s --arg f "$2" --arg p "$3" --arg re "$4" '
		[.[] | .stacks[] | select((.kernel_stack // []) | join(" ") | test($re))
		 | .threads[] | select($p == "any" or (.pid | tostring) == $p) | .[$f]] | add // 0' "$1"
}

# The pids that appear under any stack in the --json reports of FILE, sorted, one line.
iw_pids() { jq -s -r '[.[] | .stacks[] | .threads[] | .pid] | unique | map(tostring) | join(" ")' "$1"; }

# Fails when an output shows one of the tracer's own frames.
no_tracer_frames() { ! grep -qE 'bpf_prog_|bpf_trace_run|__bpf_trace_|__traceiter_' "$@"; }

# The one-line bad-input check: DESCRIPTION EXPECTED_REGEX ARGS...
bad_input() {
	local d=$1 re=$2 rc; shift 2
	"$@" >/dev/null 2>"$TMPD/bad.err"; rc=$?
	if [ "$rc" = 1 ] && [ "$(wc -l <"$TMPD/bad.err")" = 1 ] && grep -qE -- "$re" "$TMPD/bad.err"; then
		ok 0 "$d"
	else
		ok 1 "$d"; diag "exit $rc"; diag_file "$TMPD/bad.err"
	fi
}
