/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The I/O-wait layer's user side (see layers.h; kernel side bpf/lib/iowait.bpf.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include "bpfobj.h"
#include "btf.h"
#include "layers/iowait.h"
#include "plan.h"
#include "probes.h"
#include "procstat.h"
#include "layers/who.h"
#include "escape.h"
#include "stacks.h"
#include "log.h"

struct iw_cfg *il_iw_cfg(struct bpf_object *obj)
{
	struct iw_cfg *c = il_obj_rodata_must(obj, "iw_cfg", sizeof(*c));
	int n = il_btf_tp_nargs("sched_switch");

	il_debug("sched_switch takes %d argument(s)", n);
	c->tp_prev_state = n >= 4;
	il_who_default(obj); /* attribution off unless the tool turns it on */
	if (!il_can_task_storage())
		il_obj_task_storage_stub(obj, "iw_tasks");
	return c;
}

void il_iw_chosen(struct bpf_object *obj, const struct il_plan *p)
{
	struct iw_cfg *c = il_obj_rodata_must(obj, "iw_cfg", sizeof(*c));

	/* sampled: iolayer, which lists no sleep under way; a raw_tp program cannot hand a task
	 * to bpf_task_storage_get() */
	c->task_storage = c->sampled && il_can_task_storage() && il_plan_method(p) == IL_M_TP_BTF;
	if (c->task_storage)
		il_obj_map_size(obj, "iw_sleeping", 1);
	il_debug("I/O-wait layer: sleeps under way in %s",
		 c->task_storage ? "task-local storage" : "a hash by thread");
}

void il_iw_plan(struct bpf_object *obj, struct il_plan *p)
{
	struct bpf_map *stacks = bpf_object__find_map_by_name(obj, "iw_stacks");
	struct bpf_map *tstacks = bpf_object__find_map_by_name(obj, "iw_tstacks");
	const struct iw_cfg *cfg = il_obj_rodata_must(obj, "iw_cfg", sizeof(*cfg));
	struct bpf_map *m;

	il_plan_tp_twins(p, obj, "I/O wait (sched_switch)", "iw_switch_btf", "iw_switch_raw",
			 "sched:sched_switch");
	/* Kernel stacks only: IW_MAX_KSTACK_DEPTH frames a bucket, not the 127 user stacks may
	 * need. The stack map is preallocated: 16 MB made at start-up took 22 ms of iolayer's
	 * (issue 25), 8 MB now; none with sampled stacks, whose map is made as they come. */
	if (stacks && !cfg->user_stacks)
		bpf_map__set_value_size(stacks, IW_MAX_KSTACK_DEPTH * sizeof(__u64));
	if (stacks && cfg->sampled)
		bpf_map__set_max_entries(stacks, 1);
	else if (tstacks)
		bpf_map__set_max_entries(tstacks, 1);
	/* the processes announced for their user stacks' symbols: none without them (an LRU,
	 * made whole at start-up) */
	if (!cfg->user_stacks && (m = bpf_object__find_map_by_name(obj, "iw_procs_seen")))
		bpf_map__set_max_entries(m, 1);
}

int il_iw_foreach(struct bpf_object *obj,
		      int (*fn)(const struct iw_key *k, const struct iw_val *v, void *ctx), void *ctx)
{
	int fd = il_obj_map_fd(obj, "iw_waits");
	struct row { struct iw_key k; struct iw_val v; } *rows;
	struct iw_key k, next;
	struct iw_val v;
	void *prev = NULL;
	int stop, n;

	if (fd < 0)
		return -ENOENT;
	n = il_map_read_batch(fd, sizeof(k), sizeof(v), sizeof(*rows), offsetof(struct row, v),
			      (char **)&rows);
	if (n != -EOPNOTSUPP) {
		stop = 0;
		for (int i = 0; i < n && !stop; i++)
			stop = fn(&rows[i].k, &rows[i].v, ctx);
		free(n < 0 ? NULL : rows);
		return n < 0 ? n : stop < 0 ? stop : 0;
	}
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(fd, &k, &v))
			continue; /* the kernel side never deletes: cannot happen */
		if ((stop = fn(&k, &v, ctx)))
			return stop < 0 ? stop : 0;
	}
	return errno == ENOENT ? 0 : -errno;
}

