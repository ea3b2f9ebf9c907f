/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Block layer: the lifetime of a struct request from block_rq_insert (queued in the OS) or
 * block_rq_issue (sent to the device driver) to block_rq_complete, keyed by the request's
 * address. Handlers take the tracepoint's raw argument array so one body serves tp_btf and
 * raw_tp programs.
 *
 * Tracepoint arguments (include/trace/events/block.h):
 *   block_rq_insert(struct request *rq), block_rq_issue(struct request *rq)
 *     -- before 5.11 (and 5.10 stable before 5.10.137) both took (struct request_queue *q,
 *        struct request *rq), commit a54895fa057c ("block: remove the request_queue to
 *        argument request based tracepoints"). The user side reads the shape from BTF
 *        (user/lib/block.c) and sets blk_cfg.rq_two_args.
 *   block_rq_complete(struct request *rq, blk_status_t error, unsigned int nr_bytes)
 *     -- error was an int errno before 5.16 (Christoph Hellwig's "block: don't call
 *        blk_status_to_errno in blk_update_request"); non-zero is an error either way.
 *        It fires at the start of blk_update_request() (block/blk-core.c before 5.16,
 *        block/blk-mq.c after), before request.__data_len drops by nr_bytes, and from
 *        blk_complete_request() for batched completions with all the bytes.
 *
 * With bio tracking on (blk_cfg.bios, user/lib/block.c: blk_track_bios()), the layer
 * follows every bio from its submission to its request, in blktrace's terms (Q, G, I, D, C;
 * the phases in lib/block.h):
 *   block_bio_queue (Q), block_getrq (G), block_bio_backmerge/frontmerge (a bio merged into a
 *   request), block_rq_merge (a request merged into another), block_split (the split bio
 *   inherits its parent's times), block_bio_remap/block_rq_remap (a partition's or a stacked
 *   device's bio), block_rq_requeue, block_bio_complete (bio-based devices: dm, md);
 *   and the time before Q: submit_bio (fentry, kprobe) when the kernel allows, else the
 *   tracepoints that mark a submission's start and end in the submitting task
 *   (iomap:iomap_dio_rw_begin/iomap_dio_complete, writeback:writeback_single_inode_start/
 *   writeback_single_inode, ext4:ext4_writepages/ext4_writepages_result; blk_sub_task).
 * Each bio is kept by address in a direct-mapped array (blk_bio_slots; a bio whose slot is
 * held, in a bounded LRU hash, blk_bio_start) with its Q time and its submitter; a request is
 * linked to its first bio (request.bio, the one that got G) when it is inserted or issued, so
 * its completion yields every phase (blk_done()).
 * The bio tracepoints lost their leading request_queue argument in 5.11 (commit e8a676d61c07
 * and its series); blk_cfg.tp_old says, per tracepoint, which shape this kernel has.
 *
 * Where blk-throttle holds bios: submit_bio_noacct() calls blk_throtl_bio() before
 * submit_bio_noacct_nocheck(), which fires block_bio_queue (5.10 to 6.18: the throttle sits
 * in submit_bio_checks() before the tracepoint on 5.10, in submit_bio_noacct() on 6.x); a
 * held bio is queued later by the throttle's dispatch work, from a kworker. So the throttle's
 * wait is BEFORE_Q, and Q's task is not the submitter: identity comes from submit_bio, the
 * direct I/O's record, or the waiter of a synchronous direct I/O, and the cgroup from the
 * bio's own blkcg.
 */
#ifndef IOLAYER_BLOCK_BPF_H
#define IOLAYER_BLOCK_BPF_H

#include "lib/core_fixes.bpf.h"
#include "lib/block.h"
#include "lib/who.bpf.h"

/* Settings, filled by user space before load (struct blk_cfg, user/lib/block.c). */
const volatile struct blk_cfg blk_cfg = {};

#define BLK_MAX_INFLIGHT 16384

/* When a request in flight entered the OS queue and was issued to the driver. */
struct il_rq_times {
	__u64 insert_ns; /* bpf_ktime_get_ns() at block_rq_insert, 0 when not seen */
	__u64 issue_ns;  /* bpf_ktime_get_ns() at block_rq_issue, 0 when not yet issued */
	__u32 parts;     /* completions of a part seen (bytes were left): times are kept */
	__u32 error;     /* a part completed with an error */
};

/* struct request * -> its times, for a request whose slot in blk_rq_slots was held by another
 * (rare: entries made on demand, not the 1.5 MB preallocated at start-up) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BLK_MAX_INFLIGHT);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__type(value, struct il_rq_times);
} blk_rq_start SEC(".maps");

/* A request's times in direct-mapped slots (IL_SLOTS): an array lookup is inlined by the
 * verifier, where a hash lookup, update and delete are helper calls that hash the key. A slot
 * belongs to one request at a time; a request that finds it held by another keeps its times in
 * blk_rq_start, so none is lost. A slot is never taken from its holder (a request whose end
 * was not seen keeps it until it ends or the tool stops): the first bio's record of the
 * request (blk_rq_slot_bio) is kept at the same index and would be left to the next. */
#define BLK_RQ_SLOTS_BITS 14
#define BLK_RQ_SLOTS (1U << BLK_RQ_SLOTS_BITS)

struct il_rq_slot {
	IL_SLOT_FIELDS(__u64, struct il_rq_times) /* owner and k: the struct request * */
};

/* A request's slot: its address in units of 256 bytes, modulo the slots. Requests are
 * preallocated per tag set (blk_mq_alloc_rqs(): struct request and the driver's data, rounded
 * up to a cache line, 256 bytes or more from 5.10 to 6.18, side by side in pages), so two
 * requests in flight never share a unit, the requests of one queue take consecutive slots,
 * and a queue cycling through its tags walks the slots in order (few cache lines, few pages):
 * cheaper than a hash that scatters them. Requests 4 MiB apart (other queues) may collide:
 * then blk_rq_start. */
IL_SLOTS(blk_rq_slots, struct il_rq_slot, __u64, struct il_rq_times, BLK_RQ_SLOTS, 8,
	 blk_rq_start, IL_SLOT_NEVER_STALE)

/* The times of request key: in its slot (*slot is the slot, whoever holds it), else in
 * blk_rq_start; NULL when neither has them. */
static __always_inline struct il_rq_times *il_rq_times_find(__u64 key, struct il_rq_slot **slot)
{
	return blk_rq_slots_find(key, &key, slot);
}

/* Times made from init for request key, which has none (il_rq_times_find() said so and gave
 * its slot s), at now (the caller's bpf_ktime_get_ns()): in s when it is free and this CPU is
 * its only taker, else in blk_rq_start; NULL when that is full (counted). */
static __always_inline struct il_rq_times *blk_rq_times_new(__u64 key, struct il_rq_slot *s,
							     const struct il_rq_times *init, __u64 now)
{
	return blk_rq_slots_new(key, &key, s, init, now);
}

/* Forget the times t of request key (from il_rq_times_find(), with its slot s). */
static __always_inline void il_rq_times_free(__u64 key, struct il_rq_slot *s, struct il_rq_times *t)
{
	blk_rq_slots_free(&key, s, t);
}

/* Requests measured whose completion (of any part) carried an error: one per-CPU counter at
 * key 0. Not a drop: these requests are in the histograms too. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} blk_errors SEC(".maps");

/* Per-disk totals of the aggregate mode (struct blk_disk_stats, key: disk dev_t), per CPU:
 * plain adds where atomic ones cost about 40 locked instructions per request (issue 25), which
 * the readers (user/lib/block.c) sum. A CPU's copy is written only by programs on that CPU,
 * never two at once: tracepoint programs run with preemption off, and the kernel does not run
 * a program again inside itself on one CPU; the fields a nested program of another
 * tracepoint writes (a completion's in an interrupt) are not the interrupted one's (Q's,
 * merges'). No preallocation, so objects that never count into it pay nothing. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 1024);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct blk_disk_stats);
} blk_disks SEC(".maps");

static const struct blk_disk_stats il_zero_disk;

/* blk_disks' slots (struct blk_disk_slot, block.h), looked up first; per CPU, as blk_disks. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, BLK_DISK_SLOTS);
	__type(key, __u32);
	__type(value, struct blk_disk_slot);
} blk_disk_slots SEC(".maps");

/* This CPU's slot of disk dev when user space gave it one, else NULL. */
static __always_inline struct blk_disk_slot *blk_disk_slot(__u32 dev)
{
	__u32 i = blk_disk_slot_idx(dev);
	struct blk_disk_slot *sl = bpf_map_lookup_elem(&blk_disk_slots, &i);

	return sl && dev && sl->dev == dev ? sl : NULL;
}

/* This CPU's totals of disk dev: its slot's, else its entry in blk_disks (made when missing);
 * NULL when blk_disks is full (counted). For a field or two: where more follows, a path for
 * each map (blk_disk_complete()). */
static __always_inline struct blk_disk_stats *blk_disk_get(__u32 dev)
{
	struct blk_disk_slot *sl = blk_disk_slot(dev);

	if (sl)
		return &sl->s;
	return il_lookup_or_init(&blk_disks, &dev, &il_zero_disk);
}

/* ---- bio tracking (blk_cfg.bios) ----------------------------------------------------- */

#define BLK_MAX_BIOS 4096 /* blk_bio_start: bios whose slot is held (blk_bio_slots) */
#define IL_LINK_WALK 4          /* bios of a request looked at for its first one */
#define BLK_BIO_COUNT_MAX 32     /* bios of a request counted at completion */

/* What is known of a bio before it joins a request (times: bpf_ktime_get_ns(), 0 unseen). */
struct il_bio_info {
	__u64 submit_ns, queue_ns, getrq_ns;
	__u64 cgroup;            /* the bio's (il_bio_cgroup_of_btf()), else the submitter's v2 cgroup */
	__u64 ino;               /* its file, 0 unknown (with blk_cfg.files) */
	__u64 sector;            /* at Q */
	__u32 ino_dev, ino_gen, tgid, pid;
	__u32 part;              /* il_bio_part_dev() at Q */
	__u32 from;              /* block_bio_remap's device */
	__u32 bytes, opf;        /* at Q: bi_iter.bi_size, bi_opf */
	__u32 held;              /* Q ran in another task than the submitter's (pid): a worker
				  * queued it after holding it (blk-throttle's dispatch) */
	__u32 in_cg;             /* with --cgroup: its cgroup is il_cg_cfg's or below it */
	char comm[IL_TASK_COMM_LEN];
};

/* struct bio * -> what is known of it, from submit_bio or Q until it joins a request (or,
 * on a bio-based device, completes), for a bio whose slot in blk_bio_slots was held by
 * another (il_bio_find()). LRU: a bio whose end was never seen ages out. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, BLK_MAX_BIOS);
	__type(key, __u64);
	__type(value, struct il_bio_info);
} blk_bio_start SEC(".maps");

/* Bios' records in direct-mapped slots (IL_SLOTS), as requests' times (blk_rq_slots): an inlined
 * array lookup where the LRU hash took a lookup, an update and a lookup again at Q and a
 * lookup and a delete at the link (issue 25: about 200 ns of block_bio_queue's 590 per bio
 * under fio, 4 KiB random direct writes through io_uring). A slot belongs to one bio at a
 * time; a bio that finds its slot held by another keeps its record in blk_bio_start, so none
 * is lost. A slot held longer than BLK_BIO_STALE_NS (a bio whose end
 * was never seen: one that failed before it got a request, a discard merged without a
 * tracepoint) moves its record to blk_bio_start, where the LRU ages it out, when another bio
 * wants the slot: a bio a throttle holds that long keeps its record there. */
#define BLK_BIO_SLOTS_BITS 13
#define BLK_BIO_SLOTS (1U << BLK_BIO_SLOTS_BITS)
#define BLK_BIO_STALE_NS 5000000000ULL

struct il_bio_slot {
	IL_SLOT_FIELDS(__u64, struct il_bio_info) /* owner and k: the struct bio * */
};

/* A bio's slot: its address in units of 64 bytes (bios are slab objects, struct bio and its
 * bio_set's front pad, 128 bytes and more). Linear, not hashed: a hash that scattered them
 * measured no cheaper (8,086 slots touched in 3 s of fio instead of 2,076). Bios 512 KiB
 * apart collide: then blk_bio_start. */
IL_SLOTS(blk_bio_slots, struct il_bio_slot, __u64, struct il_bio_info, BLK_BIO_SLOTS, 6,
	 blk_bio_start, BLK_BIO_STALE_NS)

/* The record of bio key: in its slot (*slot is the slot, whoever holds it), else in
 * blk_bio_start; NULL when neither has it. */
static __always_inline struct il_bio_info *il_bio_find(__u64 key, struct il_bio_slot **slot)
{
	return blk_bio_slots_find(key, &key, slot);
}

/* A record for bio key, which has none (il_bio_find() said so and gave its slot s), made
 * from init at now (bpf_ktime_get_ns(), 0: not read yet); NULL when blk_bio_start refuses
 * (counted). */
static __always_inline struct il_bio_info *il_bio_new(__u64 key, struct il_bio_slot *s,
						      const struct il_bio_info *init, __u64 now)
{
	return blk_bio_slots_new(key, &key, s, init, now);
}

/* Forget bio key's record b (from il_bio_find(), with its slot s). */
static __always_inline void il_bio_free(__u64 key, struct il_bio_slot *s, struct il_bio_info *b)
{
	blk_bio_slots_free(&key, s, b);
}

/* A request's first bio, linked at its insert or issue, and its extent then. */
struct blk_rq_bio {
	struct il_bio_info b;
	__u64 sector;
	__u32 bytes;
	__u8 requeued;
	__u8 linked;    /* in blk_rq_slot_bio: the entry holds its slot's request's record */
	__u8 pad[2];
};

/* struct request * -> its first bio's record, until the request completes, for a request
 * that does not hold its slot of blk_rq_slots (its times in blk_rq_start, or none): rare, so
 * entries are made on demand, not the 3 MB preallocated at start-up. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BLK_MAX_INFLIGHT);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__type(value, struct blk_rq_bio);
} blk_rq_bio SEC(".maps");

/* The first bio's record of the request holding slot i of blk_rq_slots, at the same index:
 * two inlined array lookups where blk_rq_bio took a hash update at the link and a hash lookup
 * and delete at the completion (issue 25: about a quarter of block_rq_complete's time went
 * to hash lookups). One entry when bios are not tracked (then never linked). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BLK_RQ_SLOTS);
	__type(key, __u32);
	__type(value, struct blk_rq_bio);
} blk_rq_slot_bio SEC(".maps");

/* Request key's first bio's record: in blk_rq_slot_bio while it holds its slot s (from
 * il_rq_times_find()), else in blk_rq_bio; NULL when it has none. */
static __always_inline struct blk_rq_bio *blk_rq_bio_find(__u64 key, struct il_rq_slot *s)
{
	if (s && *(volatile __u64 *)&s->owner == key) {
		__u32 i = blk_rq_slots_idx(key);
		struct blk_rq_bio *l = bpf_map_lookup_elem(&blk_rq_slot_bio, &i);

		return l && l->linked ? l : NULL;
	}
	return bpf_map_lookup_elem(&blk_rq_bio, &key);
}

/* Forget request key's first bio's record l (from blk_rq_bio_find(), with its slot s), before
 * its slot is released. */
static __always_inline void blk_rq_bio_free(__u64 key, struct il_rq_slot *s, struct blk_rq_bio *l)
{
	if (l && l->linked)
		l->linked = 0;
	else if (!s || *(volatile __u64 *)&s->owner != key)
		bpf_map_delete_elem(&blk_rq_bio, &key);
}

/* Forget request key's times and first bio's record wherever they are. */
static __always_inline void blk_rq_forget_all(__u64 key)
{
	struct il_rq_slot *s;
	struct il_rq_times *t = il_rq_times_find(key, &s);

	if (blk_cfg.bios && !blk_cfg.bio_only)
		blk_rq_bio_free(key, s, blk_rq_bio_find(key, s));
	il_rq_times_free(key, s, t);
}

/* Who began an operation (a direct I/O, a writeback), and when (bpf_ktime_get_ns()). */
struct il_sub_who {
	__u64 ns;
	__u32 tgid, pid;
	char comm[IL_TASK_COMM_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct il_sub_who);
} blk_dio_start SEC(".maps"); /* a direct I/O in progress (iomap:iomap_dio_rw_begin ..
			       * iomap_dio_complete), by its struct kiocb * */

/* The last writeback of an inode a task began (writeback_single_inode_start,
 * ext4_writepages), by struct inode *: who began it and when (ns). With tracepoints only, a
 * bio of that inode that a kernel worker queues later for a cgroup other than the root
 * (blk-throttle dispatching a bio it held: the bio keeps its submitter's cgroup) is that
 * task's, from then: held before Q (il_bio_who()). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct il_sub_who);
} blk_wb_sub SEC(".maps");

/* How long after its writeback began a bio a worker queues is still taken as held from it. */
#define BLK_WB_HELD_NS (30ULL * 1000000000)

/* A submission in progress in a task, with tracepoints only: a writeback of an inode
 * (writeback_single_inode_start or ext4_writepages .. writeback_single_inode or
 * ext4_writepages_result) or a direct I/O (iomap_dio_rw_begin .. iomap_dio_complete). A bio
 * the task queues for that inode or kiocb starts at the later of the operation's start and
 * the task's last block event since (last_ns): one operation submits many bios one after the
 * other, and what the task did for the earlier ones (their rq-qos waits, tag waits, plug
 * flushes) is not the later ones' submission. Times: bpf_ktime_get_ns(). */
struct il_sub_op {
	__u32 pid;      /* the task's, 0: a free entry */
	__u32 pad;
	__u64 key;      /* struct inode * (writeback) or struct kiocb * (direct I/O) */
	__u64 start_ns; /* when the operation began */
	__u64 last_ns;  /* the task's last Q, G, merge, insert or issue since, 0 none */
};

/* Entry pid & (BLK_SUB_SLOTS - 1): the submission in progress of task pid. Kept by task, not
 * by inode: a start kept per inode was taken by any later bio of that inode, from any task
 * (jbd2's journal writes through the block device's inode picked up the start of a sync's
 * writeback of it seconds before). Direct-mapped: an inlined array lookup at Q, G and each
 * insert or issue, where an LRU hash took three lookups a request (issue 25). Two tasks of
 * one entry submitting at once: the later one's start replaces the earlier's, whose bios then
 * have no start (before Q not measured), never another task's. */
#define BLK_SUB_SLOTS 4096

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BLK_SUB_SLOTS);
	__type(key, __u32);
	__type(value, struct il_sub_op);
} blk_sub_task SEC(".maps");

