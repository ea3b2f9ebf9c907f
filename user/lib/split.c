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
#include "escape.h"
#include "layers/fs.h"
#include "layers/split.h"
#include "log.h"
#include "probes.h"
#include "util.h"

const char *const il_split_part_keys[SPLIT_PARTS] = {
	"on_cpu", "runq", "iowait_block", "iowait_task", "other",
};
const char *const il_split_kind_names[5] = { "none", "task", "block", "irq", "cpu" };

void il_split_default(struct bpf_object *obj)
{
	/* (the task storage it shares, fs_tasks, is the fs layer's to make or not: il_fs_cfg) */
	il_obj_map_size(obj, "split_by_tid", 1);
	il_obj_map_size(obj, "split_ops", 1);
	il_obj_map_size(obj, "split_op_slots", 1);
	il_obj_map_size(obj, "split_wakers", 1);
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
	il_obj_map_size(obj, "split_by_tid", c->task_storage ? 1 : SPLIT_MAX_TIDS);
	il_obj_map_size(obj, "split_ops", SPLIT_MAX_OPS);
	il_obj_map_size(obj, "split_op_slots", SPLIT_OP_SLOTS);
	il_obj_map_size(obj, "split_wakers", SPLIT_MAX_WAKERS);
	return c;
}

void il_split_plan(struct bpf_object *obj, struct il_plan *p)
{
	static const char *const tps[][2] = {
		{ "switch", "sched:sched_switch" },
		{ "waking", "sched:sched_waking" },
		{ "wakeup", "sched:sched_wakeup" },
		{ "rq_done", "block:block_rq_complete" },
		{ "exit", "sched:sched_process_exit" },
	};
	char name[64];

	il_plan_init(p, "time split (sched_switch, sched_waking, sched_wakeup, block_rq_complete, "
		     "sched_process_exit)");
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
	il_obj_map_size(obj, "split_by_tid", c->task_storage ? 1 : SPLIT_MAX_TIDS);
	il_debug("split layer: per-task state in %s",
		 c->task_storage ? "task-local storage" : "a hash keyed by thread");
}

void il_split_rq_done_in_block(struct bpf_object *obj, struct il_plan *p)
{
	struct split_cfg *c = il_obj_rodata_must(obj, "split_cfg", sizeof(*c));

	if (!c->on || (!il_plan_leave_out(p, "split_rq_done_btf") &&
		       !il_plan_leave_out(p, "split_rq_done_raw")))
		return;
	c->rq_done_in_blk = 1;
	il_debug("block_rq_complete: the time split's marker set by the block layer's program");
}

void il_split_switch_in_iowait(struct bpf_object *obj, struct il_plan *p, const struct il_plan *iw)
{
	struct split_cfg *c = il_obj_rodata_must(obj, "split_cfg", sizeof(*c));
	int m = il_plan_method(p);

	/* the same method: the I/O-wait layer's tp_btf program hands split_on_switch() BTF
	 * pointers, which split_cfg.task_storage was chosen for */
	if (!c->on || m < 0 || m != il_plan_method(iw) ||
	    (!il_plan_leave_out(p, "split_switch_btf") && !il_plan_leave_out(p, "split_switch_raw")))
		return;
	c->switch_in_iw = 1;
	il_debug("sched_switch: the time split's handler run by the I/O-wait layer's program");
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
	case SPLIT_WK_CPU:
		if (!w->tgid && w->tid == SPLIT_RQ_PAST_RING)
			snprintf(buf, len, "not followed");
		else if (!w->tgid)
			snprintf(buf, len, "idle");
		else
			snprintf(buf, len, w->kthread ? "[%.*s]" : "%.*s", IL_TASK_COMM_LEN, w->comm);
		break;
	default:
		snprintf(buf, len, "-");
	}
	return buf;
}

/* ---- rendering: a row's split, the sums at exit -------------------------------------- */

