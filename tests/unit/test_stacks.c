/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Unit tests: the tracer's own kernel frames, markers in kallsyms, user-space symbols through
 * libdw (own process), escaped when a file's name is hostile; stacks that differ only in the
 * tracer's frames named as one, and merged as one in iowaitstack's report. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <dlfcn.h>
#include <zlib.h>
#include "libiolayer.h"
#include "stacks.h"

static void test_tracer_frames(void **state)
{
	/* frames seen under sched_switch with tp_btf and raw_tp, and offcputime's */
	assert_true(il_ksym_is_tracer("bpf_prog_6896d07dd3e1383c_sched_switch"));
	assert_true(il_ksym_is_tracer("bpf_trace_run4"));
	assert_true(il_ksym_is_tracer("__bpf_trace_sched_switch"));
	assert_true(il_ksym_is_tracer("__traceiter_sched_switch"));
	assert_true(il_ksym_is_tracer("bpf_get_stackid_raw_tp"));
	/* the traced code is kept, including names that merely contain "bpf" or "trace" */
	assert_false(il_ksym_is_tracer("__schedule"));
	assert_false(il_ksym_is_tracer("io_schedule"));
	assert_false(il_ksym_is_tracer("blk_add_trace_rq"));
	assert_false(il_ksym_is_tracer("sk_filter_trim_cap_bpf"));
}

/* A section marker at the address of a function (5.10: __sched_text_start is where
 * io_schedule_timeout begins): the function is named, in either order of the file. */
static void test_ksyms_marker_at_function(void **state)
{
	static const char *orders[] = {
		"ffffffff81e0e260 T __sched_text_start\nffffffff81e0e260 T io_schedule_timeout\n"
		"ffffffff81e0ec40 T io_schedule\n",
		"ffffffff81e0e260 T io_schedule_timeout\nffffffff81e0e260 T __sched_text_start\n"
		"ffffffff81e0ec40 T io_schedule\n",
	};
	char path[] = "/tmp/il-test-kallsyms-XXXXXX", buf[128];

	for (size_t i = 0; i < 2; i++) {
		int fd = mkstemp(path);
		struct il_ksyms *ks;

		assert_true(fd >= 0);
		assert_int_equal(write(fd, orders[i], strlen(orders[i])), (int)strlen(orders[i]));
		close(fd);
		ks = il_ksyms_load(path);
		unlink(path);
		strcpy(path, "/tmp/il-test-kallsyms-XXXXXX");
		assert_non_null(ks);
		assert_string_equal(il_ksyms_format(ks, 0xffffffff81e0e2acUL, buf, sizeof(buf)),
				    "io_schedule_timeout+0x4c");
		assert_string_equal(il_ksyms_format(ks, 0xffffffff81e0ec40UL, buf, sizeof(buf)),
				    "io_schedule+0x0");
		il_ksyms_free(ks);
	}
}

/* Not inlined, not static: a symbol the test can name itself. */
int il_test_marker_function(int x);
__attribute__((noinline)) int il_test_marker_function(int x)
{
	return x * 3 + 1;
}

static void test_usyms_own_process(void **state)
{
	struct il_usyms *u = il_usyms_new();
	unsigned long long addr = (unsigned long long)(uintptr_t)&il_test_marker_function;
	char buf[256];

	assert_non_null(u);
	assert_int_equal(il_usyms_load(u, getpid()), 0);
	/* a return address just past the function's start is charged to the function */
	il_usyms_format(u, getpid(), addr + 4, buf, sizeof(buf));
	assert_non_null(strstr(buf, "il_test_marker_function+0x4 (test_stacks)"));
	/* a libc function, named with its object */
	il_usyms_format(u, getpid(), (unsigned long long)(uintptr_t)&getpid + 1, buf, sizeof(buf));
	assert_non_null(strstr(buf, "(libc.so"));
	/* addresses no mapping holds: never charged to a neighbouring object */
	assert_string_equal(il_usyms_format(u, getpid(), 0x10, buf, sizeof(buf)), "[unknown]");
	assert_string_equal(il_usyms_format(u, getpid(), 0x7fffffffffffULL, buf, sizeof(buf)),
			    "[unknown]");
	/* a process that does not exist */
	assert_int_equal(il_usyms_load(u, 0x7ffffffe), -1);
	assert_string_equal(il_usyms_format(u, 0x7ffffffe, addr, buf, sizeof(buf)), "[unknown]");
	il_usyms_free(u);
	assert_int_equal(il_test_marker_function(1), 4);
}

