#!/usr/bin/env python3
"""The report of tools/bench: reads the records it wrote (one tab-separated record a line),
prints the report and writes it as Markdown to OUT ("-": print only).

    bench_report.py DATA OUT

Statistics: per round, a value of one tracer is set against the same round's untraced run
(or floor, or peer); the report gives the median of those per-round ratios, so load that
other users of the machine put on one round weighs on every column of that round alike.
"""
import collections
import re
import statistics
import sys

# ---- reading -----------------------------------------------------------------------------


def read(path):
    recs = collections.defaultdict(list)
    with open(path) as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if fields and fields[0]:
                recs[fields[0]].append(fields[1:])
    return recs


# The tracepoint a program runs on: from its perf event (bpftrace), else from its name.
HOOK_BY_NAME = [
    (r"^fs_sys_(enter|exit)_ca(st)?$", r"raw sys_\1"),  # the _cast twins (15-char names)
    (r"^fs_sys_(enter|exit)_(\w+)$", r"sys_\1_\2"),
    (r"^fs_sys_(enter|exit)$", r"raw sys_\1"),
    (r"^fs_tp_(ext4_sync_file_(enter|exit))$", r"\1"),
    (r"^(?:btf|raw)_rq_(insert|issue|complete)$", r"block_rq_\1"),
    (r"^iw_switch_(?:btf|raw)$", "sched_switch"),
    (r"^wb_ext4_wpr_(?:btf|raw)$", "ext4_writepages_result"),
    (r"^wb_ext4_wp_(?:btf|raw)$", "ext4_writepages"),
    (r"^wb_wsi_start_(?:btf|raw)$", "writeback_single_inode_start"),
    (r"^wb_wsi_(?:btf|raw)$", "writeback_single_inode"),
    (r"^who_bio_(?:btf|raw)$", "block_bio_queue"),
    (r"^floor_(switch|waking|wakeup)$", r"sched_\1"),  # raw_floor -s
    (r"^(block_rq_\w+?|sched_switch)(?:_btf|_raw)?$", r"\1"),
]


def hook_of(name, perf_hook):
    if perf_hook in ("sys_enter", "sys_exit"):  # raw_syscalls' (bpftool perf show names them so)
        return "raw " + perf_hook
    if perf_hook and perf_hook != "-":
        return perf_hook
    for pat, rep in HOOK_BY_NAME:
        if re.match(pat, name):
            return re.sub(pat, rep, name)
    return name


METHOD_BY_TYPE = {"tracing": "tp_btf", "raw_tracepoint": "raw_tp", "tracepoint": "tracepoint",
                  "kprobe": "kprobe"}


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt_ns(v):
    return "-" if v is None else f"{v:,.0f}"


def fmt_x(v):
    return "-" if v is None else f"{v:.2f}x"


def table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


# ---- (a) BPF time per call ---------------------------------------------------------------

# Per session and phase: the hooks of the hot path, the one that counts the unit, the unit.
PHASES = {
    ("fs", "pwrite-ext4"): (["sys_enter_pwrite64", "sys_exit_pwrite64", "raw sys_enter", "raw sys_exit"],
                            "sys_exit_pwrite64",
                            "call pair",
                            "64-byte pwrite64 loop on ext4 (files fsslower reports)"),
    ("fs", "pwrite-tmpfs"): (["sys_enter_pwrite64", "sys_exit_pwrite64", "raw sys_enter", "raw sys_exit"],
                             "sys_exit_pwrite64",
                             "call pair",
                             "64-byte pwrite64 loop on tmpfs (a file fsslower does not report)"),
    # every block hook any tracer attaches: following bios (biosnoop, iolayer, biolatency on a
    # bio-based disk) runs programs on the bio tracepoints too, part of the cost per request
    ("block", "direct-write"): (["block_rq_insert", "block_rq_issue", "block_rq_complete",
                                 "block_bio_queue", "block_getrq", "block_bio_backmerge",
                                 "block_bio_frontmerge", "block_rq_merge", "block_split",
                                 "block_bio_remap", "block_rq_remap", "block_rq_requeue",
                                 "block_bio_complete", "wbt_step", "iocost_iocg_activate",
                                 "iomap_dio_rw_begin", "iomap_dio_complete"],
                                "block_rq_complete", "request",
                                "4 KiB O_DIRECT writes to a loop device"),
    ("sched", "pingpong"): (["sched_switch"], "sched_switch", "switch",
                            "pipe ping-pong (context switches, no I/O wait: the common case)"),
    ("sched", "direct-read"): (["sched_switch"], "sched_switch", "switch",
                               "4 KiB O_DIRECT reads (every sleep an I/O wait)"),
    ("sched", "mixed"): (["sched_switch"], "sched_switch", "switch",
                         "the ping-pong and the O_DIRECT reads at once (mixed)"),
    ("wb", "write-fdatasync"): (["sys_enter_pwrite64", "sys_exit_pwrite64", "sys_enter_fdatasync",
                                 "sys_exit_fdatasync", "raw sys_enter", "raw sys_exit",
                                 "ext4_sync_file_enter", "ext4_sync_file_exit",
                                 "ext4_writepages", "ext4_writepages_result"],
                                "sys_exit_fdatasync", "write+fdatasync",
                                "4 KiB pwrite + fdatasync loop on ext4"),
}


# Tracers that print a row per event, compared only with each other (the others keep counts).
JOB = {"biosnoop": "rows", "lt-biosnoop": "rows", "bt-biosnoop-peer": "rows"}

