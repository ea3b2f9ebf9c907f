/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The filesystem layer's user side (see layers.h; kernel side bpf/lib/fs.bpf.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include "bpfobj.h"
#include "btf.h"
#include "escape.h"
#include "hist.h"
#include "layers/fs.h"
#include "layers/split.h"
#include "layers/who.h"
#include "log.h"
#include "mounts.h"
#include "path.h"
#include "probes.h"
#include "procstat.h"
#include "util.h"

const struct il_fs_info il_fs_table[FS_TYPE__MAX] = {
	[FS_EXT4] = { "ext4", FS_EXT4_MAGIC, "ext4 file operations",
		      { "ext4_file_read_iter", "ext4_file_write_iter", "ext4_file_open", "ext4_sync_file" } },
	[FS_XFS] = { "xfs", FS_XFS_MAGIC, "xfs file operations",
		     { "xfs_file_read_iter", "xfs_file_write_iter", "xfs_file_open", "xfs_file_fsync" } },
	[FS_BTRFS] = { "btrfs", FS_BTRFS_MAGIC, "btrfs file operations",
		       { "btrfs_file_read_iter", "btrfs_file_write_iter", "btrfs_file_open", "btrfs_sync_file" } },
};

/* Also the suffixes of the layer's program names (fs_kprobe_read, fs_fentry_ext4_fsync). */
const char *const il_fs_op_names[FS_OP__MAX] = { "read", "write", "open", "fsync", "sync_range" };
const char *const il_fs_op_rows[FS_OP__MAX] = { "read", "write", "open", "fsync", "sync_file_range" };
const char il_fs_op_letters[FS_OP__MAX] = { 'R', 'W', 'O', 'F', 'S' };
static const char *const iface_names[FS_IF__MAX] = { "-", "syscall", "io_uring", "aio" };

/* The syscalls of the tracepoint method, all taken by fs_sys_enter and fs_sys_exit on
 * raw_syscalls:sys_enter/exit, told apart by number through fs_cfg.sys[]. x86_64's numbers
 * (the BPF side reads x86 registers); nr -1: the C library does not know the call. */
#define SYNC_RANGE_EVENT "sync_file_range"
#define MSYNC_EVENT "msync"
#ifndef SYS_openat2 /* C libraries older than it; the same number on every architecture */
#define SYS_openat2 437
#endif
#ifndef SYS_io_pgetevents
#define SYS_io_pgetevents -1
#endif
/* nr32: the number of the same call in the 32-bit (i386) table, arch/x86/entry/syscalls/
 * syscall_32.tbl: such calls are counted, not measured (IL_DROP_COMPAT). */
static const struct { const char *name; int nr, nr32; struct fs_sys sys; } sys_calls[] = {
	{ "read", SYS_read, 3, { FS_SK_RW, FS_OP_READ, 0, 0 } },
	{ "write", SYS_write, 4, { FS_SK_RW, FS_OP_WRITE, 0, 0 } },
	{ "pread64", SYS_pread64, 180, { FS_SK_RW, FS_OP_READ, 0, 1 } },
	{ "pwrite64", SYS_pwrite64, 181, { FS_SK_RW, FS_OP_WRITE, 0, 1 } },
	{ "readv", SYS_readv, 145, { FS_SK_RWV, FS_OP_READ, 0, 0 } },
	{ "writev", SYS_writev, 146, { FS_SK_RWV, FS_OP_WRITE, 0, 0 } },
	{ "preadv", SYS_preadv, 333, { FS_SK_RWV, FS_OP_READ, 0, 1 } },
	{ "pwritev", SYS_pwritev, 334, { FS_SK_RWV, FS_OP_WRITE, 0, 1 } },
	{ "preadv2", SYS_preadv2, 378, { FS_SK_RWV, FS_OP_READ, 0, 1 } },
	{ "pwritev2", SYS_pwritev2, 379, { FS_SK_RWV, FS_OP_WRITE, 0, 1 } },
	{ "open", SYS_open, 5, { FS_SK_OPEN, FS_OP_OPEN, 0, 0 } },
	{ "creat", SYS_creat, 8, { FS_SK_OPEN, FS_OP_OPEN, 0, 0 } },
	{ "openat", SYS_openat, 295, { FS_SK_OPEN, FS_OP_OPEN, 0, 0 } },
	{ "openat2", SYS_openat2, 437, { FS_SK_OPEN, FS_OP_OPEN, 0, 0 } },
	{ "fsync", SYS_fsync, 118, { FS_SK_FSYNC, FS_OP_FSYNC, 0, 0 } },
	{ "fdatasync", SYS_fdatasync, 148, { FS_SK_FSYNC, FS_OP_FSYNC, FS_EV_DATASYNC, 0 } },
	{ "sync_file_range", SYS_sync_file_range, 314, { FS_SK_SYNC_RANGE, FS_OP_SYNC_RANGE, 0, 0 } },
	{ "io_submit", SYS_io_submit, 248, { FS_SK_AIO, FS_AIO_SUBMIT, 0, 0 } },
	{ "io_getevents", SYS_io_getevents, 247, { FS_SK_AIO, FS_AIO_GETEVENTS, 0, 0 } },
	{ "io_pgetevents", SYS_io_pgetevents, 385, { FS_SK_AIO, FS_AIO_GETEVENTS, 0, 0 } },
	{ "msync", SYS_msync, 144, { FS_SK_MSYNC, FS_MSYNC_CALL, 0, 0 } },
};
/* With them, optional (io_uring may be built out, and each kernel has one name of the submit
 * tracepoint): io_uring's tracepoints, programs fs_uring_NAME; where the tracepoint has the
 * arguments of its tp_btf twin fs_uring_NAME_btf (btf_nargs of them), the twin, which spares
 * the kernel building a perf record per request. */
