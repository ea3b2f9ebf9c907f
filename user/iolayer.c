/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * iolayer: trace every I/O layer at once for a while, then say which one is slow.
 * Kernel side: bpf/iolayer.bpf.c (the layers of bpf/lib/, aggregated in the kernel).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "iolayer.h"
#include "layers.h"
#include "stacks.h"
#include "verdict.h"
#include "iowaitstack.h"
#include "../bpf/iolayer.h" /* by path: "iolayer.h" is the library's umbrella header */
#include "iolayer.skel.h"

static struct env {
	int pid;
	unsigned duration;
	bool json;
} env = { .duration = 10 };

static const char doc[] =
"Trace every kernel I/O layer at once -- syscall/VFS, filesystem, writeback, I/O wait,\n"
"block queue, device -- then say which one is slow, and why.\n"
"\n"
"USAGE: iolayer [-p PID] [-d SECONDS] [--json]\n"
"\n"
"EXAMPLES:\n"
"  iolayer               # 10 seconds of every process, then the verdict\n"
"  iolayer -p 1234       # one process (all its threads); block layer: all disks\n"
"  iolayer -d 60         # a minute (Ctrl-C gives the verdict early)\n"
"  iolayer --json        # one JSON object\n"
"\n"
"Then dig into the layer it names with fsslower, writeback-ret, iowaitstack or\n"
"biolatency.\n"
"\n"
"OPTIONS:";

