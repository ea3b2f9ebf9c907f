/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * biosnoop: one row per block I/O -- a request, or a bio of a bio-based device (dm, md) --
 * with its submitter, disk, operation, extent, file, cgroup, and where its time went:
 * before the queue (submission to block_bio_queue), in the OS queue, at the device.
 * Kernel side: bpf/biosnoop.bpf.c on the block layer module (bpf/lib/block.bpf.h) with bio
 * tracking and files on; files are named by the attribution module (who_files).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "libiolayer.h"
#include "biosnoop.skel.h"

static struct env {
	const char *disk;
	__u32 dev;
	bool dev_part;
	unsigned long long min_ms;
	unsigned ringbuf_mb;         /* --ringbuf: MiB of ring buffer for the rows */
} env = { .ringbuf_mb = 1 };

static const char doc[] =
"Trace block I/O: one row per request (or per bio of a bio-based device:\n"
"dm, md) with the process that submitted it, its disk, operation, sector\n"
"and size, the file it belongs to, its cgroup, and its time before the\n"
"queue, in the OS queue and at the device.\n"
"\n"
"USAGE: biosnoop [-d DISK|PARTITION] [-p PID] [-C CGROUP] [-m MS] [--json]\n"
"                [--ringbuf MB]\n"
"\n"
"EXAMPLES:\n"
"  biosnoop                  # every I/O until Ctrl-C\n"
"  biosnoop -d sda -m 10     # I/Os on sda of 10 ms or more\n"
"  biosnoop -d sda1          # I/Os sent to partition sda1\n"
"  biosnoop -p 1234          # I/Os submitted by process 1234\n"
"  biosnoop -C /slow         # I/Os of cgroup /slow and below (blkio or v2)\n"
"  biosnoop -C 3f2a9c1b      # I/Os of a container (its id)\n"
"  biosnoop --json > io.json\n"
"\n"
"T is blktrace's RWBS: R read, W write, F flush (first) or FUA (after the\n"
"op), D discard, S sync, M metadata, A readahead. Times in ms: BEFOREQ is\n"
"submission to block_bio_queue (the cgroup throttle holds bios there),\n"
"QUEUE is block_bio_queue to issue (rq-qos, tags, plug, I/O scheduler),\n"
"DEVICE is issue to completion. A bio-based device has no queue of its\n"
"own: its DEVICE is block_bio_queue to completion. '-': the kernel did not\n"
"show that point.\n"
"\n"
"OPTIONS:";

enum { OPT_RINGBUF = 0x100 };

