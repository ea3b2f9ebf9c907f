/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Types shared by bpf/iolayer.bpf.c and user/iolayer.c (the layer aggregate). */
#ifndef IOLAYER_IOLAYER_H
#define IOLAYER_IOLAYER_H

#include "lib/shared.h"

/* Per-disk block totals since tracing began; key: disk dev_t (major << 20 | minor).
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
};

#endif
