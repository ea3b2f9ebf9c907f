/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * iolayer: trace every I/O layer at once for a while, then say which one is slow.
 * Kernel side: bpf/iolayer.bpf.c (the layers of bpf/lib/, aggregated in the kernel).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "libiolayer.h"
#include "flame.h"
#include "report.h"
#include "serve.h"
#include "stacks.h"
#include "iolayer.skel.h"

#define DEFAULT_DURATION_S 10

static const char doc[] =
"Trace every kernel I/O layer at once -- syscall/VFS, filesystem, writeback,\n"
"I/O wait, block queue, device -- then say which one is slow, and why.\n"
"\n"
"USAGE: iolayer [-p PID | -C CGROUP] [-d SECONDS] [--json] [--html FILE]\n"
"       iolayer --serve [ADDR:]PORT [-p PID | -C CGROUP]\n"
"\n"
"EXAMPLES:\n"
"  iolayer               # 10 seconds of every process, then the verdict\n"
"  iolayer -p 1234       # one process (all its threads, not its children);\n"
"                        # block layer: the disk it used\n"
"  iolayer -C 3f2a9c1b   # a container's processes, children included (its\n"
"                        # id; or a cgroup path, or a unit: -C redis.service)\n"
"  iolayer -d 60         # a minute (default 10 s; Ctrl-C ends early)\n"
"  iolayer --json        # one JSON object, at the end\n"
"  iolayer --top 10      # the 10 top processes and files\n"
"  iolayer --html r.html # also a page for a browser: verdict, heat maps,\n"
"                        # time split, I/O-wait flame graph (works offline)\n"
"  iolayer --serve 19435 # Prometheus metrics on http://127.0.0.1:19435/metrics\n"
"  iolayer --serve 10.0.0.5 # one internal address, port 19435, until stopped;\n"
"                        # it shows every user's file names: bind no wider\n"
"                        # than Prometheus needs (0.0.0.0: every address)\n"
"\n"
"-p follows one process: its children (a server's workers, a shell's commands)\n"
"are not in it; give their own pids, or -C their cgroup. File operations are\n"
"traced on ext4, xfs and btrfs only (not tmpfs, NFS, ...).\n"
"\n"
"Then dig into the layer it names with fsslower, writeback-ret, iowaitstack or\n"
"biolatency.\n"
"\n"
"OPTIONS:";

enum { OPT_TOP = 0x100, OPT_SERVE, OPT_HTML };

static const struct argp_option opts[] = {
	{ "top", OPT_TOP, "N", 0, "Show the N top processes and files\n(default 5; 0: all; --serve: 1 to 100)", 0 },
	{ "serve", OPT_SERVE, "[ADDR:]PORT", 0, "Serve Prometheus metrics (/metrics) and the\n"
	  "verdict (/verdict); ADDR default 127.0.0.1", 0 },
	{ "html", OPT_HTML, "FILE", 0, "Also write the report as one HTML page\n"
	  "to FILE (opens offline)", 0 },
	{ 0 },
};

static int top_n = 5;
static struct il_serve_addr serve_addr;
static bool serve;
static const char *html_path;

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	const char *bad;

	if (key == OPT_TOP) {
		top_n = il_arg_uint(arg, "--top", 0, 1000000);
		return 0;
	}
	if (key == OPT_SERVE && (bad = il_serve_addr_parse(arg, &serve_addr)))
		il_argp_fail(state, "--serve: %s", bad);
	if (key == OPT_SERVE)
		return serve = true, 0;
	if (key == OPT_HTML && !*arg)
		il_argp_fail(state, "--html: a file name, please");
	if (key == OPT_HTML)
		return html_path = arg, 0;
	if (key == ARGP_KEY_ARG)
		il_argp_fail(state, "unexpected argument '%s'", arg);
	return ARGP_ERR_UNKNOWN;
}

/* Process pid (0: none) among the first `shown` of the view's (which the tables print), moved
 * there when it is further down: the processes the verdict names (the victim, its culprit)
 * are always listed; one the view does not have (a CPU hog, which does no file I/O: comm
 * its name) is added, its counts zero, but under -p or --cgroup, whose tables are theirs.
 * Returns how many to show (0: all). */
