/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The filesystem layer: latency of read, write, open, fsync/fdatasync and sync_file_range per
 * thread, with the file they touched. Three ways in, chosen per filesystem by user space
 * (attach plans):
 *
 *  - fentry/fexit on the filesystem's own file operations (ext4_file_read_iter, ...), one
 *    program per function (FS_FENTRY_OPS), because a tracing program has a single target;
 *  - kprobe/kretprobe on the same functions; their arguments are alike across ext4, xfs and
 *    btrfs, so one program per operation serves every filesystem;
 *  - the syscalls read, write, pread64, pwrite64, readv, writev, preadv, pwritev, preadv2,
 *    pwritev2, open, creat, openat, openat2, fsync, fdatasync and sync_file_range, at raw_syscalls:sys_enter
 *    and sys_exit (one BTF tracepoint program each, the syscall told by its number): the fd
 *    is resolved to its struct file through the task's fdtable and kept only when its
 *    superblock's magic is one of fs_cfg.sys_magic[]. ext4:ext4_sync_file_enter/exit add the
 *    fsync that an O_SYNC/O_DSYNC write runs inside the write, and the one msync runs on
 *    each shared mapping of its range (msync is marked at raw_syscalls; the mapping's file is
 *    found by address with bpf_find_vma, 5.17+, else the sync is counted as IL_DROP_MSYNC).
 *
 * msync(MS_SYNC) calls the filesystem's fsync function for each file mapped shared in its
 * range (mm/msync.c, vfs_fsync_range): fentry and kprobes see it there, marked FS_EV_MSYNC
 * by msync's own syscall tracepoints; either way it is an fsync (F) of that file.
 *
 * sync_file_range(2) reaches no file operation of its own (it writes back and waits on the
 * page cache directly), so fentry and kprobes count it at its syscall tracepoints, for the
 * filesystems of fs_cfg.sync_range_magic[]; the tracepoint method at raw_syscalls with the
 * other calls. (Any syscalls:sys_enter_NAME program makes the kernel run perf_syscall_enter()
 * and _exit() on every syscall of the machine, which the tracepoint method spares.)
 *
 * With the syscall tracepoints come io_uring's (io_uring_submit_req, named io_uring_submit_sqe
 * before 6.1, and io_uring_complete): its read, write, fsync, sync_file_range and openat
 * requests are timed from submission to completion, flagged FS_EV_URING and summed apart in
 * fs_uring_stats. Linux AIO's calls (io_submit, io_getevents, io_pgetevents) are counted per
 * process in fs_aio: its requests cannot be timed at the syscall layer.
 *
 * In-flight calls are kept per (thread, operation), so the fsync nested in an O_SYNC write
 * does not overwrite the write; it is flagged FS_EV_NESTED. A nested ext4_sync_file is only
 * taken on the tracepoint path when a traced write is in flight, which keeps an fsync(2)
 * (seen by its syscall tracepoints) from being counted twice. Where the kernel allows it
 * (fs_cfg.task_storage, 5.11+) they live in the thread's task-local storage (fs_tasks), one
 * slot per operation; else in the hash fs_inflight keyed by (thread, operation). A call of
 * another process than the traced one touches no map; a call on a file of another
 * filesystem records nothing at entry (an open, whose file is known only at its return,
 * does) and only looks for a start at its exit.
 *
 * The classic tracepoints' exits (sync_file_range, ext4_sync_file) hand a slow call's event
 * to one program, fs_send (a tail call), which fills in the path and sends it: the path walk
 * is verified once, not once per program.
 *
 * Include once per BPF object, after lib/common.bpf.h. User space fills the rodata below.
 */
#ifndef IOLAYER_FS_BPF_H
#define IOLAYER_FS_BPF_H

#include "lib/core_fixes.bpf.h"
#include "lib/fs.h"
#include "lib/who.bpf.h"
#include "lib/path.bpf.h"

/* In-flight calls with task storage: a thread's slots (struct fs_task, lib/fs.h), made at its
 * first traced call and freed with the thread; the time split's state beside them (defined
 * before split.bpf.h, which looks it up too). Where the kernel has no task storage, user
 * space turns it into a one-entry array that nothing uses. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct fs_task);
} fs_tasks SEC(".maps");

#include "lib/split.bpf.h"

/* Settings, filled by user space before load (struct fs_cfg, user/lib/fs.c). */
const volatile struct fs_cfg fs_cfg = {};

/* In-flight calls without task storage (fs_cfg.task_storage 0); user space shrinks it to
 * one entry otherwise. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct fs_key);
	__type(value, struct fs_start);
} fs_inflight SEC(".maps");

/* Slow calls' events: 184 bytes and the path's (a 60-byte path makes ~250 bytes, so a MiB
 * holds ~4,000), 4.4 KiB at most. The tools size it (fsslower --ringbuf). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} fs_events SEC(".maps");

/* Where an event is built before it is copied into fs_events with only the bytes its path
 * uses: slot 0 for the syscall and file-operation paths, slot 1 for io_uring completions
 * (which kernels before 5.12 may run in interrupt context, on top of a program using slot 0). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct fs_event);
} fs_scratch SEC(".maps");

/* Per operation, then FS_STATS_NESTED (fs_cfg.nested_apart). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FS_OP__MAX + 1);
	__type(key, __u32);
	__type(value, struct fs_op_stats);
} fs_stats SEC(".maps");

/* ---- filters ------------------------------------------------------------------- */

static __always_inline bool fs_task_wanted(__u64 pid_tgid)
{
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;

	if (fs_cfg.targ_tgid && tgid != fs_cfg.targ_tgid)
		return false;
	if (fs_cfg.targ_tid && tid != fs_cfg.targ_tid)
		return false;
	return tgid != fs_cfg.self_tgid && il_cg_wanted();
}

/* The -f file filter: struct inode.i_ino and i_sb->s_dev of file. */
static __always_inline bool fs_file_wanted(struct file *file)
{
	struct inode *inode;

	if (!fs_cfg.targ_ino)
		return true;
	inode = BPF_CORE_READ(file, f_inode);
	return BPF_CORE_READ(inode, i_ino) == fs_cfg.targ_ino &&
	       BPF_CORE_READ(inode, i_sb, s_dev) == fs_cfg.targ_dev;
}

/* Is magic (a superblock's s_magic) one of a filesystem the syscall tracepoints report
 * (fs_cfg.sys_magic[])? */
static __always_inline bool fs_sys_magic(__u64 magic)
{
	return magic && (magic == fs_cfg.sys_magic[FS_EXT4] || magic == fs_cfg.sys_magic[FS_XFS] ||
			 magic == fs_cfg.sys_magic[FS_BTRFS]);
}

/* Tracepoint path: is file on a filesystem the syscall tracepoints report
 * (file->f_inode->i_sb->s_magic, fs_sys_magic), and wanted by -f? */
static __always_inline bool fs_sys_file_wanted(struct file *file)
{
	return file && fs_sys_magic(BPF_CORE_READ(file, f_inode, i_sb, s_magic)) &&
	       fs_file_wanted(file);
}

/* sync_file_range: is file on a traced filesystem (fs_cfg.sync_range_magic[]), and wanted by -f? */
static __always_inline bool fs_sync_range_file_wanted(struct file *file)
{
	__u64 magic;
	int i;

	if (!file)
		return false;
	magic = BPF_CORE_READ(file, f_inode, i_sb, s_magic);
	for (i = 0; i < FS_TYPE__MAX; i++)
		if (magic && magic == fs_cfg.sync_range_magic[i])
			return fs_file_wanted(file);
	return false;
}

/* file (from fs_fd_file_of) as a BTF pointer when cast (the _cast programs), else as is. */
static __always_inline struct file *fs_file_btf(struct file *file, bool cast)
{
	return cast ? bpf_rdonly_cast(file, fs_cfg.file_btf_id) : file;
}

/* fs_sys_file_wanted(); cast: its filesystem read through fs_file_btf(), with plain loads
 * (the raw_syscalls _cast programs, io_uring's tp_btf completion). */
static __always_inline bool fs_sys_file_wanted_of(struct file *file, bool cast)
{
	if (!cast)
		return fs_sys_file_wanted(file);
	return file && fs_sys_magic(fs_file_btf(file, true)->f_inode->i_sb->s_magic) &&
	       fs_file_wanted(file);
}