static const struct { const char *name; int btf_nargs; } uring_events[] = {
	{ "submit_req", 1 },  /* (struct io_kiocb *req), 6.1+ */
	{ "submit_sqe", -1 }, /* before 6.1, shapes that changed: classic only */
	{ "complete", 3 },    /* (struct io_ring_ctx *, void *req, struct io_uring_cqe *) */
};

static const char *limits_fn =
	"entry to return of the filesystem's read_iter, write_iter, open and fsync functions "
	"(sync_file_range at its syscall tracepoints): every caller (syscalls, io_uring, aio, "
	"nfsd, msync: an F row marked msync), not mmap page faults or writeback";
static const char *limits_tp =
	"measures at the syscall boundary (read, write, pread64, pwrite64, readv, writev, preadv, "
	"pwritev, preadv2, pwritev2, open, creat, openat, openat2, fsync, fdatasync, "
	"sync_file_range; ext4_sync_file for O_SYNC writes on ext4), and io_uring's read, write, "
	"fsync, sync_file_range and openat requests from submission to completion (where the "
	"submit tracepoint carries the request: 5.14 and later, and Debian's 5.10): latency includes fd lookup and locking; the size of a vectored call or an "
	"io_uring request is the bytes it moved; Linux AIO requests are only counted, per "
	"process, from io_submit's return value (a line says so); cannot see "
	"sendfile/splice/copy_file_range, failed opens, mmap writeback, msync's sync of a "
	"mapping on xfs/btrfs, or the sync inside an O_SYNC write on xfs/btrfs; msync's sync "
	"of an ext4 mapping is an F row marked msync where the kernel has bpf_find_vma (5.17+), "
	"else counted as not measured (a line says so)";

int il_fs_by_name(const char *name)
{
	for (int i = 0; i < FS_TYPE__MAX; i++)
		if (!strcmp(name, il_fs_table[i].name))
			return i;
	return -1;
}

struct fs_cfg *il_fs_cfg(struct bpf_object *obj)
{
	struct fs_cfg *c = il_obj_rodata_must(obj, "fs_cfg", sizeof(*c));