PLURAL = {"switch": "switches", "write+fdatasync": "write+fdatasync pairs"}


def windows(recs):
    """{(session, round, phase): {tracer: {hook: [ns, cnt]}}} and the program types seen per
    tracer, from the differences between consecutive snapshots of a session round."""
    snaps = collections.OrderedDict()
    for s, r, ph, tr, pid, name, typ, hook, ns, cnt in recs["snap"]:
        snaps.setdefault((s, r), collections.OrderedDict()).setdefault(ph, {})[(tr, pid)] = (
            name, typ, hook, int(ns), int(cnt))
    off = {tuple(x[:3]) for x in recs["stats_off"]}
    out, types = {}, collections.defaultdict(set)
    for (s, r), phases in snaps.items():
        prev = None
        for ph, progs in phases.items():
            if prev is not None and (s, r, ph) not in off:
                w = out.setdefault((s, r, ph), {})
                for key, (name, typ, hook, ns, cnt) in progs.items():
                    if key not in prev:
                        continue
                    _, _, _, ns0, cnt0 = prev[key]
                    h = hook_of(name, hook)
                    d = w.setdefault(key[0], {}).setdefault(h, [0, 0])
                    d[0] += ns - ns0
                    d[1] += cnt - cnt0
                    if cnt > cnt0:
                        types[key[0]].add(METHOD_BY_TYPE.get(typ, typ))
            prev = progs
    return out, types


def section_a(recs, labels, roles, methods):
    win, _ = windows(recs)
    lines = ["## (a) BPF time per call",
             "",
             "Each program's `run_time_ns / run_cnt` (kernel.bpf_stats_enabled) while the tool, "
             "its peers and the floor are attached at the same time to the same events, medians "
             "of the rounds (their start order rotated from round to round, as the first program "
             "on a hook pays for cold caches). *Per unit* is the time of all the tracer's programs "
             "on the listed hooks divided by the number of units (call pairs, requests, switches) "
             "the floor counted; *x floor* and *x peer* are medians of per-round ratios. The "
             "floor is an empty bpftrace program on each hook (a perf-event tracepoint program). "
             "Two more floors give what any tracer doing the job pays at the least on this "
             "machine: for a call's latency, one clock read (bpf_ktime_get_ns) in a raw "
             "tracepoint program on each side; for an I/O sleep's stack, a bpftrace program that "
             "counts a kernel stack at every switch into D state and does nothing else. "
             "fsslower and iolayer take the syscalls at *raw sys_enter* and *raw sys_exit* "
             "(raw_syscalls:sys_enter/exit, one BTF tracepoint program each, run by every syscall "
             "of the machine and told apart by number): their ns per call there is over every "
             "syscall made during the round, and their time per unit counts all of it."]
    summary = {}
    for (s, ph), (hooks, primary, unit, title) in PHASES.items():
        rounds = sorted({r for (s2, r, ph2) in win if s2 == s and ph2 == ph})
        if not rounds:
            continue
        tracers = []
        for x in recs["session"]:
            if x[0] == s and x[1] not in tracers:
                tracers.append(x[1])
        per_unit = collections.defaultdict(dict)  # tracer -> round -> ns per unit
        per_call = collections.defaultdict(lambda: collections.defaultdict(list))
        units = []
        for r in rounds:
            w = win[(s, r, ph)]
            n = None
            for tr in tracers:
                if roles.get(tr) == "floor" and tr in w and w[tr].get(primary, [0, 0])[1] > 0:
                    n = w[tr][primary][1]
            if n is None:
                n = max((w[tr].get(primary, [0, 0])[1] for tr in w), default=0)
            if not n:
                continue
            units.append(n)
            for tr in tracers:
                if tr not in w:
                    continue
                tot = 0
                for h in hooks:
                    ns, cnt = w[tr].get(h, [0, 0])
                    tot += ns
                    if cnt:
                        per_call[tr][h].append(ns / cnt)
                per_unit[tr][r] = tot / n
        used = [h for h in hooks if any(per_call[tr][h] for tr in tracers)]
        floor = [tr for tr in tracers if roles.get(tr) == "floor"]
        rows = []
        for tr in tracers:
            if tr in recs_unavailable(recs):
                rows.append([labels[tr], roles[tr], "cannot run here: " + recs_unavailable(recs)[tr]]
                            + [""] * (len(used) + 2))
                continue
            if tr not in per_unit:
                continue
            vf = med([per_unit[tr][r] / per_unit[floor[0]][r] for r in per_unit[tr]
                      if floor and per_unit[floor[0]].get(r)]) if floor and tr not in floor else None
            rows.append([labels[tr], roles[tr], methods.get(tr, "-")]
                        + [fmt_ns(med(per_call[tr][h])) for h in used]
                        + [fmt_ns(med(per_unit[tr].values())), fmt_x(vf)])
            summary[(s, ph, tr)] = per_unit[tr]
        lines += ["", f"### {title}", "",
                  f"{fmt_ns(med(units))} {PLURAL.get(unit, unit + 's')} a round, {len(rounds)} rounds; "
                  "ns per call of each hook.",
                  "",
                  table(["tracer", "role", "attach"] + [f"{h} ns" for h in used]
                        + [f"per {unit} ns", "x floor"], rows)]
        # the tool against each peer doing its job, per round
        for tr in tracers:
            if roles.get(tr) != "tool" or tr not in per_unit:
                continue
            for p in tracers:
                if roles.get(p) != "peer" or p not in per_unit or JOB.get(tr) != JOB.get(p):
                    continue
                v = med([per_unit[tr][r] / per_unit[p][r] for r in per_unit[tr] if per_unit[p].get(r)])
                summary[(s, ph, tr, p)] = v
        pairs = [f"{labels[tr]} / {labels[p]}: {fmt_x(summary[(s, ph, tr, p)])}"
                 for tr in tracers for p in tracers if (s, ph, tr, p) in summary]
        if pairs:
            lines += ["", "Per " + unit + ", tool against peer (median of per-round ratios): "
                      + "; ".join(pairs) + "."]
    return lines, summary


