/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Attach plans: for each thing a tool observes, the ways it can attach in order of
 * preference (fentry/fexit, kprobe/kretprobe, BTF tracepoint, raw tracepoint, tracepoint).
 * A layer builds its plans from a BPF object (il_plan_init/il_plan_option/il_plan_add, which
 * find programs by name and record a mistake in plan.error instead of writing past an
 * array); il_plans_choose() picks, per plan, the first option whose required targets this
 * kernel has, turns autoload off for every other program; il_plans_attach() attaches, and the
 * plan keeps its links until il_plans_detach().
 *
 * Call order: SKEL__open() -> layer plans -> il_plans_choose() -> SKEL__load()
 *             -> il_plans_attach() ... il_plans_detach() -> SKEL__destroy().
 */
#ifndef IOLAYER_PLAN_H
#define IOLAYER_PLAN_H

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
enum il_family { IL_FAM_ANY, IL_FAM_FENTRY, IL_FAM_KPROBE, IL_FAM_TRACEPOINT, IL_FAM__MAX };

/* Programs an option may list. Builders record an error rather than write past it. */
#define IL_MAX_PROGS 48
#define IL_MAX_OPTIONS 5
#define IL_TARGET_LEN 64

/* One program of an option and what it attaches to. A program whose section carries no
 * target ("fentry", "kprobe") gets `target` at choose/attach time, so one kprobe program may
 * be listed several times with different functions. A classic tracepoint program ("tp/...")
 * may be listed in an option of another method: it is checked and attached as a tracepoint. */
struct il_prog {
	struct bpf_program *prog;
	char target[IL_TARGET_LEN]; /* function name, or "category:event" for tracepoints */
	bool optional;              /* the option still fits when this target is missing */
};

struct il_option {
	enum il_method method;
	int nprogs;
	struct il_prog progs[IL_MAX_PROGS];
	const char *limits;         /* what this method cannot see (printed with -v), or NULL */
};

struct il_plan {
	const char *what;                        /* "block request lifetime", for messages */
	int nopts;
	struct il_option opts[IL_MAX_OPTIONS];   /* in order of preference */
	char error[160];                         /* a building mistake, "" when none */
	/* set by il_plans_choose(): */
	int chosen;                              /* index into opts, -1 when none fits */
	bool skipped[IL_MAX_PROGS];              /* optional targets of the chosen option not present */
	/* set by il_plans_attach(), released by il_plans_detach(): */
	struct bpf_link *links[IL_MAX_PROGS];
};

/* Start an empty plan. */
void il_plan_init(struct il_plan *p, const char *what);

/* Open the next option of p with method m and its limits text (may be NULL). 0, or -1 with
 * p->error set when p has IL_MAX_OPTIONS already. */
int il_plan_option(struct il_plan *p, enum il_method m, const char *limits);

/* Add program `prog` of obj with target to the last option of p. 0, or -1 with p->error set
 * when obj has no such program, there is no open option, or the option is full. */
int il_plan_add(struct il_plan *p, struct bpf_object *obj, const char *prog, const char *target,
		bool optional);

/* Start plan p as one program on one tracepoint ("category:event"), in its two flavours:
 * btf_prog (tp_btf) preferred, raw_prog (raw_tp) as the fallback. */
void il_plan_tp_twins(struct il_plan *p, struct bpf_object *obj, const char *what,
		      const char *btf_prog, const char *raw_prog, const char *tp);

/* Parse --attach=fentry|kprobe|tracepoint|auto. 0, or -1 on an unknown name. */
int il_family_parse(const char *s, enum il_family *fam);
const char *il_family_name(enum il_family f);
const char *il_method_name(enum il_method m);
enum il_family il_method_family(enum il_method m);

/* Choose an option for each of n plans (see top). With fam != IL_FAM_ANY only that family
 * is considered for plans that have an option of it; a plan with none (e.g. one built only on
 * tracepoints) is chosen as usual and -v says so. Prints the choice with -v. Returns 0, or -1
 * after printing one line that says what this kernel lacks. */
int il_plans_choose(struct il_plan *plans, int n, enum il_family fam);

/* The notes of il_plans_choose() that are no error ("no kprobe method exists for it ...;
 * attaching with tp_btf instead") held from il_plans_hold_notes() until
 * il_plans_release_notes(print): printed when the choice as a whole succeeded, dropped when
 * it failed, so a failure is one line. */
void il_plans_hold_notes(void);
void il_plans_release_notes(bool print);

/* Attach the chosen programs (after load), the last plan's first (the layers others rely on
 * come later in il_layer_table). A program listed with the same target by several of these
 * plans is attached once. Returns 0, or -1 after printing one line. */
int il_plans_attach(struct il_plan *plans, int n);

/* Destroy the links of n plans (attached or not, or zeroed), all at once (one thread each),
 * and remove the kretprobe events the process defined. */
void il_plans_detach(struct il_plan *plans, int n);

/* The chosen method of a plan (after il_plans_choose), or -1. */
int il_plan_method(const struct il_plan *p);

/* Does plan p have an option of family fam? */
bool il_plan_has_family(const struct il_plan *p, enum il_family fam);

/* Take program prog (by name) out of p's chosen option, after il_plans_choose() and before
 * load: it is neither loaded nor attached (another program does its work). Whether the chosen
 * option had it. */
bool il_plan_leave_out(struct il_plan *p, const char *prog);

/* The family of the chosen method, IL_FAM_ANY when none was chosen. */
enum il_family il_plan_family(const struct il_plan *p);

#endif
