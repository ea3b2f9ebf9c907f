/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The mount table (/proc/self/mountinfo), read in one place: where a filesystem is mounted,
 * which filesystem holds a path, which filesystem types are mounted, where a type with an
 * option is (the cgroup hierarchies: cgroup.c). Not thread-safe: call from one thread at a
 * time. */
#ifndef IOLAYER_MOUNTS_H
#define IOLAYER_MOUNTS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* Mount point of the root of the filesystem whose superblock dev is dev (kernel encoding,
 * major << 20 | minor, as BPF reads sb->s_dev), the first such mount; NULL when none. The
 * table is re-read at most once per second on a miss (a filesystem mounted after start). */
const char *il_mount_of(__u32 dev);

/* Mount point of the mount whose id (mountinfo's first field, struct mount.mnt_id) is id;
 * NULL when there is none in this process's mount namespace, or id is 0. Re-read like
 * il_mount_of(). */
const char *il_mount_by_id(__u32 id);

/* Superblock dev of the filesystem holding path: the mount whose mount point is the longest
 * prefix of its real path (the last such mount wins). On btrfs this differs from stat's
 * st_dev, which names the subvolume. 0, or -1 when path cannot be resolved. */
int il_mount_dev_of(const char *path, __u32 *dev);

/* True when a filesystem of type `type` ("ext4") is mounted. */
bool il_fs_mounted(const char *type);

/* Mount point of the first mount of filesystem type `type` ("cgroup2") whose superblock
 * options include opt ("blkio"; NULL: any), copied into buf; NULL when there is none. */
const char *il_mount_of_type(const char *type, const char *opt, char *buf, size_t len);

/* Undo mountinfo's octal escapes (\040 for space, ...) in place. */
void il_mount_unescape(char *s);

#endif
