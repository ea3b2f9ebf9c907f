/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Unit tests: cgroups (user/lib/cgroup.c) and disks (user/lib/disk.c), on temporary
 * directory trees that stand in for the cgroup hierarchy and sysfs, with a clock of their own. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <signal.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <cmocka.h>
#include "cgroup.h"
#include "disk.h"
#include "log.h"
#include "util.h"

static unsigned long long fake_ns;

static unsigned long long fake_clock(void)
{
	return fake_ns;
}

static char tmp[64];

static void mk(const char *rel)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", tmp, rel);
	assert_int_equal(mkdir(p, 0755), 0);
}

static void put(const char *rel, const char *text)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", tmp, rel);
	assert_non_null(f = fopen(p, "w"));
	fputs(text, f);
	fclose(f);
}

static void link_to(const char *target, const char *rel)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", tmp, rel);
	assert_int_equal(symlink(target, p), 0);
}

static __u64 ino(const char *rel)
{
	char p[256];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", tmp, rel);
	assert_int_equal(stat(p, &st), 0);
	return st.st_ino;
}

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	return remove(path);
}

static int setup(void **state)
{
	snprintf(tmp, sizeof(tmp), "/tmp/il-test-cgroup.XXXXXX");
	return mkdtemp(tmp) ? 0 : -1;
}

