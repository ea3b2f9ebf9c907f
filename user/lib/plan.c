/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "kretprobe.h"
#include "log.h"
#include "plan.h"
#include "probes.h"
#include "tracefs.h"

static const char *method_names[IL_M__MAX] = {
	[IL_M_FENTRY] = "fentry/fexit",
	[IL_M_KPROBE] = "kprobe/kretprobe",
	[IL_M_TP_BTF] = "tp_btf",
	[IL_M_RAW_TP] = "raw_tp",
	[IL_M_TRACEPOINT] = "tracepoint",
};

const char *il_method_name(enum il_method m)
{
	return m < IL_M__MAX ? method_names[m] : "?";
}

enum il_family il_method_family(enum il_method m)
{
	switch (m) {
	case IL_M_FENTRY: return IL_FAM_FENTRY;
	case IL_M_KPROBE: return IL_FAM_KPROBE;
	default: return IL_FAM_TRACEPOINT;
	}
}

const char *il_family_name(enum il_family f)
{
	static const char *names[IL_FAM__MAX] = { "auto", "fentry", "kprobe", "tracepoint" };

	return f < IL_FAM__MAX ? names[f] : "?";
}

int il_family_parse(const char *s, enum il_family *fam)
{
	static const struct { const char *name; enum il_family fam; } names[] = {
		{ "auto", IL_FAM_ANY },       { "fentry", IL_FAM_FENTRY },
		{ "fexit", IL_FAM_FENTRY },   { "kprobe", IL_FAM_KPROBE },
		{ "kretprobe", IL_FAM_KPROBE }, { "tracepoint", IL_FAM_TRACEPOINT },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(s, names[i].name)) {
			*fam = names[i].fam;
			return 0;
		}
	}
	return -1;
}

/* ---- building -------------------------------------------------------------------- */

static int plan_fail(struct il_plan *p, const char *fmt, ...)
{
	va_list ap;

	if (!p->error[0]) {
		va_start(ap, fmt);
		vsnprintf(p->error, sizeof(p->error), fmt, ap);
		va_end(ap);
	}
	return -1;
}

void il_plan_init(struct il_plan *p, const char *what)
{
	memset(p, 0, sizeof(*p));
	p->what = what;
	p->chosen = -1;
}

int il_plan_option(struct il_plan *p, enum il_method m, const char *limits)
{
	if (p->nopts >= IL_MAX_OPTIONS)
		return plan_fail(p, "%s: more than %d options", p->what, IL_MAX_OPTIONS);
	p->opts[p->nopts].method = m;
	p->opts[p->nopts].limits = limits;
	p->nopts++;
	return 0;
}

int il_plan_add(struct il_plan *p, struct bpf_object *obj, const char *prog, const char *target,
		bool optional)
{
	struct il_option *o = p->nopts ? &p->opts[p->nopts - 1] : NULL;
	struct bpf_program *bp = bpf_object__find_program_by_name(obj, prog);

	if (!o)
		return plan_fail(p, "%s: program %s added before any option", p->what, prog);
	if (!bp)
		return plan_fail(p, "%s: the BPF object has no program %s", p->what, prog);
	if (o->nprogs >= IL_MAX_PROGS)
		return plan_fail(p, "%s: more than %d programs in the %s option", p->what,
				 IL_MAX_PROGS, il_method_name(o->method));
	if (strlen(target) >= IL_TARGET_LEN)
		return plan_fail(p, "%s: target name too long: %s", p->what, target);
	o->progs[o->nprogs].prog = bp;
	snprintf(o->progs[o->nprogs].target, IL_TARGET_LEN, "%s", target);
	o->progs[o->nprogs].optional = optional;
	o->nprogs++;
	return 0;
}

void il_plan_tp_twins(struct il_plan *p, struct bpf_object *obj, const char *what,
		      const char *btf_prog, const char *raw_prog, const char *tp)
{
	il_plan_init(p, what);
	il_plan_option(p, IL_M_TP_BTF, NULL);
	il_plan_add(p, obj, btf_prog, tp, false);
	il_plan_option(p, IL_M_RAW_TP, NULL);
	il_plan_add(p, obj, raw_prog, tp, false);
}

/* ---- choosing ----------------------------------------------------------------------- */

