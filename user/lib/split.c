/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The split layer's user side (layers/split.h; kernel side bpf/lib/split.bpf.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "bpfobj.h"
#include "disk.h"
#include "btf.h"
#include "layers/split.h"
#include "log.h"
#include "probes.h"
#include "util.h"

const char *const il_split_part_keys[SPLIT_PARTS] = {
	"on_cpu", "runq", "iowait_block", "iowait_task", "other",
};
const char *const il_split_kind_names[4] = { "none", "task", "block", "irq" };

/* Size map name of obj to n entries (when it is there). */
static void map_size(struct bpf_object *obj, const char *name, __u32 n)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, name);

	if (m)
		bpf_map__set_max_entries(m, n);
}

void il_split_default(struct bpf_object *obj)
{
	struct bpf_map *tasks = bpf_object__find_map_by_name(obj, "split_tasks");

	if (!tasks)
		return;
	if (!il_can_task_storage()) { /* 5.10: the map type cannot even be made */
		bpf_map__set_type(tasks, BPF_MAP_TYPE_ARRAY);
		bpf_map__set_map_flags(tasks, 0);
		bpf_map__set_max_entries(tasks, 1);
	}
	map_size(obj, "split_by_tid", 1);
	map_size(obj, "split_ops", 1);
	map_size(obj, "split_wakers", 1);
}

struct split_cfg *il_split_cfg(struct bpf_object *obj, bool on)
{
	struct split_cfg *c = il_obj_rodata_must(obj, "split_cfg", sizeof(*c));

	il_split_default(obj);
	c->on = on;
	if (!on)
		return c;
	c->tp_prev_state = il_btf_tp_nargs("sched_switch") >= 4;
	c->task_storage = il_can_task_storage();
	map_size(obj, "split_by_tid", c->task_storage ? 1 : SPLIT_MAX_TIDS);
	map_size(obj, "split_ops", SPLIT_MAX_OPS);
	map_size(obj, "split_wakers", SPLIT_MAX_WAKERS);
	return c;
}

void il_split_plan(struct bpf_object *obj, struct il_plan *p)
{
	static const char *const tps[][2] = {
		{ "switch", "sched:sched_switch" },
		{ "waking", "sched:sched_waking" },
		{ "wakeup", "sched:sched_wakeup" },
		{ "rq_done", "block:block_rq_complete" },
	};
	char name[64];

	il_plan_init(p, "time split (sched_switch, sched_waking, sched_wakeup, block_rq_complete)");
	for (int m = 0; m < 2; m++) {
		il_plan_option(p, m ? IL_M_RAW_TP : IL_M_TP_BTF, NULL);
		for (size_t i = 0; i < IL_ARRAY_SIZE(tps); i++) {
			snprintf(name, sizeof(name), "split_%s_%s", tps[i][0], m ? "raw" : "btf");
			il_plan_add(p, obj, name, tps[i][1], false);
		}
	}
}

void il_split_chosen(struct bpf_object *obj, const struct il_plan *p)
{
	struct split_cfg *c = il_obj_rodata_must(obj, "split_cfg", sizeof(*c));

	if (!c->on)
		return;
	/* a raw_tp program cannot hand next or the wakee to bpf_task_storage_get() */
	c->task_storage = il_can_task_storage() && il_plan_method(p) == IL_M_TP_BTF;
	map_size(obj, "split_by_tid", c->task_storage ? 1 : SPLIT_MAX_TIDS);
	il_debug("split layer: per-task state in %s",
		 c->task_storage ? "task-local storage" : "a hash keyed by thread");
}

const char *il_split_waker_name(const struct split_waker *w, char *buf, size_t len)
{
	char disk[32];

	switch (w->kind) {
	case SPLIT_WK_TASK:
		snprintf(buf, len, w->kthread ? "[%.*s]" : "%.*s", IL_TASK_COMM_LEN, w->comm);
		break;
	case SPLIT_WK_BLOCK:
		snprintf(buf, len, "disk:%s", il_disk_name(w->disk, disk, sizeof(disk)));
		break;
	case SPLIT_WK_IRQ:
		snprintf(buf, len, "irq");
		break;
	default:
		snprintf(buf, len, "-");
	}
	return buf;
}

/* Every entry of hash map `name` of obj (keys of ksize, values of vsize bytes) into a
 * malloc'ed array of rows of ksize + vsize bytes (*rows). Returns how many, or -errno. */
static int map_rows(struct bpf_object *obj, const char *name, size_t ksize, size_t vsize, void **rows)
{
	int fd = il_obj_map_fd(obj, name), n = 0, cap = 0;
	char key[64], next[64], *out = NULL;
	void *prev = NULL;
	size_t row = ksize + vsize;

	*rows = NULL;
	if (fd < 0)
		return -ENOENT;
	while (!bpf_map_get_next_key(fd, prev, next)) {
		if (n == cap) {
			char *o = realloc(out, (cap = cap ? 2 * cap : 64) * row);

			if (!o) {
				free(out);
				return -ENOMEM;
			}
			out = o;
		}
		memcpy(out + n * row, next, ksize);
		if (!bpf_map_lookup_elem(fd, next, out + n * row + ksize))
			n++;
		memcpy(key, next, ksize);
		prev = key;
	}
	*rows = out;
	return n;
}

static int op_cmp(const void *a, const void *b)
{
	const struct il_split_op_row *x = a, *y = b;

	if (x->k.tgid != y->k.tgid)
		return x->k.tgid < y->k.tgid ? -1 : 1;
	return (int)x->k.op - (int)y->k.op;
}

static int wk_cmp(const void *a, const void *b)
{
	const struct il_split_wk_row *x = a, *y = b;

	return x->v.ns == y->v.ns ? 0 : x->v.ns > y->v.ns ? -1 : 1;
}

int il_split_read(struct bpf_object *obj, struct il_split *s)
{
	int n;

	memset(s, 0, sizeof(*s));
	_Static_assert(sizeof(struct split_op_key) + sizeof(struct split_op_val) ==
		       sizeof(struct il_split_op_row), "row layout");
	_Static_assert(sizeof(struct split_wk_key) + sizeof(struct split_wk_val) ==
		       sizeof(struct il_split_wk_row), "row layout");
	n = map_rows(obj, "split_ops", sizeof(struct split_op_key), sizeof(struct split_op_val),
		     (void **)&s->ops);
	if (n < 0)
		return n;
	s->nops = n;
	n = map_rows(obj, "split_wakers", sizeof(struct split_wk_key), sizeof(struct split_wk_val),
		     (void **)&s->wakers);
	if (n < 0) {
		il_split_free(s);
		return n;
	}
	s->nwakers = n;
	qsort(s->ops, s->nops, sizeof(*s->ops), op_cmp);
	qsort(s->wakers, s->nwakers, sizeof(*s->wakers), wk_cmp);
	return 0;
}

void il_split_free(struct il_split *s)
{
	free(s->ops);
	free(s->wakers);
	memset(s, 0, sizeof(*s));
}
