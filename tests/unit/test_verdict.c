/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Unit tests: the verdict on made-up layer measurements with a known answer each. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "libiolayer.h"
#include "verdict.h"

#define US 1000ULL
#define MS 1000000ULL

static struct il_layers base(void)
{
	struct il_layers m = { .elapsed_s = 10, .fs_seen = true, .wb_seen = true, .iw_seen = true,
			       .blk_seen = true };

	strcpy(m.disk, "sda");
	return m;
}

static void test_nothing(void **state)
{
	struct il_layers m = base();
	char why[512];

	assert_int_equal(il_verdict(&m, why, sizeof(why)), IL_LAYER_NONE);
	assert_non_null(strstr(why, "no file operations"));
}

/* Case: write+fsync loop, fsync 3 s, block fast, ext4_writepages returns -ENOMEM. */
static void test_writeback_errors(void **state)
{
	struct il_layers m = base();
	char why[512];

	m.ops[FS_OP_FSYNC] = (struct il_lat){ 10, 30000 * MS, 3200 * MS, 2048 * MS, 4096 * MS };
	m.device = (struct il_lat){ 100, 100 * MS, 2 * MS, 1 * MS, 2 * MS };
	m.wb = (struct il_lat){ 500, 0, 0, 0, 0 };
	m.wb_errors = 490;
	m.wb_top_err = -12;
	m.wb_top_err_sync_mode = 1;
	assert_int_equal(il_verdict(&m, why, sizeof(why)), IL_LAYER_WRITEBACK);
	assert_non_null(strstr(why, "-12 ENOMEM with WB_SYNC_ALL"));
}

/* fsync slow, block fast, no writeback error: the filesystem. */
static void test_filesystem(void **state)
{
	struct il_layers m = base();
	char why[512];

	m.ops[FS_OP_WRITE] = (struct il_lat){ 1000, 10 * MS, 20 * US, 16 * US, 32 * US };
	m.ops[FS_OP_FSYNC] = (struct il_lat){ 1000, 8000 * MS, 12 * MS, 8 * MS, 16 * MS };
	m.device = (struct il_lat){ 3000, 100 * MS, 200 * US, 64 * US, 256 * US };
	m.queue = (struct il_lat){ 3000, 10 * MS, 20 * US, 8 * US, 16 * US };
	strcpy(m.iw_top_frame, "jbd2_log_wait_commit");
	assert_int_equal(il_verdict(&m, why, sizeof(why)), IL_LAYER_FILESYSTEM);
	assert_non_null(strstr(why, "fsync takes p99 < 16.00 ms"));
	assert_non_null(strstr(why, "jbd2_log_wait_commit"));
	assert_null(strstr(why, "nothing is slow"));
}

/* sync_file_range slow, block fast: the sync machinery above the block layer, as fsync. */
static void test_sync_range(void **state)
{
	struct il_layers m = base();
	char why[512];

	m.ops[FS_OP_WRITE] = (struct il_lat){ 1000, 10 * MS, 20 * US, 16 * US, 32 * US };
	m.ops[FS_OP_SYNC_RANGE] = (struct il_lat){ 1000, 6000 * MS, 12 * MS, 8 * MS, 16 * MS };
	m.device = (struct il_lat){ 3000, 100 * MS, 200 * US, 64 * US, 256 * US };
	assert_int_equal(il_verdict(&m, why, sizeof(why)), IL_LAYER_FILESYSTEM);
	assert_non_null(strstr(why, "sync_file_range takes p99 < 16.00 ms"));
}

/* Case: a logger saturating the disk: writes wait on the device. */
static void test_device(void **state)
{
	struct il_layers m = base();
	char why[512];

	m.ops[FS_OP_WRITE] = (struct il_lat){ 100, 5000 * MS, 80 * MS, 64 * MS, 128 * MS };
	m.device = (struct il_lat){ 20000, 9900 * MS, 90 * MS, 32 * MS, 128 * MS };
	m.queue = (struct il_lat){ 20000, 10 * MS, 1 * MS, 1 * MS, 2 * MS };
	assert_int_equal(il_verdict(&m, why, sizeof(why)), IL_LAYER_DEVICE);
	assert_non_null(strstr(why, "busy 99%"));
}

/* Requests queue in the OS longer than the device takes: the block queue. */
static void test_queue(void **state)
{
	struct il_layers m = base();
	char why[512];

	m.ops[FS_OP_READ] = (struct il_lat){ 100, 5000 * MS, 80 * MS, 64 * MS, 128 * MS };
	m.device = (struct il_lat){ 20000, 1000 * MS, 2 * MS, 1 * MS, 4 * MS };
	m.queue = (struct il_lat){ 20000, 9000 * MS, 90 * MS, 32 * MS, 64 * MS };
	assert_int_equal(il_verdict(&m, why, sizeof(why)), IL_LAYER_QUEUE);
}

