/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The verdict: from what each layer measured, which one is slow. Pure computation on
 * numbers (no BPF), so it is unit-tested with made-up measurements.
 */
#ifndef IOLAYER_VERDICT_H
#define IOLAYER_VERDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "fmt.h"
#include "lib/fs.h"

/* One latency distribution, summarized. Percentiles are the upper bound of the log2 bucket
 * that holds them (ns): "p99 < p99_lt_ns". */
struct il_lat {
	__u64 count;
	__u64 total_ns;
	__u64 max_ns;
	__u64 p50_lt_ns;
	__u64 p99_lt_ns;
};

/* What iolayer measured, layer by layer. A layer with seen == false was not traced. */
struct il_measure {
	double elapsed_s;
	__u32 pid;                          /* -p's process (its threads, not its children), 0: all */
	bool fs_seen;
	struct il_lat ops[FS_OP__MAX];      /* syscall/VFS: read, write, open, fsync, sync_file_range (enum fs_op) */
	struct il_lat nested_sync;          /* syncs run inside O_SYNC/O_DSYNC writes: not fsync calls, and
					     * their time is in the writes' (not judged, shown apart) */
	__u64 uring[FS_OP__MAX];            /* of ops[].count, io_uring requests: each timed from
					     * submission to completion (several in flight at once
					     * add up past the window), none split */
	bool wb_seen;
	struct il_lat wb;                   /* ext4_writepages calls (no percentiles: p*_lt_ns 0) */
	__u64 wb_errors;                    /* calls that returned < 0 */
	int wb_top_err;                     /* most frequent negative return, e.g. -12 */
	int wb_top_err_sync_mode;           /* its sync_mode: 0 WB_SYNC_NONE, 1 WB_SYNC_ALL */
	bool iw_seen;
	struct il_lat iowait;               /* sleeps in I/O wait */
	char iw_top_frame[128];             /* most telling frame of the top stack, "" if none */
	bool blk_seen;
	char disk[32];                      /* the disk with the most block-layer time */
	struct il_lat queue;                /* its insert -> issue */
	struct il_lat device;               /* its issue -> complete */
	__u64 reqs[IL_OP__MAX];             /* its requests completed, by operation (enum il_req_op_kind) */
	/* bios followed from submission (the phases of lib/block.h, same disk; count 0 when
	 * not seen): */
	struct il_lat before_q;             /* submit -> Q: held before the queue (blk-throttle) */
	struct il_lat q2g;                  /* Q -> G: rq-qos throttling, waiting for a tag */
	struct il_lat g2i;                  /* G -> I (or D): in the submitter's plug */
	struct il_lat q2c;                  /* Q -> C */
	__u64 blk_held;                     /* its I/Os whose first bio a worker queued for the
					     * submitter: held before Q (struct blk_cg.held) */
	char blk_cgroup[128];               /* the cgroup with held bios that waited longest before Q, "" */
	char blk_throttle[192];             /* that cgroup's throttle rules for the disk, "" none */
};

enum il_where {
	IL_WHERE_NONE,       /* nothing to judge: no I/O seen */
	IL_WHERE_SYSCALL,    /* syscall/VFS: page cache, locks, copies */
	IL_WHERE_FILESYSTEM, /* filesystem: journal, allocation, sync machinery */
	IL_WHERE_WRITEBACK,  /* writeback: writepages failing or throttling writers */
	IL_WHERE_QUEUE,      /* block queue: requests wait in the OS before the device */
	IL_WHERE_DEVICE,     /* the device itself */
	IL_WHERE_BLOCK,      /* the block layer before the queue: bios held between their
			      * submission and block_bio_queue (the cgroup throttle) */
	IL_WHERE_CPU,        /* no I/O layer: the calls wait for a CPU (run queue) */
};

/* Short lower-case name of a layer: "none", "syscall/VFS", "filesystem", "writeback",
 * "block queue", "device", "block layer", "CPU". */
const char *il_where_name(enum il_where l);

