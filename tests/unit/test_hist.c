/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Unit tests: log2 slots (the function the BPF side runs), histogram text, percentiles, JSON. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "libiolayer.h"

static const char *golden_dir = "tests/unit/golden";

static void test_slot_table(void **state)
{
	static const struct { __u64 v; __u32 slot; } t[] = {
		{ 0, 0 }, { 1, 0 }, { 2, 1 }, { 3, 1 }, { 4, 2 }, { 7, 2 }, { 8, 3 },
		{ 4095, 11 }, { 4096, 12 }, { 8191, 12 }, { 0xffffffffULL, 31 },
		{ 1ULL << 32, 32 }, { (1ULL << 33) - 1, 32 }, { 1ULL << 63, 63 }, { ~0ULL, 63 },
	};
	for (size_t i = 0; i < IL_ARRAY_SIZE(t); i++) {
		assert_int_equal(il_hist_slot(t[i].v, IL_HIST_SLOTS), t[i].slot);
		assert_int_equal(il_log2(t[i].v), t[i].slot);
	}
}

static void test_slot_clamps(void **state)
{
	/* the last slot takes everything above it: nothing is dropped */
	assert_int_equal(il_hist_slot(1ULL << 40, 27), 26);
	assert_int_equal(il_hist_slot(~0ULL, 27), 26);
	assert_int_equal(il_hist_slot(1ULL << 26, 27), 26);
	assert_int_equal(il_hist_slot((1ULL << 26) - 1, 27), 25);
}

static void test_slot_bounds_agree(void **state)
{
	/* every slot's bounds map back to that slot */
	for (int i = 0; i < IL_HIST_SLOTS; i++) {
		__u64 lo, hi;

		il_slot_bounds(i, &lo, &hi);
		assert_int_equal(il_hist_slot(lo, IL_HIST_SLOTS), i);
		assert_int_equal(il_hist_slot(hi, IL_HIST_SLOTS), i);
	}
}

static void test_percentiles(void **state)
{
	__u64 s[IL_HIST_SLOTS] = { 0 };

	assert_int_equal(il_hist_percentile_slot(s, IL_HIST_SLOTS, 50), -1);
	s[12] = 990; /* 4096-8191 */
	s[13] = 9;
	s[20] = 1;
	assert_int_equal(il_hist_total(s, IL_HIST_SLOTS), 1000);
	assert_int_equal(il_hist_percentile_slot(s, IL_HIST_SLOTS, 50), 12);
	assert_int_equal(il_hist_percentile_slot(s, IL_HIST_SLOTS, 99), 12);   /* 990th value */
	assert_int_equal(il_hist_percentile_slot(s, IL_HIST_SLOTS, 99.9), 13); /* 999th value */
	assert_int_equal(il_hist_percentile_slot(s, IL_HIST_SLOTS, 100), 20);
	memset(s, 0, sizeof(s));
	s[0] = 1; /* a single value: every percentile is its slot */
	assert_int_equal(il_hist_percentile_slot(s, IL_HIST_SLOTS, 50), 0);
	assert_int_equal(il_hist_percentile_slot(s, IL_HIST_SLOTS, 99.9), 0);
}

/* Render with fn into memory and compare with golden_dir/name. */
static void assert_golden(const char *name, void (*fn)(FILE *, const __u64 *), const __u64 *s)
{
	char *buf = NULL, path[512], *want;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	long n;

	fn(f, s);
	fclose(f);
	snprintf(path, sizeof(path), "%s/%s", golden_dir, name);
	f = fopen(path, "r");
	if (!f && getenv("IOLAYER_UPDATE_GOLDEN")) {
		f = fopen(path, "w");
		fputs(buf, f);
		fclose(f);
		f = fopen(path, "r");
	}
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	want = calloc(1, n + 1);
	assert_int_equal(fread(want, 1, n, f), (size_t)n);
	fclose(f);
	assert_string_equal(buf, want);
	free(want);
	free(buf);
}

