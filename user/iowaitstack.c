/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * iowaitstack: who sleeps in I/O wait (io_schedule, io_schedule_timeout), under which kernel
 * stack, for how long. The kernel side (bpf/lib/iowait.bpf.h) sums sleeps per thread and
 * stack; this file chooses the attach method, reads the sums every second (differences give
 * intervals), names the stacks and prints text, folded stacks or JSON.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "iolayer.h"
#include "layers.h"
#include "stacks.h"
#include "iowaitstack.h"
#include "iowaitstack.skel.h"

#define NSEC_PER_USEC 1000ULL

static struct env {
	unsigned pid, tid;
	unsigned long long min_us, max_us; /* max 0: no limit */
	unsigned interval, count, duration;
	unsigned top;                      /* stacks shown per report; 0: all */
	bool top_set, user_stacks, folded, json;
} env;

enum { OPT_TID = 0x100, OPT_FOLDED, OPT_JSON, OPT_TOP };

static const char doc[] =
"Show which threads sleep in I/O wait (io_schedule, io_schedule_timeout), under which "
"kernel stack, how often and for how long. A sleep counts from the moment a task leaves "
"the CPU with its in-iowait flag set until it runs again.\n"
"\n"
"EXAMPLES:\n"
"  iowaitstack               # stacks by total wait until Ctrl-C, with threads\n"
"  iowaitstack 10            # trace for 10 seconds\n"
"  iowaitstack -p 1234       # only process 1234 (all its threads)\n"
"  iowaitstack --tid 1240    # only thread 1240\n"
"  iowaitstack -i 1          # each second: waits per thread, top stacks\n"
"  iowaitstack -m 10000      # only sleeps of 10 ms or more\n"
"  iowaitstack -U -p 1234    # add user stacks (named with libdw)\n"
"  iowaitstack --folded 30 > w.folded   # flamegraph.pl --countname=us\n"
"  iowaitstack --json -i 5   # one JSON object per interval\n";

static const struct argp_option options[] = {
	{ "pid", 'p', "PID", 0, "Trace this process only (all its threads)", 0 },
	{ "tid", OPT_TID, "TID", 0, "Trace this thread only", 0 },
	{ "min", 'm', "USECS", 0, "Count only sleeps of at least USECS microseconds", 0 },
	{ "max", 'M', "USECS", 0, "Count only sleeps of at most USECS microseconds", 0 },
	{ "user-stacks", 'U', NULL, 0, "Also record user stacks (named with libdw)", 0 },
	{ "interval", 'i', "SECONDS", 0, "Print per thread and top stacks every SECONDS", 0 },
	{ "count", 'c', "N", 0, "With -i: stop after N intervals", 0 },
	{ "duration", 'd', "SECONDS", 0, "Trace for SECONDS, then print (same as the argument)", 0 },
	{ "top", OPT_TOP, "N", 0, "Show the N stacks with most wait (default: all; 5 with -i)", 0 },
	{ "folded", OPT_FOLDED, NULL, 0, "Folded stacks for flame graphs: comm;frames usecs", 0 },
	{ "json", OPT_JSON, NULL, 0, "One JSON object per report", 0 },
	{ 0 },
};

