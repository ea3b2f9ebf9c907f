/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include <string.h>
#include "layers.h"
#include "log.h"
#include "util.h"

struct bpf_program *il_prog_by_name(struct bpf_object *obj, const char *name)
{
	struct bpf_program *p = bpf_object__find_program_by_name(obj, name);

	if (!p)
		il_die("internal error: no BPF program %s", name);
	return p;
}

void il_autoload_none(struct bpf_object *obj)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj)
		bpf_program__set_autoload(prog, false);
}

/* ---- block ------------------------------------------------------------------------------ */

void il_block_plan(struct bpf_object *obj, bool with_insert, struct il_plan *p)
{
	static const char *prefix[2] = { "btf", "raw" };

	memset(p, 0, sizeof(*p));
	p->what = "block request lifetime";
	for (int m = 0; m < 2; m++) {
		struct il_option *o = &p->opts[m];
		char name[32];
		int n = 0;

		o->method = m ? IL_M_RAW_TP : IL_M_TP_BTF;
		snprintf(name, sizeof(name), "%s_rq_issue", prefix[m]);
		o->progs[n++] = (struct il_prog){ il_prog_by_name(obj, name), "block:block_rq_issue" };
		snprintf(name, sizeof(name), "%s_rq_complete", prefix[m]);
		o->progs[n++] = (struct il_prog){ il_prog_by_name(obj, name), "block:block_rq_complete" };
		if (with_insert) {
			snprintf(name, sizeof(name), "%s_rq_insert", prefix[m]);
			o->progs[n++] = (struct il_prog){ il_prog_by_name(obj, name),
							  "block:block_rq_insert", true };
		}
	}
}

/* ---- filesystems ------------------------------------------------------------------------ */

const struct il_fs_info il_fs_table[FS_TYPE__MAX] = {
	[FS_EXT4] = { "ext4", FS_EXT4_MAGIC, "ext4 file operations",
		      { "ext4_file_read_iter", "ext4_file_write_iter", "ext4_file_open", "ext4_sync_file" } },
	[FS_XFS] = { "xfs", FS_XFS_MAGIC, "xfs file operations",
		     { "xfs_file_read_iter", "xfs_file_write_iter", "xfs_file_open", "xfs_file_fsync" } },
	[FS_BTRFS] = { "btrfs", FS_BTRFS_MAGIC, "btrfs file operations",
		       { "btrfs_file_read_iter", "btrfs_file_write_iter", "btrfs_file_open", "btrfs_sync_file" } },
};

/* Program name suffixes of the fentry/kprobe programs, in enum fs_op order; NULL for an
 * operation with no file operation of its own (sync_file_range: its syscall tracepoints). */
static const char *op_prog[] = { "read", "write", "open", "fsync", NULL };
_Static_assert(IL_ARRAY_SIZE(op_prog) == FS_OP__MAX, "op_prog: one entry per enum fs_op");

/* The syscalls of the tracepoint method; programs fs_sys_enter_NAME / fs_sys_exit_NAME.
 * SYNC_RANGE_EVENT is also listed, optional, by the fentry and kprobe options. */
#define SYNC_RANGE_EVENT "sync_file_range"
static const char *sys_events[] = {
	"read", "write", "pread64", "pwrite64", "readv", "writev", "preadv", "pwritev",
	"preadv2", "pwritev2", "open", "creat", "openat", "openat2", "fsync", "fdatasync",
	SYNC_RANGE_EVENT,
};
_Static_assert(2 * IL_ARRAY_SIZE(sys_events) + 2 <= IL_MAX_PROGS,
	       "the tracepoint option (enter+exit per syscall, ext4_sync_file_*) fits IL_MAX_PROGS");

static const char *limits_fn =
	"entry to return of the filesystem's read_iter, write_iter, open and fsync functions "
	"(sync_file_range at its syscall tracepoints): every caller (syscalls, io_uring, aio, "
	"nfsd), not mmap page faults or writeback";
static const char *limits_tp =
	"measures at the syscall boundary (read, write, pread64, pwrite64, readv, writev, preadv, "
	"pwritev, preadv2, pwritev2, open, creat, openat, openat2, fsync, fdatasync, "
	"sync_file_range; ext4_sync_file for O_SYNC writes on ext4): latency includes fd lookup "
	"and locking; the size of a vectored call is the bytes it moved; cannot see io_uring, "
	"aio, sendfile/splice/copy_file_range, failed opens, mmap writeback, msync (its address "
	"range names no file), or the sync inside an O_SYNC write on xfs/btrfs";

int il_fs_by_name(const char *name)
{
	for (int i = 0; i < FS_TYPE__MAX; i++)
		if (!strcmp(name, il_fs_table[i].name))
			return i;
	return -1;
}

