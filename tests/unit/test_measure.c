/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The one measurement path (user/lib/measure.h): the window between made-up snapshots, as
 * iolayer's report (base zero) and --serve's /verdict (base: an older snapshot) take it. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "libiolayer.h"

#define MS 1000000ULL
#define S (1000 * MS)
#define SDA (8u << 20)
#define SDB ((8u << 20) | 16)

static const struct il_measure_src all = { .stacks_fd = -1, .fs = true, .wb = true, .iw = true,
					   .blk = true };

/* A snapshot with n fsyncs of each_ns (in slot 20: [1, 2) ms), requests on two disks, and
 * processes 10 (fsyncs, bytes on sda) and 20 (bytes on sdb). */
static void snap(struct il_snap *s, unsigned long long t, __u64 n, __u64 each_ns, __u64 sda_ns,
		 __u64 sdb_ns)
{
	memset(s, 0, sizeof(*s));
	s->t_ns = t;
	s->fs[FS_OP_FSYNC].count = n;
	s->fs[FS_OP_FSYNC].total_ns = n * each_ns;
	s->fs[FS_OP_FSYNC].max_ns = each_ns;
	s->fs[FS_OP_FSYNC].slots[20] = n;
	s->iw.count = 2 * n; /* I/O sleeps: n in slot 18, n in slot 22 */
	s->iw.total_ns = n * (300000 + 5000000);
	s->iw_slots[18] = n;
	s->iw_slots[22] = n;
	s->ndisk = 2;
	s->disk = calloc(2, sizeof(*s->disk));
	s->disk[0].dev = SDA;
	s->disk[0].st.count = n;
	s->disk[0].st.device_ns = sda_ns;
	s->disk[0].st.device_slots[19] = n;
	s->disk[1].dev = SDB;
	s->disk[1].st.count = 10 * n;
	s->disk[1].st.device_ns = sdb_ns;
	s->disk[1].st.device_slots[10] = 10 * n;
	s->view.nprocs = 2;
	s->view.procs = calloc(2, sizeof(*s->view.procs));
	s->view.files = calloc(1, sizeof(*s->view.files));
	s->view.procs[0] = (struct il_who_sum){ .pid = 10, .comm = "fsyncer" };
	s->view.procs[0].op_ns[FS_OP_FSYNC] = n * each_ns;
	s->view.procs[0].op_count[FS_OP_FSYNC] = n;
	s->view.procs[0].disks[0] = (struct il_who_disk){ SDA, true, n * 4096, 0, 0 };
	s->view.procs[0].ndisks = 1;
	s->view.procs[1] = (struct il_who_sum){ .pid = 20, .comm = "copier" };
	s->view.procs[1].op_ns[FS_OP_WRITE] = n * MS / 100;
	s->view.procs[1].disks[0] = (struct il_who_disk){ SDB, true, n * 1048576, 0, 0 };
	s->view.procs[1].ndisks = 1;
	s->lost[IL_DROP_RINGBUF_FULL] = n;
}

/* From zero: everything counted so far; the disk is the top process's (sda, where the fsyncs
 * go), not the busier sdb. */
static void test_from_zero(void **state)
{
	struct il_snap now;
	struct il_window w;

	(void)state;
	snap(&now, 10 * S, 100, 1500000, 100 * MS, 5000 * MS);
	assert_int_equal(il_measure_window(&all, &now, NULL, &w), 0);
	assert_true(w.m.elapsed_s > 9.999 && w.m.elapsed_s < 10.001);
	assert_int_equal(w.m.ops[FS_OP_FSYNC].count, 100);
	assert_int_equal(w.m.ops[FS_OP_FSYNC].p99_lt_ns, 2097152);
	assert_int_equal(w.dev, SDA);
	assert_int_equal(w.m.device.count, 100);
	assert_int_equal(w.view.procs[0].pid, 10);
	assert_int_equal(w.view.procs[0].disk_bytes, 100 * 4096);
	assert_int_equal(w.view.procs[1].disk_bytes, 0);
	assert_int_equal(w.lost[IL_DROP_RINGBUF_FULL], 100);
	il_window_free(&w);
	il_snap_free(&now);
}

