/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * biolatency: summarize block device I/O latency as log2 histograms, and break the time down
 * into the block layer's phases (--breakdown).
 * Kernel side: bpf/biolatency.bpf.c on the block layer module: block_rq_insert/issue/complete
 * (tp_btf, else raw_tp) and, when latency starts before the request or per-cgroup numbers or
 * a bio-based disk are asked for, the bio tracepoints and submit_bio.
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
	bool ms, timestamp, per_disk, per_op, per_cgroup, breakdown;
	enum blk_mark from;   /* --from (-Q: insert) */
	const char *disk;
	__u32 dev;
	bool dev_part; /* -d names a partition */
} env = { .from = BLK_MK_D };

enum { OPT_FROM = 0x100, OPT_BREAKDOWN };

static const char doc[] =
"Summarize block device I/O latency as a histogram.\n"
"\n"
"USAGE: biolatency [OPTION...] [INTERVAL [COUNT]]\n"
"\n"
"Latency is measured from the issue of a request to the device driver to\n"
"its completion; --from moves the start earlier: insert (into the OS\n"
"queue; -Q), queue (block_bio_queue, Q) or submit (submit_bio, or the start\n"
"of the direct I/O or writeback). A bio-based disk (dm, md) has no request:\n"
"its bios are measured from Q. Without INTERVAL, one histogram is printed\n"
"at Ctrl-C. Requests completed with an error are counted under the\n"
"histograms.\n"
"\n"
"--breakdown adds, per disk (and cgroup with -C), btt's phases: before Q\n"
"(submit -> Q: the cgroup throttle), Q2G (rq-qos, tags), G2I (plug), I2D\n"
"(I/O scheduler), D2C (device) and Q2C, with average, p99 and share.\n"
"\n"
"EXAMPLES:\n"
"  biolatency              # summarize block I/O latency until Ctrl-C\n"
"  biolatency 1 10         # print 1 second summaries, 10 times\n"
"  biolatency -mT 1        # 1s summaries, milliseconds, with timestamps\n"
"  biolatency -Q           # include OS queued time in I/O time\n"
"  biolatency --from=submit -C   # from submission, one histogram per cgroup\n"
"  biolatency --breakdown -d sda # where the time goes on sda, phase by phase\n"
"  biolatency -D           # one histogram per disk\n"
"  biolatency -F           # per operation: read, write, flush, discard\n"
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
	{ "queued", 'Q', NULL, 0, "Include OS queued time in I/O time\n(--from=insert)", 0 },
	{ "from", OPT_FROM, "POINT", 0, "Where latency starts (default: issue):\nsubmit, queue, insert or issue", 0 },
	{ "cgroup", 'C', NULL, 0, "One histogram per cgroup\n(the submitter's, taken at Q)", 0 },
	{ "breakdown", OPT_BREAKDOWN, NULL, 0, "Per-disk table of btt's phases\n(average, p99, share)", 0 },
	{ "disk-name", 'd', "DISK", 0, "Trace this disk or partition only\n(sda, nvme0n1, loop0, sda1)", 0 },
	{ 0 },
};

/* --from's names of the points (enum blk_mark); G is not offered */
static const char *const from_names[BLK_MK_C] = { "submit", "queue", "-", "insert", "issue" };

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	static int pos;
	static bool q_given, from_given; /* -Q is --from=insert: another --from with it conflicts */

	switch (key) {
	case 'm': env.ms = true; break;
	case 'T': env.timestamp = true; break;
	case 'D': env.per_disk = true; break;
	case 'F': env.per_op = true; break;
	case 'Q':
		if (from_given && env.from != BLK_MK_I)
			il_argp_fail(state, "-Q (--from=insert) and --from=%s conflict: give one", from_names[env.from]);
		env.from = BLK_MK_I;
		q_given = true;
		break;
	case 'C': env.per_cgroup = true; break;
	case OPT_BREAKDOWN: env.breakdown = true; break;
	case OPT_FROM:
		for (env.from = BLK_MK_SUBMIT; env.from < BLK_MK_C && strcmp(arg, from_names[env.from]); env.from++)
			;
		if (env.from == BLK_MK_C || env.from == BLK_MK_G)
			il_argp_fail(state, "--from must be submit, queue, insert or issue, got '%s'", arg);
		if (q_given && env.from != BLK_MK_I)
			il_argp_fail(state, "-Q (--from=insert) and --from=%s conflict: give one", arg);
		from_given = true;
		break;
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
static __u64 errors_printed; /* blk_errors already printed */

/* The entry of key k in a growing array (the pointer at arr, *n entries of sz bytes, each
 * starting with its key), appended zeroed when new. */
static void *keyed(void *arr, size_t *n, size_t sz, const struct bio_hist_key *k)
{
	char *a, *na;

	memcpy(&a, arr, sizeof(a)); /* the array's pointer, whatever its element type */
	for (size_t i = 0; i < *n; i++)
		if (!memcmp(a + i * sz, k, sizeof(*k)))
			return a + i * sz;
	if (!(na = realloc(a, (*n + 1) * sz)))
		il_die("out of memory");
	memcpy(arr, &na, sizeof(na));
	memset(na + *n * sz, 0, sz);
	memcpy(na + *n * sz, k, sizeof(*k));
	return na + (*n)++ * sz;
}

static struct snap *snap_get(const struct bio_hist_key *k)
{
	return keyed(&snaps, &nsnaps, sizeof(*snaps), k);
}

static int key_cmp(const void *a, const void *b)
{
	const struct bio_hist_key *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->cgroup != y->cgroup)
		return x->cgroup < y->cgroup ? -1 : 1;
	return x->op < y->op ? -1 : x->op > y->op;
}

