/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * biolatency: summarize block device I/O latency as log2 histograms.
 * Kernel side: bpf/biolatency.bpf.c on block_rq_insert/issue/complete (tp_btf, else raw_tp).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "libiolayer.h"
#include "biolatency.h"
#include "biolatency.skel.h"

static struct env {
	unsigned interval, count;
	bool ms, timestamp, per_disk, per_op, queued;
	const char *disk;
	__u32 dev;
	bool dev_part; /* -d names a partition */
} env;

static const char doc[] =
"Summarize block device I/O latency as a histogram.\n"
"\n"
"USAGE: biolatency [OPTION...] [INTERVAL [COUNT]]\n"
"\n"
"Latency is measured from the issue of a request to the device driver to its completion\n"
"(with -Q, from its insertion into the OS queue). Without INTERVAL, one histogram is printed\n"
"at Ctrl-C. Requests completed with an error are counted under the histograms.\n"
"\n"
"EXAMPLES:\n"
"  biolatency              # summarize block I/O latency until Ctrl-C\n"
"  biolatency 1 10         # print 1 second summaries, 10 times\n"
"  biolatency -mT 1        # 1s summaries, milliseconds, with timestamps\n"
"  biolatency -Q           # include OS queued time in I/O time\n"
"  biolatency -D           # one histogram per disk\n"
"  biolatency -F           # one histogram per I/O operation (read, write, flush, discard)\n"
"  biolatency -d sdc       # trace sdc only\n"
"  biolatency -d sdc1      # trace partition sdc1 only\n"
"  biolatency -DF --json   # per disk and operation, as JSON lines\n"
"\n"
"OPTIONS:";

