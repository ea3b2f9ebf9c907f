#!/usr/bin/env bash
# Names of any bytes (ESC and OSC sequences, \n, \r, \t, comma, double quote, backslash, the
# bytes 0xff 0xfe), in file names and in the comm of the process writing them: fsslower's and
# writeback-ret's text holds no raw control byte, one row per event; --csv is strict UTF-8
# with no control byte and reads back with Python's csv module as one record per event, its
# names unescaped to their bytes; every --json line is strict UTF-8 and JSON, and
# each name decodes back to its original bytes (KEY_b64 when present, else KEY).
source "$(dirname "$0")/lib.sh"
require_root
require_cmd python3 python3
plan 36

loop_ext4_setup
D=$MNT/h
mkdir "$D"
FS=$(tool fsslower)
WB=$(tool writeback-ret)

# check.py KIND OUT WORKLOAD_OUT DIR PID: prints "KEY VALUE" answers about one tool's output.
# The workload prints the comm and every name in hex: the expected bytes come from there.
cat >"$TMPD/check.py" <<'EOF'
import base64, collections, csv, io, json, sys

kind, out, wl, d, pid = sys.argv[1:6]
comm, names = None, []
for line in open(wl):
    k, _, v = line.strip().partition(" ")
    if k == "comm":
        comm = bytes.fromhex(v)
    elif k == "name":
        names.append(bytes.fromhex(v))
raw = open(out, "rb").read()

def esc(b):  # the text form: \n \t \r \\ by name, other control and invalid bytes as \xhh
    named = {0x0a: b"\\n", 0x09: b"\\t", 0x0d: b"\\r", 0x5c: b"\\\\"}
    return b"".join(named.get(c, b"\\x%02x" % c if c < 0x20 or c >= 0x7f else bytes([c])) for c in b)

def column(b, width=16):  # the COMM column: escapes whole, cut with "..." to width columns
    out, safe = b"", b""
    for c in b:
        p = esc(bytes([c]))
        if len(out) + len(p) > width:
            return safe + b"..."
        out += p
        if len(out) + 3 <= width:
            safe = out
    return out

def answer(key, value):
    print(key, value)

def names_ok(got, want, each):
    """got holds each name of want exactly `each` times, and nothing else."""
    got = collections.Counter(got)
    return "ok" if got == collections.Counter({w: each for w in want}) else "got %r" % sorted(got.items())

def text_answers(raw):
    """control_bytes (raw ones but the newline) and utf8 of a tool's text."""
    answer("control_bytes", sum(1 for c in raw if (c < 0x20 and c != 0x0a) or c == 0x7f))
    try:
        raw.decode("utf-8", "strict")
        answer("utf8", "ok")
    except UnicodeDecodeError as e:
        answer("utf8", e)

paths = [d.encode() + b"/" + n for n in names]  # the full path, as fsslower and writeback-ret print it

if kind in ("fs-text", "wb-text"):
    text_answers(raw)
    lines = [l for l in raw.split(b"\n") if len(l.split()) > 3 and l.split()[2] == pid.encode()]
    rows = [l.split() for l in lines]
    answer("rows", len(rows))
    answer("comm", "ok" if rows and all(r[1] == column(comm) for r in rows) else "got %r" % rows[:1])
    # TIME, COMM (16 columns), then PID: left-aligned at 26 (fsslower), right-aligned to 33
    at = (lambda l: l[26:33].rstrip()) if kind == "fs-text" else (lambda l: l[26:33].lstrip())
    answer("aligned", "ok" if lines and all(at(l) == pid.encode() for l in lines) else "got %r" % lines[:1])
    if kind == "fs-text":  # O, W and F rows of each file
        answer("names", names_ok([r[-1] for r in rows], [esc(p) for p in paths], 3))
    else:  # writeback-ret: one ext4_writepages per fsync
        answer("names", names_ok([r[-1] for r in rows], [esc(p) for p in paths], 1))
elif kind == "iol-text":
    text_answers(raw)
    answer("comm_escaped", raw.count(esc(comm)))
elif kind == "iol-json":
    try:
        doc = json.loads(raw.decode("utf-8", "strict"))
        answer("json", "ok")
    except ValueError as e:
        doc = None
        answer("json", "bad")

    def b64s(o):
        if isinstance(o, dict):
            for k, v in o.items():
                if k.endswith("_b64") and isinstance(v, str):
                    yield k, base64.b64decode(v, validate=True)
                else:
                    yield from b64s(v)
        elif isinstance(o, list):
            for v in o:
                yield from b64s(v)
    got = list(b64s(doc))
    answer("comm_b64", sum(1 for k, v in got if k == "comm_b64" and v == comm))
    answer("names_b64", len(set(v for k, v in got if v in paths)))
