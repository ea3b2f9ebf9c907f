/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <elfutils/libdwfl.h>
#include "escape.h"
#include "log.h"
#include "stacks.h"

int il_stack_read(int map_fd, __u32 id, __u64 *ips, int max)
{
	int n;

	memset(ips, 0, max * sizeof(*ips));
	if (bpf_map_lookup_elem(map_fd, &id, ips))
		return -errno;
	for (n = 0; n < max && ips[n]; n++)
		;
	return n;
}

bool il_ksym_is_tracer(const char *name)
{
	static const char *const prefixes[] = {
		"bpf_prog_", "bpf_trace_run", "__bpf_trace_", "__traceiter_", "perf_trace_",
		"trace_event_raw_event_", "bpf_get_stack", "__bpf_get_stack", "bpf_get_stackid",
		"bpf_trampoline_", /* fentry/fexit trampolines ("bpf_trampoline_<key> [bpf]") */
	};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/* ---- user symbols (libdwfl) ------------------------------------------------------ */

#define USYMS_SLOTS 256/* processes kept at once; the oldest is dropped when full */

struct proc_syms {
	int pid;        /* 0: slot unused */
	Dwfl *dwfl;     /* NULL when the process could not be read (gone, or no maps) */
	unsigned long long used;
};

struct il_usyms {
	struct proc_syms procs[USYMS_SLOTS];
	unsigned long long clock;
};

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

struct il_usyms *il_usyms_new(void)
{
	return calloc(1, sizeof(struct il_usyms));
}

static void proc_drop(struct proc_syms *p)
{
	if (p->dwfl)
		dwfl_end(p->dwfl);
	memset(p, 0, sizeof(*p));
}

void il_usyms_free(struct il_usyms *u)
{
	if (!u)
		return;
	for (int i = 0; i < USYMS_SLOTS; i++)
		proc_drop(&u->procs[i]);
	free(u);
}

void il_usyms_forget(struct il_usyms *u, int pid)
{
	for (int i = 0; i < USYMS_SLOTS; i++)
		if (u->procs[i].pid == pid)
			proc_drop(&u->procs[i]);
}

static Dwfl *proc_open(int pid)
{
	Dwfl *d = dwfl_begin(&proc_callbacks);

	if (!d)
		return NULL;
	dwfl_report_begin(d);
	if (dwfl_linux_proc_report(d, pid) || dwfl_report_end(d, NULL, NULL)) {
		dwfl_end(d);
		return NULL;
	}
	return d;
}

static Dwfl *proc_get(struct il_usyms *u, int pid)
{
	struct proc_syms *victim = &u->procs[0];

	u->clock++;
	for (int i = 0; i < USYMS_SLOTS; i++) {
		struct proc_syms *p = &u->procs[i];

		if (p->pid == pid) {
			p->used = u->clock;
			return p->dwfl;
		}
		if (p->used < victim->used)
			victim = p;
	}
	proc_drop(victim);
	victim->pid = pid;
	victim->used = u->clock;
	victim->dwfl = proc_open(pid);
	return victim->dwfl;
}

int il_usyms_load(struct il_usyms *u, int pid)
{
	return proc_get(u, pid) ? 0 : -1;
}

const char *il_usyms_format(struct il_usyms *u, int pid, __u64 addr, char *buf, size_t len)
{
	Dwfl *d = u ? proc_get(u, pid) : NULL;
	Dwfl_Module *m = d && addr ? dwfl_addrmodule(d, addr - 1) : NULL;
	const char *obj, *sym, *slash;
	Dwarf_Addr start = 0, end = 0;
	char raw[512];
	GElf_Off off = 0;
	GElf_Sym s;

	if (m)
		obj = dwfl_module_info(m, NULL, &start, &end, NULL, NULL, NULL, NULL);
	/* dwfl_addrmodule() can answer with the last module for an address past every mapping
	 * (a garbage frame of a frame-pointer walk through code built without them). */
	if (!m || addr - 1 < start || addr - 1 >= end) {
		snprintf(buf, len, "[unknown]");
		return buf;
	}
	slash = obj ? strrchr(obj, '/') : NULL;
	obj = slash ? slash + 1 : obj ? obj : "?";
	sym = dwfl_module_addrinfo(m, addr - 1, &off, &s, NULL, NULL, NULL);
	if (sym)
		snprintf(raw, sizeof(raw), "%s+0x%llx (%s)", sym, (unsigned long long)off + 1, obj);
	else
		snprintf(raw, sizeof(raw), "%s+0x%llx", obj, (unsigned long long)(addr - start));
	/* the names are the binary's and its file's: any bytes */
	return il_text_escape(raw, sizeof(raw), buf, len);
}

/* ---- named stacks, cached -------------------------------------------------------------- */

#define IL_STACK_MAX_DEPTH 127 /* the kernel's PERF_MAX_STACK_DEPTH */
#define IL_STACK_NAMED_MAX 32768 /* (pid, stack) pairs kept named at once */

struct named {
	__u32 pid;                /* 0 for kernel stacks */
	__s32 id;
	__u64 caller;             /* user stacks: the frame put back after the first, or 0 */
	struct il_frames *f;      /* one of il_stacknames.uniq: shared by stacks that print alike */
};

/* A distinct list of frames, with a hash of its names. */
struct uniq {
	unsigned long hash;
	struct il_frames *f;
};

struct il_stacknames {
	int map_fd;
	struct il_ksyms *ksyms;   /* read from /proc/kallsyms at the first kernel stack named */
	bool ksyms_tried;
	struct il_usyms *usyms;   /* NULL without user stacks */
	struct named *v;
	size_t n, cap;
	struct uniq *u;           /* owns the frames; v[].f point here, so they never move */
	size_t nu, capu;
};

/* Add frame name to f; out of memory, the frame is left out. */
static void frames_add(struct il_frames *f, const char *name)
{
	char **names = realloc(f->names, (f->n + 1) * sizeof(char *)), **funcs, *plus;

	if (names)
		f->names = names;
	funcs = names ? realloc(f->funcs, (f->n + 1) * sizeof(char *)) : NULL;
	if (funcs)
		f->funcs = funcs;
	if (!funcs || !(f->names[f->n] = strdup(name)))
		return;
	if (!(f->funcs[f->n] = strdup(name))) {
		free(f->names[f->n]);
		return;
	}
	if ((plus = strstr(f->funcs[f->n], "+0x")))
		*plus = 0;
	f->n++;
}

static void frames_free(struct il_frames *f)
{
	for (int j = 0; j < f->n; j++) {
		free(f->names[j]);
		free(f->funcs[j]);
	}
	free(f->names);
	free(f->funcs);
	free(f);
}

static unsigned long frames_hash(const struct il_frames *f)
{
	unsigned long h = 1469598103934665603UL; /* FNV-1a over the names, each with its NUL */

	for (int i = 0; i < f->n; i++)
		for (const unsigned char *p = (const void *)f->names[i];; p++) {
			h = (h ^ *p) * 1099511628211UL;
			if (!*p)
				break;
		}
	return h;
}

static bool frames_equal(const struct il_frames *a, const struct il_frames *b)
{
	if (a->n != b->n)
		return false;
	for (int i = 0; i < a->n; i++)
		if (strcmp(a->names[i], b->names[i]))
			return false;
	return true;
}

/* The kept frames equal to f (f is freed), or f itself, kept from now on. Stacks the kernel
 * recorded apart (the tracer's own frames differ: another BPF program, the tp_btf or raw_tp
 * glue) but that print alike get one struct il_frames, so callers merge them by pointer. */
static struct il_frames *frames_intern(struct il_stacknames *s, struct il_frames *f)
{
	unsigned long h = frames_hash(f);

	for (size_t i = 0; i < s->nu; i++)
		if (s->u[i].hash == h && frames_equal(s->u[i].f, f)) {
			frames_free(f);
			return s->u[i].f;
		}
	if (s->nu == s->capu) {
		size_t cap = s->capu ? s->capu * 2 : 128;
		struct uniq *u = realloc(s->u, cap * sizeof(*s->u));

		if (!u) { /* out of memory: not named */
			frames_free(f);
			return NULL;
		}
		s->u = u;
		s->capu = cap;
	}
	s->u[s->nu++] = (struct uniq){ h, f };
	return f;
}

static struct il_stacknames *stacknames_alloc(int map_fd, bool user)
{
	struct il_stacknames *s = calloc(1, sizeof(*s));

	if (s && user && !(s->usyms = il_usyms_new())) {
		free(s);
		s = NULL;
	}
	if (!s) {
		il_err("out of memory for the stacks' names");
		return NULL;
	}
	s->map_fd = map_fd;
	return s;
}

struct il_stacknames *il_stacknames_new(int map_fd, bool user)
{
	/* /proc/kallsyms (a few MB of text, tens of ms to read) is read when a stack is first
	 * named, not at start; here only whether it gives addresses at all. */
	if (!il_ksyms_readable()) {
		il_err("cannot read kernel symbols from /proc/kallsyms: %s", strerror(errno));
		return NULL;
	}
	return stacknames_alloc(map_fd, user);
}

struct il_stacknames *il_stacknames_new_ksyms(int map_fd, bool user, struct il_ksyms *ksyms)
{
	struct il_stacknames *s = stacknames_alloc(map_fd, user);

	if (s) {
		s->ksyms = ksyms;
		s->ksyms_tried = true;
	}
	return s;
}

void il_stacknames_free(struct il_stacknames *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nu; i++)
		frames_free(s->u[i].f);
	free(s->u);
	free(s->v);
	il_ksyms_free(s->ksyms);
	il_usyms_free(s->usyms);
	free(s);
}