static error_t parse_arg(int key, char *arg, struct argp_state *st)
{
	switch (key) {
	case 'p': env.pid = il_arg_uint(arg, "pid", 1, 0x7fffffff); break;
	case OPT_TID: env.tid = il_arg_uint(arg, "tid", 1, 0x7fffffff); break;
	case 'm': env.min_us = il_arg_uint(arg, "min (usecs)", 0, 1ULL << 40); break;
	case 'M': env.max_us = il_arg_uint(arg, "max (usecs)", 1, 1ULL << 40); break;
	case 'U': env.user_stacks = true; break;
	case 'i': env.interval = il_arg_uint(arg, "interval (seconds)", 1, 86400); break;
	case 'c': env.count = il_arg_uint(arg, "count", 1, 1U << 30); break;
	case 'd': env.duration = il_arg_uint(arg, "duration (seconds)", 1, 1U << 30); break;
	case OPT_TOP: env.top = il_arg_uint(arg, "top", 1, 1U << 30); env.top_set = true; break;
	case OPT_FOLDED: env.folded = true; break;
	case OPT_JSON: env.json = true; break;
	case ARGP_KEY_ARG:
		if (st->arg_num > 0)
			il_argp_fail(st, "unexpected argument '%s'", arg);
		env.duration = il_arg_uint(arg, "duration (seconds)", 1, 1U << 30);
		break;
	case ARGP_KEY_END:
		if (env.max_us && env.min_us > env.max_us)
			il_argp_fail(st, "-m %llu is larger than -M %llu", env.min_us, env.max_us);
		if (env.count && !env.interval)
			il_argp_fail(st, "-c needs -i");
		if (env.folded && env.json)
			il_argp_fail(st, "choose one of --folded and --json");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* ---- what user space keeps: one entry per kernel aggregate --------------------------- */

struct entry {
	struct iw_key key;
	struct iw_val seen;   /* the kernel's cumulative value at the last read */
	struct iw_val iv;     /* growth since the last interval report */
};

static struct entry *ents;
static size_t nents, capents;
static int *ent_index;          /* open addressing over ents, -1 = empty */
static size_t index_size;

static unsigned long key_hash(const struct iw_key *k)
{
	const unsigned char *p = (const void *)k;
	unsigned long h = 1469598103934665603UL;

	for (size_t i = 0; i < sizeof(*k); i++)
		h = (h ^ p[i]) * 1099511628211UL;
	return h;
}

static void index_put(size_t i)
{
	size_t s = key_hash(&ents[i].key) & (index_size - 1);

	while (ent_index[s] >= 0)
		s = (s + 1) & (index_size - 1);
	ent_index[s] = i;
}

static struct entry *entry_get(const struct iw_key *k)
{
	size_t s;

	if (index_size) {
		for (s = key_hash(k) & (index_size - 1); ent_index[s] >= 0; s = (s + 1) & (index_size - 1))
			if (!memcmp(&ents[ent_index[s]].key, k, sizeof(*k)))
				return &ents[ent_index[s]];
	}
	if (nents == capents) {
		capents = capents ? capents * 2 : 256;
		ents = realloc(ents, capents * sizeof(*ents));
		if (!ents)
			il_die("out of memory");
	}
	if ((nents + 1) * 2 > index_size) {
		index_size = index_size ? index_size * 2 : 1024;
		free(ent_index);
		ent_index = malloc(index_size * sizeof(*ent_index));
		if (!ent_index)
			il_die("out of memory");
		memset(ent_index, -1, index_size * sizeof(*ent_index));
		for (size_t i = 0; i < nents; i++)
			index_put(i);
	}
	memset(&ents[nents], 0, sizeof(*ents));
	ents[nents].key = *k;
	index_put(nents);
	return &ents[nents++];
}

/* ---- named stacks, cached: kernel ones by id, user ones by (pid, id) ----------------- */

struct frames {
	int kind;        /* 0 kernel, 1 user */
	__u32 pid;       /* user stacks only */
	__s32 id;
	int n;
	char **names;    /* innermost first; tracer frames already dropped */
	char **funcs;    /* the same without +offset, for folded output */
};

static struct frames *stk;
static size_t nstk, capstk;
static struct il_ksyms *ksyms;
static struct il_usyms *usyms;
static int stacks_fd;

static char *xstrdup(const char *s)
{
	char *d = strdup(s);

	if (!d)
		il_die("out of memory");
	return d;
}

static char *func_only(const char *name)
{
	char *d = xstrdup(name), *plus = strstr(d, "+0x");

	if (plus && strcmp(d, "[unknown]"))
		*plus = 0;
	return d;
}

static void frames_add(struct frames *f, const char *name)
{
	f->names = realloc(f->names, (f->n + 1) * sizeof(char *));
	f->funcs = realloc(f->funcs, (f->n + 1) * sizeof(char *));
	if (!f->names || !f->funcs)
		il_die("out of memory");
	f->names[f->n] = xstrdup(name);
	f->funcs[f->n] = func_only(name);
	f->n++;
}

/* The frames of a stack; the stack is read and named the first time it is asked for, which
 * for user stacks happens at the first read after the sleep, while the process still runs. */
static const struct frames *frames_get(int kind, __u32 pid, __s32 id)
{
	static __u64 ips[IW_MAX_STACK_DEPTH];
	struct frames *f;
	char buf[512];
	int n;

	if (id < 0)
		return NULL;
	if (kind == 0)
		pid = 0;
	for (size_t i = 0; i < nstk; i++)
		if (stk[i].kind == kind && stk[i].pid == pid && stk[i].id == id)
			return &stk[i];
	if (nstk == capstk) {
		capstk = capstk ? capstk * 2 : 128;
		stk = realloc(stk, capstk * sizeof(*stk));
		if (!stk)
			il_die("out of memory");
	}
	f = &stk[nstk++];
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->pid = pid;
	f->id = id;
	n = il_stack_read(stacks_fd, id, ips, IW_MAX_STACK_DEPTH);
	if (n < 0) {
		frames_add(f, "[stack not readable]");
		return f;
	}
	for (int i = 0; i < n; i++) {
		if (kind == 0) {
			const struct il_ksym *s = il_ksyms_find(ksyms, ips[i]);

			if (s && il_ksym_is_tracer(s->name))
				continue;
			il_ksyms_format(ksyms, ips[i], buf, sizeof(buf));
		} else {
			il_usyms_format(usyms, pid, ips[i], buf, sizeof(buf));
		}
		frames_add(f, buf);
	}
	return f;
}

/* Name the stacks of entries seen for the first time (so user stacks are named while their
 * process is alive). */
static void frames_prefetch(const struct entry *e)
{
	frames_get(0, 0, e->key.kstack);
	if (env.user_stacks)
		frames_get(1, e->key.tgid, e->key.ustack);
}

/* ---- reading the kernel's sums ------------------------------------------------------ */

static struct iowaitstack_bpf *skel;

/* Fold the kernel's cumulative sums into ents: what grew since the last read is added to each
 * entry's interval share. 0, or -1 after printing one line. */
static int read_waits(void)
{
	int fd = bpf_map__fd(skel->maps.iw_waits);
	struct iw_key k, next;
	struct iw_val v;
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(fd, &k, &v))
			continue; /* cannot happen: the kernel side never deletes */
		struct entry *e = entry_get(&k);

		/* The kernel keeps one max since start: an interval has counts and totals only. */
		e->iv.count += v.count - e->seen.count;
		e->iv.total_ns += v.total_ns - e->seen.total_ns;
		e->seen = v;
		frames_prefetch(e);
	}
	if (errno != ENOENT) {
		il_err("reading the wait map failed: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- reports ---------------------------------------------------------------------------- */

/* One stack and the entries (threads) that slept under it. */
struct group {
	__s32 kstack, ustack;
	__u32 utgid;           /* user stacks are per process */
	struct iw_val sum;
	struct entry **members;
	size_t nmembers;
};

static bool use_interval; /* which value of an entry a report uses */

static const struct iw_val *val(const struct entry *e)
{
	return use_interval ? &e->iv : &e->seen;
}

static int cmp_stack(const void *a, const void *b)
{
	const struct entry *x = *(struct entry *const *)a, *y = *(struct entry *const *)b;
	__u32 xu = x->key.ustack >= 0 ? x->key.tgid : 0, yu = y->key.ustack >= 0 ? y->key.tgid : 0;

	if (x->key.kstack != y->key.kstack)
		return x->key.kstack < y->key.kstack ? -1 : 1;
	if (x->key.ustack != y->key.ustack)
		return x->key.ustack < y->key.ustack ? -1 : 1;
	if (xu != yu)
		return xu < yu ? -1 : 1;
	return 0;
}

static int cmp_entry_total(const void *a, const void *b)
{
	__u64 x = val(*(struct entry *const *)a)->total_ns, y = val(*(struct entry *const *)b)->total_ns;

	return x < y ? 1 : x > y ? -1 : 0;
}

static int cmp_group_total(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	return x->sum.total_ns < y->sum.total_ns ? 1 : x->sum.total_ns > y->sum.total_ns ? -1 : 0;
}

static void add_val(struct iw_val *to, const struct iw_val *v)
{
	to->count += v->count;
	to->total_ns += v->total_ns;
	if (v->max_ns > to->max_ns)
		to->max_ns = v->max_ns;
}

/* Entries with waits in the report, grouped by stack, groups sorted by total wait. */
static struct group *make_groups(struct entry ***list_out, size_t *nlist, size_t *ngroups)
{
	struct entry **list = calloc(nents + 1, sizeof(*list));
	struct group *g = calloc(nents + 1, sizeof(*g));
	size_t n = 0, ng = 0;

	if (!list || !g)
		il_die("out of memory");
	for (size_t i = 0; i < nents; i++)
		if (val(&ents[i])->count)
			list[n++] = &ents[i];
	qsort(list, n, sizeof(*list), cmp_stack);
	for (size_t i = 0; i < n; i++) {
		if (!ng || cmp_stack(&list[i], &g[ng - 1].members[0])) {
			g[ng].kstack = list[i]->key.kstack;
			g[ng].ustack = list[i]->key.ustack;
			g[ng].utgid = list[i]->key.ustack >= 0 ? list[i]->key.tgid : 0;
			g[ng].members = &list[i];
			ng++;
		}
		g[ng - 1].nmembers++;
		add_val(&g[ng - 1].sum, val(list[i]));
	}
	for (size_t i = 0; i < ng; i++)
		qsort(g[i].members, g[i].nmembers, sizeof(*list), cmp_entry_total);
	qsort(g, ng, sizeof(*g), cmp_group_total);
	*list_out = list;
	*nlist = n;
	*ngroups = ng;
	return g;
}

/* Per-thread totals of a report, sorted by total wait. */
struct thread_sum {
	const struct iw_key *key;
	struct iw_val sum;
};

static int cmp_tid(const void *a, const void *b)
{
	const struct entry *x = *(struct entry *const *)a, *y = *(struct entry *const *)b;

	return x->key.tid < y->key.tid ? -1 : x->key.tid > y->key.tid;
}

static int cmp_thread_total(const void *a, const void *b)
{
	const struct thread_sum *x = a, *y = b;

	return x->sum.total_ns < y->sum.total_ns ? 1 : x->sum.total_ns > y->sum.total_ns ? -1 : 0;
}

static struct thread_sum *make_threads(struct entry **list, size_t n, size_t *nthreads)
{
	struct entry **sorted = malloc((n + 1) * sizeof(*sorted));
	struct thread_sum *t = calloc(n + 1, sizeof(*t));
	size_t nt = 0;

	if (!sorted || !t)
		il_die("out of memory");
	memcpy(sorted, list, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_tid);
	for (size_t i = 0, best = 0; i < n; i++) {
		if (!nt || t[nt - 1].key->tid != sorted[i]->key.tid) {
			t[nt++].key = &sorted[i]->key;
			best = i;
		}
		/* A thread that exec()ed has entries under two names: show the one with most wait. */
		if (val(sorted[i])->total_ns > val(sorted[best])->total_ns) {
			t[nt - 1].key = &sorted[i]->key;
			best = i;
		}
		add_val(&t[nt - 1].sum, val(sorted[i]));
	}
	free(sorted);
	qsort(t, nt, sizeof(*t), cmp_thread_total);
	*nthreads = nt;
	return t;
}

static const char *stack_missing(__s32 id)
{
	return id == IW_STACK_LOST ? "[stack lost: stack map bucket taken by another stack]" : NULL;
}

/* Thread tables; interval reports have no MAX_USECS column (see read_waits()). */
#define THREAD_HDR "%-16s %7s %7s %9s %12s"
#define THREAD_ROW "%-16s %7u %7u %9llu %12llu"

static void print_thread_header(const char *indent)
{
	printf("%s" THREAD_HDR, indent, "COMM", "PID", "TID", "WAITS", "USECS");
	printf(use_interval ? "\n" : " %10s\n", "MAX_USECS");
}

static void print_thread_row(const char *indent, const struct iw_key *k, const struct iw_val *v)
{
	printf("%s" THREAD_ROW, indent, k->comm, k->tgid, k->tid, (unsigned long long)v->count,
	       (unsigned long long)(v->total_ns / NSEC_PER_USEC));
	if (use_interval)
		printf("\n");
	else
		printf(" %10llu\n", (unsigned long long)(v->max_ns / NSEC_PER_USEC));
}

static void print_frames(int kind, __u32 pid, __s32 id)
{
	const struct frames *f = frames_get(kind, pid, id);

	if (!f) {
		if (stack_missing(id))
			printf("    %s\n", stack_missing(id));
		return;
	}
	if (!f->n)
		printf("    [empty stack]\n");
	for (int i = 0; i < f->n; i++)
		printf("    %s\n", f->names[i]);
}

static void print_group_text(const struct group *g, size_t rank)
{
	const struct iw_val *s = &g->sum;

	printf("#%zu  %llu usecs in %llu waits (avg %llu", rank,
	       (unsigned long long)(s->total_ns / NSEC_PER_USEC), (unsigned long long)s->count,
	       (unsigned long long)(s->total_ns / NSEC_PER_USEC / s->count));
	if (!use_interval)
		printf(", max %llu", (unsigned long long)(s->max_ns / NSEC_PER_USEC));
	printf(" usecs)\n");
	print_frames(0, 0, g->kstack);
	if (env.user_stacks) {
		printf("    --\n");
		if (g->ustack == IW_STACK_NONE)
			printf("    [no user stack: kernel thread]\n");
		else
			print_frames(1, g->utgid, g->ustack);
	}
	print_thread_header("    ");
	for (size_t i = 0; i < g->nmembers; i++)
		print_thread_row("    ", &g->members[i]->key, val(g->members[i]));
	printf("\n");
}

/* comm;user frames outermost first;-;kernel frames outermost first usecs */
static void print_folded(struct entry **list, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct iw_key *k = &list[i]->key;
		const struct frames *kf = frames_get(0, 0, k->kstack);
		const struct frames *uf = env.user_stacks ? frames_get(1, k->tgid, k->ustack) : NULL;

		printf("%s", k->comm);
		if (uf) {
			for (int j = uf->n - 1; j >= 0; j--)
				printf(";%s", uf->funcs[j]);
			printf(";-");
		}
		if (kf) {
			for (int j = kf->n - 1; j >= 0; j--)
				printf(";%s", kf->funcs[j]);
		} else {
			printf(";[stack lost]");
		}
		printf(" %llu\n", (unsigned long long)(val(list[i])->total_ns / NSEC_PER_USEC));
	}
}

static struct json_object *json_val(struct json_object *o, const struct iw_val *v)
{
	json_object_object_add(o, "waits", json_object_new_uint64(v->count));
	json_object_object_add(o, "usecs", json_object_new_uint64(v->total_ns / NSEC_PER_USEC));
	if (!use_interval)
		json_object_object_add(o, "max_usecs", json_object_new_uint64(v->max_ns / NSEC_PER_USEC));
	return o;
}

static struct json_object *json_thread(const struct iw_key *k, const struct iw_val *v)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "comm", json_object_new_string(k->comm));
	json_object_object_add(o, "pid", json_object_new_uint64(k->tgid));
	json_object_object_add(o, "tid", json_object_new_uint64(k->tid));
	return json_val(o, v);
}

