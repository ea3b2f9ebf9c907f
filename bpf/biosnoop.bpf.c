/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* biosnoop: one record per finished block I/O (a request, or a bio of a bio-based device),
 * from the block layer module with bio tracking and files on. */
#include "lib/block.bpf.h"

const volatile __u32 targ_dev = 0;         /* -d: this disk (major << 20 | minor); 0 all */
const volatile bool targ_dev_part = false; /* -d names a partition: match the bio's device */
const volatile __u32 targ_tgid = 0;        /* -p: this submitter */
const volatile __u64 min_ns = 0;           /* -m: I/Os at least this long (from their first mark) */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20); /* bytes; --ringbuf sets it (user/biosnoop.c) */
} bs_events SEC(".maps");

/* bs_events' last reader wakeup (il_wakeup_flags()). */
__u64 bs_last_wakeup = 0;

static __always_inline int emit(const struct blk_io *io)
{
	struct blk_io *e;
	__u64 start = io->ts[BLK_MK_SUBMIT];

	if (targ_dev && (targ_dev_part ? io->part != targ_dev && io->from != targ_dev
				       : io->dev != targ_dev))
		return 0;
	if (targ_tgid && io->tgid != targ_tgid)
		return 0;
	if (il_cg_cfg.id && !io->in_cg) /* -C: that cgroup or one below it (il_cg_under) */
		return 0;
	if (!start)
		start = io->ts[BLK_MK_Q];
	if (!start)
		start = io->ts[BLK_MK_I] ? io->ts[BLK_MK_I] : io->ts[BLK_MK_D];
	if (min_ns && io->ts[BLK_MK_C] - start < min_ns)
		return 0;
	e = il_ringbuf_reserve(&bs_events, sizeof(*e));
	if (!e)
		return 0;
	__builtin_memcpy(e, io, sizeof(*e));
	bpf_ringbuf_submit(e, il_wakeup_flags(&bs_events, &bs_last_wakeup, io->ts[BLK_MK_C]));
	return 0;
}

/* block_rq_complete (btf: from the tp_btf program). */
static __always_inline int on_complete(unsigned long long *ctx, bool btf)
{
	struct blk_io io = {};

	if (blk_done(ctx, btf, &io))
		return 0;
	if (!io.part) /* no bio seen: the partition the request was sent to (iostats) */
		io.part = il_rq_part_dev((struct request *)ctx[0]);
	return emit(&io);
}

static __always_inline int on_bio_done(struct blk_io *io)
{
	return emit(io);
}

BLK_PROGS(on_complete)
BLK_BIO_PROGS(on_bio_done)

char LICENSE[] SEC("license") = "GPL";