static void setwhy(char *why, size_t len, const char *what)
{
	if (why && len)
		snprintf(why, len, "%s", what);
}

static bool target_ok(enum il_method m, const char *target, char *why, size_t len)
{
	switch (m) {
	case IL_M_FENTRY: return il_can_fentry(target, why, len);
	case IL_M_KPROBE: return il_can_kprobe(target, why, len);
	case IL_M_TP_BTF: return il_can_tp_btf(target, why, len);
	case IL_M_RAW_TP:
	case IL_M_TRACEPOINT: return il_tracepoint_exists(target, why, len);
	default: setwhy(why, len, "unknown method"); return false;
	}
}

/* Section without a target, e.g. "fentry" or "kprobe" (not "kprobe/vfs_read"). */
static bool bare_section(const struct bpf_program *p)
{
	return !strchr(bpf_program__section_name(p), '/');
}

/* The kernel function a kprobe program goes on: its section's "kretprobe/FUNC" or, for a bare
 * section, the plan's target. */
static const char *kprobe_func(const struct bpf_program *p, const char *target)
{
	const char *slash = strchr(bpf_program__section_name(p), '/');

	return slash ? slash + 1 : target;
}

/* The method prog is checked with: the option's, but a classic tracepoint program listed
 * in another method's option (the fs layer's sync_file_range) is a tracepoint, and a raw
 * tracepoint program in the tp_btf option (a module's tracepoint without BTF) a raw one. */
static enum il_method prog_method(const struct il_option *o, const struct bpf_program *prog)
{
	if (bpf_program__type(prog) == BPF_PROG_TYPE_TRACEPOINT)
		return IL_M_TRACEPOINT;
	if (!strncmp(bpf_program__section_name(prog), "raw_tp", 6)) /* (tp_btf's type before load
									 * is raw tracepoint too) */
		return IL_M_RAW_TP;
	return o->method;
}

static bool option_fits(const struct il_option *o, bool *skipped, char *why, size_t len)
{
	for (int i = 0; i < o->nprogs; i++) {
		enum il_method m = prog_method(o, o->progs[i].prog);
		char w[192];

		skipped[i] = false;
		if (target_ok(m, o->progs[i].target, w, sizeof(w)))
			continue;
		if (o->progs[i].optional) {
			skipped[i] = true;
			il_debug("optional %s target %s skipped: %s", il_method_name(m),
				 o->progs[i].target, w);
			continue;
		}
		snprintf(why, len, "%s", w);
		return false;
	}
	return true;
}

int il_plan_method(const struct il_plan *p)
{
	return p->chosen < 0 ? -1 : (int)p->opts[p->chosen].method;
}

bool il_plan_leave_out(struct il_plan *p, const char *prog)
{
	struct il_option *o = p->chosen < 0 ? NULL : &p->opts[p->chosen];

	for (int k = 0; o && k < o->nprogs; k++) {
		if (strcmp(bpf_program__name(o->progs[k].prog), prog))
			continue;
		bpf_program__set_autoload(o->progs[k].prog, false);
		memmove(&o->progs[k], &o->progs[k + 1], (o->nprogs - k - 1) * sizeof(o->progs[0]));
		memmove(&p->skipped[k], &p->skipped[k + 1], (o->nprogs - k - 1) * sizeof(p->skipped[0]));
		o->nprogs--;
		return true;
	}
	return false;
}

enum il_family il_plan_family(const struct il_plan *p)
{
	return p->chosen < 0 ? IL_FAM_ANY : il_method_family(p->opts[p->chosen].method);
}

bool il_plan_has_family(const struct il_plan *p, enum il_family fam)
{
	for (int j = 0; j < p->nopts; j++)
		if (il_method_family(p->opts[j].method) == fam)
			return true;
	return false;
}

/* Notes held by il_plans_hold_notes(): lines, each ending in '\n' */
static char *held;
static size_t held_len;
static bool holding;

void il_plans_hold_notes(void)
{
	holding = true;
}

void il_plans_release_notes(bool print)
{
	for (char *line = held, *nl; print && line && (nl = memchr(line, '\n', held + held_len - line));
	     line = nl + 1)
		il_warn("%.*s", (int)(nl - line), line);
	free(held);
	held = NULL;
	held_len = 0;
	holding = false;
}

