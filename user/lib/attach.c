/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "attach.h"
#include "ksyms.h"
#include "log.h"

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

/* ---- tracefs ------------------------------------------------------------------- */

const char *il_tracefs(void)
{
	static const char *path;
	struct stat st;

	if (path)
		return path;
	if (!stat("/sys/kernel/tracing/events", &st)) {
		path = "/sys/kernel/tracing";
	} else if (!stat("/sys/kernel/debug/tracing/events", &st)) {
		path = "/sys/kernel/debug/tracing";
	} else if (!mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL)) {
		il_debug("mounted tracefs at /sys/kernel/tracing");
		path = "/sys/kernel/tracing";
	}
	return path;
}

static void setwhy(char *why, size_t len, const char *fmt, const char *arg)
{
	if (why && len)
		snprintf(why, len, fmt, arg);
}

bool il_tracepoint_exists(const char *tp, char *why, size_t len)
{
	const char *fs = il_tracefs();
	char path[512], cat[128];
	const char *colon = strchr(tp, ':');

	if (!fs) {
		setwhy(why, len, "tracefs is not mounted and cannot be mounted%s", "");
		return false;
	}
	if (!colon || (size_t)(colon - tp) >= sizeof(cat)) {
		setwhy(why, len, "bad tracepoint name %s", tp);
		return false;
	}
	memcpy(cat, tp, colon - tp);
	cat[colon - tp] = 0;
	snprintf(path, sizeof(path), "%s/events/%s/%s/id", fs, cat, colon + 1);
	if (access(path, F_OK)) {
		setwhy(why, len, "tracepoint %s does not exist on this kernel", tp);
		return false;
	}
	return true;
}

/* ---- BTF ------------------------------------------------------------------------- */

static struct btf *vmlinux_btf;
static bool vmlinux_btf_tried;

static struct btf *get_vmlinux_btf(void)
{
	if (!vmlinux_btf_tried) {
		vmlinux_btf_tried = true;
		vmlinux_btf = btf__load_vmlinux_btf();
		if (!vmlinux_btf)
			vmlinux_btf = NULL;
	}
	return vmlinux_btf;
}

/* Find type `name` of `kind` in vmlinux BTF, then in loaded modules' BTF. On success sets
 * *type_id and *obj_fd (0 for vmlinux, else an fd of the module's BTF object, kept open). */
static int btf_find(const char *name, int kind, __u32 *type_id, int *obj_fd)
{
	struct btf *vm = get_vmlinux_btf();
	__u32 id = 0;
	int err;

	if (!vm)
		return -ENOENT;
	err = btf__find_by_name_kind(vm, name, kind);
	if (err > 0) {
		*type_id = err;
		*obj_fd = 0;
		return 0;
	}
	while (!bpf_btf_get_next_id(id, &id)) {
		struct bpf_btf_info info = {};
		__u32 info_len = sizeof(info);
		char mod[64] = "";
		struct btf *b;
		int fd, tid;

		fd = bpf_btf_get_fd_by_id(id);
		if (fd < 0)
			continue;
		info.name = (__u64)(unsigned long)mod;
		info.name_len = sizeof(mod);
		if (bpf_obj_get_info_by_fd(fd, &info, &info_len) || !info.kernel_btf ||
		    !strcmp(mod, "vmlinux")) {
			close(fd);
			continue;
		}
		b = btf__load_from_kernel_by_id_split(id, vm);
		if (!b) {
			close(fd);
			continue;
		}
		tid = btf__find_by_name_kind(b, name, kind);
		if (tid > 0 && (__u32)tid >= btf__type_cnt(vm)) {
			btf__free(b);
			*type_id = tid;
			*obj_fd = fd;
			return 0;
		}
		btf__free(b);
		close(fd);
	}
	return -ENOENT;
}

int il_btf_tp_nargs(const char *name)
{
	struct btf *vm = get_vmlinux_btf();
	const struct btf_type *t;
	char tname[256];
	int id;

	if (!vm)
		return -1;
	snprintf(tname, sizeof(tname), "btf_trace_%s", name);
	id = btf__find_by_name_kind(vm, tname, BTF_KIND_TYPEDEF);
	if (id <= 0)
		return -1;
	t = btf__type_by_id(vm, id);                 /* typedef */
	t = btf__type_by_id(vm, t->type);            /* pointer */
	if (!t || !btf_is_ptr(t))
		return -1;
	t = btf__type_by_id(vm, t->type);            /* func proto */
	if (!t || !btf_is_func_proto(t))
		return -1;
	return btf_vlen(t) - 1;
}

/* Load a two-instruction tracing program (r0 = 0; exit) against a BTF id and attach it.
 * This catches kernels where the BTF is there but the attach is not allowed. */
