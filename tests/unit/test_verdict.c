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

static void test_fmt(void **state)
{
	char b[32];

	assert_string_equal(il_fmt_ns(850, b, sizeof(b)), "850 ns");
	assert_string_equal(il_fmt_ns(12300, b, sizeof(b)), "12.3 us");
	assert_string_equal(il_fmt_ns(4560000, b, sizeof(b)), "4.56 ms");
	assert_string_equal(il_fmt_ns(1230000000, b, sizeof(b)), "1.23 s");
	assert_string_equal(il_layer_name(IL_LAYER_QUEUE), "block queue");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nothing),  cmocka_unit_test(test_writeback_errors),
		cmocka_unit_test(test_filesystem), cmocka_unit_test(test_device),
		cmocka_unit_test(test_queue),    cmocka_unit_test(test_cached),
		cmocka_unit_test(test_throttled), cmocka_unit_test(test_fmt),
		cmocka_unit_test(test_sync_range),
	};
	return cmocka_run_group_tests_name("verdict", tests, NULL, NULL);
}
