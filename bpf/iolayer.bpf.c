/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * iolayer: every layer at once, aggregated in the kernel, for a verdict on which is slow.
 * The layers' handlers and maps come from their headers; this object only adds the
 * per-disk queue/device split of the block layer. User space turns the fs and writeback
 * layers' event streams off (fs_min_ns, wb_want_rows) and reads their summary maps.
 */
#include "lib/common.bpf.h"
#include "lib/block.bpf.h"
#include "lib/fs.bpf.h"
#include "lib/writeback.bpf.h"
#include "lib/iowait.bpf.h"
#include "iolayer.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct il_disk_stats);
} disks SEC(".maps");

static struct il_disk_stats zero_disk;

static __always_inline int on_complete(unsigned long long *ctx)
{
	struct request *rq = (struct request *)ctx[0];
	__u32 dev = il_disk_dev(il_rq_disk(rq));
	struct il_disk_stats *d;
	__u64 queue, device;

	if (il_block_complete(ctx, &queue, &device))
		return 0;
	d = il_lookup_or_init(&disks, &dev, &zero_disk);
	if (!d)
		return 0;
	__sync_fetch_and_add(&d->count, 1);
	__sync_fetch_and_add(&d->bytes, (__u32)ctx[2]);
	__sync_fetch_and_add(&d->device_ns, device);
	if (device > d->device_max_ns) /* racy between CPUs: at worst a slightly lower max */
		d->device_max_ns = device;
	__sync_fetch_and_add(&d->device_slots[il_slot_idx(device)], 1);
	if (queue) {
		__sync_fetch_and_add(&d->queued, 1);
		__sync_fetch_and_add(&d->queue_ns, queue);
		__sync_fetch_and_add(&d->queue_slots[il_slot_idx(queue)], 1);
	}
	return 0;
}

IL_BLOCK_PROGS(on_complete)

char LICENSE[] SEC("license") = "GPL";
