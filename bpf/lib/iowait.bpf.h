/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The I/O-wait layer: who sleeps in io_schedule()/io_schedule_timeout(), under which stack,
 * for how long. Maps, filters and the sched_switch handler live here once; a tool's object
 * (bpf/iowaitstack.bpf.c, later the aggregate tool) includes this header after
 * lib/core_fixes.bpf.h and gets both program flavours (tp_btf preferred, raw_tp fallback).
 *
 * A sleep starts when a task is switched out, not preempted, not TASK_RUNNING, with
 * task_struct.in_iowait set (what io_schedule_prepare() sets), and ends when the same task is
 * switched back in. At switch-out the task is still `current`, so bpf_get_stackid() records
 * its own stacks. Results are cumulative per (tgid, tid, kernel stack, user stack) in
 * iw_waits; user space reads differences between reads for intervals.
 */
#ifndef IOLAYER_IOWAIT_BPF_H
#define IOLAYER_IOWAIT_BPF_H

#include "lib/core_fixes.bpf.h"
#include "lib/iowait.h"
#include "lib/who.bpf.h"

/* Settings, filled by user space before load (struct iw_cfg, user/lib/iowait.c). */
const volatile struct iw_cfg iw_cfg = {};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, IW_MAX_SLEEPERS);
	__type(key, __u32);                 /* tid */
	__type(value, struct iw_sleep);     /* lib/iowait.h */
} iw_sleeping SEC(".maps");

/* The same, in the sleeper's task-local storage (iw_cfg.task_storage): ts 0 when it has no
 * sleep under way. User space makes it a one-entry array where the kernel has no task
 * storage (5.10). */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct iw_sleep);
} iw_tasks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, IW_MAX_STACKS);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, IW_MAX_STACK_DEPTH * sizeof(__u64));
} iw_stacks SEC(".maps");

/* An LRU: a host of short-lived processes makes a key per thread, and a plain hash filled
 * after IW_MAX_ENTRIES of them (every later thread's sleeps lost, map_full). The entries it
 * ages out are mostly of threads long gone, whose sums user space has read; the totals
 * (iw_hist) count every sleep whatever the LRU keeps. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, IW_MAX_ENTRIES);
	__type(key, struct iw_key);
	__type(value, struct iw_val);
} iw_waits SEC(".maps");

/* Sampled stacks (iw_cfg.sampled): struct iw_frames by id (iw_frames_id()); made at a
 * stack's first walk. User space shrinks it to one entry otherwise, and iw_stacks so when
 * sampled. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, IW_MAX_STACKS);
	__type(key, __u32);
	__type(value, struct iw_frames);
} iw_tstacks SEC(".maps");

/* Per CPU, for the sampled stacks: the frames being walked, and the walk budget (credit_ns:
 * ns of budget saved, up to IW_WALK_BURST walks' worth, at last_ns). */
struct iw_walk {
	struct iw_frames f;
	__u64 credit_ns;
	__u64 last_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct iw_walk);
} iw_walks SEC(".maps");

/* Every sleep iw_waits counts (or would: one the LRU has aged out since stays here), by
 * length: a log2 histogram of ns (il_hist_slot) with the sum and the longest, one per CPU
 * (user space sums them: il_iw_hist_read()). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct iw_hist);
} iw_hist SEC(".maps");

/* With iw_cfg.user_stacks: the processes already announced on iw_procs (LRU: old ones fall out),
 * with their address space then: an exec gives the process a new mm and a new announcement. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, IW_MAX_SLEEPERS);
	__type(key, __u32);                 /* tgid */
	__type(value, __u64);               /* its task_struct.mm when announced */
} iw_procs_seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} iw_procs SEC(".maps");

/* Announce tgid on iw_procs the first time it sleeps with address space mm (user stacks
 * only): user space then reads its memory map, again after an exec. */