/* Reads served from the page cache: no block request, the syscall/VFS layer. */
static void test_cached(void **state)
{
	struct il_layers m = base();
	char why[512];

	m.ops[FS_OP_READ] = (struct il_lat){ 100000, 500 * MS, 20 * US, 8 * US, 16 * US };
	assert_int_equal(il_verdict(&m, why, sizeof(why)), IL_LAYER_SYSCALL);
	assert_non_null(strstr(why, "nothing is slow"));
}

/* Writers throttled by dirty-page limits. */
static void test_throttled(void **state)
{
	struct il_layers m = base();
	char why[512];

	m.ops[FS_OP_WRITE] = (struct il_lat){ 1000, 9000 * MS, 200 * MS, 16 * MS, 256 * MS };
	m.device = (struct il_lat){ 3000, 100 * MS, 200 * US, 64 * US, 256 * US };
	strcpy(m.iw_top_frame, "balance_dirty_pages");
	assert_int_equal(il_verdict(&m, why, sizeof(why)), IL_LAYER_WRITEBACK);
}

/* Case (issue 11): a cgroup throttle holds dd's direct writes before block_bio_queue; the
 * device is fast. The block layer, before the queue, with the disk, the cgroup and its rule. */
static void test_before_queue(void **state)
{
	struct il_layers m = base();
	char why[1024];

	strcpy(m.disk, "loop3");
	m.ops[FS_OP_WRITE] = (struct il_lat){ 60, 2900 * MS, 110 * MS, 64 * MS, 134 * MS };
	m.device = (struct il_lat){ 60, 4 * MS, 500 * US, 64 * US, 131 * US };
	assert_int_equal(il_verdict(&m, why, sizeof(why)), IL_LAYER_SYSCALL); /* without bios */
	m.before_q = (struct il_lat){ 60, 2890 * MS, 105 * MS, 64 * MS, 134 * MS };
	m.q2g = (struct il_lat){ 60, 1 * MS, 20 * US, 8 * US, 16 * US };
	m.q2c = (struct il_lat){ 60, 5 * MS, 600 * US, 128 * US, 262 * US };
	/* no bio was held (queued by a worker for its submitter): the time before Q is the
	 * submission path's own (the writes' stale starts of the Redis case), not the block
	 * layer's */
	assert_int_equal(il_verdict(&m, why, sizeof(why)), IL_LAYER_SYSCALL);
	m.blk_held = 29;
	strcpy(m.blk_cgroup, "/slow");
	strcpy(m.blk_throttle, "blkio.throttle.write_iops_device 7:3 20");
	assert_int_equal(il_verdict(&m, why, sizeof(why)), IL_LAYER_BLOCK);
	assert_string_equal(il_layer_name(IL_LAYER_BLOCK), "block layer");
	assert_non_null(strstr(why, "bios on loop3 wait p99 < 134.00 ms before the queue"));
	assert_non_null(strstr(why, "cgroup throttle (blk-throttle) of cgroup /slow"));
	assert_non_null(strstr(why, "write_iops_device 7:3 20"));
	/* the same wait without a rule: the cgroup is still named */
	m.blk_throttle[0] = 0;
	assert_int_equal(il_verdict(&m, why, sizeof(why)), IL_LAYER_BLOCK);
	assert_non_null(strstr(why, "most in cgroup /slow"));
	/* the device slower than the wait before Q: the device */
	m.device.total_ns = 3000 * MS;
	assert_int_equal(il_verdict(&m, why, sizeof(why)), IL_LAYER_DEVICE);
}

static void test_fmt(void **state)
{
	char b[32];

	assert_string_equal(il_fmt_ns(850, b, sizeof(b)), "850 ns");
	assert_string_equal(il_fmt_ns(12300, b, sizeof(b)), "12.3 us");
	assert_string_equal(il_fmt_ns(4560000, b, sizeof(b)), "4.56 ms");
	assert_string_equal(il_fmt_ns(1230000000, b, sizeof(b)), "1.23 s");
	assert_string_equal(il_layer_name(IL_LAYER_QUEUE), "block queue");
}

/* An idle machine (the case of `iolayer -d 3` beside a compiler): 40 ms of short calls and
 * 8 requests in 3 s, the disk 0.1 % busy. No layer is blamed, whichever is relatively
 * largest; a process that spends its time in fsync (10 % of it) is not idle. */