/* The name of disk dev into buf (il_disk_name()), or none when dev is 0. Returns buf. */
static const char *disk_or(__u32 dev, const char *none, char *buf, size_t len)
{
	if (!dev) {
		snprintf(buf, len, "%s", none);
		return buf;
	}
	return il_disk_name(dev, buf, len);
}

/* The waker of an aggregate row r as a struct split_waker. */
static struct split_waker row_waker(const struct il_split_wk_row *r)
{
	struct split_waker w = { .tgid = r->k.wk_tgid, .tid = r->k.wk_tid, .disk = r->k.wk_disk,
				 .kind = r->k.wk_kind, .kthread = r->v.kthread };

	memcpy(w.comm, r->v.comm, sizeof(w.comm));
	return w;
}

void il_split_parts_json(struct json_object *o, const __u64 part_ns[SPLIT_PARTS])
{
	char key[32];

	for (int p = 0; p < SPLIT_PARTS; p++) {
		snprintf(key, sizeof(key), "%s_us", il_split_part_keys[p]);
		json_object_object_add(o, key, il_json_usecs(part_ns[p] / 1e3));
	}
}

void il_split_text_head(FILE *f)
{
	fprintf(f, "%7s %7s %7s %7s %7s %-16s %-7s %7s %7s %-8s ", "ONCPU", "RUNQ", "IOW_BLK",
		"IOW_TSK", "OTHER", "WAKER", "WPID", "W_MS", "W_IO", "W_DISK");
}

void il_split_text(FILE *f, const struct split_result *r)
{
	char name[IL_TASK_COMM_LEN + 8], col[4 * 16 + 1], pid[16] = "-", disk[32];

	for (int p = 0; p < SPLIT_PARTS; p++)
		fprintf(f, "%7.2f ", r->part_ns[p] / 1e6);
	il_split_waker_name(&r->waker, name, sizeof(name));
	if (r->waker.kind == SPLIT_WK_TASK)
		snprintf(pid, sizeof(pid), "%u", r->waker.tgid);
	fprintf(f, "%s %-7s %7.2f ", il_text_column(name, sizeof(name), 16, col, sizeof(col)), pid,
		r->waker_ns / 1e6);
	if (r->waker.kind == SPLIT_WK_TASK)
		fprintf(f, "%7.2f %-8s ", r->waker_io_ns / 1e6,
			disk_or(r->waker_io_disk, "-", disk, sizeof(disk)));
	else
		fprintf(f, "%7s %-8s ", "-", "-");
}

void il_split_csv(FILE *f, const struct split_result *r)
{
	char name[IL_TASK_COMM_LEN + 8], disk[32], iodisk[32];

	for (int p = 0; p < SPLIT_PARTS; p++)
		fprintf(f, "%.3f,", r->part_ns[p] / 1e3);
	il_csv_field(f, il_split_waker_name(&r->waker, name, sizeof(name)));
	fprintf(f, ",%s,%u,%u,%u,%s,%.3f,%u,%.3f,%s,", il_split_kind_names[r->waker.kind % 5],
		r->waker.tgid, r->waker.tid, r->waker.kthread,
		disk_or(r->waker.disk, "", disk, sizeof(disk)), r->waker_ns / 1e3, r->wakes,
		r->waker_io_ns / 1e3, disk_or(r->waker_io_disk, "", iodisk, sizeof(iodisk)));
}

struct json_object *il_split_json(const struct split_result *r)
{
	struct json_object *o = json_object_new_object(), *w = json_object_new_object();
	char disk[32];

