/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Unit tests: the block layer's per-CPU aggregate maps (blk_disks, blk_procs, blk_cgroups) are
 * read as one value per possible CPU; il_blk_percpu_fold() must give what one shared value
 * updated by every CPU gave: counts and sums added, maxima the largest, the last-seen fields
 * of the latest CPU. Attribution's per-CPU (process, disk) totals (who_pd) are a process's
 * bio totals too: il_who_procs_bios().
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "libiolayer.h"

/* Two CPUs' copies of a disk's totals: every counter, slot and sum added; the maxima (of the
 * device, the queue and each phase) the larger, from either CPU. The I2D and D2C phases are
 * the queue's and the device's totals (the kernel does not add them twice). */
static void test_disk(void **state)
{
	struct blk_disk_stats cpus[2], out;

	memset(cpus, 0, sizeof(cpus));
	cpus[0].count = 3;
	cpus[1].count = 4;
	cpus[0].ops[IL_OP_WRITE] = 3;
	cpus[1].ops[IL_OP_WRITE] = 2;
	cpus[1].ops[IL_OP_READ] = 2;
	cpus[0].device_slots[12] = 3;
	cpus[1].device_slots[12] = 1;
	cpus[1].device_slots[20] = 3;
	cpus[0].device_max_ns = 9000;
	cpus[1].device_max_ns = 1500000;
	cpus[0].queue_max_ns = 700;
	cpus[1].queue_max_ns = 20;
	cpus[0].queued = 2;
	cpus[1].queue_ns = 720;
	cpus[1].queue_slots[9] = 2;
	cpus[0].iocost_activations = 1; /* the last field before the phases */
	cpus[1].phases.ios = 4;
	cpus[0].phases.ph[BLK_PH_Q2C].count = 3;
	cpus[1].phases.ph[BLK_PH_Q2C].count = 4;
	cpus[0].phases.ph[BLK_PH_Q2C].max_ns = 5;
	cpus[1].phases.ph[BLK_PH_Q2C].max_ns = 4;
	cpus[0].phases.ph[BLK_PH_D2C].max_ns = 1;
	cpus[1].phases.ph[BLK_PH_D2C].max_ns = 8;
	cpus[1].phases.ph[BLK_PH__MAX - 1].slots[IL_HIST_SLOTS - 1] = 6; /* the last __u64 */
	memset(&out, 0xff, sizeof(out)); /* the fold starts from zero */
	il_blk_percpu_fold(IL_BLK_MAP_DISKS, &out, cpus, 2);
	assert_int_equal(out.count, 7);
	assert_int_equal(out.ops[IL_OP_WRITE], 5);
	assert_int_equal(out.ops[IL_OP_READ], 2);
	assert_int_equal(out.device_slots[12], 4);
	assert_int_equal(out.device_slots[20], 3);
	assert_int_equal(out.device_max_ns, 1500000);
	assert_int_equal(out.queue_max_ns, 700);
	assert_int_equal(out.iocost_activations, 1);
	assert_int_equal(out.phases.ios, 4);
	assert_int_equal(out.phases.ph[BLK_PH_Q2C].count, 7);
	assert_int_equal(out.phases.ph[BLK_PH_Q2C].max_ns, 5);
	assert_int_equal(out.phases.ph[BLK_PH_D2C].max_ns, 1500000);
	assert_int_equal(out.phases.ph[BLK_PH_D2C].count, 7);
	assert_int_equal(out.phases.ph[BLK_PH_D2C].slots[12], 4);
	assert_int_equal(out.phases.ph[BLK_PH_D2C].slots[20], 3);
	assert_int_equal(out.phases.ph[BLK_PH_I2D].count, 2);
	assert_int_equal(out.phases.ph[BLK_PH_I2D].ns, 720);
	assert_int_equal(out.phases.ph[BLK_PH_I2D].max_ns, 700);
	assert_int_equal(out.phases.ph[BLK_PH_I2D].slots[9], 2);
	assert_int_equal(out.phases.ph[BLK_PH__MAX - 1].slots[IL_HIST_SLOTS - 1], 6);
	assert_int_equal(out.bytes, 0);
}

/* A (disk, process) on three CPUs: sums added; its cgroup and comm those of the copy with
 * the latest I/O, which is not the last CPU; a CPU that never saw it adds nothing. */