elif kind == "fs-csv":
    # strict UTF-8, no control byte but the records' newlines: names escaped as on a
    # terminal, which reverses (unesc) to their bytes
    answer("csv_utf8", "ok" if not any(c < 0x20 and c != 0x0a for c in raw) else "control bytes")
    text = raw.decode("utf-8", "strict")

    def unesc(f):
        out, i, b = bytearray(), 0, f.encode()
        while i < len(b):
            if b[i:i + 1] == b"\\":
                c = b[i + 1:i + 2]
                if c == b"x":
                    out.append(int(b[i + 2:i + 4], 16))
                    i += 4
                    continue
                out += {b"n": b"\n", b"t": b"\t", b"r": b"\r", b"\\": b"\\"}[c]
                i += 2
                continue
            out.append(b[i])
            i += 1
        return bytes(out)
    recs = list(csv.reader(io.StringIO(text, newline="")))
    head = recs[0]
    answer("header", "ok" if head[:3] == ["time", "comm", "pid"] and head[-1] == "file" else head)
    ev = recs[1:]
    answer("records", len(ev))
    answer("fields", "ok" if ev and all(len(r) == len(head) for r in ev) else
           ",".join(sorted(set(str(len(r)) for r in ev))))
    ev = [r for r in ev if len(r) == len(head)]
    answer("comm", "ok" if ev and all(unesc(r[1]) == comm for r in ev) else "got %r" % ev[:1])
    answer("names", names_ok([unesc(r[-1]) for r in ev], paths, 3))
elif kind in ("fs-json", "wb-json"):
    bad, objs = 0, []
    for line in raw.split(b"\n")[:-1]:
        try:
            objs.append(json.loads(line.decode("utf-8", "strict")))
        except ValueError:
            bad += 1
    answer("bad_lines", bad)
    ev = [o for o in objs if "comm" in o]

    def name(o, k):
        return base64.b64decode(o[k + "_b64"], validate=True) if k + "_b64" in o else o[k].encode()

    answer("events", len(ev))
    answer("comm", "ok" if ev and all(name(o, "comm") == comm for o in ev) else "got %r" % ev[:1])
    answer("names", names_ok([name(o, "file") for o in ev], paths, 3 if kind == "fs-json" else 1))
    # a name that is valid UTF-8 has no _b64 twin
    answer("b64_only_when_needed", "ok" if ev and all(("file_b64" in o) == (b"\xff" in name(o, "file"))
                                                       for o in ev) else "no")
EOF