	c->self_tgid = getpid();
	il_who_default(obj); /* attribution off unless the tool turns it on */
	il_split_default(obj); /* the time split too (il_split_cfg) */
	/* The store the BPF side does not use shrinks to one entry (the task-storage map, which
	 * older kernels cannot make at all, into an array) */
	c->task_storage = il_can_task_storage();
	if (c->task_storage)
		il_obj_map_size(obj, "fs_inflight", 1);
	else
		il_obj_task_storage_stub(obj, "fs_tasks");
	il_debug("fs layer: in-flight calls in %s", c->task_storage ? "task-local storage" : "a hash map");
	/* The raw_syscalls programs' _cast twins read a descriptor's file with plain loads:
	 * where tp_btf programs may call bpf_rdonly_cast (6.2+) */
	if (c->task_storage && il_btf_vmlinux_id("bpf_rdonly_cast", BTF_KIND_FUNC)) {
		c->file_btf_id = il_btf_vmlinux_id("file", BTF_KIND_STRUCT);
		c->task_btf_id = il_btf_vmlinux_id("task_struct", BTF_KIND_STRUCT);
		c->list_head_btf_id = il_btf_vmlinux_id("list_head", BTF_KIND_STRUCT);
		if (!c->task_btf_id || !c->list_head_btf_id)
			c->file_btf_id = 0;
	}
	il_debug("fs layer: a descriptor's file read with %s",
		 c->file_btf_id ? "plain loads (bpf_rdonly_cast)" : "probe reads");
	for (size_t i = 0; i < IL_ARRAY_SIZE(sys_calls); i++) {
		int nr = sys_calls[i].nr;

		if (nr >= FS_SYS_NR_MAX || sys_calls[i].nr32 >= FS_SYS_NR_MAX)
			il_die("internal error: syscall %s is number %d (%d), past FS_SYS_NR_MAX",
			       sys_calls[i].name, nr, sys_calls[i].nr32);
		if (nr >= 0) {
			__u8 kind32 = c->sys[nr].kind32;

			c->sys[nr] = sys_calls[i].sys;
			c->sys[nr].kind32 = kind32;
			c->sys_any[nr / 64] |= 1ULL << (nr % 64);
		}
		c->sys[sys_calls[i].nr32].kind32 = sys_calls[i].sys.kind;
		c->sys_any[sys_calls[i].nr32 / 64] |= 1ULL << (sys_calls[i].nr32 % 64);
	}
	return c;
}

void il_fs_plan(struct bpf_object *obj, int t, struct il_plan *p)
{
	const struct il_fs_info *fs = &il_fs_table[t];
	const struct fs_cfg *c = il_obj_rodata_must(obj, "fs_cfg", sizeof(struct fs_cfg));
	char name[64], target[IL_TARGET_LEN];

	il_plan_init(p, fs->what);
	for (int m = 0; m < 2; m++) {
		il_plan_option(p, m ? IL_M_KPROBE : IL_M_FENTRY, limits_fn);
		for (int op = 0; op < FS_OP__MAX; op++) {
			if (!fs->funcs[op]) /* sync_file_range: no file operation of its own */
				continue;
			if (m)
				snprintf(name, sizeof(name), "fs_kprobe_%s", il_fs_op_names[op]);
			else
				snprintf(name, sizeof(name), "fs_fentry_%s_%s", fs->name, il_fs_op_names[op]);
			il_plan_add(p, obj, name, fs->funcs[op], false);
			if (m)
				snprintf(name, sizeof(name), "fs_kretprobe_%s", il_fs_op_names[op]);
			else
				snprintf(name, sizeof(name), "fs_fexit_%s_%s", fs->name, il_fs_op_names[op]);
			il_plan_add(p, obj, name, fs->funcs[op], false);
		}
		/* No file operation runs sync_file_range: fentry and kprobe take it at its syscall
		 * tracepoints too (optional: without them the option still fits). A program listed
		 * by several plans is attached once, so no call is counted twice. */
		il_plan_add(p, obj, "fs_sys_enter_" SYNC_RANGE_EVENT, "syscalls:sys_enter_" SYNC_RANGE_EVENT, true);
		il_plan_add(p, obj, "fs_sys_exit_" SYNC_RANGE_EVENT, "syscalls:sys_exit_" SYNC_RANGE_EVENT, true);
		/* msync runs the fsync function: its tracepoints mark those syncs msync's */
		il_plan_add(p, obj, "fs_sys_enter_" MSYNC_EVENT, "syscalls:sys_enter_" MSYNC_EVENT, true);
		il_plan_add(p, obj, "fs_sys_exit_" MSYNC_EVENT, "syscalls:sys_exit_" MSYNC_EVENT, true);
		if (c->targ_tgid) /* -p: what its exited threads did (user/lib/children.c) */
			il_plan_add(p, obj, "fs_thread_exit", "sched:sched_process_exit", true);
	}
	il_plan_option(p, IL_M_TP_BTF, limits_tp);
	il_plan_add(p, obj, c->file_btf_id ? "fs_sys_enter_cast" : "fs_sys_enter", "raw_syscalls:sys_enter", false);
	il_plan_add(p, obj, c->file_btf_id ? "fs_sys_exit_cast" : "fs_sys_exit", "raw_syscalls:sys_exit", false);
	if (t == FS_EXT4) {
		/* the twin that finds msync's file by address where the kernel has bpf_find_vma */
		il_plan_add(p, obj, il_btf_vmlinux_id("bpf_find_vma", BTF_KIND_FUNC) ?
			    "fs_tp_ext4_sync_file_enter_vma" : "fs_tp_ext4_sync_file_enter",
			    "ext4:ext4_sync_file_enter", true);
		il_plan_add(p, obj, "fs_tp_ext4_sync_file_exit", "ext4:ext4_sync_file_exit", true);
	}
	/* Shared by every filesystem's plan (attached once); fs_cfg.sys_magic[] keeps only the
	 * files of the filesystems this option was chosen for. */
	for (size_t i = 0; i < IL_ARRAY_SIZE(uring_events); i++) {
		const char *ev = uring_events[i].name;
		char tp[48];

		snprintf(tp, sizeof(tp), "io_uring_%s", ev);
		snprintf(name, sizeof(name), "fs_uring_%s%s", ev,
			 uring_events[i].btf_nargs >= 0 && il_btf_tp_nargs(tp) == uring_events[i].btf_nargs
			 ? "_btf" : "");
		snprintf(target, sizeof(target), "io_uring:%s", tp);
		il_plan_add(p, obj, name, target, true);
	}
	if (c->targ_tgid)
		il_plan_add(p, obj, "fs_thread_exit", "sched:sched_process_exit", true);
}

