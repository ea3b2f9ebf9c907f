/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Cgroups, in one place: the hierarchy of the io controller (cgroup v1's blkio hierarchy when
 * one is mounted: its ids are the ones bios carry then; else the cgroup2 mount), found through
 * mounts.h; a cgroup's path from its id (the inode number of its directory); a process's
 * cgroup; the throttle rules of a cgroup for a disk. A cgroup that is gone is "cgroup:ID".
 * Prefix il_cgroup_.
 *
 * Threading: every function may be called from any thread (iolayer --serve calls from its
 * HTTP thread and its main thread): one mutex inside guards the id -> path table and the
 * remembered paths of processes. il_cgroup_test_use() excepted: before any other call.
 */
#ifndef IOLAYER_CGROUP_H
#define IOLAYER_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

/* The mount point of the io controller's hierarchy into buf, and *v1 (may be NULL): whether
 * it is a v1 blkio hierarchy. NULL when neither it nor cgroup2 is mounted. Found when first
 * asked, then kept. */
const char *il_cgroup_root(char *buf, size_t len, bool *v1);

/* Whether that hierarchy is a v1 blkio one (bios then carry its ids, not cgroup2's). */
bool il_cgroup_v1(void);

/* The path of the cgroup with id (a kernfs id: struct blk_io.cgroup, who_proc.io_cgroup_id
 * on v1 or who_proc.cgroup_id on v2) into buf, relative to the root ("/" for the root), found
 * by walking the hierarchy (again, at most once a second, when id is not among what the last
 * walk found); else il_cgroup_of_pid(pid) when pid is not 0; else "cgroup:ID" (the cgroup
 * and the process are gone); "-" for id 0 and no path of pid. Returns buf. */
const char *il_cgroup_path(__u64 id, __u32 pid, char *buf, size_t len);

/* The id of a cgroup given as a path in the hierarchy ("/x", "x", or the full
 * /sys/fs/cgroup/... path) or as "cgroup:ID": its directory's inode number. 0, or -1. */
int il_cgroup_id(const char *path, __u64 *id);

/* The cgroup path of process pid into buf, from /proc/PID/cgroup: the blkio controller's
 * path on cgroup v1 (the one that throttles block I/O), else the v2 path; when the process
 * is gone, what il_cgroup_remember() kept of it; else "-". Returns buf. */
const char *il_cgroup_of_pid(__u32 pid, char *buf, size_t len);

/* The path a /proc/PID/cgroup file (read from f) gives, as il_cgroup_of_pid() chooses it,
 * into buf; "-" when it has neither line. Returns buf. */
const char *il_cgroup_parse_proc(FILE *f, char *buf, size_t len);

/* The same for v1 controller ctl ("cpu": its line "ID:cpu,cpuacct:PATH"), else the v2 path. */
const char *il_cgroup_parse_proc_of(FILE *f, const char *ctl, char *buf, size_t len);

/* The cgroup that schedules process pid's CPU time, from /proc/PID/cgroup now: the cpu
 * controller's path on cgroup v1, else the v2 path; "-" when the process is gone. Returns
 * buf. */
const char *il_cgroup_cpu_of_pid(__u32 pid, char *buf, size_t len);

/* Remember the cgroup path of process pid while it runs, for il_cgroup_of_pid() after it
 * exits (the first path seen is kept). */
void il_cgroup_remember(__u32 pid);

/* The I/O throttle rules of cgroup (a path as il_cgroup_path() gives) for disk dev
 * (major << 20 | minor): the lines of blkio.throttle.{read,write}_{bps,iops}_device (v1) or
 * io.max (v2) naming dev, as "FILE LINE[, ...]" into buf ("" when none). Returns buf. */
const char *il_cgroup_throttle_rule(const char *cgroup, __u32 dev, char *buf, size_t len);

/* For unit tests, before any other call: take root as the hierarchy (v1: a blkio one) instead
 * of the mount table's, and now_ns() as the clock of the re-walk (NULL: CLOCK_MONOTONIC). */
void il_cgroup_test_use(const char *root, bool v1, unsigned long long (*now_ns)(void));

#endif