static int show_pid(struct il_who_view *v, __u32 pid, const char *comm, int shown)
{
	int at = -1;

	for (int i = 0; pid && i < v->nprocs && at < 0; i++)
		if (v->procs[i].pid == pid)
			at = i;
	/* (-p's tables are the process's, --cgroup's its processes') */
	if (pid && at < 0 && !il_opts.pid && !il_opts.cgroup) {
		struct il_who_sum *p = realloc(v->procs, (v->nprocs + 1) * sizeof(*p));

		if (!p)
			return shown;
		v->procs = p;
		at = v->nprocs++;
		memset(&p[at], 0, sizeof(p[at]));
		p[at].pid = pid;
		snprintf(p[at].comm, sizeof(p[at].comm), "%s", comm ? comm : "");
		il_who_pid_cgroup(pid, p[at].cgroup, sizeof(p[at].cgroup));
	}
	if (!shown || at < shown)
		return shown;
	struct il_who_sum p = v->procs[at];

	memmove(&v->procs[shown + 1], &v->procs[shown], (at - shown) * sizeof(p));
	v->procs[shown] = p;
	return shown + 1;
}

/* -p's children, which are not traced (children.h) */
static struct il_children kids;

/* Threads blocked in a file syscall when tracing began, and at the report: a call that has not
 * returned is in none of the numbers (a call counts when it ends); one blocked all along (a
 * write a throttle holds, begun before tracing) would otherwise be a silent zero. */
#define STUCK_MAX 64
static struct il_fs_stuck stuck0[STUCK_MAX], stuck[STUCK_MAX];
static int nstuck0, nstuck;
/* Where each blocked call's time went so far (il_split_inflight()), when split is set. */
static __u64 stuck_parts[STUCK_MAX][SPLIT_PARTS];
static bool stuck_split[STUCK_MAX];
/* When the window ended (il_now_ns(), before the detach): blocked calls are timed to it. */
static unsigned long long window_end_ns;

/* The blocked calls worth saying: those blocked all along, those in flight for a tenth of
 * the window (elapsed_s) or more, and with a verdict of none, any. */
static bool stuck_said(const struct il_fs_stuck *st, bool none, double elapsed_s)
{
	return st->whole || none || st->blocked_ns >= elapsed_s * 1e8;
}

static struct json_object *stuck_json(bool none, double elapsed_s)
{
	struct json_object *a = json_object_new_array();

	for (int i = 0; i < nstuck; i++) {
		struct json_object *x = json_object_new_object();

		if (!stuck_said(&stuck[i], none, elapsed_s)) {
			json_object_put(x);
			continue;
		}
		json_object_object_add(x, "pid", json_object_new_int(stuck[i].pid));
		json_object_object_add(x, "tid", json_object_new_int(stuck[i].tid));
		il_json_add_name(x, "comm", stuck[i].comm, sizeof(stuck[i].comm));
		json_object_object_add(x, "call", json_object_new_string(stuck[i].call));
		json_object_object_add(x, "whole_window", json_object_new_boolean(stuck[i].whole));
		/* in flight for so long when tracing ended; null: begun before tracing, unknown */
		json_object_object_add(x, "blocked_usecs", stuck[i].blocked_ns ?
				       json_object_new_int64(stuck[i].blocked_ns / 1000) : NULL);
		if (stuck_split[i]) { /* so far: on_cpu_us, runq_us, iowait_block_us, ... */
			struct json_object *sf = json_object_new_object();

			il_split_parts_json(sf, stuck_parts[i]);
			json_object_object_add(x, "so_far", sf);
		}
		json_object_array_add(a, x);
	}
	return a;
}

/* "; so far: on CPU 1%, run queue 0%, I/O wait 98%, other waits 1%" of blocked call i (the
 * split's parts, as the verdict's split line names them), "" unknown. */
static const char *so_far(int i, char *buf, size_t len)
{
	const __u64 *p = stuck_parts[i];
	__u64 all = 0;

	for (int k = 0; k < SPLIT_PARTS; k++)
		all += p[k];
	if (!stuck_split[i] || !all)
		return "";
	snprintf(buf, len, "; so far: on CPU %.0f%%, run queue %.0f%%, I/O wait %.0f%%, other waits %.0f%%",
		 100.0 * p[SPLIT_ONCPU] / all, 100.0 * p[SPLIT_RUNQ] / all,
		 100.0 * (p[SPLIT_IOWAIT_BLOCK] + p[SPLIT_IOWAIT_TASK]) / all, 100.0 * p[SPLIT_OTHER] / all);
	return buf;
}