static void test_idle(void **state)
{
	struct il_layers m = base();
	char why[512];

	m.elapsed_s = 3;
	m.ops[FS_OP_WRITE] = (struct il_lat){ 400, 30 * MS, 900 * US, 16 * US, 1024 * US };
	m.ops[FS_OP_OPEN] = (struct il_lat){ 300, 10 * MS, 40 * US, 16 * US, 32 * US };
	m.device = (struct il_lat){ 8, 3 * MS, 1 * MS, 256 * US, 1024 * US };
	m.iowait = (struct il_lat){ 2, 4 * MS, 3 * MS, 2 * MS, 4 * MS };
	strcpy(m.iw_top_frame, "blkdev_issue_discard");
	assert_int_equal(il_verdict(&m, why, sizeof(why)), IL_LAYER_NONE);
	assert_string_equal(why, "no layer stands out: file operations took 1.3% of the time, I/O wait "
				 "0.1%, and sda was busy 0.1% of it (the most time: write, 400 calls, p99 < 1.02 ms)");
	m.ops[FS_OP_FSYNC] = (struct il_lat){ 100, 300 * MS, 8 * MS, 2 * MS, 8 * MS };
	assert_int_not_equal(il_verdict(&m, why, sizeof(why)), IL_LAYER_NONE);
}

/* ---- il_verdict_culprit: every layer x culprit case, with made-up process sums ---------- */

#define MB 1000000ULL
#define S 1000000000ULL
#define NOBODY "no traced process took part"

static struct il_who_sum who(__u32 pid, const char *comm, const char *cgroup, const char *file)
{
	struct il_who_sum p = { .pid = pid };

	snprintf(p.comm, sizeof(p.comm), "%s", comm);
	snprintf(p.cgroup, sizeof(p.cgroup), "%s", cgroup);
	snprintf(p.top_file, sizeof(p.top_file), "%s", file);
	return p;
}

/* Four processes, each the heaviest in one layer's terms, and a kernel thread heavier than
 * all of them in every term; 10 s traced, disk loop1. */
static int cast(struct il_who_sum *p)
{
	p[0] = who(100, "reader", "/a", "/data/r");        /* syscall: 0.9 s of reads */
	p[0].op_ns[FS_OP_READ] = 900 * MS;
	p[0].read_bytes = 50 * MB;
	p[1] = who(200, "syncer", "/", "/data/s");         /* filesystem: 2 s of fsync */
	p[1].op_ns[FS_OP_FSYNC] = 2 * S;
	p[1].op_ns[FS_OP_WRITE] = 10 * MS;
	p[1].write_bytes = 4 * MB;
	p[2] = who(300, "waiter", "-", "/data/w");         /* writeback: 3 s of I/O wait + 0.5 s writes */
	p[2].iowait_ns = 3 * S;
	p[2].op_ns[FS_OP_WRITE] = 500 * MS;
	p[2].write_bytes = 1 * MB;
	p[3] = who(400, "blaster", "/b", "/data/b");       /* block: 80 MB sent to the disk */
	p[3].disk_bytes = p[3].bio_bytes = p[3].bio_write_bytes = 80 * MB;
	p[4] = who(500, "jbd2/loop1-8", "/", "");          /* a kernel thread: heavier in everything */
	p[4].kthread = true;
	p[4].iowait_ns = 10 * S;
	p[4].op_ns[FS_OP_FSYNC] = 10 * S;
	p[4].disk_bytes = p[4].bio_bytes = 500 * MB;
	return 5;
}

static void expect(enum il_layer_id l, const struct il_who_sum *p, int n, const char *disk,
		   const char *sentence)
{
	struct il_culprit c;
	char buf[1024];

	il_verdict_culprit(l, p, n, 10, disk, &c);
	il_culprit_sentence(&c, buf, sizeof(buf));
	if (strcmp(buf, sentence))
		fail_msg("layer %s: got \"%s\", expected \"%s\"", il_layer_name(l), buf, sentence);
	assert_int_equal(c.found, strcmp(sentence, NOBODY) != 0);
}

/* The sentence expected for each layer (enum il_layer_id), NONE to DEVICE. */
static void expect_layers(const struct il_who_sum *p, int n, const char *disk,
			  const char *const want[IL_LAYER_DEVICE + 1])
{
	for (int l = IL_LAYER_NONE; l <= IL_LAYER_DEVICE; l++)
		expect(l, p, n, disk, want[l]);
}

/* The right process for each layer, by that layer's time (bytes for the block layers); the
 * kernel thread is never named while a process took part. */