static __always_inline void iw_announce(__u32 tgid, __u64 mm)
{
	struct iw_proc_event *e;
	__u64 *seen = bpf_map_lookup_elem(&iw_procs_seen, &tgid);

	if (seen && *seen == mm)
		return;
	bpf_map_update_elem(&iw_procs_seen, &tgid, &mm, BPF_ANY);
	e = il_ringbuf_reserve(&iw_procs, sizeof(*e));
	if (!e)
		return;
	e->tgid = tgid;
	bpf_ringbuf_submit(e, 0);
}

/* Stack id of the current task's kernel or user stack. Without BPF_F_REUSE_STACKID a bucket
 * that holds another stack fails with -EEXIST instead of being overwritten, so an id never
 * changes meaning under a sleep already recorded: the sleep is kept as IW_STACK_LOST. */
static __always_inline __s32 iw_stackid(void *ctx, __u64 flags)
{
	long id = bpf_get_stackid(ctx, &iw_stacks, flags);

	if (id < 0) {
		il_drop(IL_DROP_STACK);
		return IW_STACK_LOST;
	}
	return id;
}

/* The longest distance from a syscall wrapper's entry to its syscall instruction that
 * iw_user_caller() accepts (glibc's are under 200 bytes). */
/* The id in iw_tstacks of the frames in this CPU's iw_walks buffer (bytes of them, the rest
 * 0, as bpf_get_stack() leaves it): an FNV-1a hash of them, >= 0, the frames stored at their
 * first walk. IW_STACK_LOST (IL_DROP_STACK counted) when the walk failed, another stack holds
 * the id, or the map is full. A global function (scalars in, verified once): inlined, its two
 * loops over IW_MAX_KSTACK_DEPTH frames took iw_switch's verification from 3 to 16 ms. */
__noinline int iw_frames_id(long bytes)
{
	__u64 h = 14695981039346656037ULL;
	struct iw_frames *had;
	struct iw_walk *w;
	__u32 id, zero = 0;

	w = bpf_map_lookup_elem(&iw_walks, &zero);
	if (!w || bytes <= 0) {
		il_drop(IL_DROP_STACK);
		return IW_STACK_LOST;
	}
	for (int i = 0; i < IW_MAX_KSTACK_DEPTH && w->f.ip[i]; i++)
		h = (h ^ w->f.ip[i]) * 1099511628211ULL;
	id = (__u32)(h ^ (h >> 32)) & 0x7fffffff;
	had = bpf_map_lookup_elem(&iw_tstacks, &id);
	if (!had && bpf_map_update_elem(&iw_tstacks, &id, &w->f, BPF_NOEXIST) &&
	    !(had = bpf_map_lookup_elem(&iw_tstacks, &id))) {
		il_drop(IL_DROP_STACK);
		return IW_STACK_LOST;
	}
	for (int i = 0; had && i < IW_MAX_KSTACK_DEPTH; i++) {
		if (had->ip[i] != w->f.ip[i]) {
			il_drop(IL_DROP_STACK);
			return IW_STACK_LOST;
		}
		if (!had->ip[i])
			break;
	}
	return id;
}

/* Sampled stacks: the sleep time a sleep of delta ns that ends at now stands for if its stack
 * is walked, ns; 0: not walked. Every sleep of IW_SAMPLE_NS or more, and every one while
 * this CPU's budget lasts, stand for themselves; past the budget a shorter one is walked
 * with chance delta / IW_SAMPLE_NS and stands for IW_SAMPLE_NS, so each stack's weights sum
 * to an unbiased estimate of its time. A global function, as iw_frames_id(): its branches
 * inlined quadrupled iw_switch's verification. */
__noinline __u64 iw_walk_weight(__u64 delta, __u64 now)
{
	const __u64 cost = 1000000000ULL / IW_WALKS_PER_S;
	__u32 zero = 0;
	struct iw_walk *c = bpf_map_lookup_elem(&iw_walks, &zero);
	__u64 credit;

	if (!c)
		return 0;
	credit = c->credit_ns + (now > c->last_ns ? now - c->last_ns : 0);
	if (credit > IW_WALK_BURST * cost)
		credit = IW_WALK_BURST * cost;
	c->last_ns = now;
	c->credit_ns = credit;
	if (credit >= cost) {
		c->credit_ns = credit - cost;
		return delta;
	}
	if (delta >= IW_SAMPLE_NS)
		return delta;
	/* chance delta / IW_SAMPLE_NS: both sides below 2^52 */
	if ((__u64)bpf_get_prandom_u32() * IW_SAMPLE_NS < delta << 32)
		return IW_SAMPLE_NS;
	return 0;
}

