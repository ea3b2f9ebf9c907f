/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The filesystem layer's types, shared by its BPF side (bpf/lib/fs.bpf.h) and its user side
 * (user/lib/fs.c) and the tools that compose it. Fixed-width types only.
 */
#ifndef IOLAYER_FS_H
#define IOLAYER_FS_H

#include "lib/shared.h"
#include "lib/path.h"
#include "lib/split.h"

/* File operations, as the R/W/O/F/S column shows them. FS_OP_SYNC_RANGE is sync_file_range(2):
 * it starts or waits for writeback of a byte range without calling the filesystem's fsync,
 * so it is its own operation. */
enum fs_op { FS_OP_READ, FS_OP_WRITE, FS_OP_OPEN, FS_OP_FSYNC, FS_OP_SYNC_RANGE, FS_OP__MAX };
_Static_assert(FS_OP__MAX == SPLIT_OPS, "SPLIT_OPS (lib/split.h): a slot per enum fs_op");

/* Filesystems the layer knows, indexing the per-filesystem rodata of fs.bpf.h. */
enum fs_type { FS_EXT4, FS_XFS, FS_BTRFS, FS_TYPE__MAX };

/* Superblock magics (include/uapi/linux/magic.h): what the tracepoint path compares
 * file->f_inode->i_sb->s_magic with. The ext4 driver also serves ext2/ext3 mounts, under the
 * same magic and the same file operations the fentry/kprobe paths hook. */
#define FS_EXT4_MAGIC 0xEF53ULL
#define FS_XFS_MAGIC 0x58465342ULL
#define FS_BTRFS_MAGIC 0x9123683EULL

/* Flags of struct fs_event. The interface a call came through is FS_EV_SYSCALL (the syscall
 * tracepoints) or FS_EV_URING (io_uring's tracepoints); neither where the method cannot tell
 * (the filesystems' file operations serve syscalls, io_uring, aio and nfsd alike). */
#define FS_EV_NESTED 0x1   /* an fsync run inside a write (O_SYNC/O_DSYNC), not an fsync call */
#define FS_EV_DATASYNC 0x2 /* fdatasync (or an O_DSYNC write's sync): data only */
#define FS_EV_SYSCALL 0x8  /* a system call */
#define FS_EV_URING 0x10   /* an io_uring request, timed from submission to completion */
#define FS_EV_MSYNC 0x20   /* the fsync msync(MS_SYNC) runs on a shared mapping's file (an F row
			    * marked msync: one per file, as the kernel's vfs_fsync_range calls) */

/* The interfaces a summary line is about (fs_uring_stats holds FS_IF_URING's). */
enum fs_iface { FS_IF_ANY, FS_IF_SYSCALL, FS_IF_URING, FS_IF_AIO, FS_IF__MAX };

/* Pseudo-operations keyed in fs_inflight beside enum fs_op: the Linux AIO calls, timed
 * entry to return (their requests cannot be timed at the syscall layer). */
enum fs_aio_call { FS_AIO_SUBMIT = 16, FS_AIO_GETEVENTS = 17 };

/* Pseudo-operation keyed beside them: the thread is inside msync(2) (start: its address as
 * offset, its length as size; no file). Never accounted itself: the syncs msync runs are
 * (FS_OP_FSYNC, FS_EV_MSYNC), each with its mapping's file. */
#define FS_MSYNC_CALL 18

/* In-flight slots of a thread in task-local storage: one per enum fs_op, then the AIO calls. */
#define FS_SLOTS 8
#define FS_SLOT(op) ((op) < FS_OP__MAX ? (op) : FS_OP__MAX + (op) - FS_AIO_SUBMIT)
_Static_assert((FS_SLOTS & (FS_SLOTS - 1)) == 0 && FS_SLOT((int)FS_AIO_GETEVENTS) < FS_SLOTS &&
	       FS_SLOT(FS_MSYNC_CALL) < FS_SLOTS,
	       "FS_SLOTS: a power of two (slots are masked with FS_SLOTS - 1) above every slot");

/* A thread's call in flight: in fs_inflight by (thread, operation), or in its task-local
 * storage (fs_tasks: struct fs_task, slot FS_SLOT(op)). User space reads ts to tell how long
 * a blocked call has been in flight (il_fs_stuck_times()). No padding: it is built on the
 * BPF stack and handed to bpf_map_update_elem(), and kernels before 6.5 reject a helper
 * reading uninitialised stack bytes, even for root (commit 6715df8d5d24, "bpf: Allow reads
 * from uninit stack"). */
struct fs_key {
	__u32 tid;
	__u32 op; /* enum fs_op, or a pseudo-operation above */
};