def prog_windows(recs, tracer):
    """{(session, round, phase): {program: [hook, ns, cnt]}} of one tracer's programs, from the
    differences between consecutive snapshots of a session round (as windows(), by program)."""
    snaps = collections.OrderedDict()
    for s, r, ph, tr, pid, name, typ, hook, ns, cnt in recs["snap"]:
        if tr == tracer:
            snaps.setdefault((s, r), collections.OrderedDict()).setdefault(ph, {})[name] = (
                hook_of(name, hook), int(ns), int(cnt))
    off = {tuple(x[:3]) for x in recs["stats_off"]}
    out = {}
    for (s, r), phases in snaps.items():
        prev = None
        for ph, progs in phases.items():
            if prev is not None and (s, r, ph) not in off:
                w = out.setdefault((s, r, ph), {})
                for name, (hook, ns, cnt) in progs.items():
                    if name in prev:
                        w[name] = [hook, ns - prev[name][1], cnt - prev[name][2]]
            prev = progs
    return out


def section_a_progs(recs, roles):
    """Where iolayer's time goes (issue 25): each of its programs' ns per run and runs per unit
    in every phase of section (a), the units counted as there (by the floor's program on the
    phase's primary hook)."""
    win, pw = windows(recs)[0], prog_windows(recs, "iolayer")
    lines = ["## (a2) Where iolayer's time goes, program by program",
             "",
             "From the same statistics as (a): each of iolayer's programs that ran in a phase, "
             "its ns per run (median of the rounds), its runs per unit (the units the floor "
             "counted) and so its ns per unit, largest first. The raw_syscalls programs run for "
             "every syscall of the machine, so their runs per unit include other processes'. "
             "A program that costs much per unit is the hook to work on."]
    for (s, ph), (hooks, primary, unit, title) in PHASES.items():
        per = collections.defaultdict(lambda: {"ns": [], "runs": [], "unit": []})
        hookname = {}
        n_rounds = 0
        for (s2, r, ph2), progs in sorted(pw.items()):
            if (s2, ph2) != (s, ph):
                continue
            w = win.get((s, r, ph), {})
            n = None
            for tr, hs in w.items():
                if roles.get(tr) == "floor" and hs.get(primary, [0, 0])[1] > 0:
                    n = hs[primary][1]
            if n is None:
                n = max((hs.get(primary, [0, 0])[1] for hs in w.values()), default=0)
            if not n:
                continue
            n_rounds += 1
            for name, (hook, ns, cnt) in progs.items():
                if cnt <= 0:
                    continue
                hookname[name] = hook
                per[name]["ns"].append(ns / cnt)
                per[name]["runs"].append(cnt / n)
                per[name]["unit"].append(ns / n)
        if not per:
            continue
        lines += ["", f"### {title}", "", f"{n_rounds} rounds.", "", prog_table(per, hookname, unit)]
    return lines, {}


def prog_table(per, hookname, unit):
    """The table of section_a_progs(): per {program: {"ns": [ns per run], "runs": [runs per
    unit], "unit": [ns per unit]}} (one value a round), largest ns per unit first."""
    total = sum(med(v["unit"]) for v in per.values())
    rows = []
    for name, v in sorted(per.items(), key=lambda kv: -med(kv[1]["unit"])):
        u = med(v["unit"])
        rows.append([f"`{name}`", hookname[name], fmt_ns(med(v["ns"])), f"{med(v['runs']):.2f}",
                     fmt_ns(u), f"{100 * u / total:.0f} %" if total else "-"])
    rows.append(["all", "", "", "", fmt_ns(total), "100 %"])
    return table(["program", "hook", "ns per run", f"runs per {unit}", f"ns per {unit}", "share"], rows)


# ---- (e) end to end ------------------------------------------------------------------------

E_TITLE = {"fio": ("fio: 4 KiB random direct writes through io_uring, iodepth 32, 2 jobs, "
                   "on the raw loop device", "I/O", "IOPS"),
           "pwrite": ("64-byte pwrite64 loop on ext4, one thread", "call", "calls/s")}


