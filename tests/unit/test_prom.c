/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Unit tests: the Prometheus / OpenMetrics exposition of made-up numbers, to the byte. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "prom.h"
#include "lib/shared.h"

/* Run fn on an exposition in memory; the text it wrote (free it). */
static char *expose(bool om, void (*fn)(struct il_prom *p))
{
	struct il_prom p;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	il_prom_init(&p, f, om);
	fn(&p);
	assert_int_equal(il_prom_finish(&p), 0);
	fclose(f);
	return buf;
}

/* A histogram: 1 value below the first bucket (slot 3: 8..15 ns), 2 in slot 8 (256..511 ns),
 * 1 in slot 10 (1024..2047 ns), 1 above the last bucket (slot 40: ~18 min); 1.23456789 s in
 * all. Buckets are cumulative, le is (2^(i+1) - 1) ns in seconds, +Inf and _count hold all 5. */
static void one_hist(struct il_prom *p)
{
	__u64 slots[IL_HIST_SLOTS] = { [3] = 1, [8] = 2, [10] = 1, [40] = 1 };

	il_prom_family(p, "x_seconds", IL_PROM_HISTOGRAM, "seconds", "Made up.");
	il_prom_hist(p, (const char *[]){ "op", "fsync", "disk", "loop0", NULL }, slots, 1234567890);
}

#define L "op=\"fsync\",disk=\"loop0\""
static const char hist_body[] =
	"x_seconds_bucket{" L ",le=\"0.000000255\"} 1\n"
	"x_seconds_bucket{" L ",le=\"0.000000511\"} 3\n"
	"x_seconds_bucket{" L ",le=\"0.000001023\"} 3\n"
	"x_seconds_bucket{" L ",le=\"0.000002047\"} 4\n"
	"x_seconds_bucket{" L ",le=\"0.000004095\"} 4\n"
	"x_seconds_bucket{" L ",le=\"0.000008191\"} 4\n"
	"x_seconds_bucket{" L ",le=\"0.000016383\"} 4\n"
	"x_seconds_bucket{" L ",le=\"0.000032767\"} 4\n"
	"x_seconds_bucket{" L ",le=\"0.000065535\"} 4\n"
	"x_seconds_bucket{" L ",le=\"0.000131071\"} 4\n"
	"x_seconds_bucket{" L ",le=\"0.000262143\"} 4\n"
	"x_seconds_bucket{" L ",le=\"0.000524287\"} 4\n"
	"x_seconds_bucket{" L ",le=\"0.001048575\"} 4\n"
	"x_seconds_bucket{" L ",le=\"0.002097151\"} 4\n"
	"x_seconds_bucket{" L ",le=\"0.004194303\"} 4\n"
	"x_seconds_bucket{" L ",le=\"0.008388607\"} 4\n"
	"x_seconds_bucket{" L ",le=\"0.016777215\"} 4\n"
	"x_seconds_bucket{" L ",le=\"0.033554431\"} 4\n"
	"x_seconds_bucket{" L ",le=\"0.067108863\"} 4\n"
	"x_seconds_bucket{" L ",le=\"0.134217727\"} 4\n"
	"x_seconds_bucket{" L ",le=\"0.268435455\"} 4\n"
	"x_seconds_bucket{" L ",le=\"0.536870911\"} 4\n"
	"x_seconds_bucket{" L ",le=\"1.073741823\"} 4\n"
	"x_seconds_bucket{" L ",le=\"2.147483647\"} 4\n"
	"x_seconds_bucket{" L ",le=\"4.294967295\"} 4\n"
	"x_seconds_bucket{" L ",le=\"8.589934591\"} 4\n"
	"x_seconds_bucket{" L ",le=\"17.179869183\"} 4\n"
	"x_seconds_bucket{" L ",le=\"34.359738367\"} 4\n"
	"x_seconds_bucket{" L ",le=\"68.719476735\"} 4\n"
	"x_seconds_bucket{" L ",le=\"+Inf\"} 5\n"
	"x_seconds_sum{" L "} 1.23456789\n"
	"x_seconds_count{" L "} 5\n";

static void test_histogram_text(void **state)
{
	char *got = expose(false, one_hist);
	char want[8192];

	snprintf(want, sizeof(want), "# HELP x_seconds Made up.\n# TYPE x_seconds histogram\n%s", hist_body);
	assert_string_equal(got, want);
	free(got);
}

