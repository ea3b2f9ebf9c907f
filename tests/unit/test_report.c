/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Unit tests: the flame graph's tree, SVG and JSON (flame.c); the heat maps from snapshots and
 * the HTML page (report.c), hostile names included. With IL_REPORT_LARGE=PATH it also writes
 * a made-up page of 1,000 stacks and 600 seconds to PATH and each heat map's sum and the
 * stacks' total to PATH.sums ("KEY SUM" lines), which tests/integration/iolayer-html.t opens
 * in a browser.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "libiolayer.h"
#include "flame.h"
#include "report.h"

/* A name that would end a script element, open a comment and inject markup. */
#define HOSTILE "</script><!--<img src=x onerror=alert(1)>&\"'"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;

	assert_non_null(f);
	assert_true(getdelim(&buf, &len, 0, f) > 0);
	fclose(f);
	return buf;
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;

	for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

static struct json_object *child(struct json_object *o, int i)
{
	struct json_object *c;

	assert_true(json_object_object_get_ex(o, "c", &c));
	return json_object_array_get_idx(c, i);
}

static const char *jstr(struct json_object *o, const char *k)
{
	struct json_object *v;

	assert_true(json_object_object_get_ex(o, k, &v));
	return json_object_get_string(v);
}

static __u64 jnum(struct json_object *o, const char *k)
{
	struct json_object *v;

	assert_true(json_object_object_get_ex(o, k, &v));
	return json_object_get_uint64(v);
}

static void test_flame_tree(void **state)
{
	struct il_flame *f = il_flame_new("all");
	const char *path[] = { "x" };
	struct json_object *o, *a;

	assert_int_equal(il_flame_add_folded(f, "a;b;c", 10), 0);
	assert_int_equal(il_flame_add_folded(f, "a;b;d", 5), 0);
	assert_int_equal(il_flame_add_folded(f, "a;e", 1), 0);
	assert_int_equal(il_flame_add(f, path, 1, 2), 0);
	assert_int_equal(il_flame_total(f), 18);
	o = il_flame_json(f);
	assert_string_equal(jstr(o, "n"), "all");
	assert_int_equal(jnum(o, "v"), 18);
	a = child(o, 0);
	assert_string_equal(jstr(a, "n"), "a");
	assert_int_equal(jnum(a, "v"), 16);
	assert_string_equal(jstr(child(a, 0), "n"), "b");
	assert_int_equal(jnum(child(a, 0), "v"), 15);
	assert_int_equal(jnum(child(child(a, 0), 1), "v"), 5); /* d, after c */
	assert_int_equal(jnum(child(a, 1), "v"), 1);
	assert_string_equal(jstr(child(o, 1), "n"), "x");
	assert_int_equal(jnum(child(o, 1), "v"), 2);
	json_object_put(o);
	il_flame_free(f);
}

static void test_flame_svg_escapes(void **state)
{
	struct il_flame *f = il_flame_new("all");
	const char *path[] = { HOSTILE, "ctl\x01" "byte" };
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	assert_int_equal(il_flame_add(f, path, 2, 3000000), 0);
	assert_int_equal(il_flame_svg(out, f, "t<&>", 1000000, "ms"), 0);
	fclose(out);
	assert_null(strstr(buf, "<script"));
	assert_null(strstr(buf, "<img"));
	assert_null(strstr(buf, "\x01"));
	assert_non_null(strstr(buf, "&lt;/script&gt;&lt;!--&lt;img src=x onerror=alert(1)&gt;&amp;&quot;&#39; (3.000 ms, 100.00%)"));
	assert_non_null(strstr(buf, "ctl\\x01byte"));
	assert_non_null(strstr(buf, ">t&lt;&amp;&gt;</text>"));
	assert_int_equal(count(buf, "<rect") - 1, 3); /* the background, then all and 2 frames */
	free(buf);
	il_flame_free(f);
}

