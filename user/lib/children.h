/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The child processes of a process traced with -p, which the tools do not follow (a
 * server's workers: PostgreSQL's backends under the postmaster, a shell's commands). What
 * they read and wrote meanwhile comes from the kernel's own per-process counters
 * (/proc/PID/io: syscr, syscw, read_bytes, write_bytes), so a tool whose rows are empty can
 * say where the I/O went instead of printing silent zeros.
 */
#ifndef IOLAYER_CHILDREN_H
#define IOLAYER_CHILDREN_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

#define IL_CHILDREN_NAMED 3 /* children named in the note */

struct il_child_io {
	unsigned pid;
	unsigned long long calls;        /* read and write system calls (syscr + syscw) */
	unsigned long long rbytes, wbytes; /* bytes they had storage read and write (read_bytes,
					  * write_bytes: page-cache fills and writeback) */
};

struct il_children {
	unsigned parent;                 /* the -p process; 0: none */
	struct il_child_io *start;       /* its children when tracing began, and their counts */
	size_t nstart;
	/* il_children_end(): the children alive then, and what they did since the start (a
	 * child born meanwhile: all it did; one that exited meanwhile is not counted) */
	unsigned n;
	unsigned long long calls, rbytes, wbytes;
	unsigned named[IL_CHILDREN_NAMED]; /* the busiest ones, by calls (0: none) */
	char comm[IL_CHILDREN_NAMED][16];
};

/* The children of parent now, and their counts (tracing begins). 0, or -errno when /proc
 * cannot be read (c then reports nothing). */
int il_children_start(struct il_children *c, unsigned parent);

/* Their counts since il_children_start(), into c's totals. */
void il_children_end(struct il_children *c);

/* One line for the normal output when the children made read or write calls meanwhile, e.g.
 * "note: process 1762's 5 child processes made 21080 read and write calls meanwhile (not
 * traced: -p follows one process; busiest: 1770 postgres, 1771 postgres, 1764 postgres)";
 * "" when they made none (or there is no parent). */
const char *il_children_note(const struct il_children *c, char *buf, size_t len);

/* {"count", "calls", "read_bytes", "write_bytes", "busiest": [{"pid", "comm"}]}, or NULL
 * (JSON null) without a parent. */
struct json_object *il_children_json(const struct il_children *c);

void il_children_free(struct il_children *c);

#endif
