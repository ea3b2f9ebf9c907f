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
