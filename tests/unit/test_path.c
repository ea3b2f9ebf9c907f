/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Unit tests: a file's path from the names an event carries (user/lib/path.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "path.h"

#define NO_DEV 0xfffffu /* a dev no mount has */

/* il_path_str() of names[0..nbytes) (the file's own name first), depth components. */
static const char *str(const char *names, size_t nbytes, int depth, unsigned flags, __u32 mnt_id,
		       size_t len)
{
	static char buf[IL_PATH_STR_MAX];
	struct il_path p = { .mnt_id = mnt_id, .len = nbytes, .depth = depth, .flags = flags };

	return il_path_str(&p, names, nbytes, NO_DEV, 7, buf, len);
}

/* The mount id of "/" in this mount namespace, from /proc/self/mountinfo. */
static unsigned root_mount_id(void)
{
	char line[8192], point[4096];
	unsigned id, found = 0;
	FILE *f = fopen("/proc/self/mountinfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%u %*d %*u:%*u %*s %4095s", &id, point) == 2 && !strcmp(point, "/"))
			found = id;
	if (f)
		fclose(f);
	return found;
}

static void test_marks(void **state)
{
	(void)state;
	assert_string_equal(str("", 0, 0, IL_PATH_NONE, 0, IL_PATH_STR_MAX), "");
	/* the walk stopped short: "..." and the names from the top down */
	assert_string_equal(str("f\0d2\0d1", 8, 3, IL_PATH_DEEPER, 0, IL_PATH_STR_MAX), ".../d1/d2/f");
	/* mount unknown (no id, a bind mount's subdirectory): "..." too */
	assert_string_equal(str("f\0d", 4, 2, IL_PATH_MNT_SUBDIR, 0, IL_PATH_STR_MAX), ".../d/f");
	assert_string_equal(str("f\0d", 4, 2, IL_PATH_MNT_SUBDIR | IL_PATH_DELETED, 0, IL_PATH_STR_MAX),
			    ".../d/f (deleted)");
	/* a mount's root whose mount point is unknown */
	assert_string_equal(str("", 0, 0, IL_PATH_MNT_SUBDIR, 0, IL_PATH_STR_MAX), "[inode 7]");
}

static void test_mount_point(void **state)
{
	unsigned id = root_mount_id();

	(void)state;
	if (!id)
		skip();
	/* "/" is not doubled */
	assert_string_equal(str("f\0dir", 6, 2, 0, id, IL_PATH_STR_MAX), "/dir/f");
	assert_string_equal(str("", 0, 0, 0, id, IL_PATH_STR_MAX), "/");
	assert_string_equal(str("x", 2, 1, IL_PATH_DELETED, id, IL_PATH_STR_MAX), "/x (deleted)");
}

static void test_full_names(void **state)
{
	char names[IL_PATH_BUF], name[256], want[IL_PATH_STR_MAX] = "...";
	size_t at = 0;

	(void)state;
	/* 16 components of 255 bytes each: every byte kept */
	memset(name, 'a', 255);
	name[255] = 0;
	for (int i = 0; i < IL_PATH_DEPTH; i++) {
		name[0] = 'a' + i;
		memcpy(names + at, name, 256);
		at += 256;
	}
	for (int i = IL_PATH_DEPTH - 1; i >= 0; i--) {
		name[0] = 'a' + i;
		strcat(want, "/");
		strcat(want, name);
	}
	assert_int_equal(at, IL_PATH_BUF);
	assert_string_equal(str(names, at, IL_PATH_DEPTH, IL_PATH_DEEPER, 0, IL_PATH_STR_MAX), want);
	assert_int_equal(strlen(want), 3 + 16 * 256);
}

static void test_bounds(void **state)
{
	(void)state;
	/* depth says more than the bytes hold: only what is there */
	assert_string_equal(str("f\0d", 4, 5, IL_PATH_DEEPER, 0, IL_PATH_STR_MAX), ".../d/f");
	/* a name without its NUL at the end of the bytes */
	assert_string_equal(str("file", 4, 1, IL_PATH_DEEPER, 0, IL_PATH_STR_MAX), ".../file");
	/* a small buffer: cut, NUL-terminated */
	assert_string_equal(str("file\0dir", 9, 2, IL_PATH_DEEPER, 0, 8), ".../dir");
	assert_string_equal(str("file\0dir", 9, 2, IL_PATH_DEEPER, 0, 1), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_marks),
		cmocka_unit_test(test_mount_point),
		cmocka_unit_test(test_full_names),
		cmocka_unit_test(test_bounds),
	};
	return cmocka_run_group_tests_name("path", tests, NULL, NULL);
}