int il_fs_plans(struct bpf_object *obj, const bool wanted[FS_TYPE__MAX],
		struct il_plan plans[FS_TYPE__MAX], int types[FS_TYPE__MAX])
{
	int n = 0;

	for (int t = 0; t < FS_TYPE__MAX; t++) {
		if (!wanted[t])
			continue;
		il_fs_plan(obj, t, &plans[n]);
		types[n++] = t;
	}
	return n;
}

void il_fs_chosen(struct bpf_object *obj, const struct il_plan *plans, const int *types, int n)
{
	struct fs_cfg *c = il_obj_rodata_must(obj, "fs_cfg", sizeof(*c));

	for (int i = 0; i < n; i++) {
		if (types[i] < 0 || types[i] >= FS_TYPE__MAX)
			continue;
		/* the tracepoint method counts sync_file_range with the other syscalls, at
		 * raw_syscalls; fentry and kprobes at its own syscall tracepoints */
		if (il_plan_family(&plans[i]) == IL_FAM_TRACEPOINT)
			c->sys_magic[types[i]] = il_fs_table[types[i]].magic;
		else
			c->sync_range_magic[types[i]] = il_fs_table[types[i]].magic;
	}
	/* every method has tracepoints whose slow events go out through fs_send (io_uring's,
	 * ext4_sync_file, sync_file_range's) */
	if (n && c->min_ns != ~0ULL)
		bpf_program__set_autoload(bpf_object__find_program_by_name(obj, "fs_send"), true);
}

int il_fs_plan_type(const struct il_plan *p)
{
	for (int t = 0; t < FS_TYPE__MAX; t++)
		if (p->what == il_fs_table[t].what)
			return t;
	return -1;
}

int il_fs_loaded(struct bpf_object *obj)
{
	struct bpf_program *send = bpf_object__find_program_by_name(obj, "fs_send");
	int fd = il_obj_map_fd(obj, "fs_send_prog"), pfd = send ? bpf_program__fd(send) : -1;
	__u32 zero = 0;
	int err;

	if (pfd < 0) /* not loaded: no events asked for */
		return 0;
	err = fd < 0 ? -ENOENT : bpf_map_update_elem(fd, &zero, &pfd, BPF_ANY) ? -errno : 0;
	if (err)
		il_err("cannot connect the event sender: %s", il_errno_name(err));
	return err;
}

void il_fs_unload(struct bpf_object *obj)
{
	int fd = obj ? il_obj_map_fd(obj, "fs_send_prog") : -1;
	__u32 zero = 0;

	if (fd >= 0)
		bpf_map_delete_elem(fd, &zero);
}

