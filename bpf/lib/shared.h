/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Types and helpers shared by every BPF object and by user space.
 * Fixed-width types only; included both after vmlinux.h (BPF) and from user space.
 */
#ifndef IOLAYER_SHARED_H
#define IOLAYER_SHARED_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define IL_TASK_COMM_LEN 16
#define IL_HIST_SLOTS 64 /* log2 slots of a histogram: slot i holds [2^i, 2^(i+1)), slot 0 holds 0 and 1 */

/* Kernel functions (kfuncs) a BPF program calls as if they were helpers with these numbers,
 * far above any real helper's: the loader binds each call to the kfunc's vmlinux BTF id as it
 * loads a tp_btf program (user/lib/btf.c), from its own read of the kernel's BTF, so libbpf
 * need not parse all of vmlinux's BTF for an extern. IL_KFUNC_RDONLY_CAST: bpf_rdonly_cast
 * (kernel/bpf/helpers.c, 6.2+). */
#define IL_KFUNC_RDONLY_CAST 0x494c0001

/* The vmlinux BTF ids of the types the tp_btf programs cast their trusted pointers to
 * (IL_UNTRUSTED(), lib/common.bpf.h), one setting in .rodata (`il_btf_ids`) filled by user
 * space before load (il_btf_ids_fill(), user/lib/btf.c); 0 where the kernel has no
 * bpf_rdonly_cast. */
struct il_btf_ids {
	__u32 task;     /* struct task_struct */
	__u32 bio;      /* struct bio */
	__u32 request;  /* struct request */
	__u32 io_kiocb; /* struct io_kiocb (io_uring's request) */
	__u32 kiocb;    /* struct kiocb */
	__u32 pad;
};

/* The top `bits` bits of w times the 64-bit golden ratio (Fibonacci hashing): the index of a
 * direct-mapped slot among 1 << bits for a key packed into w (bits 1 to 32). */
static inline __u32 il_hash_bits(__u64 w, unsigned bits)
{
	return (__u32)((w * 0x9E3779B97F4A7C15ULL) >> (64 - bits));
}

/* Block I/O operation kinds, decoded from request.cmd_flags by il_rq_op() (core_fixes.bpf.h). */
enum il_req_op_kind { IL_OP_READ, IL_OP_WRITE, IL_OP_FLUSH, IL_OP_DISCARD, IL_OP_OTHER, IL_OP__MAX };

/* Request flags, decoded from cmd_flags / bi_opf with the kernel's own enum req_flag_bits by
 * il_opf_flags() (core_fixes.bpf.h). */
enum il_rq_flag {
	IL_RQF_SYNC = 1, IL_RQF_META = 2, IL_RQF_FUA = 4, IL_RQF_PREFLUSH = 8,
	IL_RQF_RAHEAD = 16, IL_RQF_BACKGROUND = 32,
};

/* The --cgroup filter every layer applies (il_cg_wanted(), common.bpf.h), set by
 * il_cgfilter_apply() (user/lib/cgfilter.c) in const volatile il_cg_cfg: a task is traced when
 * its cgroup in the io controller's hierarchy (v1 blkio: task->cgroups->subsys[io_cgrp_id];
 * else v2: dfl_cgrp) is cgroup id or a descendant, i.e. its ancestor at depth level is id.
 * id 0: no filter. */
struct il_cg_cfg {
	__u64 id;      /* kernfs id (the directory's inode number) of the cgroup */
	__u32 level;   /* its depth below the hierarchy's root (the root: 0) */
	__u32 v1;      /* the hierarchy is v1 blkio's, not cgroup2's */
};

/* What the kernel side could not count, one per-CPU counter each (map `il_drops`). */
enum il_drop {
	IL_DROP_RINGBUF_FULL, /* bpf_ringbuf_reserve() failed: an event was lost */
	IL_DROP_MAP_FULL,     /* a start-time or aggregate map was full: an operation was not measured */
	IL_DROP_MISSED_START, /* an end without its start (began before tracing, or the kernel emitted no start event): not measured */
	IL_DROP_BACKWARDS,    /* end timestamp before start timestamp: not measured */
	IL_DROP_STACK,        /* bpf_get_stackid() failed (stack map full or hash collision) */
	IL_DROP_MISSED_RETURN, /* a call's entry was seen but not its return (kretprobe out of instances) */
	IL_DROP_MISSED_END,   /* a start whose end event never came (a sleeper ran again with no sched_switch to it): not measured */
	IL_DROP_COMPAT,       /* a 32-bit system call on a traced file, at raw_syscalls:sys_enter: not measured */
	IL_DROP_MSYNC,        /* a sync run by msync whose mapping's file could not be found (no bpf_find_vma before 5.17, or the mapping's lock was held): not measured */
	IL_DROP__MAX
};

/*
 * il_log2() - floor(log2(v)) for v > 0, and 0 for v == 0, without loops or branches.
 * il_hist_slot() - the histogram slot of v: il_log2(v) clamped to nslots - 1, so a value
 * never falls off the end (0 -> 0, 1 -> 0, 2 -> 1, 3 -> 1, 4 -> 2, 2^32 -> 32, 2^63 -> 63).
 * Branch-free because BPF has no set-on-compare: each compare became a branch, and the
 * verifier walked every path through them at every histogram update of a program (2^6 paths
 * per update: 86k instructions, 80 ms, for iolayer's block_rq_complete).
 */

/* Hide x's value from the compiler, which would turn the arithmetic back into compares. */
#define IL_OPAQUE(x) asm volatile("" : "+r"(x))

/* 1 when v > c, else 0, for v and c below 2^63. */
static inline __u64 il_gt(__u64 v, __u64 c)
{
	__u64 d = c - v;

	IL_OPAQUE(d);
	return d >> 63;
}

static inline __u32 il_log2_u32(__u32 v32)
{
	__u64 v = v32, r, shift;

	r = il_gt(v, 0xFFFF) << 4;
	v >>= r;
	shift = il_gt(v, 0xFF) << 3;
	v >>= shift;
	r |= shift;
	shift = il_gt(v, 0xF) << 2;
	v >>= shift;
	r |= shift;
	shift = il_gt(v, 0x3) << 1;
	v >>= shift;
	r |= shift;
	r |= (v >> 1);
	return r;
}

static inline __u32 il_log2(__u64 v)
{
	__u64 hi = v >> 32, has_hi = il_gt(hi, 0), x = v & 0xFFFFFFFF;

	x ^= (x ^ hi) & -has_hi; /* hi when it is not 0, else the low half */
	return il_log2_u32(x) + (has_hi << 5);
}

static inline __u32 il_hist_slot(__u64 v, __u32 nslots)
{
	__u64 s = il_log2(v), last = nslots - 1;

	return s ^ ((s ^ last) & -il_gt(s, last)); /* min(s, last) */
}

#endif /* IOLAYER_SHARED_H */