/* The cells [[col, slot, n], ...] of layer key in heat JSON h, as "col:slot:n " text. */
static void cells_of(struct json_object *h, const char *key, char *out, size_t len)
{
	struct json_object *l, *c;

	*out = 0;
	assert_true(json_object_object_get_ex(h, "layers", &l));
	for (size_t i = 0; i < json_object_array_length(l); i++) {
		struct json_object *e = json_object_array_get_idx(l, i);

		if (strcmp(jstr(e, "key"), key))
			continue;
		assert_true(json_object_object_get_ex(e, "cells", &c));
		for (size_t k = 0; k < json_object_array_length(c); k++) {
			struct json_object *t = json_object_array_get_idx(c, k);

			snprintf(out + strlen(out), len - strlen(out), "%d:%d:%d ",
				 json_object_get_int(json_object_array_get_idx(t, 0)),
				 json_object_get_int(json_object_array_get_idx(t, 1)),
				 json_object_get_int(json_object_array_get_idx(t, 2)));
		}
		return;
	}
	fail_msg("no layer %s", key);
}

static void test_heat_from_snapshots(void **state)
{
	struct il_snap a = { 0 }, b = { 0 };
	struct il_blk_disk_row da = { .dev = 8 << 20 }, db = { .dev = 8 << 20 };
	struct il_heat *h = il_heat_new();
	struct json_object *j;
	char got[512];

	a.fs[FS_OP_READ].slots[3] = 5;
	a.iw_slots[20] = 1;
	b = a;
	b.fs[FS_OP_READ].slots[3] = 8; /* 3 more in the second column */
	b.fs[FS_OP_READ].slots[4] = 2;
	b.iw_slots[20] = 1;            /* none more: no cell */
	da.st.device_slots[17] = 4;
	db.st.device_slots[17] = 9;
	db.st.phases.ph[BLK_PH_Q2G].slots[10] = 6;
	a.disk = &da;
	a.ndisk = 1;
	b.disk = &db;
	b.ndisk = 1;
	assert_int_equal(il_heat_add(h, &a, 1.0), 0);
	assert_int_equal(il_heat_add(h, &b, 2.0), 0);
	j = il_heat_json(h, 8 << 20, true, true, true);
	assert_string_equal(json_object_to_json_string_ext(
		json_object_object_get(j, "t"), JSON_C_TO_STRING_PLAIN), "[1.000,2.000]");
	cells_of(j, "syscall.read", got, sizeof(got));
	assert_string_equal(got, "0:3:5 1:3:3 1:4:2 ");
	cells_of(j, "iowait", got, sizeof(got));
	assert_string_equal(got, "0:20:1 ");
	cells_of(j, "device", got, sizeof(got));
	assert_string_equal(got, "0:17:4 1:17:5 ");
	cells_of(j, "block_phases.q2g", got, sizeof(got));
	assert_string_equal(got, "1:10:6 ");
	cells_of(j, "syscall.fsync", got, sizeof(got));
	assert_string_equal(got, "");
	json_object_put(j);
	/* another disk's maps are not this one's */
	j = il_heat_json(h, 9 << 20, true, true, true);
	cells_of(j, "device", got, sizeof(got));
	assert_string_equal(got, "");
	json_object_put(j);
	il_heat_free(h);
}

/* The JSON of the page at path: the text of its data element, parsed. */
static struct json_object *page_data(const char *page)
{
	const char *tag = "<script type=\"application/json\" id=\"data\">", *p = strstr(page, tag), *e;
	struct json_tokener *tok;
	struct json_object *o;
	char *text;

	assert_non_null(p);
	p += strlen(tag);
	assert_non_null(e = strstr(p, "</script>"));
	text = strndup(p, e - p);
	/* a flame graph nests two levels per frame: deeper than json-c's default of 32 */
	tok = json_tokener_new_ex(1000);
	o = json_tokener_parse_ex(tok, text, strlen(text));
	json_tokener_free(tok);
	free(text);
	assert_non_null(o);
	return o;
}