	il_split_parts_json(o, r->part_ns);
	json_object_object_add(w, "kind", json_object_new_string(il_split_kind_names[r->waker.kind % 5]));
	if (r->waker.kind == SPLIT_WK_TASK) {
		json_object_object_add(w, "pid", json_object_new_int(r->waker.tgid));
		json_object_object_add(w, "tid", json_object_new_int(r->waker.tid));
		il_json_add_name(w, "comm", r->waker.comm, sizeof(r->waker.comm));
		json_object_object_add(w, "kthread", json_object_new_boolean(r->waker.kthread));
		json_object_object_add(w, "io_usecs", il_json_usecs(r->waker_io_ns / 1e3));
		json_object_object_add(w, "io_disk", r->waker_io_disk ? json_object_new_string(
			disk_or(r->waker_io_disk, "", disk, sizeof(disk))) : NULL);
	}
	if (r->waker.kind == SPLIT_WK_BLOCK)
		json_object_object_add(w, "disk", json_object_new_string(
			disk_or(r->waker.disk, "", disk, sizeof(disk))));
	json_object_object_add(w, "usecs", il_json_usecs(r->waker_ns / 1e3));
	json_object_object_add(w, "wakes", json_object_new_uint64(r->wakes));
	json_object_object_add(o, "waker", w);
	return o;
}

void il_split_sums_print(FILE *f, const struct il_split *s)
{
	char name[IL_TASK_COMM_LEN + 8], col[4 * 16 + 1], disk[32];

	fprintf(f, "\nWhere the time went (every traced call, ms):\n%-7s %-2s %9s %10s %10s %10s %10s %10s\n",
		"PID", "T", "CALLS", "ONCPU", "RUNQ", "IOW_BLK", "IOW_TSK", "OTHER");
	for (int i = 0; i < s->nops; i++) {
		fprintf(f, "%-7u %-2c %9llu", s->ops[i].k.tgid, il_fs_op_letters[s->ops[i].k.op % FS_OP__MAX],
			(unsigned long long)s->ops[i].v.calls);
		for (int p = 0; p < SPLIT_PARTS; p++)
			fprintf(f, " %10.2f", s->ops[i].v.part_ns[p] / 1e6);
		fputc('\n', f);
	}
	fprintf(f, "Top wakers (the sleep they ended, ms):\n%-7s %-2s %-16s %-7s %9s %10s %10s %s\n",
		"PID", "T", "WAKER", "WPID", "WAKES", "W_MS", "W_IO", "W_DISK");
	for (int i = 0, shown = 0; i < s->nwakers && shown < IL_SPLIT_TOP_WAKERS; i++) {
		const struct il_split_wk_row *r = &s->wakers[i];
		struct split_waker w = row_waker(r);
		char pid[16] = "-";

		if (w.kind == SPLIT_WK_CPU)
			continue;
		shown++;
		if (w.kind == SPLIT_WK_TASK)
			snprintf(pid, sizeof(pid), "%u", w.tgid);
		il_split_waker_name(&w, name, sizeof(name));
		fprintf(f, "%-7u %-2c %s %-7s %9llu %10.2f %10.2f %s\n", r->k.tgid,
			il_fs_op_letters[r->k.op % FS_OP__MAX],
			il_text_column(name, sizeof(name), 16, col, sizeof(col)), pid,
			(unsigned long long)r->v.count, r->v.ns / 1e6, r->v.io_ns / 1e6,
			disk_or(r->v.io_disk, "-", disk, sizeof(disk)));
	}
	for (int i = 0, shown = 0; i < s->nwakers && shown < IL_SPLIT_TOP_WAKERS; i++) {
		const struct il_split_wk_row *r = &s->wakers[i];
		struct split_waker w = row_waker(r);
		char pid[16] = "-";

		if (w.kind != SPLIT_WK_CPU)
			continue;
		if (!shown++)
			fprintf(f, "Top CPU holders (the run-queue waits they ended, ms):\n%-7s %-2s %-16s "
				"%-7s %9s %10s\n", "PID", "T", "HOLDER", "HPID", "RUNS", "RQ_MS");
		if (w.tgid)
			snprintf(pid, sizeof(pid), "%u", w.tgid);
		il_split_waker_name(&w, name, sizeof(name));
		fprintf(f, "%-7u %-2c %s %-7s %9llu %10.2f\n", r->k.tgid,
			il_fs_op_letters[r->k.op % FS_OP__MAX],
			il_text_column(name, sizeof(name), 16, col, sizeof(col)), pid,
			(unsigned long long)r->v.count, r->v.ns / 1e6);
	}
}