static const char *op_name(__u32 op)
{
	return op < IL_OP__MAX ? op_names[op] : "other";
}

/* Requests completed with an error so far: blk_errors summed over the CPUs. */
static __u64 errors_read(struct biolatency_bpf *skel)
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 vals[ncpu > 0 ? ncpu : 1], sum = 0;
	__u32 key = 0;

	if (ncpu <= 0 || bpf_map_lookup_elem(bpf_map__fd(skel->maps.blk_errors), &key, vals))
		return errors_printed;
	for (int c = 0; c < ncpu; c++)
		sum += vals[c];
	return sum;
}

/* ---- --breakdown ------------------------------------------------------------------------ */

/* A disk's event counts (struct blk_disk_stats): merges, splits, requeues, wbt steps, iocost
 * activations. */
#define NEV 5

/* What was printed of each breakdown key: its phases and its disk's event counts. */
struct bd_snap {
	struct bio_hist_key key;
	struct blk_phases p;
	__u64 ev[NEV];
};
static struct bd_snap *bd_snaps;
static size_t nbd_snaps;

/* The disk's event counts (blk_disks) since s was printed last. */
static void disk_events(struct biolatency_bpf *skel, struct bd_snap *s, __u64 out[NEV])
{
	struct blk_disk_stats st;

	memset(out, 0, NEV * sizeof(out[0]));
	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.blk_disks), &s->key.dev, &st))
		return;
	__u64 now[NEV] = { st.merges, st.splits, st.requeues, st.wbt_steps, st.iocost_activations };

	for (int i = 0; i < NEV; i++) {
		out[i] = now[i] - s->ev[i];
		s->ev[i] = now[i];
	}
}

static void print_breakdown(struct biolatency_bpf *skel, struct json_object *jout)
{
	int fd = bpf_map__fd(skel->maps.breakdown);
	struct bio_hist_key keys[1024], k, *prev = NULL;
	struct json_object *jarr = jout ? json_object_new_array() : NULL;
	static const char *const ev_keys[NEV] = { "merges", "splits", "requeues", "wbt_steps",
						  "iocost_activations" };
	char name[64], cg[512], ecg[4 * sizeof(cg) + 1];
	size_t n = 0, shown = 0;

	bool key0 = false;

	while (n < IL_ARRAY_SIZE(keys) - 1 && !bpf_map_get_next_key(fd, prev, &k)) {
		keys[n] = k;
		key0 |= !k.dev && !k.op && !k.cgroup;
		prev = &keys[n++];
	}
	if (!key0) /* the plain mode's histogram is in hist_cpu (hist_read()) */
		keys[n++] = (struct bio_hist_key){ 0 };
	qsort(keys, n, sizeof(keys[0]), key_cmp);
	for (size_t i = 0; i < n; i++) {
		struct blk_phases now, d;
		struct bd_snap *s;
		__u64 ev[NEV];

		if (bpf_map_lookup_elem(fd, &keys[i], &now))
			continue;
		s = keyed(&bd_snaps, &nbd_snaps, sizeof(*bd_snaps), &keys[i]);
		il_blk_phases_sub(&d, &now, &s->p);
		s->p = now;
		if (!d.ios)
			continue;
		disk_events(skel, s, ev);
		il_disk_name(keys[i].dev, name, sizeof(name));
		if (env.per_cgroup)
			il_blk_cgroup_path(keys[i].cgroup, 0, cg, sizeof(cg));
		if (jarr) {
			struct json_object *o = il_blk_phases_json(&d);

			json_object_object_add(o, "disk", json_object_new_string(name));
			if (env.per_cgroup) {
				il_json_add_name(o, "cgroup", cg, sizeof(cg));
				json_object_object_add(o, "cgroup_id", json_object_new_uint64(keys[i].cgroup));
			}
			for (int e = 0; e < NEV; e++)
				json_object_object_add(o, ev_keys[e], json_object_new_uint64(ev[e]));
			json_object_array_add(jarr, o);
			continue;
		}
		printf("\nbreakdown: disk = %s", name);
		if (env.per_cgroup)
			printf("  cgroup = %s", il_text_escape(cg, sizeof(cg), ecg, sizeof(ecg)));
		printf("\n  %llu I/Os, %llu bios, %llu bytes, %llu errors; disk: %llu merges, %llu splits, "
		       "%llu requeues\n", (unsigned long long)d.ios, (unsigned long long)d.bios,
		       (unsigned long long)d.bytes, (unsigned long long)d.errors,
		       (unsigned long long)ev[0], (unsigned long long)ev[1], (unsigned long long)ev[2]);
		if (ev[3] || ev[4])
			printf("  rq-qos (waits in Q2G): wbt changed its depth %llu times, iocost activated "
			       "%llu cgroups\n", (unsigned long long)ev[3], (unsigned long long)ev[4]);
		il_blk_phases_print(stdout, "  ", &d);
		shown++;
	}
	if (jarr)
		json_object_object_add(jout, "breakdown", jarr);
	else if (shown)
		printf("  (before Q: submit -> Q, the cgroup throttle; Q2G: rq-qos and tags; G2I: plug; "
		       "I2D: I/O scheduler; D2C: device; P99: bucket bound; SHARE: of the I/Os' lives, each\n   before Q + Q2C, or I2D + D2C for a request with no Q: the flushes the kernel makes)\n");
}