/* struct file of descriptor fd of task, current->files->fdt->fd[fd]
 * (include/linux/fdtable.h), NULL when out of range or closed. task: the current task's BTF
 * pointer (bpf_get_current_task_btf(), 5.11+), whose fields are read with plain loads (cast:
 * through an untrusted cast of it, fs_cfg.task_btf_id); NULL for probe reads from
 * bpf_get_current_task(). While the process has no more descriptors than files_struct holds
 * itself (fdt is its fdtab, over fd_array[64]), the entry is read there, two reads fewer
 * than through fdt. The entry itself is read at an address computed as a number (the
 * verifier takes no variable index into a BTF object): a probe read, or in the _cast twins a
 * guarded load through a cast (fs_cfg.list_head_btf_id). */
static __always_inline struct file *fs_fd_file_of(struct task_struct *task, long fd, bool cast)
{
	bool btf = task;
	struct files_struct *files;
	struct fdtable *fdt;
	struct file *file = NULL;
	__u64 at, idx;

	if (!btf)
		task = (void *)bpf_get_current_task();
	else if (cast)
		task = bpf_rdonly_cast(task, fs_cfg.task_btf_id);
	files = IL_BTF_READ(btf, task, files);
	if (!files || fd < 0)
		return NULL;
	fdt = IL_BTF_READ(btf, files, fdt);
	if (!fdt)
		return NULL;
	idx = fd;
	if ((void *)fdt == (void *)files + bpf_core_field_offset(struct files_struct, fdtab) &&
	    fd < bpf_core_field_size(struct files_struct, fd_array) / sizeof(file)) {
		/* files is a BTF pointer here in tp_btf: the verifier takes a variable offset to
		 * it only with bounds it can see at the addition (6.1 loses them through a
		 * spilled fd), hence the mask the compiler cannot drop */
		barrier_var(idx);
		idx &= 63;
		at = (__u64)files + bpf_core_field_offset(struct files_struct, fd_array) +
		     idx * sizeof(file);
	} else if (fd < IL_BTF_READ(btf, fdt, max_fds)) {
		at = (__u64)IL_BTF_READ(btf, fdt, fd) + idx * sizeof(file);
	} else {
		return NULL;
	}
	if (cast) /* the entry as list_head.next: a guarded load, no helper call */
		return (struct file *)((struct list_head *)bpf_rdonly_cast((void *)at,
								  fs_cfg.list_head_btf_id))->next;
	bpf_probe_read_kernel(&file, sizeof(file), (void *)at);
	return file;
}

static __always_inline struct file *fs_fd_file(long fd)
{
	return fs_fd_file_of(NULL, fd, false);
}

/* ---- begin / end ------------------------------------------------------------------ */

/* The task-local slots of task (the current task's BTF pointer, or NULL for
 * bpf_get_current_task_btf()); made when create and missing. NULL when there are none (or
 * the kernel could not make them). Only with fs_cfg.task_storage. */
static __always_inline struct fs_task *fs_task_slots(struct task_struct *task, bool create)
{
	return bpf_task_storage_get(&fs_tasks, task ? task : bpf_get_current_task_btf(), 0,
				    create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
}

/* The start of this thread's op in flight, NULL when there is none. task: as for
 * fs_task_slots (the raw_syscalls programs hold it already: one helper call fewer). */
static __always_inline struct fs_start *fs_inflight_get_of(struct task_struct *task,
							   __u64 pid_tgid, enum fs_op op)
{
	struct fs_key key = { .tid = (__u32)pid_tgid, .op = op };
	__u32 slot = FS_SLOT(op) & (FS_SLOTS - 1); /* a bound the verifier sees for an op read
						    * from fs_cfg.sys[] (a no-op for a constant) */
	struct fs_task *t;

	if (!fs_cfg.task_storage)
		return bpf_map_lookup_elem(&fs_inflight, &key);
	t = fs_task_slots(task, false);
	if (!t || !t->call[slot].ts)
		return NULL;
	return &t->call[slot];
}

static __always_inline struct fs_start *fs_inflight_get(__u64 pid_tgid, enum fs_op op)
{
	return fs_inflight_get_of(NULL, pid_tgid, op);
}

/* Record the start of this thread's op on file, at position offset (bytes) with size bytes
 * asked for. task: as for fs_task_slots. */
static __always_inline int fs_begin_of(struct task_struct *task, __u64 pid_tgid, enum fs_op op,
				       struct file *file, __s64 offset, __u64 size, __u32 flags)
{
	struct fs_key key = { .tid = (__u32)pid_tgid, .op = op };
	struct fs_start s = {
		.ts = bpf_ktime_get_ns(), .file = (__u64)file, .offset = offset, .size = size, .flags = flags,
	};
	__u32 slot = FS_SLOT(op) & (FS_SLOTS - 1); /* as in fs_inflight_get */
	bool apart = fs_cfg.nested_apart && (flags & FS_EV_NESTED);
	struct fs_task *t;
	long err;

	/* A start still there means the previous call's return was never seen: a kretprobe
	 * out of instances (kernels without CONFIG_PREEMPTION keep one per CPU, and more
	 * threads than that may sleep in fsync at once). User space adds the starts left
	 * behind in fs_inflight by threads that have exited (task storage goes with them). */
	if (fs_cfg.task_storage) {
		t = fs_task_slots(task, true);
		if (!t) {
			il_drop(IL_DROP_MAP_FULL);
			return 0;
		}
		split_begin(task, split_of_task(t), (__u32)pid_tgid, op, s.ts, apart);
		if (t->call[slot].ts)
			il_drop(IL_DROP_MISSED_RETURN);
		t->call[slot] = s;
		return 0;
	}
	split_begin(task, NULL, (__u32)pid_tgid, op, s.ts, apart);
	err = bpf_map_update_elem(&fs_inflight, &key, &s, BPF_NOEXIST);
	if (err == -EEXIST) {
		il_drop(IL_DROP_MISSED_RETURN);
		err = bpf_map_update_elem(&fs_inflight, &key, &s, BPF_ANY);
	}
	if (err)
		il_drop(IL_DROP_MAP_FULL);
	return 0;
}

static __always_inline int fs_begin(__u64 pid_tgid, enum fs_op op, struct file *file,
				    __s64 offset, __u64 size, __u32 flags)
{
	return fs_begin_of(NULL, pid_tgid, op, file, offset, size, flags);
}

/* fs_events' last reader wakeup (il_wakeup_flags()). */
__u64 fs_last_wakeup = 0;

/* What a classic tracepoint's program leaves fs_send beside the event it built in fs_scratch
 * slot `slot` (per-CPU, like the event: both are read at once by the tail call). Classic
 * tracepoint programs do not nest on a CPU (bpf_prog_active), so one entry serves them all. */
struct fs_send_args {
	struct file *file;
	__u64 now;
	__u32 slot;       /* fs_scratch slot of the event: 1 for io_uring completions */
	__u32 has_comm;   /* 1: comm is the caller's name (io_uring's submitter), else current's */
	char comm[IL_TASK_COMM_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fs_send_args);
} fs_send_args SEC(".maps");

/* Slot 0: fs_send, set by user space after load (il_fs_loaded). */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} fs_send_prog SEC(".maps");

/* The fields of event e of a call on file that returned ret at now after delta ns, all but
 * its comm and path. */
static __always_inline void fs_event_head(struct fs_event *e, __u64 pid_tgid, enum fs_op op,
					  const struct fs_start *s, struct file *file, __s64 ret,
					  __u64 now, __u64 delta)
{
	struct inode *inode = BPF_CORE_READ(file, f_inode);

	e->end_ns = now;
	e->delta_ns = delta;
	e->offset = s->offset;
	e->ret = ret;
	e->size = s->size;
	e->ino = BPF_CORE_READ(inode, i_ino);
	e->dev = BPF_CORE_READ(inode, i_sb, s_dev);
	e->tgid = pid_tgid >> 32;
	e->tid = (__u32)pid_tgid;
	e->op = op;
	e->flags = s->flags;
	e->pad[0] = e->pad[1] = 0;
	split_event(&e->split, pid_tgid, op, s->flags);
}

/* Event e's path (that of file), and out into fs_events with only the bytes it uses. */
static __always_inline void fs_event_send(struct fs_event *e, struct file *file, __u64 now)
{
	il_path_fill(&e->path, e->names, BPF_CORE_READ(file, f_path.dentry),
		     BPF_CORE_READ(file, f_path.mnt));
	il_ringbuf_output(&fs_events, e,
			  il_path_event_size(__builtin_offsetof(struct fs_event, names), &e->path),
			  il_wakeup_flags(&fs_events, &fs_last_wakeup, now));
}

/* Send the event of a call on file that returned ret at now after delta ns, built in this
 * CPU's fs_scratch slot `slot` (1 for io_uring completions, 0 for the rest) and sent with only
 * the bytes its path uses; comm: the caller's name (io_uring's submitter), NULL for the
 * current task's. */