#define IW_WRAPPER_MAX 4096

/* t, or, when t is a PLT stub ([endbr64] [bnd] jmp *disp32(%rip)), the function its GOT
 * slot holds (bound by the time the function runs). */
static __always_inline __u64 iw_through_plt(__u64 t)
{
	__u8 c[12];
	__s32 d;
	__u64 f;
	int at;

	if (bpf_probe_read_user(c, sizeof(c), (void *)t))
		return t;
	if (c[0] == 0xff && c[1] == 0x25)
		at = 0;
	else if (c[0] == 0xf2 && c[1] == 0xff && c[2] == 0x25)
		at = 1;
	else if (c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa && c[4] == 0xff &&
		 c[5] == 0x25)
		at = 4;
	else if (c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa && c[4] == 0xf2 &&
		 c[5] == 0xff && c[6] == 0x25)
		at = 5;
	else
		return t;
	switch (at) {
	case 0: __builtin_memcpy(&d, &c[2], 4); break;
	case 1: __builtin_memcpy(&d, &c[3], 4); break;
	case 4: __builtin_memcpy(&d, &c[6], 4); break;
	default: __builtin_memcpy(&d, &c[7], 4); break;
	}
	if (bpf_probe_read_user(&f, sizeof(f), (void *)(t + at + 6 + (__s64)d)))
		return t;
	return f;
}

/* Where the call instruction that ends at ret went: call rel32 (through a PLT stub), or
 * call *disp32(%rip) (-fno-plt). 0 for anything else: not after a call, or an indirect call
 * through a register, which cannot be checked. x86-64 only. */
static __always_inline __u64 iw_call_target(__u64 ret)
{
#if defined(__TARGET_ARCH_x86)
	__u8 b[8];
	__s32 d;
	__u64 t;

	if (ret < 4096 || bpf_probe_read_user(b, sizeof(b), (void *)(ret - sizeof(b))))
		return 0;
	__builtin_memcpy(&d, &b[4], 4);
	if (b[3] == 0xe8)
		return iw_through_plt(ret + (__s64)d);
	if (b[2] == 0xff && b[3] == 0x15 && !bpf_probe_read_user(&t, sizeof(t), (void *)(ret + (__s64)d)))
		return t;
#endif
	return 0;
}

/* The caller of the frame-less function that the current task entered the kernel from
 * (iw_key.ucaller): the word at its user stack pointer, kept only when it is the return
 * address of a call to the function holding the user instruction pointer (the syscall
 * wrapper). A saved register, a local or a stale return address left there is not. 0
 * otherwise. */
static __always_inline __u64 iw_user_caller(void)
{
	struct pt_regs *regs = il_current_user_regs();
	__u64 sp, ip, word, fn;

	if (!regs)
		return 0;
	sp = BPF_CORE_READ(regs, sp);
	ip = BPF_CORE_READ(regs, ip);
	if (!sp || bpf_probe_read_user(&word, sizeof(word), (void *)sp))
		return 0;
	fn = iw_call_target(word);
	return fn && fn <= ip && ip - fn < IW_WRAPPER_MAX ? word : 0;
}

/* prev, in I/O wait (il_task_in_iowait), is switched out in state prev_state. btf: prev is a
 * BTF pointer (tp_btf), whose fields are read with plain loads. */
