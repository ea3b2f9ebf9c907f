/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The user side of the kernel layers: one module per layer (user/lib/block.c, fs.c,
 * writeback.c, iowait.c) beside its BPF side (bpf/lib/LAYER.bpf.h) and its types
 * (bpf/lib/LAYER.h). Each works from the bpf_object of any tool that includes the layer:
 * it finds its programs, its settings struct in .rodata and its maps by name, so every tool
 * composes a layer the same way. A layer module gives:
 *   - il_LAYER_cfg(obj): its settings, with what it knows itself already filled in;
 *   - its attach plan(s);
 *   - readers of its maps, and the names it prints.
 * Adding a layer: bpf/lib/NEW.h, bpf/lib/NEW.bpf.h, user/lib/NEW.c, a section here, and a
 * line in il_layer_table (layers.c) so the plan test covers it.
 */
#ifndef IOLAYER_LAYERS_H
#define IOLAYER_LAYERS_H

#include <stdbool.h>
#include <stdio.h>
#include <json-c/json.h>
#include <bpf/libbpf.h>
#include "plan.h"
#include "lib/block.h"
#include "lib/fs.h"
#include "lib/iowait.h"
#include "lib/who.h"
#include "lib/writeback.h"

/* Every layer, for code that treats them alike (the plan test, -V). */
struct il_layer_desc {
	const char *name;                               /* "fs" */
	const char *marker_map;                         /* a map only this layer defines */
	const char *marker_prog;                        /* and a program, when not every object
							 * with the map has the programs (or NULL) */
	/* Build every plan the layer can make from obj into plans (room for max); returns how
	 * many. Plans carry their own building errors (plan.error). */
	int (*all_plans)(struct bpf_object *obj, struct il_plan *plans, int max);
};
extern const struct il_layer_desc il_layer_table[];
extern const int il_nlayers;

/* ---- block layer (user/lib/block.c) ------------------------------------------------------ */

/* Settings, with blk_cfg.rq_two_args and blk_cfg.tp_old read from the tracepoints' BTF
 * prototypes; the bio-tracking maps shrunk to one entry unless il_blk_track_bios() was
 * called before. */
struct blk_cfg *il_blk_cfg(struct bpf_object *obj);

/* Plan "block request lifetime": tp_btf, else raw_tp. with_insert adds block_rq_insert (an
 * optional target: queues without an I/O scheduler never fire it). */
void il_blk_plan(struct bpf_object *obj, bool with_insert, struct il_plan *p);

/* Turn bio tracking on in obj (before load; after il_blk_cfg()): blk_cfg.bios, the maps
 * sized; with files, the file of each bio too (names in who_files). The tool then attaches
 * il_blk_bio_plan() and il_blk_submit_plan() besides il_blk_plan(). */
void il_blk_track_bios(struct bpf_object *obj, bool files);

/* Turn bio tracking on in obj for bio-based devices only (blk_cfg.bio_only): their bios are
 * measured from Q to their end, requests are not linked to their bios, and no bio's
 * submitter or file is looked for (iomap_dio_bio_end_io is not looked up). */
void il_blk_track_bio_based(struct bpf_object *obj);

/* After load, before attach, with bio tracking on: give the BPF side the address of
 * iomap_dio_bio_end_io (looked up meanwhile since il_blk_track_bios). 0, or -errno after
 * printing one line; 0 at once without bio tracking. */
int il_blk_loaded(struct bpf_object *obj);

/* Plan "block bio lifetime": block_bio_queue (required), block_getrq, the merges, block_split,
 * the remaps, block_rq_requeue, block_bio_complete and the throttles' wbt_step and
 * iocost_iocg_activate (optional), tp_btf else raw_tp. With blk_cfg.bio_only (set before),
 * only block_bio_queue, block_split, block_bio_remap and block_bio_complete. */
void il_blk_bio_plan(struct bpf_object *obj, struct il_plan *p);

/* Plan "bio submission (time before Q)": submit_bio with fentry, else kprobe, else the
 * tracepoints that mark a submission's start (iomap_dio_rw_begin/complete,
 * writeback_single_inode_start, ext4_writepages: all optional), tp_btf else raw_tp. */
