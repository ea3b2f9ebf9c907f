/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The split layer's types, shared by its BPF side (bpf/lib/split.bpf.h), its user side
 * (user/lib/split.c, user/lib/layers/split.h) and the fs layer's event (struct fs_event).
 * Where each traced file operation's wall time went: on CPU, runnable waiting for a CPU,
 * asleep in I/O wait (ended by its block I/O's completion, or by another task), asleep
 * otherwise; and who ended the sleeps. Fixed-width types only.
 */
#ifndef IOLAYER_SPLIT_H
#define IOLAYER_SPLIT_H

#include "lib/shared.h"

/* The parts of a call's time; they add up to its latency exactly. */
enum split_part {
	SPLIT_ONCPU,        /* running */
	SPLIT_RUNQ,         /* runnable, waiting for a CPU: from its wake-up (or preemption) to
			     * its next switch-in */
	SPLIT_IOWAIT_BLOCK, /* asleep with task_struct.in_iowait, woken from the completion of
			     * a block request (block_rq_complete on the waking CPU) */
	SPLIT_IOWAIT_TASK,  /* asleep with in_iowait, woken by a task (or unknown) */
	SPLIT_OTHER,        /* asleep otherwise (locks, waits on other tasks), any waker */
	SPLIT_PARTS
};

/* What ended a sleep (struct split_waker.kind). */
enum split_wk_kind {
	SPLIT_WK_NONE,  /* no wake-up seen (the sleep ended without sched_waking) */
	SPLIT_WK_TASK,  /* a task, current in sched_waking: tgid, tid, comm, kthread */
	SPLIT_WK_BLOCK, /* a block request's completion on disk `disk` */
	SPLIT_WK_IRQ,   /* interrupt context over the idle task (a timer, a device): no task */
	/* Not a waker: a task that ran on the CPU while the call's thread waited in its run
	 * queue (split_runs, the CPU's last runs; the part of the wait it ran as ns, its runs
	 * as count): tgid and comm, tid 0; tgid 0 for the idle task (the wake-up's own
	 * latency), and tid SPLIT_RQ_PAST_RING besides for the runs the ring no longer held.
	 * Only in split_wakers, never a call's main waker. */
	SPLIT_WK_CPU,
};

/* SPLIT_WK_CPU's tid (tgid 0) for a run-queue wait's part past the CPU's ring of runs: other
 * tasks ran then, not followed (never a thread id: 1 is init's pid and tgid). */
#define SPLIT_RQ_PAST_RING 1

/* Who woke a sleeper. For SPLIT_WK_TASK tgid/tid/comm are the waker's (task_struct.tgid,
 * .pid, .comm at sched_waking) and kthread is its PF_KTHREAD flag; for SPLIT_WK_BLOCK disk is
 * the request's disk (major << 20 | minor, from struct gendisk). */
struct split_waker {
	__u32 tgid;
	__u32 tid;
	__u32 disk;
	__u8 kind;    /* enum split_wk_kind */
	__u8 kthread; /* 1: a kernel thread (jbd2/loop0-8, kworker/..., a flusher) */
	__u8 pad[2];
	char comm[IL_TASK_COMM_LEN];
};

/* One call's split, sent in struct fs_event (96 bytes). The main waker is the one whose
 * wake-ups ended the most off-CPU time of the call (among the first SPLIT_CALL_WAKERS
 * distinct wakers of the call). */
struct split_result {
	__u64 part_ns[SPLIT_PARTS]; /* enum split_part, ns; they sum to the call's delta_ns */
	__u64 waker_ns;             /* off-CPU ns of the call the main waker's wake-ups ended */
	__u64 waker_io_ns;          /* of which the waker itself spent in I/O wait, ns */
	__u32 waker_io_disk;        /* the disk of the waker's longest such I/O wait (0: none) */
	__u32 wakes;                /* wake-ups of the call by the main waker */
	struct split_waker waker;   /* kind SPLIT_WK_NONE: the call never slept */
};

/* Distinct wakers followed per call in flight. */
#define SPLIT_CALL_WAKERS 4
/* I/O sleeps remembered per task (for the waker's own I/O wait). */
#define SPLIT_IO_HIST 4
/* How long after a block_rq_complete on a CPU a wake-up from the same task context, with
 * no context switch between, is taken as that completion's. */
#define SPLIT_BLK_WINDOW_NS (200 * 1000ULL)

/* ---- a thread's state (struct fs_task's .split in fs_tasks, or split_by_tid), read by user space too: the split so far
 * of a call still in flight (il_split_inflight()) ---- */

/* The operations a thread may have in flight at once: enum fs_op's (lib/fs.h, which includes
 * this header and checks the two agree). */
#define SPLIT_OPS 5

/* WOKEN: sched_waking seen, not yet sched_wakeup (the wakee's enqueue, which for a remote
 * wake-up waits for an IPI): still asleep, as the kernel's run_delay counts it, its part
 * (pend_part) and waker known. */
enum split_state { SPLIT_ST_ON, SPLIT_ST_RUNQ, SPLIT_ST_SLEEP, SPLIT_ST_SLEEP_IO, SPLIT_ST_WOKEN };

/* An I/O sleep of a task: switched out with in_iowait at start, woken (or switched in) at
 * end (0: not yet), the disk whose completion woke it (0: unknown). */
struct split_io {
	__u64 start;
	__u64 end;
	__u32 disk;
	__u32 pad;
};

/* One waker of one call in flight. */
struct split_wacc {
	struct split_waker id;
	__u64 ns;       /* off-CPU ns of the call it ended */
	__u64 io_ns;    /* of which it was in I/O wait itself */
	__u32 io_disk;
	__u32 count;    /* 0: the entry is free */
};

/* One call in flight (indexed by enum fs_op). */
struct split_slot {
	__u64 base[SPLIT_PARTS]; /* the thread's sum[] at the call's start */
	__u32 apart;             /* a nested sync kept apart (fs_cfg.nested_apart): no aggregates */
	__u32 wk_at;             /* split_slot_wake()'s scratch */
	struct split_wacc w[SPLIT_CALL_WAKERS];
};

struct split_task {
	__u64 ts;                /* start of the current state's interval */
	__u64 sum[SPLIT_PARTS];  /* per part, while a call was in flight */
	__u8 state;              /* enum split_state, while active */
	__u8 active;             /* bit op: a call of that operation in flight */
	__u8 io_next;            /* next entry of io[] */
	__u8 busy;               /* counted in split_busy (a call began since its last switch-out) */
	__u8 pend_part;          /* in state WOKEN: the part its sleep goes to */
	__u8 pad[3];
	struct split_io io[SPLIT_IO_HIST];
	struct split_slot slot[SPLIT_OPS];
};

/* The part an interval of t in state st goes to. */
static inline __u32 split_state_part(const struct split_task *t, __u8 st)
{
	switch (st) {
	case SPLIT_ST_WOKEN: return t->pend_part;
	case SPLIT_ST_RUNQ: return SPLIT_RUNQ;
	case SPLIT_ST_SLEEP: return SPLIT_OTHER;
	case SPLIT_ST_SLEEP_IO: return SPLIT_IOWAIT_TASK;
	}
	return SPLIT_ONCPU;
}

/* Map sizes: per-task states without task storage (split_by_tid), aggregates (split_ops,
 * split_wakers). User space shrinks each to one entry where it is not used. */
#define SPLIT_MAX_TIDS 4096
#define SPLIT_MAX_OPS 4096
#define SPLIT_MAX_WAKERS 8192

/* Aggregate per (process, operation): map split_ops. */
struct split_op_key {
	__u32 tgid;
	__u32 op;   /* enum fs_op */
};

struct split_op_val {
	__u64 calls;
	__u64 part_ns[SPLIT_PARTS];
	__u64 datasync;  /* of calls, fdatasync's (FS_EV_DATASYNC: data only) */
};

/* A (process, operation) aggregate in the array split_op_slots, looked up before split_ops:
 * the key's slot (split_op_slot_idx()) is taken for good by the first key that finds it free
 * (il_slot_claim(): two takers at once both back off), a key whose slot another holds goes to
 * split_ops. An array's lookup is inlined where the LRU hash's is a helper call that hashes
 * the key and takes its lock (about 45 ns of every traced call's return here). A key taken
 * into its slot while another CPU, finding the slot not yet its own, counted into split_ops is
 * in both: the reader sums them. k is the key's one word (tgid in its low half), 0 free. */
struct split_op_slot {
	struct split_op_key k;
	__u32 claims;
	__u32 pad;
	struct split_op_val v;
};

#define SPLIT_OP_SLOTS_BITS 12
#define SPLIT_OP_SLOTS (1 << SPLIT_OP_SLOTS_BITS)

/* The slot of key (tgid, op) in split_op_slots. */
static inline __u32 split_op_slot_idx(__u32 tgid, __u32 op)
{
	return il_hash_bits((__u64)op << 32 | tgid, SPLIT_OP_SLOTS_BITS);
}

/* The CPU time of a process's threads that exited while tracing (map split_exited, by tgid:
 * sched_process_exit, in the exiting thread): what names a CPU hog that came and went
 * between two readings of /proc (a compile's cc1, a cron job), whose /proc entry is gone by
 * a window's end. */
struct split_exited {
	__u64 ns;        /* the exited threads' task_struct.se.sum_exec_runtime, summed, ns */
	__u64 cpus;      /* the last one's CPU affinity (task_struct.cpus_ptr, CPUs 0-63) */
	__u64 last_ns;   /* when the last one exited (bpf_ktime_get_ns()) */
	__u32 kthread;   /* PF_KTHREAD */
	__u32 pad;
	char comm[16];   /* the last one's */
};

/* Aggregate per (victim process, operation, waker): map split_wakers (LRU). The waker is
 * (kind, tgid, tid) for a task, (kind, disk) for a block completion. */
struct split_wk_key {
	__u32 tgid;      /* the victim's process */
	__u32 op;        /* enum fs_op */
	__u32 wk_tgid;
	__u32 wk_tid;
	__u32 wk_disk;
	__u8 wk_kind;    /* enum split_wk_kind */
	__u8 pad[3];
};

struct split_wk_val {
	__u64 ns;        /* off-CPU ns of the victim's calls it ended */
	__u64 count;     /* wake-ups */
	__u64 io_ns;     /* of which it spent in its own I/O wait, ns */
	__u32 io_disk;   /* the disk of that I/O wait (the last one seen) */
	__u8 kthread;
	__u8 pad[3];
	char comm[IL_TASK_COMM_LEN]; /* the waker's, at its first wake-up */
};

/* The layer's settings, one struct in .rodata (`split_cfg`), filled by user space before
 * load (user/lib/split.c). */
struct split_cfg {
	__u32 on;            /* 0: the fs layer's hooks compile to nothing live */
	/* 1: per-task state in task-local storage (fs_tasks' .split), which needs the tasks of
	 * sched_switch and sched_waking as BTF pointers (tp_btf chosen, 5.11+); 0: in the LRU
	 * hash split_by_tid, keyed by thread id. */
	__u32 task_storage;
	/* sched_switch passes prev_state (5.18+, as iw_cfg.tp_prev_state) */
	__u32 tp_prev_state;
	/* 1: the block layer's block_rq_complete program sets the completion marker
	 * (split_on_rq_done()), one program where two ran (il_split_rq_done_in_block()) */
	__u32 rq_done_in_blk;
	/* 1: the I/O-wait layer's sched_switch program runs split_on_switch() too, one
	 * program where two ran (il_split_switch_in_iowait(); each program on a hook costs its
	 * dispatch at every context switch of the machine) */
	__u32 switch_in_iw;
};

#endif /* IOLAYER_SPLIT_H */