static void test_culprit_each_layer(void **state)
{
	struct il_who_sum p[8];
	int n = cast(p);
	struct il_culprit c;

	static const char *const want[] = {
		[IL_LAYER_NONE] = "waiter (pid 300) writes 0.1 MB/s to /data/w on loop1",
		[IL_LAYER_SYSCALL] = "reader (pid 100, cgroup /a) reads 5.0 MB/s from /data/r on loop1",
		[IL_LAYER_FILESYSTEM] = "syncer (pid 200) writes 0.4 MB/s to /data/s on loop1",
		[IL_LAYER_WRITEBACK] = "waiter (pid 300) writes 0.1 MB/s to /data/w on loop1",
		[IL_LAYER_QUEUE] = "blaster (pid 400, cgroup /b) sends 8.0 MB/s for /data/b on loop1",
		[IL_LAYER_DEVICE] = "blaster (pid 400, cgroup /b) sends 8.0 MB/s for /data/b on loop1",
	};

	expect_layers(p, n, "loop1", want);
	/* the fields behind the sentence */
	il_verdict_culprit(IL_LAYER_DEVICE, p, n, 10, "loop1", &c);
	assert_true(c.found && c.block && c.writes);
	assert_int_equal(c.pid, 400);
	assert_string_equal(c.comm, "blaster");
	assert_string_equal(c.cgroup, "/b");
	assert_string_equal(c.file, "/data/b");
	assert_string_equal(c.disk, "loop1");
	/* order does not matter */
	struct il_who_sum r[8];

	for (int i = 0; i < n; i++)
		r[i] = p[n - 1 - i];
	expect_layers(r, n, "loop1", want);
}

/* A file whose pages a flusher wrote back counts for the processes that dirtied it in the
 * block layers: 100 MB of the syncer's file outweighs the blaster's own 80 MB. */
static void test_culprit_writeback_bytes(void **state)
{
	struct il_who_sum p[8];
	int n = cast(p);

	static const char *const want[] = {
		[IL_LAYER_NONE] = "waiter (pid 300) writes 0.1 MB/s to /data/w on loop1",
		[IL_LAYER_SYSCALL] = "reader (pid 100, cgroup /a) reads 5.0 MB/s from /data/r on loop1",
		[IL_LAYER_FILESYSTEM] = "syncer (pid 200) writes 0.4 MB/s to /data/s on loop1",
		[IL_LAYER_WRITEBACK] = "waiter (pid 300) writes 0.1 MB/s to /data/w on loop1",
		[IL_LAYER_QUEUE] = "syncer (pid 200) sends 10.0 MB/s for /data/s on loop1",
		[IL_LAYER_DEVICE] = "syncer (pid 200) sends 10.0 MB/s for /data/s on loop1",
	};

	p[1].wb_bytes = 100 * MB;
	expect_layers(p, n, "loop1", want);
}

/* Ties in a layer's weight go to the lower pid, whatever the order. */
static void test_culprit_ties(void **state)
{
	static const char *const want[] = {
		[IL_LAYER_NONE] = "five (pid 5) writes 2.0 MB/s to /f5 on sda",
		[IL_LAYER_SYSCALL] = "five (pid 5) writes 2.0 MB/s to /f5 on sda",
		[IL_LAYER_FILESYSTEM] = "five (pid 5) writes 2.0 MB/s to /f5 on sda",
		[IL_LAYER_WRITEBACK] = "five (pid 5) writes 2.0 MB/s to /f5 on sda",
		[IL_LAYER_QUEUE] = "five (pid 5) sends 1.0 MB/s for /f5 on sda",
		[IL_LAYER_DEVICE] = "five (pid 5) sends 1.0 MB/s for /f5 on sda",
	};
	struct il_who_sum p[2];

	for (int order = 0; order < 2; order++) {
		p[order] = who(7, "seven", "/", "/f7");
		p[!order] = who(5, "five", "/", "/f5");
		for (int i = 0; i < 2; i++) {
			p[i].op_ns[FS_OP_READ] = p[i].op_ns[FS_OP_FSYNC] = 1 * S;
			p[i].iowait_ns = 1 * S;
			p[i].disk_bytes = 10 * MB;
			p[i].write_bytes = 20 * MB;
		}
		expect_layers(p, 2, "sda", want);
	}
}

