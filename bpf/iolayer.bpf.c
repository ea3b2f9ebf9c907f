/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * iolayer: every layer at once, aggregated in the kernel, for a verdict on which is slow.
 * Everything comes from the layers' headers: the block layer in its per-disk aggregate mode
 * (requests, and bios from submission: the phases before and after the queue),
 * the fs and writeback layers with their event streams turned off by user space
 * (fs_cfg.min_ns, wb_cfg.want_rows), read through their summary maps, and attribution
 * (lib/who.bpf.h) fed by all of them (at block_bio_queue, by the block layer's program, which
 * does attribution's part too: who_cfg.bio_in_blk; at block_rq_complete, the block layer's
 * program sets the time split's completion marker too: split_cfg.rq_done_in_blk; at
 * sched_switch, the I/O-wait layer's program runs the time split's handler too:
 * split_cfg.switch_in_iw).
 */
#include "lib/common.bpf.h"
#include "lib/block.bpf.h"
#include "lib/fs.bpf.h"
#include "lib/writeback.bpf.h"
#define IW_SWITCH_ALSO(ctx, btf) (split_cfg.switch_in_iw ? split_on_switch(ctx, btf) : 0)
#include "lib/iowait.bpf.h"

/* block_rq_complete: the request's phases, then the time split's marker (its wake-ups come
 * later, in the same completion), with the disk and the time the phases read. */
static __always_inline int iol_complete(unsigned long long *ctx, bool btf)
{
	struct blk_io io = {};
	bool done = !blk_disk_complete(ctx, btf, &io);

	if (split_cfg.rq_done_in_blk)
		split_on_rq_done(ctx, btf, done ? io.dev : 0, done ? io.ts[BLK_MK_C] : 0);
	return 0;
}

BLK_PROGS(iol_complete)
BLK_BIO_PROGS(blk_disk_bio_done)
WHO_PROGS

char LICENSE[] SEC("license") = "GPL";
