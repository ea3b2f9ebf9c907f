/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The attach plans of the shared BPF layers (bpf/lib/{block,fs,writeback,iowait}.bpf.h).
 * Programs are found by name in whatever BPF object includes the layer, so each tool and the
 * iolayer aggregate build a layer's plan the same way, from this one place.
 */
#ifndef IOLAYER_LAYERS_H
#define IOLAYER_LAYERS_H

#include <stdbool.h>
#include <bpf/libbpf.h>
#include "attach.h"
#include "fsslower.h"
#include "writeback_ret.h"

/* The program called name in obj; exits with an internal-error line when there is none. */
struct bpf_program *il_prog_by_name(struct bpf_object *obj, const char *name);

/* Turn autoload off for every program of obj: a tool then lets the chooser turn on only
 * what its plans chose. */
void il_autoload_none(struct bpf_object *obj);

/* ---- block layer: programs btf_rq_{insert,issue,complete} and raw_rq_{...} ------------ */

/* Plan "block request lifetime": tp_btf, else raw_tp. with_insert adds block_rq_insert (an
 * optional target: queues without an I/O scheduler never fire it). */
void il_block_plan(struct bpf_object *obj, bool with_insert, struct il_plan *p);

/* ---- filesystem layer (fs.bpf.h) ------------------------------------------------------ */

/* What the layer knows of each filesystem (enum fs_type): name, superblock magic, plan
 * name and the kernel functions behind read, write, open and fsync (enum fs_op; NULL for
 * FS_OP_SYNC_RANGE, which no file operation serves). */
struct il_fs_info {
	const char *name;
	unsigned long long magic;
	const char *what;
	const char *funcs[FS_OP__MAX];
};
extern const struct il_fs_info il_fs_table[FS_TYPE__MAX];

/* enum fs_type of "ext4"/"xfs"/"btrfs", or -1. */
int il_fs_by_name(const char *name);

/* True when a filesystem of that type is mounted (/proc/self/mounts). */
bool il_fs_mounted(const char *name);

/* Plan of filesystem t: fentry/fexit on its functions, then kprobe/kretprobe, then the
 * syscall tracepoints (plus ext4:ext4_sync_file_* for ext4). The sync_file_range syscall
 * tracepoints are in every option (optional in the first two): set fs_sync_range_magic[t]
 * for each chosen plan, whatever its method. */
void il_fs_plan(struct bpf_object *obj, int t, struct il_plan *p);

/* Sum the per-CPU fs_stats map (fd) into out[FS_OP__MAX]. 0, or -errno. */
int il_fs_stats_read(int fd, struct fs_op_stats out[FS_OP__MAX]);

/* ---- writeback layer (writeback.bpf.h) ------------------------------------------------ */

/* Plan of the writeback returns of func (enum wb_func) named target: fexit+fentry (when
 * fentry_ok: the function has BTF), kretprobe+kprobe, and for ext4_writepages/do_writepages
 * the tracepoints that bracket them (tp_btf, raw_tp). */
void il_wb_plan(struct bpf_object *obj, enum wb_func func, const char *target, bool fentry_ok,
		struct il_plan *p);

/* What the tracepoint method of func cannot see, one sentence; NULL for other methods. */
const char *il_wb_tp_limits(enum wb_func func, int method);

/* ---- I/O-wait layer (iowait.bpf.h) ---------------------------------------------------- */

/* Plan "I/O wait (sched_switch)": tp_btf, else raw_tp. */
void il_iowait_plan(struct bpf_object *obj, struct il_plan *p);

/* True when this kernel's sched_switch tracepoint passes prev_state (4 arguments, 5.18+), read
 * from its BTF prototype. Goes into the object's iw_tp_prev_state before load. */
bool il_iowait_tp_prev_state(void);

#endif