/* ---- the table of entries ------------------------------------------------------------------ */

static unsigned long key_hash(const struct iw_key *k)
{
	const unsigned char *p = (const void *)k;
	unsigned long h = 1469598103934665603UL; /* FNV-1a */

	for (size_t i = 0; i < sizeof(*k); i++)
		h = (h ^ p[i]) * 1099511628211UL;
	return h;
}

static void index_put(struct il_iw_table *t, size_t i)
{
	size_t s = key_hash(&t->v[i].key) & (t->index_size - 1);

	while (t->index[s] >= 0)
		s = (s + 1) & (t->index_size - 1);
	t->index[s] = i;
}

/* The entry of k, added when new (*is_new set). */
static struct il_iw_entry *entry_get(struct il_iw_table *t, const struct iw_key *k, bool *is_new)
{
	size_t s;

	*is_new = false;
	if (t->index_size) {
		for (s = key_hash(k) & (t->index_size - 1); t->index[s] >= 0;
		     s = (s + 1) & (t->index_size - 1))
			if (!memcmp(&t->v[t->index[s]].key, k, sizeof(*k)))
				return &t->v[t->index[s]];
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		struct il_iw_entry *v = realloc(t->v, cap * sizeof(*t->v));

		if (!v)
			return NULL;
		t->v = v;
		t->cap = cap;
	}
	if ((t->n + 1) * 2 > t->index_size) {
		size_t size = t->index_size ? t->index_size * 2 : 1024;
		int *index = malloc(size * sizeof(*t->index));

		if (!index)
			return NULL;
		free(t->index);
		t->index = index;
		t->index_size = size;
		memset(t->index, -1, t->index_size * sizeof(*t->index));
		for (size_t i = 0; i < t->n; i++)
			index_put(t, i);
	}
	memset(&t->v[t->n], 0, sizeof(*t->v));
	t->v[t->n].key = *k;
	index_put(t, t->n);
	*is_new = true;
	return &t->v[t->n++];
}

struct fold_ctx {
	struct il_iw_table *t;
	void (*on_new)(const struct il_iw_entry *e, void *ctx);
	void *ctx;
};

static int fold_in(const struct iw_key *k, const struct iw_val *v, void *ctx)
{
	struct fold_ctx *f = ctx;
	bool is_new;
	struct il_iw_entry *e = entry_get(f->t, k, &is_new);

	if (!e)
		return -ENOMEM;
	if (v->count < e->seen.count) /* aged out of the LRU since, and made again */
		e->seen = (struct iw_val){ 0 };
	f->t->counted += v->count - e->seen.count;
	e->iv.count += v->count - e->seen.count;
	e->iv.total_ns += v->total_ns - e->seen.total_ns;
	e->iv.weight_ns += v->weight_ns - e->seen.weight_ns;
	e->seen = *v;
	if (is_new && f->on_new)
		f->on_new(e, f->ctx);
	return 0;
}

int il_iw_table_read(struct bpf_object *obj, struct il_iw_table *t,
		     void (*on_new)(const struct il_iw_entry *e, void *ctx), void *ctx)
{
	struct fold_ctx f = { t, on_new, ctx };

	return il_iw_foreach(obj, fold_in, &f);
}

void il_iw_table_new_interval(struct il_iw_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		memset(&t->v[i].iv, 0, sizeof(t->v[i].iv));
}

void il_iw_table_free(struct il_iw_table *t)
{
	free(t->v);
	free(t->index);
	memset(t, 0, sizeof(*t));
}

