/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Unit tests: the verdict on made-up layer measurements with a known answer each. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "libiolayer.h"
#include "verdict.h"
#include "measure.h"
#include "whoview.h"

#define US 1000ULL
#define MS 1000000ULL

static struct il_measure base(void)
{
	struct il_measure m = { .elapsed_s = 10, .fs_seen = true, .wb_seen = true, .iw_seen = true,
			       .blk_seen = true };

	strcpy(m.disk, "sda");
	return m;
}

static void test_nothing(void **state)
{
	struct il_measure m = base();
	char why[512];

	assert_int_equal(il_verdict(&m, why, sizeof(why)), IL_WHERE_NONE);
	assert_non_null(strstr(why, "no file operations"));
}

/* Case: write+fsync loop, fsync 3 s, block fast, ext4_writepages returns -ENOMEM. */
static void test_writeback_errors(void **state)
{
	struct il_measure m = base();
	char why[512];

	m.ops[FS_OP_FSYNC] = (struct il_lat){ 10, 30000 * MS, 3200 * MS, 2048 * MS, 4096 * MS };
	m.device = (struct il_lat){ 100, 100 * MS, 2 * MS, 1 * MS, 2 * MS };
	m.wb = (struct il_lat){ 500, 0, 0, 0, 0 };
	m.wb_errors = 490;
	m.wb_top_err = -12;
	m.wb_top_err_sync_mode = 1;
	assert_int_equal(il_verdict(&m, why, sizeof(why)), IL_WHERE_WRITEBACK);
	assert_non_null(strstr(why, "-12 ENOMEM with WB_SYNC_ALL"));
}

/* fsync slow, block fast, no writeback error: the filesystem. */
static void test_filesystem(void **state)
{
	struct il_measure m = base();
	char why[512];

	m.ops[FS_OP_WRITE] = (struct il_lat){ 1000, 10 * MS, 20 * US, 16 * US, 32 * US };
	m.ops[FS_OP_FSYNC] = (struct il_lat){ 1000, 8000 * MS, 12 * MS, 8 * MS, 16 * MS };
	m.device = (struct il_lat){ 3000, 100 * MS, 200 * US, 64 * US, 256 * US };
	m.queue = (struct il_lat){ 3000, 10 * MS, 20 * US, 8 * US, 16 * US };
	strcpy(m.iw_top_frame, "jbd2_log_wait_commit");
	assert_int_equal(il_verdict(&m, why, sizeof(why)), IL_WHERE_FILESYSTEM);
	assert_non_null(strstr(why, "fsync takes p99 < 16.00 ms"));
	assert_non_null(strstr(why, "jbd2_log_wait_commit"));
	assert_null(strstr(why, "nothing is slow"));
}

/* sync_file_range slow, block fast: the sync machinery above the block layer, as fsync. */
static void test_sync_range(void **state)
{
	struct il_measure m = base();
	char why[512];

	m.ops[FS_OP_WRITE] = (struct il_lat){ 1000, 10 * MS, 20 * US, 16 * US, 32 * US };
	m.ops[FS_OP_SYNC_RANGE] = (struct il_lat){ 1000, 6000 * MS, 12 * MS, 8 * MS, 16 * MS };
	m.device = (struct il_lat){ 3000, 100 * MS, 200 * US, 64 * US, 256 * US };
	assert_int_equal(il_verdict(&m, why, sizeof(why)), IL_WHERE_FILESYSTEM);
	assert_non_null(strstr(why, "sync_file_range takes p99 < 16.00 ms"));
}

/* Case: a logger saturating the disk: writes wait on the device. */
/* sync_file_range(SYNC_FILE_RANGE_WRITE) starts writeback and returns before its requests
 * complete (fio --sync_file_range=write:8, a new-user trial): p99 0.5 ms against the
 * device's 2 ms. The filesystem, said as calls that do not wait for the device. */
static void test_sync_range_no_wait(void **state)
{
	struct il_measure m = base();
	char why[768];

	m.ops[FS_OP_WRITE] = (struct il_lat){ 4096, 80 * MS, 20 * US, 16 * US, 32 * US };
	m.ops[FS_OP_SYNC_RANGE] = (struct il_lat){ 511, 200 * MS, 600 * US, 256 * US, 512 * US };
	m.device = (struct il_lat){ 4096, 4000 * MS, 3 * MS, 1 * MS, 2 * MS };
	assert_int_equal(il_verdict(&m, why, sizeof(why)), IL_WHERE_FILESYSTEM);
	assert_non_null(strstr(why, "sync_file_range takes p99 < 512.0 us"));
	assert_non_null(strstr(why, "return before their requests could complete"));
	assert_null(strstr(why, "journal"));
}

static void test_device(void **state)
{
	struct il_measure m = base();
	char why[512];

	m.ops[FS_OP_WRITE] = (struct il_lat){ 100, 5000 * MS, 80 * MS, 64 * MS, 128 * MS };
	m.device = (struct il_lat){ 20000, 9900 * MS, 90 * MS, 32 * MS, 128 * MS };
	m.queue = (struct il_lat){ 20000, 10 * MS, 1 * MS, 1 * MS, 2 * MS };
	assert_int_equal(il_verdict(&m, why, sizeof(why)), IL_WHERE_DEVICE);
	assert_non_null(strstr(why, "busy 99%"));
}