static __always_inline void fs_emit_in(__u32 slot, __u64 pid_tgid, enum fs_op op,
				       const struct fs_start *s, struct file *file, __s64 ret,
				       __u64 now, __u64 delta, const char *comm)
{
	struct fs_event *e = bpf_map_lookup_elem(&fs_scratch, &slot);

	if (!e)
		return;
	fs_event_head(e, pid_tgid, op, s, file, ret, now, delta);
	if (comm)
		__builtin_memcpy(e->comm, comm, sizeof(e->comm));
	else
		bpf_get_current_comm(e->comm, sizeof(e->comm));
	fs_event_send(e, file, now);
}

/* The current task's call's event (fs_emit_in(), slot 0). */
static __always_inline void fs_emit(__u64 pid_tgid, enum fs_op op, const struct fs_start *s,
				    struct file *file, __s64 ret, __u64 now, __u64 delta)
{
	fs_emit_in(0, pid_tgid, op, s, file, ret, now, delta, NULL);
}

/* fs_emit for the classic tracepoints' programs (ctx: theirs): the event's head is built in
 * fs_scratch (slot 0, or 1 with a comm, as for fs_emit), and fs_send, tail-called, adds the
 * rest and sends it: the path walk is verified once, in fs_send. */
static __always_inline void fs_emit_tail(void *ctx, __u64 pid_tgid, enum fs_op op,
					 const struct fs_start *s, struct file *file, __s64 ret,
					 __u64 now, __u64 delta, const char *comm)
{
	__u32 zero = 0, slot = comm ? 1 : 0;
	struct fs_event *e = bpf_map_lookup_elem(&fs_scratch, &slot);
	struct fs_send_args *a = bpf_map_lookup_elem(&fs_send_args, &zero);

	if (!e || !a)
		return;
	fs_event_head(e, pid_tgid, op, s, file, ret, now, delta);
	a->file = file;
	a->now = now;
	a->slot = slot;
	a->has_comm = comm != NULL;
	if (comm)
		__builtin_memcpy(a->comm, comm, sizeof(a->comm));
	bpf_tail_call(ctx, &fs_send_prog, 0);
	il_drop(IL_DROP_RINGBUF_FULL); /* only when fs_send is missing: the event is lost */
}

/* Account a call of this thread that began at s and returned ret, on file, at now (ns,
 * bpf_ktime_get_ns(); 0: read here); send its event when slow. tail (a constant): the caller
 * is a syscall tracepoint's program with context ctx, whose slow events go out through
 * fs_send; else (fentry, kprobes) the event is sent in place. task: the current task's BTF
 * pointer, or NULL; cast: a _cast program's (file's fields are read for attribution through
 * fs_file_btf(), with plain loads). */
static __always_inline void fs_account(__u64 pid_tgid, enum fs_op op, const struct fs_start *s,
				       struct file *file, __s64 ret, void *ctx, bool tail,
				       struct task_struct *task, bool cast, __u64 now)
{
	/* a sync inside an O_SYNC/O_DSYNC write, kept apart: not an fsync call (iolayer) */
	bool apart = fs_cfg.nested_apart && (s->flags & FS_EV_NESTED);
	__u32 k = apart ? FS_STATS_NESTED : op;
	struct fs_op_stats *st = bpf_map_lookup_elem(&fs_stats, &k);
	__u64 delta;
	bool slow;

	if (!now)
		now = bpf_ktime_get_ns();
	delta = now - s->ts;
	/* min_ns ~0 (iolayer) sends nothing: tested first, so the verifier drops the sending */
	slow = fs_cfg.min_ns != ~0ULL && delta >= fs_cfg.min_ns;

	split_account(pid_tgid, op, now, apart, s->flags & FS_EV_DATASYNC);
	if ((__s64)delta < 0) {
		il_drop(IL_DROP_BACKWARDS);
		return;
	}
	if (!apart)
		who_fs(pid_tgid, op, cast ? fs_file_btf(file, true) : file, delta, ret, now, task, cast);
	if (st) { /* per-CPU: plain adds */
		st->count++;
		st->total_ns += delta;
		if (delta > st->max_ns)
			st->max_ns = delta;
		st->slots[il_slot_idx(delta)]++;
		if (slow)
			st->slow++;
	}
	if (!slow)
		return;
	if (tail)
		fs_emit_tail(ctx, pid_tgid, op, s, file, ret, now, delta, NULL);
	else
		fs_emit(pid_tgid, op, s, file, ret, now, delta);
}

/* The recorded start of this thread's op into *s, removing it: false when there is none
 * (the thread is filtered out, or the call began before tracing or was not wanted). task:
 * as for fs_task_slots. *now: the time the time split closed the call's parts at (0 when
 * it did not), for fs_account. */
static __always_inline bool fs_take_of(struct task_struct *task, __u64 pid_tgid, enum fs_op op,
				       struct fs_start *s, __u64 *now)
{
	struct fs_key key = { .tid = (__u32)pid_tgid, .op = op };
	__u32 slot = FS_SLOT(op) & (FS_SLOTS - 1); /* as in fs_inflight_get */
	struct fs_task *t = NULL;
	struct fs_start *sp;

	if (!fs_task_wanted(pid_tgid))
		return false;
	if (fs_cfg.task_storage) { /* fs_inflight_get_of(), its storage kept for the split */
		t = fs_task_slots(task, false);
		sp = t && t->call[slot].ts ? &t->call[slot] : NULL;
	} else {
		sp = bpf_map_lookup_elem(&fs_inflight, &key);
	}
	if (!sp)
		return false;
	*s = *sp;
	*now = split_take(task, split_of_task(t), (__u32)pid_tgid, op);
	if (fs_cfg.task_storage)
		sp->ts = 0;
	else
		bpf_map_delete_elem(&fs_inflight, &key);
	return true;
}

static __always_inline bool fs_take(__u64 pid_tgid, enum fs_op op, struct fs_start *s,
				    __u64 *now)
{
	return fs_take_of(NULL, pid_tgid, op, s, now);
}

/* A traced call returned ret: account it when its start was recorded. ctx, tail: as for
 * fs_account. */
static __always_inline int fs_end_ctx(enum fs_op op, __s64 ret, void *ctx, bool tail)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), now;
	struct fs_start s;

	if (!fs_take(pid_tgid, op, &s, &now))
		return 0;
	if (op == FS_OP_OPEN || op == FS_OP_FSYNC)
		ret = ret < 0 ? ret : 0;
	fs_account(pid_tgid, op, &s, (struct file *)s.file, ret, ctx, tail, NULL, false, now);
	return 0;
}

static __always_inline int fs_end(enum fs_op op, __s64 ret)
{
	return fs_end_ctx(op, ret, NULL, false);
}

/* fs_end for the classic tracepoints' exits (sync_file_range, ext4_sync_file) */
static __always_inline int fs_sys_end(void *ctx, enum fs_op op, __s64 ret)
{
	return fs_end_ctx(op, ret, ctx, true);
}

/* ---- fentry / kprobe entries: the filesystem's file operations ------------------ */

/* FS_read_iter / FS_write_iter (struct kiocb *iocb, struct iov_iter *iter): file
 * iocb->ki_filp, position iocb->ki_pos, size iter->count (include/linux/fs.h, uio.h). */
static __always_inline int fs_iter_begin(enum fs_op op, struct kiocb *iocb, struct iov_iter *iter)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct file *file;

	if (!fs_task_wanted(pid_tgid))
		return 0;
	file = BPF_CORE_READ(iocb, ki_filp);
	if (!fs_file_wanted(file))
		return 0;
	return fs_begin(pid_tgid, op, file, BPF_CORE_READ(iocb, ki_pos), BPF_CORE_READ(iter, count), 0);
}

/* FS_file_open(struct inode *inode, struct file *file). */
static __always_inline int fs_open_begin(struct file *file)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	if (!fs_task_wanted(pid_tgid) || !fs_file_wanted(file))
		return 0;
	return fs_begin(pid_tgid, FS_OP_OPEN, file, 0, 0, 0);
}

/* FS_sync_file(struct file *file, loff_t start, loff_t end, int datasync); nested when the
 * thread is inside a traced write (generic_write_sync of an O_SYNC/O_DSYNC write), msync's
 * (FS_EV_MSYNC) when inside msync(2) (fs_sys_enter_msync marked it). */