/* "tool: " + the note, now, or held until il_plans_release_notes() (then lost when out of
 * memory: a note, not an error). */
static void __attribute__((format(printf, 1, 2))) note(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (!holding) {
		il_warn("%s", s);
	} else {
		char *grown = realloc(held, held_len + n + 1);

		if (grown) {
			memcpy(grown + held_len, s, n);
			grown[held_len + n] = '\n';
			held = grown;
			held_len += n + 1;
		}
	}
	free(s);
}

int il_plans_choose(struct il_plan *plans, int n, enum il_family fam)
{
	/* Everything listed starts off; the chosen programs are turned back on. */
	for (int i = 0; i < n; i++) {
		if (plans[i].error[0]) {
			il_err("internal error: %s", plans[i].error);
			return -1;
		}
		for (int j = 0; j < plans[i].nopts; j++)
			for (int k = 0; k < plans[i].opts[j].nprogs; k++)
				bpf_program__set_autoload(plans[i].opts[j].progs[k].prog, false);
	}

	for (int i = 0; i < n; i++) {
		struct il_plan *p = &plans[i];
		char reasons[1024] = "", why[256];
		size_t used = 0;

		enum il_family want = fam;
		bool no_such_family = false;

		p->chosen = -1;
		/* A method the tool has not for this probe (a tracepoint-only tool asked for kprobes):
		 * it still works with what it has, and says so whatever the verbosity. */
		if (want != IL_FAM_ANY && !il_plan_has_family(p, want)) {
			no_such_family = true;
			want = IL_FAM_ANY;
		}
		for (int j = 0; j < p->nopts; j++) {
			struct il_option *o = &p->opts[j];

			if (want != IL_FAM_ANY && il_method_family(o->method) != want)
				continue;
			if (option_fits(o, p->skipped, why, sizeof(why))) {
				p->chosen = j;
				break;
			}
			il_debug("%s: %s does not fit: %s", p->what, il_method_name(o->method), why);
			used += snprintf(reasons + used, sizeof(reasons) - used, "%s%s",
					 used ? "; " : "", why);
			if (used >= sizeof(reasons))
				used = sizeof(reasons) - 1;
		}
		if (p->chosen < 0) {
			if (!used)
				snprintf(reasons, sizeof(reasons), "this tool has no such attach method");
			il_err("cannot trace %s on this kernel%s: %s", p->what,
			       want == IL_FAM_ANY ? "" : " with the forced attach method", reasons);
			return -1;
		}
		struct il_option *o = &p->opts[p->chosen];
		for (int k = 0; k < o->nprogs; k++) {
			struct bpf_program *prog = o->progs[k].prog;

			if (p->skipped[k])
				continue;
			bpf_program__set_autoload(prog, true);
			if (o->method == IL_M_FENTRY && bare_section(prog) &&
			    bpf_program__set_attach_target(prog, 0, o->progs[k].target)) {
				il_err("cannot set fentry target %s", o->progs[k].target);
				return -1;
			}
		}
		if (no_such_family)
			note("%s: no %s method exists for it in %s; attaching with %s instead%s%s",
				p->what, il_family_name(fam), il_tool, il_method_name(o->method),
				o->limits ? " — " : "", o->limits ? o->limits : "");
		else
			il_info("%s: attaching with %s%s%s", p->what, il_method_name(o->method),
				o->limits ? " — " : "", o->limits ? o->limits : "");
	}
	return 0;
}

/* ---- attaching ----------------------------------------------------------------------- */

/* Is prog already attached to target by one of the n plans (a link held)? Plans falling
 * back to shared tracepoints (several filesystems on the syscall tracepoints) list the
 * same program and target. */
static bool attached_already(const struct il_plan *plans, int n,
			     const struct bpf_program *prog, const char *target)
{
	for (int i = 0; i < n; i++) {
		const struct il_option *o;

		if (plans[i].chosen < 0)
			continue;
		o = &plans[i].opts[plans[i].chosen];
		for (int j = 0; j < o->nprogs; j++)
			if (plans[i].links[j] && o->progs[j].prog == prog &&
			    !strcmp(o->progs[j].target, target))
				return true;
	}
	return false;
}

static struct bpf_link *attach_one(const struct il_option *o, const struct il_prog *ip)
{
	struct bpf_program *prog = ip->prog;

