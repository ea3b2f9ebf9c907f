/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The split layer: where each traced file operation's wall time went (lib/split.h). The fs
 * layer calls in when a call begins (split_begin), when its start is taken at its return
 * (split_take) and when it is accounted and sent (split_account, split_event); the
 * scheduler's tracepoints do the rest, for the threads with a call in flight:
 *
 *   sched_switch   prev: on-CPU time ends; it is runnable (preempted, or prev_state
 *                  TASK_RUNNING: woken before it slept) or asleep, in I/O wait when
 *                  task_struct.in_iowait is set. next: its run-queue time (or a sleep whose
 *                  wake-up was not seen) ends, on-CPU time begins.
 *   sched_waking   runs in the waker's context (current = the waker; sched_wakeup may run on
 *                  another CPU after an IPI, so the waker is never taken there): who ended
 *                  the sleep, and which part it is.
 *   sched_wakeup   the wakee is enqueued: its sleep ends, run-queue time begins (as the
 *                  kernel's sched_info.run_delay counts it: from the enqueue). The waker is a block request's completion
 *                  when this CPU's marker (split_blk_mark, set by block_rq_complete) was set
 *                  by the same task context with no context switch since, within
 *                  SPLIT_BLK_WINDOW_NS (irq completions, and loop devices' completions in a
 *                  kworker, alike); else the task current, with what it was doing meanwhile:
 *                  the overlap of its own recent I/O sleeps with the sleep it ends.
 *   block_rq_complete  sets the marker: the request's disk, the task context, its switch
 *                  count, the time.
 *
 * Per thread (struct split_task) the time since its first call in flight is summed per part
 * (sum[]): each switch or wake-up closes the interval of the state it was in. A call keeps
 * the sums at its start (slot base[]), so nested calls (the fsync inside an O_SYNC write)
 * each get their own split, and the parts of a call add up to its latency exactly: its
 * start and end are the fs layer's own timestamps.
 *
 * Where the state lives: with task storage (split_cfg.task_storage) in the thread's
 * struct fs_task (its .split), in the fs layer's map fs_tasks, so a call's entry and return
 * find the thread's calls in flight and its split with one lookup; the wakers (jbd2, a
 * kworker) keep their I/O sleeps there too though they have no traced call (their storage is
 * made by the split, its calls' slots left empty). Else the LRU hash split_by_tid: on 5.10
 * the fs layer's in-flight calls are a (thread, operation) hash that a switch would have to
 * probe once per operation.
 *
 * Cost: split_busy counts the threads that may have a call in flight: a thread is counted
 * from its first call's start until a switch-out finds it with none (or it exits), not
 * counted again and again at each call's start and return: a thread that makes call after
 * call without sleeping writes nothing shared, where four atomic adds a call to two shared
 * cache lines moved those lines between every CPU making calls. While it is 0 a switch reads
 * the in_iowait bit of prev and a wake-up that of the wakee (plain loads in tp_btf), nothing
 * more; an I/O sleep of any task is recorded (one lookup, made when missing) and ended by its
 * wake-up. While it is not 0, a task switched or woken whose bucket of split_busy_tid is 0
 * (no thread of its tid's bucket is counted) costs one load more; any other costs one lookup
 * without create; only a thread with a call in flight does more.
 *
 * Include once per object, from lib/fs.bpf.h.
 */
#ifndef IOLAYER_SPLIT_BPF_H
#define IOLAYER_SPLIT_BPF_H

#include "lib/core_fixes.bpf.h"
#include "lib/fs.h"
#include "lib/split.h"

/* Settings, filled by user space before load (struct split_cfg, user/lib/split.c). */
const volatile struct split_cfg split_cfg = {};

/* Threads that may have a call in flight (split_task.busy): counted at a call's start when
 * not counted yet, no longer at a switch-out with no call in flight (split_switch_out) or at
 * the thread's exit. */
__u64 split_busy = 0;

/* The same by bucket of thread ids (tid & (SPLIT_BUSY_BUCKETS - 1)), counted where
 * split_busy is: a switch or wake-up of a thread whose bucket is 0 has no call in flight,
 * which one load from .bss tells, where a task-storage (or hash) lookup took 40-90 ns per
 * switch while any thread of the machine had a call in flight (issue 25). */
#define SPLIT_BUSY_BUCKETS 4096
__u32 split_busy_tid[SPLIT_BUSY_BUCKETS] = {};

/* Thread tid counted (add 1) or not any more (add -1), in split_busy and its bucket. */
static __always_inline void split_busy_add(__u32 tid, int d)
{
	__sync_fetch_and_add(&split_busy, d);
	__sync_fetch_and_add(&split_busy_tid[tid & (SPLIT_BUSY_BUCKETS - 1)], d);
}

/* Thread tid (its state t) counted in split_busy no more. */
static __always_inline void split_uncount(struct split_task *t, __u32 tid)
{
	if (t->busy) {
		t->busy = 0;
		split_busy_add(tid, -1);
	}
}

/* May thread tid have a call in flight? false: it has none. */
static __always_inline bool split_tid_busy(__u32 tid)
{
	return split_busy && split_busy_tid[tid & (SPLIT_BUSY_BUCKETS - 1)];
}


/* Without task storage; user space shrinks it to one entry otherwise. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SPLIT_MAX_TIDS);
	__type(key, __u32);              /* tid */
	__type(value, struct split_task);
} split_by_tid SEC(".maps");

/* A block request's completion on this CPU: block_rq_complete's disk, task context, that
 * task's switch count, and time. */
struct split_mark {
	__u64 ts;
	__u64 sw;
	__u32 tid;
	__u32 disk;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct split_mark);
} split_blk_mark SEC(".maps");