/* The entry of task pid in blk_sub_task (whoever holds it), NULL when the map has none
 * (bio tracking off: one entry). */
static __always_inline struct il_sub_op *il_sub_slot(__u32 pid)
{
	__u32 i = pid & (BLK_SUB_SLOTS - 1);

	return bpf_map_lookup_elem(&blk_sub_task, &i);
}

/* Per (disk, submitting process, cgroup) totals of the aggregate mode (struct blk_proc); user
 * space sums them by (disk, process) and by (disk, cgroup). An LRU hash shared by the CPUs
 * (atomic adds): a host that runs many short-lived processes (a dd loop, cron, builds) makes
 * an entry for each, and a hash that never forgets one filled in 8,192 processes (then every
 * completion of a new one was lost, IL_DROP_MAP_FULL); the LRU forgets the longest unused,
 * and a per-CPU LRU would preallocate its entries on every possible CPU. */
#define BLK_PROC_CG_MAX 8192

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, BLK_PROC_CG_MAX);
	__type(key, struct blk_proc_cg_key);
	__type(value, struct blk_proc);
} blk_proc_cg SEC(".maps");

/* The (disk, process, cgroup) slots (struct blk_pcg_slot), looked up before blk_proc_cg: an
 * array's lookup is inlined, the LRU hash's hashes and locks (block_rq_complete -51 ns a
 * request here). A slot is never given back: on a host that has run thousands of processes
 * most slots hold gone ones, and a new key mostly lands in blk_proc_cg (slower, as correct);
 * the long-lived heavy submitters (a database, the flusher threads) took theirs early. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BLK_PCG_SLOTS);
	__type(key, __u32);
	__type(value, struct blk_pcg_slot);
} blk_pcg_slots SEC(".maps");

static const struct il_bio_info il_zero_bio;

/* The current task's submission in progress now starts: operation key (struct inode * or
 * struct kiocb *) at now. */
