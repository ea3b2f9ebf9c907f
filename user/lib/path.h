/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A file's path as the layers' events carry it (bpf/lib/path.h), as one string. */
#ifndef IOLAYER_PATH_USER_H
#define IOLAYER_PATH_USER_H

#include <limits.h>
#include <stddef.h>
#include <linux/types.h>
#include "lib/path.h"

/* Room for any result of il_path_str(): a mount point, every component, the marks. */
#define IL_PATH_STR_MAX (PATH_MAX + IL_PATH_BUF + 64)

/*
 * The path of p (names: the names[] that came with it, nbytes of them received) into buf:
 * the mount point (of mount p->mnt_id, else, unless IL_PATH_MNT_SUBDIR, of the root of
 * filesystem dev) and the names from the top down, "/" between them. It starts with "..."
 * when the walk stopped short (IL_PATH_DEEPER) or the mount point is not in this mount
 * namespace, and ends with " (deleted)" when the file was unlinked, as the kernel's d_path()
 * writes it. "[inode INO]" for a mount's root whose mount point is unknown; "" for
 * IL_PATH_NONE. The bytes of the names are copied as they are (escape them for output).
 * Returns buf.
 */
const char *il_path_str(const struct il_path *p, const char *names, size_t nbytes, __u32 dev,
			__u64 ino, char *buf, size_t len);

#endif