static const struct argp_option opts[] = {
	{ "pid", 'p', "PID", 0, "Only this process's file operations, writeback calls and I/O waits", 0 },
	{ "duration", 'd', "SECONDS", 0, "Trace this long (default 10; Ctrl-C ends early)", 0 },
	{ "json", 'j', NULL, 0, "Print one JSON object", 0 },
	{ 0 },
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'p':
		env.pid = il_arg_uint(arg, "PID", 1, INT_MAX);
		break;
	case 'd':
		env.duration = il_arg_uint(arg, "duration (seconds)", 1, UINT_MAX);
		break;
	case 'j':
		env.json = true;
		break;
	case ARGP_KEY_ARG:
		il_argp_fail(state, "unexpected argument '%s'", arg);
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* Per enum fs_op: the JSON key (fsslower's) and the table's WHAT. */
static const char *op_names[] = { "read", "write", "open", "fsync", "sync_range" };
static const char *op_rows[] = { "read", "write", "open", "fsync", "sync_file_range" };
_Static_assert(IL_ARRAY_SIZE(op_names) == FS_OP__MAX && IL_ARRAY_SIZE(op_rows) == FS_OP__MAX,
	       "one JSON key and one row name per enum fs_op");

/* A log2 histogram of ns summarized: percentiles as bucket upper bounds (exclusive). */
static void lat_from_hist(struct il_lat *l, __u64 count, __u64 total, __u64 max, const __u64 *slots)
{
	__u64 lo, hi;
	int s;

	memset(l, 0, sizeof(*l));
	l->count = count;
	l->total_ns = total;
	l->max_ns = max;
	if ((s = il_hist_percentile_slot(slots, IL_HIST_SLOTS, 50)) >= 0) {
		il_slot_bounds(s, &lo, &hi);
		l->p50_lt_ns = hi + 1;
	}
	if ((s = il_hist_percentile_slot(slots, IL_HIST_SLOTS, 99)) >= 0) {
		il_slot_bounds(s, &lo, &hi);
		l->p99_lt_ns = hi + 1;
	}
}

/* Block: the disk with the most device time. */
static void read_disks(struct iolayer_bpf *skel, struct il_layers *m)
{
	int fd = bpf_map__fd(skel->maps.disks);
	__u32 k, *prev = NULL, best = 0;
	struct il_disk_stats d, bd;
	bool found = false;

	while (!bpf_map_get_next_key(fd, prev, &k)) {
		prev = &k;
		if (bpf_map_lookup_elem(fd, &k, &d))
			continue;
		if (!found || d.device_ns > bd.device_ns) {
			bd = d;
			best = k;
			found = true;
		}
	}
	if (!found)
		return;
	il_disk_name(best, m->disk, sizeof(m->disk));
	lat_from_hist(&m->device, bd.count, bd.device_ns, bd.device_max_ns, bd.device_slots);
	lat_from_hist(&m->queue, bd.queued, bd.queue_ns, 0, bd.queue_slots);
}

/* Writeback: calls, errors and the most frequent error of ext4_writepages. */
static void read_wb(struct iolayer_bpf *skel, struct il_layers *m)
{
	int fd = bpf_map__fd(skel->maps.wb_stats);
	struct wb_stat_key k, *prev = NULL;
	struct wb_stat v;
	__u64 top = 0;

	while (!bpf_map_get_next_key(fd, prev, &k)) {
		prev = &k;
		if (bpf_map_lookup_elem(fd, &k, &v))
			continue;
		m->wb.count += v.count;
		m->wb.total_ns += v.total_ns;
		if (v.max_ns > m->wb.max_ns)
			m->wb.max_ns = v.max_ns;
		if (k.ret_known && k.ret < 0) {
			m->wb_errors += v.count;
			if (v.count > top) {
				top = v.count;
				m->wb_top_err = k.ret;
				m->wb_top_err_sync_mode = k.sync_mode;
			}
		}
	}
}

/* I/O wait: totals, and the kernel stack with the most wait (its frames into top[]). */
static int read_iowait(struct iolayer_bpf *skel, struct il_layers *m, char top[][128], int maxf)
{
	int fd = bpf_map__fd(skel->maps.iw_waits), nframes = 0;
	struct { __s32 id; __u64 ns; } by_stack[512];
	int nstacks = 0, best = -1;
	struct iw_key k, *prev = NULL;
	struct iw_val v;

	while (!bpf_map_get_next_key(fd, prev, &k)) {
		int i;

		prev = &k;
		if (bpf_map_lookup_elem(fd, &k, &v))
			continue;
		m->iowait.count += v.count;
		m->iowait.total_ns += v.total_ns;
		if (v.max_ns > m->iowait.max_ns)
			m->iowait.max_ns = v.max_ns;
		if (k.kstack < 0)
			continue;
		for (i = 0; i < nstacks && by_stack[i].id != k.kstack; i++)
			;
		if (i == nstacks) {
			if (nstacks == (int)IL_ARRAY_SIZE(by_stack))
				continue;
			by_stack[nstacks].id = k.kstack;
			by_stack[nstacks++].ns = 0;
		}
		by_stack[i].ns += v.total_ns;
	}
	for (int i = 0; i < nstacks; i++)
		if (best < 0 || by_stack[i].ns > by_stack[best].ns)
			best = i;
	if (best < 0)
		return 0;

	__u64 ips[IW_MAX_STACK_DEPTH];
	struct il_ksyms *ks = il_ksyms_load(NULL);
	int n = il_stack_read(bpf_map__fd(skel->maps.iw_stacks), by_stack[best].id, ips,
			      IW_MAX_STACK_DEPTH);

	for (int i = 0; ks && i < n && nframes < maxf; i++) {
		const struct il_ksym *s = il_ksyms_find(ks, ips[i]);

		if (s && il_ksym_is_tracer(s->name))
			continue;
		il_ksyms_format(ks, ips[i], top[nframes++], 128);
	}
	/* The frame that says why: the first one that is not generic waiting machinery. */
	static const char *generic[] = {
		"__schedule", "schedule", "io_schedule", "bit_wait", "__wait_on_bit",
		"out_of_line_wait_on_bit", "folio_wait", "__folio_lock", "folio_lock", "wait_on_page",
		"__filemap_fdatawait", "filemap_fdatawait", "file_write_and_wait", "file_fdatawait",
		"__wait_on_buffer", "wait_on_buffer", "__lock_buffer", "do_fsync", "__x64_sys",
	};
	for (int i = 0; i < nframes && !m->iw_top_frame[0]; i++) {
		bool skip = false;

		for (size_t g = 0; g < IL_ARRAY_SIZE(generic) && !skip; g++)
			skip = !strncmp(top[i], generic[g], strlen(generic[g]));
		if (!skip)
			snprintf(m->iw_top_frame, sizeof(m->iw_top_frame), "%.*s",
				 (int)strcspn(top[i], "+"), top[i]);
	}
	il_ksyms_free(ks);
	return nframes;
}

static void print_row(const char *layer, const char *what, const struct il_lat *l, bool pct,
		      const char *extra)
{
	char p50[24] = "-", p99[24] = "-", mx[24] = "-", tot[24] = "-";

	if (l->count) {
		if (pct && l->p50_lt_ns) {
			il_fmt_ns(l->p50_lt_ns, p50 + 1, sizeof(p50) - 1);
			p50[0] = '<';
			il_fmt_ns(l->p99_lt_ns, p99 + 1, sizeof(p99) - 1);
			p99[0] = '<';
		}
		if (l->max_ns)
			il_fmt_ns(l->max_ns, mx, sizeof(mx));
		il_fmt_ns(l->total_ns, tot, sizeof(tot));
	}
	printf("%-12s %-26s %9llu %11s %11s %11s %11s%s%s\n", layer, what,
	       (unsigned long long)l->count, p50, p99, mx, tot, extra ? "  " : "", extra ? extra : "");
}

static struct json_object *lat_json(const struct il_lat *l)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "count", json_object_new_uint64(l->count));
	json_object_object_add(o, "total_ns", json_object_new_uint64(l->total_ns));
	json_object_object_add(o, "max_ns", json_object_new_uint64(l->max_ns));
	json_object_object_add(o, "p50_lt_ns", json_object_new_uint64(l->p50_lt_ns));
	json_object_object_add(o, "p99_lt_ns", json_object_new_uint64(l->p99_lt_ns));
	return o;
}