static __always_inline void il_sub_begin(__u64 key, __u64 now)
{
	__u32 pid = (__u32)bpf_get_current_pid_tgid();
	struct il_sub_op *op = il_sub_slot(pid);

	if (!op || !pid)
		return;
	op->key = key;
	op->start_ns = now;
	op->last_ns = 0;
	op->pid = pid;
}

/* The current task's operation key ends (its bios are all submitted). */
static __always_inline void il_sub_end(__u64 key)
{
	__u32 pid = (__u32)bpf_get_current_pid_tgid();
	struct il_sub_op *op = il_sub_slot(pid);

	if (op && op->pid == pid && op->key == key)
		op->pid = 0;
}

/* Thread pid's submission in progress (pid: the current task's), NULL none. */
static __always_inline struct il_sub_op *il_sub_of(__u32 pid)
{
	struct il_sub_op *op = il_sub_slot(pid);

	return op && pid && op->pid == pid ? op : NULL;
}

/* The current task's submission in progress, NULL none. */
static __always_inline struct il_sub_op *il_sub_current(void)
{
	return il_sub_of((__u32)bpf_get_current_pid_tgid());
}

/* A block event (Q, G, merge, insert, issue) of the current task at now (0: the clock is read
 * here, when the task has a submission in progress): the next bio of that submission starts
 * after it. */
static __always_inline void il_sub_touch(__u64 now)
{
	struct il_sub_op *op = il_sub_current();

	if (op)
		op->last_ns = now ?: bpf_ktime_get_ns();
}

/* Where a bio of operation key starts when op (il_sub_current()) is that operation: the later
 * of its start and the task's last block event; 0 when op is another operation or none. */
static __always_inline __u64 il_sub_start(const struct il_sub_op *op, __u64 key)
{
	if (!op || !key || op->key != key)
		return 0;
	return op->last_ns > op->start_ns ? op->last_ns : op->start_ns;
}

/* The submitter of bio into b (and b->submit_ns when a start is known) when block_bio_queue
 * runs and submit_bio did not already say: the direct I/O's record, else the waiter of a
 * synchronous direct I/O, else the current task (the bio's submitter unless a worker queues
 * it: blk-throttle's dispatch, dm's deferred bios). With tracepoints only, a bio the current
 * task queues during its own direct I/O or writeback of the bio's inode starts where
 * il_sub_start() says; a bio a worker queues for a direct I/O starts with that direct I/O; any
 * other has no start (before Q not measured: jbd2's journal writes, a sync's block device
 * writes, writeback bios a worker queues), unless a kernel worker queues a bio of a
 * non-root cgroup (cg_level > 0: struct cgroup.level of the bio's cgroup) for an inode whose
 * writeback another task began (blk_wb_sub): that task's, held since. s: the bio as read
 * (il_bio_seen_read()); op: il_sub_current(), looked up once by the caller. */
static __always_inline void il_bio_who(struct il_bio_seen *s, struct il_bio_info *b,
				       struct il_sub_op *op, int cg_level)
{
	struct iomap_dio *dio = s->dio;
	__u64 id = s->pid_tgid, key;

	if (dio && bpf_core_type_exists(struct iomap_dio)) {
		struct kiocb *iocb = BPF_CORE_READ(dio, iocb);
		struct il_sub_who *d;
		struct task_struct *w;

		key = (__u64)iocb;
		d = bpf_map_lookup_elem(&blk_dio_start, &key);
		if (d) {
			if (!b->submit_ns)
				b->submit_ns = il_sub_start(op, key) ?: d->ns;
			b->tgid = d->tgid;
			b->pid = d->pid;
			__builtin_memcpy(b->comm, d->comm, sizeof(b->comm));
			return;
		}
		/* is_sync_kiocb(): no ki_complete; the submitter waits in iomap_dio_rw() */
		w = BPF_CORE_READ(iocb, ki_complete) ? NULL : BPF_CORE_READ(dio, submit.waiter);
		if (w) {
			b->tgid = BPF_CORE_READ(w, tgid);
			b->pid = BPF_CORE_READ(w, pid);
			BPF_CORE_READ_STR_INTO(&b->comm, w, comm);
			return;
		}
	}
	/* the page cache's inode (a direct I/O's bio here has no record: its pages' own) */
	key = il_opf_op(b->opf) == IL_OP_WRITE && ((!b->submit_ns && op) || cg_level > 0) ?
		      (__u64)(dio ? who_bio_inode(s->bio) : il_bio_seen_file(s)) : 0;
	if (!b->submit_ns && op && key)
		b->submit_ns = il_sub_start(op, key);
	/* a kernel worker queues a write of an inode whose writeback it did not begin, for a
	 * cgroup other than the root (jbd2 and the flushers queue their own, or the root's):
	 * blk-throttle lets a bio go that it held since that writeback began */
	if (key && cg_level > 0 && (!op || op->key != key) && il_current_kthread()) {
		struct il_sub_who *w = bpf_map_lookup_elem(&blk_wb_sub, &key);

		if (w && w->pid != (__u32)id && s->now - w->ns < BLK_WB_HELD_NS) {
			if (!b->submit_ns)
				b->submit_ns = w->ns;
			b->tgid = w->tgid;
			b->pid = w->pid;
			__builtin_memcpy(b->comm, w->comm, sizeof(b->comm));
			return;
		}
	}
	b->tgid = id >> 32;
	b->pid = (__u32)id;
	if (s->task) /* plain loads through the pointer attribution took */
		__builtin_memcpy(b->comm, s->task->comm, sizeof(b->comm));
	else
		bpf_get_current_comm(b->comm, sizeof(b->comm));
}

/* The file of bio s into b (ino_dev, ino_gen, ino), its names into who_files: a direct I/O's
 * file (iocb->ki_filp), else the inode whose page cache holds the bio's first page (a block
 * device's own, for metadata and journals: who_files records its device). */
static __always_inline void il_bio_file(struct il_bio_seen *s, struct il_bio_info *b)
{
	il_bio_seen_entry(s);
	if (!s->inode)
		return;
	b->ino_dev = s->fk.dev;
	b->ino_gen = s->fk.gen;
	b->ino = s->fk.ino;
}

/* Count one event of a disk (merges, splits, requeues of struct blk_disk_stats)
 * in blk_disks (per CPU: a plain add). */
#define IL_DISK_COUNT(dev, field)                                                              \
	do {                                                                                   \
		__u32 dev_ = (dev);                                                            \
		struct blk_disk_stats *d_ = blk_disk_get(dev_);                                 \
		if (d_)                                                                        \
			d_->field += 1;                                                        \
	} while (0)

