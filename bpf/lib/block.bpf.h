/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Block layer: the lifetime of a struct request from block_rq_insert (queued in the OS) or
 * block_rq_issue (sent to the device driver) to block_rq_complete, keyed by the request's
 * address. Handlers take the tracepoint's raw argument array so one body serves tp_btf and
 * raw_tp programs.
 *
 * Tracepoint arguments (include/trace/events/block.h):
 *   block_rq_insert(struct request *rq), block_rq_issue(struct request *rq)
 *     -- before 5.11 (and 5.10 stable before 5.10.137) both took (struct request_queue *q,
 *        struct request *rq), commit a54895fa057c ("block: remove the request_queue to
 *        argument request based tracepoints"). The user side reads the shape from BTF
 *        (user/lib/block.c) and sets blk_cfg.rq_two_args.
 *   block_rq_complete(struct request *rq, blk_status_t error, unsigned int nr_bytes)
 *     -- error was an int errno before 5.16 (Christoph Hellwig's "block: don't call
 *        blk_status_to_errno in blk_update_request"); non-zero is an error either way.
 *        It fires at the start of blk_update_request() (block/blk-core.c before 5.16,
 *        block/blk-mq.c after), before request.__data_len drops by nr_bytes, and from
 *        blk_complete_request() for batched completions with all the bytes.
 */
#ifndef IOLAYER_BLOCK_BPF_H
#define IOLAYER_BLOCK_BPF_H

#include "lib/core_fixes.bpf.h"
#include "lib/block.h"
#include "lib/who.bpf.h"

/* Settings, filled by user space before load (struct blk_cfg, user/lib/block.c). */
const volatile struct blk_cfg blk_cfg = {};

#define IL_BLOCK_MAX_INFLIGHT 16384

/* When a request in flight entered the OS queue and was issued to the driver. */
struct il_rq_times {
	__u64 insert_ns; /* bpf_ktime_get_ns() at block_rq_insert, 0 when not seen */
	__u64 issue_ns;  /* bpf_ktime_get_ns() at block_rq_issue, 0 when not yet issued */
	__u32 parts;     /* completions of a part seen (bytes were left): times are kept */
	__u32 error;     /* a part completed with an error */
};

/* struct request * -> its times */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, IL_BLOCK_MAX_INFLIGHT);
	__type(key, __u64);
	__type(value, struct il_rq_times);
} il_rq_start SEC(".maps");

/* Requests measured whose completion (of any part) carried an error: one per-CPU counter at
 * key 0. Not a drop: these requests are in the histograms too. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} il_blk_errors SEC(".maps");

/* The request argument of block_rq_insert/issue from the raw argument array. */
static __always_inline struct request *il_block_rq_arg(unsigned long long *ctx)
{
	return (struct request *)il_ctx_arg01(ctx, blk_cfg.rq_two_args);
}

/* block_rq_insert: the request enters the OS queue (I/O scheduler or software queue). */
static __always_inline void il_block_insert(struct request *rq)
{
	struct il_rq_times t = { .insert_ns = bpf_ktime_get_ns() }, *old;
	__u64 key = (__u64)rq;

	/* Requeued after a part completed (a short read the loop driver retries): the request
	 * keeps the times of its first insert and issue, to be measured whole. */
	old = bpf_map_lookup_elem(&il_rq_start, &key);
	if (old && old->parts)
		return;
	if (bpf_map_update_elem(&il_rq_start, &key, &t, BPF_ANY))
		il_drop(IL_DROP_MAP_FULL);
}

/* block_rq_issue: the request goes to the driver. An insert time already recorded is kept;
 * requests issued without an insert (no I/O scheduler, direct issue) have none. A request
 * issued again (requeued) is timed from its last issue, unless a part of it completed
 * already: then from its first. */
static __always_inline void il_block_issue(struct request *rq)
{
	__u64 key = (__u64)rq, now = bpf_ktime_get_ns();
	struct il_rq_times *t = bpf_map_lookup_elem(&il_rq_start, &key), n = { .issue_ns = now };

	if (t) {
		if (!t->parts)
			t->issue_ns = now;
		return;
	}
	if (bpf_map_update_elem(&il_rq_start, &key, &n, BPF_ANY))
		il_drop(IL_DROP_MAP_FULL);
}

/* block_rq_complete (ctx: its raw arguments): the request's times, forgotten from the map
 * once the request is finished. Returns 0 and fills *queue_ns (insert to issue, 0 when no
 * insert was seen) and *device_ns (issue to completion), or -1 when there is nothing to
 * measure (drops counted) or the request is not finished yet.
 * A driver may complete a request in parts (blk_update_request() with fewer bytes than are
 * left; the loop driver does on a short read, SCSI on a partial transfer): the request is
 * finished when nr_bytes covers what is left, request.__data_len at the tracepoint (the
 * kernel's own test in blk_update_request(): nr_bytes >= blk_rq_bytes(rq)). Until then the
 * request stays in flight, timed from its first issue; an error in any part makes it a
 * request completed with an error (il_blk_errors). */