static __always_inline int fs_fsync_begin(struct file *file, int datasync)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 flags = datasync ? FS_EV_DATASYNC : 0;

	if (!fs_task_wanted(pid_tgid) || !fs_file_wanted(file))
		return 0;
	if (fs_inflight_get(pid_tgid, FS_OP_WRITE))
		flags |= FS_EV_NESTED;
	else if (fs_inflight_get(pid_tgid, (enum fs_op)FS_MSYNC_CALL))
		flags |= FS_EV_MSYNC;
	return fs_begin(pid_tgid, FS_OP_FSYNC, file, 0, 0, flags);
}

/* One fentry and one fexit program per function: a tracing program has exactly one
 * target, set by user space (bpf_program__set_attach_target) for the chosen filesystem.
 * fexit's ctx[n] after the n arguments is the return value. */
#define FS_FENTRY_OPS(fs)                                                                   \
	SEC("fentry") int fs_fentry_##fs##_read(__u64 *ctx)                                   \
	{ return fs_iter_begin(FS_OP_READ, (void *)ctx[0], (void *)ctx[1]); }                 \
	SEC("fexit") int fs_fexit_##fs##_read(__u64 *ctx)                                     \
	{ return fs_end(FS_OP_READ, (long)ctx[2]); }                                          \
	SEC("fentry") int fs_fentry_##fs##_write(__u64 *ctx)                                  \
	{ return fs_iter_begin(FS_OP_WRITE, (void *)ctx[0], (void *)ctx[1]); }                \
	SEC("fexit") int fs_fexit_##fs##_write(__u64 *ctx)                                    \
	{ return fs_end(FS_OP_WRITE, (long)ctx[2]); }                                         \
	SEC("fentry") int fs_fentry_##fs##_open(__u64 *ctx)                                   \
	{ return fs_open_begin((void *)ctx[1]); }                                             \
	SEC("fexit") int fs_fexit_##fs##_open(__u64 *ctx)                                     \
	{ return fs_end(FS_OP_OPEN, (int)ctx[2]); }                                           \
	SEC("fentry") int fs_fentry_##fs##_fsync(__u64 *ctx)                                  \
	{ return fs_fsync_begin((void *)ctx[0], (int)ctx[3]); }                               \
	SEC("fexit") int fs_fexit_##fs##_fsync(__u64 *ctx)                                    \
	{ return fs_end(FS_OP_FSYNC, (int)ctx[4]); }

FS_FENTRY_OPS(ext4)
FS_FENTRY_OPS(xfs)
FS_FENTRY_OPS(btrfs)

/* kprobes: attached by user space to each chosen filesystem's functions. */
SEC("kprobe") int BPF_KPROBE(fs_kprobe_read, struct kiocb *iocb, struct iov_iter *iter)
{ return fs_iter_begin(FS_OP_READ, iocb, iter); }
SEC("kretprobe") int BPF_KRETPROBE(fs_kretprobe_read, long ret)
{ return fs_end(FS_OP_READ, ret); }
SEC("kprobe") int BPF_KPROBE(fs_kprobe_write, struct kiocb *iocb, struct iov_iter *iter)
{ return fs_iter_begin(FS_OP_WRITE, iocb, iter); }
SEC("kretprobe") int BPF_KRETPROBE(fs_kretprobe_write, long ret)
{ return fs_end(FS_OP_WRITE, ret); }
SEC("kprobe") int BPF_KPROBE(fs_kprobe_open, struct inode *inode, struct file *file)
{ return fs_open_begin(file); }
SEC("kretprobe") int BPF_KRETPROBE(fs_kretprobe_open, int ret)
{ return fs_end(FS_OP_OPEN, ret); }
SEC("kprobe") int BPF_KPROBE(fs_kprobe_fsync, struct file *file, loff_t start, loff_t end, int datasync)
{ return fs_fsync_begin(file, datasync); }
SEC("kretprobe") int BPF_KRETPROBE(fs_kretprobe_fsync, int ret)
{ return fs_end(FS_OP_FSYNC, ret); }

/* ---- tracepoint path: the syscall boundary -------------------------------------- */

/* The records of the syscalls:sys_enter_NAME and sys_exit_NAME tracepoints as tracefs
 * describes them (their format files: the common fields, __syscall_nr, then the arguments
 * or the return value, 8 bytes each, in every kernel this project runs on). Spelt out
 * rather than CO-RE-relocated against trace_event_raw_sys_enter/exit: each type a CO-RE
 * relocation names costs libbpf a search of the kernel's whole BTF at load time. */
struct fs_sys_enter_rec {
	__u64 common;
	__s32 nr;
	__u32 pad;
	__u64 args[6];
};

struct fs_sys_exit_rec {
	__u64 common;
	__s32 nr;
	__u32 pad;
	__s64 ret;
};

/* sync_file_range(fd, offset, nbytes, flags): offset and nbytes recorded as the call's
 * position and size. Attached by fentry and kprobes (see top), so its filter is
 * fs_cfg.sync_range_magic[], not fs_sys_magic[]. */
SEC("tp/syscalls/sys_enter_sync_file_range")
int fs_sys_enter_sync_file_range(struct fs_sys_enter_rec *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct file *file;

	if (!fs_task_wanted(pid_tgid))
		return 0;
	file = fs_fd_file(ctx->args[0]);
	if (!fs_sync_range_file_wanted(file))
		return 0;
	return fs_begin(pid_tgid, FS_OP_SYNC_RANGE, file, ctx->args[1], ctx->args[2], FS_EV_SYSCALL);
}

SEC("tp/syscalls/sys_exit_sync_file_range")
int fs_sys_exit_sync_file_range(struct fs_sys_exit_rec *ctx)
{ return fs_sys_end(ctx, FS_OP_SYNC_RANGE, ctx->ret); }

/* msync(addr, len, flags) for fentry and kprobes: marks the thread as inside msync
 * (FS_MSYNC_CALL, with its address range) for the filesystem's fsync function it runs on
 * each shared file mapping of the range (mm/msync.c, vfs_fsync_range), which then counts as
 * an F row marked msync. The tracepoint method takes msync at raw_syscalls. */
SEC("tp/syscalls/sys_enter_msync")
int fs_sys_enter_msync(struct fs_sys_enter_rec *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	if (!fs_task_wanted(pid_tgid))
		return 0;
	return fs_begin(pid_tgid, (enum fs_op)FS_MSYNC_CALL, NULL, ctx->args[0], ctx->args[1],
			FS_EV_SYSCALL);
}

SEC("tp/syscalls/sys_exit_msync")
int fs_sys_exit_msync(struct fs_sys_exit_rec *ctx)
{
	struct fs_start s;
	__u64 now;

	fs_take(bpf_get_current_pid_tgid(), (enum fs_op)FS_MSYNC_CALL, &s, &now);
	return 0;
}

/* The tail of a slow call's event from a syscall tracepoint's exit (fs_emit_tail): its comm
 * and path, then out. Attached nowhere: reached only through fs_send_prog. */
SEC("tp")
int fs_send(void *ctx)
{
	__u32 zero = 0, slot;
	struct fs_send_args *a = bpf_map_lookup_elem(&fs_send_args, &zero);
	struct fs_event *e;

	if (!a)
		return 0;
	slot = a->slot;
	e = bpf_map_lookup_elem(&fs_scratch, &slot);
	if (!e)
		return 0;
	if (a->has_comm)
		__builtin_memcpy(e->comm, a->comm, sizeof(e->comm));
	else
		bpf_get_current_comm(e->comm, sizeof(e->comm));
	fs_event_send(e, a->file, a->now);
	return 0;
}

/* ext4_sync_file (fs/ext4/fsync.c) run by an O_SYNC/O_DSYNC write: taken only while a traced
 * write of this thread is in flight, with that write's file; an fsync(2) or fdatasync(2)
 * is already measured by its own tracepoints above. */
/* The records of ext4:ext4_sync_file_enter/exit as tracefs describes them
 * (the format files of events/ext4/ext4_sync_file_enter and _exit; unchanged since 2.6.35). Spelt out
 * rather than taken from trace_event_raw_ext4_sync_file_*: where ext4 is a module and the
 * kernel has no module BTF (Debian's 5.10), those types cannot be CO-RE-relocated. */
struct fs_ext4_sync_file_enter_rec {
	__u64 common;   /* common_type, common_flags, common_preempt_count, common_pid */
	__u32 dev;
	__u32 pad;
	__u64 ino;
	__u64 parent;
	__s32 datasync;
};

struct fs_ext4_sync_file_exit_rec {
	__u64 common;
	__u32 dev;
	__u32 pad;
	__u64 ino;
	__s32 ret;
};

/* What fs_msync_vma looks for in one VMA (bpf_find_vma's callback context): the file of
 * superblock dev, inode ino; next, the end of the VMA seen. */