def section_e(recs, labels, roles, methods):
    """Each workload's rate under each tracer as a share of the same round's untraced rate,
    and the tracer's CPU per 100,000 operations (its BPF programs' run_time_ns from the
    snapshots around the run, plus its process's user+system time)."""
    win, _ = windows(recs)
    lines = ["## (e) End to end (issue 25)",
             "",
             "Each workload for a fixed time, untraced and under each tracer in turn, the order "
             "rotated from round to round, with kernel.bpf_stats_enabled off as a user runs (the "
             "statistics read the clock twice around every program run: a tracer with a dozen "
             "programs an I/O pays for them a dozen times). *Share*: the run's rate over the "
             "same round's untraced rate, median of the rounds (range). *CPU per 100,000*: from "
             "one more run of each tracer with the statistics on, its BPF programs' run time "
             "plus its own process's user+system time, per 100,000 operations. The BPF time is "
             "spent in the workload's threads and in the loop device's worker, on the same two "
             "CPUs; iolayer's programs on raw_syscalls also run for every other process's "
             "syscalls. The floor is empty programs: on the block layer's issue and completion "
             "(the peers' hooks) for fio, on raw_syscalls (iolayer's hooks) for pwrite64."]
    out = {}
    for w, (title, op, rate_name) in E_TITLE.items():
        conf = []
        for x in recs["econf"]:
            if x[0] == w and x[1] not in conf:
                conf.append(x[1])
        runs = collections.defaultdict(dict)  # round -> tracer -> rate
        for w2, r, tr, ops, secs, cpu in recs["e2e"]:
            if w2 != w or not float(secs) or not int(ops):
                continue
            runs[r][tr] = int(ops) / float(secs)
        cpus = {}  # tracer -> CPU ns per 100k, from its run with the statistics on
        for w2, r, tr, ops, secs, cpu in recs["e2ecpu"]:
            if w2 != w or not int(ops):
                continue
            bpf = sum(ns for ns, cnt in win.get((f"e2e-{w}", r, "run"), {}).get(tr, {}).values())
            cpus[tr] = (bpf + int(cpu)) * 1e5 / int(ops)
        if not runs:
            continue
        rows = []
        for tr in conf:
            if tr in recs_unavailable(recs):
                rows.append([labels.get(tr, tr), roles.get(tr, "-"),
                             "cannot run here: " + recs_unavailable(recs)[tr], "", "", "", ""])
                continue
            rates = [runs[r][tr] for r in runs if tr in runs[r]]
            if not rates:
                continue
            shares = [runs[r][tr] / runs[r]["untraced"] for r in runs
                      if tr in runs[r] and "untraced" in runs[r]]
            rng = f"{100 * min(shares):.0f}-{100 * max(shares):.0f} %" if shares else "-"
            sh = med(shares)
            out[(w, tr)] = sh
            rows.append([labels.get(tr, tr), roles.get(tr, "-"), methods.get(tr, "-"),
                         fmt_ns(med(rates)), "-" if sh is None else f"{100 * sh:.0f} %", rng,
                         "-" if tr not in cpus else f"{cpus[tr] / 1e6:,.1f} ms"])
        lines += ["", f"### {title}", "", f"{len(runs)} rounds.", "",
                  table(["tracer", "role", "attach", rate_name, "share of untraced", "range",
                         f"CPU per 100,000 {op}s"], rows)]
        # where iolayer --serve's time went in these runs, program by program
        pw, ops = prog_windows(recs, "iolayer-serve"), {}
        for w2, r, tr, n, secs, cpu in recs["e2ecpu"]:
            if w2 == w and tr == "iolayer-serve":
                ops[r] = int(n)
        per = collections.defaultdict(lambda: {"ns": [], "runs": [], "unit": []})
        hookname = {}
        for (s, r, ph), progs in pw.items():
            if s != f"e2e-{w}" or ph != "run" or not ops.get(r):
                continue
            for name, (hook, ns, cnt) in progs.items():
                if cnt > 0:
                    hookname[name] = hook
                    per[name]["ns"].append(ns / cnt)
                    per[name]["runs"].append(cnt / ops[r])
                    per[name]["unit"].append(ns / ops[r])
        if per:
            lines += ["", f"iolayer --serve's programs in its run with the statistics on (programs that ran less than "
                      f"once per 100 {op}s left out of the table, not of *all*):", ""]
            tab = prog_table(per, hookname, op).split("\n")
            lines += [r for r in tab if not re.match(r"^\| `.*\| 0\.00 \|", r)]
    return lines, out


_unavail = None


def recs_unavailable(recs):
    global _unavail
    if _unavail is None:
        _unavail = {x[0]: x[2] for x in recs["unavailable"]}
    return _unavail


# ---- (b) slowdown --------------------------------------------------------------------------

B_TITLES = {
    "pwrite64": "64-byte pwrite64 loop on ext4",
    "pwrite64-tmpfs": "64-byte pwrite64 loop on tmpfs (not reported by fsslower)",
    "fdatasync": "4 KiB pwrite + fdatasync loop on ext4",
    "direct": "4 KiB O_DIRECT writes to a loop device",
    "pingpong": "pipe ping-pong, two processes on one CPU (per round: 2 switches)",
}


