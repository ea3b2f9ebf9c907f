/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Attach plans: a tool lists, per thing it observes, the ways it can attach in order of
 * preference (fentry/fexit, kprobe/kretprobe, BTF tracepoint, raw tracepoint, tracepoint).
 * il_plans_choose() picks, per plan, the first option whose required targets this kernel
 * has (BTF function or tracepoint, kprobe support, and a trial load where presence is not
 * enough), turns autoload off for every other program, and il_plans_attach() attaches.
 *
 * Call order: SKEL__open() -> fill plans -> il_plans_choose() -> SKEL__load()
 *             -> il_plans_attach() ... il_plans_detach() -> SKEL__destroy().
 */
#ifndef IOLAYER_ATTACH_H
#define IOLAYER_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <bpf/libbpf.h>

enum il_method {
	IL_M_FENTRY,     /* fentry/fexit (section "fentry"/"fexit"); target = kernel function */
	IL_M_KPROBE,     /* kprobe/kretprobe; target = kernel function */
	IL_M_TP_BTF,     /* BTF-typed raw tracepoint ("tp_btf/NAME"); target = "category:event" */
	IL_M_RAW_TP,     /* raw tracepoint ("raw_tp/NAME"); target = "category:event" */
	IL_M_TRACEPOINT, /* classic tracepoint ("tp/CAT/NAME"); target = "category:event" */
	IL_M__MAX
};

/* What --attach=NAME forces: a family of methods. */
enum il_family { IL_FAM_ANY, IL_FAM_FENTRY, IL_FAM_KPROBE, IL_FAM_TRACEPOINT };

/* The largest option: the filesystem layer's tracepoints (17 syscalls, enter and exit, and
 * ext4_sync_file_enter/exit) = 36. Plan builders die rather than write past it. */
#define IL_MAX_PROGS 40
#define IL_MAX_OPTIONS 5

/* One program of an option and what it attaches to. A program whose section carries no
 * target ("fentry", "kprobe") gets `target` at choose/attach time, so one kprobe program may
 * be listed several times with different functions. A classic tracepoint program ("tp/...")
 * may be listed in an option of another method: it is checked and attached as a tracepoint. */
struct il_prog {
	struct bpf_program *prog; /* from the skeleton; NULL ends the list */
	const char *target;       /* function name, or "category:event" for tracepoints */
	bool optional;            /* the option still fits when this target is missing */
};

struct il_option {
	enum il_method method;               /* ignored when progs[0].prog is NULL (end of list) */
	struct il_prog progs[IL_MAX_PROGS];
	const char *limits;                  /* what this method cannot see (printed with -v), or NULL */
};

struct il_plan {
	const char *what;                        /* "block request lifetime", for messages */
	struct il_option opts[IL_MAX_OPTIONS];   /* in order of preference */
	/* set by il_plans_choose(): */
	int chosen;                              /* index into opts, -1 when none fits */
	bool skipped[IL_MAX_PROGS];              /* optional targets of the chosen option not present */
};

/* Parse --attach=fentry|kprobe|tracepoint|auto. 0, or -1 on an unknown name. */
int il_family_parse(const char *s, enum il_family *fam);
const char *il_method_name(enum il_method m);
enum il_family il_method_family(enum il_method m);

/* Choose an option for each of n plans (see top). With fam != IL_FAM_ANY only that family
 * is considered for plans that have an option of it; a plan with none (e.g. one built only on
 * tracepoints) is chosen as usual and -v says so. Prints the choice with -v. Returns 0, or -1 after printing one line that
 * says what this kernel lacks. */
int il_plans_choose(struct il_plan *plans, int n, enum il_family fam);

/* Attach the chosen programs (after load). A program listed with the same target by several
 * plans is attached once. Links are kept until il_plans_detach().
 * Returns 0, or -1 after printing one line. */
int il_plans_attach(struct il_plan *plans, int n);
void il_plans_detach(void);

/* The chosen method of a plan (after il_plans_choose), or -1. */
int il_plan_method(const struct il_plan *p);

/* Feature probes. Each returns true when usable; on false, `why` (may be NULL) receives a
 * short reason. Results are cached for the life of the process. */
bool il_can_fentry(const char *func, char *why, size_t len);   /* BTF FUNC + trial load/attach */
bool il_can_kprobe(const char *func, char *why, size_t len);   /* kprobe support + symbol */
bool il_can_tp_btf(const char *tp, char *why, size_t len);     /* btf_trace_NAME + trial load */
bool il_tracepoint_exists(const char *tp, char *why, size_t len); /* tracefs events/CAT/NAME */
bool il_kernel_has_func(const char *func);                     /* in BTF or /proc/kallsyms */

/* Number of arguments of tracepoint NAME's BTF prototype (btf_trace_NAME), not counting the
 * leading `void *`; -1 when the kernel's BTF does not describe it. Tracepoint argument lists
 * change between kernels (block_rq_issue lost its request_queue in 5.11). */
int il_btf_tp_nargs(const char *name);

/* Return probe on kernel function func for prog (a kretprobe program) with room for
 * IL_KRETPROBE_MAXACTIVE calls in flight at once (the kernel's default is as low as the number
 * of CPUs): defined in tracefs kprobe_events as iolayer/r<pid>_<n>, else, when that fails,
 * libbpf's kretprobe with the default. NULL with errno set on failure. (kretprobe.c) */
#define IL_KRETPROBE_MAXACTIVE 1024
struct bpf_link *il_attach_kretprobe(struct bpf_program *prog, const char *func);

/* Remove the tracefs kprobe events this process defined; their links must be destroyed
 * first. Also runs at exit. */
void il_kretprobes_remove(void);

/* The tracefs mount point, mounting tracefs at /sys/kernel/tracing when it is not mounted.
 * NULL when that fails. */
const char *il_tracefs(void);

#endif