/* The reason's clauses (il_decision_text()'s sentence joins them with "; " or ": ", and
 * leaves those inside parentheses whole), one at a time, to say the first on the verdict's
 * line and the measurements under it: the clause at *p, its length in *len, and *p moved
 * past it and its separator. NULL when *p is at the end. */
const char *il_why_clause(const char **p, size_t *len);

/* Which sentence a decision is said with (il_decision_text()). */
enum il_why {
	IL_WHY_NOTHING,          /* no file operation and no block request seen */
	IL_WHY_IDLE,             /* too little I/O for any layer to stand out */
	IL_WHY_WB_ERRORS,        /* writepages fails */
	IL_WHY_NOFS_BEFORE_Q,    /* no file operations; bios held before the queue */
	IL_WHY_NOFS_NOT_HERE,    /* no file operations; waits, but not on this disk */
	IL_WHY_NOFS_BLOCK,       /* no file operations; the block layer's own numbers */
	IL_WHY_NO_BLOCK,         /* file operations, no block request */
	IL_WHY_BEFORE_Q,         /* the block layer accounts for the calls: bios held before Q */
	IL_WHY_BLOCK,            /* the block layer (queue or device) accounts for the calls */
	IL_WHY_ABOVE_BLOCK,      /* the calls' time goes above the block layer */
};

/* A decision: where the time goes, and the facts it was taken on (what the sentence quotes). */
struct il_decision {
	enum il_where where;
	enum il_why why;
	int top;                 /* the operation with the most time (enum fs_op), -1: none */
	bool blk;                /* the block layer's numbers count (a disk, requests completed) */
	__u64 blk_ns;            /* the p99s the block layer sentence sums: device, OS queue, Q2G,
				  * before Q when bios were held, ns */
	bool queue_worse;        /* the OS queue's p99s above the device's */
	bool before_q;           /* bios held before Q take the largest part of the block time */
	double before_q_share;   /* their share of the time in the block layer */
	double busy;             /* device time / elapsed: requests at the device on average */
	double in_blk;           /* requests in the block layer at once, on average */
	double fs_share;         /* file operations' time / elapsed */
	double iw_share;         /* I/O-wait time / elapsed */
	bool no_wait;            /* the device's p99 over twice the calls': they do not wait on it */
	bool quiet;              /* every p99 under IL_SLOW_NS: nothing slow in absolute terms */
};

/* Decide from m (pure arithmetic): where the time goes, and the facts of it into *d. */
void il_decide(const struct il_measure *m, struct il_decision *d);

/* Say decision d on m in one or two sentences into why (len bytes). Returns the length it
 * would have (as snprintf). */
size_t il_decision_text(const struct il_measure *m, const struct il_decision *d, char *why,
			size_t len);

/* il_decide() and il_decision_text(): returns where the time goes, the sentences in why. */
enum il_where il_verdict(const struct il_measure *m, char *why, size_t len);

/* ---- who: the process, file and disk behind the slow layer ------------------------------ */

/* A process's bytes on one whole disk (il_who_sum.disks). */
struct il_who_disk {
	__u32 dev;                   /* major << 20 | minor */
	bool ranked;                 /* counts for the process's disks (il_who_view_disks()) */
	__u64 bio_bytes;             /* it submitted there (who_pd) */
	__u64 wb_bytes;              /* its files' pages there that kernel threads wrote back */
	__u64 foreign_bytes;         /* of bio_bytes, pages of files it does not use: written back
				      * for their users (who_pd.foreign_bytes) */
	__u64 dirtied_bytes;         /* its pages others wrote back there, by who dirtied them
				      * (who_pd.dirtied_bytes) */
	__u64 file_bytes;            /* read and written through syscalls on files there that it
				      * used (every process's bytes of those files) */
};
#define IL_WHO_DISKS 8               /* disks kept per process; more are not weighed */

