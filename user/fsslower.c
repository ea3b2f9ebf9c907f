// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fsslower: read, write, open, fsync/fdatasync and sync_file_range calls (and io_uring
 * requests) on ext4, xfs and btrfs that took longer than a threshold, with the process,
 * thread, interface and file; a per-operation summary at exit, and a line per process that
 * used Linux AIO. Kernel side: bpf/lib/fs.bpf.h.
 */
#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "libiolayer.h"
#include "fsslower.skel.h"

#define op_letter il_fs_op_letters

static struct env {
	unsigned long long min_ms;
	bool fs_wanted[FS_TYPE__MAX];
	bool fs_given;               /* -t was given */
	const char *file;            /* -f */
	bool show_tid;               /* -L */
	unsigned ringbuf_mb;         /* --ringbuf: MiB of ring buffer for the rows */
	bool split;                  /* --split: where each call's time went */
	enum fs_iface sum_iface;     /* what fs_stats counts: syscalls where every filesystem is
				      * traced at the syscall tracepoints, else "any caller" */
} env = { .min_ms = 10, .ringbuf_mb = 1 };

enum { OPT_RINGBUF = 0x2000, OPT_SPLIT };

static const char doc[] =
"Show read, write, open, fsync/fdatasync and sync_file_range calls on ext4,\n"
"xfs and btrfs slower than a threshold, with process, thread and file, and a\n"
"per-operation summary at exit.\n"
"\n"
"USAGE: fsslower [-m MS] [-p PID | --tid TID | -C CGROUP] [-t TYPE[,TYPE...]]\n"
"                [-f PATH] [-d SECONDS] [-L] [--split] [--csv | --json]\n"
"                [--ringbuf MB]\n"
"\n"
"EXAMPLES:\n"
"  fsslower                  # calls over 10 ms, every mounted ext4/xfs/btrfs\n"
"  fsslower -m 0 -p 1234     # every call of process 1234 (all its threads)\n"
"  fsslower -m 0 -C 3f2a9c1b # every call of a container's processes, children\n"
"                            # included (its id; or -C /system.slice/x.service)\n"
"  fsslower -p 1234 -L       # add a TID column\n"
"  fsslower --tid 1240       # one thread only\n"
"  fsslower -m 1 -f /var/lib/redis/appendonly.aof   # one file, over 1 ms\n"
"  fsslower -t xfs -d 10     # xfs only, for 10 seconds\n"
"  fsslower --json -m 0 -p 1234 > calls.json\n"
"  fsslower --split -m 5 -p 1234   # where each slow call's time went, and\n"
"                            # who woke it: an 8 ms fsync with ONCPU 0.10 and\n"
"                            # OTHER 7.60 ms, WAKER [jbd2/loop3-8], W_IO 6.90\n"
"                            # loop3: the journal commit waited for the disk\n"
"\n"
"T is R (read, pread64, readv, preadv, preadv2), W (write, pwrite64,\n"
"writev, pwritev, pwritev2), O (open, creat, openat, openat2), F (fsync,\n"
"fdatasync, and the sync an O_SYNC/O_DSYNC write runs inside it: that F row\n"
"comes just before its W row) or S (sync_file_range). BYTES is what the call\n"
"returned (an errno name when it failed); OFF_KB is the file position at\n"
"entry (S: the start of the range). IF is the interface: syscall, io_uring\n"
"(a request timed from submission to completion), or - where the attach\n"
"method cannot tell (fentry and kprobes see every caller of the filesystem).\n"
"Linux AIO requests cannot be timed per request here: one line per process\n"
"at exit counts them. FILENAME is the full path up to the mount point, with\n"
"\"...\" first when deeper than 16 components and \" (deleted)\" last when the\n"
"file was unlinked.\n"
"\n"
"--split adds where each row's time went, in ms, summing to LAT(ms): ONCPU\n"
"(running), RUNQ (runnable, waiting for a CPU), IOW_BLK (in I/O wait, ended by\n"
"its block I/O completing), IOW_TSK (in I/O wait, ended by a task), OTHER\n"
"(other sleeps: locks, waits on other tasks); then its main waker, the one\n"
"whose wake-ups ended the most of its sleep: WAKER (a process's comm, a\n"
"[kernel thread], disk:NAME for a block completion, irq), WPID, W_MS (the\n"
"sleep it ended), and W_IO/W_DISK: how much of that the waker itself spent in\n"
"I/O wait, and on which disk. io_uring requests are not split.\n"
"\n"
"OPTIONS:";