const struct il_frames *il_stacknames_get(struct il_stacknames *s, __u32 pid, __s32 id)
{
	return il_stacknames_get_user(s, pid, id, 0);
}

static const struct il_frames *named_find(const struct il_stacknames *s, __u32 pid, __s32 id,
					  __u64 caller)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].pid == pid && s->v[i].id == id && s->v[i].caller == caller)
			return s->v[i].f;
	return NULL;
}

/* True when stack id needs no naming: *f is its frames, named before, or NULL (not collected,
 * or a user stack without user symbols). Kernel stacks have no caller (*caller set to 0). */
static bool named_known(const struct il_stacknames *s, __u32 pid, __s32 id, __u64 *caller,
			const struct il_frames **f)
{
	*f = NULL;
	if (id < 0 || (pid && !s->usyms))
		return true;
	if (!pid)
		*caller = 0;
	return (*f = named_find(s, pid, id, *caller)) != NULL;
}

const struct il_frames *il_stacknames_get_user(struct il_stacknames *s, __u32 pid, __s32 id,
					       __u64 caller)
{
	static __u64 ips[IL_STACK_MAX_DEPTH + 1];
	const struct il_frames *f;

	if (named_known(s, pid, id, &caller, &f))
		return f;
	return il_stacknames_add(s, pid, id, caller, ips,
				 il_stack_read(s->map_fd, id, ips, IL_STACK_MAX_DEPTH));
}