/* Between two snapshots: only what happened in between, maxima and lost events since start. */
static void test_window(void **state)
{
	struct il_snap base, now;
	struct il_window w;

	(void)state;
	snap(&base, 5 * S, 100, 1500000, 100 * MS, 5000 * MS);
	snap(&now, 65 * S, 160, 1500000, 180 * MS, 8000 * MS);
	assert_int_equal(il_measure_window(&all, &now, &base, &w), 0);
	assert_true(w.m.elapsed_s > 59.999 && w.m.elapsed_s < 60.001);
	assert_int_equal(w.m.ops[FS_OP_FSYNC].count, 60);
	assert_int_equal(w.m.ops[FS_OP_FSYNC].total_ns, 60 * 1500000ULL);
	assert_int_equal(w.m.device.count, 60);
	assert_int_equal(w.m.device.total_ns, 80 * MS);
	/* I/O wait's percentiles from the window's sleeps: 60 in each slot, p50 in 18, p99 in 22 */
	assert_int_equal(w.m.iowait.count, 120);
	assert_int_equal(w.m.iowait.p50_lt_ns, 1ULL << 19);
	assert_int_equal(w.m.iowait.p99_lt_ns, 1ULL << 23);
	assert_int_equal(w.view.procs[0].op_ns[FS_OP_FSYNC], 60 * 1500000ULL);
	assert_int_equal(w.view.procs[0].disk_bytes, 60 * 4096);
	assert_int_equal(w.lost[IL_DROP_RINGBUF_FULL], 160);
	il_window_free(&w);
	il_snap_free(&base);
	il_snap_free(&now);
}

/* CPU time over the window: the live processes' from /proc; a process gone by the end by its
 * threads' CPU time at their exits (split_exited): born in the window (all of it), alive at
 * its start (past what /proc said then), or whose threads had exited before (past that);
 * one alive at the end whose thread exited counts once, by /proc. */
static void test_cpu_exited(void **state)
{
	struct il_snap base, now;
	struct il_window w;
	const struct il_proc_cpu *c;

	(void)state;
	snap(&base, 5 * S, 100, 1500000, 100 * MS, 5000 * MS);
	snap(&now, 65 * S, 160, 1500000, 180 * MS, 8000 * MS);
	base.ncpu = 3;
	base.cpu = calloc(3, sizeof(*base.cpu));
	base.cpu[0] = (struct il_proc_cpu){ .pid = 10, .cpu_ns = 1 * S };
	base.cpu[1] = (struct il_proc_cpu){ .pid = 30, .cpu_ns = 2 * S }; /* dies in the window */
	base.cpu[2] = (struct il_proc_cpu){ .pid = 50, .cpu_ns = 1 * S }; /* lives on */
	base.split.nexited = 1;
	base.split.exited = calloc(1, sizeof(*base.split.exited));
	base.split.exited[0] = (struct il_split_exit_row){ 40, { .ns = 3 * S } }; /* a thread gone */
	now.ncpu = 2;
	now.cpu = calloc(2, sizeof(*now.cpu));
	now.cpu[0] = (struct il_proc_cpu){ .pid = 10, .cpu_ns = 4 * S };
	now.cpu[1] = (struct il_proc_cpu){ .pid = 50, .cpu_ns = 6 * S };
	now.split.nexited = 4;
	now.split.exited = calloc(4, sizeof(*now.split.exited));
	now.split.exited[0] = (struct il_split_exit_row){ 30, { .ns = 5 * S, .comm = "cron" } };
	now.split.exited[1] = (struct il_split_exit_row){ 40, { .ns = 7 * S, .comm = "make" } };
	now.split.exited[2] = (struct il_split_exit_row){ 50, { .ns = 1 * S, .comm = "worker" } };
	now.split.exited[3] = (struct il_split_exit_row){ 60, { .ns = 2 * S, .comm = "cc1", .cpus = 2 } };
	assert_int_equal(il_measure_window(&all, &now, &base, &w), 0);
	assert_int_equal(w.ncpu, 5);
	assert_int_equal(il_proc_cpu_find(w.cpu, w.ncpu, 10)->cpu_ns, 3 * S);
	assert_int_equal(il_proc_cpu_find(w.cpu, w.ncpu, 30)->cpu_ns, 3 * S);
	assert_string_equal(il_proc_cpu_find(w.cpu, w.ncpu, 30)->comm, "cron");
	assert_int_equal(il_proc_cpu_find(w.cpu, w.ncpu, 40)->cpu_ns, 4 * S);
	assert_int_equal(il_proc_cpu_find(w.cpu, w.ncpu, 50)->cpu_ns, 5 * S);
	c = il_proc_cpu_find(w.cpu, w.ncpu, 60);
	assert_non_null(c);
	assert_int_equal(c->cpu_ns, 2 * S);
	assert_int_equal(c->cpus, 2);
	assert_string_equal(c->comm, "cc1");
	il_window_free(&w);
	il_snap_free(&base);
	il_snap_free(&now);
}

