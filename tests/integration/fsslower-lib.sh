# shellcheck shell=bash
# Helpers of the fsslower-*.t tests (sourced after lib.sh, not run by prove).

# wl_start OUTFILE FSYNC_LOOP_ARGS...: start the bundled workload held at its start line
# (-g); sets WL_PID (the process) and WL_BG (the shell job). Release it with wl_go.
wl_start() {
	local out=$1 i; shift
	rm -f "$TMPD/go"
	"$WL/fsync_loop" -g "$TMPD/go" "$@" >"$out" &
	WL_BG=$!
	at_exit "kill -9 $WL_BG"
	for ((i = 0; i < 100; i++)); do
		WL_PID=$(awk '/^pid /{print $2}' "$out" 2>/dev/null)
		[ -n "$WL_PID" ] && return 0
		sleep 0.05
	done
	echo "Bail out! fsync_loop did not start"; exit 1
}

# wl_go: let the workload run and wait for it; sets WL_RC.
wl_go() {
	touch "$TMPD/go"
	wait "$WL_BG"
	WL_RC=$?
}

# rows FILE OP PATH: text rows (no -L) of operation OP on file PATH.
rows() { awk -v op="$2" -v f="$3" '$4 == op && $NF == f' "$1" | wc -l; }

# summary_count FILE OP: the COUNT column of the summary line of OP (R, W, O, F).
summary_count() { awk -v op="$2" '/^Summary/{s=1} s && $1 == op {print $2}' "$1"; }

# missed_returns FILE: the "returns not seen" count of the text summary (0 when absent):
# calls whose return a kretprobe missed (out of instances), which have no row.
missed_returns() { awk '/^returns not seen/ {n = $NF} END {print n + 0}' "$1"; }
