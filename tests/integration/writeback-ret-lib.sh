# shellcheck shell=bash
# Helpers of the writeback-ret-*.t tests (sourced after lib.sh, not run by prove).

WR=$(tool writeback-ret)

# wr_require_method: when IOLAYER_ATTACH forces a method this kernel cannot use for the
# default function (e.g. fentry on 5.10, whose ext4 module has no BTF), skip the whole file
# with the tool's own one-line reason.
wr_require_method() {
	[ -n "${IOLAYER_ATTACH:-}" ] || return 0
	$WR -d 1 >/dev/null 2>"$TMPD/method.err" </dev/null && return 0
	grep -q 'with the forced attach method' "$TMPD/method.err" &&
		skip_all "$IOLAYER_ATTACH cannot trace ext4_writepages here: $(head -1 "$TMPD/method.err")"
	return 0
}

# wl_launch OUT CMD...: start a workload that prints "pid N" and waits for $TMPD/go (its -g);
# sets WPID (the shell job) and PID (the process id). wl_go releases it and sets WRC.
wl_launch() {
	local out=$1 i; shift
	rm -f "$TMPD/go"
	"$@" >"$out" 2>&1 &
	WPID=$!
	at_exit "kill -9 $WPID"
	for ((i = 0; i < 100; i++)); do
		PID=$(awk '/^pid /{print $2; exit}' "$out" 2>/dev/null)
		[ -n "$PID" ] && return 0
		sleep 0.05
	done
	echo "Bail out! workload did not start: $*"; exit 1
}
wl_go() { touch "$TMPD/go"; wait "$WPID"; WRC=$?; }

# wl_tid OUT: the first "tid N" line of a workload's output (fsync_loop prints its threads'
# ids after its pid), waiting for it; empty after 5 s.
wl_tid() {
	local i t
	for ((i = 0; i < 100; i++)); do
		t=$(awk '/^tid /{print $2; exit}' "$1" 2>/dev/null)
		[ -n "$t" ] && break
		sleep 0.05
	done
	echo "$t"
}