void il_fs_choose(struct fs_cfg *cfg, const char *file, bool given, bool wanted[FS_TYPE__MAX])
{
	if (file) {
		struct statfs sfs;
		struct stat st;
		int t = -1;

		if (stat(file, &st) || statfs(file, &sfs))
			il_die("cannot read %s: %s", file, strerror(errno));
		if (!S_ISREG(st.st_mode))
			il_die("%s is not a regular file (-f follows one file; a directory's files are "
			       "not followed)", file);
		for (int i = 0; i < FS_TYPE__MAX; i++)
			if ((unsigned long long)(unsigned long)sfs.f_type == il_fs_table[i].magic)
				t = i;
		if (t < 0)
			il_die("%s is not on an ext4, xfs or btrfs filesystem (filesystem magic 0x%lx)",
			       file, (unsigned long)sfs.f_type);
		if (given && !wanted[t])
			il_die("%s is on %s, which -t leaves out", file, il_fs_table[t].name);
		memset(wanted, 0, FS_TYPE__MAX * sizeof(wanted[0]));
		wanted[t] = true;
		if (il_mount_dev_of(file, &cfg->targ_dev))
			cfg->targ_dev = IL_MKDEV(major(st.st_dev), minor(st.st_dev));
		cfg->targ_ino = st.st_ino;
		return;
	}
	if (given) {
		for (int i = 0; i < FS_TYPE__MAX; i++)
			if (wanted[i] && !il_fs_mounted(il_fs_table[i].name))
				il_die("no %s filesystem is mounted: nothing to trace", il_fs_table[i].name);
		return;
	}
	for (int i = 0; i < FS_TYPE__MAX; i++)
		wanted[i] = il_fs_mounted(il_fs_table[i].name);
	for (int i = 0; i < FS_TYPE__MAX; i++)
		if (wanted[i])
			return;
	il_die("no ext4, xfs or btrfs filesystem is mounted: nothing to trace");
}

struct json_object *il_fs_op_stats_json(const struct fs_op_stats *st, struct json_object *o)
{
	json_object_object_add(o, "count", json_object_new_uint64(st->count));
	json_object_object_add(o, "slow", json_object_new_uint64(st->slow));
	json_object_object_add(o, "total_usecs", il_json_usecs(st->total_ns / 1e3));
	json_object_object_add(o, "max_usecs", il_json_usecs(st->max_ns / 1e3));
	json_object_object_add(o, "latency_ns", il_hist_json(st->slots, IL_HIST_SLOTS, "nsecs"));
	return o;
}

/* Add the totals of v to *to. */
static void stats_add(struct fs_op_stats *to, const struct fs_op_stats *v)
{
	to->count += v->count;
	to->slow += v->slow;
	to->total_ns += v->total_ns;
	if (v->max_ns > to->max_ns)
		to->max_ns = v->max_ns;
	for (int s = 0; s < IL_HIST_SLOTS; s++)
		to->slots[s] += v->slots[s];
}

/* Sum the CPUs of entries first .. first + n - 1 of per-CPU map `map` (struct fs_op_stats)
 * into out[0 .. n - 1]. 0, or -errno. */
static int stats_keys_read(struct bpf_object *obj, const char *map, __u32 first, __u32 n,
			   struct fs_op_stats *out)
{
	int ncpu = libbpf_num_possible_cpus(), fd = il_obj_map_fd(obj, map);
	struct fs_op_stats *v;