static void report(const struct il_layers *m, char frames[][128], int nframes,
		   const __u64 drops[IL_DROP__MAX])
{
	char why[1024], what[64], extra[96];
	enum il_layer_id l = il_verdict(m, why, sizeof(why));

	if (env.json) {
		struct json_object *o = json_object_new_object(), *ly = json_object_new_object();
		struct json_object *v = json_object_new_object(), *st = json_object_new_array();

		json_object_object_add(o, "duration_s", json_object_new_double(m->elapsed_s));
		json_object_object_add(o, "pid", json_object_new_int(env.pid));
		if (m->fs_seen) {
			struct json_object *ops = json_object_new_object();

			for (int i = 0; i < FS_OP__MAX; i++)
				json_object_object_add(ops, op_names[i], lat_json(&m->ops[i]));
			json_object_object_add(ly, "syscall", ops);
		}
		if (m->wb_seen) {
			struct json_object *w = lat_json(&m->wb);

			json_object_object_add(w, "errors", json_object_new_uint64(m->wb_errors));
			json_object_object_add(ly, "writeback", w);
		}
		if (m->iw_seen)
			json_object_object_add(ly, "iowait", lat_json(&m->iowait));
		if (m->blk_seen) {
			json_object_object_add(ly, "disk", json_object_new_string(m->disk));
			json_object_object_add(ly, "queue", lat_json(&m->queue));
			json_object_object_add(ly, "device", lat_json(&m->device));
		}
		json_object_object_add(o, "layers", ly);
		json_object_object_add(v, "layer", json_object_new_string(il_layer_name(l)));
		json_object_object_add(v, "why", json_object_new_string(why));
		json_object_object_add(o, "verdict", v);
		for (int i = 0; i < nframes; i++)
			json_object_array_add(st, json_object_new_string(frames[i]));
		json_object_object_add(o, "top_iowait_stack", st);
		json_object_object_add(o, "lost", il_drops_json(drops));
		il_json_print(stdout, o);
		return;
	}
	if (env.pid)
		printf("\n%.1f s traced: process %d (file operations, writeback, I/O wait); block layer: "
		       "all processes\n\n", m->elapsed_s, env.pid);
	else
		printf("\n%.1f s traced: all processes\n\n", m->elapsed_s);
	printf("%-12s %-26s %9s %11s %11s %11s %11s\n", "LAYER", "WHAT", "COUNT", "P50", "P99", "MAX",
	       "TOTAL");
	for (int i = 0; m->fs_seen && i < FS_OP__MAX; i++)
		print_row("syscall/VFS", op_rows[i], &m->ops[i], true, NULL);
	if (m->wb_seen) {
		snprintf(extra, sizeof(extra), "%llu errors", (unsigned long long)m->wb_errors);
		print_row("writeback", "ext4_writepages", &m->wb, false, extra);
	}
	if (m->iw_seen)
		print_row("I/O wait", "sleeps in io_schedule", &m->iowait, false, NULL);
	if (m->blk_seen && m->disk[0]) {
		snprintf(what, sizeof(what), "%s insert -> issue", m->disk);
		print_row("block queue", what, &m->queue, true, NULL);
		snprintf(what, sizeof(what), "%s issue -> complete", m->disk);
		print_row("device", what, &m->device, true, NULL);
	}
	printf("(P50/P99: upper bound of the log2 bucket that holds them)\n");
	if (nframes) {
		printf("\ntop I/O-wait stack:\n");
		for (int i = 0; i < nframes; i++)
			printf("    %s\n", frames[i]);
	}
	printf("\nverdict: %s -- %s\n", il_layer_name(l), why);
	il_drops_print(stdout, drops);
}

