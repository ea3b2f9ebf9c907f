/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Unit tests: the block layer's per-CPU aggregate maps (blk_disks, blk_proc_cg) are read as
 * one value per possible CPU; il_blk_percpu_fold() must give what one shared value updated by
 * every CPU gave: counts and sums added, maxima the largest, the last-seen fields of the latest
 * CPU. blk_proc_cg's (disk, process, cgroup) rows are then summed by (disk, process) and by
 * (disk, cgroup), as two maps of their own counted them. Attribution's per-CPU (process, disk) totals (who_pd) are a process's
 * bio totals too: il_who_procs_bios(). A key counted both in its direct-mapped slot and in
 * its map (split_op_slots and split_ops, who_pd_slots and who_pd) is one row.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
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

/* A (disk, process, cgroup) on three CPUs: sums added; its cgroup and comm those of the copy with
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
	il_blk_percpu_fold(IL_BLK_MAP_PROC_CG, &out, cpus, 3);
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

/* blk_proc_cg's rows, in no order: process 42 in cgroups 11 and 22 on disk 1 (moved), process
 * 7 in cgroup 11 on disk 1 and on disk 2, the unknown submitter (tgid 0) in cgroup 11 on
 * disk 1. */
static const struct il_blk_pcg_row pcg[] = {
	{ { .dev = 1, .tgid = 42, .cgroup = 22 },
	  { .ios = 1, .bytes = 1, .device_ns = 9, .cgroup = 22, .last_ns = 40, .comm = "new" } },
	{ { .dev = 2, .tgid = 7, .cgroup = 11 }, { .ios = 3, .bytes = 30, .cgroup = 11, .last_ns = 5 } },
	{ { .dev = 1, .tgid = 0, .cgroup = 11 }, { .ios = 4, .held = 4, .cgroup = 11, .last_ns = 90 } },
	{ { .dev = 1, .tgid = 42, .cgroup = 11 },
	  { .ios = 5, .bytes = 100, .write_bytes = 100, .queue_ns = 1, .held = 2, .cgroup = 11,
	    .last_ns = 30, .comm = "old" } },
	{ { .dev = 1, .tgid = 7, .cgroup = 11 }, { .ios = 2, .bytes = 8, .cgroup = 11, .last_ns = 20 } },
};

/* By (disk, cgroup): sums added; its tgid the known submitter seen latest (not the unknown
 * one, later still); a process in two cgroups counted in each for its own I/Os. */
static void test_cgroups_of(void **state)
{
	struct il_blk_cg_row *r;
	int n = il_blk_cgroups_of(pcg, 5, &r);

	assert_int_equal(n, 3);
	assert_int_equal(r[0].k.dev, 1);
	assert_int_equal(r[0].k.cgroup, 11);
	assert_int_equal(r[0].v.ios, 11);
	assert_int_equal(r[0].v.bytes, 108);
	assert_int_equal(r[0].v.queue_ns, 1);
	assert_int_equal(r[0].v.held, 6);
	assert_int_equal(r[0].v.tgid, 42);
	assert_int_equal(r[0].v.tgid_ns, 30);
	assert_int_equal(r[1].k.dev, 1);
	assert_int_equal(r[1].k.cgroup, 22);
	assert_int_equal(r[1].v.ios, 1);
	assert_int_equal(r[1].v.device_ns, 9);
	assert_int_equal(r[1].v.tgid, 42);
	assert_int_equal(r[2].k.dev, 2);
	assert_int_equal(r[2].v.ios, 3);
	assert_int_equal(r[2].v.tgid, 7);
	free(r);
	assert_int_equal(il_blk_cgroups_of(pcg, 0, &r), 0);
	assert_null(r);
}