const struct il_frames *il_stacknames_add(struct il_stacknames *s, __u32 pid, __s32 id,
					  __u64 caller, const __u64 *addrs, int n)
{
	__u64 ips[IL_STACK_MAX_DEPTH + 2];
	struct il_frames *f;
	const struct il_frames *old;
	char buf[512];

	if (named_known(s, pid, id, &caller, &old))
		return old;
	if (n > IL_STACK_MAX_DEPTH)
		n = IL_STACK_MAX_DEPTH;
	if (n > 0)
		memcpy(ips, addrs, n * sizeof(ips[0]));
	if (!(f = calloc(1, sizeof(*f))))
		return NULL; /* out of memory: not named */
	if (n < 0)
		frames_add(f, "[stack not readable]");
	/* The caller goes back after the first frame unless the walk has it already, and only
	 * when it lies in code the process has mapped. */
	if (n >= 1 && caller && (n < 2 || ips[1] != caller) &&
	    strcmp(il_usyms_format(s->usyms, pid, caller, buf, sizeof(buf)), "[unknown]")) {
		memmove(&ips[2], &ips[1], (n - 1) * sizeof(ips[0]));
		ips[1] = caller;
		n++;
	}
	if (!pid && !s->ksyms_tried) {
		s->ksyms_tried = true;
		if (!(s->ksyms = il_ksyms_load(NULL)))
			il_warn("cannot read kernel symbols from /proc/kallsyms: %s", strerror(errno));
	}
	for (int i = 0; i < n; i++) {
		if (!pid) {
			const struct il_ksym *k = il_ksyms_find(s->ksyms, ips[i]);

			if (k && il_ksym_is_tracer(k->name))
				continue;
			il_ksyms_format(s->ksyms, ips[i], buf, sizeof(buf));
		} else {
			il_usyms_format(s->usyms, pid, ips[i], buf, sizeof(buf));
		}
		frames_add(f, buf);
	}
	if (!(f = frames_intern(s, f)))
		return NULL;
	/* bounded: where processes come and go (a server's --serve for weeks), the (pid, stack)
	 * pairs named would grow for ever; past IL_STACK_NAMED_MAX they are named anew (the
	 * frames stay interned, so what was handed out stays valid) */
	if (s->n >= IL_STACK_NAMED_MAX)
		s->n = 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 128;
		struct named *v = realloc(s->v, cap * sizeof(*s->v));

		if (!v) /* out of memory: named again when asked again */
			return f;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = (struct named){ .pid = pid, .id = id, .caller = caller, .f = f };
	return f;
}