struct fs_msync_find {
	struct file *file; /* found: vm_area_struct.vm_file, else NULL */
	__u64 next;        /* vm_area_struct.vm_end of the VMA seen, 0 if none */
	__u64 ino;         /* inode.i_ino wanted */
	__u32 dev;         /* super_block.s_dev wanted (kernel encoding) */
	__u32 pad;
};

/* bpf_find_vma's callback: vma holds the address; note its end and, when it maps the file
 * wanted (vm_file->f_inode: i_ino and i_sb->s_dev), that file. */
static long fs_msync_vma(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct fs_msync_find *f = data;
	struct file *file = BPF_CORE_READ(vma, vm_file);
	struct inode *inode = BPF_CORE_READ(file, f_inode);

	f->next = BPF_CORE_READ(vma, vm_end);
	if (file && BPF_CORE_READ(inode, i_ino) == f->ino && BPF_CORE_READ(inode, i_sb, s_dev) == f->dev)
		f->file = file;
	return 0;
}

/* The VMAs msync walks (mm/msync.c) over its range [addr, addr + len) one by one, at most
 * FS_MSYNC_VMAS: the file mapped there with superblock dev and inode ino, NULL when none
 * (a hole ends the walk) or the current mm's lock was taken (bpf_find_vma: -EBUSY). */
#define FS_MSYNC_VMAS 16
static __always_inline struct file *fs_msync_file(__u64 addr, __u64 len, __u32 dev, __u64 ino)
{
	struct fs_msync_find f = { .ino = ino, .dev = dev };
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 end = addr + len;
	int i;

	for (i = 0; i < FS_MSYNC_VMAS && addr < end; i++) {
		f.next = 0;
		if (bpf_find_vma(task, addr, fs_msync_vma, &f, 0) || f.file || f.next <= addr)
			break;
		addr = f.next;
	}
	return f.file;
}

/* ext4_sync_file_enter: the sync inside a traced write of this thread (nested, the write's
 * file), or msync's on a shared mapping (FS_MSYNC_CALL in flight: FS_EV_MSYNC, the file
 * found among the range's mappings by the record's dev and ino where vma, the twin
 * fs_tp_ext4_sync_file_enter_vma for kernels with bpf_find_vma, 5.17+; else IL_DROP_MSYNC).
 * Any other (fsync(2), fdatasync(2)) is measured by its own syscall tracepoints. */
static __always_inline int fs_ext4_sync_enter(struct fs_ext4_sync_file_enter_rec *ctx, bool vma)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 datasync = ctx->datasync ? FS_EV_DATASYNC : 0;
	struct fs_start *ws;
	struct file *file;

	if (!fs_task_wanted(pid_tgid))
		return 0;
	ws = fs_inflight_get(pid_tgid, FS_OP_WRITE);
	if (ws)
		return fs_begin(pid_tgid, FS_OP_FSYNC, (struct file *)ws->file, 0, 0,
				FS_EV_NESTED | (ws->flags & FS_EV_SYSCALL) | datasync);
	ws = fs_inflight_get(pid_tgid, (enum fs_op)FS_MSYNC_CALL);
	if (!ws)
		return 0;
	file = vma ? fs_msync_file(ws->offset, ws->size, ctx->dev, ctx->ino) : NULL;
	if (!file) {
		il_drop(IL_DROP_MSYNC);
		return 0;
	}
	if (!fs_sys_file_wanted(file))
		return 0;
	return fs_begin(pid_tgid, FS_OP_FSYNC, file, 0, 0, FS_EV_MSYNC | FS_EV_SYSCALL | datasync);
}

SEC("tp/ext4/ext4_sync_file_enter")
int fs_tp_ext4_sync_file_enter(struct fs_ext4_sync_file_enter_rec *ctx)
{ return fs_ext4_sync_enter(ctx, false); }

SEC("tp/ext4/ext4_sync_file_enter")
int fs_tp_ext4_sync_file_enter_vma(struct fs_ext4_sync_file_enter_rec *ctx)
{ return fs_ext4_sync_enter(ctx, true); }

SEC("tp/ext4/ext4_sync_file_exit")
int fs_tp_ext4_sync_file_exit(struct fs_ext4_sync_file_exit_rec *ctx)
{
	struct fs_start *sp = fs_inflight_get(bpf_get_current_pid_tgid(), FS_OP_FSYNC);

	if (!sp || !(sp->flags & (FS_EV_NESTED | FS_EV_MSYNC)))
		return 0; /* neither nested nor msync's: the fsync(2) exit tracepoint ends it */
	return fs_sys_end(ctx, FS_OP_FSYNC, ctx->ret);
}

/* ---- io_uring: submission to completion ---------------------------------------------
 * io_uring:io_uring_submit_req (io_uring_submit_sqe before 6.1) fires once a request is
 * prepared, in the submitting task (or its SQPOLL thread); io_uring:io_uring_complete when
 * its completion is posted, in whichever task or worker that is. A request is known by its
 * struct io_kiocb where io_uring_complete carries it (5.19+), else by its ring and user_data
 * (which the application chooses: two requests in flight with one user_data are confused).
 * The request's file is read at completion from io_kiocb.file (still held then), so fixed
 * files are followed too; kernels whose tracepoints carry no request at all (before 5.14)
 * are not followed. The request's own struct (io_rw, io_sync) lies at the start of struct
 * io_kiocb in every version (a union member up to 5.19, io_kiocb.cmd after).
 * Classic tracepoint programs (the kernel builds a perf record for each event), and tp_btf
 * twins for the shapes of 6.1 and later, io_uring_submit_req(req) and io_uring_complete(ctx,
 * req, cqe) (issue 25: no record built), which read what the record would hold from the
 * arguments with plain loads and send a slow request's event in place; user space picks the
 * twin by the tracepoint's prototype (il_fs_plan). */

/* The records of the submit tracepoint: io_uring_submit_req (6.1+) is in vmlinux.h; its
 * older name, with the same fields (req from 5.14 on), is described here for CO-RE. */
struct trace_event_raw_io_uring_submit_sqe___il {
	struct trace_entry ent;
	void *ctx;
	void *req;
	__u64 user_data;
	__u8 opcode;
} __attribute__((preserve_access_index));

#define FS_IORING_FSYNC_DATASYNC 1 /* io_uring_sqe.fsync_flags (include/uapi/linux/io_uring.h) */

/* Requests are known by their struct io_kiocb (1), or by ring and user_data (0). */
#define FS_URING_BY_REQ bpf_core_field_exists(((struct trace_event_raw_io_uring_complete *)0)->req)

struct fs_uring_key {
	__u64 ring;   /* struct io_ring_ctx * */
	__u64 id;     /* struct io_kiocb * (FS_URING_BY_REQ), else the request's user_data */
};

struct fs_uring_start {
	__u64 ts;        /* bpf_ktime_get_ns() at submission */
	__u64 pid_tgid;  /* the submitter */
	__u64 req;       /* struct io_kiocb * */
	__u32 op;        /* enum fs_op */
	__u32 pad;
	char comm[IL_TASK_COMM_LEN]; /* the submitter's name: completions may run in a worker */
};

/* LRU: a request whose completion is never posted (IOSQE_CQE_SKIP_SUCCESS) leaves its start
 * behind; the oldest go first when the map is full. Where requests are known by their
 * struct io_kiocb (FS_URING_BY_REQ), only those whose slot in fs_uring_slots is held. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct fs_uring_key);
	__type(value, struct fs_uring_start);
} fs_uring_flight SEC(".maps");

/* Requests' starts in direct-mapped slots (IL_SLOTS) by their struct io_kiocb, where the LRU
 * hash took an update at the submission and a lookup and a delete at the completion (issue
 * 25: about 300 ns of 4 KiB direct writes' 640 on these two tracepoints under fio). A slot
 * held over FS_URING_STALE_NS (a completion never posted; a request that waits that long,
 * a read on a pipe) gives its start to fs_uring_flight when another request wants it. */
#define FS_URING_SLOTS 4096
#define FS_URING_STALE_NS 5000000000ULL

struct fs_uring_slot {
	IL_SLOT_FIELDS(struct fs_uring_key, struct fs_uring_start) /* owner: the io_kiocb */
};

/* A request's slot: struct io_kiocb is a slab object of 256 bytes and more (5.19 to 6.18,
 * cache-aligned), so its address in units of 256 bytes (a ring's requests are cached and
 * reused, and take neighbouring slots). */
IL_SLOTS(fs_uring_slots, struct fs_uring_slot, struct fs_uring_key, struct fs_uring_start,
	 FS_URING_SLOTS, 8, fs_uring_flight, FS_URING_STALE_NS)