/* By (disk, process): sums added across its cgroups; its cgroup and comm the latest. */
static void test_procs_of(void **state)
{
	struct il_blk_proc_row *r;
	int n = il_blk_procs_of(pcg, 5, &r);

	assert_int_equal(n, 4);
	assert_int_equal(r[0].k.dev, 1);
	assert_int_equal(r[0].k.tgid, 0);
	assert_int_equal(r[0].v.ios, 4);
	assert_int_equal(r[1].k.tgid, 7);
	assert_int_equal(r[1].v.ios, 2);
	assert_int_equal(r[2].k.tgid, 42);
	assert_int_equal(r[2].v.ios, 6);
	assert_int_equal(r[2].v.bytes, 101);
	assert_int_equal(r[2].v.write_bytes, 100);
	assert_int_equal(r[2].v.held, 2);
	assert_int_equal(r[2].v.cgroup, 22);
	assert_string_equal(r[2].v.comm, "new");
	assert_int_equal(r[2].v.last_ns, 40);
	assert_int_equal(r[3].k.dev, 2);
	assert_int_equal(r[3].k.tgid, 7);
	assert_int_equal(r[3].v.bytes, 30);
	free(r);
}

/* A key in its slot of blk_pcg_slots and in blk_proc_cg (it came while two CPUs took its
 * slot, or its slot was another's until that key's process went): one row each way, the two
 * added, comm and cgroup the latest. */
static void test_slot_and_hash(void **state)
{
	const struct il_blk_pcg_row twice[] = {
		{ { .dev = 1, .tgid = 42, .cgroup = 11 },
		  { .ios = 5, .bytes = 50, .device_ns = 7, .cgroup = 11, .last_ns = 30, .comm = "slot" } },
		{ { .dev = 1, .tgid = 42, .cgroup = 11 },
		  { .ios = 2, .bytes = 20, .device_ns = 3, .cgroup = 11, .last_ns = 60, .comm = "hash" } },
	};
	struct il_blk_proc_row *p;
	struct il_blk_cg_row *c;

	assert_int_equal(il_blk_procs_of(twice, 2, &p), 1);
	assert_int_equal(p[0].v.ios, 7);
	assert_int_equal(p[0].v.bytes, 70);
	assert_int_equal(p[0].v.device_ns, 10);
	assert_string_equal(p[0].v.comm, "hash");
	free(p);
	assert_int_equal(il_blk_cgroups_of(twice, 2, &c), 1);
	assert_int_equal(c[0].v.ios, 7);
	assert_int_equal(c[0].v.tgid, 42);
	free(c);
}

/* The slot of a key is in the array, and the keys of a host's processes spread: 2,000
 * processes on one disk in one cgroup, then one process in 2,000 cgroups, each set in at
 * least 1,500 of the 4,096 slots (a uniform hash: about 1,640). */
