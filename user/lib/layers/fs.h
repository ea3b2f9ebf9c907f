/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The filesystem layer's user side (user/lib/fs.c; kernel side bpf/lib/fs.bpf.h, types
 * bpf/lib/fs.h): the filesystems it knows, settings, plans, readers, names. Prefix il_fs_.
 */
#ifndef IOLAYER_LAYERS_FS_H
#define IOLAYER_LAYERS_FS_H

#include <stdbool.h>
#include <stdio.h>
#include <json-c/json.h>
#include <bpf/libbpf.h>
#include "plan.h"
#include "lib/fs.h"

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

/* Names of the operations (enum fs_op): JSON keys "read", "write", "open", "fsync",
 * "sync_range"; table rows (the same, "sync_file_range" for the last); and the letters of
 * fsslower's T column: R, W, O, F, S. */
extern const char *const il_fs_op_names[FS_OP__MAX];
extern const char *const il_fs_op_rows[FS_OP__MAX];
extern const char il_fs_op_letters[FS_OP__MAX];

/* enum fs_type of "ext4"/"xfs"/"btrfs", or -1. */
int il_fs_by_name(const char *name);

/* At start-up: which filesystems to trace into wanted[] (given: -t named those set there),
 * from file (-f PATH, or NULL) and what is mounted; with a file, its filesystem alone and
 * cfg->targ_dev/targ_ino set to it. Exits 1 after one line when there is nothing to trace (a
 * file that cannot be read, is not a regular file or not on ext4, xfs or btrfs, or on one -t
 * leaves out; a filesystem of -t that is not mounted; none mounted). */
void il_fs_choose(struct fs_cfg *cfg, const char *file, bool given, bool wanted[FS_TYPE__MAX]);

/* Settings, with fs_cfg.self_tgid set to this process, and where in-flight calls are kept
 * (fs_cfg.task_storage: task-local storage where the kernel allows it, else a hash). */
struct fs_cfg *il_fs_cfg(struct bpf_object *obj);

/* Plan of filesystem t: fentry/fexit on its functions, then kprobe/kretprobe, then the
 * syscall tracepoints (plus ext4:ext4_sync_file_* for ext4, and, optional and shared by every
 * filesystem's plan, io_uring's submit/complete tracepoints and the Linux AIO calls' syscall
 * tracepoints). The sync_file_range syscall
 * tracepoints are in every option (optional in the first two): set fs_sync_range_magic[t]
 * for each chosen plan, whatever its method. */
void il_fs_plan(struct bpf_object *obj, int t, struct il_plan *p);

/* Plans of the filesystems wanted[t] (in enum fs_type order) into plans[], their types into
 * types[]; returns how many. */
int il_fs_plans(struct bpf_object *obj, const bool wanted[FS_TYPE__MAX],
		struct il_plan plans[FS_TYPE__MAX], int types[FS_TYPE__MAX]);

/* After il_plans_choose() and before load: the filesystems whose plan chose the syscall
 * tracepoints go into fs_cfg.sys_magic, so those tracepoints report only their files. */
void il_fs_chosen(struct bpf_object *obj, const struct il_plan *plans, const int *types, int n);

/* The filesystem (enum fs_type) plan p was made for by il_fs_plan(), or -1. */
int il_fs_plan_type(const struct il_plan *p);

/* After load: hand the syscall tracepoints' slow events to fs_send (when it was loaded:
 * fs_cfg.min_ns not ~0). 0, or -errno after printing one line. */
int il_fs_loaded(struct bpf_object *obj);

/* Before the object is destroyed: take fs_send out of fs_send_prog, so that it goes with the
 * other programs (a program array lets go of its programs only some time after its last
 * file descriptor is closed). */
void il_fs_unload(struct bpf_object *obj);

/* The syncs run inside O_SYNC/O_DSYNC writes, summed over the CPUs into *out, when the object
 * was loaded with fs_cfg.nested_apart (else all zero: they are in the fsync totals). 0, or -errno. */
int il_fs_nested_read(struct bpf_object *obj, struct fs_op_stats *out);

/* The totals of one operation added to o as JSON: count, slow, total_usecs, max_usecs and the
 * histogram latency_ns (il_hist_json). Returns o. */
struct json_object *il_fs_op_stats_json(const struct fs_op_stats *st, struct json_object *o);

/* Sum the per-CPU totals of a loaded obj into out[FS_OP__MAX]: every traced call, whatever
 * its interface (fs_stats, and fs_uring_stats when the object has it). 0, or -errno. */
int il_fs_stats_read(struct bpf_object *obj, struct fs_op_stats out[FS_OP__MAX]);

/* The same for the calls of one interface: FS_IF_URING the io_uring requests
 * (fs_uring_stats), any other value everything else (fs_stats: the syscalls where the
 * syscall tracepoints were chosen, every caller of the file operations otherwise). */
int il_fs_iface_stats_read(struct bpf_object *obj, enum fs_iface iface,
			   struct fs_op_stats out[FS_OP__MAX]);

/* Name of an interface: "syscall", "io_uring", "aio"; "-" for FS_IF_ANY (the method cannot
 * tell). */
const char *il_fs_iface_name(enum fs_iface iface);

/* The interface an event's call came through (its FS_EV_SYSCALL/FS_EV_URING flag). */
enum fs_iface il_fs_event_iface(const struct fs_event *e);