/* The split of the call split_take() ended last on this CPU, for split_account() and
 * split_event() of the same program run. */
struct split_out {
	struct split_result r;
	__u64 end;      /* when the parts were closed */
	__u32 tid;
	__u32 op;
	__u32 valid;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct split_out);
} split_out SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SPLIT_MAX_OPS);
	__type(key, struct split_op_key);
	__type(value, struct split_op_val);
} split_ops SEC(".maps");

/* split_ops' slots (struct split_op_slot, split.h), looked up first. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SPLIT_OP_SLOTS);
	__type(key, __u32);
	__type(value, struct split_op_slot);
} split_op_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SPLIT_MAX_WAKERS);
	__type(key, struct split_wk_key);
	__type(value, struct split_wk_val);
} split_wakers SEC(".maps");

static const struct split_task split_zero_task;

/* The split's state in a thread's fs_tasks entry ft (a pointer that may be NULL), NULL
 * without one or when the split keeps its state elsewhere (split_cfg.task_storage 0). The
 * member's address formed only past the test: clang would form it first, and the verifier
 * refuses arithmetic on a pointer that may be NULL. */
static __always_inline struct split_task *split_of_task(struct fs_task *ft)
{
	if (!ft || !split_cfg.task_storage)
		return NULL;
	barrier_var(ft);
	return &ft->split;
}

/* The split state of task (a BTF pointer; NULL: the current task) of thread tid, made when
 * create and missing. btf: task may go to bpf_task_storage_get (a raw_tp's task may not). */
