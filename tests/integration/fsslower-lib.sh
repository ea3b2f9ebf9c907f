# shellcheck shell=bash
# Helpers of the fsslower-*.t tests (sourced after lib.sh, not run by prove).

# wl_start OUTFILE FSYNC_LOOP_ARGS...: the bundled workload, held at its start line (-g);
# see wl_launch in lib.sh (WL_PID, WL_BG; wl_go releases it and sets WL_RC).
wl_start() { local out=$1; shift; wl_launch "$out" "$WL/fsync_loop" -g "$TMPD/go" "$@"; }

# rows FILE OP PATH: text rows (no -L) of operation OP on file PATH.
rows() { awk -v op="$2" -v f="$3" '$4 == op && $NF == f' "$1" | wc -l; }

# summary_count FILE OP: the COUNT column of the summary line of OP (R, W, O, F).
summary_count() { awk -v op="$2" '/^Summary/{s=1} s && $1 == op {print $2}' "$1"; }

# missed_returns FILE: the "returns not seen" count of the text summary (0 when absent):
# calls whose return a kretprobe missed (out of instances), which have no row.
missed_returns() { awk '/^returns not seen/ {n = $NF} END {print n + 0}' "$1"; }
