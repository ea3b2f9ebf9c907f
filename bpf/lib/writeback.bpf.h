/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The writeback layer: what ext4_writepages / do_writepages (or any int-returning kernel
 * function) return, call by call. Maps, filters and handlers live here once, with one
 * program per attach method; user space turns on the programs of the method it chose
 * (user/lib/attach.h):
 *
 *   fentry/fexit        wb_fentry + wb_fexit          on the function itself (target set by user space)
 *   kprobe/kretprobe    wb_kprobe + wb_kretprobe      on the function itself
 *   tp_btf / raw_tp     ext4:ext4_writepages + ext4:ext4_writepages_result      (ext4_writepages)
 *                       writeback:writeback_single_inode_start + _single_inode  (do_writepages,
 *                       flusher path only; the return value is not carried)
 *
 * Entry and return are paired per thread in `wb_starts`; each return updates the in-kernel
 * summary `wb_stats` and, unless filtered (wb_cfg.errors_only), sends a struct wb_event.
 */
#ifndef IOLAYER_WRITEBACK_BPF_H
#define IOLAYER_WRITEBACK_BPF_H

#include "lib/common.bpf.h"
#include "lib/writeback.h"
#include "lib/path.bpf.h"

/* Settings, filled by user space before load (struct wb_cfg, user/lib/writeback.c). */
const volatile struct wb_cfg wb_cfg = {};

/* What an entry leaves for its return (key: thread id). */
struct wb_start {
	__u64 ts;            /* bpf_ktime_get_ns() at entry */
	__u64 wbc;           /* struct writeback_control *, 0 when none */
	__u64 inode;         /* struct inode *, 0 when none */
	__s64 nr_to_write;   /* wbc->nr_to_write at entry */
	__s32 sync_mode;     /* wbc->sync_mode at entry, -1 when no wbc */
	__s32 stack_id;      /* kernel stack at entry (wb_cfg.want_stack), < 0 when none */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, struct wb_start);
} wb_starts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct wb_stat_key);
	__type(value, struct wb_stat);
} wb_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} wb_events SEC(".maps");

/* wb_events' last reader wakeup (il_wakeup_flags()). */
__u64 wb_last_wakeup = 0;

/* Where an event is built before it is copied into wb_events with only the bytes its path
 * uses. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct wb_event);
} wb_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, WB_MAX_STACKS);
	__type(key, __u32);
	__uint(value_size, 127 * sizeof(__u64));
} wb_stacks SEC(".maps");

static __always_inline bool wb_filtered(__u64 pid_tgid)
{
	if (wb_cfg.targ_tgid && (pid_tgid >> 32) != wb_cfg.targ_tgid)
		return true;
	if (wb_cfg.targ_tid && (__u32)pid_tgid != wb_cfg.targ_tid)
		return true;
	return !il_cg_wanted();
}

/*
 * The inode's first dentry alias (inode->i_dentry, dentry->d_u.d_alias; include/linux/fs.h,
 * include/linux/dcache.h), NULL when it has none.
 */
static __always_inline struct dentry *wb_inode_dentry(struct inode *inode)
{
	struct hlist_node *first = BPF_CORE_READ(inode, i_dentry.first);

	if (!first)
		return NULL;
	return (void *)first - bpf_core_field_offset(struct dentry, d_u.d_alias);
}

/* Entry of a call: remember when, and what wbc said then. inode/wbc may be NULL.
 * The stack is taken here rather than at return: a kretprobe's stack on older kernels
 * (before 5.15) ends in the kretprobe trampoline, and the caller's chain is the same at
 * both ends. Identical stacks share one slot of wb_stacks. */