struct fs_start {
	__u64 ts;     /* bpf_ktime_get_ns() at entry (CLOCK_MONOTONIC); 0: a free slot */
	__u64 file;   /* struct file *; 0 for an openat(2) until it returns its fd */
	__s64 offset; /* bytes */
	__u64 size;   /* bytes asked for */
	__u64 flags;  /* FS_EV_NESTED, FS_EV_DATASYNC */
};

/* A thread's task-local storage (map fs_tasks, fs_cfg.task_storage): its calls in flight
 * and, when the time split keeps its state there too (split_cfg.task_storage), the split's:
 * one bpf_task_storage_get() at a call's entry and one at its return find both, where each
 * layer's own map took two (each a helper call, about 15 ns here). */
struct fs_task {
	struct fs_start call[FS_SLOTS];
	struct split_task split;
};

/* What fs_sys_enter/fs_sys_exit (raw_syscalls:sys_enter/exit) do with a syscall. */
enum fs_sys_kind {
	FS_SK_NONE,  /* not traced */
	FS_SK_RW,    /* read, write, pread64, pwrite64: fd, buf, count[, pos] */
	FS_SK_RWV,   /* readv, writev, preadv, pwritev, preadv2, pwritev2: fd, vec, vlen[, pos] */
	FS_SK_OPEN,  /* open, creat, openat, openat2: the file is the returned fd's */
	FS_SK_FSYNC, /* fsync, fdatasync: fd */
	FS_SK_AIO,   /* io_submit, io_getevents, io_pgetevents: counted per process (fs_aio) */
	FS_SK_SYNC_RANGE, /* sync_file_range: fd, offset, nbytes, flags */
	FS_SK_MSYNC, /* msync: addr, len, flags: marks the thread (FS_MSYNC_CALL) for the syncs */
};

/* One traced syscall, by its number (fs_cfg.sys[nr]). */
struct fs_sys {
	__u8 kind;   /* enum fs_sys_kind */
	__u8 op;     /* enum fs_op, or enum fs_aio_call for FS_SK_AIO */
	__u8 flags;  /* FS_EV_* of every such call (FS_EV_DATASYNC for fdatasync) */
	__u8 pos;    /* 1: the position is args[3] (pread64, preadv, ...); 0: the file's */
	__u8 kind32; /* enum fs_sys_kind of the 32-bit syscall of this number (counted, not
		      * measured: IL_DROP_COMPAT) */
	__u8 pad[3];
};

/* Syscall numbers fs_cfg.sys[] covers (x86_64's and i386's stay below 512; x32's, with bit
 * 30 set, are not traced). */
#define FS_SYS_NR_MAX 512

/* The layer's settings, one struct in .rodata (`fs_cfg`), filled by user space before load
 * (user/lib/fs.c). 0 means "any" for every filter. */
struct fs_cfg {
	/* Bit nr: sys[nr] traces a call (kind or kind32). The raw_syscalls programs, run by
	 * every syscall of the machine, test it first: one cache line for the calls they do not
	 * trace (futex, epoll_wait, io_uring_enter...), where sys[] spans 64. */
	__u64 sys_any[FS_SYS_NR_MAX / 64];
	__u32 targ_tgid;  /* only this process (all its threads) */
	__u32 targ_tid;   /* only this thread */
	__u32 self_tgid;  /* never this process (the tracer, whose output may be on a traced fs) */
	__u32 targ_dev;   /* with targ_ino: only this file (kernel dev_t encoding) */
	__u64 targ_ino;
	__u64 min_ns;     /* send an event when latency >= this, ns; ~0: never (summary only) */
	/* Superblock magics (FS_*_MAGIC) whose files the syscall tracepoints report; 0 = unused
	 * slot. A filesystem traced by fentry or kprobe is left out, so nothing counts twice. */
	__u64 sys_magic[FS_TYPE__MAX];
	/* Superblock magics of every traced filesystem, whichever its method: the
	 * sync_file_range tracepoints serve them all (no other program sees that call). */
	__u64 sync_range_magic[FS_TYPE__MAX];
	/* 1: in-flight calls live in task-local storage (fs_tasks: bpf_task_storage_get on
	 * bpf_get_current_task_btf(), allowed to tracepoint programs since 5.11); 0: in the
	 * (thread, operation) hash fs_inflight. */
	__u32 task_storage;
	/* 1: the syncs run inside O_SYNC/O_DSYNC writes (FS_EV_NESTED) are not fsync calls: they
	 * go to fs_stats[FS_STATS_NESTED], not to fs_stats[FS_OP_FSYNC], and not to attribution
	 * (the write's time already holds theirs); 0: counted as fsyncs (fsslower's summary). */
	__u32 nested_apart;
	/* The kernel's BTF id of struct file where its tp_btf programs may call the kfunc
	 * bpf_rdonly_cast (6.2+; user space then attaches the _cast twins of the raw_syscalls
	 * programs, which read a descriptor's file with plain loads); 0 otherwise. */
	__u32 file_btf_id;
	/* The kernel's BTF id of struct task_struct, with file_btf_id: the _cast twins read the
	 * task's files through an untrusted cast of it, as a load of a pointer from the trusted
	 * task pointer costs the verifier (6.3+) three searches of vmlinux's BTF by name
	 * (btf_nested_type_is_trusted), ~3 ms of start-up per program. */
	__u32 task_btf_id;
	/* The kernel's BTF id of struct list_head, with file_btf_id: the _cast twins read a
	 * descriptor's entry in the fd table (a struct file *) as the first member of a list_head
	 * cast onto it, a load the JIT guards (BPF_PROBE_MEM) instead of a bpf_probe_read_kernel()
	 * call. */
	__u32 list_head_btf_id;
	struct fs_sys sys[FS_SYS_NR_MAX]; /* the tracepoint method's syscalls, by number */
};