/* Choose a plan for one layer; a layer this kernel cannot trace is left out, not fatal. */
static bool choose(struct il_plan *plans, int n, const char *layer)
{
	if (!il_plans_choose(plans, n, il_opts.attach))
		return true;
	il_warn("the %s layer is left out", layer);
	return false;
}

int main(int argc, char **argv)
{
	static const struct argp_child children[] = { { &il_common_argp, 0, NULL, 0 }, { 0 } };
	static const struct argp argp = { opts, parse_arg, NULL, doc, children, NULL, NULL };
	struct il_plan plans[FS_TYPE__MAX + 3], *block, *fs, *wb, *iw;
	int fs_type[FS_TYPE__MAX], nfs = 0, err, rc = IL_EXIT_ERR, nframes = 0;
	struct il_layers m = { 0 };
	struct fs_op_stats st[FS_OP__MAX];
	__u64 drops[IL_DROP__MAX] = { 0 };
	char frames[16][128];
	struct iolayer_bpf *skel;
	unsigned long long t0;

	il_opts_init();
	il_log_init("iolayer", 0); /* messages from option parsing carry the name */
	argp_parse(&argp, argc, argv, 0, NULL, NULL);
	il_log_init("iolayer", il_opts.verbose);
	il_require_tracing();
	if (env.pid)
		il_require_pid(env.pid);

	skel = iolayer_bpf__open();
	if (!skel)
		il_die("cannot open the BPF object: %s", strerror(errno));
	il_autoload_none(skel->obj);
	/* Aggregate mode: the layers' event streams stay off, their ring buffers minimal. */
	bpf_map__set_max_entries(skel->maps.fs_events, getpagesize());
	bpf_map__set_max_entries(skel->maps.wb_events, getpagesize());
	skel->rodata->il_block_rq_two_args = il_btf_tp_nargs("block_rq_issue") == 2;
	skel->rodata->fs_targ_tgid = env.pid;
	skel->rodata->fs_self_tgid = getpid();
	skel->rodata->fs_min_ns = ~0ULL;
	skel->rodata->wb_targ_tgid = env.pid;
	skel->rodata->wb_func = WB_FUNC_EXT4_WRITEPAGES;
	skel->rodata->wb_nargs = 2;
	skel->rodata->wb_has_wbc = true;
	skel->rodata->wb_want_rows = false;
	skel->rodata->iw_targ_tgid = env.pid;
	skel->rodata->iw_tp_prev_state = il_iowait_tp_prev_state();

	block = &plans[0];
	il_block_plan(skel->obj, true, block);
	m.blk_seen = choose(block, 1, "block");
	fs = &plans[1];
	for (int t = 0; t < FS_TYPE__MAX; t++) {
		if (!il_fs_mounted(il_fs_table[t].name))
			continue;
		il_fs_plan(skel->obj, t, &fs[nfs]);
		fs_type[nfs++] = t;
	}
	if (nfs && choose(fs, nfs, "filesystem")) {
		m.fs_seen = true;
		for (int i = 0; i < nfs; i++)
			if (il_method_family(il_plan_method(&fs[i])) == IL_FAM_TRACEPOINT)
				skel->rodata->fs_sys_magic[fs_type[i]] = il_fs_table[fs_type[i]].magic;
		/* Every method counts sync_file_range at its syscall tracepoints (layers.h). */
		for (int i = 0; i < nfs; i++)
			skel->rodata->fs_sync_range_magic[fs_type[i]] = il_fs_table[fs_type[i]].magic;
	} else if (!nfs) {
		il_info("no ext4, xfs or btrfs filesystem is mounted: the filesystem layer is left out");
	}
	wb = &fs[nfs];
	il_wb_plan(skel->obj, WB_FUNC_EXT4_WRITEPAGES, "ext4_writepages", true, wb);
	m.wb_seen = choose(wb, 1, "writeback");
	iw = wb + 1;
	il_iowait_plan(skel->obj, iw);
	m.iw_seen = choose(iw, 1, "I/O wait");

	err = iolayer_bpf__load(skel);
	if (err) {
		il_err("cannot load the BPF programs: %s (run with -vv for the kernel's log)",
		       il_errno_name(err));
		goto out;
	}
	if ((m.blk_seen && il_plans_attach(block, 1)) || (m.fs_seen && il_plans_attach(fs, nfs)) ||
	    (m.wb_seen && il_plans_attach(wb, 1)) || (m.iw_seen && il_plans_attach(iw, 1)))
		goto out;
	if (m.wb_seen && il_wb_tp_limits(WB_FUNC_EXT4_WRITEPAGES, il_plan_method(wb)))
		il_info("%s", il_wb_tp_limits(WB_FUNC_EXT4_WRITEPAGES, il_plan_method(wb)));

	il_signals_init();
	fprintf(stderr, "Tracing every I/O layer%s for %u s... Hit Ctrl-C to end.\n",
		env.pid ? " of that process" : "", env.duration);
	t0 = il_now_ns();
	struct il_run run = { .duration_s = env.duration };
	if (il_run(&run) < 0)
		goto out;
	m.elapsed_s = (il_now_ns() - t0) / 1e9;

	if (m.fs_seen) {
		if ((err = il_fs_stats_read(bpf_map__fd(skel->maps.fs_stats), st))) {
			il_err("cannot read the filesystem layer's totals: %s", il_errno_name(err));
			goto out;
		}
		for (int i = 0; i < FS_OP__MAX; i++)
			lat_from_hist(&m.ops[i], st[i].count, st[i].total_ns, st[i].max_ns, st[i].slots);
	}
	if (m.wb_seen)
		read_wb(skel, &m);
	if (m.iw_seen)
		nframes = read_iowait(skel, &m, frames, IL_ARRAY_SIZE(frames));
	if (m.blk_seen)
		read_disks(skel, &m);
	il_drops_read(bpf_map__fd(skel->maps.il_drops), drops);
	report(&m, frames, nframes, drops);
	rc = IL_EXIT_OK;
out:
	il_plans_detach();
	iolayer_bpf__destroy(skel);
	return rc;
}