static int trial_tracing(enum bpf_attach_type type, __u32 btf_id, int obj_fd)
{
	struct bpf_insn insns[2] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = type,
		    .attach_btf_id = btf_id, .attach_btf_obj_fd = obj_fd);
	int fd, link, err = 0;

	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "il_trial", "GPL", insns, 2, &opts);
	if (fd < 0)
		return -errno;
	link = bpf_raw_tracepoint_open(NULL, fd);
	if (link < 0)
		err = -errno;
	else
		close(link);
	close(fd);
	return err;
}

struct probe_cache {
	char name[128];
	int kind;
	bool ok;
	char why[160];
	struct probe_cache *next;
};
static struct probe_cache *cache;

static struct probe_cache *cache_get(const char *name, int kind, bool *hit)
{
	struct probe_cache *c;

	for (c = cache; c; c = c->next) {
		if (c->kind == kind && !strcmp(c->name, name)) {
			*hit = true;
			return c;
		}
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		il_die("out of memory");
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->kind = kind;
	c->next = cache;
	cache = c;
	*hit = false;
	return c;
}

static bool cache_ret(struct probe_cache *c, char *why, size_t len)
{
	if (!c->ok && why && len)
		snprintf(why, len, "%s", c->why);
	return c->ok;
}

bool il_can_fentry(const char *func, char *why, size_t len)
{
	bool hit;
	struct probe_cache *c = cache_get(func, IL_M_FENTRY, &hit);
	__u32 id;
	int fd = 0, err;

	if (hit)
		return cache_ret(c, why, len);
	if (!get_vmlinux_btf()) {
		snprintf(c->why, sizeof(c->why), "no kernel BTF (/sys/kernel/btf/vmlinux)");
	} else if (btf_find(func, BTF_KIND_FUNC, &id, &fd)) {
		snprintf(c->why, sizeof(c->why),
			 "%s is not in the kernel's BTF (not built, inlined, or a module without BTF)", func);
	} else if ((err = trial_tracing(BPF_TRACE_FENTRY, id, fd))) {
		snprintf(c->why, sizeof(c->why), "fentry on %s refused by the kernel (%s)", func,
			 strerrorname_np(-err) ?: "error");
	} else {
		c->ok = true;
	}
	if (fd > 0)
		close(fd);
	return cache_ret(c, why, len);
}

static bool kprobes_supported(void)
{
	const char *fs;
	char path[256];

	if (!access("/sys/bus/event_source/devices/kprobe/type", F_OK))
		return true;
	fs = il_tracefs();
	if (!fs)
		return false;
	snprintf(path, sizeof(path), "%s/kprobe_events", fs);
	return !access(path, F_OK);
}

bool il_can_kprobe(const char *func, char *why, size_t len)
{
	bool hit;
	struct probe_cache *c = cache_get(func, IL_M_KPROBE, &hit);

	if (hit)
		return cache_ret(c, why, len);
	if (!kprobes_supported())
		snprintf(c->why, sizeof(c->why), "this kernel has no kprobes (CONFIG_KPROBES)");
	else if (!il_ksym_exists(func))
		snprintf(c->why, sizeof(c->why), "%s is not in /proc/kallsyms", func);
	else
		c->ok = true;
	return cache_ret(c, why, len);
}

bool il_can_tp_btf(const char *tp, char *why, size_t len)
{
	bool hit;
	struct probe_cache *c = cache_get(tp, IL_M_TP_BTF, &hit);
	const char *name = strchr(tp, ':') ? strchr(tp, ':') + 1 : tp;
	char tname[160];
	__u32 id;
	int fd = 0, err;

	if (hit)
		return cache_ret(c, why, len);
	snprintf(tname, sizeof(tname), "btf_trace_%s", name);
	if (!get_vmlinux_btf()) {
		snprintf(c->why, sizeof(c->why), "no kernel BTF (/sys/kernel/btf/vmlinux)");
	} else if (btf_find(tname, BTF_KIND_TYPEDEF, &id, &fd)) {
		snprintf(c->why, sizeof(c->why), "no BTF for tracepoint %s", tp);
	} else if ((err = trial_tracing(BPF_TRACE_RAW_TP, id, fd))) {
		snprintf(c->why, sizeof(c->why), "tp_btf on %s refused by the kernel (%s)", tp,
			 strerrorname_np(-err) ?: "error");
	} else {
		c->ok = true;
	}
	if (fd > 0)
		close(fd);
	return cache_ret(c, why, len);
}

bool il_kernel_has_func(const char *func)
{
	__u32 id;
	int fd = 0;

	if (get_vmlinux_btf() && !btf_find(func, BTF_KIND_FUNC, &id, &fd)) {
		if (fd > 0)
			close(fd);
		return true;
	}
	return il_ksym_exists(func);
}

/* ---- plans ----------------------------------------------------------------------- */

static bool target_ok(enum il_method m, const char *target, char *why, size_t len)
{
	switch (m) {
	case IL_M_FENTRY: return il_can_fentry(target, why, len);
	case IL_M_KPROBE: return il_can_kprobe(target, why, len);
	case IL_M_TP_BTF: return il_can_tp_btf(target, why, len);
	case IL_M_RAW_TP:
	case IL_M_TRACEPOINT: return il_tracepoint_exists(target, why, len);
	default: setwhy(why, len, "unknown method%s", ""); return false;
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
 * in another method's option (the fs layer's sync_file_range) is a tracepoint. */
static enum il_method prog_method(const struct il_option *o, const struct bpf_program *prog)
{
	return bpf_program__type(prog) == BPF_PROG_TYPE_TRACEPOINT ? IL_M_TRACEPOINT : o->method;
}

static bool option_fits(const struct il_option *o, bool *skipped, char *why, size_t len)
{
	for (int i = 0; i < IL_MAX_PROGS && o->progs[i].prog; i++) {
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

static bool plan_has_family(const struct il_plan *p, enum il_family fam)
{
	for (int j = 0; j < IL_MAX_OPTIONS && p->opts[j].progs[0].prog; j++)
		if (il_method_family(p->opts[j].method) == fam)
			return true;
	return false;
}

int il_plans_choose(struct il_plan *plans, int n, enum il_family fam)
{
	/* Everything listed starts off; the chosen programs are turned back on. */
	for (int i = 0; i < n; i++)
		for (int j = 0; j < IL_MAX_OPTIONS && plans[i].opts[j].progs[0].prog; j++)
			for (int k = 0; k < IL_MAX_PROGS && plans[i].opts[j].progs[k].prog; k++)
				bpf_program__set_autoload(plans[i].opts[j].progs[k].prog, false);

	for (int i = 0; i < n; i++) {
		struct il_plan *p = &plans[i];
		char reasons[1024] = "", why[256];
		size_t used = 0;

		enum il_family want = fam;

		p->chosen = -1;
		if (want != IL_FAM_ANY && !plan_has_family(p, want)) {
			il_info("%s: no %s method exists for it; choosing as usual", p->what,
				want == IL_FAM_FENTRY ? "fentry" : want == IL_FAM_KPROBE ? "kprobe" : "tracepoint");
			want = IL_FAM_ANY;
		}
		for (int j = 0; j < IL_MAX_OPTIONS && p->opts[j].progs[0].prog; j++) {
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
		for (int k = 0; k < IL_MAX_PROGS && o->progs[k].prog; k++) {
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
		il_info("%s: attaching with %s%s%s", p->what, il_method_name(o->method),
			o->limits ? " — " : "", o->limits ? o->limits : "");
	}
	return 0;
}

static struct bpf_link **links;
static int nlinks;

/* What has been attached: the same program on the same target (plans that fall back to
 * shared tracepoints, e.g. several filesystems on the syscall tracepoints) attaches once. */
static struct { const struct bpf_program *prog; const char *target; } *done;
static int ndone;

static bool attached_already(const struct bpf_program *prog, const char *target)
{
	for (int i = 0; i < ndone; i++)
		if (done[i].prog == prog && !strcmp(done[i].target, target))
			return true;
	return false;
}

int il_plans_attach(struct il_plan *plans, int n)
{
	for (int i = 0; i < n; i++) {
		struct il_plan *p = &plans[i];
		struct il_option *o;

		if (p->chosen < 0)
			continue;
		o = &p->opts[p->chosen];
		for (int k = 0; k < IL_MAX_PROGS && o->progs[k].prog; k++) {
			struct bpf_program *prog = o->progs[k].prog;
			struct bpf_link *l;

			if (p->skipped[k] || attached_already(prog, o->progs[k].target))
				continue;
			if (o->method == IL_M_KPROBE &&
			    !strncmp(bpf_program__section_name(prog), "kretprobe", 9)) {
				l = il_attach_kretprobe(prog, kprobe_func(prog, o->progs[k].target));
			} else if (o->method == IL_M_KPROBE && bare_section(prog)) {
				l = bpf_program__attach_kprobe(prog, false, o->progs[k].target);
			} else {
				l = bpf_program__attach(prog);
			}
			if (!l) {
				int err = errno;

				il_err("cannot attach %s to %s (%s): %s", il_method_name(prog_method(o, prog)),
				       o->progs[k].target, bpf_program__name(prog),
				       strerrorname_np(err) ?: strerror(err));
				return -1;
			}
			il_debug("attached %s %s -> %s", il_method_name(prog_method(o, prog)),
				 bpf_program__name(prog), o->progs[k].target);
			struct bpf_link **nl = realloc(links, (nlinks + 1) * sizeof(*links));
			if (!nl)
				il_die("out of memory");
			links = nl;
			links[nlinks++] = l;
			void *nd = realloc(done, (ndone + 1) * sizeof(*done));
			if (!nd)
				il_die("out of memory");
			done = nd;
			done[ndone].prog = prog;
			done[ndone++].target = o->progs[k].target;
		}
	}
	return 0;
}

void il_plans_detach(void)
{
	for (int i = 0; i < nlinks; i++)
		bpf_link__destroy(links[i]);
	il_kretprobes_remove();
	free(links);
	links = NULL;
	nlinks = 0;
	free(done);
	done = NULL;
	ndone = 0;
}