static void test_histogram_openmetrics(void **state)
{
	char *got = expose(true, one_hist);
	char want[8192];

	snprintf(want, sizeof(want),
		 "# HELP x_seconds Made up.\n# TYPE x_seconds histogram\n# UNIT x_seconds seconds\n%s# EOF\n",
		 hist_body);
	assert_string_equal(got, want);
	free(got);
}

/* An empty histogram still has every bucket, at 0, so a series never comes and goes. */
static void empty_hist(struct il_prom *p)
{
	__u64 slots[IL_HIST_SLOTS] = { 0 };

	il_prom_family(p, "e_seconds", IL_PROM_HISTOGRAM, NULL, "Empty.");
	il_prom_hist(p, NULL, slots, 0);
}

static void test_histogram_empty(void **state)
{
	char *got = expose(false, empty_hist);

	assert_non_null(strstr(got, "\ne_seconds_bucket{le=\"0.000000255\"} 0\n"));
	assert_non_null(strstr(got, "\ne_seconds_bucket{le=\"+Inf\"} 0\ne_seconds_sum 0\ne_seconds_count 0\n"));
	free(got);
}

/* Counters, info and summaries: 0.0.4 names the sample in TYPE, OpenMetrics the family. */
static void kinds(struct il_prom *p)
{
	il_prom_family(p, "t", IL_PROM_INFO, NULL, "Info.");
	il_prom_value(p, (const char *[]){ "version", "1.0", NULL }, 7);
	il_prom_family(p, "t_bytes", IL_PROM_COUNTER, "bytes", "Bytes.");
	il_prom_value(p, (const char *[]){ "disk", "sda", NULL }, 18446744073709551615ULL);
	il_prom_family(p, "t_wait_seconds", IL_PROM_SUMMARY, "seconds", "Waits.");
	il_prom_summary(p, NULL, 3, 1500000000);
	il_prom_family(p, "t_g", IL_PROM_GAUGE, NULL, "A gauge.");
	il_prom_value(p, NULL, 0);
}

static void test_kinds(void **state)
{
	static const struct { bool om; const char *want; } t[] = {
		{ false,
		  "# HELP t_info Info.\n# TYPE t_info gauge\nt_info{version=\"1.0\"} 1\n"
		  "# HELP t_bytes_total Bytes.\n# TYPE t_bytes_total counter\n"
		  "t_bytes_total{disk=\"sda\"} 18446744073709551615\n"
		  "# HELP t_wait_seconds Waits.\n# TYPE t_wait_seconds summary\n"
		  "t_wait_seconds_sum 1.5\nt_wait_seconds_count 3\n"
		  "# HELP t_g A gauge.\n# TYPE t_g gauge\nt_g 0\n" },
		{ true,
		  "# HELP t Info.\n# TYPE t info\nt_info{version=\"1.0\"} 1\n"
		  "# HELP t_bytes Bytes.\n# TYPE t_bytes counter\n# UNIT t_bytes bytes\n"
		  "t_bytes_total{disk=\"sda\"} 18446744073709551615\n"
		  "# HELP t_wait_seconds Waits.\n# TYPE t_wait_seconds summary\n# UNIT t_wait_seconds seconds\n"
		  "t_wait_seconds_sum 1.5\nt_wait_seconds_count 3\n"
		  "# HELP t_g A gauge.\n# TYPE t_g gauge\nt_g 0\n"
		  "# EOF\n" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char *got = expose(t[i].om, kinds);

		assert_string_equal(got, t[i].want);
		free(got);
	}
}

static void test_seconds(void **state)
{
	static const struct { __u64 ns; const char *s; } t[] = {
		{ 0, "0" }, { 1, "0.000000001" }, { 255, "0.000000255" }, { 1000, "0.000001" },
		{ 1500000000, "1.5" }, { 2000000000, "2" }, { 68719476735ULL, "68.719476735" },
		{ ~0ULL, "18446744073.709551615" },
	};
	char buf[32];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		assert_string_equal(il_prom_seconds(t[i].ns, buf, sizeof(buf)), t[i].s);
}

/* Hostile disk and comm names: nothing a name holds can end the value, add a label, break the
 * line or put a control byte or invalid UTF-8 in the output. */
static const struct { const char *name, *label; } hostile[] = {
	/* quote, backslash, newline, ESC, a byte that is not UTF-8: the text form is
	 * sd"a\\\n\x1b\xff, then \ and " are escaped */
	{ "sd\"a\\\n\x1b\xff", "sd\\\"a\\\\\\\\\\\\n\\\\x1b\\\\xff" },
	/* an attempt to close the value and add a label */
	{ "evil\",pid=\"1", "evil\\\",pid=\\\"1" },
	/* a label set and a line of its own */
	{ "x\"} 1\nfake_metric 2", "x\\\"} 1\\\\nfake_metric 2" },
	/* valid UTF-8 passes as it is; C1 controls do not */
	{ "d\xc3\xa9j\xc3\xa0 \xc2\x9b", "d\xc3\xa9j\xc3\xa0 \\\\xc2\\\\x9b" },
	{ "", "" },
};

static void test_hostile_labels(void **state)
{
	char buf[2 * IL_PROM_LABEL_MAX + 1];

	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++)
		assert_string_equal(il_prom_label_value(hostile[i].name, buf, sizeof(buf)), hostile[i].label);
}