/* ---- reports ------------------------------------------------------------------------------- */

const struct iw_val *il_iw_val(const struct il_iw_entry *e, bool interval)
{
	return interval ? &e->iv : &e->seen;
}

static void add_val(struct iw_val *to, const struct iw_val *v)
{
	to->count += v->count;
	to->total_ns += v->total_ns;
	to->weight_ns += v->weight_ns;
	if (v->max_ns > to->max_ns)
		to->max_ns = v->max_ns;
}

static int cmp_stack(const void *a, const void *b)
{
	const struct il_iw_entry *x = *(struct il_iw_entry *const *)a, *y = *(struct il_iw_entry *const *)b;
	__u32 xu = x->key.ustack >= 0 ? x->key.tgid : 0, yu = y->key.ustack >= 0 ? y->key.tgid : 0;

	if (x->key.kstack != y->key.kstack)
		return x->key.kstack < y->key.kstack ? -1 : 1;
	if (x->key.ustack != y->key.ustack)
		return x->key.ustack < y->key.ustack ? -1 : 1;
	if (x->key.ucaller != y->key.ucaller)
		return x->key.ucaller < y->key.ucaller ? -1 : 1;
	if (xu != yu)
		return xu < yu ? -1 : 1;
	return 0;
}

static int cmp_entry_total(const void *a, const void *b, void *interval)
{
	__u64 x = il_iw_val(*(struct il_iw_entry *const *)a, *(bool *)interval)->total_ns;
	__u64 y = il_iw_val(*(struct il_iw_entry *const *)b, *(bool *)interval)->total_ns;

	return x < y ? 1 : x > y ? -1 : 0;
}

static int cmp_group_total(const void *a, const void *b)
{
	const struct il_iw_group *x = a, *y = b;

	return x->sum.total_ns < y->sum.total_ns ? 1 : x->sum.total_ns > y->sum.total_ns ? -1 : 0;
}

static int cmp_tid(const void *a, const void *b)
{
	const struct il_iw_entry *x = *(struct il_iw_entry *const *)a, *y = *(struct il_iw_entry *const *)b;

	return x->key.tid < y->key.tid ? -1 : x->key.tid > y->key.tid;
}

static int cmp_thread_total(const void *a, const void *b)
{
	const struct il_iw_thread *x = a, *y = b;

	return x->sum.total_ns < y->sum.total_ns ? 1 : x->sum.total_ns > y->sum.total_ns ? -1 : 0;
}

static void make_threads(struct il_iw_report *r)
{
	struct il_iw_entry **sorted = malloc((r->nlist + 1) * sizeof(*sorted));
	struct il_iw_thread *t = calloc(r->nlist + 1, sizeof(*t));
	size_t nt = 0;

	if (!sorted || !t) { /* out of memory: no per-thread totals */
		free(sorted);
		free(t);
		return;
	}
	memcpy(sorted, r->list, r->nlist * sizeof(*sorted));
	qsort(sorted, r->nlist, sizeof(*sorted), cmp_tid);
	for (size_t i = 0, best = 0; i < r->nlist; i++) {
		if (!nt || t[nt - 1].key->tid != sorted[i]->key.tid) {
			t[nt++].key = &sorted[i]->key;
			best = i;
		}
		if (il_iw_val(sorted[i], r->interval)->total_ns > il_iw_val(sorted[best], r->interval)->total_ns) {
			t[nt - 1].key = &sorted[i]->key;
			best = i;
		}
		add_val(&t[nt - 1].sum, il_iw_val(sorted[i], r->interval));
	}
	free(sorted);
	qsort(t, nt, sizeof(*t), cmp_thread_total);
	r->threads = t;
	r->nthreads = nt;
}

