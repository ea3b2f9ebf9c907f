/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The block layer's user side (user/lib/block.c; kernel side bpf/lib/block.bpf.h, types
 * bpf/lib/block.h): settings, plans, the phase tables, readers of its aggregates. Prefix il_blk_.
 */
#ifndef IOLAYER_LAYERS_BLOCK_H
#define IOLAYER_LAYERS_BLOCK_H

#include <stdbool.h>
#include <stdio.h>
#include <json-c/json.h>
#include <bpf/libbpf.h>
#include "plan.h"
#include "lib/block.h"

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

/* Names of the operations (enum il_req_op_kind): "read", "write", "flush", "discard", "other". */
extern const char *const il_blk_op_names[IL_OP__MAX];

/* blktrace's RWBS letters of an operation (enum il_req_op_kind) and its flags (enum
 * il_rq_flag): "W", "WS", "FWFS", "RA", ... into buf (>= 8 bytes); returns buf. */
const char *il_blk_rwbs(__u32 op, __u32 flags, char *buf, size_t len);

/* The aggregate maps (bpf/lib/block.bpf.h): blk_disks per CPU, whose entries the readers
 * below fold into one; blk_proc_cg shared (an LRU hash: one copy). */
enum il_blk_map { IL_BLK_MAP_DISKS, IL_BLK_MAP_PROC_CG, IL_BLK_MAP__MAX };

/* Fold ncpu copies of one value of map m (struct blk_disk_stats or blk_proc), each rounded up
 * to 8 bytes as a lookup of a per-CPU map gives them (blk_proc_cg: one), into *out: counts and sums added, maxima
 * the largest, the "last seen" fields (blk_proc's cgroup and comm) those of the copy that saw
 * them latest (blk_proc.last_ns). A disk's I2D and D2C phases are then its queue and device
 * totals (blk_phases_add() leaves them to these in the kernel). */
void il_blk_percpu_fold(enum il_blk_map m, void *out, const void *cpus, int ncpu);

/* One (disk, submitting process, cgroup) of the aggregate map blk_proc_cg. */
struct il_blk_pcg_row {
	struct blk_proc_cg_key k;
	struct blk_proc v;
};

/* One (disk, cgroup): blk_proc_cg's entries of that disk and cgroup summed. */
struct il_blk_cg_row {
	struct blk_cg_key k;
	struct blk_cg v;
};

/* One (disk, submitting process): blk_proc_cg's entries of that disk and process summed. */
struct il_blk_proc_row {
	struct blk_proc_key k;
	struct blk_proc v;
};

/* Sum n rows of blk_proc_cg by (disk, cgroup) into a malloc'ed array (*out, freed by the
 * caller; NULL when n is 0), in (disk, cgroup) order: counts, bytes and times added; tgid and
 * tgid_ns those of the latest completion (last_ns) among the rows with a known submitter.
 * Returns the number of rows, or -ENOMEM. */
int il_blk_cgroups_of(const struct il_blk_pcg_row *in, int n, struct il_blk_cg_row **out);

/* Sum n rows of blk_proc_cg by (disk, process) into a malloc'ed array (*out, freed by the
 * caller; NULL when n is 0), in (disk, tgid) order: counts, bytes and times added; cgroup,
 * comm and last_ns those of the latest completion. Returns the number of rows, or -ENOMEM. */
int il_blk_procs_of(const struct il_blk_pcg_row *in, int n, struct il_blk_proc_row **out);

/* Read blk_proc_cg and the taken slots of blk_pcg_slots of a loaded obj into a malloc'ed
 * array (*rows, freed by the caller; NULL when empty or on error; a key may be in both: the
 * sums add them), once for both sums (il_blk_cgroups_of(), il_blk_procs_of()).
 * Returns the number of rows, or -errno. */
int il_blk_pcg_read(struct bpf_object *obj, struct il_blk_pcg_row **rows);

/* One disk's totals from the aggregate map blk_disks. */
struct il_blk_disk_row {
	__u32 dev;                     /* major << 20 | minor */
	struct blk_disk_stats st;
};

/* Read blk_disks of a loaded obj into a malloc'ed array (*rows, freed by the caller), each
 * disk's per-CPU copies summed (the maxima the largest). Returns the number of disks, or
 * -errno. */
int il_blk_disks_read(struct bpf_object *obj, struct il_blk_disk_row **rows);

/* Disk dev's totals in blk_disks of a loaded obj into *st, summed over the CPUs as
 * il_blk_disks_read(). 0, or -errno (-ENOENT: no such disk yet, or no such map). */
int il_blk_disk_lookup(struct bpf_object *obj, __u32 dev, struct blk_disk_stats *st);

#endif
