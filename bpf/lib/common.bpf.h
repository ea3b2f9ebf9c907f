/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Included first by every bpf/NAME.bpf.c: kernel types, libbpf's BPF headers, the shared
 * drop counters and small map helpers.
 */
#ifndef IOLAYER_COMMON_BPF_H
#define IOLAYER_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "lib/shared.h"

#ifndef EEXIST
#define EEXIST 17
#endif

/* Per-CPU counters of what could not be measured, indexed by enum il_drop; user space sums
 * the CPUs and prints them at exit (user/lib/drops.c). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, IL_DROP__MAX);
	__type(key, __u32);
	__type(value, __u64);
} il_drops SEC(".maps");

/* Count one event of kind what (enum il_drop) in il_drops. A global function: the verifier
 * walks it once a program, where inlined it walked its lookup once for each path to each of
 * its 35 call sites (about 700 instructions of block_bio_queue's verification); its callers
 * are the rare paths, where the call costs nothing that matters. Returns 0. */
__noinline int il_drop(__u32 what)
{
	__u32 key = what;
	__u64 *v = bpf_map_lookup_elem(&il_drops, &key);

	if (v)
		*v += 1; /* per-CPU: no atomics needed */
	return 0;
}

/* Look up key in map; create it from init when absent. NULL (and IL_DROP_MAP_FULL counted)
 * when the map is full. */
static __always_inline void *il_lookup_or_init(void *map, const void *key, const void *init)
{
	void *v = bpf_map_lookup_elem(map, key);
	long err;

	if (v)
		return v;
	err = bpf_map_update_elem(map, key, init, BPF_NOEXIST);
	if (err && err != -EEXIST) {
		il_drop(IL_DROP_MAP_FULL);
		return NULL;
	}
	return bpf_map_lookup_elem(map, key);
}

/* il_hist_slot(v) as an index into a histogram's slots[IL_HIST_SLOTS] that every verifier can
 * bound: kernels before ~6.3 lose the range clang relies on ("R0 unbounded memory access"),
 * so the value is hidden from clang and masked (IL_HIST_SLOTS is a power of two). */
static __always_inline __u32 il_slot_idx(__u64 v)
{
	__u64 slot = il_hist_slot(v, IL_HIST_SLOTS);

	asm volatile("" : "+r"(slot));
	return slot & (IL_HIST_SLOTS - 1);
}

/* Argument 0 or 1 of a raw tracepoint, chosen by a setting known at load time (a
 * tracepoint that lost its first argument between kernels). Written as two loads at constant
 * offsets behind two different one-instruction asm barriers: clang otherwise merges them into
 * one load at a computed offset, which the 5.10 verifier refuses ("dereference of modified
 * ctx ptr"); an empty asm would leave two line_info records on one instruction, which 5.10
 * refuses too ("Invalid line_info"). */
static __always_inline __u64 il_ctx_arg01(unsigned long long *ctx, bool second)
{
	__u64 v;

	if (second) {
		v = ctx[1];
		asm volatile("%0 = %0" : "+r"(v));
	} else {
		v = ctx[0];
		asm volatile("%0 += 0" : "+r"(v));
	}
	return v;
}

/* Reserve size bytes in ring buffer rb; NULL (and IL_DROP_RINGBUF_FULL counted) when full. */
static __always_inline void *il_ringbuf_reserve(void *rb, __u64 size)
{
	void *e = bpf_ringbuf_reserve(rb, size, 0);

	if (!e)
		il_drop(IL_DROP_RINGBUF_FULL);
	return e;
}

/* bpf_rdonly_cast (kernel/bpf/helpers.c, 6.2+; the verifier turns the call into a move):
 * obj as an untrusted, read-only pointer to the kernel's type btf_id (a constant), whose
 * fields are then read with plain loads. Called from tp_btf programs only, where the loader
 * binds it (IL_KFUNC_RDONLY_CAST, user/lib/btf.c), and only where the kernel has it: else
 * the call stays unbound in code the verifier drops as dead (il_btf_ids 0). */
static void *(* const bpf_rdonly_cast)(const void *obj, __u32 btf_id) = (void *)IL_KFUNC_RDONLY_CAST;

/* struct il_btf_ids (lib/shared.h), filled by user space before load. */
const volatile struct il_btf_ids il_btf_ids = {};

/* p, a tp_btf program's trusted BTF pointer (its argument, bpf_get_current_task_btf()), as
 * an untrusted one of the same type (il_btf_ids' field id), for loads of its fields and
 * through them: the verifier of 6.4 and later checks each pointer loaded through a trusted
 * pointer against its allow-lists, by name, each a search of all of vmlinux's BTF
 * (btf_nested_type_is_trusted(), four a load; on 6.18 here half of iolayer's verification
 * time); through an untrusted pointer it checks none. The loads stay plain (with an
 * exception-table entry). Helpers that want a trusted task (task storage, stack walks) keep
 * p itself. Unchanged where the kernel has no bpf_rdonly_cast (before 6.2: no such checks
 * either). */
