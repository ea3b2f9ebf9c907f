#!/usr/bin/env bash
# iolayer --html: the page of one run, opened in headless Chromium. No console error; each
# layer's heat map sums to the layer's count in --json of the same run (300 write+fsync in:
# 300 and 300 in the maps); hovering a map's busiest cell shows its count; the flame graph
# zooms and weighs the run's I/O wait; a file named like markup stays text. A made-up page of
# 1,000 stacks and 600 s (tests/unit/test_report.c) draws whole, with its known sums.
# iowaitstack --flamegraph: valid SVG whose total is the folded output's.
# The screenshot of the page is kept as $IOLAYER_BUILD/iolayer-html.png.
source "$(dirname "$0")/lib.sh"
require_root
require_cmd chromium chromium
require_cmd python3 python3
[ -x "$IOLAYER_BUILD/tests/test_report" ] ||
	{ echo "Bail out! $IOLAYER_BUILD/tests/test_report is not built (make check-integration builds it)"; exit 1; }
plan 30

loop_ext4_setup 128
IL=$(tool iolayer)
N=300
mkdir "$MNT/x<"
HOSTILE="$MNT/x</script><img src=y onerror=alert(1)>&amp;"$'\t'"end"

# browser URL OUT [ARGS]: the DOM after the page's script ran, console lines in OUT.err (as
# root: no sandbox; nothing of its own on the network)
browser() {
	timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run \
		--disable-background-networking --disable-component-update --disable-extensions \
		--user-data-dir="$TMPD/chrome" --enable-logging=stderr --v=0 "${@:3}" \
		--dump-dom "$1" >"$2" 2>"$2.err"
}
# attr FILE TAG ATTR: an attribute of a tag of the dumped DOM in FILE, TAG "body", "id=ID" or
# "data-key=KEY" (every such tag's attributes are read once, by one python3, into FILE.attrs)
attr() {
	[ -s "$1.attrs" ] || python3 - "$1" >"$1.attrs" <<'PY'
import html, re, sys
for tag in re.findall(r'<[a-z][^>]*>', open(sys.argv[1]).read()):
    attrs = dict((k, html.unescape(v)) for k, v in re.findall(r'\s([a-z-]+)="([^"]*)"', tag))
    keys = ["body"] if tag.startswith("<body") else []
    keys += ["%s=%s" % (k, attrs[k]) for k in ("id", "data-key") if k in attrs]
    for key in keys:
        for k, v in attrs.items():
            print("%s\t%s\t%s" % (key, k, v.replace("\n", " ")))
PY
	awk -F '\t' -v t="$2" -v a="$3" '$1 == t && $2 == a { print $3; exit }' "$1.attrs"
}

# 1. one run, --json and --html together
wl_launch "$TMPD/wl.out" "$WL/fsync_loop" -g "$TMPD/go" -n $N -s 4096 "$HOSTILE"
check "iolayer --json --html starts" tool_start "$TMPD/o.json" "$TMPD/o.err" \
	$IL -p "$WL_PID" -d 600 --json --html "$TMPD/r.html"
sleep 1.2
wl_go
is "$WL_RC" 0 "workload ran $N write+fsync"
sleep 1.2
tool_stop
is "$TOOL_RC" 0 "exit status 0 after Ctrl-C"
j() { jq -r "$1" "$TMPD/o.json"; }
is "$(j .layers.syscall.fsync.count)" "$N" "--json: $N fsyncs"

# the screenshot is kept as an artifact (and is the README's picture)
diag "time: ${SECONDS} s before the browser"
browser "file://$TMPD/r.html#selftest" "$TMPD/r.dom" --hide-scrollbars --window-size=1280,2600 \
	--screenshot="$IOLAYER_BUILD/iolayer-html.png"
is "$(attr "$TMPD/r.dom" body data-ready)" 1 "the page drew itself (in $(attr "$TMPD/r.dom" body data-draw-ms) ms)"
is "$(attr "$TMPD/r.dom" body data-errors)" 0 "no script error recorded by the page"
is "$(grep -c ':CONSOLE' "$TMPD/r.dom.err")" 0 "no console message in Chromium"
grep ':CONSOLE' "$TMPD/r.dom.err" | head -5 | sed 's/^/# /'
cols=$(attr "$TMPD/r.dom" id=heat data-columns)
check "the heat maps have one column a second (got $cols for ~2.4 s)" test "$cols" -ge 2
bad_sums=""
for key in syscall.read syscall.write syscall.open syscall.fsync syscall.sync_range iowait \
	block_phases.before_q block_phases.q2g block_phases.g2i queue device; do
	got=$(attr "$TMPD/r.dom" "data-key=$key" data-sum)
	want=$(j ".layers.$key.count")
	diag "answer: heat map $key: cells sum $got, --json count $want"
	[ "$got" = "$want" ] || bad_sums+=" $key($got!=$want)"
