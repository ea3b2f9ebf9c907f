/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* biolatency: block I/O latency as log2 histograms, per disk, operation and/or cgroup; and
 * the btt-like breakdown of the time into phases (--breakdown). */
#include "lib/block.bpf.h"
#include "biolatency.h"

const volatile __u32 targ_from = BLK_MK_D;  /* --from: the mark latency starts at (enum blk_mark) */
const volatile bool targ_ms = false;       /* -m: histogram in msecs */
const volatile bool targ_per_disk = false; /* -D */
const volatile bool targ_per_op = false;   /* -F */
const volatile bool targ_per_cgroup = false; /* -C */
const volatile bool targ_breakdown = false; /* --breakdown */
const volatile __u32 targ_dev = 0;         /* -d: only this disk (major << 20 | minor); 0 all */
const volatile bool targ_dev_part = false; /* -d names a partition: targ_dev is the request's partition */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct bio_hist_key);
	__type(value, struct bio_hist);
} hists SEC(".maps");

/* --breakdown: the phases per disk (and cgroup with -C). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct bio_hist_key);
	__type(value, struct blk_phases);
} breakdown SEC(".maps");

/* The one histogram of the plain mode (no -D, -F, -C, --breakdown, no bio tracking: see
 * lean), per CPU at key 0: an array lookup is inlined and a per-CPU slot needs no atomic
 * add. User space sums the CPUs into key {0} of hists. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bio_hist);
} hist_cpu SEC(".maps");

static struct bio_hist zero_hist;

/* ns in usecs (msecs with -m) without a 64-bit division (tens of cycles) below 2^32 ns
 * (4.3 s): there x / 1000 is (x * 274877907) >> 38 and x / 1000000 is (x * 1125899907) >> 50,
 * exactly (a multiplier m = ceil(2^s / d) is exact for 32-bit x when m * d - 2^s <= 2^(s-32):
 * 56 <= 64 and 157376 <= 262144). */
static __always_inline __u64 to_unit(__u64 ns)
{
	if (ns >> 32)
		return ns / (targ_ms ? 1000000 : 1000);
	return targ_ms ? (ns * 1125899907ULL) >> 50 : (ns * 274877907ULL) >> 38;
}
static struct blk_phases zero_phases;

/* Where io's latency starts: the --from mark, else the first later mark seen (a request never
 * inserted: its issue), else the last earlier one (a bio-based device's bio has no issue: Q). */
static __always_inline __u64 start_of(const struct blk_io *io)
{
	if (targ_from <= BLK_MK_SUBMIT && io->ts[BLK_MK_SUBMIT])
		return io->ts[BLK_MK_SUBMIT];
	if (targ_from <= BLK_MK_Q && io->ts[BLK_MK_Q])
		return io->ts[BLK_MK_Q];
	if (targ_from <= BLK_MK_G && io->ts[BLK_MK_G])
		return io->ts[BLK_MK_G];
	if (targ_from <= BLK_MK_I && io->ts[BLK_MK_I])
		return io->ts[BLK_MK_I];
	if (io->ts[BLK_MK_D])
		return io->ts[BLK_MK_D];
	return io->ts[BLK_MK_Q] ? io->ts[BLK_MK_Q] : io->ts[BLK_MK_SUBMIT];
}

static __always_inline int count(const struct blk_io *io)
{
	struct bio_hist_key key = {};
	struct blk_phases *p;
	struct bio_hist *h;
	__u64 start = start_of(io), delta;

	if (!start || io->ts[BLK_MK_C] < start) {
		il_drop(IL_DROP_BACKWARDS);
		return 0;
	}
	delta = io->ts[BLK_MK_C] - start;
	if (targ_per_cgroup)
		key.cgroup = io->cgroup;
	if (targ_breakdown) {
		key.dev = io->dev;
		p = il_lookup_or_init(&breakdown, &key, &zero_phases);
		if (p)
			blk_phases_add(p, io, false);
	}
	key.dev = targ_per_disk ? io->dev : 0;
	if (targ_per_op)
		key.op = io->op;
	h = il_lookup_or_init(&hists, &key, &zero_hist);
	if (!h)
		return 0;
	__sync_fetch_and_add(&h->slots[il_slot_idx(to_unit(delta))], 1);
	if (io->tgid)
		h->tgid = io->tgid;
	return 0;
}

/* The plain mode: one histogram of issue (or insert, --from I) -> complete, which needs the
 * request's times only (blk_end()), not the whole struct blk_io; bios are followed
 * for bio-based disks only, if at all. Constants of .rodata: the verifier drops the other
 * path. */
#define lean (!targ_per_disk && !targ_per_op && !targ_per_cgroup && !targ_breakdown && \
	      (!blk_cfg.bios || blk_cfg.bio_only))

/* The plain mode's completion: the latency into hist_cpu. */
static __always_inline int count_lean(unsigned long long *ctx, bool btf)
{
	struct il_rq_times t;
	struct bio_hist *h;
	__u64 now, start;
	__u32 zero = 0;

	if (blk_end(ctx, btf, &t, &now, NULL, NULL))
		return 0;
	start = targ_from <= BLK_MK_I && t.insert_ns ? t.insert_ns : t.issue_ns;
	h = bpf_map_lookup_elem(&hist_cpu, &zero);
	if (!h)
		return 0;
	h->slots[il_slot_idx(to_unit(now - start))]++; /* per-CPU: no atomics needed */
	return 0;
}

/* block_rq_complete (btf: from the tp_btf program). */
static __always_inline int on_complete(unsigned long long *ctx, bool btf)
{
	struct request *rq = (struct request *)ctx[0];

	if (targ_dev && (targ_dev_part ? il_rq_part_dev(rq) : il_disk_dev(il_rq_disk(rq))) != targ_dev) {
		blk_forget(rq);
		return 0;
	}
	if (lean)
		return count_lean(ctx, btf);

	struct blk_io io = {};

	if (blk_done(ctx, btf, &io))
		return 0;
	return count(&io);
}

/* A bio of a bio-based device (dm, md) finished. */
static __always_inline int on_bio_done(struct blk_io *io)
{
	if (targ_dev && (targ_dev_part ? io->part != targ_dev && io->from != targ_dev
				       : io->dev != targ_dev))
		return 0;
	return count(io);
}

BLK_PROGS(on_complete)
BLK_BIO_PROGS(on_bio_done)

char LICENSE[] SEC("license") = "GPL";