static __always_inline void iw_switch_out(void *ctx, struct task_struct *prev, __u32 prev_state,
					  bool btf)
{
	struct iw_sleep s = {};
	__u32 tid, tgid;
	__u64 mm;
	long err;

	tid = IL_BTF_READ(btf, prev, pid);
	tgid = IL_BTF_READ(btf, prev, tgid);
	if (!tid || (iw_cfg.targ_tgid && tgid != iw_cfg.targ_tgid) || (iw_cfg.targ_tid && tid != iw_cfg.targ_tid) ||
	    !il_cg_wanted())
		return;
	if (prev_state == 0) /* TASK_RUNNING: woken before it slept */
		return;
	s.kstack = IW_STACK_NONE;
	if (!iw_cfg.sampled) {
		s.kstack = iw_stackid(ctx, 0);
	} else if (!btf) { /* no BTF pointer to walk at switch-in: every sleep's, here */
		__u32 zero = 0;
		struct iw_walk *w = bpf_map_lookup_elem(&iw_walks, &zero);

		if (w)
			s.kstack = iw_frames_id(bpf_get_stack(ctx, &w->f, sizeof(w->f), 0));
	}
	s.ustack = IW_STACK_NONE;
	s.tgid = tgid;
	s.nswitches = IL_BTF_READ(btf, prev, nvcsw) + IL_BTF_READ(btf, prev, nivcsw);
	if (iw_cfg.user_stacks && (mm = (__u64)BPF_CORE_READ(prev, mm))) {
		s.ustack = iw_stackid(ctx, BPF_F_USER_STACK);
		if (s.ustack >= 0)
			s.ucaller = iw_user_caller();
		iw_announce(tgid, mm);
	}
	/* the sleep starts after the stack walks (1-2 us each here), on the task's CPU time:
	 * stamped before them, each sleep counted them as I/O wait */
	s.ts = bpf_ktime_get_ns();
	/* A sleep still recorded means the task ran again without a sched_switch to it being
	 * seen (observed on 6.18, about once in 5000 sleeps, by every sched_switch consumer):
	 * that sleep's end is unknown, so it is counted as lost and replaced. */
	if (btf && iw_cfg.task_storage) {
		struct iw_sleep *t = bpf_task_storage_get(&iw_tasks, prev, 0,
							  BPF_LOCAL_STORAGE_GET_F_CREATE);

		if (!t) {
			il_drop(IL_DROP_MAP_FULL);
			return;
		}
		if (t->ts)
			il_drop(IL_DROP_MISSED_END);
		*t = s;
		return;
	}
	err = bpf_map_update_elem(&iw_sleeping, &tid, &s, BPF_NOEXIST);
	if (err == -EEXIST) {
		il_drop(IL_DROP_MISSED_END);
		err = bpf_map_update_elem(&iw_sleeping, &tid, &s, BPF_ANY);
	}
	if (err)
		il_drop(IL_DROP_MAP_FULL);
}

