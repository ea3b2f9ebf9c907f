/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --cgroup CGROUP: trace every process of a cgroup and of the cgroups below it, children
 * forked later included, as -p traces one process. The cgroup is one of the io controller's
 * hierarchy (cgroup.h: v1 blkio, else v2), given as a path in it ("/system.slice/x.service",
 * "system.slice/x.service", or the full "/sys/fs/cgroup/blkio/..."), or as a container's id or
 * a prefix of it that only one container's directory has (cgident.h), or as the name of one
 * directory in it ("redis.service"): a word that is not a path there is looked for as these;
 * or "cgroup:ID", its kernfs id. BPF side: il_cg_wanted()
 * (bpf/lib/common.bpf.h), called by every layer's task filter, from il_cg_cfg. Prefix
 * il_cgfilter_.
 */
#ifndef IOLAYER_CGFILTER_H
#define IOLAYER_CGFILTER_H

#include <limits.h>
#include <stddef.h>
#include <bpf/libbpf.h>
#include "lib/shared.h"

struct il_cgfilter {
	struct il_cg_cfg cfg;      /* what the BPF side gets; cfg.id 0: no filter */
	char path[PATH_MAX];       /* the cgroup's path in the hierarchy ("/" the root) */
};

/* Resolve arg (see the top) into *f. 0; or -1 with one line saying why into err (no such
 * cgroup, not in the hierarchy, a prefix or name two cgroups share, no hierarchy mounted). */
int il_cgfilter_resolve(const char *arg, struct il_cgfilter *f, char *err, size_t errlen);

/* The filter the tool resolved (il_cgfilter_set), or NULL when --cgroup was not given. */
const struct il_cgfilter *il_cgfilter_get(void);

/* Keep *f as the tool's filter (il_tool_start, from --cgroup). */
void il_cgfilter_set(const struct il_cgfilter *f);

/* True (and "cgroup PATH was removed" on stderr) once the filter's cgroup directory is gone
 * or is another one of the same name (its inode changed): what il_run() ends with, as with a
 * -p process that exited. False without a filter. A stat(2) of the directory's path, twice a
 * second at most. */
bool il_cgfilter_gone(void);

/* Put the tool's filter into obj's il_cg_cfg (opened, not loaded): every layer of obj then
 * traces only the cgroup's tasks. Nothing without a filter or when obj has no il_cg_cfg. */
void il_cgfilter_apply(struct bpf_object *obj);

/* The processes in the filter's cgroup and below it now (their cgroup.procs), 0 when none or
 * no filter. */
unsigned il_cgfilter_nprocs(void);

/* What the filter traces, for the tools' stderr before tracing, e.g. "Only cgroup
 * /docker/3f2a... (docker:3f2a9c1b0d4e) and those below it: 3 processes now"; when it holds
 * none: "...: no process now (those that join it will be traced)". The path escaped as
 * every name in text. "" without a filter. Into buf, returns buf. */
const char *il_cgfilter_describe(char *buf, size_t len);

#endif