static const struct argp_option opts[] = {
	{ "milliseconds", 'm', NULL, 0, "Histogram in milliseconds (default: microseconds)", 0 },
	{ "timestamp", 'T', NULL, 0, "Print a timestamp with each histogram", 0 },
	{ "disk", 'D', NULL, 0, "One histogram per disk", 0 },
	{ "flag", 'F', NULL, 0, "One histogram per I/O operation", 0 },
	{ "queued", 'Q', NULL, 0, "Include OS queued time in I/O time", 0 },
	{ "disk-name", 'd', "DISK", 0, "Trace this disk or partition only (sda, nvme0n1, loop0, sda1)", 0 },
	{ 0 },
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	static int pos;

	switch (key) {
	case 'm': env.ms = true; break;
	case 'T': env.timestamp = true; break;
	case 'D': env.per_disk = true; break;
	case 'F': env.per_op = true; break;
	case 'Q': env.queued = true; break;
	case 'd': env.disk = arg; break;
	case ARGP_KEY_ARG:
		if (pos == 0) {
			env.interval = il_arg_uint(arg, "interval (seconds)", 1, UINT_MAX);
		} else if (pos == 1) {
			env.count = il_arg_uint(arg, "count", 1, UINT_MAX);
		} else {
			il_argp_fail(state, "unexpected argument '%s'", arg);
		}
		pos++;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const char *op_names[IL_OP__MAX] = {
	[IL_OP_READ] = "read", [IL_OP_WRITE] = "write", [IL_OP_FLUSH] = "flush",
	[IL_OP_DISCARD] = "discard", [IL_OP_OTHER] = "other",
};

/* Counts already printed per key, so each interval prints only what is new without racing
 * the kernel by deleting map entries. */
struct snap {
	struct bio_hist_key key;
	__u64 slots[IL_HIST_SLOTS];
};
static struct snap *snaps;
static size_t nsnaps;
static __u64 errors_printed; /* il_blk_errors already printed */

static struct snap *snap_get(const struct bio_hist_key *k)
{
	for (size_t i = 0; i < nsnaps; i++)
		if (!memcmp(&snaps[i].key, k, sizeof(*k)))
			return &snaps[i];
	struct snap *n = realloc(snaps, (nsnaps + 1) * sizeof(*snaps));
	if (!n)
		il_die("out of memory");
	snaps = n;
	memset(&snaps[nsnaps], 0, sizeof(*snaps));
	snaps[nsnaps].key = *k;
	return &snaps[nsnaps++];
}

static int key_cmp(const void *a, const void *b)
{
	const struct bio_hist_key *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->op < y->op ? -1 : x->op > y->op;
}

static const char *op_name(__u32 op)
{
	return op < IL_OP__MAX ? op_names[op] : "other";
}

/* Requests completed with an error so far: il_blk_errors summed over the CPUs. */
static __u64 errors_read(struct biolatency_bpf *skel)
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 vals[ncpu > 0 ? ncpu : 1], sum = 0;
	__u32 key = 0;

	if (ncpu <= 0 || bpf_map_lookup_elem(bpf_map__fd(skel->maps.il_blk_errors), &key, vals))
		return errors_printed;
	for (int c = 0; c < ncpu; c++)
		sum += vals[c];
	return sum;
}

/* Print what the histograms gained since the last call. */
static int print_hists(struct biolatency_bpf *skel)
{
	int fd = bpf_map__fd(skel->maps.hists);
	const char *unit = env.ms ? "msecs" : "usecs";
	struct bio_hist_key keys[4096], k, *prev = NULL;
	struct json_object *jarr = NULL, *jout = NULL;
	size_t n = 0;
	char ts[16], name[64];
	__u64 errors = errors_read(skel), new_errors = errors - errors_printed;

	while (n < IL_ARRAY_SIZE(keys) && !bpf_map_get_next_key(fd, prev, &k)) {
		keys[n] = k;
		prev = &keys[n++];
	}
	qsort(keys, n, sizeof(keys[0]), key_cmp);
	il_clock_str(ts, sizeof(ts));
	if ((il_opts.format == IL_FMT_JSON)) {
		jout = json_object_new_object();
		jarr = json_object_new_array();
		json_object_object_add(jout, "time", json_object_new_string(ts));
	} else if (env.timestamp) {
		printf("%-8s\n", ts);
	}
	for (size_t i = 0; i < n; i++) {
		struct bio_hist h;
		struct snap *s;
		__u64 delta[IL_HIST_SLOTS];

		if (bpf_map_lookup_elem(fd, &keys[i], &h))
			continue;
		s = snap_get(&keys[i]);
		for (int j = 0; j < IL_HIST_SLOTS; j++) {
			delta[j] = h.slots[j] - s->slots[j];
			s->slots[j] = h.slots[j];
		}
		if (!il_hist_total(delta, IL_HIST_SLOTS))
			continue;
		if ((il_opts.format == IL_FMT_JSON)) {
			struct json_object *o = il_hist_json(delta, IL_HIST_SLOTS, unit);

			if (env.per_disk)
				json_object_object_add(o, "disk", json_object_new_string(
					il_disk_name(keys[i].dev, name, sizeof(name))));
			if (env.per_op)
				json_object_object_add(o, "op", json_object_new_string(op_name(keys[i].op)));
			json_object_array_add(jarr, o);
			continue;
		}
		if (env.per_disk && env.per_op)
			printf("\ndisk = %s  op = %s\n", il_disk_name(keys[i].dev, name, sizeof(name)),
			       op_name(keys[i].op));
		else if (env.per_disk)
			printf("\ndisk = %s\n", il_disk_name(keys[i].dev, name, sizeof(name)));
		else if (env.per_op)
			printf("\nop = %s\n", op_name(keys[i].op));
		il_hist_print(stdout, delta, IL_HIST_SLOTS, unit);
		il_hist_print_percentiles(stdout, delta, IL_HIST_SLOTS, unit);
	}
	errors_printed = errors;
	if (il_opts.format == IL_FMT_JSON) {
		json_object_object_add(jout, "histograms", jarr);
		json_object_object_add(jout, "errors", json_object_new_uint64(new_errors));
		il_json_print(stdout, jout);
	} else {
		if (new_errors)
			printf("%llu requests completed with an error\n", (unsigned long long)new_errors);
		if (env.interval)
			putchar('\n');
	}
	fflush(stdout);
	return 0;
}

static int tick(void *ctx)
{
	return print_hists(ctx);
}

int main(int argc, char **argv)
{
	static const struct argp argp = { opts, parse_arg, "[INTERVAL [COUNT]]", doc, il_argp_children, NULL, NULL };
	struct il_plan plan = { 0 };
	struct biolatency_bpf *skel;
	__u64 drops[IL_DROP__MAX];
	int done, rc = IL_EXIT_ERR;

	il_tool_start("biolatency", &argp, IL_OPT_JSON, argc, argv);
	if (env.count && !env.interval)
		il_die("COUNT needs an INTERVAL");
	if (env.disk && il_disk_dev(env.disk, &env.dev))
		il_die("no block device named '%s' (see lsblk)", env.disk);
	if (env.disk)
		env.dev_part = il_disk_is_partition(env.disk);

	skel = biolatency_bpf__open();
	if (!skel)
		il_die("cannot open the BPF object: %s", strerror(errno));
	il_block_cfg(skel->obj);
	skel->rodata->targ_queued = env.queued;
	skel->rodata->targ_ms = env.ms;
	skel->rodata->targ_per_disk = env.per_disk;
	skel->rodata->targ_per_op = env.per_op;
	skel->rodata->targ_dev = env.dev;
	skel->rodata->targ_dev_part = env.dev_part;

	il_autoload_none(skel->obj);
	il_block_plan(skel->obj, env.queued, &plan);
	if (il_plans_choose(&plan, 1, il_opts.attach) || il_tool_loaded(biolatency_bpf__load(skel)))
		goto out;
	if (il_plans_attach(&plan, 1))
		goto out;

	il_signals_init();
	fprintf(stderr, "Tracing block device I/O%s... Hit Ctrl-C to end.\n",
		env.disk ? " on the chosen disk" : "");
	struct il_run run = { .interval_s = env.interval, .count = env.count, .tick = tick, .ctx = skel };
	done = il_run(&run);
	if (done < 0)
		goto out;
	if (!done)
		print_hists(skel);
	if (!il_drops_read(bpf_map__fd(skel->maps.il_drops), drops)) {
		if (il_opts.format == IL_FMT_JSON) {
			struct json_object *o = json_object_new_object();

			json_object_object_add(o, "lost", il_drops_json(drops));
			il_json_print(stdout, o);
		} else {
			il_drops_print(stderr, drops);
		}
	}
	rc = il_tool_output_status();
out:
	il_plans_detach(&plan, 1);
	biolatency_bpf__destroy(skel);
	free(snaps);
	return rc;
}