/* Requests queue in the OS longer than the device takes: the block queue. */
static void test_queue(void **state)
{
	struct il_measure m = base();
	char why[512];

	m.ops[FS_OP_READ] = (struct il_lat){ 100, 5000 * MS, 80 * MS, 64 * MS, 128 * MS };
	m.device = (struct il_lat){ 20000, 1000 * MS, 2 * MS, 1 * MS, 4 * MS };
	m.queue = (struct il_lat){ 20000, 9000 * MS, 90 * MS, 32 * MS, 64 * MS };
	assert_int_equal(il_verdict(&m, why, sizeof(why)), IL_WHERE_QUEUE);
}

/* Reads served from the page cache: no block request, the syscall/VFS layer. */
static void test_cached(void **state)
{
	struct il_measure m = base();
	char why[512];

	m.ops[FS_OP_READ] = (struct il_lat){ 100000, 500 * MS, 20 * US, 8 * US, 16 * US };
	assert_int_equal(il_verdict(&m, why, sizeof(why)), IL_WHERE_SYSCALL);
	assert_non_null(strstr(why, "nothing is slow"));
}

/* Writers throttled by dirty-page limits. */
static void test_throttled(void **state)
{
	struct il_measure m = base();
	char why[512];

	m.ops[FS_OP_WRITE] = (struct il_lat){ 1000, 9000 * MS, 200 * MS, 16 * MS, 256 * MS };
	m.device = (struct il_lat){ 3000, 100 * MS, 200 * US, 64 * US, 256 * US };
	strcpy(m.iw_top_frame, "balance_dirty_pages");
	assert_int_equal(il_verdict(&m, why, sizeof(why)), IL_WHERE_WRITEBACK);
}

/* Case (issue 11): a cgroup throttle holds dd's direct writes before block_bio_queue; the
 * device is fast. The block layer, before the queue, with the disk, the cgroup and its rule. */
static void test_before_queue(void **state)
{
	struct il_measure m = base();
	char why[1024];

	strcpy(m.disk, "loop3");
	m.ops[FS_OP_WRITE] = (struct il_lat){ 60, 2900 * MS, 110 * MS, 64 * MS, 134 * MS };
	m.device = (struct il_lat){ 60, 4 * MS, 500 * US, 64 * US, 131 * US };
	assert_int_equal(il_verdict(&m, why, sizeof(why)), IL_WHERE_SYSCALL); /* without bios */
	m.before_q = (struct il_lat){ 60, 2890 * MS, 105 * MS, 64 * MS, 134 * MS };
	m.q2g = (struct il_lat){ 60, 1 * MS, 20 * US, 8 * US, 16 * US };
	m.q2c = (struct il_lat){ 60, 5 * MS, 600 * US, 128 * US, 262 * US };
	/* no bio was held (queued by a worker for its submitter): the time before Q is the
	 * submission path's own (the writes' stale starts of the Redis case), not the block
	 * layer's */
	assert_int_equal(il_verdict(&m, why, sizeof(why)), IL_WHERE_SYSCALL);
	m.blk_held = 29;
	strcpy(m.blk_cgroup, "/slow");
	strcpy(m.blk_throttle, "blkio.throttle.write_iops_device 7:3 20");
	assert_int_equal(il_verdict(&m, why, sizeof(why)), IL_WHERE_BLOCK);
	assert_string_equal(il_where_name(IL_WHERE_BLOCK), "block layer");
	assert_non_null(strstr(why, "bios on loop3 wait p99 < 134.00 ms before the queue"));
	assert_non_null(strstr(why, "cgroup throttle (blk-throttle) of cgroup /slow"));
	assert_non_null(strstr(why, "write_iops_device 7:3 20"));
	/* the same wait without a rule: the cgroup is still named */
	m.blk_throttle[0] = 0;
	assert_int_equal(il_verdict(&m, why, sizeof(why)), IL_WHERE_BLOCK);
	assert_non_null(strstr(why, "most in cgroup /slow"));
	/* the device slower than the wait before Q: the device */
	m.device.total_ns = 3000 * MS;
	assert_int_equal(il_verdict(&m, why, sizeof(why)), IL_WHERE_DEVICE);
}

static void test_fmt(void **state)
{
	char b[32];

	assert_string_equal(il_fmt_ns(850, b, sizeof(b)), "850 ns");
	assert_string_equal(il_fmt_ns(12300, b, sizeof(b)), "12.3 us");
	assert_string_equal(il_fmt_ns(4560000, b, sizeof(b)), "4.56 ms");
	assert_string_equal(il_fmt_ns(1230000000, b, sizeof(b)), "1.23 s");
	assert_string_equal(il_where_name(IL_WHERE_QUEUE), "block queue");
}