static int copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
	char buf[65536];
	size_t n;
	int err = !in || !out;

	while (!err && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		err = fwrite(buf, 1, n, out) != n;
	if (in)
		fclose(in);
	if (out && fclose(out))
		err = 1;
	return err ? -1 : 0;
}

/* A library loaded from a file whose name holds an escape sequence, a tab and a byte that is
 * not UTF-8: its frames are named escaped, so they hold no control byte. (Not a newline:
 * /proc/PID/maps shows it as "\012", so libdw cannot open such a file and finds no symbol.) */
static void test_usyms_hostile_object_name(void **state)
{
	char dir[] = "/tmp/il-test-stacks.XXXXXX", path[128], buf[256];
	unsigned long long addr;
	struct il_usyms *u;
	Dl_info info;
	void *lib, *fn;

	(void)state;
	/* a copy of zlib (linked in, so present), loaded again from the hostile name */
	assert_non_null(mkdtemp(dir));
	assert_int_not_equal(dladdr((void *)&zlibVersion, &info), 0);
	snprintf(path, sizeof(path), "%s/lib\x1b]0;t\x07\t\xff.so", dir);
	assert_int_equal(copy_file(info.dli_fname, path), 0);
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(lib);
	fn = dlsym(lib, "zlibVersion");
	assert_non_null(fn);
	assert_ptr_not_equal(fn, (void *)&zlibVersion);
	addr = (unsigned long long)(uintptr_t)fn;

	u = il_usyms_new();
	assert_non_null(u);
	assert_int_equal(il_usyms_load(u, getpid()), 0);
	il_usyms_format(u, getpid(), addr + 1, buf, sizeof(buf));
	assert_string_equal(buf, "zlibVersion+0x1 (lib\\x1b]0;t\\x07\\t\\xff.so)");
	il_usyms_free(u);
	dlclose(lib);
	unlink(path);
	rmdir(dir);
}

/* ---- stacks that differ only in the tracer's frames ------------------------------------ */

static const char fake_kallsyms[] =
	"ffffffff81000000 T __schedule\n"
	"ffffffff81001000 T schedule\n"
	"ffffffff81002000 T io_schedule\n"
	"ffffffff81100000 T bpf_trace_run4\n"
	"ffffffff81101000 T __bpf_trace_sched_switch\n"
	"ffffffff81200000 T blk_mq_submit_bio\n"
	"ffffffffc0000000 t bpf_prog_6896d07dd3e1383c_iw_switch_btf\t[bpf]\n"
	"ffffffffc0001000 t bpf_prog_1111111111111111_iw_switch_raw\t[bpf]\n";

/* The same sleep, reached through two BPF programs (ids 1 and 2), at another offset of
 * __schedule (3), and under another function (4). */
static const __u64 stack1[] = { 0xffffffffc0000040, 0xffffffff81100050, 0xffffffff81101010,
				0xffffffff81000618, 0xffffffff81001023, 0xffffffff8100203f };
static const __u64 stack2[] = { 0xffffffffc0001080, 0xffffffff81101020,
				0xffffffff81000618, 0xffffffff81001023, 0xffffffff8100203f };
static const __u64 stack3[] = { 0xffffffffc0000040, 0xffffffff81100050,
				0xffffffff81000628, 0xffffffff81001023, 0xffffffff8100203f };
static const __u64 stack4[] = { 0xffffffffc0000040, 0xffffffff81000618, 0xffffffff81200010 };

static struct il_stacknames *fake_names(void)
{
	char path[] = "/tmp/il-test-kallsyms-XXXXXX";
	int fd = mkstemp(path);
	struct il_stacknames *s;
	struct il_ksyms *ks;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, fake_kallsyms, strlen(fake_kallsyms)), (int)strlen(fake_kallsyms));
	close(fd);
	ks = il_ksyms_load(path);
	unlink(path);
	assert_non_null(ks);
	s = il_stacknames_new_ksyms(-1, false, ks);
	assert_non_null(s);
	assert_non_null(il_stacknames_add(s, 0, 1, 0, stack1, 6));
	assert_non_null(il_stacknames_add(s, 0, 2, 0, stack2, 5));
	assert_non_null(il_stacknames_add(s, 0, 3, 0, stack3, 5));
	assert_non_null(il_stacknames_add(s, 0, 4, 0, stack4, 3));
	return s;
}

