/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Disks, in one place: a block device's name from its dev (major << 20 | minor, the kernel's
 * encoding as BPF reads it; IL_DEV_MAJOR/IL_DEV_MINOR in util.h) and back, the whole disk of a
 * partition, whether a disk is bio-based. All from sysfs (/sys/dev/block, /sys/class/block,
 * /sys/block). Prefix il_disk_.
 *
 * One cache: what sysfs said of a dev (its name, its whole disk) is kept a second, in 64
 * slots, so row printers can name a disk per row (biosnoop, tens of thousands a second); a
 * dev that changes hands is seen within the second.
 *
 * Threading: every function may be called from any thread: one mutex inside guards the
 * cache. il_disk_test_use() excepted: before any other call.
 */
#ifndef IOLAYER_DISK_H
#define IOLAYER_DISK_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* The name of block device dev ("loop0", "nvme0n1p1") into buf, from its uevent's DEVNAME;
 * "MAJ:MIN" when sysfs does not know it. Returns buf. */
const char *il_disk_name(__u32 dev, char *buf, size_t len);

/* The whole disk of block device dev: a partition's disk; dev itself for a disk, and when
 * sysfs does not say. */
__u32 il_disk_whole(__u32 dev);

/* The name of the whole disk a filesystem whose superblock dev (super_block.s_dev) is dev is
 * on, into buf; "" when dev is no block device (tmpfs, overlayfs, ...). Returns buf. */
const char *il_disk_fs_name(__u32 dev, char *buf, size_t len);

/* dev of a block device named `name` ("sda" or "/dev/sda"). 0, or -1 when no such disk. */
int il_disk_dev(const char *name, __u32 *dev);

/* 1 when the block device named `name` ("sda1" or "/dev/sda1") is a partition
 * (/sys/class/block/NAME/partition exists), else 0. */
int il_disk_is_partition(const char *name);

/* A bio-based disk (no blk-mq: dm, md, ...; /sys/block/NAME/mq is missing): its bios never
 * become requests. dev may be a partition: its disk is looked at. */
bool il_disk_bio_based(__u32 dev);

/* Whether any disk of this machine is bio-based. */
bool il_disk_any_bio_based(void);

/* For unit tests, before any other call: read sysfs under sys instead of /sys (NULL: /sys),
 * and take now_ns() as the cache's clock (NULL: CLOCK_MONOTONIC). Empties the cache. */
void il_disk_test_use(const char *sys, unsigned long long (*now_ns)(void));

#endif