static __always_inline struct split_task *split_get(struct task_struct *task, __u32 tid,
						    bool create, bool btf)
{
	struct split_task *t;
	struct fs_task *ft;

	if (btf && split_cfg.task_storage) {
		ft = bpf_task_storage_get(&fs_tasks, task ? task : bpf_get_current_task_btf(), 0,
					  create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
		return split_of_task(ft);
	}
	t = bpf_map_lookup_elem(&split_by_tid, &tid);
	if (t || !create)
		return t;
	bpf_map_update_elem(&split_by_tid, &tid, &split_zero_task, BPF_NOEXIST);
	return bpf_map_lookup_elem(&split_by_tid, &tid);
}

/* Close t's current interval at now into part, and start state st. */
static __always_inline void split_close(struct split_task *t, __u64 now, __u32 part, __u8 st)
{
	barrier_var(part); /* the verifier sees the bound below on the register it indexes with */
	if (now > t->ts && part < SPLIT_PARTS)
		t->sum[part] += now - t->ts;
	t->ts = now;
	t->state = st;
}

/* &t->slot[op], NULL past the operations. The pointer is made opaque once formed: else the
 * compiler may form it again later from op spilled as a byte, whose bound the verifier of
 * 6.1 does not carry over (fs_sys_exit refused: "invalid access to map value, off=69512",
 * with msync's FS_MSYNC_CALL past FS_OP__MAX among the ops that reach split_take). */
static __always_inline struct split_slot *split_slot_of(struct split_task *t, __u32 op)
{
	struct split_slot *sl;

	if (op >= FS_OP__MAX)
		return NULL;
	barrier_var(op);
	if (op >= FS_OP__MAX)
		return NULL;
	sl = &t->slot[op];
	barrier_var(sl);
	return sl;
}

/* ---- the fs layer's hooks -------------------------------------------------------------- */

/* The current thread tid began operation op at ts (the fs layer's start timestamp); apart:
 * a nested sync that the fs layer keeps out of its totals (fs_cfg.nested_apart), kept out of
 * split_ops and split_wakers too. task: the current task's BTF pointer when the caller has it
 * (one helper call fewer), else NULL; t: the thread's state when the caller has it (the .split
 * of the fs_tasks entry it looked up), else NULL (looked up here). */
static __always_inline void split_begin(struct task_struct *task, struct split_task *t, __u32 tid,
					__u32 op, __u64 ts, bool apart)
{
	struct split_slot *sl;

	if (!split_cfg.on || op >= FS_OP__MAX)
		return;
	if (!t)
		t = split_get(task, tid, true, true);
	if (!t) {
		il_drop(IL_DROP_MAP_FULL);
		return;
	}
	sl = split_slot_of(t, op);
	if (!sl)
		return;
	if (!t->busy) {
		t->busy = 1;
		split_busy_add(tid, 1);
	}
	if (!t->active) {
		t->ts = ts;
		t->state = SPLIT_ST_ON;
	} else {
		split_close(t, ts, split_state_part(t, t->state), SPLIT_ST_ON);
	}
	for (int p = 0; p < SPLIT_PARTS; p++)
		sl->base[p] = t->sum[p];
	sl->apart = apart;
	for (int k = 0; k < SPLIT_CALL_WAKERS; k++) /* free (split_slot_wake() fills a new one) */
		sl->w[k].count = 0;
	t->active |= 1 << op; /* a bit already set: that call's return was missed */
}

/* The current thread tid's op returns: its parts into this CPU's split_out, closed at the
 * time returned (bpf_ktime_get_ns(), for the caller's accounting: one clock read a call's
 * return); 0 when nothing was taken (split off, no call of op in flight). task, t: as for
 * split_begin(). */
static __always_inline __u64 split_take(struct task_struct *task, struct split_task *t, __u32 tid,
					__u32 op)
{
	__u32 zero = 0, best = 0;
	struct split_out *out;
	struct split_slot *sl;
	__u64 now, most = 0;

	if (!split_cfg.on)
		return 0;
	out = bpf_map_lookup_elem(&split_out, &zero);
	if (!out)
		return 0;
	out->valid = 0;
	if (op >= FS_OP__MAX)
		return 0;
	if (!t)
		t = split_get(task, tid, false, true);
	if (!t || !(t->active & (1 << op)))
		return 0;
	sl = split_slot_of(t, op);
	if (!sl)
		return 0;
	now = bpf_ktime_get_ns();
	split_close(t, now, split_state_part(t, t->state), SPLIT_ST_ON);
	for (int p = 0; p < SPLIT_PARTS; p++)
		out->r.part_ns[p] = t->sum[p] - sl->base[p];
	for (int k = 0; k < SPLIT_CALL_WAKERS; k++) {
		if (sl->w[k].count && sl->w[k].ns >= most) {
			most = sl->w[k].ns;
			best = k;
		}
	}
	if (most) {
		struct split_wacc *a = &sl->w[best % SPLIT_CALL_WAKERS];

		out->r.waker = a->id;
		out->r.waker_ns = a->ns;
		out->r.waker_io_ns = a->io_ns;
		out->r.waker_io_disk = a->io_disk;
		out->r.wakes = a->count;
	} else {
		__builtin_memset(&out->r.waker, 0, sizeof(out->r.waker));
		out->r.waker_ns = out->r.waker_io_ns = 0;
		out->r.waker_io_disk = out->r.wakes = 0;
	}
	t->active &= ~(1 << op); /* still counted in split_busy: until its switch-out */
	out->end = now;
	out->tid = tid;
	out->op = op;
	out->valid = 1;
	return now;
}

/* This CPU's split_out when it holds thread tid's op. */
static __always_inline struct split_out *split_out_of(__u32 tid, __u32 op)
{
	__u32 zero = 0;
	struct split_out *out;

	if (!split_cfg.on)
		return NULL;
	out = bpf_map_lookup_elem(&split_out, &zero);
	if (!out || !out->valid || out->tid != tid || out->op != op)
		return NULL;
	return out;
}

/* The totals of key (tgid, op) in its slot of split_op_slots, the slot taken when free; NULL
 * when another key holds it (or is taking it): the key's are in split_ops then. */
static __always_inline struct split_op_val *split_op_slot_of(const struct split_op_key *key)
{
	__u64 w = *(const __u64 *)key;
	__u32 i = split_op_slot_idx(key->tgid, key->op);
	struct split_op_slot *sl = bpf_map_lookup_elem(&split_op_slots, &i);

	if (!sl || !w)
		return NULL;
	if (*(volatile __u64 *)&sl->k == w)
		return &sl->v;
	if (!il_slot_claim((__u64 *)&sl->k, &sl->claims))
		return NULL;
	*(volatile __u64 *)&sl->k = w; /* the slot is its key's for good (claims stays 1) */
	return &sl->v;
}

/* The call taken last (split_take) is accounted at now: the time since it was taken is on
 * CPU (one program run, no switch), so its parts sum to now - its start; added to split_ops
 * unless apart (datasync: an fdatasync, counted apart too). */
static __always_inline void split_account(__u64 pid_tgid, __u32 op, __u64 now, bool apart,
					  bool datasync)
{
	struct split_out *out = split_out_of((__u32)pid_tgid, op);
	struct split_op_key key = { .tgid = pid_tgid >> 32, .op = op };
	struct split_op_val zero = {}, *v;

	if (!out)
		return;
	if (now > out->end) {
		out->r.part_ns[SPLIT_ONCPU] += now - out->end;
		out->end = now;
	}
	if (apart)
		return;
	v = split_op_slot_of(&key);
	if (!v)
		v = il_lookup_or_init(&split_ops, &key, &zero);
	if (!v)
		return;
	__sync_fetch_and_add(&v->calls, 1);
	if (datasync)
		__sync_fetch_and_add(&v->datasync, 1);
	for (int p = 0; p < SPLIT_PARTS; p++) /* most calls have one or two parts: no locked
						* add of a zero */
		if (out->r.part_ns[p])
			__sync_fetch_and_add(&v->part_ns[p], out->r.part_ns[p]);
}

/* The split of the call in *r (zeros when there is none: split off, an io_uring request). */
static __always_inline void split_event(struct split_result *r, __u64 pid_tgid, __u32 op,
					__u64 flags)
{
	struct split_out *out = (flags & FS_EV_URING) ? NULL : split_out_of((__u32)pid_tgid, op);

	if (!out) {
		__builtin_memset(r, 0, sizeof(*r));
		return;
	}
	*r = out->r;
	out->valid = 0;
}

/* ---- the scheduler's side -------------------------------------------------------------- */

static __always_inline bool split_in_iowait(struct task_struct *t, bool btf)
{
	return btf ? il_task_in_iowait_btf(t) : il_task_in_iowait(t);
}

/* nvcsw + nivcsw of task t (BTF pointer when btf). */
static __always_inline __u64 split_switches(struct task_struct *t, bool btf)
{
	return IL_BTF_READ(btf, t, nvcsw) + IL_BTF_READ(btf, t, nivcsw);
}

/* Whether the current task is had as a BTF pointer: in a tp_btf program, on a kernel with
 * bpf_get_current_task_btf() (5.11, commit 3ca1032ab7ab, as task storage: split_cfg's
 * task_storage, a constant the verifier prunes on). */
#define split_cur_btf(btf) ((btf) && split_cfg.task_storage)

/* The current task, as a BTF pointer where the program may have one. */
static __always_inline struct task_struct *split_current(bool btf)
{
	return split_cur_btf(btf) ? bpf_get_current_task_btf() : (struct task_struct *)bpf_get_current_task();
}

/* Who ran on each CPU lately, while a call was in flight anywhere (split_busy): the starts
 * of its last SPLIT_RUNS runs and their tasks (task_struct pointers, as numbers); a run lasts
 * until the next one's start. Start 0: a task that ran since before the ring knew (switches
 * while split_busy was 0 are not recorded; they all came before any call now in flight).
 * 32: a trial's fsync loop beside two CPU hogs and a loop of short-lived processes waited
 * through more than 16 runs for a fifth of its run-queue time (then "cpu (idle)"); with 32,
 * 64 and 16 the part past the ring was 51, 0 and 233 ms of about 1.4 s. */
#define SPLIT_RUNS 32

struct split_run {
	__u64 start;
	__u64 task;
};

struct split_cpu_runs {
	__u32 next;
	__u32 pad;
	struct split_run r[SPLIT_RUNS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct split_cpu_runs);
} split_runs SEC(".maps");

/* The run of task (on CPU now) is the ring's last: added, from 0, when it is not (it ran
 * since before the ring knew). */
static __always_inline void split_runs_current(struct split_cpu_runs *c, struct task_struct *task)
{
	if (c->r[(c->next - 1) & (SPLIT_RUNS - 1)].task == (__u64)task)
		return;
	c->r[c->next & (SPLIT_RUNS - 1)].start = 0;
	c->r[c->next & (SPLIT_RUNS - 1)].task = (__u64)task;
	c->next++;
}

/* This CPU switches from prev to next at now: next's run begins. */
static __always_inline void split_runs_push(struct task_struct *prev, struct task_struct *next,
					    __u64 now)
{
	__u32 zero = 0;
	struct split_cpu_runs *c = bpf_map_lookup_elem(&split_runs, &zero);

	if (!c)
		return;
	split_runs_current(c, prev);
	c->r[c->next & (SPLIT_RUNS - 1)].start = now;
	c->r[c->next & (SPLIT_RUNS - 1)].task = (__u64)next;
	c->next++;
}

/* ns of a run-queue wait of the calls in ops (a bit per enum fs_op) of process tgid to the
 * task at h (a task pointer, as a number: the idle task's tgid is 0; SPLIT_RQ_PAST_RING: runs
 * the ring no longer held), into split_wakers as SPLIT_WK_CPU. A global function (scalars
 * in, verified once, 5.6+): inlined in split_rq_holder's loop, its branches multiplied the
 * verifier's states past its million instructions. Returns 0. */
__noinline int split_rq_add(__u32 tgid, __u32 ops, __u64 h, __u64 ns)
{
	struct task_struct *task = (struct task_struct *)h;
	struct split_wk_key key = { .tgid = tgid, .wk_kind = SPLIT_WK_CPU };
	struct split_wk_val init = {}, *v;

	if (h == SPLIT_RQ_PAST_RING) {
		key.wk_tid = SPLIT_RQ_PAST_RING;
		task = NULL;
	}

	if (task)
		key.wk_tgid = BPF_CORE_READ(task, tgid);
	if (key.wk_tgid) { /* else the idle task, or not known: no holder */
		init.kthread = !!(BPF_CORE_READ(task, flags) & IL_PF_KTHREAD);
		BPF_CORE_READ_INTO(&init.comm, task, comm);
	}
	for (__u32 op = 0; op < FS_OP__MAX; op++) {
		if (!(ops & (1 << op)))
			continue;
		key.op = op;
		v = il_lookup_or_init(&split_wakers, &key, &init);
		if (!v)
			continue;
		/* only adds of values not known to be 0: an atomic add of 0 may compile to an
		 * atomic or, which 5.10 refuses ("BPF_STX uses reserved fields") */
		__sync_fetch_and_add(&v->ns, ns);
		__sync_fetch_and_add(&v->count, 1);
	}
	return 0;
}

/* The runs of this CPU's ring (split_runs) since start, each to split_rq_add() for the part
 * of [start, now] it ran, for the calls in ops of process tgid; what no run in the ring covers
 * to SPLIT_RQ_PAST_RING. A global function (scalars in): the ring's unrolled walk, inlined in
 * sched_switch's program, was about 3,500 of the instructions its verifier walked. Returns
 * 0. */
__noinline int split_rq_walk(__u32 tgid, __u32 ops, __u64 start, __u64 now)
{
	__u32 zero = 0, idx;
	struct split_cpu_runs *c = bpf_map_lookup_elem(&split_runs, &zero);
	__u64 end = now, known = 0;

	if (!c)
		return 0;
	idx = c->next;
	for (int k = 1; k <= SPLIT_RUNS; k++) {
		struct split_run *r = &c->r[(idx - k) & (SPLIT_RUNS - 1)];
		__u64 s = r->start > start ? r->start : start;

		if (end > s) {
			split_rq_add(tgid, ops, r->task, end - s);
			known += end - s;
		}
		if (r->start <= start)
			break;
		end = r->start;
	}
	if (now - start > known) /* runs past the ring's */
		split_rq_add(tgid, ops, SPLIT_RQ_PAST_RING, now - start - known);
	return 0;
}

/* A run-queue wait of next (a call of its in flight, t its state) from start to now ended
 * as prev gave up this CPU: each task that ran on this CPU meanwhile (split_runs) gets the
 * part of the wait it ran, for each of next's calls in flight (not kept apart); what no run
 * in the ring covers is marked so (split_rq_walk()). Not the last holder alone: a task that ran briefly just
 * before the switch (a vCPU thread) would take a whole wait that others made. */
static __always_inline void split_rq_holder(const struct split_task *t, struct task_struct *next,
					    struct task_struct *prev, __u64 start, __u64 now,
					    bool btf)
{
	__u32 tgid = IL_BTF_READ(btf, next, tgid), zero = 0, ops = 0;
	struct split_cpu_runs *c = bpf_map_lookup_elem(&split_runs, &zero);

	if (!c)
		return;
	for (__u32 op = 0; op < FS_OP__MAX; op++)
		if ((t->active & (1 << op)) && !t->slot[op].apart)
			ops |= 1 << op;
	if (!ops)
		return;
	split_runs_current(c, prev); /* (split_runs_push then adds only next) */
	split_rq_walk(tgid, ops, start, now);
}

/* next is switched in, from prev, at the time returned (0: nothing looked at the clock).
 * io: next is in I/O wait (its I/O sleep ends, if no wake-up ended it). */
static __always_inline __u64 split_switch_in(struct task_struct *next, struct task_struct *prev,
					     __u32 tid, bool io, bool btf)
{
	struct split_task *t = split_get(next, tid, false, btf);
	__u64 now;

	if (!t)
		return 0;
	now = bpf_ktime_get_ns();
	if (io) {
		struct split_io *r = &t->io[(t->io_next - 1) & (SPLIT_IO_HIST - 1)];

		if (r->start && !r->end)
			r->end = now;
	}
	if (t->active) {
		if (t->state == SPLIT_ST_RUNQ && now > t->ts)
			split_rq_holder(t, next, prev, t->ts, now, btf);
		split_close(t, now, split_state_part(t, t->state), SPLIT_ST_ON);
	}
	return now;
}

/* prev is switched out (preempt: preempted; io: in_iowait and not preempted) at now (0: not
 * read yet). */
static __always_inline void split_switch_out(__u64 *ctx, struct task_struct *prev, __u32 tid,
					     bool preempt, bool io, __u64 now, bool btf)
{
	__u32 state;
	struct split_task *t;
	__u8 st;

	state = preempt ? 0 : (split_cfg.tp_prev_state ? (__u32)ctx[3] : il_task_state(prev));
	io = io && state; /* TASK_RUNNING: woken before it slept, no sleep */
	/* made for an I/O sleep: a waker's own I/O wait is looked up there */
	t = split_get(prev, tid, io, btf);
	if (!t)
		return;
	if (!now)
		now = bpf_ktime_get_ns();
	if (io) {
		struct split_io *r = &t->io[t->io_next & (SPLIT_IO_HIST - 1)];

		r->start = now;
		r->end = 0;
		r->disk = 0;
		t->io_next++;
	}
	if (!t->active) {
		split_uncount(t, tid); /* no call in flight */
		return;
	}
	if (!state)
		st = SPLIT_ST_RUNQ; /* preempted, or woken before it slept */
	else
		st = split_in_iowait(prev, btf) ? SPLIT_ST_SLEEP_IO : SPLIT_ST_SLEEP;
	split_close(t, now, SPLIT_ONCPU, st);
}

/* sched_switch(bool preempt, prev, next[, prev_state since 5.18]). */
static __always_inline int split_on_switch(__u64 *ctx, bool btf)
{
	struct task_struct *prev = (void *)ctx[1], *next = (void *)ctx[2];
	bool busy = split_busy != 0, preempt = ctx[0] & 0xff, io;
	__u32 tid = 0;
	__u64 now = 0;

	if (!busy) {
		/* No call in flight anywhere: no thread has a part to close, and no run to keep
		 * for a run-queue wait. Only an I/O sleep begins (a waker's, for the calls that
		 * may start during it); one ends at its wake-up (split_on_waking), so next's is not
		 * looked at: one task_struct read and half the work fewer on the common switch. */
		if (!preempt && split_in_iowait(prev, btf))
			split_switch_out(ctx, prev, IL_BTF_READ(btf, prev, pid), false, true, 0, btf);
		return 0;
	}
	io = split_in_iowait(next, btf);
	if (busy || io)
		tid = IL_BTF_READ(btf, next, pid);
	if (io || (busy && split_tid_busy(tid)))
		now = split_switch_in(next, prev, tid, io, btf);
	if (busy) { /* who runs on this CPU from now, for the run-queue waits it holds up */
		if (!now)
			now = bpf_ktime_get_ns();
		split_runs_push(prev, next, now);
	}
	io = !preempt && split_in_iowait(prev, btf);
	if (busy || io)
		tid = IL_BTF_READ(btf, prev, pid);
	if (io || (busy && split_tid_busy(tid)))
		split_switch_out(ctx, prev, tid, preempt, io, now, btf);
	return 0;
}

/* Did a block request's completion on this CPU, in the current task's context with no
 * switch since, just happen? Its disk into *disk. */
static __always_inline bool split_blk_woke(__u64 now, bool btf, __u32 *disk)
{
	struct task_struct *cur = split_current(btf);
	__u32 zero = 0;
	struct split_mark *m = bpf_map_lookup_elem(&split_blk_mark, &zero);

	btf = split_cur_btf(btf); /* what cur is */

	if (!m || !m->ts || now - m->ts > SPLIT_BLK_WINDOW_NS)
		return false;
	if (m->tid != (__u32)bpf_get_current_pid_tgid() || m->sw != split_switches(cur, btf))
		return false;
	*disk = m->disk;
	return true;
}

/* How much of [start, now] the current task (thread tid) spent in its recent I/O sleeps;
 * the disk of the longest into *disk. */
static __always_inline __u64 split_waker_io(__u32 tid, __u64 start, __u64 now, __u32 *disk)
{
	struct split_task *w = split_get(NULL, tid, false, true);
	__u64 sum = 0, most = 0;

	*disk = 0;
	if (!w)
		return 0;
	for (int k = 0; k < SPLIT_IO_HIST; k++) {
		struct split_io *r = &w->io[k];
		__u64 b = r->start > start ? r->start : start;
		__u64 e = r->end ? r->end : now;

		if (e > now)
			e = now;
		if (!r->start || e <= b)
			continue;
		sum += e - b;
		if (e - b > most) {
			most = e - b;
			*disk = r->disk;
		}
	}
	return sum;
}

static __always_inline bool split_same_waker(const struct split_waker *a, const struct split_waker *b)
{
	if (a->kind != b->kind)
		return false;
	if (a->kind == SPLIT_WK_BLOCK)
		return a->disk == b->disk;
	return a->tid == b->tid;
}

/* One wake-up by w of a call in flight (slot sl) that ended ns of its off-CPU time: into
 * w's entry, else the first free one (entries are taken in order and all freed at the call's
 * start, so none of w's follows a free one). The entry's index goes through sl->wk_at,
 * memory the verifier does not follow: kept a constant on each way out of the loop, it made
 * split_waking's verifier walk five paths on per operation (33,856 instructions). */
static __always_inline void split_slot_wake(struct split_slot *sl, const struct split_waker *w,
					    __u64 ns, __u64 io_ns, __u32 io_disk)
{
	struct split_wacc *a;
	__u32 k;

	sl->wk_at = SPLIT_CALL_WAKERS;
	for (k = 0; k < SPLIT_CALL_WAKERS; k++) {
		if (!sl->w[k].count || split_same_waker(&sl->w[k].id, w)) {
			sl->wk_at = k;
			break;
		}
	}
	k = *(volatile __u32 *)&sl->wk_at;
	if (k >= SPLIT_CALL_WAKERS)
		return; /* more distinct wakers than followed: split_wakers still has it */
	a = &sl->w[k];
	if (!a->count) {
		*a = (struct split_wacc){ .id = *w, .ns = ns, .io_ns = io_ns, .io_disk = io_disk, .count = 1 };
		return;
	}
	a->ns += ns;
	a->io_ns += io_ns;
	a->count++;
	if (io_disk)
		a->io_disk = io_disk;
}

/* Per CPU: the waker of the wake-up split_on_waking() is at, for split_wk_add(). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct split_waker);
} split_wk_now SEC(".maps");

/* The same into the aggregate of (victim tgid, op, waker), the waker this CPU's
 * split_wk_now. A global function (scalars in, verified once): inlined once per operation,
 * its look-ups and inserts were a fifth of split_waking's verification. Returns 0. */
__noinline int split_wk_add(__u32 tgid, __u32 op, __u64 ns, __u64 io_ns, __u32 io_disk)
{
	__u32 zero = 0;
	const struct split_waker *w = bpf_map_lookup_elem(&split_wk_now, &zero);
	struct split_wk_key key = { .tgid = tgid, .op = op };
	struct split_wk_val init = {}, *v;

	if (!w)
		return 0;
	key.wk_tgid = w->tgid;
	key.wk_tid = w->tid;
	key.wk_disk = w->disk;
	key.wk_kind = w->kind;
	init.kthread = w->kthread;
	__builtin_memcpy(init.comm, w->comm, sizeof(init.comm));
	v = il_lookup_or_init(&split_wakers, &key, &init);
	if (!v)
		return 0;
	__sync_fetch_and_add(&v->ns, ns);
	__sync_fetch_and_add(&v->count, 1);
	__sync_fetch_and_add(&v->io_ns, io_ns);
	if (io_disk)
		v->io_disk = io_disk;
	return 0;
}

/* sched_waking(p), in the waker's context. */
static __always_inline int split_on_waking(struct task_struct *p, bool btf)
{
	bool io = split_in_iowait(p, btf), blk;
	struct split_waker w = {}, *wn;
	struct split_task *t;
	__u64 now, start, ns, io_ns = 0;
	__u32 tid, tgid, disk = 0, io_disk = 0, part, zero = 0;
	__u64 cur;

	if (!split_busy && !io)
		return 0;
	tid = IL_BTF_READ(btf, p, pid);
	if (!io && !split_tid_busy(tid))
		return 0;
	t = split_get(p, tid, false, btf);
	if (!t)
		return 0;
	now = bpf_ktime_get_ns();
	blk = split_blk_woke(now, btf, &disk);
	if (io) { /* its I/O sleep ends */
		struct split_io *r = &t->io[(t->io_next - 1) & (SPLIT_IO_HIST - 1)];

		if (r->start && !r->end) {
			r->end = now;
			r->disk = blk ? disk : 0;
		}
	}
	if (!t->active)
		return 0;
	/* Still on its CPU (ON): a wake-up racing its switch-out. Either it keeps running
	 * (prev_state TASK_RUNNING at the switch: run queue), or the switch-out comes first and
	 * try_to_wake_up() enqueues it after: sched_wakeup then ends that (short) sleep, its
	 * waker not followed. */
	if (t->state != SPLIT_ST_SLEEP && t->state != SPLIT_ST_SLEEP_IO)
		return 0;
	start = t->ts;
	ns = now > start ? now - start : 0;
	cur = bpf_get_current_pid_tgid();
	if (blk) {
		w.kind = SPLIT_WK_BLOCK;
		w.disk = disk;
	} else if (!(__u32)cur) {
		w.kind = SPLIT_WK_IRQ; /* over the idle task: an interrupt */
	} else {
		w.kind = SPLIT_WK_TASK;
		w.tgid = cur >> 32;
		w.tid = (__u32)cur;
		w.kthread = !!(IL_BTF_READ(split_cur_btf(btf), split_current(btf), flags) & IL_PF_KTHREAD);
		bpf_get_current_comm(w.comm, sizeof(w.comm));
		io_ns = split_waker_io(w.tid, start, now, &io_disk);
	}
	if (t->state == SPLIT_ST_SLEEP_IO)
		part = blk ? SPLIT_IOWAIT_BLOCK : SPLIT_IOWAIT_TASK;
	else
		part = SPLIT_OTHER;
	/* asleep until sched_wakeup enqueues it (split_on_wakeup) */
	t->pend_part = part;
	t->state = SPLIT_ST_WOKEN;
	wn = bpf_map_lookup_elem(&split_wk_now, &zero);
	if (wn)
		*wn = w;
	tgid = IL_BTF_READ(btf, p, tgid);
	for (__u32 op = 0; op < FS_OP__MAX; op++) {
		if (!(t->active & (1 << op)))
			continue;
		split_slot_wake(&t->slot[op], &w, ns, io_ns, io_disk);
		if (!t->slot[op].apart)
			split_wk_add(tgid, op, ns, io_ns, io_disk);
	}
	return 0;
}

/* sched_wakeup(p): p is on a run queue now (on its CPU, after the IPI of a remote wake-up):
 * its sleep ends, into the part sched_waking chose (or, when sched_waking came before its
 * switch-out, the part of its state); run-queue time begins. */
static __always_inline int split_on_wakeup(struct task_struct *p, bool btf)
{
	struct split_task *t;
	__u32 tid;

	if (!split_busy)
		return 0;
	tid = IL_BTF_READ(btf, p, pid);
	if (!split_tid_busy(tid))
		return 0;
	t = split_get(p, tid, false, btf);
	if (!t || !t->active || (t->state != SPLIT_ST_WOKEN && t->state != SPLIT_ST_SLEEP &&
				 t->state != SPLIT_ST_SLEEP_IO))
		return 0;
	split_close(t, bpf_ktime_get_ns(), split_state_part(t, t->state), SPLIT_ST_RUNQ);
	return 0;
}

/* block_rq_complete(struct request *rq, error, nr_bytes): rq first on every supported
 * kernel. disk and now: the request's disk and the time, when the caller has them (the block
 * layer's program, which read both for a finished request: a clock read and the disk's
 * probe reads fewer per request), else 0 and read here. */
static __always_inline int split_on_rq_done(__u64 *ctx, bool btf, __u32 disk, __u64 now)
{
	struct request *rq = (void *)ctx[0];
	__u32 zero = 0;
	struct split_mark *m = bpf_map_lookup_elem(&split_blk_mark, &zero);
	struct task_struct *cur;

	if (!m)
		return 0;
	cur = split_current(btf);
	m->disk = now ? disk : il_disk_dev(il_rq_disk(rq));
	/* the task's pid read through the pointer the switch count needs: one helper call */
	m->tid = split_cur_btf(btf) ? cur->pid : (__u32)bpf_get_current_pid_tgid();
	m->sw = split_switches(cur, split_cur_btf(btf));
	m->ts = now ? now : bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/sched_switch")
int split_switch_btf(__u64 *ctx) { return split_on_switch(ctx, true); }

SEC("raw_tp/sched_switch")
int split_switch_raw(__u64 *ctx) { return split_on_switch(ctx, false); }

SEC("tp_btf/sched_waking")
int split_waking_btf(__u64 *ctx) { return split_on_waking((void *)ctx[0], true); }

SEC("raw_tp/sched_waking")
int split_waking_raw(__u64 *ctx) { return split_on_waking((void *)ctx[0], false); }

SEC("tp_btf/sched_wakeup")
int split_wakeup_btf(__u64 *ctx) { return split_on_wakeup((void *)ctx[0], true); }

SEC("raw_tp/sched_wakeup")
int split_wakeup_raw(__u64 *ctx) { return split_on_wakeup((void *)ctx[0], false); }

/* Exited threads' CPU time by process (struct split_exited). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64); /* tgid */
	__type(value, struct split_exited);
} split_exited SEC(".maps");

/* Thread p exits (sched_process_exit, p the current task): its CPU time into its process's
 * entry of split_exited. Reads task_struct.tgid, se.sum_exec_runtime, flags, comm and
 * cpus_ptr->bits[0] (cpus_ptr since 5.3, commit 3bd3706251ee) with probe reads: an exit is
 * rare beside the hot paths. */
static __always_inline void split_exit_cpu(struct task_struct *p)
{
	__u64 tgid = BPF_CORE_READ(p, tgid);
	struct split_exited *e;

	if (!split_cfg.on || !tgid)
		return;
	e = il_lookup_or_init(&split_exited, &tgid, &(struct split_exited){});
	if (!e)
		return;
	__sync_fetch_and_add(&e->ns, BPF_CORE_READ(p, se.sum_exec_runtime));
	e->cpus = BPF_CORE_READ(p, cpus_ptr, bits[0]);
	e->kthread = !!(BPF_CORE_READ(p, flags) & IL_PF_KTHREAD);
	e->last_ns = bpf_ktime_get_ns();
	BPF_CORE_READ_STR_INTO(&e->comm, p, comm);
}

/* sched_process_exit(p[, group_dead]), in the exiting thread: a thread still counted in
 * split_busy (a call's return was missed: the fs layer could not record its start, or the
 * kernel skipped the exit event; or its last call returned with no switch since) stops
 * counting, which would otherwise keep every switch paying the busy cost. */
static __always_inline int split_on_exit(struct task_struct *p, bool btf)
{
	__u32 tid = IL_BTF_READ(btf, p, pid);
	struct split_task *t;

	split_exit_cpu(p);
	if (!split_busy)
		return 0;
	t = split_get(p, tid, false, btf);
	if (!t)
		return 0;
	t->active = 0;
	split_uncount(t, tid);
	if (!(btf && split_cfg.task_storage)) /* task storage goes with the task */
		bpf_map_delete_elem(&split_by_tid, &tid);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int split_exit_btf(__u64 *ctx) { return split_on_exit((void *)ctx[0], true); }

SEC("raw_tp/sched_process_exit")
int split_exit_raw(__u64 *ctx) { return split_on_exit((void *)ctx[0], false); }

SEC("tp_btf/block_rq_complete")
int split_rq_done_btf(__u64 *ctx) { return split_on_rq_done(ctx, true, 0, 0); }

SEC("raw_tp/block_rq_complete")
int split_rq_done_raw(__u64 *ctx) { return split_on_rq_done(ctx, false, 0, 0); }

#endif /* IOLAYER_SPLIT_BPF_H */
