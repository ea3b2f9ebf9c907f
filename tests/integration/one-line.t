#!/usr/bin/env bash
# One line where one is promised, for every tool: what a failed write of stdout says (the
# failed write's own error), and what stops a tool from starting (with a hint that helps).
#  1. -V, -h and --usage into a closed stdout (EBADF) and into /dev/full (ENOSPC): exit 1 and
#     one line naming the error (they exited 0 in silence).
#  2. Tracing with stdout closed: fd 1 stays closed to the output (no BPF object or map takes
#     it and receives the rows), so the error is EBADF, said once, exit 1 (it was "Invalid
#     argument", from writing into a BPF object's fd). Into /dev/full: ENOSPC (it was "No such
#     file or directory", a later call's errno).
#  4. A root process without CAP_BPF/CAP_PERFMON/CAP_SYS_ADMIN: one line that says so (was 3
#     lines for iolayer, ending in "EPERM (run with -vv for the kernel's verifier log)").
#  5. --attach kprobe on a kernel without kprobes: the one line that says so, not the notes of
#     the layers that would have fallen back to tracepoints first (biosnoop said 3 lines).
#  6. EMFILE at load (ulimit -n 24): the hint is the open-file limit, not the verifier's log.
source "$(dirname "$0")/lib.sh"
require_root
plan 40

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

# ---- 4. no capabilities ----------------------------------------------------------------------
for t in $TOOLS; do
	bad "$t as root without CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN: one line" \
		"^$t: needs CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN, which this root process lacks" \
		setpriv --inh-caps=-all --bounding-set=-bpf,-perfmon,-sys_admin $(tool "$t")
done

# ---- 5. --attach kprobe without kprobes --------------------------------------------------------
if [ -e /sys/bus/event_source/devices/kprobe ]; then
	for i in 1 2 3 4; do skip "this kernel has kprobes: --attach kprobe works"; done
else
	bad "biosnoop --attach kprobe: one line" "^biosnoop: cannot trace .*: this kernel has no kprobes" \
		$(tool biosnoop) --attach kprobe
	bad "fsslower --attach kprobe: one line" "^fsslower: cannot trace .*: this kernel has no kprobes" \
		$(tool fsslower) --attach kprobe -d 1
	bad "writeback-ret --attach kprobe: one line" "^writeback-ret: cannot trace .*: this kernel has no kprobes" \
		$(tool writeback-ret) --attach kprobe -d 1
	bad "iolayer --attach kprobe: one line" "^iolayer: cannot trace .*: this kernel has no kprobes" \
		$(tool iolayer) --attach kprobe -d 1
fi

# ---- 6. too many open files --------------------------------------------------------------------
for t in fsslower iolayer; do
	bad "$t with ulimit -n 24: one line, EMFILE and the open-file limit as the hint" \
		"^$t: cannot load the BPF programs: EMFILE \(too many open files: raise the limit" \
		bash -c "ulimit -n 24; exec $(tool "$t") -d 1"
done
done_testing