/* A call blocked for half the window or more (or all of it) is in flight. */
static bool stuck_long(double elapsed_s)
{
	for (int i = 0; i < nstuck; i++)
		if (stuck[i].whole || stuck[i].blocked_ns >= elapsed_s * 5e8)
			return true;
	return false;
}

/* "still in flight: ..." lines under the verdict. */
static void stuck_print(double elapsed_s, bool none)
{
	int said = 0;

	for (int i = 0; i < nstuck; i++) {
		char comm[4 * 16 + 1], parts[128];

		if (!stuck_said(&stuck[i], none, elapsed_s))
			continue;
		if (++said > 3) {
			printf("    (and more in flight: --json lists them all)\n");
			break;
		}
		il_text_escape(stuck[i].comm, strnlen(stuck[i].comm, sizeof(stuck[i].comm)), comm, sizeof(comm));
		if (stuck[i].whole)
			printf("still in flight: %s (pid %u) %s, blocked (D state) all %.1f s without returning: "
			       "in none of the numbers above (a call counts when it returns)\n", comm,
			       stuck[i].pid, stuck[i].call, elapsed_s);
		else if (stuck[i].blocked_ns)
			printf("still in flight: %s (pid %u) %s, blocked (D state) for %.1f s when tracing "
			       "ended (%.0f%% of the window%s): not in the numbers above (a call counts when "
			       "it returns)\n", comm, stuck[i].pid, stuck[i].call, stuck[i].blocked_ns / 1e9,
			       elapsed_s > 0 ? 100.0 * stuck[i].blocked_ns / (elapsed_s * 1e9) : 0,
			       so_far(i, parts, sizeof(parts)));
		else
			printf("still in flight: %s (pid %u) %s, blocked (D state) when tracing ended: not "
			       "in the numbers above (a call counts when it returns)\n", comm, stuck[i].pid,
			       stuck[i].call);
	}
}

/* The tables' JSON: the judgement's, then the processes, files, AIO, children, top stack,
 * lost last. */
static struct json_object *report_json(struct il_window *w, const struct il_judgement *j, int shown,
				       const struct il_fs_aio_row *aio, int naio)
{
	struct json_object *o = il_judgement_json(w, j), *st = json_object_new_array();
	struct json_object *lost = NULL;

	/* lost last, after the tables */
	json_object_object_get_ex(o, "lost", &lost);
	json_object_get(lost);
	json_object_object_del(o, "lost");
	il_who_view_json(o, &w->view, w->m.elapsed_s, shown);
	json_object_object_add(o, "aio", il_fs_aio_json(aio, naio));
	json_object_object_add(o, "in_flight", stuck_json(j->v.d.where == IL_WHERE_NONE, w->m.elapsed_s));
	json_object_object_add(o, "untraced_children", il_children_json(&kids));
	/* -C: the cgroup traced (its path in the io controller's hierarchy), else null */
	json_object_object_add(o, "traced_cgroup", il_cgfilter_get() ?
			       json_object_new_string(il_cgfilter_get()->path) : NULL);
	for (int i = 0; i < w->nframes; i++)
		json_object_array_add(st, json_object_new_string(w->frames[i]));
	json_object_object_add(o, "top_iowait_stack", st);
	/* the I/O wait under it: an estimate from the sampled stacks, scaled to the layer's */
	json_object_object_add(o, "top_iowait_stack_usecs", json_object_new_uint64(w->top_stack_ns / 1000));
	json_object_object_add(o, "lost", lost);
	return o;
}

/* The evidence lines under the verdict (cause.h), when the cause has any. */
static int evidence(const struct il_judgement *j, char lines[5][200])
{
	if (j->cause.found && j->cause.nblames && j->layers.why != IL_WHY_WB_ERRORS)
		return il_cause_evidence(&j->cause, lines);
	return 0;
}

/* The I/O-wait stacks of snapshot s (kernel frames, outermost first) as a flame graph's JSON;
 * JSON null when the layer was not traced. The stacks are sampled (iw_cfg.sampled): their
 * weights, estimates, are scaled to the layer's total (a ratio estimate, rounded down). */
