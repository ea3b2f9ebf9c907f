/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Unit tests: kernel function prototypes read from this kernel's BTF (skipped without BTF). */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <unistd.h>
#include <cmocka.h>
#include "btf.h"

static void test_int_returning(void **state)
{
	int nargs = -1;
	bool is_int = false;

	if (access("/sys/kernel/btf/vmlinux", R_OK))
		skip();
	/* int vfs_fsync_range(struct file *, loff_t, loff_t, int datasync): fs/sync.c */
	assert_int_equal(il_kfunc_proto("vfs_fsync_range", &nargs, &is_int), 0);
	assert_int_equal(nargs, 4);
	assert_true(is_int);
}

static void test_not_int(void **state)
{
	int nargs = -1;
	bool is_int = true;

	if (access("/sys/kernel/btf/vmlinux", R_OK))
		skip();
	/* char *d_path(const struct path *, char *, int): fs/d_path.c */
	assert_int_equal(il_kfunc_proto("d_path", &nargs, &is_int), 0);
	assert_int_equal(nargs, 3);
	assert_false(is_int);
	/* asmlinkage void schedule(void): kernel/sched/core.c */
	assert_int_equal(il_kfunc_proto("schedule", &nargs, &is_int), 0);
	assert_int_equal(nargs, 0);
	assert_false(is_int);
}

static void test_missing(void **state)
{
	int nargs = 7;
	bool is_int = true;

	assert_int_equal(il_kfunc_proto("iolayer_no_such_function", &nargs, &is_int), -ENOENT);
	assert_int_equal(nargs, 7); /* untouched */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_int_returning),
		cmocka_unit_test(test_not_int),
		cmocka_unit_test(test_missing),
	};
	return cmocka_run_group_tests_name("kfunc", tests, NULL, NULL);
}
