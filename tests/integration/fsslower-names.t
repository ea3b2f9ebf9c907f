#!/usr/bin/env bash
# Names in full. Under a directory whose name is 80 bytes, files whose names are 40, 63, 64,
# 100 and 255 bytes (with a comma, a double quote, a space, UTF-8, a newline and a byte that
# is not UTF-8 among them), each written and fsynced once; a file 18 directories deep; a file
# unlinked while open, then written and fsynced. fsslower's text, CSV and JSON and
# writeback-ret's JSON give every path in full and byte for byte (JSON: file, or file_b64
# when the name is not UTF-8); the deep one is ".../" and its last 16 components; the
# unlinked one ends in " (deleted)" (JSON: "deleted": true; CSV: its deleted column true),
# while a live file called "alive (deleted)" reads "alive\x20(deleted)" in text (deleted false
# in CSV and JSON); a name with U+202E (right-to-left override) shows it as \xe2\x80\xae in
# text, never raw. iolayer, beside them, keeps 63 bytes of a name: the 80-byte directory's
# ends in "..." and no file under it is called deleted (that cut path names nothing to look
# at). In a second run in a short directory, iolayer tells a live file called
# "alive (deleted)" (text "alive\x20(deleted)", JSON deleted_inodes 0) from one unlinked
# while open ("gone (deleted)", one deleted inode).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fsslower-lib.sh"
require_root
plan 26

loop_ext4_setup
FS=$(tool fsslower)
WR=$(tool writeback-ret)