def section_b(recs, labels, roles, methods):
    walls = collections.defaultdict(dict)  # (w, conf) -> round -> ns per op
    cpus = collections.defaultdict(dict)  # (w, conf) -> round -> CPU ns per op
    for w, r, c, ops, wall, nsop, cpu in recs["wall"]:
        try:
            walls[(w, c)][r] = float(nsop)
            cpus[(w, c)][r] = float(cpu)
        except ValueError:
            pass
    lines = ["## (b) Wall-clock slowdown",
             "",
             "Each workload under each tracer, right after an untraced run of its own, in "
             "interleaved rounds (the order of the tracers rotated each round); *slowdown* is the "
             "median of the ratios of the traced run's time per operation to its untraced run's, "
             "with their range. *CPU*: the same for the user+system time the workload's processes "
             "took per operation, which the load of other users of the machine moves much less "
             "than the wall-clock time (but which leaves out what the tracer costs kernel threads, "
             "e.g. jbd2 and the loop worker, and time spent waiting). *ns per op*: medians; "
             "untraced: of all untraced runs."]
    confs = collections.OrderedDict()
    for w, c, role, label in recs["bconf"]:
        confs.setdefault(w, []).append(c)
    summary = {}
    for w, cs in confs.items():
        base_all = [v for c in cs for v in walls.get((w, "none:" + c), {}).values()]
        cpu_all = [v for c in cs for v in cpus.get((w, "none:" + c), {}).values()]
        if not base_all:
            continue
        rows = [["untraced", "-", "-", fmt_ns(med(base_all)), "1.00x", "", fmt_ns(med(cpu_all)), "1.00x"]]
        nrounds = 0
        for c in cs:
            if c in recs_unavailable(recs):
                rows.append([labels[c], roles[c], "cannot run here: " + recs_unavailable(recs)[c],
                             "", "", "", "", ""])
                continue
            vals, base = walls.get((w, c), {}), walls.get((w, "none:" + c), {})
            cv, cb = cpus.get((w, c), {}), cpus.get((w, "none:" + c), {})
            cratios = [cv[r] / cb[r] for r in cv if cb.get(r)]
            ratios = [vals[r] / base[r] for r in vals if base.get(r)]
            if not ratios:
                continue
            nrounds = max(nrounds, len(ratios))
            summary[(w, c)] = med(ratios)
            summary[(w, c, "cpu")] = med(cratios)
            rows.append([labels[c], roles[c], methods.get(c, "-"), fmt_ns(med(vals.values())),
                         fmt_x(med(ratios)), f"{min(ratios):.2f}-{max(ratios):.2f}",
                         fmt_ns(med(cv.values())), fmt_x(med(cratios))])
        lines += ["", f"### {B_TITLES.get(w, w)}", "",
                  f"{nrounds} rounds.", "",
                  table(["tracer", "role", "attach", "ns per op", "slowdown", "range", "CPU ns per op",
                         "CPU slowdown"], rows)]
    return lines, summary


# ---- (c) start-up and memory ----------------------------------------------------------------

def section_c(recs, labels):
    by = collections.OrderedDict()
    for t, r, ready, rss, status, exit_ns in recs["startup"]:
        by.setdefault(t, []).append((int(ready), int(rss), status, int(exit_ns)))
    rows, summary = [], {}
    for t, xs in by.items():
        ok = [x for x in xs if x[0] >= 0]
        ready = med([x[0] / 1e6 for x in ok])
        rss = med([x[1] / 1024 for x in ok if x[1] >= 0])
        ex = med([x[3] / 1e6 for x in ok if x[3] >= 0])
        summary[t] = (ready, rss)
        name = ("libbpf-tools biolatency" if t == "lt-biolatency" else
                t.replace(":nocache", " (first start: no CO-RE cache)")
                .replace(":serial", " (programs verified in turn: IOLAYER_SERIAL_LOAD)"))
        rows.append([name, "-" if ready is None else f"{ready:.0f}",
                     "-" if not ok else f"{min(x[0] for x in ok) / 1e6:.0f}-{max(x[0] for x in ok) / 1e6:.0f}",
                     "-" if rss is None else f"{rss:.1f}",
                     "-" if ex is None else f"{ex:.0f}",
                     f"{len(ok)}/{len(xs)}"])
    lines = ["## (c) Start-up and memory at rest",
             "",
             "From just before exec until the tool prints its \"Hit Ctrl-C\" line (read on a "
             "pseudo-terminal), VmRSS 2 s later, and the time from Ctrl-C to its exit (final "
             "summary and detaching), default options; medians of the rounds. A tool's "
             "first start on a kernel makes its CO-RE BTF cache (/var/cache/iolayer, "
             "bpftool gen min_core_btf); the rows \"first start\" run without it, as "
             "libbpf's search of all of vmlinux's BTF does. The tools verify their programs "
             "on worker threads, one per CPU; the row \"programs verified in turn\" runs "
             "with IOLAYER_SERIAL_LOAD, as libbpf alone does.",
             "",
             table(["tool", "start-up ms", "range ms", "RSS MB", "exit ms", "ready"], rows)]
    load = collections.OrderedDict()
    for prog, r, ms, insns in recs.get("loadstat", []):
        load.setdefault(prog, []).append((float(ms), int(insns)))
    if load:
        total = sum(med([x[0] for x in xs]) for xs in load.values())
        lrows = [[p, f"{med([x[0] for x in xs]):.1f}", f"{100 * med([x[0] for x in xs]) / total:.0f} %",
                  f"{max(x[1] for x in xs):,}"]
                 for p, xs in sorted(load.items(), key=lambda kv: -med([x[0] for x in kv[1]]))
                 if med([x[0] for x in xs]) >= 0.5]
        lines += ["",
                  "iolayer's programs at load, in turn on one thread (IOLAYER_SERIAL_LOAD and "
                  "IOLAYER_LOAD_STATS, medians of 3 starts): the load's time, the verifier's "
                  "mostly, and the instructions it walked; programs under 0.5 ms left out. "
                  f"All {len(load)}: {total:.0f} ms.",
                  "",
                  table(["program", "load ms", "share", "insns verified"], lrows)]
    return lines, summary


# ---- (d) events per second until loss -------------------------------------------------------