/* Per-operation totals of the io_uring requests, as fs_stats has them for the other calls. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FS_OP__MAX);
	__type(key, __u32);
	__type(value, struct fs_op_stats);
} fs_uring_stats SEC(".maps");

/* One more call of delta ns in st (per-CPU: plain adds). */
static __always_inline void fs_stats_add(struct fs_op_stats *st, __u64 delta, bool slow)
{
	if (!st)
		return;
	st->count++;
	st->total_ns += delta;
	if (delta > st->max_ns)
		st->max_ns = delta;
	st->slots[il_slot_idx(delta)]++;
	if (slow)
		st->slow++;
}

/* enum fs_op of an io_uring opcode (include/uapi/linux/io_uring.h), -1 for the others. */
static __always_inline int fs_uring_op(__u8 opcode)
{
	switch (opcode) {
	case IORING_OP_READV:
	case IORING_OP_READ_FIXED:
	case IORING_OP_READ:
		return FS_OP_READ;
	case IORING_OP_WRITEV:
	case IORING_OP_WRITE_FIXED:
	case IORING_OP_WRITE:
		return FS_OP_WRITE;
	case IORING_OP_FSYNC:
		return FS_OP_FSYNC;
	case IORING_OP_SYNC_FILE_RANGE:
		return FS_OP_SYNC_RANGE;
	case IORING_OP_OPENAT:
	case IORING_OP_OPENAT2:
		return FS_OP_OPEN;
	}
	return -1;
}

static __always_inline int fs_uring_submit(void *ring, void *req, __u64 user_data, __u8 opcode,
					   bool btf)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct fs_uring_key key = { .ring = (__u64)ring, .id = FS_URING_BY_REQ ? (__u64)req : user_data };
	struct fs_uring_start s = {};
	int op = fs_uring_op(opcode);

	if (op < 0 || !req || !fs_task_wanted(pid_tgid))
		return 0;
	s.ts = bpf_ktime_get_ns();
	s.pid_tgid = pid_tgid;
	s.req = (__u64)req;
	s.op = op;
	if (fs_cfg.min_ns != ~0ULL) /* for a slow request's event: none without them (iolayer) */
		bpf_get_current_comm(s.comm, sizeof(s.comm));
	if (FS_URING_BY_REQ) {
		/* over a request reused before its completion was seen */
		if (!fs_uring_slots_set(key.id, &key, &s, s.ts))
			return 0;
	} else if (bpf_map_update_elem(&fs_uring_flight, &key, &s, BPF_ANY)) {
		il_drop(IL_DROP_MAP_FULL);
		return 0;
	}
	who_submitter(pid_tgid >> 32, s.ts, btf);
	return 0;
}

SEC("tp/io_uring/io_uring_submit_req")
int fs_uring_submit_req(struct trace_event_raw_io_uring_submit_req *ctx)
{
	return fs_uring_submit(BPF_CORE_READ(ctx, ctx), BPF_CORE_READ(ctx, req),
			       BPF_CORE_READ(ctx, user_data), BPF_CORE_READ(ctx, opcode), false);
}

SEC("tp/io_uring/io_uring_submit_sqe")
int fs_uring_submit_sqe(struct trace_event_raw_io_uring_submit_sqe___il *ctx)
{
	if (!bpf_core_field_exists(ctx->req))
		return 0; /* before 5.14: no request to find the file by */
	return fs_uring_submit(BPF_CORE_READ(ctx, ctx), BPF_CORE_READ(ctx, req),
			       BPF_CORE_READ(ctx, user_data), BPF_CORE_READ(ctx, opcode), false);
}

/* Is request req (at io_uring_submit_req, in its submitting task) on a file the fs layer does
 * not report (a raw block device, a socket, tmpfs), so that it need not be followed? Its file
 * is io_kiocb.file where already set, else, since io_uring assigns it at issue (after this
 * tracepoint), the descriptor io_kiocb.cqe.fd (the SQE's fd, in io_cqe's union with the
 * completion's flags) in the task's table: an SQPOLL thread shares its ring owner's. A
 * request on a registered (fixed) file, REQ_F_FIXED_FILE (bit IOSQE_FIXED_FILE_BIT, 0, of
 * io_kiocb.flags: its cqe.fd indexes the ring's table), an open, or a kernel without the
 * task's BTF pointer: not known here (false: followed, and told at completion). */
static __always_inline bool fs_uring_file_unwanted(struct io_kiocb *req, int op)
{
	bool cast = fs_cfg.file_btf_id;
	struct file *file;

	if (op == FS_OP_OPEN || !fs_cfg.task_storage || !bpf_core_field_exists(req->cqe.fd))
		return false;
	file = req->file;
	if (!file) {
		/* u32 before 6.10, u64 since: libbpf sizes the load to the kernel's field */
		if (req->flags & 1)
			return false;
		file = fs_fd_file_of(bpf_get_current_task_btf(), req->cqe.fd, cast);
		if (!file)
			return false;
	}
	return !fs_sys_file_wanted_of(file, cast);
}

/* io_uring_submit_req(req), 6.1 and later: the record's fields, from the request. A request
 * on a file not reported is left at once (fs_uring_file_unwanted()), where it took a start, a
 * slot and the submitter's identity to be dropped at completion (issue 25: fio's direct
 * writes to a raw block device). */
SEC("tp_btf/io_uring_submit_req")
int BPF_PROG(fs_uring_submit_req_btf, struct io_kiocb *req)
{
	int op;

	req = IL_UNTRUSTED(req, io_kiocb); /* its pointers unchecked: start-up 5 -> 1 ms */
	op = fs_uring_op(req->opcode);

	if (op < 0 || fs_uring_file_unwanted(req, op))
		return 0;
	return fs_uring_submit(req->ctx, req, req->cqe.user_data, req->opcode, true);
}

/* A request's completion was posted on ring (struct io_ring_ctx *) with result res: the
 * request reqp (struct io_kiocb *) where the tracepoint carries it, else the request whose
 * user_data it is. ctx and tail: a classic tracepoint's program, whose slow events go out
 * through fs_send (tail true, ctx its context); else sent in place. In the tp_btf program
 * (!tail) on a kernel with bpf_rdonly_cast (6.2+: il_btf_ids.io_kiocb, .kiocb and
 * fs_cfg.file_btf_id), a read or write request's file, position, filesystem and the file's
 * key for attribution are read with plain loads through untrusted casts: about eight probe
 * reads fewer a request, each a helper call. */
static __always_inline int fs_uring_done(void *ctx, bool tail, void *ring, void *reqp, __u64 user_data,
					 int res)
{
	struct fs_uring_key key = { .ring = (__u64)ring };
	struct fs_start s = { .flags = FS_EV_URING };
	struct fs_uring_start st, *sp;
	struct io_kiocb *req;
	struct io_sync *sync;
	struct kiocb *kiocb;
	struct file *file;
	__u64 now, delta;
	__s64 ret;
	__u32 k;
	bool slow, cast = false;

	key.id = FS_URING_BY_REQ ? (__u64)reqp : user_data;
	if (FS_URING_BY_REQ) {
		struct fs_uring_slot *sl;

		sp = fs_uring_slots_find(key.id, &key, &sl);
		if (!sp)
			return 0;
		st = *sp;
		fs_uring_slots_free(&key, sl, sp);
	} else {
		sp = bpf_map_lookup_elem(&fs_uring_flight, &key);
		if (!sp)
			return 0;
		st = *sp;
		bpf_map_delete_elem(&fs_uring_flight, &key);
	}
	ret = res;
	req = (void *)st.req;
	sync = (void *)req;  /* struct io_sync of FSYNC and SYNC_FILE_RANGE */
	kiocb = (void *)req; /* struct io_rw's kiocb of the reads and writes */
	file = BPF_CORE_READ(req, file);
	s.ts = st.ts;
	switch (st.op) {
	case FS_OP_READ:
	case FS_OP_WRITE:
		/* bytes moved, and where: the request's kiocb was advanced past them */
		s.size = res > 0 ? res : 0;
		if (!tail && il_btf_ids.io_kiocb && il_btf_ids.kiocb && fs_cfg.file_btf_id) {
			cast = true;
			file = ((struct io_kiocb *)bpf_rdonly_cast(req, il_btf_ids.io_kiocb))->file;
			s.offset = ((struct kiocb *)bpf_rdonly_cast(kiocb, il_btf_ids.kiocb))->ki_pos -
				   s.size;
			break;
		}
		s.offset = BPF_CORE_READ(kiocb, ki_pos) - s.size;
		break;
	case FS_OP_FSYNC:
		if (bpf_core_type_exists(struct io_sync) &&
		    (BPF_CORE_READ(sync, flags) & FS_IORING_FSYNC_DATASYNC))
			s.flags |= FS_EV_DATASYNC;
		ret = res < 0 ? res : 0;
		break;
	case FS_OP_SYNC_RANGE:
		if (bpf_core_type_exists(struct io_sync)) {
			s.offset = BPF_CORE_READ(sync, off);
			s.size = BPF_CORE_READ(sync, len);
		}
		break;
	case FS_OP_OPEN:
		/* the new fd, in the submitter's table: only where this task shares it */
		if (res < 0 || (bpf_get_current_pid_tgid() >> 32) != (st.pid_tgid >> 32))
			return 0;
		file = fs_fd_file(res);
		ret = 0;
		break;
	default:
		return 0;
	}
	if (!fs_sys_file_wanted_of(file, cast))
		return 0;
	s.file = (__u64)file;
	now = bpf_ktime_get_ns();
	delta = now - s.ts;
	if ((__s64)delta < 0) {
		il_drop(IL_DROP_BACKWARDS);
		return 0;
	}
	slow = fs_cfg.min_ns != ~0ULL && delta >= fs_cfg.min_ns;
	k = st.op;
	fs_stats_add(bpf_map_lookup_elem(&fs_uring_stats, &k), delta, slow);
	who_fs_of(st.pid_tgid, st.op, cast ? fs_file_btf(file, true) : file, delta, ret, cast);
	if (slow && tail)
		fs_emit_tail(ctx, st.pid_tgid, st.op, &s, file, ret, now, delta, st.comm);
	else if (slow)
		fs_emit_in(1, st.pid_tgid, st.op, &s, file, ret, now, delta, st.comm);
	return 0;
}