int il_iw_report_make(const struct il_iw_table *t, bool interval, struct il_iw_report *r)
{
	size_t n = 0, ng = 0;

	memset(r, 0, sizeof(*r));
	r->interval = interval;
	r->list = calloc(t->n + 1, sizeof(*r->list));
	r->groups = calloc(t->n + 1, sizeof(*r->groups));
	if (!r->list || !r->groups) {
		il_iw_report_free(r);
		r->interval = interval;
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->n; i++)
		if (il_iw_val(&t->v[i], interval)->count)
			r->list[n++] = &t->v[i];
	qsort(r->list, n, sizeof(*r->list), cmp_stack);
	for (size_t i = 0; i < n; i++) {
		struct il_iw_group *g;

		if (!ng || cmp_stack(&r->list[i], &r->groups[ng - 1].members[0])) {
			g = &r->groups[ng++];
			g->kstack = r->list[i]->key.kstack;
			g->ustack = r->list[i]->key.ustack;
			g->ucaller = r->list[i]->key.ucaller;
			g->utgid = r->list[i]->key.ustack >= 0 ? r->list[i]->key.tgid : 0;
			g->members = &r->list[i];
		}
		g = &r->groups[ng - 1];
		g->nmembers++;
		add_val(&g->sum, il_iw_val(r->list[i], interval));
		add_val(&r->all, il_iw_val(r->list[i], interval));
	}
	for (size_t i = 0; i < ng; i++)
		qsort_r(r->groups[i].members, r->groups[i].nmembers, sizeof(*r->list), cmp_entry_total,
			&r->interval);
	qsort(r->groups, ng, sizeof(*r->groups), cmp_group_total);
	r->nlist = n;
	r->ngroups = ng;
	make_threads(r);
	return 0;
}

/* What a group prints as: its frames where they were named, else its stack ids. */
struct group_look {
	const struct il_frames *k, *u;
	__s32 kstack, ustack;
	__u32 utgid;
};

static struct group_look group_look(const struct il_iw_group *g, struct il_stacknames *names,
				    bool user)
{
	struct group_look l = { .kstack = g->kstack };

	l.k = il_stacknames_get(names, 0, g->kstack);
	if (l.k)
		l.kstack = 0;
	if (user) {
		l.utgid = g->utgid;
		l.ustack = g->ustack;
		l.u = g->ustack >= 0 ? il_stacknames_get_user(names, g->utgid, g->ustack, g->ucaller) : NULL;
		if (l.u)
			l.ustack = 0;
	}
	return l;
}

static bool same_look(const struct group_look *a, const struct group_look *b)
{
	return a->k == b->k && a->u == b->u && a->kstack == b->kstack && a->ustack == b->ustack &&
	       a->utgid == b->utgid;
}

static bool same_thread(const struct iw_key *a, const struct iw_key *b)
{
	return a->tgid == b->tgid && a->tid == b->tid && !memcmp(a->comm, b->comm, sizeof(a->comm));
}

