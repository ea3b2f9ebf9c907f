/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What attribution saw (user/lib/who.c), summed for people: top processes (in the spirit of
 * pidstat -d and iotop) and top files, as text tables and JSON arrays, and the process sums
 * the verdict weighs (verdict.h: struct il_who_sum).
 */
#ifndef IOLAYER_WHOVIEW_H
#define IOLAYER_WHOVIEW_H

#include <stdio.h>
#include <json-c/json.h>
#include "layers.h"
#include "layers/who.h"
#include "verdict.h"

/* One file, summed. */
struct il_who_file_sum {
	struct who_file_key k;
	char path[512];
	bool gone;                            /* deleted: path ends in the " (deleted)"
					       * il_who_file_path() added (a live file's own
					       * name may end so too) */
	__u32 pids[WHO_FILE_PIDS];
	bool more_pids;                       /* more processes than pids[] did calls on it */
	__u32 flusher_pid;
	__u64 read_bytes, write_bytes;        /* through file syscalls */
	__u64 fsyncs;                         /* fsync and fdatasync calls (io_uring's included) */
	__u64 sync_ranges;                    /* sync_file_range calls: no durability, not fsyncs */
	__u64 op_ns;                          /* time in file operations on it, ns */
	__u64 bio_write_bytes, bio_read_bytes; /* its page-cache bios, by anyone */
	__u32 inodes;                         /* files summed under this path: a file deleted
					       * and made again (SQLite's -journal) is one */
	__u32 deleted;                        /* of those, deleted now */
	bool dir;                             /* a directory (synced: it is listed only then) */
	char was[WHO_NAME_LEN + 1];           /* the name it had when first seen, when renamed
					       * since (a rotated log's app.log, now app.log.1);
					       * "" otherwise */
};

struct il_who_view {
	struct il_who_sum *procs;             /* sorted by time in file operations + I/O wait */
	int nprocs;
	struct il_who_file_sum *files;        /* sorted by operation time, then bytes */
	int nfiles;
	__u64 evicted[WHO_MAP__MAX];
};

/* Sum attribution read from a loaded object (il_who_read()) into v, naming its files,
 * processes' cgroups and top files (this reads /proc and the files' directories); no disk's
 * bytes counted yet (il_who_view_for_disk()). 0, or -ENOMEM. */
int il_who_view_from(const struct il_who *w, struct il_who_view *v);

/* Count as each process's disk_bytes and wb_bytes its bytes on whole disk disk_dev (0: none):
 * those it submitted there and those of its files there that kernel threads wrote back. */
void il_who_view_for_disk(struct il_who_view *v, __u32 disk_dev);

/* il_who_read() of a loaded obj, il_who_view_from() and il_who_view_for_disk(). 0, or -errno. */
int il_who_view_make(struct bpf_object *obj, __u32 disk_dev, struct il_who_view *v);

/* A copy of from into to (freed with il_who_view_free()). 0, or -ENOMEM. */
int il_who_view_copy(struct il_who_view *to, const struct il_who_view *from);

/* Take base's sums away from v's processes (same pid): what they did since base; a sum below
 * its base (the entry was evicted meanwhile) counts from zero. Processes are sorted again.
 * Files are left as they are. */
void il_who_view_sub(struct il_who_view *v, const struct il_who_view *base);
/* Keep in v only process pid and the kernel threads that sent bytes to v's disk (the
 * flusher, the journal: they work for it), and the files pid used (iolayer -p). */
void il_who_view_only(struct il_who_view *v, __u32 pid);
/* Keep in v only the processes of cgroup (a path in the io controller's hierarchy, as
 * il_who_sum.cgroup) and of those below it, the kernel threads that sent bytes to v's disk,
 * and the files those processes used (iolayer -C). */
void il_who_view_only_cgroup(struct il_who_view *v, const char *cgroup);
void il_who_view_free(struct il_who_view *v);

/* The disks (whole-disk devs) process pid of v touched: those its bios went to and those its
 * files live on, into devs (room for max): the disk of its top file (most operation time
 * among the files it used, il_who_sum.used_disk) first, then by most of its bytes (bytes it
 * submitted there plus bytes read and written through syscalls on its files there); returns
 * how many (0: pid is not in v). */
int il_who_view_disks(const struct il_who_view *v, __u32 pid, __u32 *devs, int max);

/* The process with most time in file operations and I/O wait (ties: bytes submitted), or 0;
 * a kernel thread only when no other process was seen. */
__u32 il_who_view_top_pid(const struct il_who_view *v);

/* "top processes" and "top files" tables, top rows of each (0: all); after the processes'
 * rows, the process that sent the most bytes to disk when it is not among them and none of
 * them sent as much (a disk load no call timed: Linux AIO). */
void il_who_view_print(FILE *f, const struct il_who_view *v, double elapsed_s, int top);

/* processes[] and files[] (top of each) added to o. */
void il_who_view_json(struct json_object *o, const struct il_who_view *v, double elapsed_s, int top);

#endif