struct json_object *il_split_sums_json(const struct il_split *s)
{
	struct json_object *o = json_object_new_object(), *ops = json_object_new_array();
	struct json_object *wk = json_object_new_array(), *cpu = json_object_new_array();
	char name[IL_TASK_COMM_LEN + 8], disk[32];

	for (int i = 0; i < s->nops; i++) {
		struct json_object *x = json_object_new_object();

		json_object_object_add(x, "pid", json_object_new_int(s->ops[i].k.tgid));
		json_object_object_add(x, "op", json_object_new_string(il_fs_op_names[s->ops[i].k.op % FS_OP__MAX]));
		json_object_object_add(x, "calls", json_object_new_uint64(s->ops[i].v.calls));
		il_split_parts_json(x, s->ops[i].v.part_ns);
		json_object_array_add(ops, x);
	}
	for (int i = 0; i < s->nwakers; i++) {
		const struct il_split_wk_row *r = &s->wakers[i];
		struct json_object *x;
		struct split_waker w = row_waker(r);

		if (w.kind == SPLIT_WK_CPU) {
			x = json_object_new_object();
			json_object_object_add(x, "pid", json_object_new_int(r->k.tgid));
			json_object_object_add(x, "op", json_object_new_string(il_fs_op_names[r->k.op % FS_OP__MAX]));
			json_object_object_add(x, "holder", json_object_new_string(il_split_waker_name(&w, name, sizeof(name))));
			json_object_object_add(x, "holder_pid", w.tgid ? json_object_new_int(w.tgid) : NULL);
			json_object_object_add(x, "kthread", json_object_new_boolean(w.kthread));
			json_object_object_add(x, "usecs", il_json_usecs(r->v.ns / 1e3));
			json_object_object_add(x, "runs", json_object_new_uint64(r->v.count));
			json_object_array_add(cpu, x);
			continue;
		}
		x = json_object_new_object();
		json_object_object_add(x, "pid", json_object_new_int(r->k.tgid));
		json_object_object_add(x, "op", json_object_new_string(il_fs_op_names[r->k.op % FS_OP__MAX]));
		json_object_object_add(x, "kind", json_object_new_string(il_split_kind_names[w.kind % 5]));
		json_object_object_add(x, "waker", json_object_new_string(il_split_waker_name(&w, name, sizeof(name))));
		if (w.kind == SPLIT_WK_TASK) {
			json_object_object_add(x, "waker_pid", json_object_new_int(w.tgid));
			json_object_object_add(x, "waker_tid", json_object_new_int(w.tid));
			json_object_object_add(x, "io_usecs", il_json_usecs(r->v.io_ns / 1e3));
			json_object_object_add(x, "io_disk", r->v.io_disk ? json_object_new_string(
				disk_or(r->v.io_disk, "", disk, sizeof(disk))) : NULL);
		}
		if (w.kind == SPLIT_WK_BLOCK)
			json_object_object_add(x, "disk", json_object_new_string(disk_or(w.disk, "", disk, sizeof(disk))));
		json_object_object_add(x, "usecs", il_json_usecs(r->v.ns / 1e3));
		json_object_object_add(x, "wakes", json_object_new_uint64(r->v.count));
		json_object_array_add(wk, x);
	}
	json_object_object_add(o, "processes", ops);
	json_object_object_add(o, "wakers", wk);
	json_object_object_add(o, "cpu_holders", cpu);
	return o;
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

static int exit_cmp(const void *a, const void *b)
{
	__u64 x = ((const struct il_split_exit_row *)a)->tgid, y = ((const struct il_split_exit_row *)b)->tgid;

	return x < y ? -1 : x > y;
}

int il_split_ops_merge(struct il_split_op_row *r, int n)
{
	int m = 0;

	if (n > 1)
		qsort(r, n, sizeof(*r), op_cmp);
	for (int i = 0; i < n; i++) {
		if (m && !op_cmp(&r[m - 1], &r[i])) {
			r[m - 1].v.calls += r[i].v.calls;
			r[m - 1].v.datasync += r[i].v.datasync;
			for (int p = 0; p < SPLIT_PARTS; p++)
				r[m - 1].v.part_ns[p] += r[i].v.part_ns[p];
		} else {
			r[m++] = r[i];
		}
	}
	return m;
}

/* The taken slots of split_op_slots (struct split_op_slot) after the n rows of *rows (grown),
 * then il_split_ops_merge() (a key counted in its slot and in split_ops is in both), the slots
 * read by il_array_read(). Returns the new count (the merge of the n rows alone when the map
 * is not there or cannot be read), or -ENOMEM. */
static int op_slots_read(struct bpf_object *obj, struct il_split_op_row **rows, int n)
{
	struct split_op_slot *sl = malloc(SPLIT_OP_SLOTS * sizeof(*sl));
	struct il_split_op_row *r = *rows, *grown;
	__u32 cnt;
	int m = 0;

	if (!sl)
		return -ENOMEM;
	cnt = il_array_read(il_obj_map_fd(obj, "split_op_slots"), SPLIT_OP_SLOTS, sizeof(*sl), sl);
	for (__u32 i = 0; i < cnt; i++)
		m += sl[i].k.tgid && sl[i].v.calls; /* taken and counted into */
	if (m) {
		if (!(grown = realloc(r, (size_t)(n + m) * sizeof(*r)))) {
			free(sl);
			return -ENOMEM;
		}
		r = *rows = grown;
		for (__u32 i = 0; i < cnt; i++)
			if (sl[i].k.tgid && sl[i].v.calls)
				r[n++] = (struct il_split_op_row){ .k = sl[i].k, .v = sl[i].v };
	}
	free(sl);
	return il_split_ops_merge(r, n);
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
	n = op_slots_read(obj, &s->ops, n);
	if (n < 0) {
		il_split_free(s);
		return n;
	}
	s->nops = n;
	n = map_rows(obj, "split_wakers", sizeof(struct split_wk_key), sizeof(struct split_wk_val),
		     (void **)&s->wakers);
	if (n < 0) {
		il_split_free(s);
		return n;
	}
	s->nwakers = n;
	/* (a map older objects lack: none then) */
	n = il_obj_map_fd(obj, "split_exited") < 0 ? 0 :
	    map_rows(obj, "split_exited", sizeof(__u64), sizeof(struct split_exited), (void **)&s->exited);
	if (n < 0) {
		il_split_free(s);
		return n;
	}
	s->nexited = n;
	qsort(s->wakers, s->nwakers, sizeof(*s->wakers), wk_cmp);
	qsort(s->exited, s->nexited, sizeof(*s->exited), exit_cmp);
	return 0;
}

int il_split_inflight(struct bpf_object *obj, __u32 pid, __u32 tid, int op, __u64 now,
		      __u64 part_ns[SPLIT_PARTS])
{
	const struct split_cfg *c = il_obj_rodata(obj, "split_cfg", sizeof(*c));
	struct fs_task ft;
	struct split_task t;
	__u32 part;
	int err;

	if (op < 0 || op >= SPLIT_OPS)
		return -ENOENT;
	/* the thread's storage (fs_tasks' .split), else by tid */
	if (c && c->task_storage) {
		err = il_obj_task_lookup(obj, "fs_tasks", pid, tid, &ft);
		t = ft.split;
	} else {
		err = il_obj_task_lookup(obj, "split_by_tid", pid, tid, &t);
	}
	if (err)
		return err;
	if (!(t.active & (1 << op)))
		return -ENOENT;
	for (int p = 0; p < SPLIT_PARTS; p++)
		part_ns[p] = t.sum[p] - t.slot[op].base[p];
	part = split_state_part(&t, t.state); /* the interval it is in now, as split_close() */
	if (now > t.ts && part < SPLIT_PARTS)
		part_ns[part] += now - t.ts;
	return 0;
}

void il_split_free(struct il_split *s)
{
	free(s->ops);
	free(s->wakers);
	free(s->exited);
	memset(s, 0, sizeof(*s));
}