bool il_fs_mounted(const char *name)
{
	char line[4096], type[64];
	bool found = false;
	FILE *f = fopen("/proc/self/mounts", "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%*s %*s %63s", type) == 1 && !strcmp(type, name);
	fclose(f);
	return found;
}

static struct bpf_program *prog_fmt(struct bpf_object *obj, const char *fmt, const char *a,
				    const char *b)
{
	char name[64];

	snprintf(name, sizeof(name), fmt, a, b);
	return il_prog_by_name(obj, name);
}

/* Append a program to option o, whose n programs are listed so far: exits with an
 * internal-error line rather than write past o->progs[] (raise IL_MAX_PROGS). */
static void opt_add(struct il_option *o, int *n, struct bpf_program *prog, const char *target,
		    bool optional)
{
	if (*n >= IL_MAX_PROGS)
		il_die("internal error: %s option of a plan needs more than IL_MAX_PROGS (%d) programs",
		       il_method_name(o->method), IL_MAX_PROGS);
	o->progs[(*n)++] = (struct il_prog){ prog, target, optional };
}

void il_fs_plan(struct bpf_object *obj, int t, struct il_plan *p)
{
	const struct il_fs_info *fs = &il_fs_table[t];
	struct il_option *fe = &p->opts[0], *kp = &p->opts[1], *tp = &p->opts[2];
	static char targets[IL_ARRAY_SIZE(sys_events)][2][64];
	int n = 0, nfe = 0, nkp = 0;

	memset(p, 0, sizeof(*p));
	p->what = fs->what;
	fe->method = IL_M_FENTRY;
	fe->limits = limits_fn;
	kp->method = IL_M_KPROBE;
	kp->limits = limits_fn;
	for (int op = 0; op < FS_OP__MAX; op++) {
		if (!op_prog[op])
			continue;
		opt_add(fe, &nfe, prog_fmt(obj, "fs_fentry_%s_%s", fs->name, op_prog[op]), fs->funcs[op], false);
		opt_add(fe, &nfe, prog_fmt(obj, "fs_fexit_%s_%s", fs->name, op_prog[op]), fs->funcs[op], false);
		opt_add(kp, &nkp, prog_fmt(obj, "fs_kprobe_%s%s", op_prog[op], ""), fs->funcs[op], false);
		opt_add(kp, &nkp, prog_fmt(obj, "fs_kretprobe_%s%s", op_prog[op], ""), fs->funcs[op], false);
	}
	tp->method = IL_M_TRACEPOINT;
	tp->limits = limits_tp;
	for (size_t i = 0; i < IL_ARRAY_SIZE(sys_events); i++) {
		struct bpf_program *enter = prog_fmt(obj, "fs_sys_enter_%s%s", sys_events[i], "");
		struct bpf_program *exit_ = prog_fmt(obj, "fs_sys_exit_%s%s", sys_events[i], "");

		snprintf(targets[i][0], 64, "syscalls:sys_enter_%s", sys_events[i]);
		snprintf(targets[i][1], 64, "syscalls:sys_exit_%s", sys_events[i]);
		opt_add(tp, &n, enter, targets[i][0], false);
		opt_add(tp, &n, exit_, targets[i][1], false);
		if (strcmp(sys_events[i], SYNC_RANGE_EVENT))
			continue;
		/* No file operation runs sync_file_range: fentry and kprobe take it at the same
		 * tracepoints (optional: without syscall tracepoints they still fit). A program
		 * listed by several plans is attached once, so no call is counted twice. */
		opt_add(fe, &nfe, enter, targets[i][0], true);
		opt_add(fe, &nfe, exit_, targets[i][1], true);
		opt_add(kp, &nkp, enter, targets[i][0], true);
		opt_add(kp, &nkp, exit_, targets[i][1], true);
	}
	if (t == FS_EXT4) {
		opt_add(tp, &n, il_prog_by_name(obj, "fs_tp_ext4_sync_file_enter"), "ext4:ext4_sync_file_enter", true);
		opt_add(tp, &n, il_prog_by_name(obj, "fs_tp_ext4_sync_file_exit"), "ext4:ext4_sync_file_exit", true);
	}
}

