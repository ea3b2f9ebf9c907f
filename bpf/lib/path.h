/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The path of a file as the layers send it (bpf/lib/path.bpf.h fills it, user/lib/path.c
 * prints it): the names of the dentries from the file's own up to the root of its mount
 * (or of its filesystem where no mount is known, as in writeback), each in full (NAME_MAX,
 * 255 bytes), at most IL_PATH_DEPTH of them. Fixed-width types only.
 */
#ifndef IOLAYER_PATH_H
#define IOLAYER_PATH_H

#include "lib/shared.h"

#define IL_PATH_DEPTH 16   /* components sent; a deeper file's path starts with "..." */
#define IL_NAME_MAX 256    /* one component: NAME_MAX (255) bytes and its NUL */
#define IL_PATH_BUF (IL_PATH_DEPTH * IL_NAME_MAX) /* 4096: room for every component in full */
/* names[] of an event: IL_PATH_BUF, and one more component's room so that the BPF side can
 * write at an offset it masks with IL_PATH_BUF - 1 (verifiers of 5.10 need a bound they can
 * see); only il_path.len bytes of it are sent. */
#define IL_PATH_NAMES (IL_PATH_BUF + IL_NAME_MAX)

/* il_path.flags */
#define IL_PATH_DEEPER 0x1     /* the walk stopped before the mount's root: more components above
				* (past IL_PATH_DEPTH, or a name that could not be read) */
#define IL_PATH_DELETED 0x2    /* unlinked: the file's dentry is unhashed (d_unlinked()) */
#define IL_PATH_MNT_SUBDIR 0x4 /* the mount's root is a directory inside the filesystem (bind
				* mount, btrfs subvolume): only that mount's point may prefix it */
#define IL_PATH_NONE 0x8       /* no dentry known (writeback of an inode with no alias) */

/* The header of a path; its names follow in the event (names[], NUL-terminated each, the
 * file's own name first). */
struct il_path {
	__u32 mnt_id;  /* the mount's id (mountinfo's first field); 0 when unknown */
	__u16 len;     /* bytes of names[] used, NULs included */
	__u8 depth;    /* components in names[], 0..IL_PATH_DEPTH (0: the mount's root itself) */
	__u8 flags;    /* IL_PATH_* */
};

#endif /* IOLAYER_PATH_H */