def section_d(recs):
    win, _ = windows({"snap": [x for x in recs["snap"] if x[0].startswith("loss-")],
                      "stats_off": recs["stats_off"]})
    rows, first_loss, best, best_step = [], None, 0, "-"
    for th, rate, ops, wall, rows_n, lost, cpu in recs["loss"]:
        ops, wall, rows_n, lost, cpu = int(ops), int(wall), int(rows_n), int(lost), int(cpu)
        secs = wall / 1e9
        w = win.get((f"loss-{th}-{rate}", "0", "run"), {}).get("fsslower-m0", {})
        pair = None
        ex = w.get("sys_exit_pwrite64", [0, 0])
        if not ex[1]:  # at raw_syscalls:sys_enter/exit: every syscall of the round
            ex = w.get("raw sys_exit", [0, 0])
        if ex[1]:
            pair = (w.get("sys_enter_pwrite64", w.get("raw sys_enter", [0, 0]))[0] + ex[0]) / ex[1]
        got = rows_n / secs
        step = f"{th} thread{'s' if th != '1' else ''}, " + ("unpaced" if rate == "0" else f"paced at {int(rate):,}/s")
        if lost == 0:
            if got > best:
                best, best_step = got, step
        elif first_loss is None:
            first_loss = f"{step} ({ops / secs:,.0f} calls/s)"
        rows.append([th, "unpaced" if rate == "0" else f"{int(rate):,}/s", f"{ops / secs:,.0f}",
                     f"{got:,.0f}", f"{lost:,}", f"{100 * lost / max(ops, 1):.1f} %",
                     f"{max(ops - rows_n - lost, 0):,}", fmt_ns(pair), f"{100 * cpu / wall:.0f} %"])
    lines = ["## (d) Events per second until loss",
             "",
             "`fsslower -m 0 --csv` (every call an event, rows written to a file in tmpfs) while "
             "the 64-byte pwrite64 loop runs paced at rising rates, then unpaced with more threads. "
             "*Received*: rows of the workload in the output; *lost*: fsslower's own counter "
             "(events lost: ring buffer full); *unaccounted*: calls neither received nor counted as "
             "lost; *CPU*: fsslower's user+system time over the run.",
             "",
             table(["threads", "pace", "calls/s", "received rows/s", "lost", "lost share",
                    "unaccounted", "BPF ns per pair", "fsslower CPU"], rows),
             "",
             f"Highest rate with nothing lost: {best:,.0f} events/s ({best_step}); "
             + (f"first loss: {first_loss}." if first_loss else "no loss at any rate tried.")]
    return lines, {"best": best, "first_loss": first_loss}


# ---- the targets ---------------------------------------------------------------------------

def ok(v, lim):
    return "-" if v is None else ("met" if v <= lim else "not met")


def a_unit(a, s, ph, tr):
    """The median over rounds of tracer tr's ns per unit in phase ph of session s (section (a))."""
    return med(a.get((s, ph, tr), {}).values()) if (s, ph, tr) in a else None


def targets(a, b, c):
    def unit(s, ph, tr):
        return a_unit(a, s, ph, tr)

    rows = []
    # beside each hot-path target, what any tracer doing the job pays at the least on this
    # machine: a clock read in a program on each side of a call; a kernel stack per sleep
    v, cf = unit("fs", "pwrite-ext4", "fsslower"), unit("fs", "pwrite-ext4", "raw-fs-clock-floor")
    rows.append(["fs tracepoint path, BPF ns per pwrite64 call pair (fsslower)", "<= 300 ns",
                 f"{fmt_ns(v)} (a clock read on each side: {fmt_ns(cf)})", ok(v, 300)])
    # the floor on fsslower's hooks (raw_syscalls) where it ran, else on the per-syscall ones
    for ph, tr, what in (("pwrite-tmpfs", "fsslower", "a file it does not report (tmpfs)"),
                         ("pwrite-ext4", "fsslower-p1", "a process outside -p")):
        v, f, rf = unit("fs", ph, tr), unit("fs", ph, "bt-fs-floor"), unit("fs", ph, "raw-fs-floor")
        base = rf or f
        rows.append([f"fs path, call pair on {what}", "close to the floor",
                     f"{fmt_ns(v)} (floor {fmt_ns(f)}; on raw_syscalls {fmt_ns(rf)})",
                     "-" if v is None or not base else f"{v / base:.1f}x floor"])
    v, vc = b.get(("pwrite64", "fsslower")), b.get(("pwrite64", "fsslower", "cpu"))
    fw, rw = b.get(("pwrite64", "bt-fs-floor")), b.get(("pwrite64", "raw-fs-floor"))
    cw = b.get(("pwrite64", "raw-fs-clock-floor"))
    rows.append(["64-byte pwrite64 loop under fsslower -m 10 (wall clock; CPU time)", "<= 1.3x",
                 f"{fmt_x(v)}; {fmt_x(vc)} (empty programs: {fmt_x(fw)} per-syscall, "
                 f"{fmt_x(rw)} raw_syscalls; a clock read on each side: {fmt_x(cw)})", ok(v, 1.3)])
    v, sf = unit("sched", "mixed", "iowaitstack"), unit("sched", "mixed", "bt-sched-stack-floor")
    rows.append(["sched_switch, BPF ns per switch, mixed load (iowaitstack)", "<= 300 ns",
                 f"{fmt_ns(v)} (a kernel stack per D-state sleep: {fmt_ns(sf)})", ok(v, 300)])
    v, f = unit("sched", "pingpong", "iowaitstack"), unit("sched", "pingpong", "bt-sched-floor")
    rows.append(["sched_switch, common case (ping-pong, no I/O wait)", "near the floor",
                 f"{fmt_ns(v)} (floor {fmt_ns(f)})", "-" if v is None or not f else f"{v / f:.1f}x floor"])
    v = a.get(("block", "direct-write", "biolatency", "lt-biolatency"))
    rows.append(["block, BPF ns per request: biolatency / libbpf-tools biolatency", "<= 0.6x",
                 fmt_x(v), ok(v, 0.6)])
    v = a.get(("block", "direct-write", "biosnoop", "bt-biosnoop-peer"))
    rows.append(["block, BPF ns per request: biosnoop / a bpftrace one-liner printing each request",
                 "-", fmt_x(v), "-"])
    for t in ("biolatency", "biosnoop", "fsslower", "iowaitstack", "writeback-ret", "iolayer"):
        ready, rss = c.get(t, (None, None))
        serial = c.get(t + ":serial", (None, None))[0]
        rows.append([f"{t} start-up", "<= 50 ms",
                     ("-" if ready is None else f"{ready:.0f} ms")
                     + ("" if serial is None else f" (programs verified in turn: {serial:.0f} ms)"),
                     ok(ready, 50)])
        rows.append([f"{t} RSS at rest", "<= 10 MB", "-" if rss is None else f"{rss:.1f} MB",
                     ok(rss, 10)])
    return ["## Targets (issue 14)", "",
            "Measured in this run against the targets; a benchmark never fails on them.", "",
            table(["what", "target", "measured", ""], rows)]