void il_iw_report_merge(struct il_iw_report *r, struct il_stacknames *names, bool user)
{
	struct group_look *look;
	size_t *to, ng = 0, nrows = 0;
	struct il_iw_group *groups;
	struct il_iw_entry **rowp;

	if (!r->ngroups || !names)
		return;
	look = calloc(r->ngroups, sizeof(*look));
	to = calloc(r->ngroups, sizeof(*to));
	groups = calloc(r->ngroups + 1, sizeof(*groups));
	free(r->rows);
	r->rows = calloc(r->nlist + 1, sizeof(*r->rows));
	rowp = calloc(r->nlist + 1, sizeof(*rowp));
	if (!look || !to || !groups || !r->rows || !rowp) { /* out of memory: left unmerged */
		free(look);
		free(to);
		free(groups);
		free(r->rows);
		free(rowp);
		r->rows = NULL;
		return;
	}
	/* to[i]: the new group of old group i, the first that prints as it does */
	for (size_t i = 0; i < r->ngroups; i++) {
		size_t j;

		look[i] = group_look(&r->groups[i], names, user);
		for (j = 0; j < ng && !same_look(&look[i], &look[groups[j].nmembers]); j++)
			;
		if (j == ng) {
			groups[ng] = r->groups[i];
			groups[ng].nmembers = i; /* for now: the old group it comes from */
			ng++;
		}
		to[i] = j;
	}
	/* each new group's rows: its old groups' members, one row per thread (sums added, the
	 * largest max kept), in the rows the report owns from now on */
	for (size_t j = 0; j < ng; j++) {
		struct il_iw_group *g = &groups[j];

		g->members = &rowp[nrows];
		g->nmembers = 0;
		memset(&g->sum, 0, sizeof(g->sum));
		for (size_t i = 0; i < r->ngroups; i++) {
			if (to[i] != j)
				continue;
			for (size_t m = 0; m < r->groups[i].nmembers; m++) {
				const struct il_iw_entry *e = r->groups[i].members[m];
				size_t k;

				for (k = 0; k < g->nmembers && !same_thread(&g->members[k]->key, &e->key); k++)
					;
				if (k == g->nmembers) {
					rowp[nrows] = &r->rows[nrows];
					r->rows[nrows] = *e;
					nrows++;
					g->nmembers++;
				} else {
					add_val(&g->members[k]->seen, &e->seen);
					add_val(&g->members[k]->iv, &e->iv);
				}
			}
			add_val(&g->sum, &r->groups[i].sum);
		}
		qsort_r(g->members, g->nmembers, sizeof(*g->members), cmp_entry_total, &r->interval);
	}
	qsort(groups, ng, sizeof(*groups), cmp_group_total);
	free(r->groups);
	free(r->rowp);
	r->groups = groups;
	r->ngroups = ng;
	r->rowp = rowp;
	free(look);
	free(to);
}

void il_iw_report_free(struct il_iw_report *r)
{
	free(r->rows);
	free(r->rowp);
	free(r->threads);
	free(r->list);
	free(r->groups);
	memset(r, 0, sizeof(*r));
}

/* ---- sleeps still under way ---------------------------------------------------------------- */

/* Is thread tid of process tgid still in the sleep that began after its nswitches-th switch?
 * It is when it has not left a CPU since (the same switch count in its status) and is not
 * running (state other than R). Fills comm from /proc. */
static bool still_asleep(__u32 tgid, __u32 tid, __u64 nswitches, char comm[IL_TASK_COMM_LEN])
{
	unsigned long long switches;
	char state;

	if (!il_proc_task_status(tgid, tid, &state, &switches) || state == 'R' || switches != nswitches)
		return false; /* gone (its sleep ended), running, or switched since */
	il_proc_task_comm(tgid, tid, comm);
	return true;
}

static int cmp_waited(const void *a, const void *b)
{
	const struct il_iw_sleeping *x = a, *y = b;

	if (x->waited_ns != y->waited_ns)
		return x->waited_ns < y->waited_ns ? 1 : -1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

int il_iw_sleeping_read(struct bpf_object *obj, __u64 min_ns, __u64 max_ns,
			struct il_iw_sleeping **out)
{
	int fd = il_obj_map_fd(obj, "iw_sleeping"), n = 0, cap = 0;
	struct il_iw_sleeping *v = NULL;
	__u32 key, next, *prev = NULL;
	struct iw_sleep sl;
	struct timespec now;

	*out = NULL;
	if (fd < 0)
		return -ENOENT;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		__u64 now_ns, waited;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &sl))
			continue; /* woke up meanwhile */
		clock_gettime(CLOCK_MONOTONIC, &now); /* bpf_ktime_get_ns()'s clock */
		now_ns = now.tv_sec * 1000000000ULL + now.tv_nsec;
		if (now_ns < sl.ts)
			continue;
		waited = now_ns - sl.ts;
		/* with -m/-M: only what already counts (a sleep longer than -M never will) */
		if (waited < min_ns || (max_ns && waited > max_ns))
			continue;
		if (n == cap) {
			struct il_iw_sleeping *nv = realloc(v, (cap ? cap * 2 : 16) * sizeof(*v));

			if (!nv) {
				free(v);
				return -ENOMEM;
			}
			v = nv;
			cap = cap ? cap * 2 : 16;
		}
		memset(&v[n], 0, sizeof(v[n]));
		if (!still_asleep(sl.tgid, key, sl.nswitches, v[n].comm))
			continue;
		v[n].tgid = sl.tgid;
		v[n].tid = key;
		v[n].kstack = sl.kstack;
		v[n].ustack = sl.ustack;
		v[n].ucaller = sl.ucaller;
		v[n].waited_ns = waited;
		n++;
	}
	if (errno != ENOENT) {
		int err = -errno;

		free(v);
		return err;
	}
	qsort(v, n, sizeof(*v), cmp_waited);
	*out = v;
	return n;
}