/* One process as the verdict weighs it (built from attribution by user/lib/whoview.c). */
struct il_who_sum {
	__u32 pid;
	char comm[16];
	char cgroup[256];            /* cgroup path, "-" unknown (a Kubernetes pod container's
				      * with the systemd driver: about 195 bytes) */
	__u64 op_ns[FS_OP__MAX];     /* time in each file operation, ns */
	__u64 op_count[FS_OP__MAX];
	__u64 iowait_ns;
	__u64 read_bytes, write_bytes; /* through file syscalls */
	__u64 bio_bytes;             /* submitted to every disk */
	__u64 disk_bytes;            /* submitted to the verdict's disk */
	char top_file[512];          /* its file with the most operation time, "" none */
	bool top_file_gone;          /* that file deleted: top_file ends in the " (deleted)"
				      * il_who_file_path() added */
	char top_file_disk[32];      /* the disk that file's filesystem is on, "" none or unknown */
	bool kthread;                /* a kernel thread (flusher, jbd2): named only when no process is */
	__u64 bio_write_bytes;       /* of bio_bytes, writes */
	__u64 wb_bytes;              /* its files' pages that kernel threads wrote back to `disk` */
	__u64 top_file_read_bytes;   /* top_file's own bytes through file syscalls (of every process; */
	__u64 top_file_write_bytes;  /* only their balance is used: which way the file goes) */
	struct il_who_disk disks[IL_WHO_DISKS]; /* in the order first met: bios, then files */
	int ndisks;
	bool untraced;               /* known only as the dirtier of pages written back: its file
				      * operations were not traced (-p) */
	__u32 used_disk;             /* the disk of the file it spent most time on among those it
				      * opened first (who_file.pids), 0 none: its disks' first */
	char direct_disk[32];        /* the disk it sends its bytes to itself, past the files
				      * traced (a block device it opened: fio on /dev/nvme0n1, a
				      * database on a raw partition): its busiest, where its top
				      * file's disk holds under an eighth of that one's bytes
				      * (used_disk then 0); "" none */
};

struct il_culprit {
	bool found;
	__u32 pid;
	char comm[16];
	char cgroup[256];
	char file[512];
	char disk[32];
	double bytes_per_s;          /* the bytes the sentence speaks of, per second */
	bool moved;                  /* it moved such bytes at all (else no verb, no rate) */
	bool writes;                 /* writes (else reads): the file's way when its bytes are known */
	bool file_way;               /* the file's own bytes say which way (else only where its time went) */
	bool block;                  /* the bytes are the ones it submitted to the disk */
	bool direct;                 /* its bytes go to the disk past its files traced (a block
	                              * device it writes itself): they are the ones it submitted */
};

/* Does process p send its bytes to disk (the verdict's) past its files traced: is disk its
 * direct_disk (whoview.c's proc_disks() decides, once)? */
bool il_culprit_direct(const struct il_who_sum *p, const char *disk);

/* The process behind layer l among procs[n] (by the time it spent in that layer: the
 * syscall ops for syscall/VFS, fsync and sync_file_range for filesystem, fsync + write +
 * I/O wait for writeback, its bytes on `disk` for the block queue and device: those it
 * submitted and those of its files that kernel threads wrote back), with its top file and
 * the disk. Only a process with a non-trivial share (IL_CULPRIT_SHARE of the layer's weight
 * over all of procs) is named. Ties go to the lower pid. A kernel thread is named only when
 * no other process qualifies. found is false when none does. The verb (reads, writes)
 * follows the top file's own bytes when it has any. */
#define IL_CULPRIT_SHARE 0.05
void il_verdict_culprit(enum il_where l, const struct il_who_sum *procs, int n,
			double elapsed_s, const char *disk, struct il_culprit *c);

/* "python (pid 4242, cgroup /x) writes 45.0 KB/s to /tmp/log.txt on sda" into buf (rates as
 * il_fmt_rate(); with no bytes moved, no verb; with a top file whose own bytes are unknown,
 * "(most time on FILE)"). */
const char *il_culprit_sentence(const struct il_culprit *c, char *buf, size_t len);

/* A verdict: the decision, its sentences and the process it names. */
struct il_verdict {
	struct il_decision d;
	char why[1024];
	struct il_culprit c;
};

/* Judge m with the processes procs[n] of the same window: decide, say it, name the process
 * behind it (il_verdict_culprit()). */
void il_judge(const struct il_measure *m, const struct il_who_sum *procs, int n,
	      struct il_verdict *v);

#endif
