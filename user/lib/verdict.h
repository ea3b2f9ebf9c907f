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
};

/* Short lower-case name of a layer: "none", "syscall/VFS", "filesystem", "writeback",
 * "block queue", "device", "block layer". */
const char *il_where_name(enum il_where l);

/* Judge: returns the slow layer and writes one or two sentences saying why into why. */
enum il_where il_verdict(const struct il_measure *m, char *why, size_t len);

/* ns as "850 ns", "12.3 us", "4.56 ms", "1.23 s" into buf; returns buf. */
const char *il_fmt_ns(__u64 ns, char *buf, size_t len);

/* A rate in the units of iolayer's tables: "45.2 KB/s" below 1024 KB/s, else "3.4 MB/s"
 * (KB = 1024 bytes, MB = 1024 KB). */
const char *il_fmt_rate(double bytes_per_s, char *buf, size_t len);

/* ---- who: the process, file and disk behind the slow layer ------------------------------ */

/* One process as the verdict weighs it (built from attribution by user/lib/whoview.c). */
struct il_who_sum {
	__u32 pid;
	char comm[16];
	char cgroup[128];            /* cgroup path, "-" unknown */
	__u64 op_ns[FS_OP__MAX];     /* time in each file operation, ns */
	__u64 op_count[FS_OP__MAX];
	__u64 iowait_ns;
	__u64 read_bytes, write_bytes; /* through file syscalls */
	__u64 bio_bytes;             /* submitted to every disk */
	__u64 disk_bytes;            /* submitted to the verdict's disk */
	char top_file[512];          /* its file with the most operation time, "" none */
	char top_file_disk[32];      /* the disk that file's filesystem is on, "" none or unknown */
	bool kthread;                /* a kernel thread (flusher, jbd2): named only when no process is */
	__u64 bio_write_bytes;       /* of bio_bytes, writes */
	__u64 wb_bytes;              /* its files' pages that kernel threads wrote back to `disk` */
	__u64 top_file_read_bytes;   /* top_file's own bytes through file syscalls (of every process; */
	__u64 top_file_write_bytes;  /* only their balance is used: which way the file goes) */
};

struct il_culprit {
	bool found;
	__u32 pid;
	char comm[16];
	char cgroup[128];
	char file[512];
	char disk[32];
	double bytes_per_s;          /* the bytes the sentence speaks of, per second */
	bool moved;                  /* it moved such bytes at all (else no verb, no rate) */
	bool writes;                 /* writes (else reads): the file's way when its bytes are known */
	bool file_way;               /* the file's own bytes say which way (else only where its time went) */
	bool block;                  /* the bytes are the ones it submitted to the disk */
};

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

#endif