/* -p: the disk of that process (sdb for 20), and only it among the processes. */
static void test_pid(void **state)
{
	struct il_measure_src src = all;
	struct il_snap now;
	struct il_window w;

	(void)state;
	src.pid = 20;
	snap(&now, 10 * S, 100, 1500000, 100 * MS, 5000 * MS);
	assert_int_equal(il_measure_window(&src, &now, NULL, &w), 0);
	assert_int_equal(w.dev, SDB);
	assert_int_equal(w.m.device.count, 1000);
	assert_int_equal(w.view.nprocs, 1);
	assert_int_equal(w.view.procs[0].pid, 20);
	il_window_free(&w);
	/* a process that used no disk: none is judged */
	src.pid = 30;
	assert_int_equal(il_measure_window(&src, &now, NULL, &w), 0);
	assert_int_equal(w.dev, 0);
	assert_int_equal(w.m.device.count, 0);
	il_window_free(&w);
	il_snap_free(&now);
}

/* No process known: the disk with the most block-layer time over the window. Between the two
 * snapshots sda gained more than sdb, though sdb has more since start. */
static void test_busiest_in_window(void **state)
{
	struct il_snap base, now;
	struct il_window w;

	(void)state;
	snap(&base, 0, 100, 1500000, 100 * MS, 5000 * MS);
	snap(&now, 10 * S, 200, 1500000, 9000 * MS, 5100 * MS);
	il_who_view_free(&base.view);
	il_who_view_free(&now.view);
	assert_int_equal(il_measure_window(&all, &now, &base, &w), 0);
	assert_int_equal(w.dev, SDA);
	il_window_free(&w);
	assert_int_equal(il_measure_window(&all, &now, NULL, &w), 0);
	assert_int_equal(w.dev, SDA); /* 9.1 s against 5.1 s since start too */
	il_window_free(&w);
	il_snap_free(&base);
	il_snap_free(&now);
}

/* The same window judged from il_window_json(): the layers' numbers and the verdict. */
static void test_json(void **state)
{
	struct il_snap now;
	struct il_window w;
	struct il_verdict v;
	struct json_object *o, *x;

	(void)state;
	snap(&now, 10 * S, 100, 1500000, 100 * MS, 5000 * MS);
	assert_int_equal(il_measure_window(&all, &now, NULL, &w), 0);
	il_judge(&w.m, w.view.procs, w.view.nprocs, &v);
	o = il_window_json(&w, &v);
	assert_true(json_object_object_get_ex(o, "layers", &x));
	assert_true(json_object_object_get_ex(x, "syscall", &x));
	assert_true(json_object_object_get_ex(x, "fsync", &x));
	assert_int_equal(json_object_get_int64(json_object_object_get(x, "count")), 100);
	assert_true(json_object_object_get_ex(o, "verdict", &x));
	assert_string_equal(json_object_get_string(json_object_object_get(x, "layer")),
			    il_where_name(v.d.where));
	assert_string_equal(json_object_get_string(json_object_object_get(x, "disk")), w.m.disk);
	json_object_put(o);
	il_window_free(&w);
	il_snap_free(&now);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_from_zero), cmocka_unit_test(test_window),
		cmocka_unit_test(test_pid), cmocka_unit_test(test_busiest_in_window),
		cmocka_unit_test(test_json), cmocka_unit_test(test_cpu_exited),
	};
	return cmocka_run_group_tests_name("measure", tests, NULL, NULL);
}