int il_fs_stats_read(int fd, struct fs_op_stats out[FS_OP__MAX])
{
	int ncpu = libbpf_num_possible_cpus();
	struct fs_op_stats *v;

	if (ncpu < 0)
		return ncpu;
	v = calloc(ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	memset(out, 0, FS_OP__MAX * sizeof(*out));
	for (__u32 k = 0; k < FS_OP__MAX; k++) {
		if (bpf_map_lookup_elem(fd, &k, v)) {
			int err = -errno;

			free(v);
			return err;
		}
		for (int c = 0; c < ncpu; c++) {
			out[k].count += v[c].count;
			out[k].slow += v[c].slow;
			out[k].total_ns += v[c].total_ns;
			if (v[c].max_ns > out[k].max_ns)
				out[k].max_ns = v[c].max_ns;
			for (int s = 0; s < IL_HIST_SLOTS; s++)
				out[k].slots[s] += v[c].slots[s];
		}
	}
	free(v);
	return 0;
}

/* ---- writeback ---------------------------------------------------------------------------- */

void il_wb_plan(struct bpf_object *obj, enum wb_func func, const char *target, bool fentry_ok,
		struct il_plan *p)
{
	int o = 0;

	memset(p, 0, sizeof(*p));
	p->what = func == WB_FUNC_GENERIC ? "the function's returns" : "writeback returns";
	if (fentry_ok)
		p->opts[o++] = (struct il_option){ IL_M_FENTRY,
			{ { il_prog_by_name(obj, "wb_fentry"), target },
			  { il_prog_by_name(obj, "wb_fexit"), target } }, NULL };
	/* The kretprobe is attached before the kprobe: kprobes sharing an address run newest
	 * first, so the entry program (which takes --stack) sees the caller's return address
	 * before the kretprobe swaps in its trampoline, which kernels before 5.15 cannot unwind
	 * through (seen on 5.10: "ext4_writepages+0x1 <- kretprobe_trampoline"). */
	p->opts[o++] = (struct il_option){ IL_M_KPROBE,
		{ { il_prog_by_name(obj, "wb_kretprobe"), target },
		  { il_prog_by_name(obj, "wb_kprobe"), target } },
		"a return is missed when too many calls sleep at once (counted as missed_return at exit)" };
	if (func == WB_FUNC_GENERIC)
		return;
	/* Tracepoints that bracket the call: tp_btf, then raw_tp, with the same handlers. */
	bool ext4 = func == WB_FUNC_EXT4_WRITEPAGES;
	const char *tp_enter = ext4 ? "ext4:ext4_writepages" : "writeback:writeback_single_inode_start";
	const char *tp_exit = ext4 ? "ext4:ext4_writepages_result" : "writeback:writeback_single_inode";
	const char *limits = ext4 ? "returns taken before ext4:ext4_writepages_result are not seen"
				  : "flusher calls only, no return value";
	const char *base[2] = { ext4 ? "wb_ext4_wp" : "wb_wsi_start", ext4 ? "wb_ext4_wpr" : "wb_wsi" };
	static const char *flavour[2] = { "btf", "raw" };

	for (int m = 0; m < 2; m++) {
		char enter[32], exit_[32];

		snprintf(enter, sizeof(enter), "%s_%s", base[0], flavour[m]);
		snprintf(exit_, sizeof(exit_), "%s_%s", base[1], flavour[m]);
		p->opts[o++] = (struct il_option){ m ? IL_M_RAW_TP : IL_M_TP_BTF,
			{ { il_prog_by_name(obj, enter), tp_enter }, { il_prog_by_name(obj, exit_), tp_exit } },
			limits };
	}
}

const char *il_wb_tp_limits(enum wb_func func, int method)
{
	if (method != IL_M_TP_BTF && method != IL_M_RAW_TP)
		return NULL;
	if (func == WB_FUNC_EXT4_WRITEPAGES)
		return "tracepoint mode: only calls that reach ext4:ext4_writepages_result are seen; "
		       "returns taken before the tracepoint (e.g. -EIO from a shut-down filesystem) "
		       "are invisible in this mode (fexit or kretprobe see them)";
	return "tracepoint mode: do_writepages is seen only where writeback:writeback_single_inode* "
	       "brackets it (the flusher threads, sync_inode(); not the data flush of most "
	       "fsyncs), and its return value is invisible (RET ?)";
}

/* ---- I/O wait ------------------------------------------------------------------------------ */

void il_iowait_plan(struct bpf_object *obj, struct il_plan *p)
{
	memset(p, 0, sizeof(*p));
	p->what = "I/O wait (sched_switch)";
	p->opts[0] = (struct il_option){ IL_M_TP_BTF,
		{ { il_prog_by_name(obj, "iw_switch_btf"), "sched:sched_switch" } }, NULL };
	p->opts[1] = (struct il_option){ IL_M_RAW_TP,
		{ { il_prog_by_name(obj, "iw_switch_raw"), "sched:sched_switch" } }, NULL };
}

bool il_iowait_tp_prev_state(void)
{
	int n = il_btf_tp_nargs("sched_switch");

	il_debug("sched_switch takes %d argument(s)", n);
	return n >= 4;
}