void il_blk_submit_plan(struct bpf_object *obj, struct il_plan *p);

/* Names of the phases (enum blk_phase): "before Q", "Q2G", ...; JSON keys "before_q",
 * "q2g", ... */
extern const char *const il_blk_phase_names[BLK_PH__MAX];
extern const char *const il_blk_phase_keys[BLK_PH__MAX];

/* Phase totals: d = now - before (max_ns: now's, the maximum so far); the p99 of a phase as
 * the exclusive upper bound of its log2 bucket, ns (0 when empty); the time the shares are
 * taken of, ns: the I/Os' lives summed (struct blk_phases.life_ns). */
void il_blk_phases_sub(struct blk_phases *d, const struct blk_phases *now,
		       const struct blk_phases *before);
__u64 il_blk_phase_p99_lt(const struct blk_phase_stat *s);
__u64 il_blk_phases_life(const struct blk_phases *p);

/* The btt-like table of p, one line per phase: PHASE COUNT AVG P99 SHARE, each line starting
 * with indent. */
void il_blk_phases_print(FILE *f, const char *indent, const struct blk_phases *p);

/* {"ios", "bios", "bytes", "errors", "phases": {"before_q": {"count", "total_ns", "avg_ns",
 * "p99_lt_ns", "max_ns", "share"}, "q2g", ...}} of p. */
struct json_object *il_blk_phases_json(const struct blk_phases *p);

/* blktrace's RWBS letters of an operation (enum il_req_op_kind) and its flags (enum
 * il_rq_flag): "W", "WS", "FWFS", "RA", ... into buf (>= 8 bytes); returns buf. */
const char *il_blk_rwbs(__u32 op, __u32 flags, char *buf, size_t len);

/* The path of the cgroup with id (struct blk_io.cgroup) into buf, relative to the
 * hierarchy the block layer's cgroups live in (v1 blkio when mounted, else v2): found by
 * walking that hierarchy (again, at most once a second, on a miss); else the blkio (v1) or v2
 * path of process pid from /proc/PID/cgroup (il_who_cgroup_path()); else "cgroup:ID" (the
 * cgroup is gone); "-" for id 0 and no pid. Returns buf. */
const char *il_blk_cgroup_path(__u64 id, __u32 pid, char *buf, size_t len);

/* The id of a cgroup given as a path in that hierarchy ("/x", "x", or the full
 * /sys/fs/cgroup/... path) or as "cgroup:ID": its directory's inode number. 0, or -1. */
int il_blk_cgroup_id(const char *path, __u64 *id);

/* The I/O throttle rules of cgroup (a path as il_blk_cgroup_path() gives) for disk dev:
 * the lines of blkio.throttle.{read,write}_{bps,iops}_device (v1) or io.max (v2) naming dev,
 * as "FILE LINE[, ...]" into buf ("" when none). Returns buf. */
const char *il_blk_throttle_rule(const char *cgroup, __u32 dev, char *buf, size_t len);

/* A bio-based disk (no blk-mq: dm, md, ...): its bios never become requests (dev may be a
 * partition: its disk is looked at). */
bool il_blk_bio_based(__u32 dev);

/* Whether any disk of this machine is bio-based. */
bool il_blk_any_bio_based(void);

/* One (disk, cgroup) of the aggregate map blk_cgroups. */
struct il_blk_cg_row {
	struct blk_cg_key k;
	struct blk_cg v;
};

/* Read blk_cgroups of a loaded obj into a malloc'ed array (*rows, freed by the caller).
 * Returns the number of rows, or -errno. */
int il_blk_cgroups_read(struct bpf_object *obj, struct il_blk_cg_row **rows);

/* One disk's totals from the aggregate map blk_disks. */
struct il_blk_disk_row {
	__u32 dev;                     /* major << 20 | minor */
	struct blk_disk_stats st;
};

/* Read blk_disks of a loaded obj into a malloc'ed array (*rows, freed by the caller).
 * Returns the number of disks, or -errno. */
int il_blk_disks_read(struct bpf_object *obj, struct il_blk_disk_row **rows);

/* ---- filesystem layer (user/lib/fs.c) ------------------------------------------------------ */

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