static const struct argp_option opts[] = {
	{ "disk", 'd', "DISK", 0, "Only I/O of this disk, or sent to this partition\n(sda, nvme0n1, dm-0, sda1)", 0 },
	{ "min", 'm', "MS", 0, "Only I/Os of at least MS milliseconds in all\n(default 0)", 0 },
	{ "ringbuf", OPT_RINGBUF, "MB", 0, "Ring buffer for the rows, in MiB (default 1,\nrounded up to a power of two): give more\nwhen a burst of I/O loses rows", 0 },
	{ 0 },
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'd': env.disk = arg; break;
	case 'm': env.min_ms = il_arg_uint(arg, "the minimum latency (-m, milliseconds)", 0, 1000000000); break;
	case OPT_RINGBUF: env.ringbuf_mb = il_arg_ringbuf_mb(arg); break;
	default: return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static int files_fd = -1;
static unsigned long long t0_ns;

/* Name of the device a row is shown under: the partition the bio was sent to, else the disk. */
static const char *row_disk(const struct blk_io *e, char *buf, size_t len, __u32 *part)
{
	*part = 0;
	if (e->part && e->part != e->dev)
		*part = e->part;
	else if (e->from && e->from != e->dev && il_disk_whole(e->from) == e->dev)
		*part = e->from; /* before 5.12: the partition is block_bio_remap's device */
	return il_disk_name(*part ? *part : e->dev, buf, len);
}

/* The paths row_file() found last, by file, kept a second: finding one costs a map lookup
 * and, to follow renames, a stat and an open of the file; rows come at tens of thousands a
 * second, mostly for a few files. */
IL_STRCACHE(paths, 256, struct who_file_key, 512, 1000000000ULL);

/* Every second: the first rows lost while tracing are said on stderr at once, not only in
 * the final count (a JSON consumer may read nothing else). ctx: the il_drops map's fd. */
static int warn_lost(void *ctx)
{
	static bool warned;
	__u64 d[IL_DROP__MAX];

	if (!warned && !il_drops_read((int)(long)ctx, d) && d[IL_DROP_RINGBUF_FULL]) {
		il_warn("%llu rows lost so far: the ring buffer filled up faster than they were "
			"printed (--ringbuf MB for a bigger one; -d, -p, -C or -m for fewer rows); the "
			"final count follows", (unsigned long long)d[IL_DROP_RINGBUF_FULL]);
		warned = true;
	}
	return 0;
}

/* The file of a row ("" when unknown). */
static const char *row_file(const struct blk_io *e, char *buf, size_t len)
{
	struct who_file_key k = { .dev = e->ino_dev, .gen = e->ino_gen, .ino = e->ino };
	struct who_file f;

	buf[0] = 0;
	if (!e->ino || il_strcache_get(&paths, &k, buf, len))
		return buf;
	if (files_fd < 0 || bpf_map_lookup_elem(files_fd, &k, &f))
		memset(&f, 0, sizeof(f));
	il_who_file_path(&k, &f, buf, len, NULL);
	il_strcache_put(&paths, &k, buf);
	return buf;
}

/* Time between two points (ns) or -1 when one was not seen. */
static long long span(const struct blk_io *e, int a, int b)
{
	if (!e->ts[a] || !e->ts[b] || e->ts[b] < e->ts[a])
		return -1;
	return (long long)(e->ts[b] - e->ts[a]);
}

/* BEFOREQ, QUEUE and DEVICE of a row (ns, -1 unknown). */
static void row_times(const struct blk_io *e, long long t[3])
{
	t[0] = span(e, BLK_MK_SUBMIT, BLK_MK_Q);
	if (e->bio_based) {
		t[1] = -1;
		t[2] = span(e, BLK_MK_Q, BLK_MK_C);
		return;
	}
	t[1] = span(e, BLK_MK_Q, BLK_MK_D);
	if (t[1] < 0) /* no Q seen: from the request's allocation or insert */
		t[1] = span(e, e->ts[BLK_MK_G] ? BLK_MK_G : BLK_MK_I, BLK_MK_D);
	t[2] = span(e, BLK_MK_D, BLK_MK_C);
}

static void fmt_ms(long long ns, char *buf, size_t len)
{
	if (ns < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.3f", ns / 1e6);
}

static struct json_object *json_us(long long ns)
{
	return ns < 0 ? NULL : il_json_usecs(ns / 1e3);
}

static int handle_event(void *ctx, void *data, size_t size)
{
	const struct blk_io *e = data;
	static const char *const flag_names[] = { "sync", "meta", "fua", "preflush", "rahead", "background" };
	char disk[64], dname[64], from[64], rwbs[16], cg[512], file[WHO_PATH_DEPTH * WHO_NAME_LEN + 1024];
	char comm[IL_TASK_COMM_LEN + 1], ecomm[4 * sizeof(comm)], ecg[4 * sizeof(cg)], efile[4 * sizeof(file)];
	char cgs[sizeof(cg)];
	struct il_cgident cgi;
	char b[3][32], pid[16], sector[24];
	long long t[3];
	bool no_sector = e->sector == ~0ULL || (!e->bytes && e->op == IL_OP_FLUSH);
	__u32 part;
	double when;

	if (size < sizeof(*e))
		return 0;
	when = e->ts[BLK_MK_C] > t0_ns ? (e->ts[BLK_MK_C] - t0_ns) / 1e9 : 0;
	memcpy(comm, e->comm, IL_TASK_COMM_LEN);
	comm[IL_TASK_COMM_LEN] = 0;
	row_disk(e, disk, sizeof(disk), &part);
	il_blk_rwbs(e->op, e->flags, rwbs, sizeof(rwbs));
	il_cgroup_path(e->cgroup, e->tgid, cg, sizeof(cg));
	row_file(e, file, sizeof(file));
	row_times(e, t);

	if (il_opts.format == IL_FMT_JSON) {
		struct json_object *o = json_object_new_object(), *fl = json_object_new_array();
		static const char *const keys[BLK_PH__MAX] = { "before_q_us", "q2g_us", "g2i_us",
							      "i2d_us", "d2c_us", "q2c_us" };

		char ts[32];

		snprintf(ts, sizeof(ts), "%.6f", when); /* to the µs, as TIME(s): no float noise */
		json_object_object_add(o, "time_s", json_object_new_double_s(strtod(ts, NULL), ts));
		il_json_add_name(o, "comm", comm, sizeof(comm));
		json_object_object_add(o, "pid", e->tgid ? json_object_new_int64(e->tgid) : NULL);
		json_object_object_add(o, "tid", e->pid ? json_object_new_int64(e->pid) : NULL);
		json_object_object_add(o, "disk", json_object_new_string(il_disk_name(e->dev, dname, sizeof(dname))));
		json_object_object_add(o, "partition", part ? json_object_new_string(disk) : NULL);
		json_object_object_add(o, "from", e->from && !part ?
				       json_object_new_string(il_disk_name(e->from, from, sizeof(from))) : NULL);
		json_object_object_add(o, "rwbs", json_object_new_string(rwbs));
		for (size_t i = 0; i < IL_ARRAY_SIZE(flag_names); i++)
			if (e->flags & (1U << i))
				json_object_array_add(fl, json_object_new_string(flag_names[i]));
		json_object_object_add(o, "flags", fl);
		json_object_object_add(o, "sector", no_sector ? NULL : json_object_new_uint64(e->sector));
		json_object_object_add(o, "bytes", json_object_new_uint64(e->bytes));
		json_object_object_add(o, "bios", json_object_new_uint64(e->bios));
		il_json_add_name(o, "cgroup", cg, sizeof(cg));
		json_object_object_add(o, "cgroup_id", json_object_new_uint64(e->cgroup));
		if (il_cgident_parse(cg, &cgi)) /* container_id, pod_uid, unit, ... */
			il_cgident_json_add(o, &cgi);
		il_json_add_name(o, "file", file, sizeof(file));
		json_object_object_add(o, "ino", e->ino ? json_object_new_uint64(e->ino) : NULL);
		json_object_object_add(o, "before_q_us", json_us(t[0]));
		json_object_object_add(o, "queue_us", json_us(t[1]));
		json_object_object_add(o, "device_us", json_us(t[2]));
		for (int p = 0; p < BLK_PH__MAX; p++) {
			__u64 ns;

			json_object_object_add(o, keys[p], blk_phase_ns(e, p, &ns) ? json_us(ns) : NULL);
		}
		json_object_object_add(o, "error", json_object_new_boolean(e->error));
		json_object_object_add(o, "bio_based", json_object_new_boolean(e->bio_based));
		json_object_object_add(o, "requeued", json_object_new_boolean(e->requeued));
		il_json_print(stdout, o);
		return 0;
	}
	for (int i = 0; i < 3; i++)
		fmt_ms(t[i], b[i], sizeof(b[i]));
	snprintf(pid, sizeof(pid), e->tgid ? "%u" : "-", e->tgid);
	snprintf(sector, sizeof(sector), no_sector ? "-" : "%llu", (unsigned long long)e->sector);
	printf("%-11.6f %-16s %-7s %-9s %-4s %-12s %-8u %9s %9s %9s %-16s %s%s\n", when,
	       comm[0] ? il_text_column(comm, sizeof(comm), 16, ecomm, sizeof(ecomm)) : "-", pid, disk,
	       rwbs, sector, e->bytes, b[0], b[1], b[2],
	       /* a container's or a unit's short name, else the path */
	       il_text_escape(il_cgident_short_of(cg, cgs, sizeof(cgs)), sizeof(cgs), ecg, sizeof(ecg)),
	       file[0] ? il_text_escape(file, sizeof(file), efile, sizeof(efile)) : "-",
	       e->error ? "  (error)" : "");
	return 0;
}

int main(int argc, char **argv)
{
	static const struct argp argp = { opts, parse_arg, NULL, doc, il_argp_children, NULL, NULL };
	struct il_layerset *ls = NULL;
	struct biosnoop_bpf *skel;
	struct il_plan *plans;
	struct ring_buffer *rb = NULL;
	int rc = IL_EXIT_ERR;

	il_tool_option_doc('C', "Only I/O charged to this cgroup (the bio's\nblkcg) or to one below it: a path in the\nblkio (v1) or v2 hierarchy, a container's id\nor a unique prefix of it, or a unit's name");
	il_tool_start("biosnoop", &argp, IL_OPT_PID | IL_OPT_CGROUP | IL_OPT_JSON, argc, argv);
	il_tool_disk(env.disk, &env.dev, &env.dev_part);

	skel = IL_SKEL_OPEN(biosnoop_bpf);
	il_blk_cfg(skel->obj);
	il_blk_track_bios(skel->obj, true);
	skel->rodata->targ_dev = env.dev;
	skel->rodata->targ_dev_part = env.dev_part;
	skel->rodata->targ_tgid = il_opts.pid;
	skel->rodata->min_ns = env.min_ms * 1000000ULL;
	bpf_map__set_max_entries(skel->maps.bs_events, env.ringbuf_mb << 20);

	il_autoload_none(skel->obj);
	if (!(ls = il_layerset_new(skel->obj, 3)) || !(plans = il_layerset_add(ls, "block", 3)))
		goto out;
	il_blk_plan(skel->obj, true, &plans[0]);
	il_blk_bio_plan(skel->obj, &plans[1]);
	il_blk_submit_plan(skel->obj, &plans[2]);
	if (il_layerset_choose(ls, il_opts.attach) || il_layerset_loaded(ls, il_maps_ahead(skel->obj) ?: biosnoop_bpf__load(skel)) ||
	    il_layerset_attach(ls))
		goto out;
	files_fd = bpf_map__fd(skel->maps.who_files);
	if (!(rb = il_ringbuf_open(skel->maps.bs_events, handle_event, NULL)))
		goto out;
	t0_ns = il_now_ns();
	if (il_opts.format == IL_FMT_TEXT)
		printf("%-11s %-16s %-7s %-9s %-4s %-12s %-8s %9s %9s %9s %-16s %s\n", "TIME(s)", "COMM",
		       "PID", "DISK", "T", "SECTOR", "BYTES", "BEFOREQ", "QUEUE", "DEVICE", "CGROUP", "FILE");
	fflush(stdout);
	fprintf(stderr, "Tracing block I/O%s (times in ms)... Hit Ctrl-C to end.\n",
		env.disk || il_opts.pid || il_opts.cgroup || env.min_ms ? ", filtered" : "");

	struct il_run run = { .rb = rb, .interval_s = 1, .tick = warn_lost,
			      .ctx = (void *)(long)bpf_map__fd(skel->maps.il_drops) };
	if (il_run(&run) < 0)
		goto out;
	ring_buffer__consume(rb);
	il_drops_report(bpf_map__fd(skel->maps.il_drops), il_opts.format == IL_FMT_JSON);
	rc = il_tool_output_status();
out:
	ring_buffer__free(rb);
	il_layerset_free(ls);
	biosnoop_bpf__destroy(skel);
	return rc;
}