static struct json_object *json_frames(int kind, __u32 pid, __s32 id)
{
	const struct frames *f = frames_get(kind, pid, id);
	struct json_object *a;

	if (!f)
		return NULL; /* JSON null: not collected or lost (see "lost") */
	a = json_object_new_array();
	for (int i = 0; i < f->n; i++)
		json_object_array_add(a, json_object_new_string(f->names[i]));
	return a;
}

static void read_drops(__u64 d[IL_DROP__MAX])
{
	if (il_drops_read(bpf_map__fd(skel->maps.il_drops), d))
		memset(d, 0, IL_DROP__MAX * sizeof(*d));
}

/* Print one report: the interval's growth (interval = true) or everything since start. */
static void report(bool interval, bool final)
{
	size_t nlist, ngroups, nthreads = 0, shown;
	struct thread_sum *threads = NULL;
	struct entry **list;
	struct group *g;
	char clock[16];
	__u64 drops[IL_DROP__MAX];

	use_interval = interval;
	g = make_groups(&list, &nlist, &ngroups);
	if (interval)
		threads = make_threads(list, nlist, &nthreads);
	shown = env.top && env.top < ngroups ? env.top : ngroups;
	il_clock_str(clock, sizeof(clock));
	read_drops(drops);

	if (env.json) {
		struct json_object *o = json_object_new_object(), *a;

		json_object_object_add(o, "time", json_object_new_string(clock));
		json_object_object_add(o, "report", json_object_new_string(interval ? "interval" : "total"));
		if (interval) {
			a = json_object_new_array();
			for (size_t i = 0; i < nthreads; i++)
				json_object_array_add(a, json_thread(threads[i].key, &threads[i].sum));
			json_object_object_add(o, "threads", a);
		}
		a = json_object_new_array();
		for (size_t i = 0; i < shown; i++) {
			struct json_object *s = json_val(json_object_new_object(), &g[i].sum), *t;

			json_object_object_add(s, "kernel_stack", json_frames(0, 0, g[i].kstack));
			if (env.user_stacks)
				json_object_object_add(s, "user_stack", json_frames(1, g[i].utgid, g[i].ustack));
			json_object_object_add(s, "lost", json_object_new_boolean(
				g[i].kstack == IW_STACK_LOST || g[i].ustack == IW_STACK_LOST));
			t = json_object_new_array();
			for (size_t j = 0; j < g[i].nmembers; j++)
				json_object_array_add(t, json_thread(&g[i].members[j]->key, val(g[i].members[j])));
			json_object_object_add(s, "threads", t);
			json_object_array_add(a, s);
		}
		json_object_object_add(o, "stacks", a);
		json_object_object_add(o, "drops", il_drops_json(drops));
		il_json_print(stdout, o);
	} else if (env.folded) {
		print_folded(list, nlist);
	} else {
		if (interval) {
			printf("%s  I/O wait per thread%s\n", clock, nthreads ? "" : ": none");
			if (nthreads)
				print_thread_header("");
			for (size_t i = 0; i < nthreads; i++)
				print_thread_row("", threads[i].key, &threads[i].sum);
			if (shown)
				printf("\ntop %zu of %zu stacks:\n", shown, ngroups);
		} else if (!ngroups) {
			printf("no I/O wait seen\n");
		} else {
			struct iw_val all = {};

			for (size_t i = 0; i < ngroups; i++)
				add_val(&all, &g[i].sum);
			printf("%llu usecs of I/O wait in %llu waits, %zu stacks\n\n",
			       (unsigned long long)(all.total_ns / NSEC_PER_USEC),
			       (unsigned long long)all.count, ngroups);
		}
		for (size_t i = 0; i < shown; i++)
			print_group_text(&g[i], i + 1);
		if (shown < ngroups)
			printf("(%zu more stacks not shown: --top N)\n", ngroups - shown);
		if (final)
			il_drops_print(stdout, drops);
	}
	if (final && env.folded)
		il_drops_print(stderr, drops);
	fflush(stdout);
	free(threads);
	free(list);
	free(g);
}