static void test_page_escapes(void **state)
{
	char path[] = "/tmp/il-report-XXXXXX";
	struct json_object *d = json_object_new_object(), *back;
	char *page;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	json_object_object_add(d, "name", json_object_new_string(HOSTILE));
	assert_int_equal(il_report_html(path, d), 0);
	page = slurp(path);
	unlink(path);
	/* the page's own two script elements end, and nothing else does */
	assert_int_equal(count(page, "</script>"), 2);
	assert_null(strstr(page, "<img"));
	assert_null(strstr(page, "<!--"));
	assert_null(strstr(page, "@DATA@"));
	assert_null(strstr(page, "/*@JS@*/"));
	assert_null(strstr(page, "http://"));
	assert_null(strstr(page, "https://"));
	back = page_data(page);
	assert_string_equal(jstr(back, "name"), HOSTILE);
	json_object_put(back);
	free(page);
	assert_int_equal(il_report_html("/nonexistent-dir/x.html", json_object_new_object()), -ENOENT);
}

/* ---- a large made-up page ---------------------------------------------------------------- */

#define LARGE_STACKS 1000
#ifndef LARGE_SECONDS
#define LARGE_SECONDS 600
#endif

static const char *const large_keys[] = {
	"syscall.read", "syscall.write", "syscall.open", "syscall.fsync", "syscall.sync_range",
	"iowait", "block_phases.before_q", "block_phases.q2g", "block_phases.g2i", "queue", "device",
};

/* A page of LARGE_STACKS stacks and LARGE_SECONDS columns into path, every layer's sum into
 * sums[] and the stacks' total into *total. */
static void make_large(const char *path, __u64 sums[], __u64 *total)
{
	struct json_object *d = json_object_new_object(), *r = json_object_new_object(),
			   *v = json_object_new_object(), *procs = json_object_new_array(),
			   *files = json_object_new_array(), *split = json_object_new_object(),
			   *rows = json_object_new_array();
	struct il_heat *h = il_heat_new();
	struct il_flame *f = il_flame_new("all");
	char names[16][64];
	const char *frames[16];

	for (size_t k = 0; k < IL_ARRAY_SIZE(large_keys); k++)
		sums[k] = 0;
	for (int c = 0; c < LARGE_SECONDS; c++) {
		for (size_t k = 0; k < IL_ARRAY_SIZE(large_keys); k++) {
			__u64 cells[IL_HIST_SLOTS] = { 0 };

			for (int s = 0; s < 6; s++)
				cells[10 + (c * 7 + k * 3 + s) % 14] += 1 + (c + s + k) % 13;
			if (c % 5 == 4) /* the stall every 5 s */
				cells[28] += 50 + k;
			for (int s = 0; s < IL_HIST_SLOTS; s++)
				sums[k] += cells[s];
			assert_int_equal(il_heat_add_cells(h, large_keys[k], cells, c + 1), 0);
		}
	}
	*total = 0;
	for (int i = 0; i < LARGE_STACKS; i++) {
		int depth = 4 + i % 12;

		for (int k = 0; k < depth; k++) {
			snprintf(names[k], sizeof(names[k]), k == depth - 1 ? "leaf_%d" : "f%d_%d", k == depth - 1 ? i : k, k == depth - 1 ? 0 : (i >> k) % 3);
			frames[k] = names[k];
		}
		if (i == 7)
			frames[depth - 1] = HOSTILE;
		assert_int_equal(il_flame_add(f, frames, depth, 1000 * (__u64)(1 + i % 97)), 0);
		*total += 1000 * (__u64)(1 + i % 97);
	}
	json_object_object_add(r, "duration_s", json_object_new_int(LARGE_SECONDS));
	json_object_object_add(r, "pid", json_object_new_int(0));
	json_object_object_add(v, "layer", json_object_new_string("device"));
	json_object_object_add(v, "reason", json_object_new_string("made-up data: " HOSTILE));
	json_object_object_add(r, "verdict", v);
	for (int i = 0; i < 100; i++) {
		struct json_object *p = json_object_new_object(), *row = json_object_new_object();

		json_object_object_add(p, "pid", json_object_new_int(1000 + i));
		json_object_object_add(p, "comm", json_object_new_string(i ? "worker" : HOSTILE));
		json_object_object_add(p, "cgroup", json_object_new_string(i % 2 ? "/a" : "/b"));
		json_object_object_add(p, "disk_bytes", json_object_new_int(4096 * i));
		json_object_object_add(p, "iowait_ns", json_object_new_int(100000 * i));
		json_object_array_add(procs, p);
		json_object_object_add(row, "pid", json_object_new_int(1000 + i));
		json_object_object_add(row, "op", json_object_new_string("fsync"));
		json_object_object_add(row, "calls", json_object_new_int(i + 1));
		json_object_object_add(row, "on_cpu_us", json_object_new_int(10 * i));
		json_object_object_add(row, "iowait_block_us", json_object_new_int(30 * i));
		json_object_array_add(rows, row);
	}
	for (int i = 0; i < 100; i++) {
		struct json_object *fl = json_object_new_object();

		json_object_object_add(fl, "path", json_object_new_string(i ? "/data/file" : "/data/" HOSTILE));
		json_object_object_add(fl, "fsyncs", json_object_new_int(i));
		json_object_array_add(files, fl);
	}
	json_object_object_add(r, "processes", procs);
	json_object_object_add(r, "files", files);
	json_object_object_add(split, "processes", rows);
	json_object_object_add(d, "report", r);
	json_object_object_add(d, "heat", il_heat_json(h, 0, true, true, true));
	json_object_object_add(d, "flame", il_flame_json(f));
	json_object_object_add(d, "split", split);
	assert_int_equal(il_report_html(path, d), 0);
	il_heat_free(h);
	il_flame_free(f);
}