# run_tool OUT ARGS...: the workload held at its start, the tool on its pid, then the workload
# writes and fsyncs its 10 files and exits. Sets RC (the tool's exit status).
run_tool() {
	local out=$1; shift
	rm -f "$D"/*
	wl_launch "$TMPD/wl.out" "$WL/hostile_names" -g "$TMPD/go" "$D"
	tool_start "$out" "$out.err" "$@" -p "$WL_PID" || { RC=fail; return; }
	wl_go
	tool_stop
	RC=$TOOL_RC
	[ "$RC" = 0 ] || { diag "exit $RC: $*"; diag_file "$out.err"; }
	[ "$WL_RC" = 0 ] || diag "workload exit $WL_RC"
}
# answers KIND OUT: the checker's answers, as shell variables A_<key>
answers() {
	local k v
	while read -r k v; do printf -v "A_$k" '%s' "$v"; done < <(python3 "$TMPD/check.py" "$1" "$2" "$TMPD/wl.out" "$D" "$WL_PID")
}

# 1. fsslower text: 10 files x (open, write, fsync) = 30 rows, escaped
run_tool "$TMPD/t.out" $FS -m 0
is "$RC" 0 "fsslower text: exit 0"
answers fs-text "$TMPD/t.out"
is "$A_control_bytes" 0 "fsslower text: no raw control byte"
is "$A_utf8" ok "fsslower text: valid UTF-8 (0xff 0xfe shown as \\xff\\xfe)"
is "$A_rows" 30 "fsslower text: 30 rows, one line each (no name splits a row)"
is "$A_comm" ok "fsslower text: COMM escaped (hn\\x1b[1m\\n\\t,\"\\\\\\xff), cut to its 16 columns: hn\\x1b[1m\\n\\t..."
is "$A_aligned" ok "fsslower text: PID where the header puts it, after the hostile COMM"
is "$A_names" ok "fsslower text: each of the 10 names escaped, in 3 rows (O, W, F)"
diag "text: $(grep -c "nl-a\\\\nb" "$TMPD/t.out") rows name nl-a\\nb"

# 2. fsslower --csv
run_tool "$TMPD/c.out" $FS -m 0 --csv
is "$RC" 0 "fsslower --csv: exit 0"
answers fs-csv "$TMPD/c.out"
is "$A_header" ok "--csv: a header record (time,comm,pid,...,file)"
is "$A_records" 30 "--csv: Python's csv reads 30 records, one per event"
is "$A_fields" ok "--csv: every record has as many fields as the header"
is "$A_csv_utf8" ok "--csv: strict UTF-8, no control byte (names escaped as on a terminal)"
is "$A_comm" ok "--csv: comm reads back, unescaped, as the original bytes"
is "$A_names" ok "--csv: each file name reads back, unescaped, as its original bytes, 3 times"

# 3. fsslower --json
run_tool "$TMPD/j.out" $FS -m 0 --json
is "$RC" 0 "fsslower --json: exit 0"
answers fs-json "$TMPD/j.out"
is "$A_bad_lines" 0 "--json: every line is strict UTF-8 and parses with json.loads"
is "$A_events" 30 "--json: 30 event objects"
is "$A_comm" ok "--json: comm decodes back to the original bytes (comm_b64)"
is "$A_names" ok "--json: each file name decodes back to its original bytes (file_b64, else file)"
is "$A_b64_only_when_needed" ok "--json: file_b64 only for names that are not UTF-8"

# 4. writeback-ret: one ext4_writepages per fsync, the file's own name
run_tool "$TMPD/w.out" $WB
is "$RC" 0 "writeback-ret text: exit 0"
answers wb-text "$TMPD/w.out"
is "$A_control_bytes" 0 "writeback-ret text: no raw control byte"
is "$A_rows" 10 "writeback-ret text: 10 rows, one line each"
is "$A_aligned" ok "writeback-ret text: PID where the header puts it, after the hostile COMM"
is "$A_names" ok "writeback-ret text: each of the 10 paths escaped"
run_tool "$TMPD/wj.out" $WB --json
answers wb-json "$TMPD/wj.out"
is "$A_bad_lines" 0 "writeback-ret --json: every line is strict UTF-8 and JSON"
is "$RC" 0 "writeback-ret --json: exit 0"
is "$A_events" 10 "writeback-ret --json: 10 rows"
is "$A_comm" ok "writeback-ret --json: comm decodes back to the original bytes"
is "$A_names" ok "writeback-ret --json: each path decodes back to its original bytes"

# 5. iolayer, the hostile process beside a neighbour on the same disk (one fsync loop): its
# text holds no raw byte of the hostile comm or names wherever they show (the verdict, the
# tables, the neighbour's "by" list of the disk's submitters), its JSON decodes them back
IOL=$(tool iolayer)
# run_iolayer OUT TARGET ARGS...: both workloads held, iolayer -p on TARGET (hostile|neighbour)
run_iolayer() {
	local out=$1 target=$2 nb; shift 2
	rm -f "$D"/* "$MNT/nb.dat"
	wl_launch "$TMPD/wl.out" "$WL/hostile_names" -g "$TMPD/go" "$D"
	"$WL/fsync_loop" -n 300 -g "$TMPD/go" "$MNT/nb.dat" >"$TMPD/nb.out" 2>&1 &
	nb=$!
	at_exit "kill -9 $nb"
	until grep -q '^pid ' "$TMPD/nb.out" 2>/dev/null; do sleep 0.05; done
	[ "$target" = hostile ] && target=$WL_PID || target=$nb
	tool_start "$out" "$out.err" $IOL -p "$target" "$@" || { RC=fail; return; }
	wl_go
	wait "$nb"
	tool_stop
	RC=$TOOL_RC
	[ "$RC" = 0 ] || { diag "exit $RC: $*"; diag_file "$out.err"; }
}
run_iolayer "$TMPD/i.out" neighbour
is "$RC" 0 "iolayer -p NEIGHBOUR: exit 0"
answers iol-text "$TMPD/i.out"
is "$A_control_bytes" 0 "iolayer -p NEIGHBOUR text: no raw control byte (the disk's submitters listed escaped)"
is "$A_utf8" ok "iolayer -p NEIGHBOUR text: valid UTF-8"
run_iolayer "$TMPD/ih.out" hostile
answers iol-text "$TMPD/ih.out"
[ "$A_control_bytes" = 0 ] && [ "${A_comm_escaped:-0}" -ge 1 ]
ok $? "iolayer -p HOSTILE text: its comm escaped ($A_comm_escaped times), no raw control byte ($A_control_bytes)"
run_iolayer "$TMPD/ij.out" hostile --json --top 0  # every file: those not UTF-8 among them
answers iol-json "$TMPD/ij.out"
is "$A_json" ok "iolayer -p HOSTILE --json: strict UTF-8 and JSON"
[ "${A_comm_b64:-0}" -ge 1 ] && [ "${A_names_b64:-0}" -ge 1 ]
ok $? "iolayer --json: comm_b64 decodes to the comm ($A_comm_b64), *_b64 names to paths ($A_names_b64)"
done_testing
