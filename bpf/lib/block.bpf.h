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
 *        (il_btf_tp_nargs) and sets il_block_rq_two_args.
 *   block_rq_complete(struct request *rq, blk_status_t error, unsigned int nr_bytes)
 */
#ifndef IOLAYER_BLOCK_BPF_H
#define IOLAYER_BLOCK_BPF_H

#include "lib/core_fixes.bpf.h"

/* 1 when block_rq_insert/issue take (q, rq): set by user space from BTF before load. */
const volatile bool il_block_rq_two_args = false;

#define IL_BLOCK_MAX_INFLIGHT 16384

/* struct request * -> start time (ns, bpf_ktime_get_ns) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, IL_BLOCK_MAX_INFLIGHT);
	__type(key, __u64);
	__type(value, __u64);
} il_rq_start SEC(".maps");

/* The request argument of block_rq_insert/issue from the raw argument array. */
static __always_inline struct request *il_block_rq_arg(unsigned long long *ctx)
{
	if (il_block_rq_two_args)
		return (struct request *)ctx[1];
	return (struct request *)ctx[0];
}

/* Record the start of rq. With keep_first, an existing start (from insert) is kept, so
 * requests that skip the insert tracepoint (no I/O scheduler) still start at issue. */
static __always_inline void il_block_start(struct request *rq, bool keep_first)
{
	__u64 key = (__u64)rq, ts = bpf_ktime_get_ns();

	if (bpf_map_update_elem(&il_rq_start, &key, &ts, keep_first ? BPF_NOEXIST : BPF_ANY)) {
		if (!keep_first || !bpf_map_lookup_elem(&il_rq_start, &key))
			il_drop(IL_DROP_MAP_FULL);
	}
}

/* At completion: the request's latency in ns, and its start forgotten. Returns 0 and sets
 * *delta_ns, or -1 when there is nothing to measure (drops counted). */
static __always_inline int il_block_end(struct request *rq, __u64 *delta_ns)
{
	__u64 key = (__u64)rq, now = bpf_ktime_get_ns(), *tsp;

	tsp = bpf_map_lookup_elem(&il_rq_start, &key);
	if (!tsp) {
		il_drop(IL_DROP_MISSED_START);
		return -1;
	}
	if (now < *tsp) {
		il_drop(IL_DROP_BACKWARDS);
		bpf_map_delete_elem(&il_rq_start, &key);
		return -1;
	}
	*delta_ns = now - *tsp;
	bpf_map_delete_elem(&il_rq_start, &key);
	return 0;
}

#endif /* IOLAYER_BLOCK_BPF_H */