static const struct argp_option options[] = {
	{ "min", 'm', "MS", 0, "Show calls of at least MS milliseconds\n(default 10; 0: every call)", 0 },
	{ "type", 't', "TYPE", 0, "Filesystems to trace, comma-separated:\next4, xfs, btrfs (default: those mounted)", 0 },
	{ "file", 'f', "PATH", 0, "Only this file (its filesystem is traced)", 0 },
	{ "tid-column", 'L', NULL, 0, "Show a TID column", 0 },
	{ "split", OPT_SPLIT, NULL, 0, "Split each row's time: on CPU, run queue, I/O\nwait, other waits, and the main waker", 0 },
	{ "ringbuf", OPT_RINGBUF, "MB", 0, "Ring buffer for the rows, in MiB (default 1,\nrounded up to a power of two): give more\nwhen -m 0 at high call rates loses rows", 0 },
	{ 0 },
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'm':
		env.min_ms = il_arg_uint(arg, "the threshold (-m, milliseconds)", 0, 1000000000);
		break;
	case 't': {
		char *copy = strdup(arg), *save = NULL, *tok;

		for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			int t = il_fs_by_name(tok);

			if (t < 0)
				il_argp_fail(state, "unknown filesystem type '%s' (use ext4, xfs or btrfs)", tok);
			env.fs_wanted[t] = true;
			env.fs_given = true;
		}
		free(copy);
		if (!env.fs_given)
			il_argp_fail(state, "-t needs a filesystem type (ext4, xfs or btrfs)");
		break;
	}
	case 'f':
		env.file = arg;
		break;
	case 'L':
		env.show_tid = true;
		break;
	case OPT_RINGBUF:
		env.ringbuf_mb = il_arg_ringbuf_mb(arg);
		break;
	case OPT_SPLIT:
		env.split = true;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* ---- output -------------------------------------------------------------------------- */

static void print_header(void)
{
	if (il_opts.format == IL_FMT_CSV) {
		printf("time,comm,pid,tid,op,bytes,offset,lat_us,errno,sync,interface,%sdeleted,file\n",
		       env.split ? IL_SPLIT_CSV_HEAD "," : "");
	} else if (il_opts.format == IL_FMT_TEXT) {
		printf("%-8s %-16s %-7s ", "TIME", "COMM", "PID");
		if (env.show_tid)
			printf("%-7s ", "TID");
		printf("%1s %-10s %-8s %8s %-8s ", "T", "BYTES", "OFF_KB", "LAT(ms)", "IF");
		if (env.split)
			il_split_text_head(stdout);
		printf("FILENAME\n");
	}
	fflush(stdout);
}

static int handle_event(void *ctx, void *data, size_t size)
{
	const struct fs_event *e = data;
	const size_t names_off = offsetof(struct fs_event, names);
	char ts[16], path[IL_PATH_STR_MAX], comm[IL_TASK_COMM_LEN + 1];
	char bytes[32], tcomm[4 * IL_TASK_COMM_LEN + 1], tpath[4 * sizeof(path)];
	const char *iface;

	/* a record holds its header and path.len bytes of names */
	if (size < names_off || size < names_off + e->path.len)
		return 0;
	iface = il_fs_iface_name(il_fs_event_iface(e));
	il_mono_clock_str(e->end_ns, ts, sizeof(ts));
	il_fs_event_path(e, path, sizeof(path));
	memcpy(comm, e->comm, IL_TASK_COMM_LEN);
	comm[IL_TASK_COMM_LEN] = 0;
	if (e->ret < 0)
		snprintf(bytes, sizeof(bytes), "%s", il_errno_name((int)-e->ret));
	else
		snprintf(bytes, sizeof(bytes), "%lld", (long long)e->ret);

	switch (il_opts.format) {
	case IL_FMT_TEXT:
		/* escaped, a hostile comm is longer than its column: cut, so the columns stay */
		printf("%-8s %s %-7u ", ts, il_text_column(comm, sizeof(comm), 16, tcomm, sizeof(tcomm)),
		       e->tgid);
		if (env.show_tid)
			printf("%-7u ", e->tid);
		printf("%c %-10s %-8lld %8.2f %-8s ", op_letter[e->op % FS_OP__MAX], bytes,
		       (long long)(e->offset / 1024), e->delta_ns / 1e6, iface);
		if (env.split)
			il_split_text(stdout, &e->split);
		printf("%s\n", il_text_path(path, sizeof(path), e->path.flags & IL_PATH_DELETED, tpath,
					     sizeof(tpath)));
		break;
	case IL_FMT_CSV:
		printf("%s,", ts);
		il_csv_field(stdout, comm);
		printf(",%u,%u,%c,%lld,%lld,%.3f,%s,%s,%s,", e->tgid, e->tid, op_letter[e->op % FS_OP__MAX],
		       e->ret < 0 ? 0LL : (long long)e->ret, (long long)e->offset, e->delta_ns / 1e3,
		       e->ret < 0 ? il_errno_name((int)-e->ret) : "", il_fs_sync_kind(e), iface);
		if (env.split)
			il_split_csv(stdout, &e->split);
		printf("%s,", e->path.flags & IL_PATH_DELETED ? "true" : "false");
		il_csv_field(stdout, path);
		putchar('\n');
		break;
	case IL_FMT_JSON: {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "time", json_object_new_string(ts));
		il_json_add_name(o, "comm", comm, sizeof(comm));
		json_object_object_add(o, "pid", json_object_new_int(e->tgid));
		json_object_object_add(o, "tid", json_object_new_int(e->tid));
		json_object_object_add(o, "op", json_object_new_string((char[]){ op_letter[e->op % FS_OP__MAX], 0 }));
		json_object_object_add(o, "bytes", json_object_new_int64(e->ret < 0 ? 0 : e->ret));
		json_object_object_add(o, "size", json_object_new_uint64(e->size));
		json_object_object_add(o, "offset", json_object_new_int64(e->offset));
		json_object_object_add(o, "usecs", il_json_usecs(e->delta_ns / 1e3));
		json_object_object_add(o, "errno", e->ret < 0 ?
				       json_object_new_string(il_errno_name((int)-e->ret)) : NULL);
		if (e->op == FS_OP_FSYNC)
			json_object_object_add(o, "sync", json_object_new_string(il_fs_sync_kind(e)));
		snprintf(bytes, sizeof(bytes), "%u:%u", IL_DEV_MAJOR(e->dev), IL_DEV_MINOR(e->dev));
		json_object_object_add(o, "dev", json_object_new_string(bytes));
		json_object_object_add(o, "ino", json_object_new_uint64(e->ino));
		json_object_object_add(o, "interface", il_fs_event_iface(e) == FS_IF_ANY ? NULL :
				       json_object_new_string(iface));
		json_object_object_add(o, "deleted",
				       json_object_new_boolean(!!(e->path.flags & IL_PATH_DELETED)));
		il_json_add_name(o, "file", path, sizeof(path));
		if (env.split)
			json_object_object_add(o, "split", il_split_json(&e->split));
		il_json_print(stdout, o);
		break;
	}
	}
	return 0;
}

