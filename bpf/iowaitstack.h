/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Types shared by the I/O-wait layer's BPF code (bpf/lib/iowait.bpf.h) and user space
 * (user/iowaitstack.c). Fixed-width types only.
 */
#ifndef IOLAYER_IOWAITSTACK_H
#define IOLAYER_IOWAITSTACK_H

#include "lib/shared.h"

#define IW_MAX_STACK_DEPTH 127  /* frames kept per stack (the kernel's PERF_MAX_STACK_DEPTH) */
#define IW_MAX_STACKS 16384     /* stack map buckets (kernel and user stacks share them) */
#define IW_MAX_SLEEPERS 10240   /* threads asleep in I/O wait at one time */
#define IW_MAX_ENTRIES 16384    /* distinct (thread, kernel stack, user stack) aggregates */

/* Stack ids in iw_key beside the stack map's own ids (>= 0). */
#define IW_STACK_NONE (-1)      /* not collected: user stacks without -U, or a kernel thread */
#define IW_STACK_LOST (-2)      /* bpf_get_stackid() failed (bucket taken by another stack,
                                 * or no stack): counted as IL_DROP_STACK */

/* One aggregate: a thread and the stacks it slept under. comm is the thread's name when it
 * woke up (task_struct.comm). */
struct iw_key {
	__u32 tgid;                     /* process id */
	__u32 tid;                      /* thread id */
	__s32 kstack;                   /* kernel stack id in iw_stacks, or IW_STACK_* */
	__s32 ustack;                   /* user stack id in iw_stacks, or IW_STACK_* */
	char comm[IL_TASK_COMM_LEN];
};

/* Sleeps counted under an iw_key since tracing began (never reset by the kernel side). */
struct iw_val {
	__u64 count;                    /* sleeps */
	__u64 total_ns;                 /* sum of their durations, ns */
	__u64 max_ns;                   /* longest one, ns */
};

/* With user stacks: sent once per process, at its first I/O-wait sleep, so user space can read
 * the process's mappings while it is alive (it may exit before its stacks are printed). */
struct iw_proc_event {
	__u32 tgid;
};

#endif /* IOLAYER_IOWAITSTACK_H */