/* No process at all, or none with time (bytes) in the layer: nobody is named. */
static void test_culprit_nobody(void **state)
{
	struct il_who_sum p[1] = { who(9, "idle", "/", "/f") };
	struct il_culprit c;

	static const char *const reads_only[] = {
		[IL_LAYER_NONE] = "idle (pid 9) reads 0.1 MB/s from /f on sda",
		[IL_LAYER_SYSCALL] = "idle (pid 9) reads 0.1 MB/s from /f on sda",
		[IL_LAYER_FILESYSTEM] = NOBODY, [IL_LAYER_WRITEBACK] = NOBODY,
		[IL_LAYER_QUEUE] = NOBODY, [IL_LAYER_DEVICE] = NOBODY,
	};

	for (int l = IL_LAYER_NONE; l <= IL_LAYER_DEVICE; l++) {
		expect(l, NULL, 0, "sda", NOBODY);
		expect(l, p, 1, "sda", NOBODY);
		il_verdict_culprit(l, p, 1, 10, "sda", &c);
		assert_int_equal(c.pid, 0);
		assert_string_equal(c.comm, "");
	}
	/* reads only: named for syscall/VFS, nobody for the filesystem and the block layers */
	p[0].op_ns[FS_OP_READ] = 1 * MS;
	p[0].read_bytes = 1 * MB;
	expect_layers(p, 1, "sda", reads_only);
}

/* A kernel thread alone is named: the flusher or the journal is all there is. */
static void test_culprit_kthread_only(void **state)
{
	struct il_who_sum p[8];

	static const char *const want[] = {
		[IL_LAYER_NONE] = "jbd2/loop1-8 (pid 500) writes 0.0 MB/s on loop1", [IL_LAYER_SYSCALL] = NOBODY,
		[IL_LAYER_FILESYSTEM] = "jbd2/loop1-8 (pid 500) writes 0.0 MB/s on loop1",
		[IL_LAYER_WRITEBACK] = "jbd2/loop1-8 (pid 500) writes 0.0 MB/s on loop1",
		[IL_LAYER_QUEUE] = "jbd2/loop1-8 (pid 500) sends 50.0 MB/s on loop1",
		[IL_LAYER_DEVICE] = "jbd2/loop1-8 (pid 500) sends 50.0 MB/s on loop1",
	};

	cast(p);
	expect_layers(&p[4], 1, "loop1", want);
}

/* The sentence's parts: no disk, no file, no cgroup ("-", "/" or ""), and a zero duration. */
static void test_culprit_sentence_parts(void **state)
{
	struct il_who_sum p[1] = { who(42, "app", "", "") };
	struct il_culprit c;
	char buf[256];

	p[0].op_ns[FS_OP_WRITE] = 1 * S;
	p[0].write_bytes = 3 * MB;
	expect(IL_LAYER_SYSCALL, p, 1, NULL, "app (pid 42) writes 0.3 MB/s");
	expect(IL_LAYER_SYSCALL, p, 1, "", "app (pid 42) writes 0.3 MB/s");
	snprintf(p[0].cgroup, sizeof(p[0].cgroup), "/system.slice/app.service");
	snprintf(p[0].top_file, sizeof(p[0].top_file), "/var/log/app.log");
	expect(IL_LAYER_SYSCALL, p, 1, "vda",
	       "app (pid 42, cgroup /system.slice/app.service) writes 0.3 MB/s to /var/log/app.log on vda");
	il_verdict_culprit(IL_LAYER_SYSCALL, p, 1, 0, "vda", &c);
	assert_true(c.mb_per_s == 0);
	assert_string_equal(il_culprit_sentence(&c, buf, sizeof(buf)),
			    "app (pid 42, cgroup /system.slice/app.service) writes 0.0 MB/s to /var/log/app.log on vda");
	/* cut short, still a string */
	assert_string_equal(il_culprit_sentence(&c, buf, 12), "app (pid 42");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nothing),  cmocka_unit_test(test_writeback_errors),
		cmocka_unit_test(test_filesystem), cmocka_unit_test(test_device),
		cmocka_unit_test(test_queue),    cmocka_unit_test(test_cached),
		cmocka_unit_test(test_throttled), cmocka_unit_test(test_fmt),
		cmocka_unit_test(test_sync_range),
		cmocka_unit_test(test_culprit_each_layer), cmocka_unit_test(test_culprit_writeback_bytes),
		cmocka_unit_test(test_culprit_ties),      cmocka_unit_test(test_culprit_nobody),
		cmocka_unit_test(test_culprit_kthread_only), cmocka_unit_test(test_culprit_sentence_parts),
		cmocka_unit_test(test_before_queue), cmocka_unit_test(test_idle),
	};
	return cmocka_run_group_tests_name("verdict", tests, NULL, NULL);
}