/* submit_bio (fentry/kprobe): the submission starts, in the submitter's context. */
static __always_inline void blk_submit(struct bio *bio)
{
	__u64 key = (__u64)bio, id = bpf_get_current_pid_tgid();
	struct il_bio_info n = {};

	if (!blk_cfg.bios)
		return;
	n.submit_ns = bpf_ktime_get_ns();
	n.tgid = id >> 32;
	n.pid = (__u32)id;
	bpf_get_current_comm(n.comm, sizeof(n.comm));
	blk_bio_slots_set(key, &key, &n, n.submit_ns);
}

/* iomap:iomap_dio_rw_begin / iomap_dio_complete: a direct I/O starts and ends. Its record by
 * kiocb names the submitter of a bio a worker queues (blk-throttle's dispatch); the task's
 * record (blk_sub_task) times the bios the task queues itself. An asynchronous direct I/O
 * completes elsewhere: its task's record stays until the task's next operation replaces it,
 * and is taken only by bios of the same kiocb. */
/* The current task begins operation key (a struct kiocb * or struct inode *) now: who and
 * when into map (blk_dio_start, blk_wb_sub), and its submission in progress (il_sub_begin()). */
static __always_inline void blk_sub_began(void *map, __u64 key)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct il_sub_who w = { .ns = bpf_ktime_get_ns(), .tgid = id >> 32, .pid = (__u32)id };

	bpf_get_current_comm(w.comm, sizeof(w.comm));
	bpf_map_update_elem(map, &key, &w, BPF_ANY);
	il_sub_begin(key, w.ns);
}

static __always_inline void blk_dio_begin(struct kiocb *iocb)
{
	if (blk_cfg.bios)
		blk_sub_began(&blk_dio_start, (__u64)iocb);
}

static __always_inline void blk_dio_end(struct kiocb *iocb)
{
	__u64 key = (__u64)iocb;

	if (!blk_cfg.bios)
		return;
	bpf_map_delete_elem(&blk_dio_start, &key);
	il_sub_end(key);
}

/* writeback_single_inode_start / ext4_writepages: the current task starts writing back
 * inode's pages (ext4_writepages, nested in the former, restarts it later). */
static __always_inline void blk_wb_start(struct inode *inode)
{
	if (blk_cfg.bios)
		blk_sub_began(&blk_wb_sub, (__u64)inode);
}

/* writeback_single_inode / ext4_writepages_result: that writeback ends. */
static __always_inline void blk_wb_end(struct inode *inode)
{
	if (blk_cfg.bios)
		il_sub_end((__u64)inode);
}

/* The record of bio, made (zeroed) at now (as il_bio_new()) when absent; NULL when the map
 * refuses. */
static __always_inline struct il_bio_info *il_bio_get(struct bio *bio, __u64 now)
{
	__u64 key = (__u64)bio;
	struct il_bio_slot *s;
	struct il_bio_info *b = il_bio_find(key, &s);

	return b ?: il_bio_new(key, s, &il_zero_bio, now);
}

/* The disk bio was sent to: bio.bi_disk before 5.12, bio.bi_bdev->bd_disk since (see
 * who_bio_dev()). */
static __always_inline struct gendisk *il_bio_disk(struct bio *bio)
{
	struct bio___o *old = (void *)bio;

	if (bpf_core_field_exists(old->bi_disk))
		return BPF_CORE_READ(old, bi_disk);
	return BPF_CORE_READ(bio, bi_bdev, bd_disk);
}

/* Per CPU, the last disk a bio was asked about (bio->bi_bdev, bio->bi_disk before 5.12) and
 * whether it is request-based: a disk's bios come in runs, so one read answers most of them
 * instead of four (block_bio_queue runs for every bio of every disk). */
struct blk_rq_based_last {
	__u64 key;      /* struct block_device * (struct gendisk * before 5.12); 0: none yet */
	__u64 rq_based; /* gendisk.queue->mq_ops set */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct blk_rq_based_last);
} blk_rq_based_last SEC(".maps");

/* Is bio's disk request-based (blk-mq: gendisk.queue->mq_ops)? btf: bio is a BTF pointer (a
 * tp_btf program's argument), read with plain loads, no helper call; else with
 * bpf_probe_read_kernel(). A block_device freed and another allocated at its address between
 * two bios on one CPU would get the old answer. */
static __always_inline bool il_bio_rq_based(struct bio *bio, bool btf)
{
	struct bio___o *old = (void *)bio;
	struct blk_rq_based_last *last;
	struct block_device *bdev = NULL;
	struct gendisk *disk = NULL;
	__u32 zero = 0;
	__u64 key;
	bool rq;

	if (bpf_core_field_exists(old->bi_disk)) {
		disk = IL_BTF_READ(btf, old, bi_disk);
		key = (__u64)disk;
	} else {
		bdev = IL_BTF_READ(btf, bio, bi_bdev);
		key = (__u64)bdev;
	}
	last = bpf_map_lookup_elem(&blk_rq_based_last, &zero);
	if (last && key && last->key == key)
		return last->rq_based;
	if (!bpf_core_field_exists(old->bi_disk))
		disk = IL_BTF_READ(btf, bdev, bd_disk);
	rq = (btf ? disk->queue->mq_ops : BPF_CORE_READ(disk, queue, mq_ops)) != NULL;
	if (last) {
		last->key = key;
		last->rq_based = rq;
	}
	return rq;
}

/* block_bio_queue (Q), the block layer's part: bio s (il_bio_seen_read()) is followed. */
static __always_inline void blk_bio_queue_seen(struct il_bio_seen *s)
{
	struct block_device *bdev = s->bdev;
	struct bio *bio = s->bio;
	__u64 now = s->now;
	struct il_sub_op *op;
	struct il_bio_info *b;
	struct cgroup *cg;

	b = il_bio_get(bio, now);
	if (!b)
		return;
	if (b->queue_ns) /* an earlier bio at this address whose end was not seen */
		__builtin_memset(b, 0, sizeof(*b));
	b->queue_ns = now;
	b->sector = IL_BTF_READ(s->btf, bio, bi_iter.bi_sector);
	b->bytes = s->bytes;
	b->opf = s->opf;
	/* the block device it was sent to (5.12 and later: il_bio_part_dev()) */
	b->part = bdev ? IL_BTF_READ(s->btf, bdev, bd_dev) : 0;
	cg = il_bio_cgroup_of_btf(bio, s->btf);
	b->cgroup = il_cgroup_kn_id(cg, s->btf);
	b->in_cg = il_cg_cfg.id && il_cg_under(cg);
	op = il_sub_of((__u32)s->pid_tgid); /* one lookup for il_bio_who() and the touch below */
	if (!b->tgid) /* struct cgroup.level: 0 for a hierarchy's root (in every supported kernel) */
		il_bio_who(s, b, op, cg ? (s->btf ? cg->level : BPF_CORE_READ(cg, level)) : 0);
	/* queued by another task than its submitter: held and let go by a worker */
	b->held = b->pid && b->pid != (__u32)s->pid_tgid;
	if (op) /* il_sub_touch() */
		op->last_ns = b->queue_ns;
	if (!b->cgroup && b->tgid == s->pid_tgid >> 32) { /* no blk-cgroup: the submitter's,
							  * when it is the current task */
		b->cgroup = bpf_get_current_cgroup_id();
		b->in_cg = il_cg_cfg.id && il_cg_wanted();
	}
	if (blk_cfg.files && !b->ino)
		il_bio_file(s, b);
	if (b->tgid && b->tgid != s->pid_tgid >> 32) { /* for attribution (who_bio_seen()) */
		s->sub_tgid = b->tgid;
		__builtin_memcpy(s->sub_comm, b->comm, sizeof(s->sub_comm));
	}
}

/* block_bio_queue (Q): one program for the block layer and, where attribution's part runs
 * here (who_cfg.bio_in_blk), attribution, reading the bio once (struct il_bio_seen). With
 * blk_cfg.bio_only, a bio of a request-based disk (gendisk.queue->mq_ops set) is not
 * followed. btf: bio is a tp_btf program's BTF pointer. */
static __always_inline void blk_bio_queue(struct bio *bio, bool btf)
{
	bool follow;
	struct il_bio_seen s = {};

	if (btf) /* its pointers walked in both parts */
		bio = IL_UNTRUSTED(bio, bio);
	follow = blk_cfg.bios && !(blk_cfg.bio_only && il_bio_rq_based(bio, btf));

	if (!follow && !who_cfg.bio_in_blk)
		return;
	il_bio_seen_read(&s, bio, btf);
	if (follow)
		blk_bio_queue_seen(&s);
	if (who_cfg.bio_in_blk)
		who_bio_seen(&s);
}

/* block_getrq (G): a request was allocated for bio. */
static __always_inline void blk_getrq(struct bio *bio)
{
	struct il_bio_slot *s;
	struct il_bio_info *b;

	if (!blk_cfg.bios || blk_cfg.bio_only)
		return;
	b = il_bio_find((__u64)bio, &s);
	if (b && !b->getrq_ns)
		b->getrq_ns = bpf_ktime_get_ns();
	il_sub_touch(b ? b->getrq_ns : 0);
}