static int teardown(void **state)
{
	il_cgroup_test_use(NULL, false, NULL);
	il_disk_test_use(NULL, NULL);
	return nftw(tmp, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The path il_cgroup_parse_proc() takes from the text of a /proc/PID/cgroup. */
static const char *parse(const char *text)
{
	static char buf[256];
	FILE *f = fmemopen((void *)text, strlen(text), "r");

	assert_non_null(f);
	il_cgroup_parse_proc(f, buf, sizeof(buf));
	fclose(f);
	return buf;
}

/* v1: the blkio controller's line, alone or with others, wherever it is; v2: the "0::" line,
 * unless a blkio line is there too (hybrid: blkio throttles); neither: "-". */
static void test_parse_proc(void **state)
{
	assert_string_equal(parse("0::/user.slice/session-1.scope\n"), "/user.slice/session-1.scope");
	assert_string_equal(parse("0::/\n"), "/");
	assert_string_equal(parse("12:memory:/m\n5:blkio:/slow\n1:name=systemd:/s\n0::/v2\n"), "/slow");
	assert_string_equal(parse("0::/v2\n7:cpu,blkio:/both\n"), "/both");
	assert_string_equal(parse("7:blkio,memory:/first\n"), "/first");
	assert_string_equal(parse("12:memory:/m\n1:name=systemd:/s\n0::/v2\n"), "/v2");
	assert_string_equal(parse("3:blkiox:/not\n"), "-");
	assert_string_equal(parse("12:memory:/m\n"), "-");
	assert_string_equal(parse(""), "-");
	assert_string_equal(parse("garbage\n0::/with:colon\n"), "/with:colon");
}

/* Paths by id from the walk; a gone cgroup is "cgroup:ID", no id and no process "-". */
static void test_path_and_vanished(void **state)
{
	char buf[128];
	__u64 id;

	mk("a");
	mk("a/b");
	il_cgroup_test_use(tmp, true, fake_clock);
	assert_true(il_cgroup_v1());
	assert_string_equal(il_cgroup_root(buf, sizeof(buf), NULL), tmp);
	fake_ns = 5000000000ULL;
	assert_string_equal(il_cgroup_path(ino("a/b"), 0, buf, sizeof(buf)), "/a/b");
	assert_string_equal(il_cgroup_path(ino("a"), 0, buf, sizeof(buf)), "/a");
	assert_string_equal(il_cgroup_path(ino(""), 0, buf, sizeof(buf)), "/");
	assert_string_equal(il_cgroup_path(987654321, 0, buf, sizeof(buf)), "cgroup:987654321");
	assert_string_equal(il_cgroup_path(0, 0, buf, sizeof(buf)), "-");
	/* the id of a cgroup given as a path, relative or full, or as cgroup:ID */
	assert_int_equal(il_cgroup_id("/a/b", &id), 0);
	assert_int_equal(id, ino("a/b"));
	assert_int_equal(il_cgroup_id("a", &id), 0);
	assert_int_equal(id, ino("a"));
	snprintf(buf, sizeof(buf), "%s/a/b", tmp);
	assert_int_equal(il_cgroup_id(buf, &id), 0);
	assert_int_equal(id, ino("a/b"));
	assert_int_equal(il_cgroup_id("cgroup:42", &id), 0);
	assert_int_equal(id, 42);
	assert_int_equal(il_cgroup_id("/no/such", &id), -1);
}

/* A cgroup made after the last walk is found by walking again, at most once a second. */
static void test_rewalk(void **state)
{
	char buf[128], want[32];

	mk("old");
	il_cgroup_test_use(tmp, false, fake_clock);
	assert_false(il_cgroup_v1());
	fake_ns = 10000000000ULL;
	assert_string_equal(il_cgroup_path(ino("old"), 0, buf, sizeof(buf)), "/old"); /* walks */
	mk("new");
	fake_ns += 999999999ULL; /* under a second since: no walk */
	snprintf(want, sizeof(want), "cgroup:%llu", (unsigned long long)ino("new"));
	assert_string_equal(il_cgroup_path(ino("new"), 0, buf, sizeof(buf)), want);
	fake_ns += 1; /* a second: walks again */
	assert_string_equal(il_cgroup_path(ino("new"), 0, buf, sizeof(buf)), "/new");
	/* a hit never walks: a cgroup removed meanwhile keeps its path until a miss walks */
	assert_int_equal(rmdir(strcat(strcpy(buf, tmp), "/old")), 0);
	fake_ns += 5000000000ULL;
	assert_string_equal(il_cgroup_path(ino("new"), 0, buf, sizeof(buf)), "/new");
}

/* The lines of the throttle files that name the disk, v1's and v2's. */
static void test_throttle_rule(void **state)
{
	char buf[256];

	mk("slow");
	put("slow/blkio.throttle.write_bps_device", "7:0 1048576\n8:0 2097152\n");
	put("slow/io.max", "7:0 rbps=max wbps=1048576 riops=max wiops=max\n");
	put("blkio.throttle.read_iops_device", "7:0 100\n");
	il_cgroup_test_use(tmp, true, fake_clock);
	assert_string_equal(il_cgroup_throttle_rule("/slow", IL_MKDEV(7, 0), buf, sizeof(buf)),
			    "blkio.throttle.write_bps_device 7:0 1048576, "
			    "io.max 7:0 rbps=max wbps=1048576 riops=max wiops=max");
	assert_string_equal(il_cgroup_throttle_rule("/slow", IL_MKDEV(8, 0), buf, sizeof(buf)),
			    "blkio.throttle.write_bps_device 8:0 2097152");
	assert_string_equal(il_cgroup_throttle_rule("/", IL_MKDEV(7, 0), buf, sizeof(buf)),
			    "blkio.throttle.read_iops_device 7:0 100");
	assert_string_equal(il_cgroup_throttle_rule("/slow", IL_MKDEV(9, 0), buf, sizeof(buf)), "");
	assert_string_equal(il_cgroup_throttle_rule("cgroup:5", IL_MKDEV(7, 0), buf, sizeof(buf)), "");
}

/* A process's cgroup from /proc; after it exits, what il_cgroup_remember() kept of it; the
 * path of a gone cgroup falls back to its process's. */
static void test_exited_process(void **state)
{
	char alive[256], buf[256];
	int p[2];
	pid_t pid;

	assert_string_not_equal(il_cgroup_of_pid(getpid(), buf, sizeof(buf)), "-");
	assert_int_equal(pipe(p), 0);
	if (!(pid = fork())) {
		char c;

		close(p[1]);
		_exit(read(p[0], &c, 1) < 0);
	}
	close(p[0]);
	il_cgroup_of_pid(pid, alive, sizeof(alive));
	assert_string_not_equal(alive, "-");
	il_cgroup_remember(pid);
	close(p[1]);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	assert_string_equal(il_cgroup_of_pid(pid, buf, sizeof(buf)), alive);
	il_cgroup_test_use(tmp, false, fake_clock);
	assert_string_equal(il_cgroup_path(987654321, pid, buf, sizeof(buf)), alive);
	assert_string_equal(il_cgroup_of_pid(999999999, buf, sizeof(buf)), "-");
}

/* A sysfs of two devices: sda with partition sda1 (blk-mq), dm-0 (bio-based). */
static void make_sysfs(void)
{
	mk("dev");
	mk("dev/block");
	mk("class");
	mk("class/block");
	mk("block");
	mk("devices");
	mk("devices/sda");
	mk("devices/sda/mq");
	mk("devices/sda/sda1");
	mk("devices/dm-0");
	put("devices/sda/dev", "8:0\n");
	put("devices/sda/uevent", "MAJOR=8\nMINOR=0\nDEVNAME=sda\nDEVTYPE=disk\n");
	put("devices/sda/sda1/dev", "8:1\n");
	put("devices/sda/sda1/partition", "1\n");
	put("devices/sda/sda1/uevent", "MAJOR=8\nMINOR=1\nDEVNAME=sda1\nDEVTYPE=partition\n");
	put("devices/dm-0/dev", "253:0\n");
	put("devices/dm-0/uevent", "MAJOR=253\nMINOR=0\nDEVNAME=dm-0\n");
	link_to("../../devices/sda", "dev/block/8:0");
	link_to("../../devices/sda/sda1", "dev/block/8:1");
	link_to("../../devices/dm-0", "dev/block/253:0");
	link_to("../../devices/sda", "class/block/sda");
	link_to("../../devices/sda/sda1", "class/block/sda1");
	link_to("../devices/sda", "block/sda");
}

/* Names, partitions and their disks, from sysfs. */
static void test_disk_names(void **state)
{
	char buf[32];
	__u32 dev = 0;

	make_sysfs();
	il_disk_test_use(tmp, fake_clock);
	fake_ns = 1000;
	assert_string_equal(il_disk_name(IL_MKDEV(8, 0), buf, sizeof(buf)), "sda");
	assert_string_equal(il_disk_name(IL_MKDEV(8, 1), buf, sizeof(buf)), "sda1");
	assert_string_equal(il_disk_name(IL_MKDEV(9, 77), buf, sizeof(buf)), "9:77");
	assert_string_equal(il_disk_name(IL_MKDEV(8, 1), buf, 4), "sda"); /* cut to the buffer */
	assert_int_equal(il_disk_whole(IL_MKDEV(8, 1)), IL_MKDEV(8, 0));
	assert_int_equal(il_disk_whole(IL_MKDEV(8, 0)), IL_MKDEV(8, 0));
	assert_int_equal(il_disk_whole(IL_MKDEV(9, 77)), IL_MKDEV(9, 77));
	/* a filesystem's disk: the whole disk's name, "" for no block device */
	assert_string_equal(il_disk_fs_name(IL_MKDEV(8, 1), buf, sizeof(buf)), "sda");
	assert_string_equal(il_disk_fs_name(IL_MKDEV(0, 40), buf, sizeof(buf)), "");
	assert_int_equal(il_disk_dev("/dev/sda1", &dev), 0);
	assert_int_equal(dev, IL_MKDEV(8, 1));
	assert_int_equal(il_disk_dev("nope", &dev), -1);
	assert_int_equal(il_disk_dev("../sda", &dev), -1);
	assert_int_equal(il_disk_is_partition("sda1"), 1);
	assert_int_equal(il_disk_is_partition("/dev/sda"), 0);
	/* bio-based: no mq directory (a partition: its disk's) */
	assert_false(il_disk_bio_based(IL_MKDEV(8, 1)));
	assert_true(il_disk_bio_based(IL_MKDEV(253, 0)));
	assert_false(il_disk_any_bio_based());
	link_to("../devices/dm-0", "block/dm-0");
	assert_true(il_disk_any_bio_based());
}

/* What sysfs said is kept a second: a dev that changes name is seen after it, not before. */
static void test_disk_cache(void **state)
{
	char buf[32];

	make_sysfs();
	il_disk_test_use(tmp, fake_clock);
	fake_ns = 7000000000ULL;
	assert_string_equal(il_disk_name(IL_MKDEV(8, 0), buf, sizeof(buf)), "sda");
	put("devices/sda/uevent", "MAJOR=8\nMINOR=0\nDEVNAME=sdz\n");
	fake_ns += 999999999ULL;
	assert_string_equal(il_disk_name(IL_MKDEV(8, 0), buf, sizeof(buf)), "sda");
	fake_ns += 1;
	assert_string_equal(il_disk_name(IL_MKDEV(8, 0), buf, sizeof(buf)), "sdz");
	/* many devs: each still named right, whichever slot it shares */
	for (unsigned mi = 0; mi < 300; mi++) {
		char want[16];

		snprintf(want, sizeof(want), "9:%u", mi);
		assert_string_equal(il_disk_name(IL_MKDEV(9, mi), buf, sizeof(buf)), want);
	}
	assert_string_equal(il_disk_name(IL_MKDEV(8, 0), buf, sizeof(buf)), "sdz");
}

/* Several disks at once are each kept their second: none evicts another (a hash put every
 * dev in one slot, and a scrape read sysfs again for each of them). */
static void test_disk_cache_many(void **state)
{
	char buf[32];

	make_sysfs();
	mk("devices/vda"); /* vda (254:0) and loop1 (7:1) beside sda (8:0) */
	put("devices/vda/uevent", "MAJOR=254\nMINOR=0\nDEVNAME=vda\n");
	link_to("../../devices/vda", "dev/block/254:0");
	mk("devices/loop1");
	put("devices/loop1/uevent", "MAJOR=7\nMINOR=1\nDEVNAME=loop1\n");
	link_to("../../devices/loop1", "dev/block/7:1");
	il_disk_test_use(tmp, fake_clock);
	fake_ns = 5000000000ULL;
	assert_string_equal(il_disk_name(IL_MKDEV(254, 0), buf, sizeof(buf)), "vda");
	assert_string_equal(il_disk_name(IL_MKDEV(7, 1), buf, sizeof(buf)), "loop1");
	assert_string_equal(il_disk_name(IL_MKDEV(8, 0), buf, sizeof(buf)), "sda");
	assert_string_equal(il_disk_name(IL_MKDEV(8, 1), buf, sizeof(buf)), "sda1");
	assert_string_equal(il_disk_name(IL_MKDEV(253, 0), buf, sizeof(buf)), "dm-0");
	put("devices/sda/uevent", "MAJOR=8\nMINOR=0\nDEVNAME=sdz\n");
	put("devices/vda/uevent", "MAJOR=254\nMINOR=0\nDEVNAME=vdz\n");
	put("devices/loop1/uevent", "MAJOR=7\nMINOR=1\nDEVNAME=loopz\n");
	fake_ns += 500000000ULL;
	for (int i = 0; i < 3; i++) {
		assert_string_equal(il_disk_name(IL_MKDEV(7, 1), buf, sizeof(buf)), "loop1");
		assert_string_equal(il_disk_name(IL_MKDEV(254, 0), buf, sizeof(buf)), "vda");
		assert_string_equal(il_disk_name(IL_MKDEV(253, 0), buf, sizeof(buf)), "dm-0");
		assert_string_equal(il_disk_name(IL_MKDEV(8, 1), buf, sizeof(buf)), "sda1");
		assert_string_equal(il_disk_name(IL_MKDEV(8, 0), buf, sizeof(buf)), "sda");
	}
	fake_ns += 500000000ULL;
	assert_string_equal(il_disk_name(IL_MKDEV(8, 0), buf, sizeof(buf)), "sdz");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_proc),
		cmocka_unit_test_setup_teardown(test_path_and_vanished, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rewalk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_throttle_rule, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exited_process, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disk_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disk_cache, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disk_cache_many, setup, teardown),
	};

	il_log_init("test_cgroup", 0);
	return cmocka_run_group_tests_name("cgroup and disk", tests, NULL, NULL);
}