static void test_proc(void **state)
{
	struct blk_proc cpus[3], out;

	memset(cpus, 0, sizeof(cpus));
	cpus[0] = (struct blk_proc){ .ios = 2, .bytes = 8192, .write_bytes = 4096, .device_ns = 10,
				     .held = 1, .cgroup = 11, .last_ns = 500 };
	strcpy(cpus[0].comm, "old");
	cpus[1] = (struct blk_proc){ .ios = 1, .bytes = 4096, .write_bytes = 4096, .device_ns = 5,
				     .before_q_ns = 7, .queue_ns = 3, .cgroup = 22, .last_ns = 900 };
	strcpy(cpus[1].comm, "latest");
	memset(&out, 0xff, sizeof(out));
	il_blk_percpu_fold(IL_BLK_MAP_PROCS, &out, cpus, 3);
	assert_int_equal(out.ios, 3);
	assert_int_equal(out.bytes, 12288);
	assert_int_equal(out.write_bytes, 8192);
	assert_int_equal(out.device_ns, 15);
	assert_int_equal(out.before_q_ns, 7);
	assert_int_equal(out.queue_ns, 3);
	assert_int_equal(out.held, 1);
	assert_int_equal(out.cgroup, 22);
	assert_string_equal(out.comm, "latest");
	assert_int_equal(out.last_ns, 900);
}

/* A (disk, cgroup) on two CPUs: sums added, its tgid the one seen latest. */
static void test_cgroup(void **state)
{
	struct blk_cg cpus[2] = {
		{ .ios = 5, .bytes = 100, .queue_ns = 1, .tgid = 42, .tgid_ns = 30, .held = 2 },
		{ .ios = 1, .bytes = 1, .device_ns = 9, .tgid = 7, .tgid_ns = 10 },
	}, out;

	il_blk_percpu_fold(IL_BLK_MAP_CGROUPS, &out, cpus, 2);
	assert_int_equal(out.ios, 6);
	assert_int_equal(out.bytes, 101);
	assert_int_equal(out.queue_ns, 1);
	assert_int_equal(out.device_ns, 9);
	assert_int_equal(out.held, 2);
	assert_int_equal(out.tgid, 42);
}

/* A process's bios are the sum of its (process, disk) rows, whatever the order of the rows;
 * a row of a process with no entry adds to no one. */
static void test_who_proc_bios(void **state)
{
	struct il_who_proc_row procs[3];
	struct il_who_pd_row pd[4];
	struct il_who w = { .procs = procs, .nprocs = 3, .pd = pd, .npd = 4 };

	memset(procs, 0, sizeof(procs));
	memset(pd, 0, sizeof(pd));
	procs[0].tgid = 300;
	procs[1].tgid = 100;
	procs[2].tgid = 200;
	pd[0] = (struct il_who_pd_row){ .k = { .tgid = 100, .dev = 7 }, .v = { .bios = 2, .bytes = 8192, .write_bytes = 4096 } };
	pd[1] = (struct il_who_pd_row){ .k = { .tgid = 300, .dev = 7 }, .v = { .bios = 1, .bytes = 512 } };
	pd[2] = (struct il_who_pd_row){ .k = { .tgid = 100, .dev = 9 }, .v = { .bios = 3, .bytes = 12288, .write_bytes = 12288 } };
	pd[3] = (struct il_who_pd_row){ .k = { .tgid = 400, .dev = 7 }, .v = { .bios = 5, .bytes = 5 } };
	il_who_procs_bios(&w);
	assert_int_equal(procs[0].tgid, 100);
	assert_int_equal(procs[0].v.bios, 5);
	assert_int_equal(procs[0].v.bio_bytes, 20480);
	assert_int_equal(procs[0].v.bio_write_bytes, 16384);
	assert_int_equal(procs[1].tgid, 200);
	assert_int_equal(procs[1].v.bios, 0);
	assert_int_equal(procs[2].tgid, 300);
	assert_int_equal(procs[2].v.bio_bytes, 512);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_disk),
		cmocka_unit_test(test_proc),
		cmocka_unit_test(test_cgroup),
		cmocka_unit_test(test_who_proc_bios),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