static __always_inline int wb_enter(void *ctx, struct inode *inode, struct writeback_control *wbc)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct wb_start s = {}, *old;

	if (wb_filtered(id))
		return 0;
	s.ts = bpf_ktime_get_ns();
	s.inode = (__u64)inode;
	s.wbc = (__u64)wbc;
	s.sync_mode = -1;
	s.stack_id = wb_cfg.want_stack ? bpf_get_stackid(ctx, &wb_stacks, 0) : WB_NO_STACK;
	if (wbc) {
		s.nr_to_write = BPF_CORE_READ(wbc, nr_to_write);
		s.sync_mode = BPF_CORE_READ(wbc, sync_mode);
	}
	old = bpf_map_lookup_elem(&wb_starts, &tid);
	if (old) {
		/* The functions traced here do not recurse: an open entry means its return
		 * was missed (kretprobe out of instances, or tracing began mid-call). */
		il_drop(IL_DROP_MISSED_RETURN);
		*old = s;
		return 0;
	}
	if (bpf_map_update_elem(&wb_starts, &tid, &s, BPF_ANY))
		il_drop(IL_DROP_MAP_FULL);
	return 0;
}

/*
 * Return of a call. ret_known: ret is the real return value. pages: pages written as the
 * kernel reports them, or -1 to derive them from wbc->nr_to_write (entry minus now).
 */
static __always_inline int wb_exit(void *ctx, int ret, bool ret_known, __s64 pages)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct wb_stat_key key = {};
	struct wb_stat zero = {}, *st;
	struct wb_start *s;
	struct wb_event *e;
	struct inode *inode;
	__u32 slot = 0;
	__u64 now, lat;

	if (wb_filtered(id))
		return 0;
	s = bpf_map_lookup_elem(&wb_starts, &tid);
	if (!s) {
		il_drop(IL_DROP_MISSED_START);
		return 0;
	}
	now = bpf_ktime_get_ns();
	if (now < s->ts) {
		il_drop(IL_DROP_BACKWARDS);
		bpf_map_delete_elem(&wb_starts, &tid);
		return 0;
	}
	lat = now - s->ts;
	if (pages < 0 && s->wbc) {
		struct writeback_control *wbc = (void *)s->wbc;

		pages = s->nr_to_write - BPF_CORE_READ(wbc, nr_to_write);
	}

	key.ret = ret_known ? ret : 0;
	key.sync_mode = s->sync_mode;
	key.func = wb_cfg.func;
	key.ret_known = ret_known;
	st = il_lookup_or_init(&wb_stats, &key, &zero);
	if (st) {
		__sync_fetch_and_add(&st->count, 1);
		__sync_fetch_and_add(&st->total_ns, lat);
		if (lat > st->max_ns)
			st->max_ns = lat; /* racy across CPUs; a lost max is off by one call */
	}

	if (!wb_cfg.want_rows || (wb_cfg.errors_only && (!ret_known || ret == 0)))
		goto out;
	e = bpf_map_lookup_elem(&wb_scratch, &slot);
	if (!e)
		goto out;
	e->end_ns = now;
	e->lat_ns = lat;
	e->pid = id >> 32;
	e->tid = tid;
	e->ret = key.ret;
	e->ret_known = ret_known;
	e->sync_mode = s->sync_mode;
	e->pages = pages;
	e->func = wb_cfg.func;
	e->stack_id = WB_NO_STACK;
	e->ino = 0;
	e->dev = 0;
	inode = (void *)s->inode;
	il_path_fill(&e->path, e->names, inode ? wb_inode_dentry(inode) : NULL, NULL);
	if (inode) {
		e->ino = BPF_CORE_READ(inode, i_ino);
		e->dev = BPF_CORE_READ(inode, i_sb, s_dev);
	}
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	if (wb_cfg.want_stack && ret_known && ret != 0) {
		if (s->stack_id < 0)
			il_drop(IL_DROP_STACK);
		else
			e->stack_id = s->stack_id;
	}
	il_ringbuf_output(&wb_events, e,
			  il_path_event_size(__builtin_offsetof(struct wb_event, names), &e->path),
			  il_wakeup_flags(&wb_events, &wb_last_wakeup, now));
out:
	bpf_map_delete_elem(&wb_starts, &tid);
	return 0;
}