static __always_inline int il_block_complete(unsigned long long *ctx, __u64 *queue_ns, __u64 *device_ns)
{
	struct request *rq = (struct request *)ctx[0];
	__u32 error = (__u32)ctx[1], nr_bytes = (__u32)ctx[2], zero = 0;
	__u32 left = BPF_CORE_READ(rq, __data_len);
	__u64 key = (__u64)rq, now = bpf_ktime_get_ns(), *errors;
	struct il_rq_times *t = bpf_map_lookup_elem(&il_rq_start, &key);
	int err = -1;

	if (nr_bytes < left) {
		if (t) {
			t->parts++;
			if (error)
				t->error = 1;
		}
		return -1;
	}
	if (!t || !t->issue_ns) {
		/* No start and no bytes left (request.__data_len 0) is the flush machinery ending
		 * a request a second time after its data phase (block/blk-flush.c,
		 * blk_flush_complete_seq(); its data and its flushes were measured as requests of
		 * their own): not a lost event. */
		if (left)
			il_drop(IL_DROP_MISSED_START);
	} else if (now < t->issue_ns || (t->insert_ns && t->issue_ns < t->insert_ns)) {
		il_drop(IL_DROP_BACKWARDS);
	} else {
		*queue_ns = t->insert_ns ? t->issue_ns - t->insert_ns : 0;
		*device_ns = now - t->issue_ns;
		err = 0;
		errors = (error || t->error) ? bpf_map_lookup_elem(&il_blk_errors, &zero) : NULL;
		if (errors)
			*errors += 1; /* per-CPU: no atomics needed */
	}
	if (t)
		bpf_map_delete_elem(&il_rq_start, &key);
	return err;
}

/* Per-disk totals of the aggregate mode (struct il_disk_stats, key: disk dev_t); no
 * preallocation, so objects that never count into it pay nothing. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct il_disk_stats);
} blk_disks SEC(".maps");

/* Aggregate-mode completion handler (IL_BLOCK_PROGS(il_block_disk_complete)): count the
 * request into its disk's totals in blk_disks. ctx is block_rq_complete's argument array. */
static __always_inline int il_block_disk_complete(unsigned long long *ctx)
{
	static const struct il_disk_stats zero;
	struct request *rq = (struct request *)ctx[0];
	__u32 dev = il_disk_dev(il_rq_disk(rq));
	struct il_disk_stats *d;
	__u64 queue, device;
	__u32 op;

	if (il_block_complete(ctx, &queue, &device))
		return 0;
	d = il_lookup_or_init(&blk_disks, &dev, &zero);
	if (!d)
		return 0;
	__sync_fetch_and_add(&d->count, 1);
	op = il_rq_op(rq);
	if (op < IL_OP__MAX)
		__sync_fetch_and_add(&d->ops[op], 1);
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

/* Forget a request without measuring it (filtered out). */
static __always_inline void il_block_forget(struct request *rq)
{
	__u64 key = (__u64)rq;

	bpf_map_delete_elem(&il_rq_start, &key);
}

/*
 * The layer's programs, tp_btf and raw_tp twins, named as user/lib/block.c's il_block_plan()
 * expects: btf_rq_{insert,issue,complete}, raw_rq_{insert,issue,complete}. The including
 * object passes the body of its completion handler, a function (unsigned long long *ctx).
 */
#define IL_BLOCK_PROGS(on_complete)                                                            \
	SEC("tp_btf/block_rq_insert")                                                          \
	int BPF_PROG(btf_rq_insert) { il_block_insert(il_block_rq_arg(ctx)); return 0; }      \
	SEC("tp_btf/block_rq_issue")                                                           \
	int BPF_PROG(btf_rq_issue) { il_block_issue(il_block_rq_arg(ctx)); return 0; }        \
	SEC("tp_btf/block_rq_complete")                                                        \
	int BPF_PROG(btf_rq_complete) { return on_complete(ctx); }                             \
	SEC("raw_tp/block_rq_insert")                                                          \
	int BPF_PROG(raw_rq_insert) { il_block_insert(il_block_rq_arg(ctx)); return 0; }      \
	SEC("raw_tp/block_rq_issue")                                                           \
	int BPF_PROG(raw_rq_issue) { il_block_issue(il_block_rq_arg(ctx)); return 0; }        \
	SEC("raw_tp/block_rq_complete")                                                        \
	int BPF_PROG(raw_rq_complete) { return on_complete(ctx); }

#endif /* IOLAYER_BLOCK_BPF_H */