static void test_slot_idx(void **state)
{
	static unsigned char seen[2][BLK_PCG_SLOTS];
	int used[2] = { 0, 0 };

	for (__u32 i = 0; i < 2000; i++) {
		__u32 a = blk_pcg_slot_idx(8 << 20 | 16, 1000 + i, 4242),
		      b = blk_pcg_slot_idx(259 << 20, 77, 0x100000000ULL + i);

		assert_true(a < BLK_PCG_SLOTS && b < BLK_PCG_SLOTS);
		used[0] += !seen[0][a]++;
		used[1] += !seen[1][b]++;
	}
	assert_true(used[0] >= 1500);
	assert_true(used[1] >= 1500);
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

/* A (process, operation) key found in its slot and in split_ops is one row, its calls,
 * fdatasyncs and parts summed; rows end sorted by (tgid, op) and other keys stay apart. */
static void test_split_ops_merge(void **state)
{
	struct il_split_op_row r[4] = {
		{ { .tgid = 20, .op = FS_OP_WRITE }, { .calls = 3, .part_ns = { 30, 1 } } },
		{ { .tgid = 10, .op = FS_OP_FSYNC }, { .calls = 2, .part_ns = { 5, 0, 7 }, .datasync = 2 } },
		{ { .tgid = 20, .op = FS_OP_WRITE }, { .calls = 1, .part_ns = { 10, 2 } } },
		{ { .tgid = 20, .op = FS_OP_READ }, { .calls = 9 } },
	};

	assert_int_equal(il_split_ops_merge(r, 4), 3);
	assert_int_equal(r[0].k.tgid, 10);
	assert_int_equal(r[0].v.datasync, 2);
	assert_int_equal(r[1].k.tgid, 20);
	assert_int_equal(r[1].k.op, FS_OP_READ);
	assert_int_equal(r[1].v.calls, 9);
	assert_int_equal(r[2].k.op, FS_OP_WRITE);
	assert_int_equal(r[2].v.calls, 4);
	assert_int_equal(r[2].v.part_ns[0], 40);
	assert_int_equal(r[2].v.part_ns[1], 3);
	assert_int_equal(il_split_ops_merge(r, 0), 0);
}

/* A (process, disk) key found in its slot and in who_pd is one row, every sum added, the
 * comm the first one set; other keys stay apart. */
static void test_who_pd_merge(void **state)
{
	struct il_who_pd_row r[3] = {
		{ { .tgid = 7, .dev = 1 }, { .bios = 1, .bytes = 4096, .write_bytes = 4096 } },
		{ { .tgid = 7, .dev = 2 }, { .bios = 5 } },
		{ { .tgid = 7, .dev = 1 }, { .bios = 2, .bytes = 100, .foreign_bytes = 3, .dirtied_bytes = 8,
					      .comm = "dirtier" } },
	};

	assert_int_equal(il_who_pd_merge(r, 3), 2);
	assert_int_equal(r[0].k.dev, 1);
	assert_int_equal(r[0].v.bios, 3);
	assert_int_equal(r[0].v.bytes, 4196);
	assert_int_equal(r[0].v.write_bytes, 4096);
	assert_int_equal(r[0].v.foreign_bytes, 3);
	assert_int_equal(r[0].v.dirtied_bytes, 8);
	assert_string_equal(r[0].v.comm, "dirtier");
	assert_int_equal(r[1].k.dev, 2);
	assert_int_equal(r[1].v.bios, 5);
}

/* The other slot arrays' indexes are in range and spread: 2,000 processes' (process, op) and
 * (process, disk) keys each set at least 1,500 of 4,096 slots; a host's disks (16 loop
 * devices, 4 NVMe namespaces, vda, sda) at least 12 of the 16 disk slots. */
static void test_slot_idx_others(void **state)
{
	static unsigned char seen[2][4096];
	unsigned char dseen[BLK_DISK_SLOTS] = { 0 };
	int used[2] = { 0, 0 }, dused = 0;
	__u32 devs[22];
	int nd = 0;

	for (__u32 i = 0; i < 2000; i++) {
		__u32 a = split_op_slot_idx(3000 + i, FS_OP_WRITE), b = who_pd_slot_idx(3000 + i, 7 << 20);

		assert_true(a < SPLIT_OP_SLOTS && b < WHO_PD_SLOTS);
		used[0] += !seen[0][a]++;
		used[1] += !seen[1][b]++;
	}
	assert_true(used[0] >= 1500);
	assert_true(used[1] >= 1500);
	for (__u32 i = 0; i < 16; i++)
		devs[nd++] = 7 << 20 | i;
	for (__u32 i = 0; i < 4; i++)
		devs[nd++] = 259 << 20 | i;
	devs[nd++] = 253 << 20;
	devs[nd++] = 8 << 20;
	for (int i = 0; i < nd; i++) {
		__u32 d = blk_disk_slot_idx(devs[i]);

		assert_true(d < BLK_DISK_SLOTS);
		dused += !dseen[d]++;
	}
	assert_true(dused >= 12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_disk),
		cmocka_unit_test(test_proc),
		cmocka_unit_test(test_cgroups_of),
		cmocka_unit_test(test_procs_of),
		cmocka_unit_test(test_who_proc_bios),
		cmocka_unit_test(test_slot_and_hash),
		cmocka_unit_test(test_slot_idx),
		cmocka_unit_test(test_split_ops_merge),
		cmocka_unit_test(test_who_pd_merge),
		cmocka_unit_test(test_slot_idx_others),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
