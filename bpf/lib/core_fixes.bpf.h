/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one place that knows how the kernel's structs changed between 5.10 and 6.18.
 * Each helper reads through CO-RE and picks the layout this kernel has from its BTF
 * (bpf_core_field_exists / bpf_core_type_exists), never from a version number.
 */
#ifndef IOLAYER_CORE_FIXES_BPF_H
#define IOLAYER_CORE_FIXES_BPF_H

#include "lib/common.bpf.h"

/* task_struct.state was renamed __state (and became unsigned int) in 5.14,
 * commit 2f064a59a11f ("sched: Change task_struct::state"). */
struct task_struct___o {
	volatile long state;
} __attribute__((preserve_access_index));

static __always_inline __u32 il_task_state(struct task_struct *t)
{
	struct task_struct___o *old = (void *)t;

	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return BPF_CORE_READ(old, state);
}

/* request.rq_disk was removed in 6.0, commit f3fa33acca9f ("block: remove the ->rq_disk
 * field in struct request"); the disk is then rq->q->disk. Returns the disk's dev_t as the
 * kernel encodes it for user space (MKDEV: major << 20 | minor), 0 when unknown. */
struct request___o {
	struct gendisk *rq_disk;
} __attribute__((preserve_access_index));

/* btf: rq is a BTF pointer (a tp_btf program's), read with plain loads. */
static __always_inline struct gendisk *il_rq_disk_btf(struct request *rq, bool btf)
{
	struct request___o *old = (void *)rq;

	if (bpf_core_field_exists(old->rq_disk))
		return IL_BTF_READ(btf, old, rq_disk);
	return btf ? rq->q->disk : BPF_CORE_READ(rq, q, disk);
}

static __always_inline struct gendisk *il_rq_disk(struct request *rq)
{
	return il_rq_disk_btf(rq, false);
}

/* btf: disk is a BTF pointer (read through one), read with plain loads. */
static __always_inline __u32 il_disk_dev_btf(struct gendisk *disk, bool btf)
{
	if (!disk)
		return 0;
	return (IL_BTF_READ(btf, disk, major) << 20) | IL_BTF_READ(btf, disk, first_minor);
}

static __always_inline __u32 il_disk_dev(struct gendisk *disk)
{
	return il_disk_dev_btf(disk, false);
}

/* request.part: the partition (or the whole disk, part0) the request was sent to, set by
 * blk_account_io_start() when the queue keeps I/O statistics (NULL otherwise: then 0 is
 * returned). A struct block_device * since 5.11, commit 8446fe9255be ("block: switch
 * partition lookup to use struct block_device"), whose dev_t is bd_dev; before, a struct
 * hd_struct *, a type that series removed. hd_struct.partno is not added to the disk's
 * first minor: partitions past the disk's minors (GENHD_FL_EXT_DEVT, every loop device on
 * 5.10) have a dev_t of their own (major 259), so the partition's own device's devt is read.
 * Returns major << 20 | minor, as il_disk_dev(). */
struct hd_struct___o {
	struct device __dev;
} __attribute__((preserve_access_index));

struct request___hd {
	struct hd_struct___o *part;
} __attribute__((preserve_access_index));

static __always_inline __u32 il_rq_part_dev(struct request *rq)
{
	struct request___hd *old = (void *)rq;

	if (bpf_core_type_exists(struct hd_struct___o))
		return BPF_CORE_READ(old, part, __dev.devt);
	return BPF_CORE_READ(rq, part, bd_dev);
}

/* request.cmd_flags: `unsigned int` before 6.0, `blk_opf_t` after; same bits. The low
 * REQ_OP_BITS (8, include/linux/blk_types.h, unchanged since 4.10) hold the operation.
 * The operation's enum was `enum req_opf` until 6.0 and `enum req_op` after, commit
 * ff07a02e9e8e ("treewide: use enum req_op where appropriate"). The values are read from
 * the kernel's own enum through CO-RE. */
#define IL_REQ_OP_MASK 0xff

enum req_opf___o {
	REQ_OP_READ___o = 0,
	REQ_OP_WRITE___o = 1,
	REQ_OP_FLUSH___o = 2,
	REQ_OP_DISCARD___o = 3,
};

static __always_inline __u32 il_opf_op(__u32 opf)
{
	__u32 op = opf & IL_REQ_OP_MASK;

	if (bpf_core_type_exists(enum req_op)) {
		if (op == bpf_core_enum_value(enum req_op, REQ_OP_READ))
			return IL_OP_READ;
		if (op == bpf_core_enum_value(enum req_op, REQ_OP_WRITE))
			return IL_OP_WRITE;
		if (op == bpf_core_enum_value(enum req_op, REQ_OP_FLUSH))
			return IL_OP_FLUSH;
		if (op == bpf_core_enum_value(enum req_op, REQ_OP_DISCARD))
			return IL_OP_DISCARD;
		return IL_OP_OTHER;
	}
	if (op == bpf_core_enum_value(enum req_opf___o, REQ_OP_READ___o))
		return IL_OP_READ;
	if (op == bpf_core_enum_value(enum req_opf___o, REQ_OP_WRITE___o))
		return IL_OP_WRITE;
	if (op == bpf_core_enum_value(enum req_opf___o, REQ_OP_FLUSH___o))
		return IL_OP_FLUSH;
	if (op == bpf_core_enum_value(enum req_opf___o, REQ_OP_DISCARD___o))
		return IL_OP_DISCARD;
	return IL_OP_OTHER;
}

static __always_inline __u32 il_rq_op(struct request *rq)
{
	return il_opf_op(BPF_CORE_READ(rq, cmd_flags));
}

