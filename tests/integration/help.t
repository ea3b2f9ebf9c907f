#!/usr/bin/env bash
# Every tool's -h: one usage line (the doc's "USAGE:", not argp's "Usage:" too), examples,
# and no line that argp broke at its 79 columns ("I/O\nwait", "all\ndisks"): the texts are
# wrapped by hand, at phrase boundaries.
source "$(dirname "$0")/lib.sh"
plan 42
top=$(cd "$(dirname "$0")/../.." && pwd)

for t in biolatency biosnoop fsslower iolayer iowaitstack writeback-ret; do
	bin=$IOLAYER_BUILD/bin/$t
	[ -x "$bin" ] || { echo "Bail out! $bin is not built"; exit 1; }
	"$bin" -h >"$TMPD/$t.h" 2>&1; rc=$?
	is "$rc $(grep -ciE '^ *usage:' "$TMPD/$t.h")" "0 1" "$t -h: exit 0, one usage line"
	check "$t -h teaches by examples (EXAMPLES:)" grep -q '^EXAMPLES:' "$TMPD/$t.h"
	# every line break is the text's own: with a margin of 1000 columns argp breaks none less
	# (argp's own closing note, "Mandatory or optional arguments...", is left out)
	ARGP_HELP_FMT=rmargin=1000 "$bin" -h >"$TMPD/$t.wide" 2>&1
	bad_lines=$(diff <(sed '/^Mandatory or optional/,$d' "$TMPD/$t.h") \
		<(sed '/^Mandatory or optional/,$d' "$TMPD/$t.wide") | grep '^<')
	if [ -z "$bad_lines" ]; then ok 0 "$t -h: no line broken in mid-phrase"; else
		ok 1 "$t -h: no line broken in mid-phrase"
		while IFS= read -r l; do diag "$l"; done <<<"$bad_lines"
	fi
	# glibc's argp loses the option column after a hand-broken line that reaches column ~74:
	# what follows starts at column 0, in every margin, so the diff above cannot see it
	flush=$(sed -n '/^OPTIONS:/,/^Mandatory or optional/p' "$TMPD/$t.h" | sed '1d;$d' | grep -v '^ \|^$')
	is "$flush" "" "$t -h: every option line in the option columns"
	# its man page: every long option of -h (but --help), and an OVERHEAD section
	txt=$(MANWIDTH=200 man -l "$top/docs/man/$t.8" 2>/dev/null)
	missing=
	for o in $(grep -oE '^ +(-[a-zA-Z0-9], )?--[a-z][a-z-]*' "$TMPD/$t.h" | grep -oE -- '--[a-z-]+' | sort -u); do
		[ "$o" = --help ] || grep -q -- "$o" <<<"$txt" || missing="$missing $o"
	done
	is "$missing" "" "$t.8 names every long option of $t -h"
	check "$t.8 has an OVERHEAD section" grep -qx OVERHEAD <<<"$txt"
	# no control byte in the source (a \f written as a form feed renders as a stray letter)
	is "$(LC_ALL=C grep -c $'[\x01-\x08\x0b\x0c\x0e-\x1f]' "$top/docs/man/$t.8")" 0 "$t.8: no control byte in its source"
done
done_testing