/* block_bio_backmerge/frontmerge: bio joins an existing request. A back-merged bio is never
 * its request's first: forgotten. A front-merged one becomes it (found when linking). */
static __always_inline void blk_bio_merge(struct bio *bio, bool back)
{
	__u64 key = (__u64)bio;
	struct il_bio_slot *s;

	if (!blk_cfg.bios || blk_cfg.bio_only)
		return;
	IL_DISK_COUNT(who_bio_dev(bio), merges);
	il_sub_touch(0);
	if (back) {
		struct il_bio_info *b = il_bio_find(key, &s);

		il_bio_free(key, s, b);
	}
}

/* block_split: split, the front part of its parent (split->bi_private, bio_chain()), goes on
 * as a bio of its own with its parent's times; the parent keeps the rest. */
static __always_inline void blk_split(struct bio *split)
{
	struct bio *parent = BPF_CORE_READ(split, bi_private);
	__u64 pk = (__u64)parent, sk = (__u64)split;
	struct il_bio_info *p, n;
	struct il_bio_slot *s;

	if (!blk_cfg.bios)
		return;
	IL_DISK_COUNT(who_bio_dev(split), splits);
	p = il_bio_find(pk, &s);
	if (!p)
		return;
	n = *p;
	n.getrq_ns = 0;
	n.sector = BPF_CORE_READ(split, bi_iter.bi_sector);
	n.bytes = BPF_CORE_READ(split, bi_iter.bi_size);
	p->sector = BPF_CORE_READ(parent, bi_iter.bi_sector);
	p->bytes = BPF_CORE_READ(parent, bi_iter.bi_size);
	blk_bio_slots_set(sk, &sk, &n, 0);
}

/* block_bio_remap: bio was sent to device dev (a partition; a dm device whose clone this is).
 * With blk_cfg.bio_only, only a bio already followed is marked. */
static __always_inline void blk_bio_remap(struct bio *bio, __u32 dev)
{
	struct il_bio_slot *s;
	struct il_bio_info *b;

	if (!blk_cfg.bios)
		return;
	b = blk_cfg.bio_only ? il_bio_find((__u64)bio, &s) : il_bio_get(bio, 0);
	if (b && !b->from)
		b->from = dev;
}

/* The dev of a "MAJ:MIN" name (a backing_dev_info's dev_name), 0 when it is not one. */
static __always_inline __u32 il_parse_dev_name(const char *name)
{
	char buf[16] = {};
	__u32 ma = 0, mi = 0;
	bool minor = false;

	bpf_probe_read_kernel_str(buf, sizeof(buf), name);
	for (int i = 0; i < (int)sizeof(buf); i++) {
		char c = buf[i];

		if (!c)
			break;
		if (c == ':' && !minor) {
			minor = true;
			continue;
		}
		if (c < '0' || c > '9')
			return 0;
		if (minor)
			mi = mi * 10 + (c - '0');
		else
			ma = ma * 10 + (c - '0');
	}
	return minor ? ma << 20 | mi : 0;
}

/* wbt:wbt_step(bdi, ...): writeback throttling stepped its depth on the bdi's disk (its
 * dev_name is "MAJ:MIN"; the field exists since 5.x, else nothing is counted). */
static __always_inline void blk_wbt_step(struct backing_dev_info *bdi)
{
	__u32 dev;

	if (!blk_cfg.bios || !bpf_core_field_exists(bdi->dev_name))
		return;
	dev = il_parse_dev_name((const char *)__builtin_preserve_access_index(&bdi->dev_name));
	if (dev)
		IL_DISK_COUNT(dev, wbt_steps);
}

/* iocost:iocost_iocg_activate(iocg, ...): a cgroup became active under iocost on a disk:
 * iocg->ioc->rqos.disk (6.3 and later), else its queue's disk (5.13 and later), else not
 * counted. */
struct rq_qos___q {
	struct request_queue *q;
} __attribute__((preserve_access_index));

static __always_inline void blk_iocost(struct ioc_gq *iocg)
{
	struct request_queue *q = NULL;
	struct rq_qos *rqos;
	struct gendisk *disk;
	struct ioc *ioc;

	if (!blk_cfg.bios || !bpf_core_type_exists(struct ioc_gq))
		return;
	ioc = BPF_CORE_READ(iocg, ioc);
	rqos = (struct rq_qos *)__builtin_preserve_access_index(&ioc->rqos);
	if (bpf_core_field_exists(rqos->disk))
		disk = BPF_CORE_READ(rqos, disk);
	else if (bpf_core_field_exists(q->disk)) /* request_queue.disk: 5.13 and later */
		disk = BPF_CORE_READ((struct rq_qos___q *)rqos, q, disk);
	else
		return;
	IL_DISK_COUNT(il_disk_dev(disk), iocost_activations);
}

/* Link request rq to its first bio (at insert or issue; once): the bio that got G among the
 * first IL_LINK_WALK of rq->bio's chain (a front merge puts another bio first), else the first
 * bio with a record. The bios looked at are in the request now: their records go. The record
 * goes to blk_rq_slot_bio when rq holds its slot s, else to blk_rq_bio. btf: rq is a BTF
 * pointer (a tp_btf program's), its fields and its bios' read with plain loads. */
static __always_inline void blk_link_bios(struct request *rq, struct il_rq_slot *s, bool btf)
{
	__u64 key = (__u64)rq;
	struct blk_rq_bio n = {}, *l = NULL, *h;
	struct bio *bio;
	bool found = false;

	if (s && *(volatile __u64 *)&s->owner == key) {
		__u32 i = blk_rq_slots_idx(key);

		l = bpf_map_lookup_elem(&blk_rq_slot_bio, &i);
		if (l && l->linked)
			return;
	}
	if (!l && bpf_map_lookup_elem(&blk_rq_bio, &key))
		return;
	if (btf) /* its bios walked */
		rq = IL_UNTRUSTED(rq, request);
	bio = IL_BTF_READ(btf, rq, bio);
	for (int i = 0; i < IL_LINK_WALK && bio; i++) {
		__u64 bk = (__u64)bio;
		struct il_bio_slot *bs;
		struct il_bio_info *b = il_bio_find(bk, &bs);

		if (b) {
			if (!found || (b->getrq_ns && !n.b.getrq_ns))
				n.b = *b;
			found = true;
			il_bio_free(bk, bs, b);
		}
		bio = IL_BTF_READ(btf, bio, bi_next);
	}
	n.sector = IL_BTF_READ(btf, rq, __sector);
	n.bytes = IL_BTF_READ(btf, rq, __data_len);
	if (l) {
		/* linked before it held its slot (no times then): its record moves over */
		h = found ? NULL : bpf_map_lookup_elem(&blk_rq_bio, &key);
		if (h) {
			n = *h;
			bpf_map_delete_elem(&blk_rq_bio, &key);
		}
		n.linked = 1;
		*l = n;
		return;
	}
	if (bpf_map_update_elem(&blk_rq_bio, &key, &n, BPF_ANY))
		il_drop(IL_DROP_MAP_FULL);
}

/* blk_link_bios() when requests are linked to their bios (the check apart, so that
 * nothing of it, not even its zeroed record, costs the other modes). s: rq's slot; now: the
 * insert's or issue's bpf_ktime_get_ns(); btf: as for blk_link_bios(). */
static __always_inline void blk_link(struct request *rq, struct il_rq_slot *s, __u64 now, bool btf)
{
	if (blk_cfg.bios && !blk_cfg.bio_only) {
		blk_link_bios(rq, s, btf);
		il_sub_touch(now);
	}
}

/* block_rq_requeue: rq goes back to be issued again (its issue time restarts at the next D). */
static __always_inline void blk_requeue(struct request *rq)
{
	__u64 key = (__u64)rq;
	struct il_rq_slot *s;
	struct blk_rq_bio *l;

	if (!blk_cfg.bios || blk_cfg.bio_only)
		return;
	IL_DISK_COUNT(il_disk_dev(il_rq_disk(rq)), requeues);
	il_rq_times_find(key, &s);
	l = blk_rq_bio_find(key, s);
	if (l)
		l->requeued = 1;
}

/* block_rq_remap: request-based dm sent rq on from device dev. */
static __always_inline void blk_rq_remap(struct request *rq, __u32 dev)
{
	__u64 key = (__u64)rq;
	struct il_rq_slot *s;
	struct blk_rq_bio *l;

	if (!blk_cfg.bios)
		return;
	il_rq_times_find(key, &s);
	l = blk_rq_bio_find(key, s);
	if (l && !l->b.from)
		l->b.from = dev;
}

/* block_rq_merge: rq was merged into another request and is freed; its bios go with it. */
static __always_inline void blk_rq_merge(struct request *rq)
{
	__u64 key = (__u64)rq;

	if (!blk_cfg.bios)
		return;
	IL_DISK_COUNT(il_disk_dev(il_rq_disk(rq)), merges);
	blk_rq_forget_all(key);
}

