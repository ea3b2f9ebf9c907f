#!/usr/bin/env bash
# What a failed write of stdout says, for every tool: the failed write's own error, in one
# line, exit 1.
#  1. -V, -h and --usage into a closed stdout (EBADF) and into /dev/full (ENOSPC): exit 1 and
#     one line naming the error (they exited 0 in silence).
#  2. Tracing with stdout closed: fd 1 stays closed to the output (no BPF object or map takes
#     it and receives the rows), so the error is EBADF, said once, exit 1 (it was "Invalid
#     argument", from writing into a BPF object's fd). Into /dev/full: ENOSPC (it was "No such
#     file or directory", a later call's errno).
source "$(dirname "$0")/lib.sh"
require_root
plan 28

TOOLS="biolatency biosnoop fsslower iolayer iowaitstack writeback-ret"

# one_error DESCRIPTION ERRNAME OUT CMD...: CMD with stdout closed (OUT "-") or into file OUT:
# exit 1, and on stderr exactly one line about the output, "TOOL: writing the output failed:
# ... (ERRNAME): N lines not written" (the rest of stderr is the tool's own: its notes, the
# CSV summary)
one_error() {
	local d=$1 e=$2 out=$3 rc; shift 3
	if [ "$out" = - ]; then "$@" 2>"$TMPD/w.err" </dev/null >&-; else "$@" 2>"$TMPD/w.err" </dev/null >"$out"; fi
	rc=$?
	grep 'output' "$TMPD/w.err" | grep -v 'Hit Ctrl-C' >"$TMPD/w.lines"
	if [ "$rc" = 1 ] && [ "$(wc -l <"$TMPD/w.lines")" = 1 ] &&
		grep -qE "^[a-z-]+: writing the output failed: .* \($e\): [0-9]+ lines not written$" "$TMPD/w.lines"; then
		ok 0 "$d"
	else
		ok 1 "$d"; diag "exit $rc"; diag_file "$TMPD/w.err"
	fi
}

# ---- 1. -V, -h, --usage --------------------------------------------------------------------
for t in $TOOLS; do
	bin=$(tool "$t")
	one_error "$t -V >&-: EBADF, one line, exit 1" EBADF - $bin -V
	one_error "$t -h >/dev/full: ENOSPC, one line, exit 1" ENOSPC /dev/full $bin -h
	one_error "$t --usage >&-: EBADF, one line, exit 1" EBADF - $bin --usage
done

# ---- 2. tracing ------------------------------------------------------------------------------
# run_briefly CMD...: CMD for about a second (SIGINT after 1 s for tools without -d)
run_briefly() {
	"$@" &
	local pid=$!
	sleep 1
	kill -INT "$pid" 2>/dev/null
	wait "$pid"
}
one_error "fsslower -m 0 -d 1 >&-: EBADF" EBADF - $(tool fsslower) -m 0 -d 1
one_error "fsslower --csv -d 1 >/dev/full: ENOSPC" ENOSPC /dev/full $(tool fsslower) -m 0 --csv -d 1
one_error "biolatency 1 1 >&-: EBADF" EBADF - $(tool biolatency) 1 1
one_error "biosnoop >&-: EBADF" EBADF - run_briefly $(tool biosnoop)
one_error "iowaitstack -d 1 >&-: EBADF" EBADF - $(tool iowaitstack) -d 1
one_error "writeback-ret -d 1 >/dev/full: ENOSPC" ENOSPC /dev/full $(tool writeback-ret) -d 1
one_error "iolayer -d 1 >&-: EBADF" EBADF - $(tool iolayer) -d 1
one_error "iolayer --json -d 1 >/dev/full: ENOSPC" ENOSPC /dev/full $(tool iolayer) --json -d 1
# 3. stdin and stderr closed too: fd 0-2 are made valid, the output still fails as EBADF
"$(tool fsslower)" -m 0 -d 1 >&- <&- 2>"$TMPD/c.err"
rc=$?
is "$rc $(grep -c '(EBADF)' "$TMPD/c.err")" "1 1" "fsslower with stdin and stdout closed: exit 1, EBADF said once"
(exec 2>&-; "$(tool fsslower)" -m 0 -d 1 >"$TMPD/c.out")
is "$? $(grep -c '^Summary of every traced call' "$TMPD/c.out")" "0 1" "fsslower with stderr closed: its output in full, exit 0"
done_testing
