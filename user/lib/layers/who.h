/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Attribution's user side (user/lib/who.c; kernel side bpf/lib/who.bpf.h, types
 * bpf/lib/who.h): turning it on, its plan, reading its maps, the names of its files and
 * processes' cgroups. Prefix il_who_.
 */
#ifndef IOLAYER_LAYERS_WHO_H
#define IOLAYER_LAYERS_WHO_H

#include <stdbool.h>
#include <stdio.h>
#include <json-c/json.h>
#include <bpf/libbpf.h>
#include "plan.h"
#include "lib/who.h"

/* Turn attribution on in obj (who_cfg.on, the bio tracepoint's shape from BTF). Without
 * this call the layers skip it and its maps are shrunk to one entry (the layers' il_*_cfg
 * do that), so tools that do not attribute pay nothing. */
void il_who_enable(struct bpf_object *obj);

/* File operations are traced for some processes only (-p, -C), before load: a file's users
 * are not all known, so no process's bytes are taken as written back for others (who_cfg's
 * users_partial; kernel threads' still are). */
void il_who_users_partial(struct bpf_object *obj);

/* Shrink the attribution maps of obj unless il_who_enable() was called (before load). */
void il_who_default(struct bpf_object *obj);

/* Plan "block submissions (who)": block_bio_queue, tp_btf else raw_tp. */
void il_who_plan(struct bpf_object *obj, struct il_plan *p);

/* The block layer follows bios in obj with its block_bio_queue program (its bio plan was
 * chosen): that program attributes them too (who_cfg.bio_in_blk), and who_bio_btf/raw is
 * taken out of who's chosen plan, so one program runs on the tracepoint and reads the bio
 * once. After il_layerset_choose(), before load; nothing when attribution is off or its plan
 * has no block_bio_queue program chosen. */
void il_who_bio_in_block(struct bpf_object *obj, struct il_plan *who);

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

/* Rows r[0..n) sorted by (tgid, disk), the rows of one key summed into the first (its comm
 * the first one set): a key counted both in its slot of who_pd_slots and in who_pd. Returns
 * the rows left. */
int il_who_pd_merge(struct il_who_pd_row *r, int n);

/* 0, or -errno. */
int il_who_read(struct bpf_object *obj, struct il_who *w);

/* Each process's bio totals (who_proc.bios, bio_bytes, bio_write_bytes) added from its
 * (process, disk) rows in w->pd, where the kernel counts them alone (il_who_read() does
 * this). w->procs ends sorted by tgid. */
void il_who_procs_bios(struct il_who *w);
void il_who_free(struct il_who *w);

/* The path of a file entry into buf: mount point of its filesystem + names from the root
 * down, a name cut at WHO_NAME_LEN - 1 bytes ending in "..."; "..." first when the path is
 * deeper than kept or the mount is unknown;
 * "[inode N on MAJ:MIN]" when no name was seen; "/dev/NAME" for a block device's own pages
 * (a filesystem's journal and metadata). A file renamed since it was first seen is found by
 * inode in the directory it was in (its name now), else " (deleted)" is added, and *deleted
 * (when not NULL) says so: a live file may be called "x (deleted)" too. Returns buf. */
const char *il_who_file_path(const struct who_file_key *k, const struct who_file *f, char *buf,
			     size_t len, bool *deleted);

/* Begin a round of il_who_file_path() checks of files renamed or deleted since they were first
 * seen: each file is looked at (lstat, and open with O_NOFOLLOW for its generation) at most
 * once per round, at most budget files in all (-1: no limit, the default; 0: none, nothing is
 * opened or looked up by path). A file not looked at shows what its last check found, or the
 * path recorded when it was first seen (iolayer --serve: a scrape checks none, its main thread
 * 256 every 5 s). Not thread-safe: the callers of il_who_file_path() take turns (serve.c:
 * under its lock). */
void il_who_names_check(int budget);

/* The cgroup path of process pid (attribution entry p) into buf: the cgroup the kernel
 * charged its I/O to, by id (p->io_cgroup_id in the v1 blkio hierarchy where one is mounted,
 * else p->cgroup_id in cgroup2), as il_cgroup_path() (cgroup.h) names it; /proc/PID/cgroup
 * is read for an id not found only while il_who_names_check() allows looking at files.
 * Returns buf. */
const char *il_who_proc_cgroup(__u32 pid, const struct who_proc *p, char *buf, size_t len);

/* The cgroup path of process pid from /proc/PID/cgroup (il_cgroup_of_pid()), or "-" without
 * il_who_names_check() (a scrape opens no file per process). Returns buf. */
const char *il_who_pid_cgroup(__u32 pid, char *buf, size_t len);

/* The title process pid set itself, when it names its role: /proc/PID/cmdline's first
 * argument rewritten as "COMM: TITLE" (PostgreSQL's "postgres: 15/main: checkpointer",
 * nginx's "nginx: worker process", sshd's "sshd: alice [priv]"), so that processes of one
 * command are told apart by role. TITLE's leading words ending in ':' (a cluster name) are
 * skipped; at most its first two words are kept, up to one that holds '(', '[' or '@' or
 * starts with a digit (a client address, a status: "postgres: alice db1 [local] idle" gives
 * "alice db1"). Into buf ("" when the process set no such title, is gone, or is a kernel
 * thread); comm: the process's command (task comm, up to 15 bytes). Read once per process
 * (pid and comm) and kept (up to 3/4 of IL_WHO_TITLES processes, then all forgotten); /proc
 * is read only while il_who_names_check() allows looking at files, else "" for a process not
 * read before. Returns buf. */
#define IL_WHO_TITLES 8192
const char *il_who_pid_title(__u32 pid, const char *comm, char *buf, size_t len);

/* The title part of cmdline (n bytes, as /proc/PID/cmdline gives it) for command comm, as
 * il_who_pid_title() says, into buf ("" none). Returns buf. */
const char *il_who_title_parse(const char *cmdline, size_t n, const char *comm, char *buf, size_t len);

/* Remember the cgroup paths of the processes attribution has seen so far, while they run
 * (call it every second or so): il_cgroup_of_pid() answers from it after they exit. */
void il_who_note_procs(struct bpf_object *obj);

#endif
