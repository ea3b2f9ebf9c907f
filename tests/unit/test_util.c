/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Unit tests: errno names, number parsing, attach-method names, kallsyms lookup. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <limits.h>
#include <cmocka.h>
#include "libiolayer.h"

static const char *dir = "tests/unit";

static void test_errno_names(void **state)
{
	assert_string_equal(il_errno_name(-12), "ENOMEM");
	assert_string_equal(il_errno_name(12), "ENOMEM");
	assert_string_equal(il_errno_name(-5), "EIO");
	assert_string_equal(il_errno_name(-1), "EPERM");
	assert_string_equal(il_errno_name(100000), "errno 100000");
}

static void test_parse_uint(void **state)
{
	unsigned long long v = 7;

	assert_int_equal(il_parse_uint("10", "interval", 1, UINT_MAX, &v), 0);
	assert_int_equal(v, 10);
	assert_int_equal(il_parse_uint(" 3", "interval", 1, UINT_MAX, &v), 0);
	assert_int_equal(v, 3);
	/* errors leave the value alone */
	v = 7;
	assert_int_equal(il_parse_uint("-1", "interval", 1, UINT_MAX, &v), -1);
	assert_int_equal(il_parse_uint("0", "interval", 1, UINT_MAX, &v), -1);
	assert_int_equal(il_parse_uint("1x", "interval", 1, UINT_MAX, &v), -1);
	assert_int_equal(il_parse_uint("", "interval", 1, UINT_MAX, &v), -1);
	assert_int_equal(il_parse_uint("4294967296", "interval", 1, UINT_MAX, &v), -1);
	assert_int_equal(il_parse_uint("99999999999999999999999", "n", 0, ULLONG_MAX, &v), -1);
	assert_int_equal(v, 7);
}

IL_STRCACHE(names, 8, __u64, 8, 60000000000ULL);
IL_STRCACHE(stale, 8, __u64, 8, 1);

/* il_strcache: a put is found by its key only, cut to the value size; a slot shared by two
 * keys holds the last one put; an answer older than the TTL is not returned. */
static void test_strcache(void **state)
{
	char buf[32];
	__u64 k;
	int hits = 0;

	(void)state;
	k = 7;
	assert_false(il_strcache_get(&names, &k, buf, sizeof(buf)));
	il_strcache_put(&names, &k, "loop0");
	assert_true(il_strcache_get(&names, &k, buf, sizeof(buf)));
	assert_string_equal(buf, "loop0");
	il_strcache_put(&names, &k, "a-long-name");
	assert_true(il_strcache_get(&names, &k, buf, sizeof(buf)));
	assert_string_equal(buf, "a-long-"); /* 8 bytes with the NUL */
	/* 9 keys in 8 slots: at least one slot was taken over, and every key still answered
	 * is answered with its own value */
	for (k = 100; k < 109; k++) {
		char v[8];

		snprintf(v, sizeof(v), "d%llu", (unsigned long long)k);
		il_strcache_put(&names, &k, v);
	}
	for (k = 100; k < 109; k++) {
		char v[8];

		snprintf(v, sizeof(v), "d%llu", (unsigned long long)k);
		if (il_strcache_get(&names, &k, buf, sizeof(buf))) {
			assert_string_equal(buf, v);
			hits++;
		}
	}
	assert_in_range(hits, 1, 8);
	k = 1;
	il_strcache_put(&stale, &k, "old");
	assert_false(il_strcache_get(&stale, &k, buf, sizeof(buf))); /* older than 1 ns */
}

static void test_family_parse(void **state)
{
	enum il_family f;

	assert_int_equal(il_family_parse("fentry", &f), 0);
	assert_int_equal(f, IL_FAM_FENTRY);
	assert_int_equal(il_family_parse("kprobe", &f), 0);
	assert_int_equal(f, IL_FAM_KPROBE);
	assert_int_equal(il_family_parse("tracepoint", &f), 0);
	assert_int_equal(f, IL_FAM_TRACEPOINT);
	assert_int_equal(il_family_parse("auto", &f), 0);
	assert_int_equal(f, IL_FAM_ANY);
	assert_int_equal(il_family_parse("uprobe", &f), -1);
	assert_int_equal(il_method_family(IL_M_RAW_TP), IL_FAM_TRACEPOINT);
	assert_int_equal(il_method_family(IL_M_TP_BTF), IL_FAM_TRACEPOINT);
	assert_string_equal(il_method_name(IL_M_FENTRY), "fentry/fexit");
}

static void test_ksyms(void **state)
{
	char path[512], buf[128];
	struct il_ksyms *ks;

	snprintf(path, sizeof(path), "%s/golden/kallsyms.txt", dir);
	ks = il_ksyms_load(path);
	assert_non_null(ks);
	assert_string_equal(il_ksyms_format(ks, 0xffffffff81001010, buf, sizeof(buf)), "do_one+0x10");
	assert_string_equal(il_ksyms_format(ks, 0xffffffff81001200, buf, sizeof(buf)), "helper_two+0x0");
	assert_string_equal(il_ksyms_format(ks, 0xffffffff81002005, buf, sizeof(buf)), "io_schedule+0x5");
	assert_string_equal(il_ksyms_format(ks, 0xffffffffc0100410, buf, sizeof(buf)),
			    "ext4_sync_file+0x10 [ext4]");
	assert_string_equal(il_ksyms_format(ks, 0x1000, buf, sizeof(buf)), "[unknown]");
	il_ksyms_free(ks);
	assert_null(il_ksyms_load("/nonexistent/kallsyms"));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_errno_names),
		cmocka_unit_test(test_parse_uint),
		cmocka_unit_test(test_strcache),
		cmocka_unit_test(test_family_parse),
		cmocka_unit_test(test_ksyms),
	};
	if (argc > 1)
		dir = argv[1];
	il_log_init("test_util", 0);
	return cmocka_run_group_tests_name("util", tests, NULL, NULL);
}