def targets_25(recs, a, c, e):
    """Issue 25's targets: iolayer, every layer on, always on at NVMe rates."""
    def unit(s, ph, tr):
        return a_unit(a, s, ph, tr)

    rows = []
    v, p = unit("block", "direct-write", "iolayer"), unit("block", "direct-write", "lt-biolatency")
    x = a.get(("block", "direct-write", "iolayer", "lt-biolatency"))
    rows.append(["iolayer, every layer on, BPF ns per block request / libbpf-tools biolatency",
                 "<= 1.5x", f"{fmt_x(x)} ({fmt_ns(v)} ns; libbpf-tools biolatency {fmt_ns(p)} ns)",
                 ok(x, 1.5)])
    v, f = unit("fs", "pwrite-ext4", "iolayer"), unit("fs", "pwrite-ext4", "raw-fs-clock-floor")
    x = v / f if v is not None and f else None
    rows.append(["iolayer, BPF ns per pwrite64 call pair on ext4 / a clock read on each side",
                 "<= 2.5x", f"{fmt_x(x)} ({fmt_ns(v)} ns; floor {fmt_ns(f)} ns)", ok(x, 2.5)])
    # the time split's hooks with no call in flight (the ping-pong): ns per run of each beside
    # an empty raw tracepoint program on the same hook (raw_floor -s; the split's programs are
    # raw tracepoint programs too), and, as before, the empty bpftrace program on sched_switch
    pw, win = prog_windows(recs, "iolayer"), windows(recs)[0]
    sw = prog_windows(recs, "fsslower-split")  # the time split's own programs
    fw = prog_windows(recs, "raw-sched-floor")
    for prog, raw in (("split_switch_btf", "floor_switch"), ("split_waking_btf", "floor_waking"),
                      ("split_wakeup_btf", "floor_wakeup")):
        xs, xb = [], []
        who = "iolayer"
        for (s, r, ph), progs in pw.items():
            if (s, ph) != ("sched", "pingpong"):
                continue
            if prog not in progs:
                # iolayer runs the split's sched_switch handler in the I/O-wait layer's
                # program (split_cfg.switch_in_iw): the split's own, in fsslower --split
                progs, who = sw.get((s, r, ph), {}), "fsslower --split"
            if prog not in progs or progs[prog][2] <= 0:
                continue
            v = progs[prog][1] / progs[prog][2]
            fr = fw.get((s, r, ph), {}).get(raw)
            if fr and fr[2] > 0 and fr[1] > 0:
                xs.append(v / (fr[1] / fr[2]))
            fl = win.get((s, r, ph), {}).get("bt-sched-floor", {}).get("sched_switch")
            if fl and fl[1]:
                xb.append(v / (fl[0] / fl[1]))
        x, b = med(xs), med(xb)
        what = f"`{prog}`" + ("" if who == "iolayer" else f" ({who}: in iolayer the I/O-wait "
                                                           "layer's program runs it)")
        rows.append([f"time split, {what} ns per run with no call in flight / an empty raw "
                     "tracepoint program on its hook", "<= 1.3x",
                     f"{fmt_x(x)} (/ the empty bpftrace program on sched_switch: {fmt_x(b)})",
                     ok(x, 1.3)])
    xs = []  # all of iolayer's work at a switch (the I/O-wait layer's and the split's)
    for (s, r, ph), progs in pw.items():
        if (s, ph) != ("sched", "pingpong") or "iw_switch_btf" not in progs:
            continue
        ns = sum(v[1] for v in progs.values() if v[0] == "sched_switch")
        cnt = progs["iw_switch_btf"][2]
        fr = fw.get((s, r, ph), {}).get("floor_switch")
        if cnt > 0 and fr and fr[2] > 0 and fr[1] > 0:
            xs.append((ns / cnt) / (fr[1] / fr[2]))
    rows.append(["iolayer, all its programs on sched_switch, ns per switch with no call in flight "
                 "/ an empty raw tracepoint program on it", "-", fmt_x(med(xs)), "-"])
    ready, rss = c.get("iolayer", (None, None))
    rows.append(["iolayer start-up", "<= 50 ms", "-" if ready is None else f"{ready:.0f} ms", ok(ready, 50)])
    rows.append(["iolayer RSS at rest", "<= 10 MB", "-" if rss is None else f"{rss:.1f} MB", ok(rss, 10)])
    for w, what, beside in (("fio", "fio IOPS (io_uring, 4 KiB random direct writes)",
                             (("lt-biolatency", "libbpf-tools biolatency"),
                              ("bt-block-floor", "empty programs on issue and completion"))),
                            ("pwrite", "64-byte pwrite64 calls/s on ext4",
                             (("raw-fs-floor", "empty programs on raw_syscalls"),))):
        x = e.get((w, "iolayer-serve"))
        others = "; ".join(f"{name}: {100 * e[(w, k)]:.0f} %" for k, name in beside
                           if e.get((w, k)) is not None)
        rows.append([f"{what} under iolayer --serve, share of untraced", ">= 95 %",
                     "-" if x is None else f"{100 * x:.0f} %" + (f" ({others})" if others else ""),
                     "-" if x is None else ("met" if x >= 0.95 else "not met")])
    return ["## Targets (issue 25: iolayer always on)", "",
            "Measured in this run; a benchmark never fails on them.", "",
            table(["what", "target", "measured", ""], rows)]