/* Copy a bio's record into io. */
static __always_inline void il_io_from_bio(struct blk_io *io, const struct il_bio_info *b)
{
	io->ts[BLK_MK_SUBMIT] = b->submit_ns;
	io->ts[BLK_MK_Q] = b->queue_ns;
	io->ts[BLK_MK_G] = b->getrq_ns;
	io->cgroup = b->cgroup;
	io->ino = b->ino;
	io->ino_dev = b->ino_dev;
	io->ino_gen = b->ino_gen;
	io->tgid = b->tgid;
	io->pid = b->pid;
	io->part = b->part;
	io->from = b->from;
	io->held = b->held;
	io->in_cg = b->in_cg;
	__builtin_memcpy(io->comm, b->comm, sizeof(io->comm));
}

/* block_bio_complete (ctx: its raw arguments, (q, bio) on every kernel): a bio of a bio-based
 * device (no mq_ops: dm, md) completes. Returns 0 with io filled, or -1 when the bio is not
 * one to measure (a request-based device's bio ended without a request, or no Q was seen). */
static __always_inline int blk_bio_done(unsigned long long *ctx, struct blk_io *io)
{
	struct request_queue *q = (struct request_queue *)ctx[0];
	struct bio *bio = (struct bio *)ctx[1];
	__u64 key = (__u64)bio;
	struct il_bio_slot *s;
	struct il_bio_info *b;
	int err = -1;

	if (!blk_cfg.bios)
		return -1;
	b = il_bio_find(key, &s);
	if (!b)
		return -1;
	if (!BPF_CORE_READ(q, mq_ops) && b->queue_ns) {
		il_io_from_bio(io, b);
		io->ts[BLK_MK_C] = bpf_ktime_get_ns();
		io->dev = who_bio_dev(bio);
		io->sector = b->sector;
		io->bytes = b->bytes;
		io->op = il_opf_op(b->opf);
		io->flags = il_opf_flags(b->opf);
		io->bios = 1;
		io->bio_based = 1;
		io->error = BPF_CORE_READ(bio, bi_status) != 0;
		err = 0;
	}
	il_bio_free(key, s, b);
	return err;
}

/* il_slot_idx() as a global function, which the verifier checks once per program instead of
 * on every path that reaches it (iolayer's block_rq_complete took 16,500 instruction visits,
 * two thirds of them in the slot arithmetic of its six phases). The BPF-to-BPF call's return
 * pays for the SRSO "safe RET" mitigation where the CPU has it: iolayer's per-CPU phase totals
 * compute the slot inline instead (block_rq_complete 48 ns a request less on this AMD EPYC,
 * for 4,600 more instructions verified, block_bio_complete 4,200: start-up +2-6 ms);
 * biolatency --breakdown's shared totals call it. */
__noinline __u32 il_phase_slot(__u64 ns)
{
	return il_slot_idx(ns);
}

/* *p += v: a plain add into a per-CPU map's value (percpu), else an atomic one. */
#define IL_ADD(percpu, p, v)                                                                   \
	do {                                                                                   \
		if (percpu)                                                                    \
			*(p) += (v);                                                           \
		else                                                                           \
			__sync_fetch_and_add((p), (v));                                        \
	} while (0)

/* Add io to the phase totals p (struct blk_phases); percpu: p is in a per-CPU map's value
 * (blk_disks), else shared between CPUs (biolatency's breakdown). In blk_disks the I2D and
 * D2C phases are not added here: they are the disk's queue and device totals, which
 * blk_disk_complete() adds beside them for every request, and user space copies them over
 * (il_blk_percpu_fold()): two phases' histogram updates fewer a request. */
static __always_inline void blk_phases_add(struct blk_phases *p, const struct blk_io *io, bool percpu)
{
	__u64 life = 0, t;

	IL_ADD(percpu, &p->ios, 1);
	IL_ADD(percpu, &p->bios, io->bios);
	IL_ADD(percpu, &p->bytes, io->bytes);
	if (io->error)
		IL_ADD(percpu, &p->errors, 1);
	blk_phase_ns(io, BLK_PH_BEFORE_Q, &t);
	life += t;
	if (blk_phase_ns(io, BLK_PH_Q2C, &t)) {
		life += t;
	} else {
		blk_phase_ns(io, BLK_PH_I2D, &t);
		life += t;
		blk_phase_ns(io, BLK_PH_D2C, &t);
		life += t;
	}
	IL_ADD(percpu, &p->life_ns, life);
	for (int i = 0; i < BLK_PH__MAX; i++) {
		struct blk_phase_stat *s = &p->ph[i];
		__u64 ns;
		__u32 slot;

		if ((percpu && (i == BLK_PH_I2D || i == BLK_PH_D2C)) || !blk_phase_ns(io, i, &ns))
			continue;
		IL_ADD(percpu, &s->count, 1);
		IL_ADD(percpu, &s->ns, ns);
		if (ns > s->max_ns) /* shared: racy between CPUs, at worst a slightly lower max */
			s->max_ns = ns;
		slot = percpu ? il_slot_idx(ns) : il_phase_slot(ns);
		IL_ADD(percpu, &s->slots[slot & (IL_HIST_SLOTS - 1)], 1);
	}
}

/* The request argument of block_rq_insert/issue from the raw argument array. */
static __always_inline struct request *blk_rq_arg(unsigned long long *ctx)
{
	return (struct request *)il_ctx_arg01(ctx, blk_cfg.rq_two_args);
}

/* block_rq_insert: the request enters the OS queue (I/O scheduler or software queue). */
static __always_inline void blk_insert(struct request *rq, bool btf)
{
	struct il_rq_times t = { .insert_ns = bpf_ktime_get_ns() }, *old;
	struct il_rq_slot *s;
	__u64 key = (__u64)rq;

	/* Requeued after a part completed (a short read the loop driver retries): the request
	 * keeps the times of its first insert and issue, to be measured whole. */
	old = il_rq_times_find(key, &s);
	if (old && old->parts)
		return;
	if (old)
		*old = t;
	else
		blk_rq_times_new(key, s, &t, t.insert_ns);
	blk_link(rq, s, t.insert_ns, btf);
}

/* block_rq_issue: the request goes to the driver. An insert time already recorded is kept;
 * requests issued without an insert (no I/O scheduler, direct issue) have none. A request
 * issued again (requeued) is timed from its last issue, unless a part of it completed
 * already: then from its first. */
static __always_inline void blk_issue(struct request *rq, bool btf)
{
	__u64 key = (__u64)rq, now = bpf_ktime_get_ns();
	struct il_rq_times *t, n = { .issue_ns = now };
	struct il_rq_slot *s;

	t = il_rq_times_find(key, &s);
	if (t) {
		if (!t->parts)
			t->issue_ns = now;
	} else {
		blk_rq_times_new(key, s, &n, now);
	}
	blk_link(rq, s, now, btf);
}

/* block_rq_complete (ctx: its raw arguments), the request's times only: 0 with *r filled
 * (insert_ns and issue_ns as recorded, error: any part completed with an error) and *now the
 * completion's bpf_ktime_get_ns(); 1 when the request is not finished yet; -1 when there is
 * nothing to measure (drops counted). The times are forgotten once the request is finished.
 * A driver may complete a request in parts (blk_update_request() with fewer bytes than are
 * left; the loop driver does on a short read, SCSI on a partial transfer): the request is
 * finished when nr_bytes covers what is left, request.__data_len at the tracepoint (the
 * kernel's own test in blk_update_request(): nr_bytes >= blk_rq_bytes(rq)). Until then the
 * request stays in flight, timed from its first issue; an error in any part makes it a
 * request completed with an error (blk_errors). Reads request.__data_len only: a plain
 * load from a tp_btf program (btf: ctx[0] is a trusted struct request *), else
 * bpf_probe_read_kernel(). With bio tracking, the request's first bio's record is forgotten
 * with its times and, when it is measured and io is not NULL, copied into io first (its
 * slot's twin in blk_rq_slot_bio must be read before the slot is released): *linked says so. */
static __always_inline int blk_end(unsigned long long *ctx, bool btf, struct il_rq_times *r, __u64 *now,
				   struct blk_io *io, bool *linked)
{
	struct request *rq = (struct request *)ctx[0];
	__u32 error = (__u32)ctx[1], nr_bytes = (__u32)ctx[2], zero = 0;
	__u32 left = IL_BTF_READ(btf, rq, __data_len);
	__u64 key = (__u64)rq, *errors;
	struct il_rq_slot *s;
	struct il_rq_times *t = il_rq_times_find(key, &s);
	int err = -1;