int il_stacknames_load_proc(struct il_stacknames *s, __u32 pid)
{
	if (!s->usyms)
		return -1;
	il_usyms_forget(s->usyms, pid); /* the pid may have been reused, or the process exec()ed */
	return il_usyms_load(s->usyms, pid);
}

void il_frames_print(FILE *f, const struct il_frames *fr, const char *indent, const char *missing)
{
	if (!fr) {
		if (missing)
			fprintf(f, "%s%s\n", indent, missing);
		return;
	}
	if (!fr->n)
		fprintf(f, "%s[empty stack]\n", indent);
	for (int i = 0; i < fr->n; i++)
		fprintf(f, "%s%s\n", indent, fr->names[i]);
}

struct json_object *il_frames_json(const struct il_frames *fr)
{
	struct json_object *a;

	if (!fr)
		return NULL;
	a = json_object_new_array();
	for (int i = 0; i < fr->n; i++)
		json_object_array_add(a, json_object_new_string(fr->names[i]));
	return a;
}

char *il_frames_folded_key(const char *comm, size_t comm_len, const struct il_frames *user,
			   const struct il_frames *kernel)
{
	char c[4 * 64 + 1], *key = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&key, &len);

	if (!f) {
		il_err("out of memory for a folded stack");
		return NULL;
	}
	/* flamegraph.pl splits on ';' and the last space: those are replaced too */
	il_text_escape(comm, comm_len, c, sizeof(c));
	for (char *p = c; *p; p++)
		if (*p == ';' || *p == ' ')
			*p = '_';
	fputs(c, f);
	if (user) {
		for (int j = user->n - 1; j >= 0; j--)
			fprintf(f, ";%s", user->funcs[j]);
		fputs(";-", f);
	}
	if (kernel) {
		for (int j = kernel->n - 1; j >= 0; j--)
			fprintf(f, ";%s", kernel->funcs[j]);
	} else {
		fputs(";[stack lost]", f);
	}
	if (fclose(f) || !key) {
		il_err("out of memory for a folded stack");
		free(key);
		return NULL;
	}
	return key;
}

static int cmp_folded(const void *a, const void *b)
{
	return strcmp(((const struct il_folded *)a)->key, ((const struct il_folded *)b)->key);
}

void il_folded_print(FILE *f, struct il_folded *v, size_t n, unsigned long long div)
{
	size_t out = 0;

	qsort(v, n, sizeof(*v), cmp_folded);
	for (size_t i = 0; i < n; i++) {
		if (out && !strcmp(v[out - 1].key, v[i].key)) {
			v[out - 1].value += v[i].value;
			free(v[i].key);
		} else {
			v[out++] = v[i];
		}
	}
	for (size_t i = 0; i < out; i++) {
		fprintf(f, "%s %llu\n", v[i].key, v[i].value / div);
		free(v[i].key);
	}
}