static void hostile_sample(struct il_prom *p)
{
	il_prom_family(p, "h", IL_PROM_COUNTER, NULL, "Hostile.");
	il_prom_value(p, (const char *[]){ "comm", "x\"} 1\nfake_metric 2", "disk", "sd\"a\\\n\x1b\xff", NULL }, 1);
}

static void test_hostile_sample_line(void **state)
{
	char *got = expose(false, hostile_sample);
	const char *line = strstr(got, "h_total{");

	assert_non_null(line);
	assert_string_equal(line, "h_total{comm=\"x\\\"} 1\\\\nfake_metric 2\",disk=\"sd\\\"a\\\\\\\\\\\\n\\\\x1b\\\\xff\"} 1\n");
	for (const unsigned char *c = (const unsigned char *)got; *c; c++)
		assert_true(*c == '\n' || (*c >= 0x20 && *c < 0x7f));
	free(got);
}

/* A long name is cut at IL_PROM_LABEL_MAX bytes, ending in "...", and never inside an
 * escape. */
static void test_label_cut(void **state)
{
	char name[200], buf[2 * IL_PROM_LABEL_MAX + 1];

	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	il_prom_label_value(name, buf, sizeof(buf));
	assert_int_equal(strlen(buf), IL_PROM_LABEL_MAX);
	assert_string_equal(buf + IL_PROM_LABEL_MAX - 3, "...");
	memset(name, '"', sizeof(name) - 1);
	il_prom_label_value(name, buf, sizeof(buf));
	for (size_t i = 0; buf[i] && buf[i] != '.'; i += 2)
		assert_memory_equal(buf + i, "\\\"", 2);
}

static void test_accept(void **state)
{
	static const struct { const char *accept; bool om; } t[] = {
		{ NULL, false },
		{ "", false },
		{ "*/*", false },
		{ "text/plain", false },
		{ "application/openmetrics-text", true },
		{ "Application/OpenMetrics-Text; version=1.0.0; charset=utf-8", true },
		/* what Prometheus 2.42 sends */
		{ "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
		  "text/plain;version=0.0.4;q=0.5,*/*;q=0.1", true },
		{ "application/openmetrics-text;q=0", false },
		{ "text/plain;q=1, application/openmetrics-text;q=0.5", false },
		{ "text/plain;q=0.2 , application/openmetrics-text ; q=0.9", true },
		{ "application/openmetrics-textx", false },
		{ ",,;;q=,", false },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		print_message("%s\n", t[i].accept ? t[i].accept : "(null)");
		assert_int_equal(il_prom_wants_openmetrics(t[i].accept), t[i].om);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_histogram_text),
		cmocka_unit_test(test_histogram_openmetrics),
		cmocka_unit_test(test_histogram_empty),
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_seconds),
		cmocka_unit_test(test_hostile_labels),
		cmocka_unit_test(test_hostile_sample_line),
		cmocka_unit_test(test_label_cut),
		cmocka_unit_test(test_accept),
	};

	return cmocka_run_group_tests_name("prom", tests, NULL, NULL);
}
