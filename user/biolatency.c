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
		if (pos > 1)
			return ARGP_ERR_UNKNOWN; /* the shared parser refuses it */
		if (pos++ == 0)
			env.interval = il_arg_uint(arg, "interval (seconds)", 1, UINT_MAX);
		else
			env.count = il_arg_uint(arg, "count", 1, UINT_MAX);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* Counts already printed per key, so each interval prints only what is new without racing
 * the kernel by deleting map entries. */
struct snap {
	struct bio_hist_key key;
	__u64 slots[IL_HIST_SLOTS];
};
static struct il_snaps snaps = { sizeof(struct snap), sizeof(struct bio_hist_key) };
static __u64 errors_printed; /* blk_errors already printed */

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
	return op < IL_OP__MAX ? il_blk_op_names[op] : "other";
}

/* The keys of map fd (hists or breakdown), sorted, with key {0} among them (the plain mode's
 * histogram is in hist_cpu: hist_read()). Returns how many (max at most). */
static size_t sorted_keys(int fd, struct bio_hist_key *keys, size_t max)
{
	size_t n = il_map_keys(fd, keys, sizeof(*keys), max - 1);
	bool key0 = false;

	for (size_t i = 0; i < n; i++)
		key0 |= !keys[i].dev && !keys[i].op && !keys[i].cgroup;
	if (!key0)
		keys[n++] = (struct bio_hist_key){ 0 };
	qsort(keys, n, sizeof(keys[0]), key_cmp);
	return n;
}

/* What tells key k's rows apart (disk, op, with -C its cgroup cg): into JSON object o when
 * not NULL, else as "disk = D  op = O  cgroup = C" (two blanks between, a newline after when
 * any). */
static void key_label(struct json_object *o, const struct bio_hist_key *k, const char *cg,
		      bool disk, bool op)
{
	char name[64], ecg[4 * 512 + 1], cgs[512];
	const char *sep = "";
	struct il_cgident id;

	if (disk)
		il_disk_name(k->dev, name, sizeof(name));
	if (o) {
		if (disk)
			json_object_object_add(o, "disk", json_object_new_string(name));
		if (op)
			json_object_object_add(o, "op", json_object_new_string(op_name(k->op)));
		if (env.per_cgroup) {
			il_json_add_name(o, "cgroup", cg, strlen(cg) + 1);
			json_object_object_add(o, "cgroup_id", json_object_new_uint64(k->cgroup));
			if (il_cgident_parse(cg, &id)) /* container_id, pod_uid, unit, ... */
				il_cgident_json_add(o, &id);
		}
		return;
	}
	if (disk)
		printf("disk = %s", name), sep = "  ";
	if (op)
		printf("%sop = %s", sep, op_name(k->op)), sep = "  ";
	if (env.per_cgroup)
		printf("%scgroup = %s", sep, /* a container's or a unit's short name, else the path */
		       il_text_escape(il_cgident_short_of(cg, cgs, sizeof(cgs)), sizeof(cgs), ecg, sizeof(ecg)));
	if (disk || op || env.per_cgroup)
		putchar('\n');
}

/* ---- --breakdown ------------------------------------------------------------------------ */

/* What was printed of each breakdown key: its phases and its disk's event counts. */
struct bd_snap {
	struct bio_hist_key key;
	struct blk_phases p;
	__u64 ev[IL_BLK_EV__MAX];
};
static struct il_snaps bd_snaps = { sizeof(struct bd_snap), sizeof(struct bio_hist_key) };

static void print_breakdown(struct biolatency_bpf *skel, struct json_object *jout)
{
	int fd = bpf_map__fd(skel->maps.breakdown);
	struct bio_hist_key keys[1024];
	struct json_object *jarr = jout ? json_object_new_array() : NULL;
	char cg[512] = "";
	size_t n = sorted_keys(fd, keys, IL_ARRAY_SIZE(keys)), shown = 0;

	for (size_t i = 0; i < n; i++) {
		__u64 ev[IL_BLK_EV__MAX], ev_now[IL_BLK_EV__MAX];
		struct blk_phases now, d;
		struct bd_snap *s;

		if (bpf_map_lookup_elem(fd, &keys[i], &now) || !(s = il_snaps_get(&bd_snaps, &keys[i])))
			continue;
		il_blk_phases_sub(&d, &now, &s->p);
		s->p = now;
		if (!d.ios)
			continue;
		if (il_blk_events_read(skel->obj, keys[i].dev, ev_now)) /* since s was printed */
			memset(ev, 0, sizeof(ev));
		else
			il_counts_delta(ev, s->ev, ev_now, IL_BLK_EV__MAX);
		if (env.per_cgroup)
			il_cgroup_path(keys[i].cgroup, 0, cg, sizeof(cg));
		if (jarr) {
			struct json_object *o = il_blk_breakdown_json(&d, ev);

			key_label(o, &keys[i], cg, true, false);
			json_object_array_add(jarr, o);
			continue;
		}
		printf("\nbreakdown: ");
		key_label(NULL, &keys[i], cg, true, false);
		il_blk_breakdown_print(stdout, &d, ev);
		shown++;
	}
	if (jarr)
		json_object_object_add(jout, "breakdown", jarr);
	else if (shown)
		il_blk_breakdown_legend(stdout);
}