static struct json_object *flame_json(const struct il_measure_src *src, const struct il_snap *s)
{
	struct il_flame *f = src->iw ? il_flame_new("all") : NULL;
	struct json_object *o = NULL;
	double scale = 0;

	for (int i = 0; i < s->nstacks; i++)
		scale += s->stacks[i].total_ns;
	scale = scale > 0 ? s->iw.total_ns / scale : 0;
	for (int i = 0; f && i < s->nstacks; i++) {
		const struct il_frames *fr = s->stacks[i].f;
		const char *names[128];
		int n = 0;

		for (int k = fr->n - 1; k >= 0 && n < 128; k--)
			names[n++] = fr->funcs[k];
		if (il_flame_add(f, names, n, (__u64)(s->stacks[i].total_ns * scale)))
			il_warn("out of memory for the flame graph: it misses stacks");
	}
	if (f)
		o = il_flame_json(f);
	il_flame_free(f);
	return o;
}

/* The time split's sums with each process's comm (from the window's processes, all of
 * them: the tables show the top ones only); JSON null when the split was not traced. */
static struct json_object *split_json(const struct il_measure_src *src, const struct il_window *w)
{
	struct json_object *o = src->split ? il_split_sums_json(&w->split) : NULL, *rows;

	if (!o || !json_object_object_get_ex(o, "processes", &rows))
		return o;
	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		struct json_object *r = json_object_array_get_idx(rows, i), *pid;

		if (!json_object_object_get_ex(r, "pid", &pid))
			continue;
		for (int k = 0; k < w->view.nprocs; k++)
			if (w->view.procs[k].pid == (__u32)json_object_get_int64(pid)) {
				il_json_add_name(r, "comm", w->view.procs[k].comm, sizeof(w->view.procs[k].comm));
				break;
			}
	}
	return o;
}

/* iolayer --html: the page of this run, from the same JSON as --json's (o, given up) and the
 * heat maps, flame graph and time split. 0, or -errno (said). */
static int write_html(const struct il_measure_src *src, struct il_window *w, const struct il_snap *snap,
		       const struct il_heat *heat, const struct il_judgement *j, struct json_object *o)
{
	struct json_object *d = json_object_new_object(), *ev = json_object_new_array();
	char lines[5][200], host[256] = "", when[64];
	time_t now = time(NULL);
	int n = evidence(j, lines), err;

	for (int i = 0; i < n; i++)
		json_object_array_add(ev, il_json_utf8(lines[i], sizeof(lines[i])));
	gethostname(host, sizeof(host) - 1);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S %Z", localtime(&now));
	json_object_object_add(d, "version", json_object_new_string(IL_VERSION));
	json_object_object_add(d, "host", il_json_utf8(host, sizeof(host)));
	json_object_object_add(d, "generated", json_object_new_string(when));
	json_object_object_add(d, "report", o);
	json_object_object_add(d, "evidence", ev);
	json_object_object_add(d, "heat", il_heat_json(heat, w->dev, src->fs, src->iw, src->blk));
	json_object_object_add(d, "flame", flame_json(src, snap));
	json_object_object_add(d, "split", split_json(src, w));
	if ((err = il_report_html(html_path, d)))
		il_err("cannot write %s: %s", html_path, il_errno_name(err));
	return err;
}

/* How print_clauses() prints. */
enum clauses { CL_FIRST, CL_REST, CL_ALL };

/* The verdict's reason (il_why_clause()): its first clause alone, with no newline
 * (CL_FIRST); else each clause after the first (CL_REST) or every clause (CL_ALL) on an
 * evidence line of its own, indented: the line stays one breath long, the measurements
 * under it. */
static void print_clauses(const char *why, enum clauses how)
{
	const char *c;
	size_t n;

	for (int k = 0; (c = il_why_clause(&why, &n)); k++) {
		if (how == CL_FIRST) {
			printf("%.*s", (int)n, c);
			return;
		}
		if (k || how == CL_ALL)
			printf("    %.*s\n", (int)n, c);
	}
}

/* The report: text or JSON to stdout, with --html also the page. 0, or -1 when the page
 * could not be written. */