/* The sync an event of FS_OP_FSYNC was: "fsync", "fdatasync", the sync run inside an
 * O_SYNC/O_DSYNC write (FS_EV_NESTED): "o_sync", "o_dsync", or msync(MS_SYNC)'s of a shared
 * mapping's file (FS_EV_MSYNC): "msync"; "" for any other operation. */
const char *il_fs_sync_kind(const struct fs_event *e);

/* The per-operation summary (fsslower's at exit), text, to f: a header line (T COUNT SLOW
 * TOTAL(ms) P50(ms) P99(ms) MAX(ms) IF), a line per operation (enum fs_op order, letter
 * il_fs_op_letters) of by_if[0], whose interface is ifs[0], then its line of by_if[1]
 * (interface ifs[1]) when that has calls, and "(percentiles are the log2 bucket that holds
 * them)". Times in ms; P50/P99 the log2 bucket holding them (il_hist_pct_range()). */
void il_fs_summary_print(FILE *f, const struct fs_op_stats by_if[2][FS_OP__MAX],
			 const enum fs_iface ifs[2]);

/* The same as JSON: a new object keyed by il_fs_op_names, each il_fs_op_stats_json() of st[op]
 * (every interface) with "interfaces": [by_if[0][op] as il_fs_op_stats_json() plus
 * "interface" (ifs[0]'s name, null for FS_IF_ANY), then by_if[1][op] likewise when it has
 * calls]. Times in µs. The caller owns it. */
struct json_object *il_fs_summary_json(const struct fs_op_stats st[FS_OP__MAX],
				       const struct fs_op_stats by_if[2][FS_OP__MAX],
				       const enum fs_iface ifs[2]);

/* One process's Linux AIO calls (map fs_aio). */
struct il_fs_aio_row {
	__u32 tgid;
	struct fs_aio_stats st;
};

/* Read fs_aio of a loaded obj into a malloc'ed array (*rows, freed by the caller). Returns
 * the number of processes, or -errno. */
int il_fs_aio_read(struct bpf_object *obj, struct il_fs_aio_row **rows);

/* The one line said about a process's AIO: "pid 1234 submitted 4,211 requests through Linux
 * AIO: not timed per call here (io_submit: ...; io_getevents: ...)". Returns buf. */
const char *il_fs_aio_notice(const struct il_fs_aio_row *r, char *buf, size_t len);

/* The one line said when the file-operation rows hold io_uring requests (uring[op] of
 * calls[op], counts over the window): "io_uring requests in the rows: write 492,020 of
 * 492,020; each timed from submission to completion ...". NULL (buf untouched) when none. */
const char *il_fs_uring_notice(const __u64 uring[FS_OP__MAX], const __u64 calls[FS_OP__MAX],
			       char *buf, size_t len);

/* The rows as a JSON array of {pid, comm, requests, io_submit_calls, io_submit_failed,
 * io_submit_usecs, io_getevents_calls, events, io_getevents_usecs, notice}. */
struct json_object *il_fs_aio_json(const struct il_fs_aio_row *aio, int n);

/* Calls whose start is still recorded though their thread has exited: their return was
 * missed. Add to the drops' IL_DROP_MISSED_RETURN. */
__u64 il_fs_orphan_starts(struct bpf_object *obj);

/* A thread blocked (D state) inside a file-operation syscall when looked at: a call whose
 * time the numbers cannot hold yet (a call is counted when it returns), such as a write held
 * by a throttle for the whole window, or one begun before tracing. */
struct il_fs_stuck {
	__u32 pid, tid;
	char comm[16];
	const char *call;            /* the syscall's name (sys_calls[]) */
	int op;                      /* its operation (enum fs_op, or FS_MSYNC_CALL) */
	unsigned long long switches; /* voluntary + involuntary context switches so far */
	unsigned long long blocked_ns; /* in flight for so long, from the layer's record of its
					* start (il_fs_stuck_times()); 0: unknown (begun before
					* tracing, or no record to read) */
	bool whole;                  /* blocked in the same call, unswitched, since an earlier look
				      * (il_fs_stuck_since()) */
};

/* The threads of process tgid (0: every process) blocked in a traced file syscall, from
 * /proc/PID/task/TID/{stat,syscall,status}, into out (at most max). Returns how many. */
int il_fs_stuck(__u32 tgid, struct il_fs_stuck *out, int max);

/* Mark in now[0..n) the threads also in before[0..nb) in the same call with no switch since:
 * blocked all the time between the two looks. */
void il_fs_stuck_since(struct il_fs_stuck *now, int n, const struct il_fs_stuck *before, int nb);

/* How long each of st[0..n) had been in its call at now (il_now_ns(): the window's end),
 * into blocked_ns: from the start that the fs layer of loaded obj recorded (task-local
 * storage, read by a pidfd of the thread: a thread other than its process's first needs
 * PIDFD_THREAD, Linux 6.9; else fs_inflight by thread and operation). Left 0 when there is
 * no record (the call began before tracing). */
void il_fs_stuck_times(struct bpf_object *obj, struct il_fs_stuck *st, int n,
		       unsigned long long now);

/* The full path of an event's file into buf (IL_PATH_STR_MAX bytes hold any): mount point +
 * names from the root down, as il_path_str() (user/lib/path.h) writes it: "..." first past
 * IL_PATH_DEPTH names or without a known mount point, " (deleted)" last for an unlinked
 * file. Never empty. The caller checks that the record holds e->path.len bytes of names.
 * Returns buf. */
const char *il_fs_event_path(const struct fs_event *e, char *buf, size_t len);

#endif