/* ---- summary ------------------------------------------------------------------------ */

/* -p's children, which are not traced (children.h), sampled every second: the last sample
 * stands when the parent has gone */
static struct il_children kids;

static int sample_kids(void *ctx)
{
	(void)ctx;
	il_children_sample(&kids);
	return 0;
}

/* --split at exit: the sums per (process, operation) and the wakers, from the kernel's
 * aggregates (every traced call, slow or not). */
static struct il_split split_sums;

static void print_summary(const struct fs_op_stats st[FS_OP__MAX],
			  const struct fs_op_stats by_if[2][FS_OP__MAX], const __u64 drops[IL_DROP__MAX],
			  const struct il_fs_aio_row *aio, int naio)
{
	FILE *f = il_opts.format == IL_FMT_CSV ? stderr : stdout;
	const enum fs_iface ifs[2] = { env.sum_iface, FS_IF_URING };
	char line[512];

	if (il_opts.format == IL_FMT_JSON) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "summary", il_fs_summary_json(st, by_if, ifs));
		json_object_object_add(o, "aio", il_fs_aio_json(aio, naio));
		json_object_object_add(o, "threshold_ms", json_object_new_uint64(env.min_ms));
		json_object_object_add(o, "untraced_children", il_children_json(&kids));
		json_object_object_add(o, "lost", il_drops_json(drops));
		if (env.split)
			json_object_object_add(o, "split", il_split_sums_json(&split_sums));
		il_json_print(stdout, o);
		return;
	}
	if (env.min_ms)
		fprintf(f, "\nSummary of every traced call (rows above: %llu ms or slower):\n", env.min_ms);
	else
		fprintf(f, "\nSummary of every traced call (rows above: every call):\n");
	il_fs_summary_print(f, by_if, ifs);
	for (int i = 0; i < naio; i++)
		fprintf(f, "%s\n", il_fs_aio_notice(&aio[i], line, sizeof(line)));
	if (*il_children_note(&kids, line, sizeof(line)))
		fprintf(f, "%s\n", line);
	if (env.split)
		il_split_sums_print(f, &split_sums);
	il_drops_print(f, drops);
}

