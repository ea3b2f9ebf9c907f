/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one measurement path of iolayer's report and of --serve's /verdict.
 *
 *   il_snap_read()      every cumulative reading of a loaded object at one moment, names
 *                       resolved (files, cgroups, stacks): struct il_snap, plain data;
 *   il_measure_window() the difference between two snapshots (base NULL: since zero), a pure
 *                       function: the layers' numbers (struct il_measure, the verdict's
 *                       input), the disk they are judged on, the processes and files over
 *                       the same window (struct il_who_view), the top I/O-wait stack;
 *   il_window_json()    the one JSON of a window and its verdict: iolayer --json's layers and
 *                       verdict, and /verdict.
 *
 * The one-shot report measures (zero, the snapshot after detach); --serve measures (the
 * snapshot of IL_SERVE_WINDOW_S ago, now). Unit-tested with made-up snapshots
 * (tests/unit/test_measure.c). Not thread-safe: a snapshot belongs to one thread at a time;
 * il_snap_read() uses the source's stack names, which --serve guards with its lock.
 */
#ifndef IOLAYER_MEASURE_H
#define IOLAYER_MEASURE_H

#include <json-c/json.h>
#include <bpf/libbpf.h>
#include "drops.h"
#include "layers/block.h"
#include "lib/iowait.h"
#include "layers/split.h"
#include "layers/writeback.h"
#include "procstat.h"
#include "verdict.h"
#include "whoview.h"

struct il_stacknames;
struct il_frames;

/* What a measurement reads: a loaded object and which of its layers are attached. */
struct il_measure_src {
	struct bpf_object *obj;
	int drops_fd;                       /* the il_drops map */
	int stacks_fd;                      /* the I/O-wait layer's stack map, -1: none */
	struct il_stacknames *names;        /* made on first use from stacks_fd; il_measure_src_free() */
	__u32 pid;                          /* -p, 0: every process */
	__u32 prefer;                       /* every process, the block layer's rows those of
					     * this one's disk (0: the top process's; see
					     * il_measure_judge()) */
	const char *cgroup;                 /* -C's cgroup (il_cgfilter.path), NULL: none */
	bool fs, wb, iw, blk;               /* the layers attached */
	bool split;                         /* the calls' time split (user/lib/layers/split.h) */
};

void il_measure_src_free(struct il_measure_src *src);

/* A kernel stack's I/O-wait total, cumulative: stacks that print alike are one (equal frame
 * pointers of the source's names, user/lib/stacks.h). */
struct il_snap_stack {
	const struct il_frames *f;
	__u64 total_ns;                     /* its sleeps' weight (iw_val.weight_ns): an estimate when sampled */
};

/* One (disk, cgroup) of blk_cgroups with the names a verdict may use, resolved when read
 * (only for rows with held bios: the others are never named). */
struct il_snap_cg {
	struct il_blk_cg_row row;
	char cgroup[128];                   /* "" unless a path ("/x") */
	char rule[192];                     /* its throttle rules for row.k.dev, "" none */
};

/* One (disk, submitting process) of blk_procs, with its cgroup and, for a submitter whose
 * I/Os were held before Q, the throttle rules (resolved when read). */
struct il_snap_bp {
	struct il_blk_proc_row row;
	char cgroup[128];                   /* "" unless a path ("/x") */
	char rule[192];                     /* its throttle rules for row.k.dev, "" none */
};

/* Every cumulative reading at one moment. Arrays are malloc'ed (il_snap_free()). */
struct il_snap {
	unsigned long long t_ns;            /* il_now_ns() of the moment it stands for */
	struct fs_op_stats fs[FS_OP__MAX];
	struct fs_op_stats nested;          /* syncs inside O_SYNC/O_DSYNC writes */
	__u64 uring[FS_OP__MAX];            /* of fs[].count, io_uring requests (fs_uring_stats) */
	struct il_wb_row *wb;
	int nwb;
	struct iw_val iw;                   /* every thread and stack together */
	__u64 iw_slots[IL_HIST_SLOTS];      /* the sleeps' lengths, log2 of ns (iw_hist) */
	struct il_snap_stack *stacks;       /* with IL_SNAP_STACKS */
	int nstacks;
	struct il_blk_disk_row *disk;
	int ndisk;
	struct il_snap_cg *cg;
	int ncg;
	struct il_who_view view;            /* attribution, every process, named; disk 0 */
	struct il_split split;              /* the calls' time split, with src->split */
	struct il_snap_bp *bp;              /* blk_procs */
	int nbp;
	struct il_proc_cpu *cpu;            /* every process's CPU time, with IL_SNAP_CPU */
	int ncpu;
	__u64 lost[IL_DROP__MAX];           /* il_drops, and calls whose return was missed */
};

#define IL_SNAP_STACKS 1                    /* name the I/O-wait stacks (the verdict's) */
#define IL_SNAP_WHO 2                       /* read attribution */
#define IL_SNAP_CPU 4                       /* read every process's CPU time (/proc) */
#define IL_SNAP_MAPS 8                      /* the layers' maps (without it: none of them) */
#define IL_SNAP_JUDGE 16                    /* with the maps, what only a verdict uses: the time
					     * split, blk_cgroups and blk_procs, their cgroups named */
