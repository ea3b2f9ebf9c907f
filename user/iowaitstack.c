/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * iowaitstack: who sleeps in I/O wait (io_schedule, io_schedule_timeout), under which kernel
 * stack, for how long. The kernel side (bpf/lib/iowait.bpf.h) sums sleeps per thread and
 * stack; this file chooses the attach method, reads the sums every second (differences give
 * intervals), names the stacks and prints text, folded stacks or JSON.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "flame.h"
#include "libiolayer.h"
#include "iowaitstack.skel.h"

#define NSEC_PER_USEC 1000ULL

static struct env {
	unsigned long long min_us, max_us; /* max 0: no limit */
	unsigned interval, count;
	unsigned top;                      /* stacks shown per report; 0: all */
	bool top_set, user_stacks, folded;
} env;

enum { OPT_FOLDED = 0x100, OPT_TOP, OPT_FLAME };

static const char *flame_path; /* --flamegraph FILE */

static const char doc[] =
"Show which threads sleep in I/O wait (io_schedule, io_schedule_timeout),\n"
"under which kernel stack, how often and for how long. A sleep counts from\n"
"the moment a task leaves the CPU with its in-iowait flag set until it runs\n"
"again.\n"
"\n"
"USAGE: iowaitstack [-p PID | --tid TID | -C CGROUP] [-m USECS] [-M USECS] [-U]\n"
"                   [-i SECONDS [-c COUNT]] [--top N] [--folded | --json]\n"
"                   [--flamegraph FILE] [-d SECONDS | DURATION]\n"
"\n"
"EXAMPLES:\n"
"  iowaitstack               # stacks by total wait until Ctrl-C, with threads\n"
"  iowaitstack 10            # trace for 10 seconds\n"
"  iowaitstack -p 1234       # only process 1234 (all its threads)\n"
"  iowaitstack -C redis.service # the I/O waits of a unit's processes\n"
"  iowaitstack --tid 1240    # only thread 1240\n"
"  iowaitstack -i 1          # each second: waits per thread, top stacks\n"
"  iowaitstack -m 10000      # only sleeps of 10 ms or more\n"
"  iowaitstack -U -p 1234    # add user stacks (named with libdw)\n"
"  iowaitstack --folded 30 > w.folded   # flamegraph.pl --countname=us\n"
"  iowaitstack --flamegraph w.svg 30     # the flame graph itself, as SVG\n"
"  iowaitstack --json -i 5   # one JSON object per interval\n"
"\n"
"OPTIONS:";

static const struct argp_option options[] = {
	{ "min", 'm', "USECS", 0, "Count only sleeps of at least USECS microseconds", 0 },
	{ "max", 'M', "USECS", 0, "Count only sleeps of at most USECS microseconds", 0 },
	{ "user-stacks", 'U', NULL, 0, "Also record user stacks (named with libdw)", 0 },
	{ "interval", 'i', "SECONDS", 0, "Print per thread and top stacks every SECONDS", 0 },
	{ "count", 'c', "N", 0, "With -i: stop after N intervals", 0 },
	{ "top", OPT_TOP, "N", 0, "Show the N stacks with most wait\n(0: all; default: all, 5 with -i)", 0 },
	{ "folded", OPT_FOLDED, NULL, 0, "Folded stacks for flame graphs\n(comm;frames usecs)", 0 },
	{ "flamegraph", OPT_FLAME, "FILE", 0, "At the end, also write the whole run's stacks\n"
	  "as an SVG flame graph to FILE", 0 },
	{ 0 },
};