/* A process slept in I/O wait for the first time (-U): read its mappings now, while it runs. */
static int on_new_proc(void *ctx, void *data, size_t len)
{
	const struct iw_proc_event *e = data;

	(void)ctx;
	if (len >= sizeof(*e)) {
		il_usyms_forget(usyms, e->tgid); /* the pid may have been reused */
		if (il_usyms_load(usyms, e->tgid))
			il_debug("cannot read the mappings of pid %u", e->tgid);
	}
	return 0;
}

/* ---- main loop ----------------------------------------------------------------------- */

static unsigned ticks, reports;
static bool count_done;

/* Every second: fold the kernel's sums in (names new user stacks while their process lives);
 * every env.interval seconds print an interval report. Non-zero stops the loop. */
static int tick(void *ctx)
{
	(void)ctx;
	if (read_waits())
		return -1;
	if (!env.interval || ++ticks % env.interval)
		return 0;
	count_done = env.count && ++reports >= env.count;
	report(true, count_done);
	for (size_t i = 0; i < nents; i++)
		memset(&ents[i].iv, 0, sizeof(ents[i].iv));
	return count_done;
}

int main(int argc, char **argv)
{
	static const struct argp_child children[] = { { &il_common_argp, 0, NULL, 0 }, { 0 } };
	static const struct argp argp = { options, parse_arg, "[DURATION]", doc, children, NULL, NULL };
	struct il_plan plan;
	struct il_run run = { .interval_s = 1, .tick = tick };
	int err, rc = IL_EXIT_ERR;

	il_opts_init();
	il_log_init("iowaitstack", 0);
	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return IL_EXIT_ERR;
	il_log_init("iowaitstack", il_opts.verbose);
	if (env.interval && !env.top_set)
		env.top = 5;
	il_require_tracing();
	if (env.pid)
		il_require_pid(env.pid);
	if (env.tid)
		il_require_tid(env.tid, env.pid);

	skel = iowaitstack_bpf__open();
	if (!skel)
		il_die("cannot open the BPF object: %s", strerror(errno));
	skel->rodata->iw_targ_tgid = env.pid;
	skel->rodata->iw_targ_tid = env.tid;
	skel->rodata->iw_min_ns = env.min_us * NSEC_PER_USEC;
	skel->rodata->iw_max_ns = env.max_us * NSEC_PER_USEC;
	skel->rodata->iw_user_stacks = env.user_stacks;
	skel->rodata->iw_tp_prev_state = il_iowait_tp_prev_state();

	il_iowait_plan(skel->obj, &plan);
	if (il_plans_choose(&plan, 1, il_opts.attach))
		goto out;
	err = iowaitstack_bpf__load(skel);
	if (err) {
		il_err("cannot load the BPF programs: %s (-vv shows the verifier's log)",
		       il_errno_name(err));
		goto out;
	}
	if (il_plans_attach(&plan, 1))
		goto out;
	/* After attaching, so the tracer's own BPF programs have symbols and are recognised. */
	ksyms = il_ksyms_load(NULL);
	if (!ksyms) {
		il_err("cannot read /proc/kallsyms: %s", strerror(errno));
		goto out;
	}
	if (env.user_stacks && !(usyms = il_usyms_new()))
		il_die("out of memory");
	stacks_fd = bpf_map__fd(skel->maps.iw_stacks);
	if (env.user_stacks) {
		run.rb = ring_buffer__new(bpf_map__fd(skel->maps.iw_procs), on_new_proc, NULL, NULL);
		if (!run.rb) {
			il_err("cannot open the ring buffer: %s", strerror(errno));
			goto out;
		}
	}

	il_signals_init();
	if (env.interval)
		fprintf(stderr, "Tracing I/O waits, report every %u s... Hit Ctrl-C to end.\n",
			env.interval);
	else if (env.duration)
		fprintf(stderr, "Tracing I/O waits for %u s... Hit Ctrl-C to end.\n", env.duration);
	else
		fprintf(stderr, "Tracing I/O waits... Hit Ctrl-C to end.\n");

	run.duration_s = env.duration;
	if (il_run(&run) < 0)
		goto out;
	if (read_waits())
		goto out;
	if (!count_done) /* Ctrl-C or the duration: the last (partial) interval, or the summary */
		report(env.interval != 0, true);
	rc = IL_EXIT_OK;
out:
	il_plans_detach();
	ring_buffer__free(run.rb);
	iowaitstack_bpf__destroy(skel);
	il_ksyms_free(ksyms);
	il_usyms_free(usyms);
	return rc;
}