/* After load: hand the syscall tracepoints' slow events to fs_send (when it was loaded:
 * fs_cfg.min_ns not ~0). 0, or -errno. */
int il_fs_loaded(struct bpf_object *obj);

/* Before the object is destroyed: take fs_send out of fs_send_prog, so that it goes with the
 * other programs (a program array lets go of its programs only some time after its last
 * file descriptor is closed). */
void il_fs_unload(struct bpf_object *obj);

/* The syncs run inside O_SYNC/O_DSYNC writes, summed over the CPUs into *out, when the object
 * was loaded with fs_cfg.nested_apart (else all zero: they are in the fsync totals). 0, or -errno. */
int il_fs_nested_read(struct bpf_object *obj, struct fs_op_stats *out);

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

/* The rows as a JSON array of {pid, comm, requests, io_submit_calls, io_submit_failed,
 * io_submit_usecs, io_getevents_calls, events, io_getevents_usecs, notice}. */
struct json_object *il_fs_aio_json(const struct il_fs_aio_row *aio, int n);

/* Calls whose start is still recorded though their thread has exited: their return was
 * missed. Add to the drops' IL_DROP_MISSED_RETURN. */
__u64 il_fs_orphan_starts(struct bpf_object *obj);

/* The full path of an event's file into buf (IL_PATH_STR_MAX bytes hold any): mount point +
 * names from the root down, as il_path_str() (user/lib/path.h) writes it: "..." first past
 * IL_PATH_DEPTH names or without a known mount point, " (deleted)" last for an unlinked
 * file. Never empty. The caller checks that the record holds e->path.len bytes of names.
 * Returns buf. */
const char *il_fs_event_path(const struct fs_event *e, char *buf, size_t len);

/* ---- writeback layer (user/lib/writeback.c) ------------------------------------------------ */

/* Settings, with the defaults of ext4_writepages: func, 2 arguments, a wbc, rows on, no
 * stacks. */
struct wb_cfg *il_wb_cfg(struct bpf_object *obj);

/* Kernel stacks on non-zero returns (wb_cfg.want_stack) or not, with wb_stacks sized to
 * match (before load). */
void il_wb_want_stack(struct bpf_object *obj, bool want);

/* Plan of the writeback returns of func (enum wb_func) named target: fexit+fentry (when
 * fentry_ok: the function has BTF), kretprobe+kprobe, and for ext4_writepages/do_writepages
 * the tracepoints that bracket them (tp_btf, raw_tp). */
void il_wb_plan(struct bpf_object *obj, enum wb_func func, const char *target, bool fentry_ok,
		struct il_plan *p);

/* What the tracepoint method of func cannot see, one sentence; NULL for other methods. */
const char *il_wb_tp_limits(enum wb_func func, int method);

/* Does method see the return value of func? Not do_writepages through tracepoints (its
 * rows have RET ?), so filtering on the return value cannot work there. */
bool il_wb_ret_visible(enum wb_func func, int method);

/* One line of the summary map wb_stats. */
struct il_wb_row {
	struct wb_stat_key k;
	struct wb_stat v;
};

/* Read wb_stats of a loaded obj into a malloc'ed array (*rows, freed by the caller), sorted
 * by func, ret, sync_mode. Returns the number of rows, or -errno. */
int il_wb_stats_read(struct bpf_object *obj, struct il_wb_row **rows);

/* ---- I/O-wait layer (user/lib/iowait.c) ---------------------------------------------------- */

/* Settings, with iw_cfg.tp_prev_state read from sched_switch's BTF prototype. */
struct iw_cfg *il_iw_cfg(struct bpf_object *obj);

/* Plan "I/O wait (sched_switch)": tp_btf, else raw_tp. */
void il_iw_plan(struct bpf_object *obj, struct il_plan *p);

/* Call fn for every aggregate of iw_waits of a loaded obj (cumulative since start); stops
 * when fn returns non-zero. 0, or -errno when the map cannot be read. */
int il_iw_foreach(struct bpf_object *obj,
		      int (*fn)(const struct iw_key *k, const struct iw_val *v, void *ctx), void *ctx);

/* What user space keeps of the layer's sums: one entry per kernel aggregate, with its value
 * at the last read (cumulative since start) and its growth since the last interval report. */