/* ---- stacks and sleeps still under way, as iowaitstack shows them ----------------------------- */

static const char *stack_missing(__s32 id)
{
	return id == IW_STACK_LOST ? "[stack lost: stack map bucket taken by another stack]" : NULL;
}

void il_iw_stacks_print(FILE *f, struct il_stacknames *names, __s32 kstack, __s32 ustack,
			__u32 tgid, __u64 ucaller, bool user)
{
	il_frames_print(f, il_stacknames_get(names, 0, kstack), "    ", stack_missing(kstack));
	if (!user)
		return;
	fprintf(f, "    --\n");
	if (ustack == IW_STACK_NONE)
		fprintf(f, "    [no user stack: kernel thread]\n");
	else
		il_frames_print(f, il_stacknames_get_user(names, tgid, ustack, ucaller), "    ",
				stack_missing(ustack));
}

void il_iw_stacks_json(struct json_object *o, struct il_stacknames *names, __s32 kstack,
		       __s32 ustack, __u32 tgid, __u64 ucaller, bool user)
{
	/* JSON null: not collected or lost (see "lost") */
	json_object_object_add(o, "kernel_stack", il_frames_json(il_stacknames_get(names, 0, kstack)));
	if (user)
		json_object_object_add(o, "user_stack", il_frames_json(
			il_stacknames_get_user(names, tgid, ustack, ucaller)));
	json_object_object_add(o, "lost", json_object_new_boolean(kstack == IW_STACK_LOST ||
								   ustack == IW_STACK_LOST));
}

void il_iw_sleeping_print(FILE *f, const struct il_iw_sleeping *sw, int n,
			  struct il_stacknames *names, bool user)
{
	char comm[4 * IL_TASK_COMM_LEN + 1];

	if (n <= 0)
		return;
	fprintf(f, "%d sleep%s still under way when tracing ended (not counted above):\n\n", n,
		n == 1 ? "" : "s");
	for (int i = 0; i < n; i++) {
		fprintf(f, "still waiting: %s pid %u tid %u, %llu usecs so far\n",
			il_text_escape(sw[i].comm, sizeof(sw[i].comm), comm, sizeof(comm)), sw[i].tgid,
			sw[i].tid, (unsigned long long)(sw[i].waited_ns / 1000));
		il_iw_stacks_print(f, names, sw[i].kstack, sw[i].ustack, sw[i].tgid, sw[i].ucaller, user);
		fprintf(f, "\n");
	}
}

struct json_object *il_iw_sleeping_json(const struct il_iw_sleeping *sw, int n,
					struct il_stacknames *names, bool user)
{
	struct json_object *a = json_object_new_array();