/* ---- fentry/fexit: the function itself ---------------------------------------------- */

/* f(struct address_space *mapping, struct writeback_control *wbc): the inode is
 * mapping->host. Other functions (generic mode) give neither. */
static __always_inline int wb_enter_args(void *ctx, __u64 a0, __u64 a1)
{
	struct address_space *mapping = (void *)a0;

	if (!wb_cfg.has_wbc)
		return wb_enter(ctx, NULL, NULL);
	return wb_enter(ctx, BPF_CORE_READ(mapping, host), (void *)a1);
}

SEC("fentry")
int wb_fentry(unsigned long long *ctx)
{
	if (!wb_cfg.has_wbc)
		return wb_enter(ctx, NULL, NULL);
	return wb_enter_args(ctx, ctx[0], ctx[1]);
}

/* The return value follows the wb_cfg.nargs arguments in ctx. The verifier refuses a load from
 * ctx at an offset computed at run time (and clang merges per-case constant loads into one
 * such load), so the slot is copied with a helper instead. */
SEC("fexit")
int wb_fexit(unsigned long long *ctx)
{
	__u64 ret = 0;

	bpf_probe_read_kernel(&ret, sizeof(ret), ctx + (wb_cfg.nargs & 7));
	return wb_exit(ctx, (int)ret, true, -1);
}

/* ---- kprobe/kretprobe: the function itself ------------------------------------------ */

SEC("kprobe")
int BPF_KPROBE(wb_kprobe, void *a0, void *a1)
{
	return wb_enter_args(ctx, (__u64)a0, (__u64)a1);
}

SEC("kretprobe")
int BPF_KRETPROBE(wb_kretprobe, long ret)
{
	return wb_exit(ctx, (int)ret, true, -1);
}

/* ---- tracepoints: ext4_writepages ----------------------------------------------------
 * include/trace/events/ext4.h: ext4_writepages(inode, wbc) at the top of
 * ext4_do_writepages(), ext4_writepages_result(inode, wbc, ret, pages_written) at its end.
 * Returns taken before them (e.g. -EIO on a shut-down filesystem) are not seen. */

/* One handler body under a tp_btf and a raw_tp section: same arguments, the tp_btf one typed
 * by BTF, the raw_tp one (kernels without tp_btf) reading them as plain words. */
#define WB_TP_TWINS(tp, name, body, args...)					\
	SEC("tp_btf/" #tp) int BPF_PROG(name##_btf, args) body			\
	SEC("raw_tp/" #tp) int BPF_PROG(name##_raw, args) body

WB_TP_TWINS(ext4_writepages, wb_ext4_wp, { return wb_enter(ctx, inode, wbc); },
	    struct inode *inode, struct writeback_control *wbc)
WB_TP_TWINS(ext4_writepages_result, wb_ext4_wpr, { return wb_exit(ctx, ret, true, pages_written); },
	    struct inode *inode, struct writeback_control *wbc, int ret, int pages_written)

/* ---- tracepoints: do_writepages, flusher path ----------------------------------------
 * include/trace/events/writeback.h: writeback_single_inode_start(inode, wbc, nr_to_write)
 * and writeback_single_inode(inode, wbc, nr_to_write) bracket the do_writepages() call of
 * __writeback_single_inode() (fs/fs-writeback.c). They carry no return value, and the
 * fsync path (filemap_fdatawrite_wbc -> do_writepages) has no such bracket. */

WB_TP_TWINS(writeback_single_inode_start, wb_wsi_start, { return wb_enter(ctx, inode, wbc); },
	    struct inode *inode, struct writeback_control *wbc, unsigned long nr_to_write)
WB_TP_TWINS(writeback_single_inode, wb_wsi, { return wb_exit(ctx, 0, false, -1); },
	    struct inode *inode, struct writeback_control *wbc, unsigned long nr_to_write)

#endif /* IOLAYER_WRITEBACK_BPF_H */