/* An idle machine (the case of `iolayer -d 3` beside a compiler): 40 ms of short calls and
 * 8 requests in 3 s, the disk 0.1 % busy. No layer is blamed, whichever is relatively
 * largest; a process that spends its time in fsync (10 % of it) is not idle. */
static void test_idle(void **state)
{
	struct il_measure m = base();
	char why[512];

	m.elapsed_s = 3;
	m.ops[FS_OP_WRITE] = (struct il_lat){ 400, 30 * MS, 900 * US, 16 * US, 1024 * US };
	m.ops[FS_OP_OPEN] = (struct il_lat){ 300, 10 * MS, 40 * US, 16 * US, 32 * US };
	m.device = (struct il_lat){ 8, 3 * MS, 1 * MS, 256 * US, 1024 * US };
	m.iowait = (struct il_lat){ 2, 4 * MS, 3 * MS, 2 * MS, 4 * MS };
	strcpy(m.iw_top_frame, "blkdev_issue_discard");
	assert_int_equal(il_verdict(&m, why, sizeof(why)), IL_WHERE_NONE);
	assert_string_equal(why, "no layer stands out: file operations took 1.3% of the time, I/O wait "
				 "0.1%, and sda was busy 0.1% of it (the most time: write, 400 calls, p99 < 1.02 ms)");
	m.ops[FS_OP_FSYNC] = (struct il_lat){ 100, 300 * MS, 8 * MS, 2 * MS, 8 * MS };
	assert_int_not_equal(il_verdict(&m, why, sizeof(why)), IL_WHERE_NONE);
}

/* ---- il_verdict_culprit: every layer x culprit case, with made-up process sums ---------- */

#define MB (1ULL << 20) /* the tables' and sentences' MB: 1024 KB */
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
	p[0].read_bytes = p[0].top_file_read_bytes = 50 * MB;
	p[1] = who(200, "syncer", "/", "/data/s");         /* filesystem: 2 s of fsync */
	p[1].op_ns[FS_OP_FSYNC] = 2 * S;
	p[1].op_ns[FS_OP_WRITE] = 10 * MS;
	p[1].write_bytes = p[1].top_file_write_bytes = 4 * MB;
	p[2] = who(300, "waiter", "-", "/data/w");         /* writeback: 3 s of I/O wait + 0.5 s writes */
	p[2].iowait_ns = 3 * S;
	p[2].op_ns[FS_OP_WRITE] = 500 * MS;
	p[2].write_bytes = p[2].top_file_write_bytes = 1 * MB;
	p[3] = who(400, "blaster", "/b", "/data/b");       /* block: 80 MB sent to the disk */
	p[3].disk_bytes = p[3].bio_bytes = p[3].bio_write_bytes = 80 * MB;
	p[4] = who(500, "jbd2/loop1-8", "/", "");          /* a kernel thread: heavier in everything */
	p[4].kthread = true;
	p[4].iowait_ns = 10 * S;
	p[4].op_ns[FS_OP_FSYNC] = 10 * S;
	p[4].disk_bytes = p[4].bio_bytes = 500 * MB;
	return 5;
}

static void expect(enum il_where l, const struct il_who_sum *p, int n, const char *disk,
		   const char *sentence)
{
	struct il_culprit c;
	char buf[1024];

	il_verdict_culprit(l, p, n, 10, disk, &c);
	il_culprit_sentence(&c, buf, sizeof(buf));
	if (strcmp(buf, sentence))
		fail_msg("layer %s: got \"%s\", expected \"%s\"", il_where_name(l), buf, sentence);
	assert_int_equal(c.found, strcmp(sentence, NOBODY) != 0);
}

/* The sentence expected for each layer (enum il_where), NONE to DEVICE. */
static void expect_layers(const struct il_who_sum *p, int n, const char *disk,
			  const char *const want[IL_WHERE_DEVICE + 1])
{
	for (int l = IL_WHERE_NONE; l <= IL_WHERE_DEVICE; l++)
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
		[IL_WHERE_NONE] = "waiter (pid 300) writes 102.4 KB/s to /data/w on loop1",
		[IL_WHERE_SYSCALL] = "reader (pid 100, cgroup /a) reads 5.0 MB/s from /data/r on loop1",
		[IL_WHERE_FILESYSTEM] = "syncer (pid 200) writes 409.6 KB/s to /data/s on loop1",
		[IL_WHERE_WRITEBACK] = "waiter (pid 300) writes 102.4 KB/s to /data/w on loop1",
		[IL_WHERE_QUEUE] = "blaster (pid 400, cgroup /b) sends 8.0 MB/s for /data/b on loop1",
		[IL_WHERE_DEVICE] = "blaster (pid 400, cgroup /b) sends 8.0 MB/s for /data/b on loop1",
	};

	expect_layers(p, n, "loop1", want);
	/* the fields behind the sentence */
	il_verdict_culprit(IL_WHERE_DEVICE, p, n, 10, "loop1", &c);
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
		[IL_WHERE_NONE] = "waiter (pid 300) writes 102.4 KB/s to /data/w on loop1",
		[IL_WHERE_SYSCALL] = "reader (pid 100, cgroup /a) reads 5.0 MB/s from /data/r on loop1",
		[IL_WHERE_FILESYSTEM] = "syncer (pid 200) writes 409.6 KB/s to /data/s on loop1",
		[IL_WHERE_WRITEBACK] = "waiter (pid 300) writes 102.4 KB/s to /data/w on loop1",
		[IL_WHERE_QUEUE] = "syncer (pid 200) sends 10.0 MB/s for /data/s on loop1",
		[IL_WHERE_DEVICE] = "syncer (pid 200) sends 10.0 MB/s for /data/s on loop1",
	};

	p[1].wb_bytes = 100 * MB;
	expect_layers(p, n, "loop1", want);
}