static int report(const struct il_measure_src *src, struct il_window *w, const struct il_snap *snap,
		   const struct il_judgement *jp, const struct il_heat *heat,
		   const struct il_fs_aio_row *aio, int naio)
{
	const struct il_measure *m = &w->m;
	char why2[512], names[1024] = "";
	const struct il_judgement *j = jp;
	const char *but, *sep;
	struct il_verdict v;
	int shown, err = 0;

	v = j->v;
	nstuck = il_fs_stuck(il_opts.pid, stuck, STUCK_MAX);
	il_fs_stuck_since(stuck, nstuck, stuck0, nstuck0);
	if (src->fs) /* up to the window's end, not to now: the maps are read after it */
		il_fs_stuck_times(src->obj, stuck, nstuck, window_end_ns);
	for (int i = 0; i < nstuck && src->split; i++)
		stuck_split[i] = !il_split_inflight(src->obj, stuck[i].pid, stuck[i].tid, stuck[i].op,
						    window_end_ns, stuck_parts[i]);
	if (v.c.found)
		il_culprit_sentence(&v.c, names, sizeof(names));
	shown = show_pid(&w->view, v.c.found ? v.c.pid : 0, v.c.comm, top_n);
	if (j->cause.found && j->cause.nblames && j->cause.blames[0].kind != IL_CK_SELF)
		shown = show_pid(&w->view, j->cause.blames[0].pid, j->cause.blames[0].comm, shown);

	if (html_path) {
		struct json_object *o = report_json(w, j, shown, aio, naio);

		if (il_opts.format == IL_FMT_JSON)
			json_object_get(o);
		err = write_html(src, w, snap, heat, j, o) ? -1 : 0;
		if (il_opts.format == IL_FMT_JSON)
			il_json_print(stdout, o);
	} else if (il_opts.format == IL_FMT_JSON) {
		il_json_print(stdout, report_json(w, j, shown, aio, naio));
	}
	if (il_opts.format == IL_FMT_JSON)
		return err;
	/* a blank line after the "Tracing..." line on a terminal; none first in a file or pipe */
	sep = isatty(STDOUT_FILENO) ? "\n" : "";
	if (il_opts.pid)
		printf("%s%.1f s traced: process %d, its threads, not its children (file operations, "
		       "writeback, I/O wait); block layer: the disk it used (the tables add the kernel "
		       "threads that wrote to it)\n\n", sep, m->elapsed_s, il_opts.pid);
	else if (il_cgfilter_get()) {
		char cg[4 * PATH_MAX], name[PATH_MAX];

		il_text_escape(il_cgident_short_of(il_cgfilter_get()->path, name, sizeof(name)), sizeof(name),
			       cg, sizeof(cg));
		printf("%s%.1f s traced: the processes of cgroup %s and of those below it, children "
		       "included (file operations, writeback, I/O wait; the tables list them); block layer: "
		       "every process's\n\n",
		       sep, m->elapsed_s, cg);
	} else
		printf("%s%.1f s traced: all processes\n\n", sep, m->elapsed_s);
	il_window_table(stdout, w, &j->cause);
	if (w->nframes) {
		if (m->iowait.total_ns)
			printf("\ntop I/O-wait stack (about %.0f%% of the I/O wait; the stacks are sampled):\n",
			       100.0 * w->top_stack_ns / m->iowait.total_ns);
		else
			printf("\ntop I/O-wait stack:\n");
		for (int i = 0; i < w->nframes; i++)
			printf("    %s\n", w->frames[i]);
	}
	il_who_view_print(stdout, &w->view, m->elapsed_s, shown);
	for (int i = 0; i < naio; i++) { /* what the file-operation rows cannot show */
		char line[512];

		printf("%s\n", il_fs_aio_notice(&aio[i], line, sizeof(line)));
	}
	{
		__u64 calls[FS_OP__MAX];
		char line[512];

		for (int i = 0; i < FS_OP__MAX; i++)
			calls[i] = m->ops[i].count;
		if (il_fs_uring_notice(m->uring, calls, line, sizeof(line)))
			printf("%s\n", line);
	}
	if (*il_children_note(&kids, why2, sizeof(why2)))
		printf("%s\n", why2);
	/* nothing stood out among the calls that returned, but one blocked long has not */
	but = v.d.where == IL_WHERE_NONE && stuck_long(m->elapsed_s) ?
	      "; but a call is still in flight, blocked for most of the window (below)" : "";
	if (j->cause.found && j->cause.nblames && j->layers.why != IL_WHY_WB_ERRORS) {
		char lines[5][200];
		int n = evidence(j, lines);

		printf("\nverdict: %s -- %s%s\n", il_where_name(v.d.where), v.why, but);
		for (int i = 0; i < n; i++)
			printf("    %s\n", lines[i]);
	} else if (v.c.found) { /* who, on the line; why, clause by clause, under it */
		char esc[4 * sizeof(names) + 1];

		printf("\nverdict: %s -- %s%s\n", il_where_name(v.d.where),
		       il_text_escape(names, sizeof(names), esc, sizeof(esc)), but);
		print_clauses(v.why, CL_ALL);
	} else {
		printf("\nverdict: %s -- ", il_where_name(v.d.where));
		print_clauses(v.why, CL_FIRST);
		printf("%s\n", but);
		print_clauses(v.why, CL_REST);
	}
	stuck_print(m->elapsed_s, v.d.where == IL_WHERE_NONE);
	il_drops_print(stdout, w->lost);
	return err;
}