	if (ncpu < 0)
		return ncpu;
	if (fd < 0)
		return -ENOENT;
	v = calloc(ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	memset(out, 0, n * sizeof(*out));
	for (__u32 k = first; k < first + n; k++) {
		if (bpf_map_lookup_elem(fd, &k, v)) {
			int err = -errno;

			free(v);
			return err;
		}
		for (int c = 0; c < ncpu; c++)
			stats_add(&out[k - first], &v[c]);
	}
	free(v);
	return 0;
}

/* Sum the CPUs of per-CPU map `map` (FS_OP__MAX struct fs_op_stats) into out. 0, or -errno. */
static int stats_map_read(struct bpf_object *obj, const char *map, struct fs_op_stats out[FS_OP__MAX])
{
	return stats_keys_read(obj, map, 0, FS_OP__MAX, out);
}

int il_fs_nested_read(struct bpf_object *obj, struct fs_op_stats *out)
{
	return stats_keys_read(obj, "fs_stats", FS_STATS_NESTED, 1, out);
}

int il_fs_stats_read(struct bpf_object *obj, struct fs_op_stats out[FS_OP__MAX])
{
	struct fs_op_stats uring[FS_OP__MAX];
	int err = stats_map_read(obj, "fs_stats", out);

	if (err || il_obj_map_fd(obj, "fs_uring_stats") < 0)
		return err;
	if ((err = stats_map_read(obj, "fs_uring_stats", uring)))
		return err;
	for (int k = 0; k < FS_OP__MAX; k++)
		stats_add(&out[k], &uring[k]);
	return 0;
}

int il_fs_iface_stats_read(struct bpf_object *obj, enum fs_iface iface,
			   struct fs_op_stats out[FS_OP__MAX])
{
	return stats_map_read(obj, iface == FS_IF_URING ? "fs_uring_stats" : "fs_stats", out);
}

int il_fs_aio_read(struct bpf_object *obj, struct il_fs_aio_row **rows)
{
	int fd = il_obj_map_fd(obj, "fs_aio"), n = 0;
	__u32 key, next, *prev = NULL;

	*rows = NULL;
	if (fd < 0)
		return -ENOENT;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		struct il_fs_aio_row *r = realloc(*rows, (n + 1) * sizeof(**rows));

		if (!r) {
			free(*rows);
			*rows = NULL;
			return -ENOMEM;
		}
		*rows = r;
		r[n].tgid = next;
		if (!bpf_map_lookup_elem(fd, &next, &r[n].st))
			n++;
		key = next;
		prev = &key;
	}
	return n;
}

