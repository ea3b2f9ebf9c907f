/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Unit tests: the tracer's own kernel frames, markers in kallsyms, user-space symbols through
 * libdw (own process), escaped when a file's name is hostile. */
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tracer_frames),
		cmocka_unit_test(test_ksyms_marker_at_function),
		cmocka_unit_test(test_usyms_own_process),
		cmocka_unit_test(test_usyms_hostile_object_name),
	};
	il_log_init("test_stacks", 0);
	return cmocka_run_group_tests_name("stacks", tests, NULL, NULL);
}
