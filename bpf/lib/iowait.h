/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The I/O-wait layer's types, shared by its BPF side (bpf/lib/iowait.bpf.h), its user side
 * (user/lib/iowait.c) and the tools that compose it. Fixed-width types only.
 */
#ifndef IOLAYER_IOWAIT_H
#define IOLAYER_IOWAIT_H

#include "lib/shared.h"

#define IW_MAX_STACK_DEPTH 127  /* frames kept per stack (the kernel's PERF_MAX_STACK_DEPTH) */
#define IW_MAX_KSTACK_DEPTH 64  /* the same when only kernel stacks are kept (no -U): an I/O
				 * wait's kernel stack is 15-45 frames (an fsync's through
				 * jbd2: 20); a deeper one loses its outermost frames */
#define IW_MAX_STACKS 16384     /* stack map buckets (kernel and user stacks share them) */
#define IW_MAX_SLEEPERS 10240   /* threads asleep in I/O wait at one time */
#define IW_MAX_ENTRIES 16384    /* distinct (thread, kernel stack, user stack) aggregates */

/* Stack ids in iw_key beside the stack map's own ids (>= 0). */
#define IW_STACK_NONE (-1)      /* not collected: user stacks without -U, or a kernel thread */
#define IW_STACK_LOST (-2)      /* bpf_get_stackid() failed (bucket taken by another stack,
                                 * or no stack): counted as IL_DROP_STACK */

/* The layer's settings, one struct in .rodata (`iw_cfg`), filled by user space before load
 * (user/lib/iowait.c). 0 = no filter. */
struct iw_cfg {
	__u32 targ_tgid;     /* only this process */
	__u32 targ_tid;      /* only this thread */
	__u64 min_ns;        /* only sleeps at least this long, ns */
	__u64 max_ns;        /* only sleeps at most this long, ns (0: no limit) */
	__u8 user_stacks;    /* also record user stacks (-U) */
	/* sched_switch passes prev_state as its 4th argument (since 5.18, commit fa2c3254d7cf,
	 * "sched/tracing: Don't re-read p->state when emitting sched_switch event"), read from
	 * the tracepoint's BTF prototype. Without it the state is read from task_struct, which a
	 * concurrent wake-up may already have set to TASK_RUNNING. */
	__u8 tp_prev_state;
	/* Sampled kernel stacks (iolayer, whose stacks are evidence, not a census): a sleep's
	 * stack is walked when it ends (bpf_get_task_stack() of the thread switched in, tp_btf
	 * only), into iw_tstacks, and only for some sleeps: every one of IW_SAMPLE_NS or more,
	 * every one while this CPU's walk budget lasts (IW_WALKS_PER_S), and past that a sleep of
	 * d ns with chance d / IW_SAMPLE_NS, standing for IW_SAMPLE_NS of sleep (iw_val.weight_ns:
	 * an unbiased estimate of each stack's time). A walk costs 1.2-2 us on 6.18 here, a fixed
	 * cost whatever the depth, most of an I/O sleep's. 0: every sleep's stack, at switch-out
	 * (iowaitstack). */
	__u8 sampled;
	/* A sleep under way is kept in the sleeper's task-local storage (iw_tasks) where
	 * iw_sleeping, a hash by thread, took an update at its start and a lookup and a delete
	 * at its end (iolayer, tp_btf on 5.11+: il_iw_chosen()). iowaitstack keeps the hash,
	 * whose sleeps still under way at its end it lists. */
	__u8 task_storage;
	__u8 pad[4];
};

/* Sampled stacks (iw_cfg.sampled): every sleep this long or longer has its stack walked. */
#define IW_SAMPLE_NS 1000000ULL
/* Walks a CPU may make a second before sleeps shorter than IW_SAMPLE_NS are sampled, and
 * the burst it may save up (at 1.2-2 us a walk: at most ~0.2 % of a CPU). */
#define IW_WALKS_PER_S 1000
#define IW_WALK_BURST 100

/* A kernel stack walked by the sampled path: the layout of iw_stacks' values with kernel
 * stacks only (IW_MAX_KSTACK_DEPTH frames, the rest 0), so user space reads either map
 * alike (il_stack_read()). */
struct iw_frames {
	__u64 ip[IW_MAX_KSTACK_DEPTH];
};

/* One aggregate: a thread and the stacks it slept under. comm is the thread's name when it
 * woke up (task_struct.comm). */
struct iw_key {
	__u32 tgid;                     /* process id */
	__u32 tid;                      /* thread id */
	__s32 kstack;                   /* kernel stack id in iw_stacks, or IW_STACK_* */
	__s32 ustack;                   /* user stack id in iw_stacks, or IW_STACK_* */
	char comm[IL_TASK_COMM_LEN];
	/* With user stacks: the return address found at the user stack pointer when the thread
	 * entered the kernel, 0 when there is none. It names the caller of a function that keeps
	 * no frame (a libc syscall wrapper), the frame a frame-pointer walk skips; user space
	 * puts it back after the first frame of ustack (il_stacknames_get_user()). */
	__u64 ucaller;
};

/* A sleep in progress (map iw_sleeping, keyed by tid): what it began with. User space reads
 * what is left in the map at exit: the sleeps still under way. */
struct iw_sleep {
	__u64 ts;                       /* bpf_ktime_get_ns() at switch-out */
	__s32 kstack;                   /* stack id or IW_STACK_* */
	__s32 ustack;
	__u64 ucaller;                  /* as in iw_key */
	/* task_struct.nvcsw + nivcsw after this switch-out (the scheduler counts a switch
	 * before the tracepoint fires). The same sum in /proc/PID/task/TID/status later means
	 * the thread has not left a CPU since: its sleep is the one still under way, not an
	 * entry whose end was missed (see IL_DROP_MISSED_END). */
	__u64 nswitches;
	__u32 tgid;
	__u32 pad;
};

/* Sleeps counted under an iw_key since tracing began (never reset by the kernel side). */
struct iw_val {
	__u64 count;                    /* sleeps */
	__u64 total_ns;                 /* sum of their durations, ns */
	__u64 max_ns;                   /* longest one, ns */
	/* the sleep time this key's stack stands for, ns: total_ns, or with sampled stacks
	 * (iw_cfg.sampled) an estimate, and 0 under a stack not walked (IW_STACK_NONE) */
	__u64 weight_ns;
};

/* The sleeps of iw_waits by length (map iw_hist, per CPU): a log2 histogram of ns. */
struct iw_hist {
	__u64 slots[IL_HIST_SLOTS];
	__u64 total_ns;                 /* the sleeps' sum, ns (their count: the slots' sum) */
	__u64 max_ns;                   /* the longest, ns */
};

/* With user stacks: sent once per process, at its first I/O-wait sleep, so user space can read
 * the process's mappings while it is alive (it may exit before its stacks are printed). */
struct iw_proc_event {
	__u32 tgid;
};

#endif /* IOLAYER_IOWAIT_H */