static error_t parse_arg(int key, char *arg, struct argp_state *st)
{
	switch (key) {
	case 'm': env.min_us = il_arg_uint(arg, "min (usecs)", 0, 1ULL << 40); break;
	case 'M': env.max_us = il_arg_uint(arg, "max (usecs)", 1, 1ULL << 40); break;
	case 'U': env.user_stacks = true; break;
	case 'i': env.interval = il_arg_uint(arg, "interval (seconds)", 1, 86400); break;
	case 'c': env.count = il_arg_uint(arg, "count", 1, 1U << 30); break;
	case OPT_TOP: env.top = il_arg_uint(arg, "--top", 0, 1U << 30); env.top_set = true; break;
	case OPT_FOLDED: env.folded = true; break;
	case OPT_FLAME:
		if (!*arg)
			il_argp_fail(st, "--flamegraph: a file name, please");
		flame_path = arg;
		break;
	case ARGP_KEY_ARG: {
		unsigned long long d;

		if (st->arg_num > 0)
			il_argp_fail(st, "unexpected argument '%s'", arg);
		/* a number first: argp has read every option (-d too) before the arguments */
		d = il_arg_uint(arg, "the duration (seconds)", 1, 1U << 30);
		if (il_opts.duration_s)
			il_argp_fail(st, "the duration is given twice (DURATION and -d)");
		il_opts.duration_s = d;
		break;
	}
	case ARGP_KEY_END:
		if (env.max_us && env.min_us > env.max_us)
			il_argp_fail(st, "-m %llu is larger than -M %llu", env.min_us, env.max_us);
		if (env.count && !env.interval)
			il_argp_fail(st, "-c needs -i");
		if (env.folded && il_opts.format == IL_FMT_JSON)
			il_argp_fail(st, "choose one of --folded and --json");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* ---- named stacks ---------------------------------------------------------------------- */

static struct il_stacknames *stacks;

/* A kernel stack (kind 0) or a user stack of process pid (kind 1) with its recovered caller
 * (iw_key.ucaller). */
static const struct il_frames *frames_get(int kind, __u32 pid, __s32 id, __u64 ucaller)
{
	return il_stacknames_get_user(stacks, kind ? pid : 0, id, ucaller);
}

/* Name the user stacks of entries seen for the first time, while their process is alive.
 * Kernel stacks are named when a report prints them: the kernel's symbols stay (but for a
 * module unloaded in between), and reading them (/proc/kallsyms, ~10 MB in memory) waits
 * until then instead of the first second. */
static void frames_prefetch(const struct il_iw_entry *e, void *ctx)
{
	(void)ctx;
	if (env.user_stacks)
		frames_get(1, e->key.tgid, e->key.ustack, e->key.ucaller);
}

/* ---- reading the kernel's sums ------------------------------------------------------ */

static struct iowaitstack_bpf *skel;

static struct il_iw_table table;

/* Sleeps the kernel counted (iw_hist) that the table never got, as of the last read: their
 * entries aged out of the kernel's LRU before a read took them (a host of short-lived
 * threads). Said with the lost events, as map_full. */
static __u64 aged_out;

/* Fold the kernel's cumulative sums into the table (naming new stacks while their process
 * still runs). 0, or -1 after printing one line. */
static int read_waits(void)
{
	__u64 slots[IL_HIST_SLOTS];
	struct iw_val all;
	/* the count first: a sleep ending between the two reads is in the table, not lost */
	int herr = il_iw_hist_read(skel->obj, slots, &all);
	int err = il_iw_table_read(skel->obj, &table, frames_prefetch, NULL);

	if (err)
		il_err("reading the wait map failed: %s", il_errno_name(err));
	if (!err && !herr && all.count > table.counted)
		aged_out = all.count - table.counted;
	return err ? -1 : 0;
}

/* ---- reports ---------------------------------------------------------------------------- */

static bool use_interval; /* which value of an entry the report being printed uses */

static void print_group_text(const struct il_iw_group *g, size_t rank)
{
	const struct iw_val *s = &g->sum;

	printf("#%zu  %llu usecs in %llu wait%s (avg %llu", rank,
	       (unsigned long long)(s->total_ns / NSEC_PER_USEC), (unsigned long long)s->count,
	       s->count == 1 ? "" : "s",
	       (unsigned long long)(s->total_ns / NSEC_PER_USEC / s->count));
	if (!use_interval)
		printf(", max %llu", (unsigned long long)(s->max_ns / NSEC_PER_USEC));
	printf(" usecs)\n");
	il_iw_stacks_print(stdout, stacks, g->kstack, g->ustack, g->utgid, g->ucaller, env.user_stacks);
	il_iw_thread_header(stdout, "    ", use_interval);
	for (size_t i = 0; i < g->nmembers; i++)
		il_iw_thread_row(stdout, "    ", &g->members[i]->key,
				 il_iw_val(g->members[i], use_interval), use_interval);
	printf("\n");
}

/* The folded lines of r (keys malloc'ed) into a new array, *n of them; NULL when out of memory
 * (said). */
static struct il_folded *fold(const struct il_iw_report *r, size_t *n)
{
	struct il_folded *v = calloc(r->nlist + 1, sizeof(*v));

	*n = 0;
	if (!v) {
		il_err("out of memory for the folded stacks");
		return NULL;
	}
	for (size_t i = 0; i < r->ngroups; i++) {
		const struct il_iw_group *g = &r->groups[i];

		for (size_t j = 0; j < g->nmembers; j++) {
			const struct iw_key *k = &g->members[j]->key;

			v[*n].key = il_frames_folded_key(k->comm, sizeof(k->comm),
				env.user_stacks ? frames_get(1, k->tgid, k->ustack, k->ucaller) : NULL,
				frames_get(0, 0, k->kstack, 0));
			if (v[*n].key) /* NULL: out of memory, said */
				v[(*n)++].value = il_iw_val(g->members[j], use_interval)->total_ns;
		}
	}
	return v;
}

/* One line per distinct key: rows that fold alike (threads of one name, stacks that differ
 * only in offsets) are summed, as a flame graph would, so no key is printed twice. */
static void print_folded(const struct il_iw_report *r)
{
	size_t n;
	struct il_folded *v = fold(r, &n);

	if (v)
		il_folded_print(stdout, v, n, NSEC_PER_USEC);
	free(v);
}

/* --flamegraph: every stack since the start, as an SVG flame graph in flame_path. 0, or -1
 * (said) when it could not be written. */
static int write_flamegraph(void)
{
	struct il_flame *f = il_flame_new("all");
	struct il_folded *v = NULL;
	struct il_iw_report r;
	char title[128];
	size_t n = 0;
	FILE *out;
	int err = -1;

	use_interval = false;
	if (il_iw_report_make(&table, false, &r))
		il_warn("out of memory for the flame graph: it is empty");
	il_iw_report_merge(&r, stacks, env.user_stacks);
	if (f && (v = fold(&r, &n)))
		for (size_t i = 0; i < n; i++)
			if (il_flame_add_folded(f, v[i].key, v[i].value))
				il_warn("out of memory for the flame graph: it misses stacks");
	for (size_t i = 0; v && i < n; i++)
		free(v[i].key);
	free(v);
	il_iw_report_free(&r);
	snprintf(title, sizeof(title), "I/O wait by stack (iowaitstack%s)", env.user_stacks ? " -U" : "");
	if (!f || !(out = fopen(flame_path, "w"))) {
		il_err("cannot write %s: %s", flame_path, f ? strerror(errno) : "out of memory");
	} else {
		err = il_flame_svg(out, f, title, 1000000, "ms");
		if (fclose(out) || err)
			il_err("cannot write %s: %s", flame_path, strerror(errno ? errno : EIO));
		err = err ? -1 : 0;
	}
	il_flame_free(f);
	return err;
}

static void read_drops(__u64 d[IL_DROP__MAX])
{
	if (il_drops_read(bpf_map__fd(skel->maps.il_drops), d))
		memset(d, 0, IL_DROP__MAX * sizeof(*d));
	d[IL_DROP_MAP_FULL] += aged_out;
}

/* Sleeps still under way at the final report (sw, nsw; nsw < 0: not read). */
static struct il_iw_sleeping *sw;
static int nsw = -1;

static void read_still_waiting(void)
{
	nsw = il_iw_sleeping_read(skel->obj, env.min_us * NSEC_PER_USEC, env.max_us * NSEC_PER_USEC, &sw);
	if (nsw < 0)
		il_warn("cannot read the sleeps still under way: %s", il_errno_name(nsw));
}

/* The report's JSON object. */
static struct json_object *report_json(const struct il_iw_report *r, size_t shown,
				       const char *clock, const __u64 drops[IL_DROP__MAX])
{
	struct json_object *o = json_object_new_object(), *a;

	json_object_object_add(o, "time", json_object_new_string(clock));
	json_object_object_add(o, "report", json_object_new_string(r->interval ? "interval" : "total"));
	/* the totals the text's first line gives: all waits, and every stack (--top shows some) */
	a = il_iw_val_json(json_object_new_object(), &r->all, use_interval);
	json_object_object_add(a, "stacks", json_object_new_uint64(r->ngroups));
	json_object_object_add(o, "all", a);
	if (r->interval) {
		a = json_object_new_array();
		for (size_t i = 0; i < r->nthreads; i++)
			json_object_array_add(a, il_iw_thread_json(r->threads[i].key, &r->threads[i].sum, use_interval));
		json_object_object_add(o, "threads", a);
	}
	a = json_object_new_array();
	for (size_t i = 0; i < shown; i++) {
		const struct il_iw_group *g = &r->groups[i];
		struct json_object *s = il_iw_val_json(json_object_new_object(), &g->sum, use_interval), *t;

		il_iw_stacks_json(s, stacks, g->kstack, g->ustack, g->utgid, g->ucaller, env.user_stacks);
		t = json_object_new_array();
		for (size_t j = 0; j < g->nmembers; j++)
			json_object_array_add(t, il_iw_thread_json(&g->members[j]->key,
					il_iw_val(g->members[j], r->interval), use_interval));
		json_object_object_add(s, "threads", t);
		json_object_array_add(a, s);
	}
	json_object_object_add(o, "stacks", a);
	if (nsw >= 0)
		json_object_object_add(o, "still_waiting", il_iw_sleeping_json(sw, nsw, stacks, env.user_stacks));
	json_object_object_add(o, "lost", il_drops_json(drops));
	return o;
}

/* Print one report: the interval's growth (interval = true) or everything since start. */
static void report(bool interval, bool final)
{
	struct il_iw_report r;
	char clock[16];
	__u64 drops[IL_DROP__MAX];
	size_t shown;

	use_interval = interval;
	if (il_iw_report_make(&table, interval, &r))
		il_warn("out of memory for the report: it is empty");
	/* stacks recorded apart that print alike (the tracer's frames differ) are one */
	il_iw_report_merge(&r, stacks, env.user_stacks);
	shown = env.top && env.top < r.ngroups ? env.top : r.ngroups;
	il_clock_str(clock, sizeof(clock));
	read_drops(drops);
	if (final)
		read_still_waiting();

	if (il_opts.format == IL_FMT_JSON) {
		il_json_print(stdout, report_json(&r, shown, clock, drops));
	} else if (env.folded) {
		print_folded(&r);
	} else {
		if (interval) {
			printf("%s  I/O wait per thread%s\n", clock, r.nthreads ? "" : ": none");
			if (r.nthreads)
				il_iw_thread_header(stdout, "", use_interval);
			for (size_t i = 0; i < r.nthreads; i++)
				il_iw_thread_row(stdout, "", r.threads[i].key, &r.threads[i].sum, use_interval);
			if (shown)
				printf("\ntop %zu of %zu stack%s:\n", shown, r.ngroups,
				       r.ngroups == 1 ? "" : "s");
		} else if (!r.ngroups) {
			printf(nsw > 0 ? "no I/O wait ended while tracing\n\n" : "no I/O wait seen\n");
		} else {
			printf("%llu usecs of I/O wait in %llu wait%s, %zu stack%s\n\n",
			       (unsigned long long)(r.all.total_ns / NSEC_PER_USEC),
			       (unsigned long long)r.all.count, r.all.count == 1 ? "" : "s",
			       r.ngroups, r.ngroups == 1 ? "" : "s");
		}
		for (size_t i = 0; i < shown; i++)
			print_group_text(&r.groups[i], i + 1);
		if (shown < r.ngroups)
			printf("(%zu more stack%s not shown: --top N)\n", r.ngroups - shown,
			       r.ngroups - shown == 1 ? "" : "s");
		if (final) {
			il_iw_sleeping_print(stdout, sw, nsw, stacks, env.user_stacks);
			il_drops_print(stdout, drops);
		}
	}
	if (final && env.folded) {
		if (nsw > 0)
			il_warn("%d sleep%s still under way when tracing ended %s not in the folded output",
				nsw, nsw == 1 ? "" : "s", nsw == 1 ? "is" : "are");
		il_drops_print(stderr, drops);
	}
	fflush(stdout);
	il_iw_report_free(&r);
}

/* A process slept in I/O wait for the first time (-U): read its mappings now, while it runs. */
static int on_new_proc(void *ctx, void *data, size_t len)
{
	const struct iw_proc_event *e = data;

	(void)ctx;
	if (len >= sizeof(*e)) {
		if (il_stacknames_load_proc(stacks, e->tgid))
			il_debug("cannot read the mappings of pid %u", e->tgid);
	}
	return 0;
}

/* ---- main loop ----------------------------------------------------------------------- */

static unsigned ticks, reports;
static bool count_done;

/* Every second: fold the kernel's sums in (names new user stacks while their process lives);
 * every env.interval seconds print an interval report. Non-zero stops the loop. */
static int tick(void *ctx)
{
	(void)ctx;
	if (read_waits())
		return -1;
	if (!env.interval || ++ticks % env.interval)
		return 0;
	count_done = env.count && ++reports >= env.count;
	report(true, count_done);
	il_iw_table_new_interval(&table);
	return count_done;
}

int main(int argc, char **argv)
{
	static const struct argp argp = { options, parse_arg, "[DURATION]", doc, il_argp_children, NULL, NULL };
	struct il_layerset *ls = NULL;
	struct il_plan *plan;
	struct il_run run = { .interval_s = 1, .tick = tick };
	int rc = IL_EXIT_ERR;
	struct iw_cfg *cfg;

	il_tool_start("iowaitstack", &argp, IL_OPT_PID | IL_OPT_CGROUP | IL_OPT_TID | IL_OPT_DURATION | IL_OPT_JSON,
		      argc, argv);
	if (env.interval && !env.top_set)
		env.top = 5;

	skel = IL_SKEL_OPEN(iowaitstack_bpf);
	cfg = il_iw_cfg(skel->obj);
	cfg->targ_tgid = il_opts.pid;
	cfg->targ_tid = il_opts.tid;
	cfg->min_ns = env.min_us * NSEC_PER_USEC;
	cfg->max_ns = env.max_us * NSEC_PER_USEC;
	cfg->user_stacks = env.user_stacks;

	if (!(ls = il_layerset_new(skel->obj, 1)) || !(plan = il_layerset_add(ls, "iowait", 1)))
		goto out;
	il_iw_plan(skel->obj, plan);
	if (il_layerset_choose(ls, il_opts.attach) ||
	    il_layerset_loaded(ls, il_maps_ahead(skel->obj) ?: iowaitstack_bpf__load(skel)) || il_layerset_attach(ls))
		goto out;
	/* After attaching, so the tracer's own BPF programs have symbols and are recognised. */
	stacks = il_stacknames_new(bpf_map__fd(skel->maps.iw_stacks), env.user_stacks);
	if (!stacks)
		goto out;
	if (env.user_stacks && !(run.rb = il_ringbuf_open(skel->maps.iw_procs, on_new_proc, NULL)))
		goto out;

	if (env.interval)
		fprintf(stderr, "Tracing I/O waits, report every %u s... Hit Ctrl-C to end.\n",
			env.interval);
	else if (il_opts.duration_s)
		fprintf(stderr, "Tracing I/O waits for %u s... Hit Ctrl-C to end.\n", il_opts.duration_s);
	else
		fprintf(stderr, "Tracing I/O waits... Hit Ctrl-C to end.\n");

	run.duration_s = il_opts.duration_s;
	if (il_run(&run) < 0)
		goto out;
	if (read_waits())
		goto out;
	if (!count_done) /* Ctrl-C or the duration: the last (partial) interval, or the summary */
		report(env.interval != 0, true);
	rc = il_tool_output_status();
	if (flame_path && write_flamegraph())
		rc = IL_EXIT_ERR;
out:
	il_layerset_free(ls);
	ring_buffer__free(run.rb);
	iowaitstack_bpf__destroy(skel);
	il_stacknames_free(stacks);
	il_iw_table_free(&table);
	free(sw);
	return rc;
}