int main(int argc, char **argv)
{
	static const struct argp argp = { options, parse_arg, NULL, doc, il_argp_children, NULL, NULL };
	struct il_layerset *ls = NULL;
	struct il_plan *plans, *splitp = NULL;
	int types[FS_TYPE__MAX], nplans = 0, err, rc = IL_EXIT_ERR;
	struct fsslower_bpf *skel = NULL;
	struct ring_buffer *rb = NULL;
	struct fs_op_stats stats[FS_OP__MAX], by_if[2][FS_OP__MAX];
	struct il_fs_aio_row *aio = NULL;
	__u64 drops[IL_DROP__MAX] = {};
	int naio = 0;
	struct fs_cfg *cfg;
	char names[64] = "";

	il_tool_start("fsslower", &argp, IL_OPT_PID | IL_OPT_CGROUP | IL_OPT_TID | IL_OPT_DURATION | IL_OPT_JSON |
		      IL_OPT_CSV, argc, argv);
	skel = IL_SKEL_OPEN(fsslower_bpf);
	cfg = il_fs_cfg(skel->obj);
	il_fs_choose(cfg, env.file, env.fs_given, env.fs_wanted);
	cfg->targ_tgid = il_opts.pid;
	cfg->targ_tid = il_opts.tid;
	cfg->min_ns = env.min_ms * 1000000ULL;
	il_split_cfg(skel->obj, env.split);

	/* Only the chosen plans' programs load: those of filesystems left out stay off. */
	il_autoload_none(skel->obj);
	for (int t = 0; t < FS_TYPE__MAX; t++)
		nplans += env.fs_wanted[t];
	if (!(ls = il_layerset_new(skel->obj, nplans + 1)) || !(plans = il_layerset_add(ls, "fs", nplans)) ||
	    (env.split && !(splitp = il_layerset_add(ls, "split", 1))))
		goto out;
	nplans = il_fs_plans(skel->obj, env.fs_wanted, plans, types);
	if (splitp)
		il_split_plan(skel->obj, splitp);
	for (int i = 0; i < nplans; i++)
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
			 names[0] ? ", " : "", il_fs_table[types[i]].name);
	if (il_layerset_choose(ls, il_opts.attach))
		goto out;
	env.sum_iface = FS_IF_SYSCALL;
	for (int i = 0; i < nplans; i++)
		if (il_plan_family(&plans[i]) != IL_FAM_TRACEPOINT)
			env.sum_iface = FS_IF_ANY;
	bpf_map__set_max_entries(skel->maps.fs_events, env.ringbuf_mb << 20);
	if (il_layerset_loaded(ls, il_maps_ahead(skel->obj) ?: fsslower_bpf__load(skel)) || il_layerset_attach(ls))
		goto out;
	if (!(rb = il_ringbuf_open(skel->maps.fs_events, handle_event, NULL)))
		goto out;
	print_header();
	/* what -p, --tid and -f leave: " of process N on one file" */
	char who[64] = "";
	int n = 0;
	if (il_opts.tid || il_opts.pid)
		n = snprintf(who, sizeof(who), " of %s %u", il_opts.tid ? "thread" : "process",
			     il_opts.tid ? il_opts.tid : il_opts.pid);
	if (env.file)
		snprintf(who + n, sizeof(who) - n, " on one file");
	if (env.min_ms)
		fprintf(stderr, "Tracing %s operations%s slower than %llu ms... Hit Ctrl-C to end.\n",
			names, who, env.min_ms);
	else
		fprintf(stderr, "Tracing every %s operation%s... Hit Ctrl-C to end.\n", names, who);

	/* rows the BPF side sent without a wakeup: il_run reads them at its poll's timeouts */
	struct il_run run = { .duration_s = il_opts.duration_s, .rb = rb,
			      .interval_s = il_opts.pid ? 1 : 0, .tick = sample_kids };
	il_children_start(&kids, il_opts.pid, il_obj_map_fd(skel->obj, "fs_exited_io"));
	if (il_run(&run) < 0)
		goto out;
	il_children_sample(&kids);
	err = il_fs_stats_read(skel->obj, stats);
	if (!err)
		err = il_fs_iface_stats_read(skel->obj, env.sum_iface, by_if[0]);
	if (!err)
		err = il_fs_iface_stats_read(skel->obj, FS_IF_URING, by_if[1]);
	if (!err)
		err = il_drops_read(bpf_map__fd(skel->maps.il_drops), drops);
	if (!err && (naio = il_fs_aio_read(skel->obj, &aio)) < 0)
		err = naio;
	drops[IL_DROP_MISSED_RETURN] += il_fs_orphan_starts(skel->obj);
	if (!err && env.split)
		err = il_split_read(skel->obj, &split_sums);
	if (err) {
		il_err("cannot read the summary maps: %s", il_errno_name(err));
		goto out;
	}
	print_summary(stats, (const struct fs_op_stats (*)[FS_OP__MAX])by_if, drops, aio, naio);
	rc = il_tool_output_status();
out:
	il_children_free(&kids);
	il_split_free(&split_sums);
	free(aio);
	ring_buffer__free(rb);
	il_layerset_free(ls);
	fsslower_bpf__destroy(skel);
	return rc;
}
