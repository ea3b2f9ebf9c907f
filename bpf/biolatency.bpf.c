/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* biolatency: block request latency as log2 histograms, per disk and/or operation. */
#include "lib/block.bpf.h"
#include "biolatency.h"

const volatile bool targ_queued = false;   /* -Q: from insert (queued in the OS), not issue */
const volatile bool targ_ms = false;       /* -m: histogram in msecs */
const volatile bool targ_per_disk = false; /* -D */
const volatile bool targ_per_op = false;   /* -F */
const volatile __u32 targ_dev = 0;         /* -d: only this disk (major << 20 | minor); 0 all */
const volatile bool targ_dev_part = false; /* -d names a partition: targ_dev is the request's partition */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct bio_hist_key);
	__type(value, struct bio_hist);
} hists SEC(".maps");

static struct bio_hist zero_hist;

static __always_inline int on_complete(unsigned long long *ctx)
{
	struct request *rq = (struct request *)ctx[0];
	struct bio_hist_key key = {};
	struct bio_hist *h;
	__u64 queue, delta;
	__u32 dev;

	dev = il_disk_dev(il_rq_disk(rq));
	if (targ_dev && (targ_dev_part ? il_rq_part_dev(rq) : dev) != targ_dev) {
		il_block_forget(rq);
		return 0;
	}
	if (il_block_complete(ctx, &queue, &delta))
		return 0;
	if (targ_queued)
		delta += queue;
	if (targ_per_disk)
		key.dev = dev;
	if (targ_per_op)
		key.op = il_rq_op(rq);
	h = il_lookup_or_init(&hists, &key, &zero_hist);
	if (!h)
		return 0;
	delta /= targ_ms ? 1000000 : 1000;
	__sync_fetch_and_add(&h->slots[il_slot_idx(delta)], 1);
	return 0;
}

IL_BLOCK_PROGS(on_complete)

char LICENSE[] SEC("license") = "GPL";