SEC("tp/io_uring/io_uring_complete")
int fs_uring_complete(struct trace_event_raw_io_uring_complete *ctx)
{
	void *req = FS_URING_BY_REQ ? BPF_CORE_READ(ctx, req) : NULL;

	return fs_uring_done(ctx, true, BPF_CORE_READ(ctx, ctx), req, BPF_CORE_READ(ctx, user_data),
			     BPF_CORE_READ(ctx, res));
}

/* io_uring_complete(ctx, req, cqe), its shape since the completion entry was passed whole
 * (6.x): the record's fields, from the arguments. */
SEC("tp_btf/io_uring_complete")
int BPF_PROG(fs_uring_complete_btf, struct io_ring_ctx *ring, void *req, struct io_uring_cqe *cqe)
{
	__u64 r = (__u64)req;

	asm volatile("" : "+r"(r)); /* loaded here: the verifier refuses a load through ctx + 8 */
	return fs_uring_done(NULL, false, ring, (void *)r, cqe->user_data, cqe->res);
}

/* ---- Linux AIO: the calls, per process ------------------------------------------------
 * io_submit(ctx, nr, iocbpp) returns how many of its iocbs it queued; their completion is
 * reaped by io_getevents/io_pgetevents (or read from the ring in user space, unseen). The
 * calls are timed entry to return in fs_inflight (keys FS_AIO_*) and summed per process in
 * fs_aio, for the one line user space prints about I/O the rows cannot show. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32); /* tgid */
	__type(value, struct fs_aio_stats);
} fs_aio SEC(".maps");

static __always_inline int fs_aio_exit(enum fs_aio_call call, long ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), delta, now;
	__u32 tgid = pid_tgid >> 32;
	struct fs_aio_stats *a;
	struct fs_start s;

	if (!fs_take(pid_tgid, (enum fs_op)call, &s, &now))
		return 0;
	delta = bpf_ktime_get_ns() - s.ts; /* no time split for AIO calls: now is 0 */
	a = bpf_map_lookup_elem(&fs_aio, &tgid);
	if (!a) {
		struct fs_aio_stats init = {};

		bpf_get_current_comm(init.comm, sizeof(init.comm));
		a = il_lookup_or_init(&fs_aio, &tgid, &init);
		if (!a)
			return 0;
	}
	if (call == FS_AIO_SUBMIT) {
		__sync_fetch_and_add(&a->submit_calls, 1);
		__sync_fetch_and_add(&a->submit_ns, delta);
		if (ret < 0)
			__sync_fetch_and_add(&a->submit_failed, 1);
		else
			__sync_fetch_and_add(&a->requests, ret);
	} else {
		__sync_fetch_and_add(&a->getevents_calls, 1);
		__sync_fetch_and_add(&a->getevents_ns, delta);
		if (ret > 0)
			__sync_fetch_and_add(&a->events, ret);
	}
	return 0;
}

/* ---- the -p process's threads that exit ---------------------------------------------- */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fs_exited_io);
} fs_exited_io SEC(".maps");

/* sched_process_exit, run by the exiting task itself (kernel/exit.c do_exit(), before
 * exit_notify(): its counters are final): a thread of fs_cfg.targ_tgid other than its
 * leader adds its task_struct.ioac (include/linux/task_io_accounting.h: syscr, syscw,
 * read_bytes, write_bytes) to fs_exited_io. Attached with -p only (user/lib/fs.c). */
SEC("tp/sched/sched_process_exit")
int fs_thread_exit(void *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, zero = 0;
	struct task_struct *task;
	struct fs_exited_io *e;

	if (!fs_cfg.targ_tgid || tgid != fs_cfg.targ_tgid || (__u32)pid_tgid == tgid)
		return 0;
	e = bpf_map_lookup_elem(&fs_exited_io, &zero);
	if (!e)
		return 0;
	task = (void *)bpf_get_current_task();
	if (bpf_core_field_exists(task->ioac.syscr))
		e->calls += BPF_CORE_READ(task, ioac.syscr) + BPF_CORE_READ(task, ioac.syscw);
	if (bpf_core_field_exists(task->ioac.read_bytes)) {
		e->rbytes += BPF_CORE_READ(task, ioac.read_bytes);
		e->wbytes += BPF_CORE_READ(task, ioac.write_bytes);
	}
	return 0;
}

/* ---- the syscalls, at raw_syscalls:sys_enter and sys_exit -------------------------------
 * The tracepoint method takes every traced syscall (fs_cfg.sys[], filled by user space from
 * the syscall numbers) with one BTF tracepoint program on each of raw_syscalls:sys_enter and
 * sys_exit, told apart by number. A syscall it does not trace costs one table read. Against
 * a pair of syscalls:sys_enter_NAME/sys_exit_NAME programs per syscall, this saves the
 * kernel's building of each call's perf record (perf_syscall_enter/exit): on 6.18 here, empty
 * programs on those two tracepoints added ~240 ns to a 64-byte pwrite64, empty ones on these
 * ~85 ns. It also loads 2 programs at start-up instead of 40. */

/* The raw_syscalls programs come as twins: fs_sys_enter/fs_sys_exit, and
 * fs_sys_enter_cast/fs_sys_exit_cast for kernels with bpf_rdonly_cast (fs_cfg.file_btf_id),
 * which read a descriptor's file, its inode and superblock with plain loads instead of probe
 * reads: one probe read (the fd table's entry) where there were six. Both read the current
 * task through its BTF pointer where the kernel has one (fs_cfg.task_storage, 5.11+): its
 * pid, tgid and thread_info with plain loads, and one helper call serves them and the task
 * storage. On 6.18 here (AMD EPYC, where every helper call pays for the SRSO "safe RET"
 * mitigation), BPF ns per 64-byte pwrite64: ext4 634 + 230 -> 300 + 199 (entry + exit);
 * tmpfs, a file not reported, 446 + 149 -> 169 + 126. */

/* Per CPU: the thread whose last raw_syscalls entry on this CPU recorded nothing (tid 0:
 * none), and its context switches (task_struct.nvcsw + nivcsw) then. An exit on this CPU by
 * that thread with no switch since is the return of that very call: nothing to look up (the
 * task storage lookup is most of an untraced exit's cost). A thread that moved to another CPU
 * has switched, so a stale entry never matches; an entry that records clears it. Only with
 * task storage (the task's BTF pointer for the counts). */
struct fs_none {
	__u64 switches;
	__u32 tid;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fs_none);
} fs_none SEC(".maps");

/* Note on this CPU that the current thread's (task, tid) entry records nothing (none) or a
 * start (!none). */
static __always_inline void fs_none_set(struct task_struct *task, __u32 tid, bool none)
{
	__u32 zero = 0;
	struct fs_none *n = task ? bpf_map_lookup_elem(&fs_none, &zero) : NULL;

	if (!n)
		return;
	n->tid = none ? tid : 0;
	n->switches = task->nvcsw + task->nivcsw;
}