/* What the -p process's threads that exited meanwhile had done (map fs_exited_io, per CPU),
 * from their task_struct.ioac at sched_process_exit: user/lib/children.c takes it off the
 * process's own counters, to which the kernel adds an exited thread's as it adds a reaped
 * child's; the threads were traced, the children not. */
struct fs_exited_io {
	__u64 calls;  /* read and write system calls: ioac.syscr + syscw (CONFIG_TASK_XACCT) */
	__u64 rbytes; /* ioac.read_bytes, bytes (CONFIG_TASK_IO_ACCOUNTING) */
	__u64 wbytes; /* ioac.write_bytes, bytes */
};

/* One operation that took at least the threshold; sent through the ring buffer. */
struct fs_event {
	__u64 end_ns;    /* when the call returned, bpf_ktime_get_ns() (CLOCK_MONOTONIC), ns */
	__u64 delta_ns;  /* latency: entry to return of the traced call, ns */
	__s64 offset;    /* file position at entry, bytes (R/W; S: start of the range; 0 for O/F) */
	__s64 ret;       /* return value: bytes moved (R/W), 0 or -errno */
	__u64 size;      /* bytes asked for (R/W; readv & co. at the syscall tracepoints: bytes
			  * moved), S: length of the range (0: to the end of the file), 0 for O/F */
	__u64 ino;       /* inode number (inode.i_ino) */
	__u32 dev;       /* superblock's dev_t, kernel encoding (major << 20 | minor) */
	__u32 tgid;      /* process id */
	__u32 tid;       /* thread id */
	__u8 op;         /* enum fs_op */
	__u8 flags;      /* FS_EV_* */
	__u8 pad[2];
	/* Where its time went (lib/split.h), with split_cfg.on (fsslower --split); zeros
	 * otherwise and for io_uring requests. */
	struct split_result split;
	char comm[IL_TASK_COMM_LEN];
	struct il_path path; /* the file's path: mount, depth, marks, bytes of names[] used */
	/* The names of the path (bpf/lib/path.h). Only path.len bytes of names[] are sent: a
	 * record is offsetof(struct fs_event, names) + path.len bytes long. */
	char names[IL_PATH_NAMES];
};

/* Per-operation totals of every traced call (slow or not), one per-CPU array slot per op;
 * user space sums the CPUs. slots[] is a log2 histogram of latency in ns (il_hist_slot). */
/* fs_stats' entry after the operations': the nested syncs, with fs_cfg.nested_apart. */
#define FS_STATS_NESTED FS_OP__MAX

struct fs_op_stats {
	__u64 count;     /* calls completed */
	__u64 slow;      /* of which at or above the threshold (sent as events) */
	__u64 total_ns;  /* sum of latencies, ns */
	__u64 max_ns;    /* largest latency, ns */
	__u64 slots[IL_HIST_SLOTS];
};

/* Linux AIO calls of one process (map fs_aio, key: tgid). The requests themselves cannot be
 * timed at the syscall layer: io_submit's return value counts them. */
struct fs_aio_stats {
	char comm[IL_TASK_COMM_LEN]; /* the process's name when first seen */
	__u64 submit_calls;          /* io_submit calls that returned */
	__u64 submit_failed;         /* of which returned an error */
	__u64 requests;              /* iocbs io_submit accepted: the sum of its return values */
	__u64 submit_ns;             /* time spent in io_submit, ns */
	__u64 getevents_calls;       /* io_getevents/io_pgetevents calls that returned */
	__u64 events;                /* completions they reaped */
	__u64 getevents_ns;          /* time spent in them, ns */
};

#endif /* IOLAYER_FS_H */