# name PREFIX LEN: PREFIX padded with '_' to LEN bytes
name() {
	local LC_ALL=C s=$1
	while ((${#s} < $2)); do s+=_; done
	printf '%s' "$s"
}
bytes() { local LC_ALL=C s=$1; echo "${#s}"; }
b64() { printf '%s' "$1" | base64 -w0; }

D=$(name dir-of-eighty-bytes 80)
mkdir "$MNT/$D"
N40=$(name 'n40,with,commas"and"quotes' 40)
N63=$(name 'n63 with spaces and é' 63)
N64=$(name n64-sixty-four 64)
N100=$(name $'n100-new\nline' 100)
N255=$(name $'n255-not-utf8-\xff-byte' 255)
NAMES=("$N40" "$N63" "$N64" "$N100" "$N255")
LENS=(40 63 64 100 255)
DEEP=$MNT/deep
for i in $(seq 1 18); do DEEP+=/d$i; done
mkdir -p "$DEEP"
DEEP_SHOWN=...
for i in $(seq 4 18); do DEEP_SHOWN+=/d$i; done
DEEP_SHOWN+=/f
GONE=$MNT/$D/gone
LIVE="$MNT/$D/alive (deleted)"
BIDI=$MNT/$D/bidi-$'\xe2\x80\xae'-txt
PATHS=()
for n in "${NAMES[@]}"; do PATHS+=("$MNT/$D/$n"); done
is "$(bytes "$D") $(for n in "${NAMES[@]}"; do bytes "$n"; done | tr '\n' ' ')" "80 ${LENS[*]} " \
	"the names are 80 (directory), 40, 63, 64, 100 and 255 bytes long"

# One run of the workload, four tracers on it.
wl_launch "$TMPD/wl.out" "$WL/write_fsync" -g "$TMPD/go" -u "$GONE" "${PATHS[@]}" "$DEEP/f" "$LIVE" "$BIDI"
check "fsslower --json starts" tool_start "$TMPD/j.out" "$TMPD/j.err" $FS --json -m 0 -p "$WL_PID"
PJ=$TOOL_PID
check "fsslower --csv starts" tool_start "$TMPD/c.out" "$TMPD/c.err" $FS --csv -m 0 -p "$WL_PID"
PC=$TOOL_PID
check "fsslower (text) starts" tool_start "$TMPD/t.out" "$TMPD/t.err" $FS -m 0 -p "$WL_PID"
PT=$TOOL_PID
check "writeback-ret --json starts" tool_start "$TMPD/w.out" "$TMPD/w.err" $WR --json -p "$WL_PID"
PW=$TOOL_PID
IOL=$(tool iolayer)
tool_start "$TMPD/ij.out" "$TMPD/ij.err" $IOL --json --top 0 -d 600 -p "$WL_PID" || diag "iolayer --json did not start"
PIJ=$TOOL_PID
wl_go
rcs=
for p in $PJ $PC $PT $PW $PIJ; do TOOL_PID=$p; tool_stop; rcs+="$TOOL_RC "; done
is "$WL_RC $rcs" "0 0 0 0 0 0 " "workload and the five tracers exit 0"

# JSON: per op, the exact bytes of each row's file, in base64.
json_files() { jq -r --arg op "$2" 'select(.op == $op or .func == $op) | (.file_b64 // (.file | @base64))' "$1"; }
# CSV (RFC 4180, names escaped as in text: \xhh, \n, \t, \r, \\): "OP<TAB>DELETED<TAB>base64
# of the file, unescaped", one line per row.
csv_files() {
	perl -MMIME::Base64 -0777 -ne '
		my (@rec, @f);
		while (/\G(?:"((?:[^"]|"")*)"|([^,\n]*))(,|\n|\z)/gc) {
			my ($quoted, $plain, $sep) = ($1, $2, $3);
			push @f, defined $quoted ? $quoted =~ s/""/"/gr : $plain;
			next if $sep eq ",";
			push @rec, [@f] if @f > 1;
			@f = ();
			last if $sep eq "";
		}
		shift @rec;
		my %e = (n => "\n", t => "\t", r => "\r", "\\" => "\\");
		for (@rec) {
			(my $f = $_->[-1]) =~ s/\\(x([0-9a-f]{2})|[ntr\\])/defined $2 ? chr(hex $2) : $e{$1}/ge;
			print "$_->[4]\t$_->[-2]\t", encode_base64($f, ""), "\n";
		}' "$1"
}
# count FILE-OF-B64-LINES PATH: how many lines are PATH's bytes
count() { grep -cxF -- "$(b64 "$2")" "$1"; }

json_files "$TMPD/j.out" W >"$TMPD/jw"
json_files "$TMPD/j.out" F >"$TMPD/jf"
csv_files "$TMPD/c.out" | awk -F'\t' '$1 == "W" {print $3}' >"$TMPD/cw"
csv_files "$TMPD/c.out" | awk -F'\t' '$1 == "F" {print $3}' >"$TMPD/cf"
json_files "$TMPD/w.out" ext4_writepages >"$TMPD/ww"
for i in 0 1 2 3 4; do
	p=${PATHS[$i]}
	is "json W $(count "$TMPD/jw" "$p") F $(count "$TMPD/jf" "$p"); csv W $(count "$TMPD/cw" "$p") F $(count "$TMPD/cf" "$p")" \
		"json W 1 F 1; csv W 1 F 1" "${LENS[$i]}-byte name: one W and one F row, its full path byte for byte in JSON and CSV"
done
diag "answer: full-path rows (W F per format) $(for p in "${PATHS[@]}"; do printf '%s/%s/%s/%s ' "$(count "$TMPD/jw" "$p")" "$(count "$TMPD/jf" "$p")" "$(count "$TMPD/cw" "$p")" "$(count "$TMPD/cf" "$p")"; done)"
is "$(for p in "${PATHS[@]}"; do count "$TMPD/ww" "$p"; done | tr '\n' ' ')" "1 1 1 1 1 " \
	"writeback-ret: one ext4_writepages row per file, its full path byte for byte"
is "$(jq -s '[.[] | select(.file_b64)] | length' "$TMPD/j.out")" 3 \
	"JSON: only the 255-byte name's rows (O, W, F: not UTF-8) carry file_b64"

# Text: escaped, one line per row; the newline is \n and the byte 0xff is \xff.
esc() { local LC_ALL=C s=$1; s=${s//\\/\\\\}; s=${s//$'\n'/\\n}; s=${s//$'\xff'/\\xff}; printf '%s' "$s"; }
# tend TEXT: text rows that end in " TEXT" (as it is); tcount PATH: rows that end in PATH escaped
tend() { E=" $1" awk 'BEGIN {e = ENVIRON["E"]} length($0) >= length(e) && substr($0, length($0) - length(e) + 1) == e' "$TMPD/t.out" | wc -l; }
tcount() { tend "$(esc "$1")"; }
is "$(for p in "${PATHS[@]}"; do tcount "$p"; done | tr '\n' ' ')" "3 3 3 3 3 " \
	"text: an O, a W and an F row ending in each full path, escaped"

# Deeper than 16 components: "..." and the last 16.
is "$(jq -r 'select(.op == "F") | .file' "$TMPD/j.out" | grep -cxF -- "$DEEP_SHOWN")" 1 \
	"18 directories deep: the F row's file is $DEEP_SHOWN"
is "$(jq -r 'select(.func) | .file' "$TMPD/w.out" | grep -cxF -- "$DEEP_SHOWN")" 1 \
	"writeback-ret: the same path for the deep file"

# Unlinked while open.
is "$(jq -c --arg f "$GONE (deleted)" 'select(.file == $f) | [.op, .deleted]' "$TMPD/j.out" | sort | tr '\n' ' ')" \
	'["F",true] ["W",true] ' "unlinked file: its W and F rows say '$GONE (deleted)', deleted true"
is "$(jq -c 'select(.op) | .deleted' "$TMPD/j.out" | sort | uniq -c | awk '{print $2 ":" $1}' | tr '\n' ' ')" \
	"false:25 true:2 " "deleted is false on every other row (9 files, O W F, and the unlinked file's O)"
is "$(tcount "$GONE (deleted)") $(jq -c --arg f "$GONE (deleted)" 'select(.file == $f) | .deleted' "$TMPD/w.out")" \
	"2 true" "text rows (W, F) and writeback-ret say (deleted) too"
diag "answer: deleted rows fsslower $(jq -c --arg f "$GONE (deleted)" 'select(.file == $f) | .op' "$TMPD/j.out" | tr '\n' ' ')writeback-ret $(jq -c --arg f "$GONE (deleted)" 'select(.file == $f) | .func' "$TMPD/w.out" | tr '\n' ' ')"

# A live file called "alive (deleted)": its blank escaped in text, deleted false in CSV.
is "$(tend "$MNT/$D/alive\\x20(deleted)") $(grep -c '/alive (deleted)$' "$TMPD/t.out")" "3 0" \
	"text: the live 'alive (deleted)' reads alive\\x20(deleted) in its O, W, F rows, never as a deleted 'alive'"
csv_files "$TMPD/c.out" >"$TMPD/c.rows"
is "$(awk -F'\t' -v f="$(b64 "$LIVE")" '$3 == f {print $1 $2}' "$TMPD/c.rows" | sort | tr '\n' ' ')" \
	"Ffalse Ofalse Wfalse " "CSV: the live 'alive (deleted)' rows say deleted false"
is "$(awk -F'\t' -v f="$(b64 "$GONE (deleted)")" '$3 == f {print $1 $2}' "$TMPD/c.rows" | sort | tr '\n' ' ')" \
	"Ftrue Wtrue " "CSV: the unlinked file's W and F rows say deleted true"
# iolayer: the 80-byte directory's name cut to 63 bytes and "...", no file under it deleted
DCUT="$MNT/${D:0:63}.../"
is "$(jq --arg d "$DCUT" '[.files[] | select(.path | startswith($d))] | "\(length) \(map(.deleted_inodes) | add)"' -r "$TMPD/ij.out")" "8 0" \
	"iolayer --json: the 8 files under the 80-byte directory are under '.../${D:0:20}...(63 bytes)...', none deleted"
# and in a short directory: the live 'alive (deleted)' against a file unlinked while open
mkdir "$MNT/s"
wl_launch "$TMPD/wl2.out" "$WL/write_fsync" -g "$TMPD/go" -u "$MNT/s/gone" "$MNT/s/alive (deleted)"
tool_start "$TMPD/it.out" "$TMPD/it.err" $IOL --top 0 -d 600 -p "$WL_PID" || diag "iolayer (text) did not start"
PIT=$TOOL_PID
tool_start "$TMPD/ij2.out" "$TMPD/ij2.err" $IOL --json --top 0 -d 600 -p "$WL_PID" || diag "iolayer --json did not start"
PIJ=$TOOL_PID
wl_go
for p in $PIT $PIJ; do TOOL_PID=$p; tool_stop; done
is "$(jq -c --arg f "$MNT/s/alive (deleted)" '[.files[] | select(.path == $f) | .deleted_inodes]' "$TMPD/ij2.out") $(jq -c --arg f "$MNT/s/gone (deleted)" '[.files[] | select(.path == $f) | .deleted_inodes]' "$TMPD/ij2.out")" \
	"[0] [1]" "iolayer --json: the live 'alive (deleted)' is a file with no deleted inode, 'gone (deleted)' one deleted"
# its files table's rows end in the path (rows of the process table end in its top file)
itend() { E=" $1" awk 'BEGIN {e = ENVIRON["E"]} /^top files:/ {t = 1} t && length($0) >= length(e) && substr($0, length($0) - length(e) + 1) == e' "$TMPD/it.out" | wc -l; }
is "$(itend "$MNT/s/alive\\x20(deleted)") $(grep -c '/alive (deleted)$' "$TMPD/it.out") $(itend "$MNT/s/gone (deleted)")" "1 0 1" \
	"iolayer text: the live file's row reads alive\\x20(deleted), never a deleted 'alive'; the unlinked one's 'gone (deleted)'"
# U+202E: escaped in text, its bytes kept in CSV and JSON
is "$(tend "$MNT/$D/bidi-\\xe2\\x80\\xae-txt") $(grep -c $'\xe2\x80\xae' "$TMPD/t.out") $(count "$TMPD/jw" "$BIDI") $(count "$TMPD/cw" "$BIDI")" \
	"3 0 1 1" "U+202E: text shows it as \\xe2\\x80\\xae in 3 rows and never raw; JSON and CSV keep its bytes"
done_testing