#define IL_UNTRUSTED(p, id) \
	((typeof(p))(il_btf_ids.id ? bpf_rdonly_cast((p), il_btf_ids.id) : (void *)(p)))

/* Field f of kernel pointer p: a plain load when p is a BTF pointer (btf: a tp_btf program's
 * argument, or read through one), else bpf_probe_read_kernel() (raw_tp). */
#define IL_BTF_READ(btf, p, f) ((btf) ? (p)->f : BPF_CORE_READ(p, f))

/* The flags to submit a record to ring buffer rb with: wake its reader only when
 * IL_WAKEUP_NS passed since the last wakeup (*last_wakeup, one per ring buffer, shared by all
 * CPUs: a lost race costs one extra or one later wakeup) or IL_WAKEUP_BYTES wait (the rings
 * are 1 MiB or more). A lone record shows at once; at thousands of records a second the reader
 * wakes ~50 times a second instead of once per record, a wakeup costing microseconds in the
 * submitting program. What is not woken for is read within 100 ms (il_run(), user/lib/run.c,
 * reads the ring whenever its poll times out). now: bpf_ktime_get_ns(). */
#define IL_WAKEUP_NS (20 * 1000 * 1000ULL)
#define IL_WAKEUP_BYTES (256 * 1024)

static __always_inline __u64 il_wakeup_flags(void *rb, __u64 *last_wakeup, __u64 now)
{
	if (now - *last_wakeup >= IL_WAKEUP_NS ||
	    bpf_ringbuf_query(rb, BPF_RB_AVAIL_DATA) >= IL_WAKEUP_BYTES) {
		*last_wakeup = now;
		return BPF_RB_FORCE_WAKEUP;
	}
	return BPF_RB_NO_WAKEUP;
}

/* Copy size bytes of data into ring buffer rb as one record (IL_DROP_RINGBUF_FULL counted
 * when it does not fit): for records whose length is known only when they are built. */
static __always_inline void il_ringbuf_output(void *rb, void *data, __u64 size, __u64 flags)
{
	if (bpf_ringbuf_output(rb, data, size, flags))
		il_drop(IL_DROP_RINGBUF_FULL);
}

/* ---- the --cgroup filter (struct il_cg_cfg, shared.h), one for every layer ---------- */

const volatile struct il_cg_cfg il_cg_cfg = {};

/* struct cgroup before 6.0, which kept its ancestors' ids rather than pointers to them. */
struct cgroup___ids {
	int level;
	__u64 ancestor_ids[];
} __attribute__((preserve_access_index));

/* The cgroup task's io controller charges it to (v1: the blkio hierarchy's):
 * task->cgroups->subsys[io_cgrp_id]->cgroup (include/linux/cgroup-defs.h); NULL on a kernel
 * without CONFIG_BLK_CGROUP. */
static __always_inline struct cgroup *il_task_io_cgroup(struct task_struct *task)
{
	struct cgroup_subsys_state *css = NULL;
	struct css_set *cs;
	__u32 idx;

	if (!bpf_core_enum_value_exists(enum cgroup_subsys_id, io_cgrp_id))
		return NULL;
	idx = bpf_core_enum_value(enum cgroup_subsys_id, io_cgrp_id);
	cs = BPF_CORE_READ(task, cgroups);
	if (!cs)
		return NULL;
	bpf_probe_read_kernel(&css, sizeof(css),
			      (void *)cs + bpf_core_field_offset(struct css_set, subsys) + idx * sizeof(css));
	return css ? BPF_CORE_READ(css, cgroup) : NULL;
}

/* Whether cgroup cg is il_cg_cfg's or below it: its ancestor at il_cg_cfg.level (itself at its
 * own level) is il_cg_cfg.id -- cgroup.ancestors[level]->kn->id (6.0+), else
 * cgroup.ancestor_ids[level] (5.10..5.19); one look, whatever the depth. */
static __always_inline bool il_cg_under(struct cgroup *cg)
{
	__u32 lvl = il_cg_cfg.level;
	struct cgroup *a = NULL;
	__u64 id = 0;

	if (!cg || BPF_CORE_READ(cg, level) < (int)lvl)
		return false;
	if (bpf_core_field_exists(struct cgroup, ancestors)) {
		bpf_probe_read_kernel(&a, sizeof(a), (void *)cg +
				      bpf_core_field_offset(struct cgroup, ancestors) + lvl * sizeof(a));
		id = a ? BPF_CORE_READ(a, kn, id) : 0;
	} else {
		bpf_probe_read_kernel(&id, sizeof(id), (void *)cg +
				      bpf_core_field_offset(struct cgroup___ids, ancestor_ids) + lvl * sizeof(id));
	}
	return id == il_cg_cfg.id;
}

