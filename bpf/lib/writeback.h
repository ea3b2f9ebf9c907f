/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The writeback layer's types, shared by its BPF side (bpf/lib/writeback.bpf.h), its user
 * side (user/lib/writeback.c) and the tools that compose it. Fixed-width types only.
 */
#ifndef IOLAYER_WRITEBACK_H
#define IOLAYER_WRITEBACK_H

#include "lib/shared.h"
#include "lib/path.h"

/* Which function a row is about (rodata wb_func, struct wb_event.func). */
enum wb_func {
	WB_FUNC_EXT4_WRITEPAGES, /* ext4_writepages(mapping, wbc) */
	WB_FUNC_DO_WRITEPAGES,   /* do_writepages(mapping, wbc) */
	WB_FUNC_GENERIC,         /* any int-returning kernel function (fexit/kretprobe only) */
};

/* The layer's settings, one struct in .rodata (`wb_cfg`), filled by user space before load
 * (user/lib/writeback.c). */
#define WB_MAX_STACKS 16384 /* wb_stacks buckets with want_stack (il_wb_want_stack); else 1 */

struct wb_cfg {
	__u32 targ_tgid;   /* only this process; 0: all */
	__u32 targ_tid;    /* only this thread; 0: all */
	__u32 func;        /* enum wb_func */
	__u32 nargs;       /* arguments of the traced function (fexit reads ret after them), 0..6 */
	__u8 has_wbc;      /* the function is f(struct address_space *, struct writeback_control *) */
	__u8 errors_only;  /* rows only for non-zero returns */
	__u8 want_stack;   /* kernel stack (taken at entry) on non-zero returns */
	__u8 want_rows;    /* 0: summary only (no ring-buffer rows) */
};

#define WB_NO_STACK (-1) /* wb_event.stack_id when no stack was taken */

/*
 * One call, sent through the ring buffer `wb_events` when it returns.
 * sync_mode is the kernel's enum writeback_sync_modes (0 WB_SYNC_NONE, 1 WB_SYNC_ALL) read
 * from struct writeback_control at entry, -1 when the function has no wbc (generic mode).
 * pages: pages written by the call, from ext4:ext4_writepages_result's pages_written or as
 * wbc->nr_to_write at entry minus at return; -1 when unknown.
 * ret_known is 0 where the attach method cannot see the return value (do_writepages seen
 * through the writeback:writeback_single_inode* tracepoints).
 */
struct wb_event {
	__u64 end_ns;      /* bpf_ktime_get_ns() at return */
	__u64 lat_ns;      /* entry to return, ns */
	__u64 ino;         /* inode number, 0 when unknown */
	__s64 pages;       /* pages written, -1 unknown */
	__u32 pid;         /* tgid: the process */
	__u32 tid;         /* the thread */
	__u32 dev;         /* super_block.s_dev, kernel encoding (major << 20 | minor); 0 unknown */
	__s32 ret;         /* return value, signed (-12 = -ENOMEM) */
	__s32 sync_mode;   /* 0 WB_SYNC_NONE, 1 WB_SYNC_ALL, -1 unknown */
	__s32 stack_id;    /* key in wb_stacks, WB_NO_STACK when none */
	__u8 func;         /* enum wb_func */
	__u8 ret_known;    /* 1 when ret is the real return value */
	__u8 pad[6];
	char comm[IL_TASK_COMM_LEN];
	/* The path of the inode through its first dentry, up to its filesystem's root (no mount
	 * is known here); IL_PATH_NONE when the inode or its dentry is unknown. Only path.len
	 * bytes of names[] are sent (bpf/lib/path.h). */
	struct il_path path;
	char names[IL_PATH_NAMES];
};

/* Key and value of the in-kernel summary `wb_stats`: every call that passed the pid/tid
 * filters is counted here, whether or not its row was printed. */
struct wb_stat_key {
	__s32 ret;
	__s32 sync_mode;
	__u32 func;
	__u32 ret_known;
};

struct wb_stat {
	__u64 count;
	__u64 total_ns; /* sum of latencies, ns */
	__u64 max_ns;   /* largest latency, ns */
};

#endif