/* Did the current thread's entry of this call record nothing (fs_none)? */
static __always_inline bool fs_none_sure(struct task_struct *task, __u32 tid)
{
	__u32 zero = 0;
	struct fs_none *n = task ? bpf_map_lookup_elem(&fs_none, &zero) : NULL;

	return n && n->tid == tid && n->switches == task->nvcsw + task->nivcsw;
}

/* The current task's BTF pointer (fs_cfg.task_storage), else NULL. */
static __always_inline struct task_struct *fs_cur_task(void)
{
	return fs_cfg.task_storage ? bpf_get_current_task_btf() : NULL;
}

/* The current thread's pid_tgid (tgid << 32 | pid): task_struct.tgid and .pid of task (the
 * current task's BTF pointer), else bpf_get_current_pid_tgid(). */
static __always_inline __u64 fs_pid_tgid(struct task_struct *task)
{
	if (task)
		return (__u64)task->tgid << 32 | (__u32)task->pid;
	return bpf_get_current_pid_tgid();
}

/* The current syscall is a 32-bit one (int 0x80 or a compat process): its number is in
 * another table. thread_info.status & TS_COMPAT (arch/x86/include/asm/thread_info.h; x86
 * only, where thread_info is the first member of task_struct since 4.9), read through task
 * (the current task's BTF pointer) or with a probe read. */
static __always_inline bool fs_compat_syscall(struct task_struct *task)
{
#if defined(__TARGET_ARCH_x86)
	if (!bpf_core_field_exists(((struct task_struct *)0)->thread_info.status))
		return false;
	if (task)
		return task->thread_info.status & 0x0002; /* TS_COMPAT */
	task = (void *)bpf_get_current_task();
	return BPF_CORE_READ(task, thread_info.status) & 0x0002;
#endif
	return false;
}

/* The file of the current task's descriptor fd when the syscall tracepoints report it (on a
 * filesystem of fs_cfg.sys_magic[], and wanted by -f), else NULL. task: as for
 * fs_fd_file_of; cast: the _cast twin. */
static __always_inline struct file *fs_sys_fd_file(struct task_struct *task, long fd, bool cast)
{
	struct file *file = fs_fd_file_of(task, fd, cast);

	return fs_sys_file_wanted_of(file, cast) ? file : NULL;
}

/* A 32-bit call whose number is a traced call's in the 32-bit table (kind32): not measured
 * (its arguments are in other registers, a position in two), but counted as IL_DROP_COMPAT
 * when it reads, writes or syncs a traced file: its fd is args[0], in bx. A 32-bit open's or
 * AIO call's file is not known at entry: not counted. */
static __always_inline void fs_sys_compat(struct task_struct *task, struct pt_regs *regs,
					  __u8 kind32, bool cast)
{
	if (kind32 != FS_SK_RW && kind32 != FS_SK_RWV && kind32 != FS_SK_FSYNC &&
	    kind32 != FS_SK_SYNC_RANGE)
		return;
	if (fs_sys_fd_file(task, (__u32)regs->bx, cast))
		il_drop(IL_DROP_COMPAT);
}

/* The syscall's entry: regs (struct pt_regs, its arguments: x86_64 di, si, dx, r10, in the
 * order of the syscall's), id its number (include/trace/events/syscalls.h, since 3.6). A
 * read/write family call records the file of its fd (args[0]), the position (args[3] for
 * pread64, preadv and the like, else the file's; preadv2's -1 is the file's too) and the size
 * asked for (args[2] for read/write/pread64/pwrite64; the vectored calls take the bytes they
 * moved, at exit); sync_file_range its offset and nbytes (args[1], args[2]) as position and
 * size. An open records only its start: its file is known at exit. */
static __always_inline int fs_sys_enter_do(struct pt_regs *regs, long id, bool cast)
{
	struct task_struct *task;
	struct file *file = NULL;
	bool rec = false;
	struct fs_sys sc;
	__u64 pid_tgid;
	__s64 pos;

	if ((unsigned long)id >= FS_SYS_NR_MAX || !(fs_cfg.sys_any[id / 64] & (1ULL << (id % 64))))
		return 0;
	sc = fs_cfg.sys[id];
	if (sc.kind == FS_SK_NONE && sc.kind32 == FS_SK_NONE)
		return 0;
	task = fs_cur_task();
	pid_tgid = fs_pid_tgid(task);
	if (!fs_task_wanted(pid_tgid))
		return 0;
	if (fs_compat_syscall(task)) /* its number means another call */
		fs_sys_compat(task, regs, sc.kind32, cast);
	else if (sc.kind == FS_SK_OPEN || sc.kind == FS_SK_AIO || sc.kind == FS_SK_MSYNC)
		rec = true; /* a start without a file */
	else if (sc.kind != FS_SK_NONE)
		rec = (file = fs_sys_fd_file(task, regs->di, cast)) != NULL;
	fs_none_set(task, (__u32)pid_tgid, !rec);
	if (!rec)
		return 0;
	if (!file) /* msync: its address range, where ext4_sync_file_enter finds the file */
		return fs_begin_of(task, pid_tgid, sc.op, NULL, sc.kind == FS_SK_MSYNC ? regs->di : 0,
				   sc.kind == FS_SK_MSYNC ? regs->si : 0, FS_EV_SYSCALL);
	if (sc.kind == FS_SK_SYNC_RANGE)
		return fs_begin_of(task, pid_tgid, sc.op, file, regs->si, regs->dx,
				   sc.flags | FS_EV_SYSCALL);
	pos = sc.pos ? (__s64)regs->r10 : -1;
	if (pos < 0)
		pos = cast ? fs_file_btf(file, true)->f_pos : BPF_CORE_READ(file, f_pos);
	return fs_begin_of(task, pid_tgid, sc.op, file, pos, sc.kind == FS_SK_RW ? regs->dx : 0,
			   sc.flags | FS_EV_SYSCALL);
}

/* The syscall's return: regs, ret its return value; its number is regs->orig_ax (x86). One
 * fs_account for every kind, so the event's path walk is verified once. */
static __always_inline int fs_sys_exit_do(struct pt_regs *regs, long ret, bool cast)
{
	unsigned long id = regs->orig_ax;
	struct task_struct *task;
	__u64 pid_tgid, now;
	struct fs_sys sc;
	struct fs_start s;
	struct file *file;

	if (id >= FS_SYS_NR_MAX || !(fs_cfg.sys_any[id / 64] & (1ULL << (id % 64))))
		return 0;
	sc = fs_cfg.sys[id];
	if (sc.kind == FS_SK_NONE)
		return 0;
	if (sc.kind == FS_SK_AIO)
		return fs_aio_exit(sc.op, ret);
	task = fs_cur_task();
	pid_tgid = fs_pid_tgid(task);
	if (fs_none_sure(task, (__u32)pid_tgid) || !fs_take_of(task, pid_tgid, sc.op, &s, &now) ||
	    sc.kind == FS_SK_MSYNC) /* its syncs were accounted at ext4_sync_file_exit */
		return 0;
	file = (struct file *)s.file;
	if (sc.kind == FS_SK_OPEN) {
		if (ret < 0)
			return 0; /* no file: the filesystem cannot be told */
		file = fs_sys_fd_file(task, ret, cast);
		if (!file)
			return 0;
		ret = 0;
	} else if (sc.kind == FS_SK_RWV) {
		/* Its size is the bytes it moved: summing the iov_len of its iovecs would cost a
		 * read of user memory per iovec at entry (up to UIO_MAXIOV = 1024). */
		s.size = ret > 0 ? ret : 0;
	} else if (sc.kind == FS_SK_FSYNC || sc.kind == FS_SK_SYNC_RANGE) {
		ret = ret < 0 ? ret : 0;
	}
	fs_account(pid_tgid, sc.op, &s, file, ret, NULL, false, task, cast, now);
	return 0;
}

#define FS_SYS_PROGS(suffix, cast)                                                          \
	SEC("tp_btf/sys_enter")                                                             \
	int BPF_PROG(fs_sys_enter##suffix, struct pt_regs *regs, long id)                   \
	{ return fs_sys_enter_do(regs, id, cast); }                                         \
	SEC("tp_btf/sys_exit")                                                              \
	int BPF_PROG(fs_sys_exit##suffix, struct pt_regs *regs, long ret)                   \
	{ return fs_sys_exit_do(regs, ret, cast); }

FS_SYS_PROGS(, false)
FS_SYS_PROGS(_cast, true)

#endif /* IOLAYER_FS_BPF_H */
