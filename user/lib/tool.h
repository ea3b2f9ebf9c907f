/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The scaffold every tool stands on: the options they share, parsed by one argp child with
 * one set of bounds and messages, the checks before tracing, and one wording for each
 * failure of loading and output.
 *
 *   static const struct argp argp = { options, parse_arg, ARGS, doc, il_argp_children };
 *   il_tool_start("fsslower", &argp, IL_OPT_PID | IL_OPT_TID | IL_OPT_DURATION | IL_OPT_JSON,
 *                 argc, argv);
 *   ... il_opts.pid, il_opts.format ...
 *
 * Shared options: -v/--verbose (repeatable), --attach=METHOD, -h/--help, --usage,
 * -V/--version, and those the tool asks for: -p/--pid PID, --tid TID, -d/--duration SECONDS,
 * -j/--json, --csv, -C/--cgroup CGROUP.
 */
#ifndef IOLAYER_TOOL_H
#define IOLAYER_TOOL_H

#include <argp.h>
#include <stdbool.h>
#include <bpf/libbpf.h>
#include "btf.h"
#include "corebtf.h"
#include "loadpool.h"
#include "plan.h"

/* Which shared options a tool takes. */
enum il_tool_opt {
	IL_OPT_PID = 1,        /* -p PID: a process (all its threads) */
	IL_OPT_TID = 2,        /* --tid TID: a thread (of -p's process, when both are given) */
	IL_OPT_DURATION = 4,   /* -d SECONDS */
	IL_OPT_JSON = 8,       /* -j/--json */
	IL_OPT_CSV = 16,       /* --csv */
	IL_OPT_CGROUP = 32,    /* -C/--cgroup CGROUP: the processes of a cgroup and below (cgfilter.h) */
};

enum il_format { IL_FMT_TEXT, IL_FMT_JSON, IL_FMT_CSV };

struct il_common_opts {
	int verbose;            /* count of -v */
	enum il_family attach;  /* --attach, IL_FAM_ANY by default */
	unsigned pid, tid;      /* 0: not given */
	const char *cgroup;     /* --cgroup as given, NULL: not given (resolved: il_cgfilter_get()) */
	unsigned duration_s;    /* 0: until Ctrl-C */
	enum il_format format;
};

extern struct il_common_opts il_opts;

/* The argp children a tool's argp lists (the shared options). */
extern const struct argp_child il_argp_children[];

/*
 * Parse argv with the tool's argp (whose children are il_argp_children) and the shared options
 * in `opts` (enum il_tool_opt); set the log's name and verbosity; then refuse, in one line and
 * exit 1, what cannot trace: non-root, no BTF, -p of no process or of a thread that is not a
 * process's main thread, --tid of no thread or outside -p. argp's own errors (an unknown
 * option) are one line too. --cgroup with -p or --tid, or of no cgroup, is refused the same way;
 * else resolved once (il_cgfilter_set()), and il_layerset_choose() applies it to the object. -h, --usage and -V print and exit 0. The -p/--tid target is then
 * watched (il_watch_target()): il_run() ends when it exits.
 */
void il_tool_start(const char *name, const struct argp *argp, unsigned opts, int argc, char **argv);

/* Before il_tool_start(): the tool's own help text for shared option key ('p', 'd', 'j'),
 * where its meaning there is narrower (a default duration, one JSON object). */
void il_tool_option_doc(int key, const char *doc);

/* An argument (ARGP_KEY_ARG) the tool's own parser leaves (ARGP_ERR_UNKNOWN) is refused by
 * the shared one: "unexpected argument 'ARG'". */

/* For a tool's own parser: report a bad value of an option or argument, exit 1. */
void il_argp_fail(struct argp_state *state, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

/* Open skeleton NAME (biolatency_bpf, ...) with its CO-RE relocations made against the small
 * BTF cached for it and this kernel when there is one (il_core_btf), else against vmlinux's.
 * The skeleton; at start-up, so it exits 1 after one line when it cannot be opened. */
#define IL_SKEL_OPEN(name)                                                                  \
	({                                                                                   \
		size_t elf_size_;                                                            \
		const void *elf_ = name##__elf_bytes(&elf_size_);                            \
		LIBBPF_OPTS(bpf_object_open_opts, open_opts_,                                \
			    .btf_custom_path = il_core_btf(elf_, elf_size_));                \
		il_load_handlers();                                                          \
		il_tool_opened(name##__open_opts(&open_opts_));                              \
	})

/* skel, or exit 1 after "cannot open the BPF object: ERROR" when it is NULL (IL_SKEL_OPEN). */
void *il_tool_opened(void *skel);

/* -d DISK of a tool, at start-up: when name is not NULL, its device number (major << 20 |
 * minor) into *dev and whether it is a partition into *part; exit 1 after "no block device
 * named 'NAME' (see lsblk)" when there is none. */
void il_tool_disk(const char *name, __u32 *dev, bool *part);

/* The result of SKEL__load(): 0, or -1 after the one line every tool prints. */
int il_tool_loaded(int err);

/* Flush stdout at the end: the exit status for the tool to return, IL_EXIT_OK also when the
 * reader went away (EPIPE, as Unix filters do), IL_EXIT_ERR after one line otherwise. */
int il_tool_output_status(void);

#endif