/* The histogram of key k into *h: hists' entry, and for key {0} the plain mode's per-CPU
 * histogram (hist_cpu) added to it. Returns 0, or -1 when neither has it. */
static int hist_read(struct biolatency_bpf *skel, const struct bio_hist_key *k, struct bio_hist *h)
{
	int ncpu = libbpf_num_possible_cpus(), rc;
	__u32 zero = 0;

	rc = bpf_map_lookup_elem(bpf_map__fd(skel->maps.hists), k, h) ? -1 : 0;
	if (rc)
		memset(h, 0, sizeof(*h));
	if (k->dev || k->op || k->cgroup || ncpu <= 0)
		return rc;

	struct bio_hist *pc = calloc(ncpu, sizeof(*pc));

	if (pc && !bpf_map_lookup_elem(bpf_map__fd(skel->maps.hist_cpu), &zero, pc)) {
		for (int c = 0; c < ncpu; c++)
			for (int j = 0; j < IL_HIST_SLOTS; j++)
				h->slots[j] += pc[c].slots[j];
		rc = 0;
	}
	free(pc);
	return rc;
}

/* Print what the histograms gained since the last call. */
static int print_hists(struct biolatency_bpf *skel)
{
	int fd = bpf_map__fd(skel->maps.hists);
	const char *unit = env.ms ? "msecs" : "usecs";
	struct bio_hist_key keys[4096], k, *prev = NULL;
	struct json_object *jarr = NULL, *jout = NULL;
	size_t n = 0;
	char ts[16], name[64], cg[512], ecg[4 * sizeof(cg) + 1];
	__u64 errors = errors_read(skel), new_errors = errors - errors_printed;
	size_t shown = 0;

	bool key0 = false;

	while (n < IL_ARRAY_SIZE(keys) - 1 && !bpf_map_get_next_key(fd, prev, &k)) {
		keys[n] = k;
		key0 |= !k.dev && !k.op && !k.cgroup;
		prev = &keys[n++];
	}
	if (!key0) /* the plain mode's histogram is in hist_cpu (hist_read()) */
		keys[n++] = (struct bio_hist_key){ 0 };
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

		if (hist_read(skel, &keys[i], &h))
			continue;
		s = snap_get(&keys[i]);
		for (int j = 0; j < IL_HIST_SLOTS; j++) {
			delta[j] = h.slots[j] - s->slots[j];
			s->slots[j] = h.slots[j];
		}
		if (!il_hist_total(delta, IL_HIST_SLOTS))
			continue;
		shown++;
		if (env.per_cgroup)
			il_blk_cgroup_path(keys[i].cgroup, h.tgid, cg, sizeof(cg));
		if ((il_opts.format == IL_FMT_JSON)) {
			struct json_object *o = il_hist_json(delta, IL_HIST_SLOTS, unit);

			if (env.per_disk)
				json_object_object_add(o, "disk", json_object_new_string(
					il_disk_name(keys[i].dev, name, sizeof(name))));
			if (env.per_op)
				json_object_object_add(o, "op", json_object_new_string(op_name(keys[i].op)));
			if (env.per_cgroup) {
				il_json_add_name(o, "cgroup", cg, sizeof(cg));
				json_object_object_add(o, "cgroup_id", json_object_new_uint64(keys[i].cgroup));
			}
			json_object_array_add(jarr, o);
			continue;
		}
		putchar('\n');
		/* "disk = D  op = O  cgroup = C", two blanks between, none at the end */
		if (env.per_disk)
			printf("disk = %s", il_disk_name(keys[i].dev, name, sizeof(name)));
		if (env.per_op)
			printf("%sop = %s", env.per_disk ? "  " : "", op_name(keys[i].op));
		if (env.per_cgroup)
			printf("%scgroup = %s", env.per_disk || env.per_op ? "  " : "",
			       il_text_escape(cg, sizeof(cg), ecg, sizeof(ecg)));
		if (env.per_disk || env.per_op || env.per_cgroup)
			putchar('\n');
		il_hist_print(stdout, delta, IL_HIST_SLOTS, unit);
		il_hist_print_percentiles(stdout, delta, IL_HIST_SLOTS, unit);
	}
	errors_printed = errors;
	if (env.breakdown)
		print_breakdown(skel, jout);
	if (il_opts.format == IL_FMT_JSON) {
		json_object_object_add(jout, "histograms", jarr);
		json_object_object_add(jout, "errors", json_object_new_uint64(new_errors));
		il_json_print(stdout, jout);
	} else {
		if (!shown) /* not a silent blank: the histogram is empty */
			printf("\nno block I/O completed%s%s%s\n", env.interval ? " in this interval" : "",
			       env.disk ? " on " : "", env.disk ? env.disk : "");
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
	struct il_layerset *ls = NULL;
	struct biolatency_bpf *skel;
	struct il_plan *plans;
	int done, rc = IL_EXIT_ERR;

	il_tool_start("biolatency", &argp, IL_OPT_JSON, argc, argv);
	if (env.count && !env.interval)
		il_die("COUNT needs an INTERVAL");
	if (env.disk && il_disk_dev(env.disk, &env.dev))
		il_die("no block device named '%s' (see lsblk)", env.disk);
	if (env.disk)
		env.dev_part = il_disk_is_partition(env.disk);
	/* Bios are followed when latency starts before the request, per cgroup, for the
	 * breakdown (then every request is linked to its first bio), or for a bio-based disk (no
	 * requests at all: then only such disks' bios); the time before Q when it is asked for. */
	bool rq_bios = env.from < BLK_MK_I || env.per_cgroup || env.breakdown;
	bool bios = rq_bios || (env.disk ? il_blk_bio_based(env.dev) : il_blk_any_bio_based());
	bool submit = env.from == BLK_MK_SUBMIT || env.breakdown;

	skel = IL_SKEL_OPEN(biolatency_bpf);
	if (!skel)
		il_die("cannot open the BPF object: %s", strerror(errno));
	il_blk_cfg(skel->obj);
	if (rq_bios)
		il_blk_track_bios(skel->obj, false);
	else if (bios) /* for the bio-based disks' bios only */
		il_blk_track_bio_based(skel->obj);
	skel->rodata->targ_from = env.from;
	skel->rodata->targ_ms = env.ms;
	skel->rodata->targ_per_disk = env.per_disk;
	skel->rodata->targ_per_op = env.per_op;
	skel->rodata->targ_per_cgroup = env.per_cgroup;
	skel->rodata->targ_breakdown = env.breakdown;
	skel->rodata->targ_dev = env.dev;
	skel->rodata->targ_dev_part = env.dev_part;

	il_autoload_none(skel->obj);
	if (!(ls = il_layerset_new(skel->obj, 3)) ||
	    !(plans = il_layerset_add(ls, "block", bios ? (submit ? 3 : 2) : 1)))
		goto out;
	il_blk_plan(skel->obj, env.from <= BLK_MK_I || env.breakdown, &plans[0]);
	if (bios)
		il_blk_bio_plan(skel->obj, &plans[1]);
	if (bios && submit)
		il_blk_submit_plan(skel->obj, &plans[2]);
	if (il_layerset_choose(ls, il_opts.attach) || il_layerset_loaded(ls, biolatency_bpf__load(skel)) ||
	    il_layerset_attach(ls))
		goto out;

	il_signals_init();
	fprintf(stderr, "Tracing block device I/O%s%s... Hit Ctrl-C to end.\n",
		env.disk ? " on " : "", env.disk ? env.disk : "");
	struct il_run run = { .interval_s = env.interval, .count = env.count, .tick = tick, .ctx = skel };
	done = il_run(&run);
	if (done < 0)
		goto out;
	if (!done)
		print_hists(skel);
	il_drops_report(bpf_map__fd(skel->maps.il_drops), il_opts.format == IL_FMT_JSON);
	rc = il_tool_output_status();
out:
	il_layerset_free(ls);
	biolatency_bpf__destroy(skel);
	free(snaps);
	free(bd_snaps);
	return rc;
}