struct il_iw_entry {
	struct iw_key key;
	struct iw_val seen;   /* the kernel's cumulative value at the last read */
	struct iw_val iv;     /* growth since il_iw_table_new_interval(); max_ns is not kept */
};

struct il_iw_table {
	struct il_iw_entry *v;
	size_t n, cap;
	int *index;           /* open addressing over v, -1 = empty */
	size_t index_size;
};

/* Fold the kernel's sums (iw_waits of a loaded obj) into t; on_new (may be NULL) is called
 * for each entry seen for the first time. 0, or -errno. */
int il_iw_table_read(struct bpf_object *obj, struct il_iw_table *t,
		     void (*on_new)(const struct il_iw_entry *e, void *ctx), void *ctx);
void il_iw_table_new_interval(struct il_iw_table *t);
void il_iw_table_free(struct il_iw_table *t);

/* One stack (kernel and user) and the entries (threads) that slept under it. */
struct il_iw_group {
	__s32 kstack, ustack;
	__u64 ucaller;                /* iw_key.ucaller of its user stack */
	__u32 utgid;                  /* user stacks are per process */
	struct iw_val sum;
	struct il_iw_entry **members; /* sorted by total wait */
	size_t nmembers;
};

/* Per-thread totals (a thread that exec()ed is shown under the name with most wait). */
struct il_iw_thread {
	const struct iw_key *key;
	struct iw_val sum;
};

/* A report's view of t: entries with waits (their interval growth when interval is true,
 * else everything since start), grouped by stack, groups sorted by total wait, and per-thread
 * totals sorted likewise. Free with il_iw_report_free(). */
struct il_iw_report {
	bool interval;
	struct il_iw_entry **list;
	size_t nlist;
	struct il_iw_group *groups;
	size_t ngroups;
	struct il_iw_thread *threads;
	size_t nthreads;
	struct iw_val all;            /* the sum of every group */
	struct il_iw_entry *rows;     /* after il_iw_report_merge(): the groups' merged rows */
	struct il_iw_entry **rowp;
};

struct il_stacknames;

void il_iw_report_make(const struct il_iw_table *t, bool interval, struct il_iw_report *r);

/* Merge the groups of r that print alike once names has named their stacks (the kernel
 * stack; with user, also the user stack of the same process): the kernel records stacks
 * that differ only in the tracer's own frames under different ids (see il_stacknames_get()).
 * Their sums are added and the largest max kept; a thread's rows under them (same pid, tid
 * and comm) become one row, with its sums added likewise; groups and rows are sorted again.
 * r->list and r->threads are left as they are (per entry, per thread). */
void il_iw_report_merge(struct il_iw_report *r, struct il_stacknames *names, bool user);
void il_iw_report_free(struct il_iw_report *r);

/* The value of e a report uses. */
const struct iw_val *il_iw_val(const struct il_iw_entry *e, bool interval);

/* ---- attribution (user/lib/who.c; kernel side bpf/lib/who.bpf.h) ---------------------------- */

/* Turn attribution on in obj (who_cfg.on, the bio tracepoint's shape from BTF). Without
 * this call the layers skip it and its maps are shrunk to one entry (the layers' il_*_cfg
 * do that), so tools that do not attribute pay nothing. */
void il_who_enable(struct bpf_object *obj);

/* Shrink the attribution maps of obj unless il_who_enable() was called (before load). */
void il_who_default(struct bpf_object *obj);

/* Plan "block submissions (who)": block_bio_queue, tp_btf else raw_tp. */
void il_who_plan(struct bpf_object *obj, struct il_plan *p);

struct il_who_proc_row { __u32 tgid; struct who_proc v; };
struct il_who_file_row { struct who_file_key k; struct who_file v; };
struct il_who_pd_row { struct who_pd_key k; struct who_pd v; };

/* What attribution saw, read from a loaded obj: malloc'ed arrays (il_who_free()). */
struct il_who {
	struct il_who_proc_row *procs;
	int nprocs;
	struct il_who_file_row *files;
	int nfiles;
	struct il_who_pd_row *pd;
	int npd;
	__u64 evicted[WHO_MAP__MAX];   /* entries the LRU maps evicted (enum who_map) */
};

