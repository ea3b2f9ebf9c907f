/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Disks: names, whole disks, bio-based or not, from sysfs (disk.h). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "disk.h"
#include "run.h"
#include "util.h"

#define TTL_NS 1000000000ULL
#define SLOTS 64

static char sys[PATH_MAX] = "/sys";
static unsigned long long (*clock_ns)(void) = il_now_ns;

/* What sysfs said of one dev, and when (0: empty slot). */
struct entry {
	unsigned long long at;
	__u32 dev, whole;
	bool blk;        /* /sys/dev/block/MAJ:MIN exists */
	char name[32];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry cache[SLOTS];

void il_disk_test_use(const char *s, unsigned long long (*now_ns)(void))
{
	snprintf(sys, sizeof(sys), "%s", s ? s : "/sys");
	clock_ns = now_ns ? now_ns : il_now_ns;
	memset(cache, 0, sizeof(cache));
}

/* The DEVNAME of dev's uevent into buf, "MAJ:MIN" when there is none. */
static void read_name(__u32 dev, char *buf, size_t len)
{
	char path[PATH_MAX + 64], line[256];
	FILE *f;

	snprintf(buf, len, "%u:%u", IL_DEV_MAJOR(dev), IL_DEV_MINOR(dev));
	snprintf(path, sizeof(path), "%s/dev/block/%u:%u/uevent", sys, IL_DEV_MAJOR(dev),
		 IL_DEV_MINOR(dev));
	if (!(f = fopen(path, "re")))
		return;
	while (fgets(line, sizeof(line), f)) {
		size_t n = strcspn(line + 8, "\n");

		if (strncmp(line, "DEVNAME=", 8))
			continue;
		n = n < len ? n : len - 1;
		memcpy(buf, line + 8, n);
		buf[n] = 0;
		break;
	}
	fclose(f);
}

/* A partition's directory sits in its disk's: the disk's dev is in the parent's dev file. */
static __u32 read_whole(__u32 dev)
{
	char path[PATH_MAX + 64], real[PATH_MAX], devf[PATH_MAX + 8], num[32];
	unsigned ma, mi;
	FILE *f;

	snprintf(path, sizeof(path), "%s/dev/block/%u:%u/partition", sys, IL_DEV_MAJOR(dev),
		 IL_DEV_MINOR(dev));
	if (access(path, F_OK))
		return dev;
	snprintf(path, sizeof(path), "%s/dev/block/%u:%u", sys, IL_DEV_MAJOR(dev), IL_DEV_MINOR(dev));
	if (!realpath(path, real))
		return dev;
	*strrchr(real, '/') = 0;
	snprintf(devf, sizeof(devf), "%s/dev", real);
	if (!(f = fopen(devf, "re")))
		return dev;
	if (fgets(num, sizeof(num), f) && sscanf(num, "%u:%u", &ma, &mi) == 2)
		dev = IL_MKDEV(ma, mi);
	fclose(f);
	return dev;
}

/* dev's entry into *e: from the cache when younger than TTL_NS, else read from sysfs (outside
 * the lock) and cached. */
/* The slot of dev in the cache: its own, else an empty one, else the oldest. (A hash of
 * dev picked one slot once, and put loop1, vda and 0:3 all in slot 54: each evicted the
 * other, and a scrape read sysfs 23 times a disk.) Under lock. */
static struct entry *slot_of(__u32 dev)
{
	struct entry *old = &cache[0];

	for (int i = 0; i < SLOTS; i++) {
		if (cache[i].at && cache[i].dev == dev)
			return &cache[i];
		if (cache[i].at < old->at)
			old = &cache[i];
	}
	return old;
}

static void get(__u32 dev, struct entry *e)
{
	struct entry *slot;
	char path[PATH_MAX + 64];
	unsigned long long now = clock_ns();

	pthread_mutex_lock(&lock);
	*e = *slot_of(dev);
	pthread_mutex_unlock(&lock);
	if (e->at && e->dev == dev && now - e->at < TTL_NS)
		return;
	snprintf(path, sizeof(path), "%s/dev/block/%u:%u", sys, IL_DEV_MAJOR(dev), IL_DEV_MINOR(dev));
	e->at = now ? now : 1;
	e->dev = dev;
	e->blk = !access(path, F_OK);
	read_name(dev, e->name, sizeof(e->name));
	e->whole = e->blk ? read_whole(dev) : dev;
	pthread_mutex_lock(&lock);
	slot = slot_of(dev); /* again: another thread may have filled one meanwhile */
	*slot = *e;
	pthread_mutex_unlock(&lock);
}

const char *il_disk_name(__u32 dev, char *buf, size_t len)
{
	struct entry e;

	get(dev, &e);
	snprintf(buf, len, "%s", e.name);
	return buf;
}

__u32 il_disk_whole(__u32 dev)
{
	struct entry e;

	get(dev, &e);
	return e.whole;
}

const char *il_disk_fs_name(__u32 dev, char *buf, size_t len)
{
	struct entry e;

	get(dev, &e);
	buf[0] = 0;
	if (e.blk)
		il_disk_name(e.whole, buf, len);
	return buf;
}

int il_disk_dev(const char *name, __u32 *dev)
{
	char path[PATH_MAX + 320];
	unsigned ma, mi;
	FILE *f;
	int n;

	if (!strncmp(name, "/dev/", 5))
		name += 5;
	if (!*name || strchr(name, '/'))
		return -1;
	snprintf(path, sizeof(path), "%s/class/block/%s/dev", sys, name);
	if (!(f = fopen(path, "re")))
		return -1;
	n = fscanf(f, "%u:%u", &ma, &mi);
	fclose(f);
	if (n != 2)
		return -1;
	*dev = IL_MKDEV(ma, mi);
	return 0;
}

int il_disk_is_partition(const char *name)
{
	char path[PATH_MAX + 320];

	if (!strncmp(name, "/dev/", 5))
		name += 5;
	if (!*name || strchr(name, '/'))
		return 0;
	snprintf(path, sizeof(path), "%s/class/block/%s/partition", sys, name);
	return !access(path, F_OK);
}

/* No mq directory where there should be one: a bio-based disk. */
static bool no_mq(const char *dir)
{
	char path[PATH_MAX + 400];
	struct stat st;

	snprintf(path, sizeof(path), "%s/mq", dir);
	return stat(path, &st) != 0 && errno == ENOENT;
}

bool il_disk_bio_based(__u32 dev)
{
	char dir[PATH_MAX + 64];
	__u32 d = il_disk_whole(dev);

	snprintf(dir, sizeof(dir), "%s/dev/block/%u:%u", sys, IL_DEV_MAJOR(d), IL_DEV_MINOR(d));
	return no_mq(dir);
}

bool il_disk_any_bio_based(void)
{
	char dir[PATH_MAX + 320];
	struct dirent *de;
	bool any = false;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/block", sys);
	d = opendir(dir);
	while (d && !any && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(dir, sizeof(dir), "%s/block/%s", sys, de->d_name);
		any = no_mq(dir);
	}
	if (d)
		closedir(d);
	return any;
}