/* The --cgroup filter for the current task: true when there is none, or when the task's
 * cgroup (il_cg_cfg.v1: its blkio one, else its v2 one) is the one given or below it. Every
 * layer's task filter calls it (at sched_switch, current is still the task switched out). */
static __always_inline bool il_cg_wanted(void)
{
	struct task_struct *task;

	if (!il_cg_cfg.id)
		return true;
	task = (struct task_struct *)bpf_get_current_task();
	return il_cg_under(il_cg_cfg.v1 ? il_task_io_cgroup(task) : BPF_CORE_READ(task, cgroups, dfl_cgrp));
}

/* ---- direct-mapped slots, a hash for the rest ---------------------------------------------
 * A record per object in flight (a bio, an io_uring request), found by the object's address
 * (its owner) in the slot of an array that the address picks: an inlined array lookup, where
 * a hash's lookup, update and delete are helper calls that hash the key (and an LRU's take
 * its locks). A slot belongs to one owner at a time (il_slot_claim()); an owner that finds
 * its slot held keeps its record in the spill hash, an LRU, under key k, and the slot counts
 * it (spill), so a miss costs no hash lookup while none spilled. A slot held longer than the
 * stale time (an end never seen) is given to the next owner that wants it, its holder's
 * record moved to the spill hash, where nothing is lost and the LRU ages it out. (A holder
 * that ends at that very moment releases the slot a second time: its count of takers stays
 * off by one, and its owners spill from then on. Slower, nothing lost.) */

/* The low 32 bits of a pointer, as a number. The verifier allows no arithmetic on a pointer;
 * a 32-bit move of one (as root) gives a scalar: the "w0 = w0" below, in asm since clang
 * without alu32 has no 32-bit move of its own. */
static __always_inline __u64 il_ptr_lo32(__u64 key)
{
	__u64 lo;

	asm volatile("r0 = %1\n\tw0 = w0\n\t%0 = r0" : "=r"(lo) : "r"(key) : "r0");
	return lo;
}

/* Take a direct-mapped slot whose owner word is *owner (0: free) and taker count *claims:
 * true when it was free and this CPU is its only taker; the caller then fills it and sets
 * *owner last. Two takers at once both back off. Atomic adds only (5.10 has no other). */
static __always_inline bool il_slot_claim(__u64 *owner, __u32 *claims)
{
	if (*(volatile __u64 *)owner)
		return false;
	__sync_fetch_and_add(claims, 1);
	if (*(volatile __u32 *)claims == 1)
		return true;
	__sync_fetch_and_add(claims, -1);
	return false;
}

/* Give a slot taken with il_slot_claim() back. */
static __always_inline void il_slot_release(__u64 *owner, __u32 *claims)
{
	*(volatile __u64 *)owner = 0;
	__sync_fetch_and_add(claims, -1);
}

/* The fields of a slot type holding a record of type rec_t, kept under key k (key_t) in the
 * spill hash. */
#define IL_SLOT_FIELDS(key_t, rec_t)                                                            \
	__u64 owner;  /* the object holding the slot, 0: free */                                \
	__u32 claims; /* takers (il_slot_claim()) */                                            \
	__u32 spill;  /* records of this slot's owners in the spill hash (atomic adds); one the \
		       * LRU evicted leaves it above 0, which costs a hash lookup, no more */   \
	__u64 since;  /* bpf_ktime_get_ns() when taken */                                       \
	key_t k;      /* the owner's key in the spill hash */                                   \
	rec_t r;      /* its record */

/* Define the array map pfx of n (a power of 2) slots of slot_t (IL_SLOT_FIELDS(key_t,
 * rec_t)), owner's slot being its address in units of 1 << shift bytes modulo n (objects of a
 * slab that size or more never share a unit, those of one slab page take neighbouring slots,
 * objects n << shift bytes apart collide), with the spill hash spill_map (key_t -> rec_t) and
 * a stale time of stale_ns (IL_SLOT_NEVER_STALE: a slot is never taken from its holder), and:
 *   __u32 pfx_idx(owner): owner's slot's index (for arrays kept beside pfx, at the same index);
 *   rec_t *pfx_find(owner, key, &slot): the record of owner (spill key *key), NULL none; *slot
 *     is owner's slot, whoever holds it;
 *   rec_t *pfx_new(owner, key, slot, init, now): a record made from *init for an owner that
 *     has none (pfx_find() said so and gave slot), now a bpf_ktime_get_ns() or 0; NULL when the
 *     spill hash refuses (IL_DROP_MAP_FULL counted);
 *   pfx_free(key, slot, rec): forget rec (from pfx_find(), with its slot);
 *   rec_t *pfx_set(owner, key, init, now): owner's record is *init, over the one it has or
 *     made (pfx_new()); NULL as pfx_new(). */