/* Everything a window's judgement (cause.h) reads. */
#define IL_SNAP_VERDICT (IL_SNAP_MAPS | IL_SNAP_JUDGE | IL_SNAP_STACKS | IL_SNAP_WHO | IL_SNAP_CPU)

/* Read what src's layers counted so far into s, at moment t_ns (what flags ask for).
 * A reader that fails leaves its part empty (said at -vv); 0, or -ENOMEM. */
int il_snap_read(struct il_measure_src *src, unsigned long long t_ns, unsigned flags,
		 struct il_snap *s);
/* Free what a base kept in a ring no longer needs: its files (the window's files are now's). */
void il_snap_trim(struct il_snap *s);
void il_snap_free(struct il_snap *s);

/* A process's writeback on a disk over the window: the pages of its files that other tasks
 * (the flusher, the journal, anyone) wrote back there, and the pages of others' files it
 * wrote back itself. */
struct il_win_dirtier {
	__u32 pid, dev;
	char comm[16];
	bool kthread;
	__u64 wb_bytes;                     /* its pages, written by others */
	__u64 foreign_bytes;                /* others' pages, written by it */
};

/* A window: what the layers measured, on which disk, who did it, the top I/O-wait stack. */
struct il_window {
	struct il_measure m;
	__u32 dev;                          /* the disk judged, 0: none */
	struct il_who_view view;            /* the window's processes (sums since base), its
					     * disk's bytes; with -p only it and the kernel threads
					     * that wrote to that disk; now's files */
	char frames[16][128];               /* the top I/O-wait stack, innermost first */
	int nframes;
	__u64 top_stack_ns;                 /* the I/O wait under it over the window, ns: its share
					     * of the sampled stacks' weight times the layer's total
					     * (an estimate, iw_cfg.sampled) */
	__u64 lost[IL_DROP__MAX];           /* now's: cumulative since start */
	struct il_split split;              /* the calls' time split over the window */
	struct il_snap_bp *bp;              /* blk_procs over the window */
	int nbp;
	struct il_win_dirtier *dirtiers;    /* every process's writeback for others and by
					     * others, per disk, over the window (before -p's filter) */
	int ndirtiers;
	struct il_proc_cpu *cpu;            /* CPU time over the window (cpu_ns; a kernel
					     * thread's run-queue wait too, runq_ns), when both
					     * snapshots read it; a process new since base counts
					     * its whole CPU time */
	int ncpu;
};

/* Measure what src saw between base (NULL: zero) and now into w (a pure function of the two
 * snapshots and src's pid and layers). Maxima are since start (a maximum cannot be taken
 * apart). The block layer's disk: the disk of the process behind the I/O (-p's, else the
 * window's top process: the disk of its top file, else of most of its bytes), even when no
 * request completed there; the disk with the most block-layer time when no process is known;
 * with -p and no disk of its own, none. 0, or -ENOMEM. */
int il_measure_window(const struct il_measure_src *src, const struct il_snap *now,
		      const struct il_snap *base, struct il_window *w);
void il_window_free(struct il_window *w);

/* A log2 histogram of ns (IL_HIST_SLOTS slots; NULL: no percentiles) summarized into *l:
 * percentiles as the exclusive upper bound of the bucket that holds them, ns. */
void il_lat_from_hist(struct il_lat *l, __u64 count, __u64 total, __u64 max, const __u64 *slots);

/* A duration in seconds, to the millisecond: 7.996, not 7.9964545549999997. */
struct json_object *il_json_seconds(double s);

/* {"count", "total_ns", "max_ns", "p50_lt_ns", "p99_lt_ns"} of *l (ns); the percentiles are
 * null where none is known (0 in *l: a layer without a histogram, or nothing counted). */
struct json_object *il_lat_json(const struct il_lat *l);

/* Process pid's own I/O on the window's disk (blk_procs: its requests, bytes and their time
 * before Q, in the queue and at the device) into *own, and every submitter's bytes there into
 * *disk_bytes. Returns whether it sent any. */
bool il_window_own_io(const struct il_window *w, __u32 pid, struct blk_proc *own, __u64 *disk_bytes);

/* The block phases a report shows as rows: before Q, Q2G, G2I, I2D (m->queue), D2C (m->device),
 * and each one's share of their summed time into shares[] (0 when none). */
#define IL_BLK_ROWS 5
void il_measure_blk_shares(const struct il_measure *m, double shares[IL_BLK_ROWS]);

/* The JSON of window w judged as v: {duration_s, pid, layers{syscall, sync_in_writes,
 * writeback, iowait, disk, queue, device{requests}, block_phases, block_held, block_cgroup,
 * block_throttle}, verdict{layer, reason, process{pid, comm, cgroup}, file, who, disk}, lost}.
 * iolayer --json adds its tables to it; /verdict serves it as it is. */
struct json_object *il_window_json(const struct il_window *w, const struct il_verdict *v);

#endif
