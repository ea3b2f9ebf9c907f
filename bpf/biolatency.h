/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Types shared by bpf/biolatency.bpf.c and user/biolatency.c. */
#ifndef IOLAYER_BIOLATENCY_H
#define IOLAYER_BIOLATENCY_H

#include "lib/shared.h"

/* Key of one histogram: dev is the disk (major << 20 | minor) with -D (and always for the
 * breakdown), else 0; op is an enum il_req_op_kind with -F, else 0; cgroup the cgroup id
 * (struct blk_io.cgroup) with -C, else 0. */
struct bio_hist_key {
	__u32 dev;
	__u32 op;
	__u64 cgroup;
};

/* log2 histogram of request latency, in usecs (msecs with -m); see il_hist_slot(). */
struct bio_hist {
	__u64 slots[IL_HIST_SLOTS];
	__u32 tgid;              /* the last submitter counted (-C: for its /proc/PID/cgroup) */
	__u32 pad;
};

#endif