/* The flags of cmd_flags / bio.bi_opf above the operation (enum il_rq_flag). Their bit
 * numbers (enum req_flag_bits) moved between kernels as flags were added and removed: they
 * are read from the kernel's enum through CO-RE. */
static __always_inline __u32 il_opf_flags(__u32 opf)
{
	__u32 f = 0;

	if (opf & (1U << bpf_core_enum_value(enum req_flag_bits, __REQ_SYNC)))
		f |= IL_RQF_SYNC;
	if (opf & (1U << bpf_core_enum_value(enum req_flag_bits, __REQ_META)))
		f |= IL_RQF_META;
	if (opf & (1U << bpf_core_enum_value(enum req_flag_bits, __REQ_FUA)))
		f |= IL_RQF_FUA;
	if (opf & (1U << bpf_core_enum_value(enum req_flag_bits, __REQ_PREFLUSH)))
		f |= IL_RQF_PREFLUSH;
	if (opf & (1U << bpf_core_enum_value(enum req_flag_bits, __REQ_RAHEAD)))
		f |= IL_RQF_RAHEAD;
	if (opf & (1U << bpf_core_enum_value(enum req_flag_bits, __REQ_BACKGROUND)))
		f |= IL_RQF_BACKGROUND;
	return f;
}

/* The block device a bio was sent to: bio.bi_bdev (5.12 and later: commit 309dca309fc3),
 * a partition's own device when it was sent to one (blk_partition_remap() moves the sector
 * but keeps bi_bdev). Before 5.12 the bio held the disk and a partition number that the remap
 * resets before block_bio_queue: 0 then (block_bio_remap's device says it). */
static __always_inline __u32 il_bio_part_dev(struct bio *bio)
{
	if (bpf_core_field_exists(bio->bi_bdev))
		return BPF_CORE_READ(bio, bi_bdev, bd_dev);
	return 0;
}

/* The cgroup the block layer charges a bio to: its blkcg (bio.bi_blkg, set from the
 * submitter when the bio was made, so still right when a worker queues it later):
 * bi_blkg->blkcg->css.cgroup, in the hierarchy blkio belongs to (v1 blkio, or v2). NULL when
 * the kernel has no blk-cgroup or the bio none. btf: bio is a BTF pointer (plain loads). */
static __always_inline struct cgroup *il_bio_cgroup_of_btf(struct bio *bio, bool btf)
{
	struct blkcg_gq *g;

	if (!bpf_core_field_exists(bio->bi_blkg))
		return NULL;
	g = IL_BTF_READ(btf, bio, bi_blkg);
	if (!g)
		return NULL;
	return btf ? g->blkcg->css.cgroup : BPF_CORE_READ(g, blkcg, css.cgroup);
}

/* A cgroup's kernfs id -- the inode number of its directory in the hierarchy; 0 for none.
 * btf: cg was read through a BTF pointer (plain loads). */
static __always_inline __u64 il_cgroup_kn_id(struct cgroup *cg, bool btf)
{
	if (!cg)
		return 0;
	return btf ? cg->kn->id : BPF_CORE_READ(cg, kn, id);
}


/* task_struct.in_iowait: set by io_schedule_prepare() (io_schedule, io_schedule_timeout and
 * their callers) for the whole sleep and restored after schedule() returns, so it is still set
 * when the sleeper is switched back in. The bit exists in every supported kernel
 * (docs/kernel-matrix.md), but it sits in a block of one-bit fields whose membership changes
 * between versions and configs, so its bit offset is not fixed: it is read through a CO-RE
 * bitfield relocation. Works on BTF (tp_btf) and plain (raw_tp) kernel pointers. */
static __always_inline bool il_task_in_iowait(struct task_struct *t)
{
	return BPF_CORE_READ_BITFIELD_PROBED(t, in_iowait);
}

/* il_task_in_iowait() for a BTF pointer (a tp_btf program's task): a direct load, no helper
 * call. */
static __always_inline bool il_task_in_iowait_btf(struct task_struct *t)
{
	return BPF_CORE_READ_BITFIELD(t, in_iowait);
}

/* The user registers of the current task, saved at the top of its kernel stack when it
 * entered the kernel. bpf_task_pt_regs() exists since 5.15; before, the address is worked out
 * as the kernel's task_pt_regs() does on x86-64: task_struct.stack + THREAD_SIZE -
 * sizeof(struct pt_regs), with THREAD_SIZE 16 KiB (a KASAN kernel doubles it: the registers
 * read there are then wrong, and the callers must check what they find). NULL for a task
 * without a stack. */
#define IL_THREAD_SIZE (16 * 1024)

static __always_inline struct pt_regs *il_current_user_regs(void)
{
	struct task_struct *t;
	void *stack;

	if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_task_pt_regs))
		return (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	t = (struct task_struct *)bpf_get_current_task();
	stack = BPF_CORE_READ(t, stack);
	if (!stack)
		return NULL;
	return stack + IL_THREAD_SIZE - bpf_core_type_size(struct pt_regs);
}

/* The inode state bit of dirty pages, I_DIRTY_PAGES (include/linux/fs.h): a #define of
 * (1 << 2) in every kernel until the inode state flags became enum inode_state_flags_t, with
 * bit numbers moved (6.18: 64). Read from the kernel's BTF where the enum is there. */
static __always_inline __u32 il_i_dirty_pages(void)
{
	if (bpf_core_enum_value_exists(enum inode_state_flags_t, I_DIRTY_PAGES))
		return bpf_core_enum_value(enum inode_state_flags_t, I_DIRTY_PAGES);
	return 4;
}

#endif /* IOLAYER_CORE_FIXES_BPF_H */