/* The histogram of key k into *h: hists' entry, and for key {0} the plain mode's per-CPU
 * histogram (hist_cpu) added to it. Returns 0, or -1 when neither has it. */
static int hist_read(struct biolatency_bpf *skel, const struct bio_hist_key *k, struct bio_hist *h)
{
	__u64 pc[IL_HIST_SLOTS];
	__u32 zero = 0;
	int rc;

	rc = bpf_map_lookup_elem(bpf_map__fd(skel->maps.hists), k, h) ? -1 : 0;
	if (rc)
		memset(h, 0, sizeof(*h));
	if (k->dev || k->op || k->cgroup ||
	    il_percpu_sum(bpf_map__fd(skel->maps.hist_cpu), &zero, sizeof(*h), pc, IL_HIST_SLOTS))
		return rc;
	for (int j = 0; j < IL_HIST_SLOTS; j++)
		h->slots[j] += pc[j];
	return 0;
}

/* Print what the histograms gained since the last call. */
static int print_hists(void *ctx)
{
	struct biolatency_bpf *skel = ctx;
	int fd = bpf_map__fd(skel->maps.hists);
	const char *unit = env.ms ? "msecs" : "usecs";
	struct bio_hist_key keys[4096];
	struct json_object *jarr = NULL, *jout = NULL;
	size_t n = sorted_keys(fd, keys, IL_ARRAY_SIZE(keys)), shown = 0;
	char ts[16], cg[512];
	__u64 errors, new_errors;
	__u32 zero = 0;

	/* requests completed with an error so far: blk_errors summed over the CPUs */
	if (il_percpu_sum(bpf_map__fd(skel->maps.blk_errors), &zero, sizeof(errors), &errors, 1))
		errors = errors_printed;
	new_errors = errors - errors_printed;

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

		if (hist_read(skel, &keys[i], &h) || !(s = il_snaps_get(&snaps, &keys[i])))
			continue;
		il_counts_delta(delta, s->slots, h.slots, IL_HIST_SLOTS);
		if (!il_hist_total(delta, IL_HIST_SLOTS))
			continue;
		shown++;
		if (env.per_cgroup)
			il_cgroup_path(keys[i].cgroup, h.tgid, cg, sizeof(cg));
		if ((il_opts.format == IL_FMT_JSON)) {
			struct json_object *o = il_hist_json(delta, IL_HIST_SLOTS, unit);

			key_label(o, &keys[i], cg, env.per_disk, env.per_op);
			json_object_array_add(jarr, o);
			continue;
		}
		putchar('\n');
		key_label(NULL, &keys[i], cg, env.per_disk, env.per_op);
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
	il_tool_disk(env.disk, &env.dev, &env.dev_part);
	/* Bios are followed when latency starts before the request, per cgroup, for the
	 * breakdown (then every request is linked to its first bio), or for a bio-based disk (no
	 * requests at all: then only such disks' bios); the time before Q when it is asked for. */
	bool rq_bios = env.from < BLK_MK_I || env.per_cgroup || env.breakdown;
	bool bios = rq_bios || (env.disk ? il_disk_bio_based(env.dev) : il_disk_any_bio_based());
	bool submit = env.from == BLK_MK_SUBMIT || env.breakdown;

	skel = IL_SKEL_OPEN(biolatency_bpf);
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
	if (il_layerset_choose(ls, il_opts.attach) || il_layerset_loaded(ls, il_maps_ahead(skel->obj) ?: biolatency_bpf__load(skel)) ||
	    il_layerset_attach(ls))
		goto out;

	fprintf(stderr, "Tracing block device I/O%s%s... Hit Ctrl-C to end.\n",
		env.disk ? " on " : "", env.disk ? env.disk : "");
	struct il_run run = { .interval_s = env.interval, .count = env.count, .tick = print_hists, .ctx = skel };
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
	il_snaps_free(&snaps);
	il_snaps_free(&bd_snaps);
	return rc;
}