/* Stacks that print alike once the tracer's frames are hidden are one il_frames. */
static void test_stacknames_alike(void **state)
{
	struct il_stacknames *s = fake_names();
	const struct il_frames *f1 = il_stacknames_get(s, 0, 1), *f2 = il_stacknames_get(s, 0, 2);
	const struct il_frames *f3 = il_stacknames_get(s, 0, 3);
	char *key;

	(void)state;
	assert_non_null(f1);
	assert_int_equal(f1->n, 3);
	assert_string_equal(f1->names[0], "__schedule+0x618");
	assert_string_equal(f1->names[2], "io_schedule+0x3f");
	assert_ptr_equal(f1, f2);
	assert_ptr_not_equal(f1, f3); /* another offset: printed apart */
	assert_string_equal(f3->names[0], "__schedule+0x628");
	assert_ptr_not_equal(f1, il_stacknames_get(s, 0, 4));
	key = il_frames_folded_key("redis-server\0\0\0", 16, NULL, f1);
	assert_string_equal(key, "redis-server;io_schedule;schedule;__schedule");
	free(key);
	il_stacknames_free(s);
}

static struct il_iw_entry fake_entry(__u32 tgid, __u32 tid, const char *comm, __s32 kstack,
				     __u64 count, __u64 total_us, __u64 max_us)
{
	struct il_iw_entry e;

	memset(&e, 0, sizeof(e));
	e.key.tgid = tgid;
	e.key.tid = tid;
	e.key.kstack = kstack;
	e.key.ustack = IW_STACK_NONE;
	strncpy(e.key.comm, comm, sizeof(e.key.comm) - 1);
	e.seen = (struct iw_val){ .count = count, .total_ns = total_us * 1000, .max_ns = max_us * 1000 };
	e.iv = (struct iw_val){ .count = count, .total_ns = total_us * 1000 };
	return e;
}

/* iowaitstack's report: the rows of stacks 1 and 2 (one stack once named) are one stack, one
 * row per thread, sums added and the largest max kept; stack 3 stays apart. */
static void test_iw_report_merge(void **state)
{
	struct il_iw_entry v[] = {
		fake_entry(900, 900, "redis-server", 1, 27124, 948128, 5000),
		fake_entry(900, 900, "redis-server", 2, 5871, 259340, 9000),
		fake_entry(900, 901, "bio_aof", 2, 1, 700, 700),
		fake_entry(900, 900, "redis-server", 3, 2, 50, 30),
		fake_entry(900, 902, "redis-server", IW_STACK_LOST, 1, 10, 10),
	};
	struct il_iw_table t = { .v = v, .n = 5, .cap = 5 };
	struct il_stacknames *s = fake_names();
	struct il_iw_report r;

	(void)state;
	for (int interval = 0; interval < 2; interval++) {
		il_iw_report_make(&t, interval, &r);
		assert_int_equal(r.ngroups, 4); /* by stack id */
		il_iw_report_merge(&r, s, false);
		assert_int_equal(r.ngroups, 3);
		assert_int_equal(r.groups[0].sum.count, 27124 + 5871 + 1);
		assert_int_equal(r.groups[0].sum.total_ns, (948128 + 259340 + 700) * 1000ULL);
		if (!interval)
			assert_int_equal(r.groups[0].sum.max_ns, 9000 * 1000ULL);
		assert_int_equal(r.groups[0].nmembers, 2);
		assert_int_equal(r.groups[0].members[0]->key.tid, 900);
		assert_int_equal(il_iw_val(r.groups[0].members[0], interval)->count, 27124 + 5871);
		assert_int_equal(il_iw_val(r.groups[0].members[0], interval)->total_ns,
				 (948128 + 259340) * 1000ULL);
		if (!interval)
			assert_int_equal(r.groups[0].members[0]->seen.max_ns, 9000 * 1000ULL);
		assert_int_equal(r.groups[0].members[1]->key.tid, 901);
		assert_int_equal(r.groups[1].kstack, 3);
		assert_int_equal(r.groups[1].sum.count, 2);
		assert_int_equal(r.groups[2].kstack, IW_STACK_LOST); /* not named: kept by id */
		assert_int_equal(r.groups[2].nmembers, 1);
		/* the totals are the same */
		assert_int_equal(r.all.count, 27124 + 5871 + 1 + 2 + 1);
		/* the table itself is untouched */
		assert_int_equal(v[0].seen.count, 27124);
		il_iw_report_free(&r);
	}
	il_stacknames_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tracer_frames),
		cmocka_unit_test(test_ksyms_marker_at_function),
		cmocka_unit_test(test_usyms_own_process),
		cmocka_unit_test(test_usyms_hostile_object_name),
		cmocka_unit_test(test_stacknames_alike),
		cmocka_unit_test(test_iw_report_merge),
	};
	il_log_init("test_stacks", 0);
	return cmocka_run_group_tests_name("stacks", tests, NULL, NULL);
}