/* What the run loop's tick works on: the object, and with --html the heat maps (a snapshot
 * of the layers' histograms every second, since t0). */
struct tick_ctx {
	struct bpf_object *obj;
	struct il_measure_src *src;
	struct il_heat *heat;
	unsigned long long t0;
};

/* Every second: the cgroups of the processes seen so far, while they still run. */
static int note_procs(void *ctx)
{
	struct tick_ctx *t = ctx;

	il_who_note_procs(t->obj);
	il_children_sample(&kids); /* -p's children: the last sample stands once it has gone */
	if (t->heat) {
		unsigned long long now = il_now_ns();
		struct il_snap s;

		if (il_snap_read(t->src, now - t->t0, IL_SNAP_MAPS, &s) ||
		    il_heat_add(t->heat, &s, (now - t->t0) / 1e9))
			il_warn("out of memory for the heat maps");
		il_snap_free(&s);
	}
	return 0;
}

/* The window's first look at /proc: every process's CPU time (the run-queue culprits are the
 * CPU hogs of the window) and the threads already stuck in a file call. Read on a thread
 * beside the programs' attach, which mostly waits on the kernel's patching of the tracepoints'
 * call sites: 5-7 ms less of start-up on 2 CPUs. */
struct start_look {
	struct il_measure_src *src;
	struct il_snap *base;
	int err;
};