	for (int i = 0; i < n; i++) {
		struct json_object *o = json_object_new_object();

		il_json_add_name(o, "comm", sw[i].comm, sizeof(sw[i].comm));
		json_object_object_add(o, "pid", json_object_new_uint64(sw[i].tgid));
		json_object_object_add(o, "tid", json_object_new_uint64(sw[i].tid));
		json_object_object_add(o, "usecs", json_object_new_uint64(sw[i].waited_ns / 1000));
		il_iw_stacks_json(o, names, sw[i].kstack, sw[i].ustack, sw[i].tgid, sw[i].ucaller, user);
		json_object_array_add(a, o);
	}
	return a;
}

/* Thread tables; interval reports have no MAX_USECS column. */
#define THREAD_HDR "%-16s %7s %7s %9s %12s"
#define THREAD_ROW "%s %7u %7u %9llu %12llu" /* COMM: il_text_column(), 16 wide */

void il_iw_thread_header(FILE *f, const char *indent, bool interval)
{
	fprintf(f, "%s" THREAD_HDR, indent, "COMM", "PID", "TID", "WAITS", "USECS");
	fprintf(f, interval ? "\n" : " %10s\n", "MAX_USECS");
}

void il_iw_thread_row(FILE *f, const char *indent, const struct iw_key *k, const struct iw_val *v,
		      bool interval)
{
	char comm[4 * IL_TASK_COMM_LEN + 1];

	fprintf(f, "%s" THREAD_ROW, indent,
		il_text_column(k->comm, sizeof(k->comm), 16, comm, sizeof(comm)), k->tgid, k->tid,
		(unsigned long long)v->count, (unsigned long long)(v->total_ns / 1000));
	if (interval)
		fprintf(f, "\n");
	else
		fprintf(f, " %10llu\n", (unsigned long long)(v->max_ns / 1000));
}

struct json_object *il_iw_val_json(struct json_object *o, const struct iw_val *v, bool interval)
{
	json_object_object_add(o, "waits", json_object_new_uint64(v->count));
	json_object_object_add(o, "usecs", json_object_new_uint64(v->total_ns / 1000));
	if (!interval)
		json_object_object_add(o, "max_usecs", json_object_new_uint64(v->max_ns / 1000));
	return o;
}

struct json_object *il_iw_thread_json(const struct iw_key *k, const struct iw_val *v, bool interval)
{
	struct json_object *o = json_object_new_object();

	il_json_add_name(o, "comm", k->comm, sizeof(k->comm));
	json_object_object_add(o, "pid", json_object_new_uint64(k->tgid));
	json_object_object_add(o, "tid", json_object_new_uint64(k->tid));
	return il_iw_val_json(o, v, interval);
}

/* ---- the sleeps' lengths ------------------------------------------------------------------ */

int il_iw_hist_read(struct bpf_object *obj, __u64 slots[IL_HIST_SLOTS], struct iw_val *all)
{
	int fd = il_obj_map_fd(obj, "iw_hist"), ncpu = libbpf_num_possible_cpus();
	struct iw_hist *per;
	__u32 zero = 0;

	memset(slots, 0, IL_HIST_SLOTS * sizeof(*slots));
	if (all)
		memset(all, 0, sizeof(*all));
	if (fd < 0)
		return -ENOENT;
	if (ncpu < 0)
		return ncpu;
	if (!(per = calloc(ncpu, sizeof(*per))))
		return -ENOMEM;
	if (bpf_map_lookup_elem(fd, &zero, per)) {
		int err = -errno;

		free(per);
		return err;
	}
	for (int c = 0; c < ncpu; c++) {
		for (int i = 0; i < IL_HIST_SLOTS; i++)
			slots[i] += per[c].slots[i];
		if (!all)
			continue;
		all->total_ns += per[c].total_ns;
		if (per[c].max_ns > all->max_ns)
			all->max_ns = per[c].max_ns;
	}
	for (int i = 0; all && i < IL_HIST_SLOTS; i++)
		all->count += slots[i];
	if (all)
		all->weight_ns = all->total_ns;
	free(per);
	return 0;
}