KEPT_BEGIN, KEPT_END = "<!-- kept by hand: tools/bench copies this block as it is -->", "<!-- end kept -->"


def kept(path):
    """The hand-written block of the report at path (what was tried, and what it saved), to be
    carried over when the report is rewritten; "" when there is none."""
    try:
        with open(path) as f:
            old = f.read()
    except OSError:
        return ""
    a, b = old.find(KEPT_BEGIN), old.find(KEPT_END)
    return "" if a < 0 or b < a else "\n" + old[a:b + len(KEPT_END)] + "\n"


def main():
    recs = read(sys.argv[1])
    meta = {k: v for k, v in recs["meta"]}
    labels, roles = {}, {}
    for x in recs["session"] + recs["bconf"] + recs["econf"]:
        labels[x[1]], roles[x[1]] = x[3], x[2]
    for t, label, why in recs["unavailable"]:
        labels.setdefault(t, label)
        roles.setdefault(t, "peer")
    labels.setdefault("fsslower-m0", "fsslower -m 0")
    _, types = windows(recs)
    methods = {t: ", ".join(sorted(ts)) for t, ts in types.items()}
    for t, m in recs["method"]:
        # "ext4 file operations: tracepoint;block request lifetime: tp_btf" -> methods named
        methods[t] = "; ".join(sorted({p.split(": ")[-1] for p in m.split(";")}))
    a_lines, a = section_a(recs, labels, roles, methods) if recs["snap"] else ([], {})
    b_lines, b = section_b(recs, labels, roles, methods) if recs["wall"] else ([], {})
    c_lines, c = section_c(recs, labels) if recs["startup"] else ([], {})
    d_lines, _ = section_d(recs) if recs["loss"] else ([], {})
    a2_lines, _ = section_a_progs(recs, roles) if recs["snap"] else ([], {})
    e_lines, e = section_e(recs, labels, roles, methods) if recs["e2e"] else ([], {})
    ra, rb, rc = (meta.get("rounds_" + x, "-") for x in "abc")
    head = ["# Benchmarks",
            "",
            "Written by `sudo make bench` (tools/bench); do not edit by hand. iolayer's tools beside "
            "their peers on the same events; the machine is shared, so absolute times are noisy and "
            "the ratios taken within one round are what to compare.",
            "",
            f"- date: {meta.get('date', '?')}, iolayer {meta.get('version', '?')}",
            f"- kernel: {meta.get('kernel', '?')}; kprobes: {meta.get('kprobes', '?')} "
            "(fentry/fexit is refused on this machine)",
            f"- CPU: {meta.get('cpu', '?')}",
            f"- peers: {meta.get('peers', '?')}",
            f"- disks: {meta.get('disks', '?')}",
            f"- load average at start / end: {meta.get('load_begin', '?')} / {meta.get('load_end', '?')}; "
            f"rounds: (a) {ra}, (b) {rb}, (c) {rc}, (e) {meta.get('rounds_e', '-')}; workload scale {meta.get('scale', '1')}; "
            f"run took {meta.get('elapsed', '?')} s",
            ""]
    if recs["unavailable"]:
        head += ["Peers that cannot run on this kernel:", ""]
        head += [f"- {label}: {why}" + (" (the kernel has neither kprobes nor fentry)"
                                        if "kprobe" in why and meta.get("kprobes") == "no" else "")
                 for t, label, why in recs["unavailable"]]
        head.append("")
    body = (head + targets(a, b, c) + [""] + targets_25(recs, a, c, e) + [""] + a_lines + [""]
            + a2_lines + [""] + b_lines + [""] + c_lines + [""] + d_lines + [""] + e_lines)
    text = "\n".join(body).rstrip() + "\n" + kept(sys.argv[2] if len(sys.argv) > 2 else "-")
    sys.stdout.write(text)
    if len(sys.argv) > 2 and sys.argv[2] != "-":
        with open(sys.argv[2], "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