static void render_usecs(FILE *f, const __u64 *s)
{
	il_hist_print(f, s, IL_HIST_SLOTS, "usecs");
	il_hist_print_percentiles(f, s, IL_HIST_SLOTS, "usecs");
}

static void test_golden_text(void **state)
{
	__u64 s[IL_HIST_SLOTS] = { 0 };

	s[3] = 962;
	s[4] = 25;
	s[5] = 10;
	s[6] = 3;
	assert_golden("hist_usecs.txt", render_usecs, s);
}

static void test_golden_wide(void **state)
{
	__u64 s[IL_HIST_SLOTS] = { 0 };

	s[0] = 5;
	s[34] = 1; /* past 2^33: the wide layout */
	assert_golden("hist_wide.txt", render_usecs, s);
}

/* The bars as the classic print_log2_hist() draws them: count * 40 / largest, rounded down. */
static void test_stars_classic(void **state)
{
	__u64 s[IL_HIST_SLOTS] = { 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	char none[48], all[48], most[48];

	s[3] = 55528;
	s[4] = 1;      /* far under 1/40 of the largest: no star */
	s[5] = 55527;  /* 39.9993 stars: 39 */
	il_hist_print(f, s, IL_HIST_SLOTS, "usecs");
	fclose(f);
	snprintf(all, sizeof(all), "|%.40s|", "****************************************");
	snprintf(none, sizeof(none), "|%40s|", "");
	snprintf(most, sizeof(most), "|%.39s |", "****************************************");
	assert_non_null(strstr(buf, "         8 -> 15         : 55528    "));
	assert_non_null(strstr(strstr(buf, ": 55528    "), all));
	assert_non_null(strstr(strstr(buf, ": 1        "), none));
	assert_non_null(strstr(strstr(buf, ": 55527    "), most));
	free(buf);
}

static void test_empty_prints_nothing(void **state)
{
	__u64 s[IL_HIST_SLOTS] = { 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	render_usecs(f, s);
	fclose(f);
	assert_int_equal(len, 0);
	free(buf);
}

static void test_json(void **state)
{
	__u64 s[IL_HIST_SLOTS] = { 0 };
	struct json_object *o, *v, *b, *p;

	s[12] = 3;
	s[13] = 1;
	o = il_hist_json(s, IL_HIST_SLOTS, "usecs");
	assert_true(json_object_object_get_ex(o, "total", &v));
	assert_int_equal(json_object_get_uint64(v), 4);
	assert_true(json_object_object_get_ex(o, "buckets", &b));
	assert_int_equal(json_object_array_length(b), 2);
	v = json_object_array_get_idx(b, 0);
	assert_int_equal(json_object_get_uint64(json_object_object_get(v, "low")), 4096);
	assert_int_equal(json_object_get_uint64(json_object_object_get(v, "high")), 8191);
	assert_int_equal(json_object_get_uint64(json_object_object_get(v, "count")), 3);
	assert_true(json_object_object_get_ex(o, "percentiles", &p));
	v = json_object_object_get(p, "p50");
	assert_int_equal(json_object_get_uint64(json_object_object_get(v, "low")), 4096);
	v = json_object_object_get(p, "p99");
	assert_int_equal(json_object_get_uint64(json_object_object_get(v, "low")), 8192);
	json_object_put(o);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slot_table),
		cmocka_unit_test(test_slot_clamps),
		cmocka_unit_test(test_slot_bounds_agree),
		cmocka_unit_test(test_percentiles),
		cmocka_unit_test(test_golden_text),
		cmocka_unit_test(test_golden_wide),
		cmocka_unit_test(test_stars_classic),
		cmocka_unit_test(test_empty_prints_nothing),
		cmocka_unit_test(test_json),
	};
	if (argc > 1) {
		static char dir[512];

		snprintf(dir, sizeof(dir), "%s/golden", argv[1]);
		golden_dir = dir;
	}
	return cmocka_run_group_tests_name("hist", tests, NULL, NULL);
}