#define IL_SLOT_NEVER_STALE (~0ULL)

#define IL_SLOTS(pfx, slot_t, key_t, rec_t, n, shift, spill_map, stale_ns)                    \
	struct {                                                                                \
		__uint(type, BPF_MAP_TYPE_ARRAY);                                               \
		__uint(max_entries, n);                                                         \
		__type(key, __u32);                                                             \
		__type(value, slot_t);                                                          \
	} pfx SEC(".maps");                                                                     \
	static __always_inline __u32 pfx##_idx(__u64 owner)                                    \
	{                                                                                       \
		return (il_ptr_lo32(owner) >> (shift)) & ((n) - 1);                             \
	}                                                                                       \
	static __always_inline rec_t *pfx##_find(__u64 owner, const key_t *key, slot_t **slot) \
	{                                                                                       \
		__u32 i_ = pfx##_idx(owner);                                                    \
		slot_t *s_ = bpf_map_lookup_elem(&pfx, &i_);                                    \
                                                                                                \
		*slot = s_;                                                                     \
		if (s_ && *(volatile __u64 *)&s_->owner == owner)                               \
			return &s_->r;                                                          \
		if (s_ && !*(volatile __u32 *)&s_->spill)                                       \
			return NULL;                                                            \
		return bpf_map_lookup_elem(&spill_map, key);                                        \
	}                                                                                       \
	static __always_inline rec_t *pfx##_new(__u64 owner, const key_t *key, slot_t *s,      \
						 const rec_t *init, __u64 now)                  \
	{                                                                                       \
		rec_t *r_;                                                                      \
                                                                                                \
		if (s && *(volatile __u64 *)&s->owner &&                                        \
		    (now = now ?: bpf_ktime_get_ns()) - s->since > (stale_ns)) {                \
			__sync_fetch_and_add(&s->spill, 1);                                     \
			if (bpf_map_update_elem(&spill_map, &s->k, &s->r, BPF_ANY))                 \
				__sync_fetch_and_add(&s->spill, -1);                            \
			il_slot_release(&s->owner, &s->claims);                                 \
		}                                                                               \
		if (s && il_slot_claim(&s->owner, &s->claims)) {                                \
			s->r = *init;                                                           \
			s->k = *key;                                                            \
			s->since = now ?: bpf_ktime_get_ns();                                   \
			*(volatile __u64 *)&s->owner = owner;                                   \
			return &s->r;                                                           \
		}                                                                               \
		if (s)                                                                          \
			__sync_fetch_and_add(&s->spill, 1);                                     \
		if (!bpf_map_update_elem(&spill_map, key, init, BPF_ANY)) {                         \
			r_ = bpf_map_lookup_elem(&spill_map, key);                                  \
			if (r_)                                                                 \
				return r_;                                                      \
		} else if (s) {                                                                 \
			__sync_fetch_and_add(&s->spill, -1);                                    \
		}                                                                               \
		il_drop(IL_DROP_MAP_FULL);                                                      \
		return NULL;                                                                    \
	}                                                                                       \
	static __always_inline void pfx##_free(const key_t *key, slot_t *s, rec_t *r)          \
	{                                                                                       \
		if (!r)                                                                         \
			return;                                                                 \
		if (s && r == &s->r)                                                            \
			il_slot_release(&s->owner, &s->claims);                                 \
		else if (!bpf_map_delete_elem(&spill_map, key) && s)                                \
			__sync_fetch_and_add(&s->spill, -1);                                    \
	}                                                                                       \
	static __always_inline rec_t *pfx##_set(__u64 owner, const key_t *key, const rec_t *init, \
						 __u64 now)                                     \
	{                                                                                       \
		slot_t *s_;                                                                     \
		rec_t *r_ = pfx##_find(owner, key, &s_);                                        \
                                                                                                \
		if (!r_)                                                                        \
			return pfx##_new(owner, key, s_, init, now);                            \
		*r_ = *init;                                                                    \
		return r_;                                                                      \
	}

/* task_struct.flags bit of a kernel thread (include/linux/sched.h, since 2.6.27). */
#define IL_PF_KTHREAD 0x00200000

/* Is the current task a kernel thread (a worker, a flusher, jbd2)? task_struct.flags with a
 * probe read (callers use it off their hot paths). */
static __always_inline bool il_current_kthread(void)
{
	struct task_struct *t = (void *)bpf_get_current_task();

	return BPF_CORE_READ(t, flags) & IL_PF_KTHREAD;
}

#endif /* IOLAYER_COMMON_BPF_H */
