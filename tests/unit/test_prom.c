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
	il_prom_gauge(p, (const char *[]){ "culprit", "d\"d\n", NULL }, 0.30654);
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
		  "# HELP t_g A gauge.\n# TYPE t_g gauge\nt_g 0\nt_g{culprit=\"d\\\"d\\\\n\"} 0.3065\n" },
		{ true,
		  "# HELP t Info.\n# TYPE t info\nt_info{version=\"1.0\"} 1\n"
		  "# HELP t_bytes Bytes.\n# TYPE t_bytes counter\n# UNIT t_bytes bytes\n"
		  "t_bytes_total{disk=\"sda\"} 18446744073709551615\n"
		  "# HELP t_wait_seconds Waits.\n# TYPE t_wait_seconds summary\n# UNIT t_wait_seconds seconds\n"
		  "t_wait_seconds_sum 1.5\nt_wait_seconds_count 3\n"
		  "# HELP t_g A gauge.\n# TYPE t_g gauge\nt_g 0\nt_g{culprit=\"d\\\"d\\\\n\"} 0.3065\n"
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

/* ---- the top processes and files ----------------------------------------------------- */

#define S 1000000000ULL

/* Three processes, in the view's order (time since start): fsync_loop (4 s of file operations
 * and I/O wait), jbd2 (0.25 s of I/O wait), cat (1 us). */
static void three_procs(struct il_who_sum p[3])
{
	memset(p, 0, 3 * sizeof(*p));
	p[0].pid = 4242;
	strcpy(p[0].comm, "fsync_loop");
	strcpy(p[0].cgroup, "/user.slice");
	p[0].op_ns[FS_OP_WRITE] = S / 2;
	p[0].op_ns[FS_OP_FSYNC] = 2 * S;
	p[0].op_count[FS_OP_WRITE] = 500;
	p[0].op_count[FS_OP_FSYNC] = 500;
	p[0].iowait_ns = 3 * S / 2;
	p[0].write_bytes = 2048000;
	p[0].bio_bytes = p[0].bio_write_bytes = 4096000;
	p[1].pid = 17;
	strcpy(p[1].comm, "jbd2/loop0-8");
	strcpy(p[1].cgroup, "/");
	p[1].kthread = true;
	p[1].iowait_ns = S / 4;
	p[1].bio_bytes = p[1].bio_write_bytes = 65536;
	p[2].pid = 99;
	strcpy(p[2].comm, "cat");
	strcpy(p[2].cgroup, "/");
	p[2].op_ns[FS_OP_READ] = 1000;
	p[2].op_count[FS_OP_READ] = 1;
	p[2].read_bytes = 10;
	p[2].bio_bytes = 8192;
}

/* A path with a quote, backslashes, a newline and two 0xff bytes. Its text form is
 * /mnt/a"b\\c\nd\xff\xff.log (a backslash doubled; \n and \xff with one backslash each), then
 * every \ and " is escaped for the format. */
#define HOSTILE_PATH "/mnt/a\"b\\c\nd\xff\xff.log"
#define HOSTILE_LABEL "/mnt/a\\\"b\\\\\\\\c\\\\nd\\\\xff\\\\xff.log"

/* Three files: the hostile one (2.5 s), a path of 511 bytes (the longest the view keeps),
 * /x (10 ns). */
static void three_files(struct il_who_file_sum f[3])
{
	memset(f, 0, 3 * sizeof(*f));
	f[0].k.dev = 7 << 20;
	f[0].k.ino = 12;
	strcpy(f[0].path, HOSTILE_PATH);
	f[0].op_ns = 5 * S / 2;
	f[0].fsyncs = 500;
	f[1].sync_ranges = 64;
	f[0].write_bytes = 2048000;
	f[0].bio_write_bytes = 4096000;
	f[1].k.dev = 7 << 20;
	f[1].k.ino = 13;
	f[1].path[0] = '/';
	memset(f[1].path + 1, 'd', sizeof(f[1].path) - 2);
	f[1].op_ns = S;
	f[1].read_bytes = 4096;
	f[1].bio_read_bytes = 4096;
	f[2].k.dev = 8 << 20 | 1;
	f[2].k.ino = 2;
	strcpy(f[2].path, "/x");
	f[2].op_ns = 10;
	f[2].fsyncs = 1;
}

static struct il_who_sum procs[3];
static struct il_who_file_sum files[3];
static struct il_who_view view;
static struct il_prom_top top;
static unsigned long long now_ns;

static int top_setup(void **state)
{
	three_procs(procs);
	three_files(files);
	view = (struct il_who_view){ procs, 3, files, 3, { 0 } };
	il_prom_top_init(&top, 2);
	now_ns = 1000 * S;
	return 0;
}

static int top_teardown(void **state)
{
	il_prom_top_free(&top);
	return 0;
}

static void who(struct il_prom *p)
{
	il_prom_who(p, &top, &view, now_ns);
}

#define P0 "pid=\"4242\",comm=\"fsync_loop\",cgroup=\"/user.slice\",container_id=\"\",pod_uid=\"\",unit=\"user.slice\""
#define P1 "pid=\"17\",comm=\"jbd2/loop0-8\",cgroup=\"/\",container_id=\"\",pod_uid=\"\",unit=\"\""
#define P2 "pid=\"99\",comm=\"cat\",cgroup=\"/\",container_id=\"\",pod_uid=\"\",unit=\"\""
#define PO "pid=\"other\",comm=\"other\",cgroup=\"other\",container_id=\"other\",pod_uid=\"other\",unit=\"other\""
#define OPS(fam, who, r, w, o, f, s) \
	fam "{" who ",op=\"read\"} " r "\n" fam "{" who ",op=\"write\"} " w "\n" \
	fam "{" who ",op=\"open\"} " o "\n" fam "{" who ",op=\"fsync\"} " f "\n" \
	fam "{" who ",op=\"sync_range\"} " s "\n"
#define DIRS(fam, who, r, w) fam "{" who ",dir=\"read\"} " r "\n" fam "{" who ",dir=\"write\"} " w "\n"
/* the 511-byte path cut at 256 bytes: "/", 252 d, "..." */
#define D4 "dddd"
#define D16 D4 D4 D4 D4
#define D64 D16 D16 D16 D16
#define LONG "/" D64 D64 D64 D16 D16 D16 D4 D4 D4 "..."
#define F0 "path=\"" HOSTILE_LABEL "\""
#define F1 "path=\"" LONG "\""

/* The first exposition, --top 2: in each family fsync_loop then jbd2 then the rest (cat) in
 * "other"; the hostile file, then the long one cut at 256 bytes, then the rest (/x). */
static const char top_text[] =
	"# HELP iolayer_process_fs_seconds_total Time the top processes spent in file operations "
	"(syscall/VFS, entry to return), by operation; the others add up in pid=\"other\".\n"
	"# TYPE iolayer_process_fs_seconds_total counter\n"
	OPS("iolayer_process_fs_seconds_total", P0, "0", "0.5", "0", "2", "0")
	OPS("iolayer_process_fs_seconds_total", P1, "0", "0", "0", "0", "0")
	OPS("iolayer_process_fs_seconds_total", PO, "0.000001", "0", "0", "0", "0")
	"# HELP iolayer_process_fs_ops_total File operations the top processes completed, by "
	"operation; the others add up in pid=\"other\".\n"
	"# TYPE iolayer_process_fs_ops_total counter\n"
	OPS("iolayer_process_fs_ops_total", P0, "0", "500", "0", "500", "0")
	OPS("iolayer_process_fs_ops_total", P1, "0", "0", "0", "0", "0")
	OPS("iolayer_process_fs_ops_total", PO, "1", "0", "0", "0", "0")
	"# HELP iolayer_process_iowait_seconds_total Time the top processes slept in I/O wait "
	"(io_schedule); the others add up in pid=\"other\".\n"
	"# TYPE iolayer_process_iowait_seconds_total counter\n"
	"iolayer_process_iowait_seconds_total{" P0 "} 1.5\n"
	"iolayer_process_iowait_seconds_total{" P1 "} 0.25\n"
	"iolayer_process_iowait_seconds_total{" PO "} 0\n"
	"# HELP iolayer_process_fs_bytes_total Bytes the top processes read and wrote through file "
	"operations; the others add up in pid=\"other\".\n"
	"# TYPE iolayer_process_fs_bytes_total counter\n"
	DIRS("iolayer_process_fs_bytes_total", P0, "0", "2048000")
	DIRS("iolayer_process_fs_bytes_total", P1, "0", "0")
	DIRS("iolayer_process_fs_bytes_total", PO, "10", "0")
	"# HELP iolayer_process_disk_bytes_total Bytes of the block I/O the top processes submitted, "
	"to every disk; the others add up in pid=\"other\".\n"
	"# TYPE iolayer_process_disk_bytes_total counter\n"
	DIRS("iolayer_process_disk_bytes_total", P0, "0", "4096000")
	DIRS("iolayer_process_disk_bytes_total", P1, "0", "65536")
	DIRS("iolayer_process_disk_bytes_total", PO, "8192", "0")
	"# HELP iolayer_file_fs_seconds_total Time spent in file operations on the top files; the "
	"others add up in path=\"other\".\n"
	"# TYPE iolayer_file_fs_seconds_total counter\n"
	"iolayer_file_fs_seconds_total{" F0 "} 2.5\n"
	"iolayer_file_fs_seconds_total{" F1 "} 1\n"
	"iolayer_file_fs_seconds_total{path=\"other\"} 0.00000001\n"
	"# HELP iolayer_file_fsyncs_total fsync and fdatasync calls on the top files (io_uring's "
	"included; not the syncs inside O_SYNC writes); the others add up in path=\"other\".\n"
	"# TYPE iolayer_file_fsyncs_total counter\n"
	"iolayer_file_fsyncs_total{" F0 "} 500\n"
	"iolayer_file_fsyncs_total{" F1 "} 0\n"
	"iolayer_file_fsyncs_total{path=\"other\"} 1\n"
	"# HELP iolayer_file_sync_ranges_total sync_file_range calls on the top files (they start "
	"or wait for writeback, and make nothing durable: not fsyncs); the others add up in "
	"path=\"other\".\n"
	"# TYPE iolayer_file_sync_ranges_total counter\n"
	"iolayer_file_sync_ranges_total{" F0 "} 0\n"
	"iolayer_file_sync_ranges_total{" F1 "} 64\n"
	"iolayer_file_sync_ranges_total{path=\"other\"} 0\n"
	"# HELP iolayer_file_fs_bytes_total Bytes read from and written to the top files through "
	"file operations; the others add up in path=\"other\".\n"
	"# TYPE iolayer_file_fs_bytes_total counter\n"
	DIRS("iolayer_file_fs_bytes_total", F0, "0", "2048000")
	DIRS("iolayer_file_fs_bytes_total", F1, "4096", "0")
	DIRS("iolayer_file_fs_bytes_total", "path=\"other\"", "0", "0")
	"# HELP iolayer_file_disk_bytes_total Bytes of the top files' pages read from and written "
	"to disk, by any process or kernel thread (writeback included); the others add up in "
	"path=\"other\".\n"
	"# TYPE iolayer_file_disk_bytes_total counter\n"
	DIRS("iolayer_file_disk_bytes_total", F0, "0", "4096000")
	DIRS("iolayer_file_disk_bytes_total", F1, "4096", "0")
	DIRS("iolayer_file_disk_bytes_total", "path=\"other\"", "0", "0")
	"# HELP iolayer_top_series_evicted_total Series of their own of the top processes "
	"(table=\"process\") and files (table=\"file\") that stopped since start: the process or file "
	"lost its place to busier ones, or went away; what it does later adds up in \"other\". The "
	"series stay bounded by --top.\n"
	"# TYPE iolayer_top_series_evicted_total counter\n"
	"iolayer_top_series_evicted_total{table=\"process\"} 0\n"
	"iolayer_top_series_evicted_total{table=\"file\"} 0\n";

static void test_top_text(void **state)
{
	char *got = expose(false, who);

	assert_string_equal(got, top_text);
	/* nothing a path holds breaks a line or leaves a byte outside printable ASCII */
	for (const unsigned char *c = (const unsigned char *)got; *c; c++)
		assert_true(*c == '\n' || (*c >= 0x20 && *c < 0x7f));
	assert_int_equal(strlen(LONG), IL_PROM_PATH_LABEL_MAX);
	free(got);
}

/* OpenMetrics: the family without _total in HELP, TYPE and UNIT; the samples with it. */
static void test_top_openmetrics(void **state)
{
	char *got = expose(true, who);

	assert_non_null(strstr(got, "\n# TYPE iolayer_process_fs_seconds counter\n"
				    "# UNIT iolayer_process_fs_seconds seconds\n"
				    "iolayer_process_fs_seconds_total{" P0 ",op=\"read\"} 0\n"));
	assert_non_null(strstr(got, "\n# TYPE iolayer_file_fsyncs counter\n"
				    "iolayer_file_fsyncs_total{" F0 "} 500\n"));
	assert_non_null(strstr(got, "\n# UNIT iolayer_file_disk_bytes bytes\n"));
	assert_null(strstr(got, "# UNIT iolayer_process_fs_ops "));
	assert_string_equal(got + strlen(got) - 6, "# EOF\n");
	free(got);
}

/* The value of the sample that begins with line (family{labels}), as text; "" when absent. */
static const char *value_of(const char *text, const char *line)
{
	static char v[64];
	const char *at = text;
	size_t n = strlen(line);

	v[0] = '\0';
	while ((at = strstr(at, line)) && at != text && at[-1] != '\n')
		at++;
	if (at && at[n] == ' ')
		sscanf(at + n + 1, "%63s", v);
	return v;
}

/* Ranks follow recent time; "other" never goes down; an entry that began again (evicted)
 * counts from 0. */
static void test_top_over_time(void **state)
{
	char *got;

	free(expose(false, who));
	/* a minute later (each ns of before counts half): cat read for 8 s, the others did
	 * nothing: cat 8 s, fsync_loop 2 s, jbd2 0.125 s. cat and fsync_loop, jbd2 in "other". */
	now_ns += 60 * S;
	procs[2].op_ns[FS_OP_READ] += 8 * S;
	procs[2].op_count[FS_OP_READ] += 1000;
	got = expose(false, who);
	assert_non_null(strstr(got, "# TYPE iolayer_process_fs_seconds_total counter\n"
				    "iolayer_process_fs_seconds_total{" P2 ",op=\"read\"} 8.000001\n"));
	assert_non_null(strstr(got, "iolayer_process_fs_seconds_total{" P2 ",op=\"sync_range\"} 0\n"
				    "iolayer_process_fs_seconds_total{" P0 ",op=\"read\"} 0\n"));
	assert_null(strstr(got, P1));
	/* "other" had cat's 1 us; it takes cat's 8 s too (cat had no series at the last
	 * exposition), and keeps nothing of jbd2's past: 8.000001 s, 1001 reads */
	assert_string_equal(value_of(got, "iolayer_process_fs_seconds_total{" PO ",op=\"read\"}"), "8.000001");
	assert_string_equal(value_of(got, "iolayer_process_fs_ops_total{" PO ",op=\"read\"}"), "1001");
	assert_string_equal(value_of(got, "iolayer_process_iowait_seconds_total{" PO "}"), "0");
	/* jbd2 lost its series: one eviction; the files kept theirs */
	assert_string_equal(value_of(got, "iolayer_top_series_evicted_total{table=\"process\"}"), "1");
	assert_string_equal(value_of(got, "iolayer_top_series_evicted_total{table=\"file\"}"), "0");
	free(got);
	/* at once: cat reads 1 s more, in its own series only; jbd2, in "other", sleeps 0.1 s
	 * after its entry began again (0.25 s -> 0.1 s): "other" takes 0.1 s */
	procs[2].op_ns[FS_OP_READ] += S;
	procs[1].iowait_ns = S / 10;
	got = expose(false, who);
	assert_string_equal(value_of(got, "iolayer_process_fs_seconds_total{" P2 ",op=\"read\"}"), "9.000001");
	assert_string_equal(value_of(got, "iolayer_process_fs_seconds_total{" PO ",op=\"read\"}"), "8.000001");
	assert_string_equal(value_of(got, "iolayer_process_iowait_seconds_total{" PO "}"), "0.1");
	assert_string_equal(value_of(got, "iolayer_process_iowait_seconds_total{" P0 "}"), "1.5");
	/* the same two series: no more evictions, the count does not go down */
	assert_string_equal(value_of(got, "iolayer_top_series_evicted_total{table=\"process\"}"), "1");
	free(got);
}

/* Two files whose paths differ only after 256 bytes would share a label: the second is
 * passed over (in "other") and the next one has the second place. */
static void test_top_same_label(void **state)
{
	char *got;

	memcpy(files[0].path, files[1].path, sizeof(files[0].path));
	files[0].path[300] = 'e';
	got = expose(false, who);
	assert_non_null(strstr(got, "# TYPE iolayer_file_fs_seconds_total counter\n"
				    "iolayer_file_fs_seconds_total{" F1 "} 2.5\n"
				    "iolayer_file_fs_seconds_total{path=\"/x\"} 0.00000001\n"
				    "iolayer_file_fs_seconds_total{path=\"other\"} 1\n"));
	free(got);
}

/* A path of 0xff bytes: each is \xff in text form, cut before the escape that would pass
 * 256 bytes (63 of them and "...", 255 bytes), never inside one. */
static void test_top_cut_escapes(void **state)
{
	char want[1024] = "iolayer_file_fs_seconds_total{path=\"", *got;
	size_t n = strlen(want);

	memset(files[0].path, 0xff, sizeof(files[0].path) - 1);
	for (int i = 0; i < 63; i++)
		n += snprintf(want + n, sizeof(want) - n, "\\\\xff");
	snprintf(want + n, sizeof(want) - n, "...\"} 2.5\n");
	got = expose(false, who);
	assert_non_null(strstr(got, want));
	free(got);
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

/* A process in a Kubernetes pod's container (systemd driver) and one in a unit: their series
 * carry container_id and pod_uid, or unit, from the cgroup path (cgident.h). */
static void test_top_container_labels(void **state)
{
	char *got;

	strcpy(procs[0].cgroup, "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod3f1c2d4e_5a6b_"
	       "7c8d_9e0f_a1b2c3d4e5f6.slice/cri-containerd-9a8b7c6d5e4f30211203f4e5d6c7b8a99a8b7c6d5e4f302112"
	       "03f4e5d6c7b8a9.scope");
	strcpy(procs[1].cgroup, "/system.slice/redis.service");
	got = expose(false, who);
	assert_non_null(strstr(got, "iolayer_process_iowait_seconds_total{pid=\"4242\",comm=\"fsync_loop\","
			       "cgroup=\"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod3f1c2d4e_"
			       "5a6b_7c8d_9e0f_a1b2c3d4e5f6.slice/cri-containerd-9a8b7c6d5e4f30211203f4e5d6c7b8a99a8b7c"
			       "6d5e4f30211203f4e5d6c7b8a9.scope\",container_id=\"9a8b7c6d5e4f30211203f4e5d6c7b8a99a8b7c"
			       "6d5e4f30211203f4e5d6c7b8a9\",pod_uid=\"3f1c2d4e-5a6b-7c8d-9e0f-a1b2c3d4e5f6\",unit=\"\"} 1.5\n"));
	assert_non_null(strstr(got, "iolayer_process_iowait_seconds_total{pid=\"17\",comm=\"jbd2/loop0-8\","
			       "cgroup=\"/system.slice/redis.service\",container_id=\"\",pod_uid=\"\","
			       "unit=\"redis.service\"} 0.25\n"));
	free(got);
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
		cmocka_unit_test_setup_teardown(test_top_text, top_setup, top_teardown),
		cmocka_unit_test_setup_teardown(test_top_openmetrics, top_setup, top_teardown),
		cmocka_unit_test_setup_teardown(test_top_over_time, top_setup, top_teardown),
		cmocka_unit_test_setup_teardown(test_top_same_label, top_setup, top_teardown),
		cmocka_unit_test_setup_teardown(test_top_cut_escapes, top_setup, top_teardown),
		cmocka_unit_test_setup_teardown(test_top_container_labels, top_setup, top_teardown),
	};

	return cmocka_run_group_tests_name("prom", tests, NULL, NULL);
}