static void test_large_page(void **state)
{
	const char *out = getenv("IL_REPORT_LARGE");
	char path[512] = "/tmp/il-report-large-XXXXXX", sp[600];
	__u64 sums[IL_ARRAY_SIZE(large_keys)], total;
	struct json_object *d, *heat, *layers, *t;
	char *page;

	if (out) {
		snprintf(path, sizeof(path), "%s", out);
	} else {
		int fd = mkstemp(path);

		assert_true(fd >= 0);
		close(fd);
	}
	make_large(path, sums, &total);
	page = slurp(path);
	d = page_data(page);
	/* every column and every layer made it into the page */
	assert_true(json_object_object_get_ex(d, "heat", &heat));
	assert_true(json_object_object_get_ex(heat, "t", &t));
	assert_int_equal(json_object_array_length(t), LARGE_SECONDS);
	assert_true(json_object_object_get_ex(heat, "layers", &layers));
	assert_int_equal(json_object_array_length(layers), IL_ARRAY_SIZE(large_keys));
	assert_int_equal(jnum(json_object_object_get(d, "flame"), "v"), total);
	json_object_put(d);
	free(page);
	if (out) {
		FILE *f;

		snprintf(sp, sizeof(sp), "%s.sums", path);
		assert_non_null(f = fopen(sp, "w"));
		for (size_t k = 0; k < IL_ARRAY_SIZE(large_keys); k++)
			fprintf(f, "%s %llu\n", large_keys[k], (unsigned long long)sums[k]);
		fprintf(f, "flame %llu\n", (unsigned long long)total);
		fclose(f);
	} else {
		unlink(path);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flame_tree),
		cmocka_unit_test(test_flame_svg_escapes),
		cmocka_unit_test(test_heat_from_snapshots),
		cmocka_unit_test(test_page_escapes),
		cmocka_unit_test(test_large_page),
	};
	return cmocka_run_group_tests_name("report", tests, NULL, NULL);
}