	*now = bpf_ktime_get_ns();
	if (nr_bytes < left) {
		if (t) {
			t->parts++;
			if (error)
				t->error = 1;
		}
		return 1;
	}
	if (!t || !t->issue_ns) {
		/* No start and no bytes left (request.__data_len 0) is the flush machinery ending
		 * a request a second time after its data phase (block/blk-flush.c,
		 * blk_flush_complete_seq(); its data and its flushes were measured as requests of
		 * their own): not a lost event. */
		if (left)
			il_drop(IL_DROP_MISSED_START);
	} else if (*now < t->issue_ns || (t->insert_ns && t->issue_ns < t->insert_ns)) {
		il_drop(IL_DROP_BACKWARDS);
	} else {
		r->insert_ns = t->insert_ns;
		r->issue_ns = t->issue_ns;
		r->error = error || t->error;
		err = 0;
		errors = r->error ? bpf_map_lookup_elem(&blk_errors, &zero) : NULL;
		if (errors)
			*errors += 1; /* per-CPU: no atomics needed */
	}
	if (blk_cfg.bios && !blk_cfg.bio_only) {
		struct blk_rq_bio *l = blk_rq_bio_find(key, s);

		if (l && !err && io) {
			il_io_from_bio(io, &l->b);
			io->sector = l->sector;
			io->bytes = l->bytes;
			io->requeued = l->requeued;
			*linked = true;
		}
		blk_rq_bio_free(key, s, l);
	}
	il_rq_times_free(key, s, t);
	return err;
}

/* block_rq_complete (ctx: its raw arguments): the request's life, forgotten from the maps
 * once the request is finished. Returns 0 with io filled (C, D, I when seen and, with bio
 * tracking, everything its first bio brought: submit, Q, G, submitter, cgroup, file), or -1
 * when there is nothing to measure (drops counted) or the request is not finished yet (see
 * blk_end(); btf: called from a tp_btf program). Reads request.cmd_flags, __sector, bio
 * and the bios' bi_next, and the disk (il_rq_disk()). */
static __always_inline int blk_done(unsigned long long *ctx, bool btf, struct blk_io *io)
{
	struct request *rq = (struct request *)ctx[0];
	struct il_rq_times t;
	bool linked = false;
	__u64 now;
	int err = blk_end(ctx, btf, &t, &now, io, &linked);

	if (err > 0)
		return -1;
	if (btf) /* its pointers walked */
		rq = IL_UNTRUSTED(rq, request);
	if (!err) {
		__u32 opf = IL_BTF_READ(btf, rq, cmd_flags);
		struct bio *bio = IL_BTF_READ(btf, rq, bio);

		io->ts[BLK_MK_I] = t.insert_ns;
		io->ts[BLK_MK_D] = t.issue_ns;
		io->ts[BLK_MK_C] = now;
		io->dev = il_disk_dev_btf(il_rq_disk_btf(rq, btf), btf);
		io->op = il_opf_op(opf);
		io->flags = il_opf_flags(opf);
		if (!linked) { /* else its first bio's extent, from blk_end() */
			io->sector = IL_BTF_READ(btf, rq, __sector);
			io->bytes = (__u32)ctx[2];
		}
		io->error = t.error;
		for (int i = 0; i < BLK_BIO_COUNT_MAX && bio; i++) {
			io->bios++;
			bio = IL_BTF_READ(btf, bio, bi_next);
		}
	}
	return err;
}

/* block_rq_complete, the insert -> issue and issue -> complete times only: 0 with *queue_ns
 * (0 when no insert was seen) and *device_ns filled, or -1 (see blk_done()). */
static __always_inline int blk_complete(unsigned long long *ctx, bool btf, __u64 *queue_ns, __u64 *device_ns)
{
	struct il_rq_times t;
	__u64 now;

	if (blk_end(ctx, btf, &t, &now, NULL, NULL))
		return -1;
	*queue_ns = t.insert_ns ? t.issue_ns - t.insert_ns : 0;
	*device_ns = now - t.issue_ns;
	return 0;
}

/* Aggregate mode: io into its disk's phases (blk_disks) and its (disk, cgroup) totals. */
/* A finished I/O's time before Q, in the OS queue (Q2G + G2I + I2D) and at the device (D2C,
 * Q2C for a bio-based device's bio), ns; 0 for a phase not seen. */
struct blk_times {
	__u64 before_q, queue, device;
};

static __always_inline void blk_times(const struct blk_io *io, struct blk_times *t)
{
	__u64 ns;

	blk_phase_ns(io, BLK_PH_BEFORE_Q, &ns); /* ns: 0 where there is no such phase */
	t->before_q = ns;
	blk_phase_ns(io, BLK_PH_Q2G, &ns);
	t->queue = ns;
	blk_phase_ns(io, BLK_PH_G2I, &ns);
	t->queue += ns;
	blk_phase_ns(io, BLK_PH_I2D, &ns);
	t->queue += ns;
	blk_phase_ns(io, io->bio_based ? BLK_PH_Q2C : BLK_PH_D2C, &ns);
	t->device = ns;
}

/* The totals of key k in its slot of blk_pcg_slots, the slot taken when free; NULL when
 * another key holds it (k's are in blk_proc_cg then). A key whose first word is 0 (no disk
 * and no process) would read as a free slot: never in a slot. */
static __always_inline struct blk_proc *blk_pcg_slot_of(const struct blk_proc_cg_key *k)
{
	__u64 w = *(const __u64 *)k;
	__u32 i = blk_pcg_slot_idx(k->dev, k->tgid, k->cgroup);
	struct blk_pcg_slot *e = bpf_map_lookup_elem(&blk_pcg_slots, &i);
	volatile __u64 *ew;

	if (!e || !w)
		return NULL;
	ew = (volatile __u64 *)&e->k;
	if (!*ew) { /* free: the cgroup first, which a key's first word makes valid */
		*(volatile __u64 *)&e->k.cgroup = k->cgroup;
		*ew = w;
	}
	if (*ew != w || *(volatile __u64 *)&e->k.cgroup != k->cgroup)
		return NULL;
	return &e->v;
}

/* Count a finished I/O into its submitter's and cgroup's totals on its disk (its slot of
 * blk_pcg_slots, else blk_proc_cg). */
static __always_inline void blk_proc_account(const struct blk_io *io, const struct blk_times *t)
{
	struct blk_proc_cg_key pk = { .dev = io->dev, .tgid = io->tgid, .cgroup = io->cgroup };
	struct blk_proc *p = blk_pcg_slot_of(&pk);

	if (!p)
		p = il_lookup_or_init(&blk_proc_cg, &pk, &(struct blk_proc){});
	if (!p)
		return;
	__sync_fetch_and_add(&p->ios, 1);
	/* data moved only: a discard's (or write-zeroes') size is a range, not bytes (blkdiscard
	 * of 1 GiB, or ext4's discards when rm frees a file, read as a neighbour's gigabyte) */
	if (io->op == IL_OP_READ || io->op == IL_OP_WRITE)
		__sync_fetch_and_add(&p->bytes, io->bytes);
	if (io->op == IL_OP_WRITE)
		__sync_fetch_and_add(&p->write_bytes, io->bytes);
	__sync_fetch_and_add(&p->before_q_ns, t->before_q);
	__sync_fetch_and_add(&p->queue_ns, t->queue);
	__sync_fetch_and_add(&p->device_ns, t->device);
	if (io->held)
		__sync_fetch_and_add(&p->held, 1);
	/* last seen (racy between CPUs: at worst another recent completion's) */
	p->cgroup = io->cgroup;
	p->last_ns = io->ts[BLK_MK_C];
	__builtin_memcpy(p->comm, io->comm, sizeof(p->comm));
}

/* io into its disk's phase totals d (this CPU's copy), then, with bio tracking, into its
 * (disk, process, cgroup) totals. */
static __always_inline void blk_account(const struct blk_io *io, struct blk_disk_stats *d)
{
	struct blk_times t;

	if (d)
		blk_phases_add(&d->phases, io, true);
	if (!blk_cfg.bios)
		return;
	blk_times(io, &t);
	blk_proc_account(io, &t);
}

/* A request's counts and queue and device times (struct blk_disk_stats) into d, this CPU's
 * copy of its disk's totals (plain adds), and its phases (blk_account()); bytes: the
 * completion's nr_bytes. */
static __always_inline void blk_disk_add(struct blk_disk_stats *d, const struct blk_io *io,
					 __u32 bytes)
{
	__u64 queue = io->ts[BLK_MK_I] ? io->ts[BLK_MK_D] - io->ts[BLK_MK_I] : 0;
	__u64 device = io->ts[BLK_MK_C] - io->ts[BLK_MK_D];

	d->count += 1;
	if (io->op < IL_OP__MAX)
		d->ops[io->op] += 1;
	d->bytes += bytes;
	d->device_ns += device;
	if (device > d->device_max_ns)
		d->device_max_ns = device;
	d->device_slots[il_slot_idx(device)] += 1;
	if (io->ts[BLK_MK_I]) { /* as BLK_PH_I2D: every request seen inserted, 0 ns included */
		if (queue > d->queue_max_ns)
			d->queue_max_ns = queue;
		d->queued += 1;
		d->queue_ns += queue;
		d->queue_slots[il_slot_idx(queue)] += 1;
	}
	blk_account(io, d);
}

/* Aggregate-mode completion handler: count the request into its disk's totals, in its slot of
 * blk_disk_slots, else in blk_disks. Each has its own copy of the accounting (blk_disk_add()
 * inlined twice): a pointer that may be into either map, joined after the lookup, made the
 * verifier walk every path after it once per map (block_rq_complete: 107 ms to verify where
 * it took 8.5). ctx is block_rq_complete's argument array; btf: from the tp_btf program. 0
 * with io filled (blk_done()) when the request was counted, else -1. */
