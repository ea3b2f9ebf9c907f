#!/usr/bin/env bash
# biolatency: options it must refuse (one line on stderr, exit 1), and --attach of a method it
# does not have: it traces with its tracepoints and says so in one line, at every verbosity.
source "$(dirname "$0")/lib.sh"
require_root
plan 11

BL=$(tool biolatency)
RAWBL=$BIN/biolatency   # without IOLAYER_ATTACH: these checks force their own method

bad "unknown attach method" "^biolatency: unknown attach method 'bogus'" $BL --attach=bogus
bad "three positional arguments" "^biolatency: unexpected argument '3'" $BL 1 2 3
bad "interval 0" "^biolatency: interval .* got '0'" $BL 0
bad "-Q with --from=submit" "^biolatency: -Q \(--from=insert\) and --from=submit conflict: give one" $BL -Q --from=submit
bad "--from=queue then -Q" "^biolatency: -Q \(--from=insert\) and --from=queue conflict: give one" $BL --from=queue -Q
bad "count 0" "^biolatency: count .* got '0'" $BL 1 0
bad "unknown option, in the tool's name" "^biolatency: unrecognized option '--nope' \(try --help\)$" $BL --nope

# kprobe and fentry: biolatency has only tracepoint methods. It still measures, with them, and
# says so on stderr in one line; without -v too.
for m in kprobe fentry; do
	$RAWBL --attach=$m 1 1 >"$TMPD/$m.out" 2>"$TMPD/$m.err" </dev/null
	rc=$?
	n=$(grep -cE "^biolatency: block request lifetime: no $m method exists for it in biolatency; attaching with (tp_btf|raw_tp) instead$" "$TMPD/$m.err")
	is "$rc $n" "0 1" "--attach=$m: exit 0 and one line saying tracepoints are used instead"
	[ "$n" = 1 ] || diag_file "$TMPD/$m.err"
done
$RAWBL --attach=tracepoint 1 1 >/dev/null 2>"$TMPD/tp.err" </dev/null
rc=$?
is "$rc $(grep -c 'method exists' "$TMPD/tp.err")" "0 0" "--attach=tracepoint: exit 0, no notice"
$RAWBL -v --attach=kprobe 1 1 >/dev/null 2>"$TMPD/v.err" </dev/null
# (one notice per plan: with a bio-based disk on the machine, the bio plan says so too)
is "$(grep -c 'block request lifetime: no kprobe method exists' "$TMPD/v.err")" 1 \
	"-v --attach=kprobe: the notice once, not twice"

done_testing