done
is "$bad_sums" "" "every heat map's cells sum to its layer's --json count"
is "$(attr "$TMPD/r.dom" data-key=syscall.fsync data-sum)" "$N" "the fsync heat map holds the $N fsyncs"
is "$(attr "$TMPD/r.dom" data-key=syscall.write data-sum)" "$N" "the write heat map holds the $N writes"
probe=$(attr "$TMPD/r.dom" data-key=syscall.fsync data-probe)
hover=$(attr "$TMPD/r.dom" data-key=syscall.fsync data-hover)
diag "hover: $hover"
check "hovering the fsync map's busiest cell shows its count ($probe)" grep -qE ": $probe calls\$" <<<"$hover"
check "the I/O-wait flame graph zooms on click (to $(attr "$TMPD/r.dom" id=flame data-zoom-test))" \
	test -n "$(attr "$TMPD/r.dom" id=flame data-zoom-test)"
ft=$(attr "$TMPD/r.dom" id=flame data-total); iw=$(j .layers.iowait.total_ns)
diag "answer: flame graph total $ft ns, --json iowait total $iw ns"
check "the flame graph weighs the stacks' I/O wait: at most the layer's ($ft <= $iw), and most of it" \
	test "$ft" -le "$iw" -a "$ft" -ge $((iw * 9 / 10))
is "$(attr "$TMPD/r.dom" id=verdict-layer id)" verdict-layer "the verdict is at the top"
check "the verdict's layer is --json's ($(j .verdict.layer))" \
	grep -qF "id=\"verdict-layer\">$(j .verdict.layer)<" "$TMPD/r.dom"
check "the file named like markup, with a tab, is text in the files table (the tab as \\t)" \
	grep -qF 'x&lt;/script&gt;&lt;img src=y onerror=alert(1)&gt;&amp;amp;\tend' "$TMPD/r.dom"
is "$(grep -c '<img' "$TMPD/r.dom")" 0 "and made no element"
check "the verdict's sentence, whose names iolayer escaped, is shown as written ($(j .verdict.reason | head -c 60)...)" \
	grep -qF "$(j .verdict.reason | python3 -c 'import html, sys; print(html.escape(sys.stdin.read().rstrip("\n"), quote=False))')" "$TMPD/r.dom"
check "the page fetches nothing: no http(s) URL in it" bash -c "! grep -qE 'https?://' '$TMPD/r.html'"

check "screenshot kept: $IOLAYER_BUILD/iolayer-html.png" \
	bash -c "file '$IOLAYER_BUILD/iolayer-html.png' | grep -q 'PNG image data, 1280 x 2600'"

# 2. a made-up page of 1,000 stacks and 600 seconds
large() { IL_REPORT_LARGE="$TMPD/large.html" "$IOLAYER_BUILD/tests/test_report" >"$TMPD/large.out" 2>&1; }
check "the large page is generated" large
is "$(wc -l <"$TMPD/large.html.sums")" 12 "with its 11 maps' sums and the stacks' total"
diag "time: ${SECONDS} s before the browser (large)"
browser "file://$TMPD/large.html#selftest" "$TMPD/l.dom"
diag "time: ${SECONDS} s after"
is "$(attr "$TMPD/l.dom" body data-ready)$(attr "$TMPD/l.dom" body data-errors)" 10 \
	"1,000 stacks x 600 s: drawn with no error (in $(attr "$TMPD/l.dom" body data-draw-ms) ms: $(attr "$TMPD/l.dom" body data-part-ms))"
is "$(attr "$TMPD/l.dom" id=heat data-columns)" 600 "600 columns"
bad_sums=""
while read -r key want; do
	if [ "$key" = flame ]; then got=$(attr "$TMPD/l.dom" id=flame data-total)
	else got=$(attr "$TMPD/l.dom" "data-key=$key" data-sum); fi
	[ "$got" = "$want" ] || bad_sums+=" $key($got!=$want)"
done <"$TMPD/large.html.sums"
is "$bad_sums" "" "every map's sum and the flame graph's total are the generator's"

# 3. iowaitstack --flamegraph
IWS=$(tool iowaitstack)
wl_launch "$TMPD/wl2.out" "$WL/fsync_loop" -g "$TMPD/go" -n 100 -s 4096 "$MNT/f2"
check "iowaitstack --folded --flamegraph starts" tool_start "$TMPD/w.folded" "$TMPD/w.err" \
	$IWS -p "$WL_PID" --folded --flamegraph "$TMPD/w.svg"
wl_go
tool_stop
is "$TOOL_RC" 0 "exit status 0"
check "the SVG is well-formed XML" python3 -c "import sys, xml.dom.minidom as m; m.parse(sys.argv[1])" "$TMPD/w.svg"
folded=$(awk '{ s += $NF; n++ } END { print s + 0, n + 0 }' "$TMPD/w.folded")
svg_us=$(python3 -c "import re,sys; print(round(float(re.search(r'<title>all \(([0-9.]+) ms', open(sys.argv[1]).read()).group(1)) * 1000))" "$TMPD/w.svg")
diag "answer: folded sum ${folded% *} us in ${folded#* } lines, SVG total $svg_us us"
# each folded line is cut to whole microseconds: at most one lost per line
check "the SVG's total is the folded lines' (within their rounding)" \
	test "$svg_us" -ge "${folded% *}" -a "$svg_us" -le $(( ${folded% *} + ${folded#* } + 1 ))
done_testing