	if (o->method == IL_M_KPROBE && !strncmp(bpf_program__section_name(prog), "kretprobe", 9))
		return il_attach_kretprobe(prog, kprobe_func(prog, ip->target));
	if (o->method == IL_M_KPROBE && bare_section(prog))
		return bpf_program__attach_kprobe(prog, false, ip->target);
	return bpf_program__attach(prog);
}

int il_plans_attach(struct il_plan *plans, int n)
{
	/* the last plans first: the layers that others' events rely on come later in the
	 * table (attribution, the time split's scheduler hooks), so they see the first calls
	 * whole (a call begun before sched_switch was attached counted its sleeps on CPU) */
	for (int i = n - 1; i >= 0; i--) {
		struct il_plan *p = &plans[i];
		struct il_option *o;

		if (p->chosen < 0)
			continue;
		o = &p->opts[p->chosen];
		for (int k = 0; k < o->nprogs; k++) {
			struct il_prog *ip = &o->progs[k];

			if (p->skipped[k] || attached_already(plans, n, ip->prog, ip->target))
				continue;
			p->links[k] = attach_one(o, ip);
			if (!p->links[k]) {
				int err = errno;

				il_err("cannot attach %s to %s (%s): %s",
				       il_method_name(prog_method(o, ip->prog)),
				       ip->target, bpf_program__name(ip->prog),
				       strerrorname_np(err) ?: strerror(err));
				return -1;
			}
			il_debug("attached %s %s -> %s", il_method_name(prog_method(o, ip->prog)),
				 bpf_program__name(ip->prog), ip->target);
		}
	}
	return 0;
}

static void *destroy_link(void *link)
{
	bpf_link__destroy(link);
	return NULL;
}

/* True when plans hold a link that patches kernel text at its removal (kprobe, fentry/fexit;
 * not tp_btf, also BPF_PROG_TYPE_TRACING). */
static bool plans_patch_text(const struct il_plan *plans, int n)
{
	for (int i = 0; i < n; i++) {
		const struct il_option *o = plans[i].chosen >= 0 ? &plans[i].opts[plans[i].chosen] : NULL;

		for (int k = 0; o && k < IL_MAX_PROGS; k++) {
			enum bpf_prog_type t;

			if (!plans[i].links[k])
				continue;
			t = bpf_program__type(o->progs[k].prog);
			if (t == BPF_PROG_TYPE_KPROBE ||
			    (t == BPF_PROG_TYPE_TRACING &&
			     bpf_program__expected_attach_type(o->progs[k].prog) != BPF_TRACE_RAW_TP))
				return true;
		}
	}
	return false;
}

/* Destroying the link of a classic tracepoint's program waits for RCU grace periods, 30-40 ms
 * each, one link after the other: the fs layer's 36 syscall tracepoints took 1.3 s on 6.18.
 * Where every link is a tracepoint's, one thread per perf-event tracepoint link lets them wait
 * together (40 ms in all). Where a kprobe or fentry link is among them, every link is
 * destroyed in turn: removals that patch kernel text at the same time as others locked up
 * 5.10 guests (in text_poke_bp) twice. A link for which no thread can be made is destroyed
 * here. */
void il_plans_detach(struct il_plan *plans, int n)
{
	bool serial = plans_patch_text(plans, n);
	pthread_t *threads = !serial && n > 0 ? calloc((size_t)n * IL_MAX_PROGS, sizeof(*threads)) : NULL;
	pthread_attr_t attr;
	size_t nthreads = 0;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 << 10); /* close(2) and free() */
	for (int i = 0; i < n; i++) {
		for (int k = 0; k < IL_MAX_PROGS; k++) {
			struct bpf_link *link = plans[i].links[k];

			plans[i].links[k] = NULL;
			if (!link)
				continue;
			if (threads && bpf_program__type(plans[i].opts[plans[i].chosen].progs[k].prog) ==
					       BPF_PROG_TYPE_TRACEPOINT &&
			    !pthread_create(&threads[nthreads], &attr, destroy_link, link))
				nthreads++;
			else
				bpf_link__destroy(link);
		}
	}
	for (size_t t = 0; t < nthreads; t++)
		pthread_join(threads[t], NULL);
	pthread_attr_destroy(&attr);
	free(threads);
	il_kretprobes_remove();
}