static void *start_look(void *arg)
{
	struct start_look *l = arg;

	l->err = il_snap_read(l->src, 0, IL_SNAP_CPU, l->base);
	nstuck0 = il_fs_stuck(il_opts.pid, stuck0, STUCK_MAX);
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct argp argp = { opts, parse_arg, NULL, doc, il_argp_children, NULL, NULL };
	struct il_plan *block, *submit, *fs, *wb, *iw, *who, *split;
	struct il_measure_src src = { .stacks_fd = -1 };
	struct il_snap snap = { 0 }, base = { 0 };
	struct il_window win = { 0 };
	static struct il_judgement judged; /* large: not on the stack */
	struct il_fs_aio_row *aio = NULL;
	struct il_layerset *ls = NULL;
	struct il_heat *heat = NULL;
	int fs_type[FS_TYPE__MAX], nfs = 0, err, naio, rc = IL_EXIT_ERR;
	bool fs_wanted[FS_TYPE__MAX];
	struct iolayer_bpf *skel;
	struct fs_cfg *fsc;
	struct wb_cfg *wbc;
	unsigned long long t0, t1;
	struct start_look look = { &src, &base, 0 };
	pthread_t look_thread;
	bool looking = false;

	il_tool_option_doc('p', "Only this process: all its threads,\nnot its children");
	il_tool_option_doc('d', "Trace for SECONDS, then print the verdict\n(default 10; Ctrl-C ends early)");
	il_tool_option_doc('j', "JSON output: one object, at the end");
	il_tool_start("iolayer", &argp, IL_OPT_PID | IL_OPT_CGROUP | IL_OPT_DURATION | IL_OPT_JSON, argc, argv);
	if (serve && il_opts.format == IL_FMT_JSON)
		il_die("--serve and --json cannot be combined (/verdict serves the JSON)");
	if (serve && (top_n < 1 || top_n > IL_SERVE_MAX_TOP))
		il_die("--serve takes --top from 1 to %d, got %d", IL_SERVE_MAX_TOP, top_n);
	if (serve && html_path)
		il_die("--serve and --html cannot be combined (--html writes the report at the end)");
	if (html_path && !(heat = il_heat_new()))
		il_die("out of memory");
	if (html_path) { /* a file that cannot be written is said now, not after the trace */
		FILE *f = fopen(html_path, "a");

		if (!f)
			il_die("--html %s: %s", html_path, strerror(errno));
		fclose(f);
	}
	if (serve && il_serve_lib())
		return IL_EXIT_ERR;
	if (!il_opts.duration_s && !serve)
		il_opts.duration_s = DEFAULT_DURATION_S;

	skel = IL_SKEL_OPEN(iolayer_bpf);
	il_autoload_none(skel->obj);
	il_who_enable(skel->obj);
	if (il_opts.pid || il_opts.cgroup)
		il_who_users_partial(skel->obj);
	/* Aggregate mode: the layers' event streams stay off, their ring buffers minimal. */
	bpf_map__set_max_entries(skel->maps.fs_events, getpagesize());
	bpf_map__set_max_entries(skel->maps.wb_events, getpagesize());
	il_blk_cfg(skel->obj);
	il_blk_track_bios(skel->obj, false);
	fsc = il_fs_cfg(skel->obj);
	fsc->targ_tgid = il_opts.pid;
	fsc->min_ns = ~0ULL;
	fsc->nested_apart = 1; /* an O_SYNC write's sync is not an fsync call: apart */
	il_split_cfg(skel->obj, true); /* where each call's time went, and who ended its waits */
	src.pid = il_opts.pid;
	src.cgroup = il_cgfilter_get() ? il_cgfilter_get()->path : NULL;
	wbc = il_wb_cfg(skel->obj);
	wbc->targ_tgid = il_opts.pid;
	wbc->want_rows = 0;
	il_iw_cfg(skel->obj)->targ_tgid = il_opts.pid;
	/* the stacks are evidence (the verdict's frame, the top stack, the flame graph): sampled,
	 * where walking every sleep's was most of an I/O sleep's cost */
	il_iw_cfg(skel->obj)->sampled = 1;

	for (int t = 0; t < FS_TYPE__MAX; t++)
		nfs += fs_wanted[t] = il_fs_mounted(il_fs_table[t].name);
	if (!nfs)
		il_info("no ext4, xfs or btrfs filesystem is mounted: the filesystem layer is left out");
	/* The layers that have fentry and kprobe methods first: under --attach, one that cannot
	 * use the forced method refuses before the tracepoint-only layers say anything. */
	if (!(ls = il_layerset_new(skel->obj, nfs + 7)) ||
	    !(fs = il_layerset_add_optional(ls, "fs", nfs, "filesystem")) ||
	    !(wb = il_layerset_add_optional(ls, "writeback", 1, "writeback")) ||
	    !(submit = il_layerset_add_optional(ls, "block", 1, "bio submission (time before Q)")) ||
	    !(block = il_layerset_add_optional(ls, "block", 2, "block")) ||
	    !(iw = il_layerset_add_optional(ls, "iowait", 1, "I/O wait")) ||
	    !(who = il_layerset_add_optional(ls, "who", 1, "block submission (who)")) ||
	    !(split = il_layerset_add_optional(ls, "split", 1, "time split")))
		goto out;
	nfs = il_fs_plans(skel->obj, fs_wanted, fs, fs_type);
	il_wb_plan(skel->obj, WB_FUNC_EXT4_WRITEPAGES, "ext4_writepages", true, wb);
	il_blk_submit_plan(skel->obj, submit); /* the bios' submission: the time before Q */
	il_blk_plan(skel->obj, true, block);   /* requests */
	il_blk_bio_plan(skel->obj, block + 1); /* bios */
	il_iw_plan(skel->obj, iw);
	il_who_plan(skel->obj, who);
	il_split_plan(skel->obj, split);
	if (il_layerset_choose(ls, il_opts.attach))
		goto out;
	src.fs = nfs && il_layerset_chosen(ls, fs);
	src.wb = il_layerset_chosen(ls, wb);
	src.blk = il_layerset_chosen(ls, block);
	src.iw = il_layerset_chosen(ls, iw);
	src.split = src.fs && il_layerset_chosen(ls, split);
	if (!src.blk)
		il_layerset_drop(ls, submit);
	else if (il_layerset_chosen(ls, who)) /* one program on block_bio_queue, not two */
		il_who_bio_in_block(skel->obj, who);
	if (!src.split)
		il_layerset_drop(ls, split);
	else if (src.blk) /* one program on block_rq_complete, not two */
		il_split_rq_done_in_block(skel->obj, split);
	if (src.split && src.iw) /* one program on sched_switch, not two */
		il_split_switch_in_iowait(skel->obj, split, iw);
	if (il_layerset_loaded(ls, il_maps_ahead(skel->obj) ?: iolayer_bpf__load(skel)))
		goto out;
	/* The window every table counts: from the first attach to the detach below, which
	 * comes before any map is read, so the layers, processes and files count the same
	 * events (and nothing that happens while they are read). */
	t0 = il_now_ns();
	if (!serve) { /* signals stay the main thread's */
		sigset_t all, old;

		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		looking = !pthread_create(&look_thread, NULL, start_look, &look);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	err = il_layerset_attach(ls);
	if (looking)
		pthread_join(look_thread, NULL);
	else if (!serve && !err)
		start_look(&look);
	if (err)
		goto out;
	if (src.wb && il_wb_tp_limits(WB_FUNC_EXT4_WRITEPAGES, il_plan_method(wb)))
		il_info("%s", il_wb_tp_limits(WB_FUNC_EXT4_WRITEPAGES, il_plan_method(wb)));
	src.obj = skel->obj;
	src.drops_fd = bpf_map__fd(skel->maps.il_drops);
	src.stacks_fd = bpf_map__fd(skel->maps.iw_tstacks);
	if (serve) {
		struct il_serve_src ss = { &src, src.blk ? block : NULL, fs, fs_type, src.fs ? nfs : 0,
					   src.wb ? wb : NULL, src.iw ? iw : NULL, top_n };

		rc = il_serve(&serve_addr, &ss, il_opts.duration_s) ? IL_EXIT_ERR : IL_EXIT_OK;
		goto out;
	}
	if ((err = look.err)) {
		il_err("cannot read the processes' CPU times: %s", il_errno_name(err));
		goto out;
	}
	fprintf(stderr, "Tracing every I/O layer%s for %u s... Hit Ctrl-C to end.\n",
		il_opts.pid ? " of that process" : il_opts.cgroup ? " of that cgroup" : "", il_opts.duration_s);
	struct tick_ctx tc = { skel->obj, &src, heat, t0 };
	struct il_run run = { .duration_s = il_opts.duration_s, .interval_s = 1, .tick = note_procs,
			      .ctx = &tc };
	il_children_start(&kids, il_opts.pid, il_obj_map_fd(skel->obj, "fs_exited_io"));
	if (il_run(&run) < 0)
		goto out;
	il_children_sample(&kids);
	t1 = window_end_ns = il_now_ns();
	il_layerset_detach(ls);

	/* The cgroups of the processes seen, while they may still run; then the window from
	 * the start to now. */
	il_who_note_procs(skel->obj);
	if ((err = il_snap_read(&src, t1 - t0, IL_SNAP_VERDICT, &snap)) ||
	    (err = il_measure_judge(&src, &snap, &base, &win, &judged))) {
		il_err("cannot measure: %s", il_errno_name(err));
		goto out;
	}
	naio = src.fs ? il_fs_aio_read(skel->obj, &aio) : 0;
	if (heat && il_heat_add(heat, &snap, (t1 - t0) / 1e9))
		il_warn("out of memory for the heat maps");
	err = report(&src, &win, &snap, &judged, heat, aio, naio > 0 ? naio : 0);
	if (naio > 0)
		free(aio);
	rc = err ? IL_EXIT_ERR : il_tool_output_status();
out:
	il_heat_free(heat);
	il_children_free(&kids);
	il_window_free(&win);
	il_snap_free(&snap);
	il_snap_free(&base);
	il_measure_src_free(&src);
	il_layerset_free(ls);
	iolayer_bpf__destroy(skel);
	return rc;
}