/* Ties in a layer's weight go to the lower pid, whatever the order. */
static void test_culprit_ties(void **state)
{
	static const char *const want[] = {
		[IL_WHERE_NONE] = "five (pid 5) writes 2.0 MB/s to /f5 on sda",
		[IL_WHERE_SYSCALL] = "five (pid 5) writes 2.0 MB/s to /f5 on sda",
		[IL_WHERE_FILESYSTEM] = "five (pid 5) writes 2.0 MB/s to /f5 on sda",
		[IL_WHERE_WRITEBACK] = "five (pid 5) writes 2.0 MB/s to /f5 on sda",
		[IL_WHERE_QUEUE] = "five (pid 5) sends 1.0 MB/s for /f5 on sda",
		[IL_WHERE_DEVICE] = "five (pid 5) sends 1.0 MB/s for /f5 on sda",
	};
	struct il_who_sum p[2];

	for (int order = 0; order < 2; order++) {
		p[order] = who(7, "seven", "/", "/f7");
		p[!order] = who(5, "five", "/", "/f5");
		for (int i = 0; i < 2; i++) {
			p[i].op_ns[FS_OP_READ] = p[i].op_ns[FS_OP_FSYNC] = 1 * S;
			p[i].iowait_ns = 1 * S;
			p[i].disk_bytes = 10 * MB;
			p[i].write_bytes = p[i].top_file_write_bytes = 20 * MB;
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
		[IL_WHERE_NONE] = "idle (pid 9) reads 102.4 KB/s from /f on sda",
		[IL_WHERE_SYSCALL] = "idle (pid 9) reads 102.4 KB/s from /f on sda",
		[IL_WHERE_FILESYSTEM] = NOBODY, [IL_WHERE_WRITEBACK] = NOBODY,
		[IL_WHERE_QUEUE] = NOBODY, [IL_WHERE_DEVICE] = NOBODY,
	};

	for (int l = IL_WHERE_NONE; l <= IL_WHERE_DEVICE; l++) {
		expect(l, NULL, 0, "sda", NOBODY);
		expect(l, p, 1, "sda", NOBODY);
		il_verdict_culprit(l, p, 1, 10, "sda", &c);
		assert_int_equal(c.pid, 0);
		assert_string_equal(c.comm, "");
	}
	/* reads only: named for syscall/VFS, nobody for the filesystem and the block layers */
	p[0].op_ns[FS_OP_READ] = 1 * MS;
	p[0].read_bytes = p[0].top_file_read_bytes = 1 * MB;
	expect_layers(p, 1, "sda", reads_only);
}

/* A kernel thread alone is named: the flusher or the journal is all there is. */
static void test_culprit_kthread_only(void **state)
{
	struct il_who_sum p[8];

	static const char *const want[] = {
		/* no bytes through file syscalls: no verb, no "0.0 MB/s" */
		[IL_WHERE_NONE] = "jbd2/loop1-8 (pid 500) on loop1", [IL_WHERE_SYSCALL] = NOBODY,
		[IL_WHERE_FILESYSTEM] = "jbd2/loop1-8 (pid 500) on loop1",
		[IL_WHERE_WRITEBACK] = "jbd2/loop1-8 (pid 500) on loop1",
		[IL_WHERE_QUEUE] = "jbd2/loop1-8 (pid 500) sends 50.0 MB/s on loop1",
		[IL_WHERE_DEVICE] = "jbd2/loop1-8 (pid 500) sends 50.0 MB/s on loop1",
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
	expect(IL_WHERE_SYSCALL, p, 1, NULL, "app (pid 42) writes 307.2 KB/s");
	expect(IL_WHERE_SYSCALL, p, 1, "", "app (pid 42) writes 307.2 KB/s");
	snprintf(p[0].cgroup, sizeof(p[0].cgroup), "/system.slice/app.service");
	snprintf(p[0].top_file, sizeof(p[0].top_file), "/var/log/app.log");
	/* a top file whose own bytes are unknown: where the time went, no "to" */
	expect(IL_WHERE_SYSCALL, p, 1, "vda",
	       "app (pid 42, cgroup /system.slice/app.service) writes 307.2 KB/s (most time on /var/log/app.log) on vda");
	p[0].top_file_write_bytes = 3 * MB;
	expect(IL_WHERE_SYSCALL, p, 1, "vda",
	       "app (pid 42, cgroup /system.slice/app.service) writes 307.2 KB/s to /var/log/app.log on vda");
	il_verdict_culprit(IL_WHERE_SYSCALL, p, 1, 0, "vda", &c);
	assert_true(c.bytes_per_s == 0);
	assert_string_equal(il_culprit_sentence(&c, buf, sizeof(buf)),
			    "app (pid 42, cgroup /system.slice/app.service) writes 0.0 KB/s to /var/log/app.log on vda");
	/* cut short, still a string */
	assert_string_equal(il_culprit_sentence(&c, buf, 12), "app (pid 42");
}

/* Its top file on another disk than the verdict's (a trial: the file on loop2, the block rows
 * of vda, where the process had read its libraries): the sentence puts the file on its own
 * disk; a block verdict, whose bytes are not that file's, leaves the file out. */
static void test_culprit_file_elsewhere(void **state)
{
	struct il_who_sum p[1] = { who(42, "app", "/", "/mnt/t2/shared") };

	p[0].op_ns[FS_OP_FSYNC] = 1 * S;
	p[0].write_bytes = p[0].top_file_write_bytes = 2 * MB;
	p[0].disk_bytes = p[0].bio_bytes = 4 * MB;
	snprintf(p[0].top_file_disk, sizeof(p[0].top_file_disk), "loop2");
	expect(IL_WHERE_FILESYSTEM, p, 1, "vda", "app (pid 42) writes 204.8 KB/s to /mnt/t2/shared on loop2");
	expect(IL_WHERE_DEVICE, p, 1, "vda", "app (pid 42) sends 409.6 KB/s on vda");
	expect(IL_WHERE_FILESYSTEM, p, 1, "loop2", "app (pid 42) writes 204.8 KB/s to /mnt/t2/shared on loop2");
	expect(IL_WHERE_DEVICE, p, 1, "loop2", "app (pid 42) sends 409.6 KB/s for /mnt/t2/shared on loop2");
}

/* ---- the cases of the new user's report (one test each) ---------------------------------- */

/* iolayer -p of a process that does no I/O (a postgres postmaster, sleep): no disk is its
 * (iolayer.c measures none), so the verdict is none, says what -p covers, and names no kernel
 * thread of the disk. */
static void test_pid_no_io(void **state)
{
	struct il_measure m = base();
	struct il_who_sum p[1];
	struct il_culprit c;
	char why[512];

	m.disk[0] = 0;
	m.pid = 17926;
	assert_int_equal(il_verdict(&m, why, sizeof(why)), IL_WHERE_NONE);
	assert_non_null(strstr(why, "process 17926 made no file operations on ext4, xfs or btrfs"));
	assert_non_null(strstr(why, "not its children"));
	assert_non_null(strstr(why, "sent no block requests"));
	/* the journal's thread kept in the view for its bytes on the disk: not named for none */
	p[0] = who(17927, "jbd2/loop0-8", "/", "");
	p[0].kthread = true;
	p[0].disk_bytes = p[0].bio_bytes = 40960;
	il_verdict_culprit(IL_WHERE_NONE, p, 1, 10, "", &c);
	assert_false(c.found);
	/* even with a busy disk of other processes' in m: not this process's */
	m.device = (struct il_lat){ 20000, 9900 * MS, 90 * MS, 32 * MS, 128 * MS };
	assert_int_equal(il_verdict(&m, why, sizeof(why)), IL_WHERE_NONE);
}

/* I/O on tmpfs only (every process): the message says which filesystems are traced. */
static void test_tmpfs_hint(void **state)
{
	struct il_measure m = base();
	char why[512];

	assert_int_equal(il_verdict(&m, why, sizeof(why)), IL_WHERE_NONE);
	assert_non_null(strstr(why, "no file operations on ext4, xfs or btrfs were seen (the filesystems traced)"));
	assert_null(strstr(why, "children"));
}

/* fio's buffered writes (p99 < 4.1 us, 20% of the time) beside a disk busy 0% whose requests
 * take p99 < 131.1 us: a 4 us write did not wait for a 131 us request, and a disk 0% busy is
 * slow for nobody. Not the device; its kernel thread is not named. */
static void test_idle_disk_not_blamed(void **state)
{
	struct il_measure m = base();
	struct il_who_sum p[2];
	struct il_culprit c;
	char why[1024];
	enum il_where l;

	strcpy(m.disk, "loop1");
	m.ops[FS_OP_WRITE] = (struct il_lat){ 1000000, 2000 * MS, 40 * US, 2048, 4096 };
	m.device = (struct il_lat){ 100, 5 * MS, 200 * US, 65536, 131072 };
	m.queue = (struct il_lat){ 100, 100 * US, 5 * US, 2048, 4096 };
	l = il_verdict(&m, why, sizeof(why));
	assert_int_equal(l, IL_WHERE_SYSCALL);
	assert_null(strstr(why, "accounts for"));
	assert_non_null(strstr(why, "in the block layer 0.1% of the time"));
	p[0] = who(22652, "jbd2/loop1-8", "/", "");
	p[0].kthread = true;
	p[0].disk_bytes = p[0].bio_bytes = 4096;
	p[1] = who(22700, "fio", "/", "/mnt/fio.0");
	p[1].op_ns[FS_OP_WRITE] = 2 * S;
	p[1].write_bytes = p[1].top_file_write_bytes = 4000 * MB;
	il_verdict_culprit(l, p, 2, 10, "loop1", &c);
	assert_true(c.found);
	assert_int_equal(c.pid, 22700);
	/* a block verdict: a process with a trivial share of the bytes is not the culprit */
	p[1].disk_bytes = 1024;
	p[0].disk_bytes = 100 * MB;
	il_verdict_culprit(IL_WHERE_DEVICE, p, 2, 10, "loop1", &c);
	assert_int_equal(c.pid, 22652);
	/* no file operation, 30% in I/O wait, the disk idle: not the device either */
	m.ops[FS_OP_WRITE] = (struct il_lat){ 0 };
	m.iowait = (struct il_lat){ 300, 3000 * MS, 20 * MS, 0, 0 };
	assert_int_equal(il_verdict(&m, why, sizeof(why)), IL_WHERE_NONE);
	assert_non_null(strstr(why, "no layer stands out: I/O wait took 30.0%"));
}

/* "nothing is slow in absolute terms" only when every p99 of the table is under 1 ms: not
 * beside an open of p99 < 2.10 ms, nor a device of p99 < 2.10 ms. */
static void test_slow_note_every_p99(void **state)
{
	struct il_measure m = base();
	char why[1024];

	m.ops[FS_OP_WRITE] = (struct il_lat){ 2000, 7 * MS, 45 * US, 4096, 8192 };
	m.ops[FS_OP_FSYNC] = (struct il_lat){ 2000, 2000 * MS, 3 * MS, 131072, 262144 };
	m.device = (struct il_lat){ 10000, 800 * MS, 2 * MS, 8192, 32768 };
	il_verdict(&m, why, sizeof(why));
	assert_non_null(strstr(why, "nothing is slow in absolute terms"));
	m.ops[FS_OP_OPEN] = (struct il_lat){ 1, 1620 * US, 1620 * US, 2097152, 2097152 };
	il_verdict(&m, why, sizeof(why));
	assert_null(strstr(why, "nothing is slow"));
	m.ops[FS_OP_OPEN].count = 0;
	m.device.p99_lt_ns = 2097152;
	il_verdict(&m, why, sizeof(why));
	assert_null(strstr(why, "nothing is slow"));
}

/* A logger that reads 0.6 MB/s from elsewhere and writes its log: the sentence writes to the
 * log (the file's own bytes say which way), at the logger's write rate, in KB/s. */
static void test_culprit_file_way(void **state)
{
	struct il_who_sum p[1] = { who(4052, "wlog", "/", "/mnt/nu/logs/my app log.log") };

	p[0].op_ns[FS_OP_WRITE] = 300 * MS;
	p[0].op_ns[FS_OP_READ] = 100 * MS;
	p[0].read_bytes = 6 * MB;
	p[0].write_bytes = p[0].top_file_write_bytes = 450 * 1024;
	expect(IL_WHERE_SYSCALL, p, 1, "loop0",
	       "wlog (pid 4052) writes 45.0 KB/s to /mnt/nu/logs/my app log.log on loop0");
}

/* A process whose one traced file is on loop0, and which sent 2 MiB itself to loop1 (a
 * block device it writes directly: proc_disks() made loop1 its direct_disk): "sends" its
 * bytes on loop1, its file left out. Without a direct disk, the file's disk as before. */
static void test_culprit_direct(void **state)
{
	struct il_who_sum p[1] = { who(4100, "fio", "/", "/out/fio.json") };

	p[0].op_ns[FS_OP_WRITE] = 300 * MS;
	strcpy(p[0].top_file_disk, "loop0");
	strcpy(p[0].direct_disk, "loop1");
	p[0].disk_bytes = 2 * MB;
	p[0].write_bytes = p[0].top_file_write_bytes = 256 * 1024;
	assert_true(il_culprit_direct(&p[0], "loop1"));
	assert_false(il_culprit_direct(&p[0], "loop0"));
	assert_false(il_culprit_direct(&p[0], ""));
	expect(IL_WHERE_SYSCALL, p, 1, "loop1", "fio (pid 4100) sends 204.8 KB/s on loop1");
	p[0].direct_disk[0] = 0;
	assert_false(il_culprit_direct(&p[0], "loop1"));
	expect(IL_WHERE_SYSCALL, p, 1, "loop1", "fio (pid 4100) writes 25.6 KB/s to /out/fio.json on loop0");
}

/* fsync p99 < 8.39 ms, the device p99 < 1.05 ms, 4.1 us in the OS queue: 1.05 ms does not
 * account for 8.39 ms, so the filesystem. With the time from Q to getrq (p99 < 4.19 ms, wbt)
 * the block layer's p99s make 5.25 ms: the sentence quotes every one and their sum. */
static void test_block_accounts_quoted(void **state)
{
	struct il_measure m = base();
	char why[1024];

	strcpy(m.disk, "loop2");
	m.ops[FS_OP_FSYNC] = (struct il_lat){ 1000, 3000 * MS, 8 * MS, 4194304, 8388608 };
	m.device = (struct il_lat){ 3000, 2000 * MS, 1 * MS, 524288, 1048576 };
	m.queue = (struct il_lat){ 3000, 10 * MS, 4 * US, 2048, 4096 };
	assert_int_equal(il_verdict(&m, why, sizeof(why)), IL_WHERE_FILESYSTEM);
	assert_null(strstr(why, "accounts for"));
	m.q2g = (struct il_lat){ 3000, 3000 * MS, 4 * MS, 2097152, 4194304 };
	m.q2c = (struct il_lat){ 3000, 5000 * MS, 5 * MS, 2097152, 8388608 };
	assert_int_equal(il_verdict(&m, why, sizeof(why)), IL_WHERE_QUEUE);
	assert_non_null(strstr(why, "p99 < 1.05 ms at the device, p99 < 4.1 us queued in the OS "
				    "(insert -> issue), p99 < 4.19 ms from queue to getrq"));
	assert_non_null(strstr(why, "(together p99 < 5.25 ms): the block layer accounts for at least half of it"));
	/* the plug (getrq -> insert) is quoted, not summed: the same verdict and sum */
	m.g2i = (struct il_lat){ 3000, 6000 * MS, 4 * MS, 2097152, 4194304 };
	assert_int_equal(il_verdict(&m, why, sizeof(why)), IL_WHERE_QUEUE);
	assert_non_null(strstr(why, "(together p99 < 5.25 ms; the p99 < 4.19 ms from getrq to insert, in the "
				    "submitter's plug, is not counted: its own batching): the block layer"));
}

/* Rates in the tables' units: KB/s below 1024 KB/s, then MB/s (of 1024 KB). */
static void test_fmt_rate(void **state)
{
	char b[32];
	struct il_who_sum p[1] = { who(77, "logger", "/", "/var/log/l") };

	assert_string_equal(il_fmt_rate(46080, b, sizeof(b)), "45.0 KB/s");
	assert_string_equal(il_fmt_rate(0, b, sizeof(b)), "0.0 KB/s");
	assert_string_equal(il_fmt_rate(3 * 1048576.0, b, sizeof(b)), "3.0 MB/s");
	p[0].op_ns[FS_OP_WRITE] = 1 * S;
	p[0].write_bytes = p[0].top_file_write_bytes = 450 * 1024;
	expect(IL_WHERE_SYSCALL, p, 1, "sda", "logger (pid 77) writes 45.0 KB/s to /var/log/l on sda");
}

/* /verdict and --json: duration_s to the millisecond; verdict.who, a sentence, carries the
 * comm escaped as the text does (process.comm_b64 keeps the bytes). */
static void test_verdict_json(void **state)
{
	struct il_who_sum p[1] = { who(31337, "a\x1b[2Jb\nc", "/", "/tmp/f") };
	struct il_window w = { .m = { .elapsed_s = 10, .disk = "sda" } };
	struct il_verdict vd = { .d = { .where = IL_WHERE_SYSCALL }, .why = "why" };
	struct json_object *o, *v;

	o = il_json_seconds(7.9964545549999997);
	assert_string_equal(json_object_to_json_string(o), "7.996");
	json_object_put(o);
	p[0].op_ns[FS_OP_WRITE] = 1 * S;
	p[0].write_bytes = p[0].top_file_write_bytes = 2 * MB;
	il_verdict_culprit(IL_WHERE_SYSCALL, p, 1, 10, "sda", &vd.c);
	o = il_window_json(&w, &vd);
	v = json_object_object_get(o, "verdict");
	assert_string_equal(json_object_get_string(json_object_object_get(v, "who")),
			    "a\\x1b[2Jb\\nc (pid 31337) writes 204.8 KB/s to /tmp/f on sda");
	assert_string_equal(json_object_get_string(json_object_object_get(v, "layer")), "syscall/VFS");
	assert_string_equal(json_object_get_string(json_object_object_get(v, "disk")), "sda");
	json_object_put(o);
}

/* A latency's JSON: the percentiles of a histogram, null without one (writeback and I/O wait
 * keep none), never a 0 that reads as "under 0 ns". */
static void test_lat_json(void **state)
{
	__u64 slots[IL_HIST_SLOTS] = { 0 };
	struct json_object *o;
	struct il_lat l;

	(void)state;
	il_lat_from_hist(&l, 3, 3000, 1500, NULL);
	o = il_lat_json(&l);
	assert_string_equal(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
			    "{\"count\":3,\"total_ns\":3000,\"max_ns\":1500,\"p50_lt_ns\":null,"
			    "\"p99_lt_ns\":null}");
	json_object_put(o);
	slots[10] = 2; /* [1024, 2048) ns */
	slots[12] = 1; /* [4096, 8192) ns */
	il_lat_from_hist(&l, 3, 9000, 5000, slots);
	o = il_lat_json(&l);
	assert_int_equal(json_object_get_uint64(json_object_object_get(o, "p50_lt_ns")), 2048);
	assert_int_equal(json_object_get_uint64(json_object_object_get(o, "p99_lt_ns")), 8192);
	json_object_put(o);
}

/* The reason's clauses: split at "; " and ": ", never inside parentheses. */
static void test_why_clauses(void **state)
{
	const char *why = "write takes p99 < 1 ms and requests (together p99 < 2 ms; the plug: 1 us) "
			  "wait: the block layer accounts for all of it (busy 100%); most I/O-wait "
			  "time is under io_schedule", *c;
	const char *want[] = { "write takes p99 < 1 ms and requests (together p99 < 2 ms; the plug: "
			       "1 us) wait", "the block layer accounts for all of it (busy 100%)",
			       "most I/O-wait time is under io_schedule" };
	size_t n;
	int k = 0;

	(void)state;
	while ((c = il_why_clause(&why, &n))) {
		assert_true(k < 3);
		assert_int_equal(n, strlen(want[k]));
		assert_memory_equal(c, want[k], n);
		k++;
	}
	assert_int_equal(k, 3);
	why = "one clause (a: b; c)";
	assert_non_null(c = il_why_clause(&why, &n));
	assert_int_equal(n, strlen("one clause (a: b; c)"));
	assert_null(il_why_clause(&why, &n));
	why = "";
	assert_null(il_why_clause(&why, &n));
}

/* The processes table of view v with top rows (il_who_view_print, 10 s), as a string to free. */
static char *table_of(const struct il_who_view *v, int top)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	il_who_view_print(f, v, 10, top);
	fclose(f);
	return out;
}

/* The processes table ranks by time in file operations and I/O wait; a process whose disk load
 * no call timed (Linux AIO) comes after the rows, when it sent more than any of them. */
static void test_table_heavy_submitter(void **state)
{
	struct il_who_sum p[3] = { { .pid = 10, .iowait_ns = 500 * MS, .bio_bytes = 10 << 10 },
				   { .pid = 20, .iowait_ns = 400 * MS, .bio_bytes = 20 << 10 },
				   { .pid = 30, .bio_bytes = 1300 << 20 } };
	struct il_who_view v = { .procs = p, .nprocs = 3 };
	char *out;

	(void)state;
	strcpy(p[0].comm, "logger");
	strcpy(p[1].comm, "sync");
	strcpy(p[2].comm, "fio");
	out = table_of(&v, 2);
	assert_non_null(strstr(out, "(and the process that sent the most to disk, below the top 2 by time:)\n30 "));
	free(out);
	/* one shown sent as much: nothing more */
	p[2].bio_bytes = 15 << 10;
	out = table_of(&v, 2);
	assert_null(strstr(out, "sent the most to disk"));
	assert_null(strstr(out, "\n30 "));
	free(out);
	/* all shown (--top 0): nothing more */
	p[2].bio_bytes = 1300 << 20;
	out = table_of(&v, 0);
	assert_null(strstr(out, "sent the most to disk"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nothing),  cmocka_unit_test(test_writeback_errors),
		cmocka_unit_test(test_filesystem), cmocka_unit_test(test_device),
		cmocka_unit_test(test_queue),    cmocka_unit_test(test_cached),
		cmocka_unit_test(test_throttled), cmocka_unit_test(test_fmt),
		cmocka_unit_test(test_sync_range),
		cmocka_unit_test(test_sync_range_no_wait),
		cmocka_unit_test(test_culprit_each_layer), cmocka_unit_test(test_culprit_writeback_bytes),
		cmocka_unit_test(test_culprit_ties),      cmocka_unit_test(test_culprit_nobody),
		cmocka_unit_test(test_culprit_kthread_only), cmocka_unit_test(test_culprit_sentence_parts),
		cmocka_unit_test(test_culprit_file_elsewhere),
		cmocka_unit_test(test_before_queue), cmocka_unit_test(test_idle),
		cmocka_unit_test(test_pid_no_io), cmocka_unit_test(test_tmpfs_hint),
		cmocka_unit_test(test_idle_disk_not_blamed), cmocka_unit_test(test_slow_note_every_p99),
		cmocka_unit_test(test_culprit_file_way), cmocka_unit_test(test_culprit_direct), cmocka_unit_test(test_block_accounts_quoted),
		cmocka_unit_test(test_fmt_rate), cmocka_unit_test(test_verdict_json),
		cmocka_unit_test(test_lat_json), cmocka_unit_test(test_why_clauses),
		cmocka_unit_test(test_table_heavy_submitter),
	};
	return cmocka_run_group_tests_name("verdict", tests, NULL, NULL);
}
