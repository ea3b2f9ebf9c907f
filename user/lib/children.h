/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The child processes of a process traced with -p, which the tools do not follow (a
 * server's workers: PostgreSQL's backends under the postmaster, a shell's commands). What
 * they read and wrote meanwhile comes from the kernel's own per-process counters
 * (/proc/PID/io: syscr, syscw, read_bytes, write_bytes), so a tool whose rows are empty can
 * say where the I/O went instead of printing silent zeros:
 *  - a child running when tracing began: what its counters grew by;
 *  - one born meanwhile: all of its counters;
 *  - one that exited meanwhile: its counters were added to the parent's own when the parent
 *    reaped it (the kernel's wait_task_zombie()), so /proc/PARENT/io less what its live
 *    threads did (/proc/PARENT/task/TID/io) grew by them; one that was running at the
 *    start brought its earlier counts along, which are taken off. The parent's own threads
 *    that exit add theirs there too (__exit_signal()), and they were traced: what they had
 *    done when they exited (the fs layer's fs_thread_exit at sched_process_exit) is taken
 *    off, and when no child was reaped at all (the children's page faults in
 *    /proc/PARENT/stat, cminflt + cmajflt, did not grow) none of that growth is theirs.
 * Only direct children are listed; what an exited child's own children did comes with it.
 */
#ifndef IOLAYER_CHILDREN_H
#define IOLAYER_CHILDREN_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

#define IL_CHILDREN_NAMED 3 /* children named in the note */

/* Counters of /proc/PID/io. */
struct il_child_io {
	unsigned pid;
	unsigned long long calls;          /* read and write system calls (syscr + syscw) */
	unsigned long long rbytes, wbytes; /* bytes they had storage read and write (read_bytes,
					    * write_bytes: page-cache fills and writeback) */
};

struct il_children {
	unsigned parent;                   /* the -p process; 0: none */
	struct il_child_io *start;         /* its children when tracing began, their counts */
	size_t nstart;
	struct il_child_io dead0;          /* the parent's counters less its live threads' then */
	unsigned long long cflt0;          /* its children's page faults then (cminflt + cmajflt) */
	int exited_fd;                     /* fs_exited_io: its threads that exited, or -1 */
	struct il_child_io exited0;        /* what that held then */
	/* The last il_children_sample(): children running then, and what all of them did since
	 * the start, exited ones included */
	unsigned n;                        /* running then */
	unsigned long long calls, rbytes, wbytes;
	unsigned named[IL_CHILDREN_NAMED]; /* the busiest running ones, by calls (0: none) */
	char comm[IL_CHILDREN_NAMED][16];
};

/* The children of parent now, and their counts (tracing begins, after attach). exited_fd:
 * the fs layer's map fs_exited_io (what parent's threads that exited had done), or -1 when
 * the tool has none. 0, or -errno when /proc cannot be read (c then reports nothing). */
int il_children_start(struct il_children *c, unsigned parent, int exited_fd);

/* Their counts since il_children_start() into c's totals (the tools sample every second and
 * at the end, so the last sample stands when the parent has gone). */
void il_children_sample(struct il_children *c);

/* One line for the normal output when the children made read or write calls meanwhile, e.g.
 * "note: process 1762's children made 21080 read and write calls meanwhile (/proc/PID/io,
 * those that exited included; 5 running; not traced: -p follows one process, give theirs;
 * busiest: 1770 postgres, 1771 postgres, 1764 postgres)"; "" when they made none (or there
 * is no parent). */
const char *il_children_note(const struct il_children *c, char *buf, size_t len);

/* {"running", "calls", "read_bytes", "write_bytes", "busiest": [{"pid", "comm"}]},
 * or NULL (JSON null) without a parent. */
struct json_object *il_children_json(const struct il_children *c);

void il_children_free(struct il_children *c);

#endif
