/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The block layer's types, shared by its BPF side (bpf/lib/block.bpf.h), its user side
 * (user/lib/block.c) and the tools that compose it. Fixed-width types only.
 */
#ifndef IOLAYER_BLOCK_H
#define IOLAYER_BLOCK_H

#include "lib/shared.h"

/* The layer's settings, one struct in .rodata (`blk_cfg`), filled by user space before load
 * (user/lib/block.c). */
struct blk_cfg {
	/* block_rq_insert/issue take (q, rq) rather than (rq): kernels before 5.11 (and 5.10
	 * stable before 5.10.137), commit a54895fa057c; read from the tracepoint's BTF. */
	__u8 rq_two_args;
	__u8 pad[7];
};

/* Per-disk block totals (the aggregate mode of the layer, map `blk_disks`) since tracing began; key: disk dev_t (major << 20 | minor).
 * Histograms are log2 of ns (il_hist_slot). */
struct il_disk_stats {
	__u64 count;         /* requests completed */
	__u64 queued;        /* of which were seen entering the OS queue (block_rq_insert) */
	__u64 bytes;         /* bytes completed (block_rq_complete nr_bytes) */
	__u64 queue_ns;      /* sum of insert -> issue, ns */
	__u64 device_ns;     /* sum of issue -> complete, ns */
	__u64 device_max_ns; /* longest issue -> complete, ns */
	__u64 queue_slots[IL_HIST_SLOTS];
	__u64 device_slots[IL_HIST_SLOTS];
	__u64 ops[IL_OP__MAX]; /* requests completed, by operation (enum il_req_op_kind): reads and
				* writes as /proc/diskstats counts them, flushes apart */
};

#endif