static __always_inline int blk_disk_complete(unsigned long long *ctx, bool btf, struct blk_io *io)
{
	struct blk_disk_stats *d;
	struct blk_disk_slot *sl;

	if (blk_done(ctx, btf, io))
		return -1;
	sl = blk_disk_slot(io->dev);
	if (sl) {
		blk_disk_add(&sl->s, io, (__u32)ctx[2]);
		return 0;
	}
	d = il_lookup_or_init(&blk_disks, &io->dev, &il_zero_disk);
	if (d)
		blk_disk_add(d, io, (__u32)ctx[2]);
	else
		blk_account(io, NULL);
	return 0;
}

/* Aggregate-mode handler of a bio-based device's bio (BLK_BIO_PROGS(blk_disk_bio_done)). */
static __always_inline int blk_disk_bio_done(struct blk_io *io)
{
	struct blk_disk_slot *sl = blk_disk_slot(io->dev);

	/* (one path for each map, as in blk_disk_complete()) */
	if (sl)
		blk_account(io, &sl->s);
	else
		blk_account(io, il_lookup_or_init(&blk_disks, &io->dev, &il_zero_disk));
	return 0;
}

/* Forget a request without measuring it (filtered out). */
static __always_inline void blk_forget(struct request *rq)
{
	blk_rq_forget_all((__u64)rq);
}

/*
 * The layer's programs, tp_btf and raw_tp twins, named as user/lib/block.c's blk_plan()
 * expects: blk_rq_{insert,issue,complete}_{btf,raw}. The including
 * object passes the body of its completion handler, a function (unsigned long long *ctx,
 * bool btf): btf is true in the tp_btf program, whose ctx[0] is a trusted struct request *
 * that can be read with plain loads.
 */
#define BLK_PROGS(on_complete)                                                            \
	SEC("tp_btf/block_rq_insert")                                                          \
	int BPF_PROG(blk_rq_insert_btf) { blk_insert(blk_rq_arg(ctx), true); return 0; }    \
	SEC("tp_btf/block_rq_issue")                                                           \
	int BPF_PROG(blk_rq_issue_btf) { blk_issue(blk_rq_arg(ctx), true); return 0; }    \
	SEC("tp_btf/block_rq_complete")                                                        \
	int BPF_PROG(blk_rq_complete_btf) { return on_complete(ctx, true); }                       \
	SEC("raw_tp/block_rq_insert")                                                          \
	int BPF_PROG(blk_rq_insert_raw) { blk_insert(blk_rq_arg(ctx), false); return 0; }    \
	SEC("raw_tp/block_rq_issue")                                                           \
	int BPF_PROG(blk_rq_issue_raw) { blk_issue(blk_rq_arg(ctx), false); return 0; }    \
	SEC("raw_tp/block_rq_complete")                                                        \
	int BPF_PROG(blk_rq_complete_raw) { return on_complete(ctx, false); }

/* Argument i of a tracepoint that took a leading request_queue before 5.11 (bit of
 * blk_cfg.tp_old): ctx[i + 1] then, else ctx[i]. As il_ctx_arg01() (common.bpf.h), for any
 * two indexes: two loads at constant offsets behind two different one-instruction asm
 * barriers (the branch not taken is pruned, blk_cfg being read-only). */
#define IL_CTX_PICK(ctx, cond, i_then, i_else)                                                  \
	({                                                                                      \
		__u64 v_;                                                                       \
		if (cond) {                                                                     \
			v_ = (ctx)[i_then];                                                     \
			asm volatile("%0 = %0" : "+r"(v_));                                     \
		} else {                                                                        \
			v_ = (ctx)[i_else];                                                     \
			asm volatile("%0 += 0" : "+r"(v_));                                     \
		}                                                                               \
		v_;                                                                             \
	})
#define IL_TP_ARG(ctx, bit, i) IL_CTX_PICK(ctx, blk_cfg.tp_old & (bit), (i) + 1, i)

/*
 * The bio-tracking programs, tp_btf and raw_tp twins named as blk_bio_plan() and
 * blk_submit_plan() expect (blk_X_btf / blk_X_raw), and submit_bio's fentry and kprobe. The
 * including object passes its handler of a bio-based device's finished bio, a function
 * (struct blk_io *io). Only the programs of the chosen plans load. A body sees il_btf: true
 * in the tp_btf twin, whose arguments are BTF pointers that plain loads may read.
 */
#define BLK_BIO_TP(name, tp, body)                                                         \
	SEC("tp_btf/" tp)                                                                       \
	int BPF_PROG(blk_##name##_btf) { const bool il_btf = true; (void)il_btf; body; return 0; }   \
	SEC("raw_tp/" tp)                                                                       \
	int BPF_PROG(blk_##name##_raw) { const bool il_btf = false; (void)il_btf; body; return 0; }

#define BLK_BIO_PROGS(on_bio_done)                                                         \
	BLK_BIO_TP(bio_queue, "block_bio_queue",                                           \
		blk_bio_queue((struct bio *)IL_TP_ARG(ctx, BLK_TP_BIO_QUEUE, 0), il_btf))  \
	BLK_BIO_TP(getrq, "block_getrq",                                                   \
		blk_getrq((struct bio *)IL_TP_ARG(ctx, BLK_TP_GETRQ, 0)))                  \
	/* (q, rq, bio) before 5.11: bio is ctx[2] */                                           \
	BLK_BIO_TP(bio_backmerge, "block_bio_backmerge",                                   \
		blk_bio_merge((struct bio *)IL_CTX_PICK(ctx, blk_cfg.tp_old & BLK_TP_MERGE, 2, 0), true)) \
	BLK_BIO_TP(bio_frontmerge, "block_bio_frontmerge",                                 \
		blk_bio_merge((struct bio *)IL_CTX_PICK(ctx, blk_cfg.tp_old & BLK_TP_MERGE, 2, 0), false)) \
	BLK_BIO_TP(split, "block_split",                                                   \
		blk_split((struct bio *)IL_TP_ARG(ctx, BLK_TP_SPLIT, 0)))                  \
	BLK_BIO_TP(bio_remap, "block_bio_remap",                                           \
		blk_bio_remap((struct bio *)IL_TP_ARG(ctx, BLK_TP_BIO_REMAP, 0),           \
				   (__u32)IL_TP_ARG(ctx, BLK_TP_BIO_REMAP, 1)))                 \
	BLK_BIO_TP(rq_remap, "block_rq_remap",                                             \
		blk_rq_remap((struct request *)IL_TP_ARG(ctx, BLK_TP_RQ_REMAP, 0),         \
				  (__u32)IL_TP_ARG(ctx, BLK_TP_RQ_REMAP, 1)))                   \
	BLK_BIO_TP(rq_requeue, "block_rq_requeue",                                         \
		blk_requeue((struct request *)IL_TP_ARG(ctx, BLK_TP_REQUEUE, 0)))          \
	BLK_BIO_TP(rq_merge, "block_rq_merge",                                             \
		blk_rq_merge((struct request *)IL_TP_ARG(ctx, BLK_TP_RQ_MERGE, 0)))        \
	BLK_BIO_TP(wbt_step, "wbt_step", blk_wbt_step((struct backing_dev_info *)ctx[0])) \
	BLK_BIO_TP(iocost_activate, "iocost_iocg_activate",                                \
		blk_iocost((struct ioc_gq *)ctx[0]))                                       \
	BLK_BIO_TP(bio_complete, "block_bio_complete",                                     \
		struct blk_io io = {};                                                       \
		if (!blk_bio_done(ctx, &io))                                               \
			on_bio_done(&io))                                                       \
	BLK_BIO_TP(dio_begin, "iomap_dio_rw_begin", blk_dio_begin((struct kiocb *)ctx[0])) \
	BLK_BIO_TP(dio_complete, "iomap_dio_complete", blk_dio_end((struct kiocb *)ctx[0])) \
	BLK_BIO_TP(wb_inode_start, "writeback_single_inode_start",                         \
		blk_wb_start((struct inode *)ctx[0]))                                      \
	BLK_BIO_TP(ext4_wb_start, "ext4_writepages", blk_wb_start((struct inode *)ctx[0])) \
	BLK_BIO_TP(wb_inode_end, "writeback_single_inode",                                 \
		blk_wb_end((struct inode *)ctx[0]))                                        \
	BLK_BIO_TP(ext4_wb_end, "ext4_writepages_result", blk_wb_end((struct inode *)ctx[0])) \
	SEC("fentry/submit_bio")                                                                \
	int BPF_PROG(blk_submit_fentry, struct bio *bio) { blk_submit(bio); return 0; }     \
	SEC("kprobe/submit_bio")                                                                \
	int BPF_KPROBE(blk_submit_kprobe, struct bio *bio) { blk_submit(bio); return 0; }     \
	SEC("syscall")                                                                          \
	int blk_dio_end_io_find(void *ctx) { return blk_dio_end_io_lookup(); }

#endif /* IOLAYER_BLOCK_BPF_H */