static __always_inline void iw_switch_in(struct task_struct *next, bool btf)
{
	struct iw_val zero = {}, *v;
	struct iw_hist *h;
	__u32 zero32 = 0;
	struct iw_key key = {};
	struct iw_sleep *s;
	__u64 delta, now, weight;
	__u32 tid;

	/* in_iowait is still set when an I/O sleeper runs again: every other task is done here
	 * without a map lookup. */
	if (!(btf ? il_task_in_iowait_btf(next) : il_task_in_iowait(next)))
		return;
	tid = IL_BTF_READ(btf, next, pid);
	if (btf && iw_cfg.task_storage) {
		s = bpf_task_storage_get(&iw_tasks, next, 0, 0);
		if (s && !s->ts)
			s = NULL;
	} else {
		s = bpf_map_lookup_elem(&iw_sleeping, &tid);
	}
	if (!s)
		return; /* began before tracing, or filtered out at switch-out */
	now = bpf_ktime_get_ns();
	delta = now - s->ts;
	key.kstack = s->kstack;
	key.ustack = s->ustack;
	key.ucaller = s->ucaller;
	if (btf && iw_cfg.task_storage)
		s->ts = 0;
	else
		bpf_map_delete_elem(&iw_sleeping, &tid);
	if ((__s64)delta < 0) {
		il_drop(IL_DROP_BACKWARDS);
		return;
	}
	if (delta < iw_cfg.min_ns || (iw_cfg.max_ns && delta > iw_cfg.max_ns))
		return;
	weight = delta;
	if (iw_cfg.sampled && btf && key.kstack == IW_STACK_NONE &&
	    (weight = iw_walk_weight(delta, now))) {
		__u32 zero = 0;
		struct iw_walk *w = bpf_map_lookup_elem(&iw_walks, &zero);

		if (w)
			key.kstack = iw_frames_id(bpf_get_task_stack(next, &w->f, sizeof(w->f), 0));
	}
	key.tid = tid;
	key.tgid = IL_BTF_READ(btf, next, tgid);
	who_iowait(next, key.tgid, delta, now, btf);
	if (btf) { /* plain loads; what follows the NUL zeroed, as a string read leaves it,
		    * without a branch (one per byte made the verifier walk 17 paths on from here) */
		__u64 end = 0; /* 1 from the first NUL on */

		__builtin_memcpy(key.comm, next->comm, sizeof(key.comm));
		for (int i = 0; i < sizeof(key.comm); i++) {
			__u64 c = (__u8)key.comm[i];

			end |= ((c + 255) >> 8) ^ 1; /* c == 0 */
			key.comm[i] = c & (end - 1);
		}
	} else {
		BPF_CORE_READ_STR_INTO(&key.comm, next, comm);
	}
	h = bpf_map_lookup_elem(&iw_hist, &zero32);
	if (h) { /* this CPU's: no other writer */
		h->slots[il_slot_idx(delta)]++;
		h->total_ns += delta;
		if (delta > h->max_ns)
			h->max_ns = delta;
	}
	v = il_lookup_or_init(&iw_waits, &key, &zero);
	if (!v)
		return;
	__sync_fetch_and_add(&v->count, 1);
	__sync_fetch_and_add(&v->total_ns, delta);
	if (weight)
		__sync_fetch_and_add(&v->weight_ns, weight);
	if (delta > v->max_ns)
		v->max_ns = delta; /* one waker per thread at a time: no race on max */
}

/* sched_switch(bool preempt, prev, next[, unsigned int prev_state since 5.18]): the first
 * three arguments are the same on every supported kernel. A preempted task is runnable, not
 * asleep. The state the scheduler decided on is the tracepoint's prev_state where it exists
 * (ctx[3] is read only then: the verifier drops the branch on older kernels), else the task's
 * state now. next is handled first so the end of its sleep is stamped before prev's stack
 * walk: the scheduler already charges the time from here on to next's CPU time. btf: the
 * tasks are BTF pointers (tp_btf), whose in_iowait bit is read without a helper call: the
 * common switch, neither an I/O sleep nor a wake from one, reads only that bit of each. */
static __always_inline int iw_on_switch(__u64 *ctx, bool btf)
{
	struct task_struct *prev = (void *)ctx[1], *next = (void *)ctx[2];
	__u32 prev_state;

	iw_switch_in(next, btf);
	if (ctx[0] & 0xff) /* preempt */
		return 0;
	if (!(btf ? il_task_in_iowait_btf(prev) : il_task_in_iowait(prev)))
		return 0; /* not an I/O sleep: its state is not needed */
	prev_state = iw_cfg.tp_prev_state ? (__u32)ctx[3] : il_task_state(prev);
	iw_switch_out(ctx, prev, prev_state, btf);
	return 0;
}

/* A tool's object may run another layer's sched_switch handler in this layer's program,
 * one program on the hook where two ran: it defines IW_SWITCH_ALSO(ctx, btf), an expression,
 * before including this file (iolayer: the time split's, when split_cfg.switch_in_iw). It
 * runs after this layer's handler, as the other layer's own program did when attached after
 * this one. */
#ifndef IW_SWITCH_ALSO
#define IW_SWITCH_ALSO(ctx, btf) 0
#endif

SEC("tp_btf/sched_switch")
int iw_switch_btf(__u64 *ctx)
{
	iw_on_switch(ctx, true);
	return IW_SWITCH_ALSO(ctx, true);
}

SEC("raw_tp/sched_switch")
int iw_switch_raw(__u64 *ctx)
{
	iw_on_switch(ctx, false);
	return IW_SWITCH_ALSO(ctx, false);
}

#endif /* IOLAYER_IOWAIT_BPF_H */