/* 0, or -errno. */
int il_who_read(struct bpf_object *obj, struct il_who *w);
void il_who_free(struct il_who *w);

/* Sum of a process's file-operation time, ns. */
__u64 il_who_proc_fs_ns(const struct who_proc *p);

/* The path of a file entry into buf: mount point of its filesystem + names from the root
 * down; "..." first when the path is deeper than kept or the mount is unknown;
 * "[inode N on MAJ:MIN]" when no name was seen; "/dev/NAME" for a block device's own pages
 * (a filesystem's journal and metadata). A file renamed since it was first seen is found by
 * inode in the directory it was in (its name now), else " (deleted)" is added. Returns buf. */
const char *il_who_file_path(const struct who_file_key *k, const struct who_file *f, char *buf,
			     size_t len);

/* The cgroup path of process pid into buf, from /proc/PID/cgroup: the blkio controller's
 * path on cgroup v1 (the one that throttles block I/O), else the v2 path; "-" when the
 * process is gone. Returns buf. */
const char *il_who_cgroup_path(__u32 pid, char *buf, size_t len);

/* The cgroup path of process pid (attribution entry p) into buf: the cgroup the kernel
 * charged its I/O to, by id (p->io_cgroup_id in the v1 blkio hierarchy where one is mounted,
 * else p->cgroup_id in cgroup2), found among the hierarchy's directories; else as
 * il_who_cgroup_path(); "id:N" when the cgroup is gone too. Returns buf. */
const char *il_who_proc_cgroup(__u32 pid, const struct who_proc *p, char *buf, size_t len);

/* Remember the cgroup paths of the processes attribution has seen so far, while they run
 * (call it every second or so): il_who_cgroup_path() answers from it after they exit. */
void il_who_note_procs(struct bpf_object *obj);

/* The whole disk (major << 20 | minor) of block device dev (a partition's disk; dev itself
 * for a disk); dev when /sys does not say. */
__u32 il_whole_disk(__u32 dev);

/* A sleep still under way (left in iw_sleeping): its thread, the stacks it began under and
 * how long it has lasted so far. */
struct il_iw_sleeping {
	__u32 tgid, tid;
	char comm[IL_TASK_COMM_LEN];  /* read from /proc now */
	__s32 kstack, ustack;
	__u64 ucaller;
	__u64 waited_ns;
};

/* The sleeps of a loaded obj still under way now, longest first, into a malloc'ed array
 * (*out, freed by the caller), keeping those that already count under -m min_ns / -M max_ns
 * (0: no limit). An entry whose thread has left a CPU since, or is running, or is gone, is
 * not a sleep under way (its end was missed) and is left out. Returns how many, or -errno. */
int il_iw_sleeping_read(struct bpf_object *obj, __u64 min_ns, __u64 max_ns,
			struct il_iw_sleeping **out);

struct il_stacknames;

/* A sleep's stacks as iowaitstack shows them: the kernel stack, and with user (-U) the user
 * stack of process tgid after "--" (ucaller: the caller frame recovered at the user stack
 * pointer, 0 none), indented by 4; as JSON members kernel_stack, user_stack (with user) and
 * lost (a stack id IW_STACK_LOST) added to o. */
void il_iw_stacks_print(FILE *f, struct il_stacknames *names, __s32 kstack, __s32 ustack,
			__u32 tgid, __u64 ucaller, bool user);
void il_iw_stacks_json(struct json_object *o, struct il_stacknames *names, __s32 kstack,
		       __s32 ustack, __u32 tgid, __u64 ucaller, bool user);

/* The sleeps still under way at exit (n of them, from il_iw_sleeping_read()): a heading and
 * "still waiting: COMM pid PID tid TID, N usecs so far" with its stacks each (nothing when
 * n <= 0); or a JSON array of {comm, pid, tid, usecs, kernel_stack, user_stack, lost}. */
void il_iw_sleeping_print(FILE *f, const struct il_iw_sleeping *sw, int n,
			  struct il_stacknames *names, bool user);
struct json_object *il_iw_sleeping_json(const struct il_iw_sleeping *sw, int n,
					struct il_stacknames *names, bool user);

#endif