/* v with thousands separators: 4211 -> "4,211". */
static const char *grouped(unsigned long long v, char *buf, size_t len)
{
	char digits[32];
	int n = snprintf(digits, sizeof(digits), "%llu", v);
	size_t o = 0;

	for (int i = 0; i < n && o + 2 < len; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = 0;
	return buf;
}

const char *il_fs_aio_notice(const struct il_fs_aio_row *r, char *buf, size_t len)
{
	char req[32], sc[32], gc[32], ev[32], failed[48] = "";

	if (r->st.submit_failed)
		snprintf(failed, sizeof(failed), ", %s failed", grouped(r->st.submit_failed, sc, sizeof(sc)));
	snprintf(buf, len, "pid %u submitted %s requests through Linux AIO: not timed per call here "
		 "(io_submit: %s calls%s, %.2f ms; io_getevents: %s calls, %s events, %.2f ms)",
		 r->tgid, grouped(r->st.requests, req, sizeof(req)),
		 grouped(r->st.submit_calls, sc, sizeof(sc)), failed, r->st.submit_ns / 1e6,
		 grouped(r->st.getevents_calls, gc, sizeof(gc)), grouped(r->st.events, ev, sizeof(ev)),
		 r->st.getevents_ns / 1e6);
	return buf;
}

const char *il_fs_uring_notice(const __u64 uring[FS_OP__MAX], const __u64 calls[FS_OP__MAX],
			       char *buf, size_t len)
{
	char a[32], b[32];
	size_t n = 0;

	for (int i = 0; i < FS_OP__MAX && n < len; i++)
		if (uring[i])
			n += snprintf(buf + n, len - n, "%s%s %s of %s", n ? ", " : "io_uring requests in "
				      "the rows: ", il_fs_op_names[i], grouped(uring[i], a, sizeof(a)),
				      grouped(calls[i], b, sizeof(b)));
	if (!n)
		return NULL;
	if (n < len)
		snprintf(buf + n, len - n, "; each timed from submission to completion (several in "
			 "flight at once add up past the window's length); no thread waits in them for "
			 "the time split to follow: the verdict takes their bios' time in the block "
			 "layer as their I/O wait, the rest as io_uring's");
	return buf;
}

struct json_object *il_fs_aio_json(const struct il_fs_aio_row *aio, int n)
{
	struct json_object *arr = json_object_new_array();
	char line[512];

	for (int i = 0; i < n; i++) {
		const struct fs_aio_stats *st = &aio[i].st;
		struct json_object *a = json_object_new_object();

		json_object_object_add(a, "pid", json_object_new_int(aio[i].tgid));
		il_json_add_name(a, "comm", st->comm, sizeof(st->comm));
		json_object_object_add(a, "requests", json_object_new_uint64(st->requests));
		json_object_object_add(a, "io_submit_calls", json_object_new_uint64(st->submit_calls));
		json_object_object_add(a, "io_submit_failed", json_object_new_uint64(st->submit_failed));
		json_object_object_add(a, "io_submit_usecs", il_json_usecs(st->submit_ns / 1e3));
		json_object_object_add(a, "io_getevents_calls", json_object_new_uint64(st->getevents_calls));
		json_object_object_add(a, "events", json_object_new_uint64(st->events));
		json_object_object_add(a, "io_getevents_usecs", il_json_usecs(st->getevents_ns / 1e3));
		json_object_object_add(a, "notice", json_object_new_string(
					       il_fs_aio_notice(&aio[i], line, sizeof(line))));
		json_object_array_add(arr, a);
	}
	return arr;
}

__u64 il_fs_orphan_starts(struct bpf_object *obj)
{
	struct fs_key key, next;
	int fd = il_obj_map_fd(obj, "fs_inflight");
	void *prev = NULL;
	__u64 n = 0;
	char path[32];

	while (fd >= 0 && !bpf_map_get_next_key(fd, prev, &next)) {
		snprintf(path, sizeof(path), "/proc/%u", next.tid);
		if (access(path, F_OK))
			n++;
		key = next;
		prev = &key;
	}
	return n;
}

/* Thread tid of process pid, if blocked in a traced file syscall, into *st: true. */
static bool stuck_thread(__u32 pid, __u32 tid, struct il_fs_stuck *st)
{
	unsigned long long switches;
	char path[64], state;
	long nr = -1;
	FILE *f;

	/* (a kernel thread makes no syscall: its /proc/PID/syscall reads 0, read's number) */
	/* the state from the short stat file first: most threads are not in D */
	if (!il_proc_task_state(pid, tid, &state) || state != 'D' ||
	    !il_proc_task_status(pid, tid, &state, &switches) || state != 'D' || il_proc_kthread(pid))
		return false;
	snprintf(path, sizeof(path), "/proc/%u/task/%u/syscall", pid, tid);
	if (!(f = fopen(path, "re")))
		return false;
	if (fscanf(f, "%ld", &nr) != 1)
		nr = -1;
	fclose(f);
	memset(st, 0, sizeof(*st));
	for (size_t i = 0; i < IL_ARRAY_SIZE(sys_calls) && nr >= 0 && !st->call; i++)
		if (sys_calls[i].nr == nr && sys_calls[i].sys.kind != FS_SK_AIO)
			st->call = sys_calls[i].name, st->op = sys_calls[i].sys.op;
	if (!st->call)
		return false;
	il_proc_task_comm(pid, tid, st->comm);
	st->pid = pid;
	st->tid = tid;
	st->switches = switches;
	return true;
}

/* The threads of process pid into out[n..max): the new n. */
static int stuck_threads(__u32 pid, struct il_fs_stuck *out, int n, int max)
{
	char path[32];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	if (!(d = opendir(path)))
		return n;
	while (n < max && (e = readdir(d))) {
		unsigned long tid = strtoul(e->d_name, NULL, 10);

		if (tid && stuck_thread(pid, tid, &out[n]))
			n++;
	}
	closedir(d);
	return n;
}

int il_fs_stuck(__u32 tgid, struct il_fs_stuck *out, int max)
{
	struct dirent *e;
	int n = 0;
	DIR *d;

	if (tgid)
		return stuck_threads(tgid, out, 0, max);
	if (!(d = opendir("/proc")))
		return 0;
	while (n < max && (e = readdir(d))) {
		unsigned long pid = strtoul(e->d_name, NULL, 10);

		if (pid)
			n = stuck_threads(pid, out, n, max);
	}
	closedir(d);
	return n;
}

void il_fs_stuck_since(struct il_fs_stuck *now, int n, const struct il_fs_stuck *before, int nb)
{
	for (int i = 0; i < n; i++)
		for (int k = 0; k < nb; k++)
			if (before[k].tid == now[i].tid && before[k].call == now[i].call &&
			    before[k].switches == now[i].switches)
				now[i].whole = true;
}

void il_fs_stuck_times(struct bpf_object *obj, struct il_fs_stuck *st, int n,
		       unsigned long long now)
{
	int inflight_fd = il_obj_map_fd(obj, "fs_inflight");
	struct bpf_map *tasks = bpf_object__find_map_by_name(obj, "fs_tasks");
	bool storage = tasks && bpf_map__type(tasks) == BPF_MAP_TYPE_TASK_STORAGE;

	for (int i = 0; i < n; i++) {
		struct fs_key key = { .tid = st[i].tid, .op = st[i].op };
		struct fs_start s = { 0 };
		struct fs_task t;

		/* the start the layer recorded: in the thread's storage, else by (thread, op) */
		if (storage && FS_SLOT(st[i].op) < FS_SLOTS &&
		    !il_obj_task_lookup(obj, "fs_tasks", st[i].pid, st[i].tid, &t))
			s = t.call[FS_SLOT(st[i].op)];
		if (!s.ts && inflight_fd >= 0)
			bpf_map_lookup_elem(inflight_fd, &key, &s);
		st[i].blocked_ns = s.ts && s.ts < now ? now - s.ts : 0;
	}
}

const char *il_fs_iface_name(enum fs_iface iface)
{
	return iface >= 0 && iface < FS_IF__MAX ? iface_names[iface] : "-";
}

enum fs_iface il_fs_event_iface(const struct fs_event *e)
{
	if (e->flags & FS_EV_URING)
		return FS_IF_URING;
	return e->flags & FS_EV_SYSCALL ? FS_IF_SYSCALL : FS_IF_ANY;
}

const char *il_fs_event_path(const struct fs_event *e, char *buf, size_t len)
{
	return il_path_str(&e->path, e->names, sizeof(e->names), e->dev, e->ino, buf, len);
}

const char *il_fs_sync_kind(const struct fs_event *e)
{
	if (e->op != FS_OP_FSYNC)
		return "";
	if (e->flags & FS_EV_MSYNC)
		return "msync";
	if (e->flags & FS_EV_NESTED)
		return e->flags & FS_EV_DATASYNC ? "o_dsync" : "o_sync";
	return e->flags & FS_EV_DATASYNC ? "fdatasync" : "fsync";
}

/* One line of il_fs_summary_print(): operation op's totals st, of interface iface. */
static void summary_line(FILE *f, int op, const struct fs_op_stats *st, enum fs_iface iface)
{
	char p50[48], p99[48];

	fprintf(f, "%-2c %9llu %9llu %12.2f %17s %17s %10.2f %s\n", il_fs_op_letters[op],
		(unsigned long long)st->count, (unsigned long long)st->slow, st->total_ns / 1e6,
		il_hist_pct_range(st->slots, IL_HIST_SLOTS, 50, 1e6, p50, sizeof(p50)),
		il_hist_pct_range(st->slots, IL_HIST_SLOTS, 99, 1e6, p99, sizeof(p99)), st->max_ns / 1e6,
		il_fs_iface_name(iface));
}

void il_fs_summary_print(FILE *f, const struct fs_op_stats by_if[2][FS_OP__MAX],
			 const enum fs_iface ifs[2])
{
	fprintf(f, "%-2s %9s %9s %12s %17s %17s %10s %s\n", "T", "COUNT", "SLOW", "TOTAL(ms)",
		"P50(ms)", "P99(ms)", "MAX(ms)", "IF");
	for (int i = 0; i < FS_OP__MAX; i++) {
		summary_line(f, i, &by_if[0][i], ifs[0]);
		if (by_if[1][i].count)
			summary_line(f, i, &by_if[1][i], ifs[1]);
	}
	fprintf(f, "(percentiles are the log2 bucket that holds them)\n");
}

struct json_object *il_fs_summary_json(const struct fs_op_stats st[FS_OP__MAX],
				       const struct fs_op_stats by_if[2][FS_OP__MAX],
				       const enum fs_iface ifs[2])
{
	struct json_object *ops = json_object_new_object();

	for (int i = 0; i < FS_OP__MAX; i++) {
		struct json_object *x = il_fs_op_stats_json(&st[i], json_object_new_object());
		struct json_object *l = json_object_new_array();

		for (int k = 0; k < 2; k++) {
			struct json_object *y;

			if (k && !by_if[k][i].count)
				continue;
			y = json_object_new_object();
			json_object_object_add(y, "interface", ifs[k] == FS_IF_ANY ? NULL :
					       json_object_new_string(il_fs_iface_name(ifs[k])));
			json_object_array_add(l, il_fs_op_stats_json(&by_if[k][i], y));
		}
		json_object_object_add(x, "interfaces", l);
		json_object_object_add(ops, il_fs_op_names[i], x);
	}
	return ops;
}
