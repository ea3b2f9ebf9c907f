#!/usr/bin/env bash
# The Debian package built by `make deb` ($IOLAYER_BUILD/deb/iolayer_*.deb), installed beside
# Debian's libbpf-tools: no file of one is a file of the other; each command is il-NAME with
# its man page il-NAME(8), iolayer itself iolayer; both biolatency's run at once and count the same 1000 direct writes
# on a loop device; the installed tools run (-V, iolayer -d 1); the systemd unit is
# installed disabled; removing the package leaves libbpf-tools whole. Run by `make check-deb`.
source "$(dirname "$0")/../integration/lib.sh"
require_root
require_cmd dpkg dpkg-deb
require_cmd apt apt-get
require_cmd libbpf-tools /usr/sbin/biolatency
require_cmd systemd systemctl
require_cmd man-db man
SRC=$(cd "$(dirname "$0")/../.." && pwd)
shopt -s nullglob
debs=("$IOLAYER_BUILD"/deb/iolayer_*_amd64.deb)
shopt -u nullglob
[ "${#debs[@]}" = 1 ] || { echo "Bail out! no single package in $IOLAYER_BUILD/deb: run make deb"; exit 1; }
DEB=${debs[0]}
# the tools of the source tree, as the Makefile finds them: bpf/NAME.bpf.c + user/NAME.c
TOOLS=$(for f in "$SRC"/user/*.c; do t=$(basename "$f" .c); [ -f "$SRC/bpf/$t.bpf.c" ] && echo "${t//_/-}"; done | sort)
NT=$(echo "$TOOLS" | wc -l)
# the installed name of tool $1: il-NAME, but iolayer itself (tools/debian/rules)
inst() { if [ "$1" = iolayer ]; then echo iolayer; else echo "il-$1"; fi; }
INST=$(for t in $TOOLS; do inst "$t"; done | LC_ALL=C sort)
plan $((18 + 2 * NT))
apt_() { DEBIAN_FRONTEND=noninteractive apt-get -qq -o DPkg::Lock::Timeout=300 "$@" >"$TMPD/apt.out" 2>&1; }

# What the package holds, before installing it.
dpkg-deb --fsys-tarfile "$DEB" | tar -t | sed 's|^\./|/|; s|/$||' | sort >"$TMPD/ours"
dpkg-query -L libbpf-tools | sort >"$TMPD/theirs"
# directories are shared (/usr/sbin); files and links must not be
shared=$(comm -12 "$TMPD/ours" "$TMPD/theirs" | while read -r p; do [ -d "$p" ] || echo "$p"; done)
is "$shared" "" "no file of the package is a file of libbpf-tools"
is "$(grep -E '^/usr/sbin/' "$TMPD/ours" | sed 's|^/usr/sbin/||' | tr '\n' ' ')" \
	"$(echo "$INST" | tr '\n' ' ')" "/usr/sbin holds every tool as il-NAME, iolayer as iolayer ($NT), nothing else"
is "$(grep -E '^/usr/share/man/man8/' "$TMPD/ours" | sed 's|^/usr/share/man/man8/||' | tr '\n' ' ')" \
	"$(echo "$INST" | sed 's/$/.8.gz/' | tr '\n' ' ')" "... each with its man page of the same name"
is "$(grep -E '^/usr/share/iolayer/.*\.' "$TMPD/ours" | tr '\n' ' ')" \
	"/usr/share/iolayer/grafana/iolayer.json /usr/share/iolayer/prometheus/iolayer-rules.yml " \
	"the dashboard and the rules in /usr/share/iolayer"

at_exit "dpkg-query -W iolayer >/dev/null 2>&1 && apt_ purge -y iolayer"
apt_ install -y --no-install-recommends "$DEB" || diag_file "$TMPD/apt.out"
is "$(dpkg-query -W -f='${db:Status-Status}' iolayer 2>&1)" installed "the package installs with apt beside libbpf-tools"
is "$(dpkg-query -W -f='${db:Status-Status} ' iolayer libbpf-tools)" \
	"installed installed " "both packages are installed"
is "$(dpkg-query -S /usr/sbin/biolatency)" "libbpf-tools: /usr/sbin/biolatency" \
	"biolatency on the PATH is still libbpf-tools' (nothing hidden)"

VER=$(dpkg-query -W -f='${Version}' iolayer)
for t in $TOOLS; do
	n=$(inst "$t")
	out=$("/usr/sbin/$n" -V 2>&1); rc=$?
	case "$out" in "$t $VER"*) ;; *) rc="$rc, printed: $(head -1 <<<"$out")" ;; esac
	is "$rc" 0 "$n -V: exit 0, '$t $VER...'"
	is "$(man -w "$n")" "/usr/share/man/man8/$n.8.gz" "man $n finds its page"
done

/usr/sbin/iolayer -d 1 >"$TMPD/il.out" 2>"$TMPD/il.err"
is "$?" 0 "iolayer -d 1 exits 0"
verdict_after_1s() { grep -qE '^1\.[0-9] s traced' "$TMPD/il.out" && grep -q '^verdict: ' "$TMPD/il.out"; }
verdict_after_1s || { diag_file "$TMPD/il.out"; diag_file "$TMPD/il.err"; }
check "... and gives a verdict after 1.0 s" verdict_after_1s

# Both biolatency's at once on the same 1000 direct writes to a loop device: each counts them.
make_loop deb 64M
if command -v udevadm >/dev/null && udevadm control --stop-exec-queue 2>/dev/null; then
	at_exit "udevadm control --start-exec-queue"
fi
# requests of DISK in a classic biolatency -D histogram (libbpf-tools' layout, and ours)
count_of() { awk -v d="$2" '/^disk = / {cur = $3} cur == d && $2 == "->" {n += $5} END {print n + 0}' "$1"; }
check "il-biolatency -D starts" tool_start "$TMPD/ours.out" "$TMPD/ours.err" /usr/sbin/il-biolatency -D
OURS_PID=$TOOL_PID
# (its "Hit Ctrl-C" line is a printf: line-buffered, so it is seen before exit)
stdbuf -oL /usr/sbin/biolatency -D >"$TMPD/theirs.out" 2>"$TMPD/theirs.err" &
THEIRS_PID=$!
at_exit "kill -9 $THEIRS_PID"
theirs_ready() { grep -q 'Hit Ctrl-C' "$TMPD/theirs.out"; }
check "libbpf-tools' biolatency -D starts" wait_for 30 theirs_ready
dd if=/dev/zero of="$LOOPDEV" oflag=direct bs=4k count=1000 status=none
kill -INT "$OURS_PID" "$THEIRS_PID"
wait "$OURS_PID"; R1=$?
wait "$THEIRS_PID"; R2=$?
is "$R1 $R2" "0 0" "both exit 0 on Ctrl-C"
diag "answer: 1000 writes; il-biolatency $(count_of "$TMPD/ours.out" "$LOOPNAME"), libbpf-tools biolatency $(count_of "$TMPD/theirs.out" "$LOOPNAME") requests on $LOOPNAME"
is "$(count_of "$TMPD/ours.out" "$LOOPNAME") $(count_of "$TMPD/theirs.out" "$LOOPNAME")" "1000 1000" \
	"il-biolatency and biolatency each count the 1000 writes on $LOOPNAME"

# The unit: installed, pointing at the installed iolayer, disabled and not started.
U=/lib/systemd/system/iolayer.service
is "$(sed -n 's/^ExecStart=//p' "$U")" "/usr/sbin/iolayer --serve 127.0.0.1:19435" "iolayer.service runs /usr/sbin/iolayer --serve"
is "$(systemctl is-enabled iolayer.service 2>&1)" disabled "iolayer.service is installed disabled"

apt_ purge -y iolayer || diag_file "$TMPD/apt.out"
st=$(dpkg-query -W -f='${db:Status-Status}' iolayer 2>/dev/null)
is "${st:-not-installed}" not-installed "the package is purged"
left=$(grep -vxF -e / -e /usr -e /usr/sbin -e /usr/share -e /usr/share/man -e /usr/share/man/man8 \
	-e /usr/share/doc -e /lib -e /lib/systemd -e /lib/systemd/system "$TMPD/ours" |
	while read -r p; do [ -e "$p" ] && echo "$p"; done)
is "$left" "" "none of its files is left"
/usr/sbin/biolatency 1 1 >/dev/null 2>&1
is "$?" 0 "libbpf-tools' biolatency still runs (biolatency 1 1)"

done_testing
