/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A file's path from its dentry, for the layers' events (types in bpf/lib/path.h).
 * bpf_d_path() would give the whole path, but tracepoint programs may not call it, so the
 * names are gathered by following dentry.d_parent (include/linux/dcache.h), in one bounded
 * loop of IL_PATH_DEPTH steps that every verifier from 5.10 on accepts.
 * Include after lib/common.bpf.h.
 */
#ifndef IOLAYER_PATH_BPF_H
#define IOLAYER_PATH_BPF_H

#include "lib/path.h"

/* d_unlinked(): the dentry was unhashed (unlink, rmdir, or the target of a rename) and is
 * not a root. This is the test the kernel's d_path() uses for its " (deleted)", so the
 * mark agrees with /proc/PID/fd. i_nlink == 0 would miss the name of a file that has
 * another link left, and says nothing about which name is gone. */
static __always_inline bool il_dentry_unlinked(struct dentry *d)
{
	return !BPF_CORE_READ(d, d_hash.pprev) && BPF_CORE_READ(d, d_parent) != d;
}

/*
 * Fill p and names[IL_PATH_NAMES] with the names from dentry d up to the root of mount mnt
 * (mnt->mnt_root), or up to the filesystem's root (d->d_sb->s_root) when mnt is NULL. A walk
 * that ends anywhere else (deeper than IL_PATH_DEPTH, an unreadable name, a dentry moved out
 * of a bind mount, a disconnected dentry) is marked IL_PATH_DEEPER. d NULL: IL_PATH_NONE.
 */
static __always_inline void il_path_fill(struct il_path *p, char *names, struct dentry *d,
					 struct vfsmount *mnt)
{
	struct dentry *stop, *sb_root;
	__u32 off = 0;
	int i;

	p->mnt_id = 0;
	p->len = 0;
	p->depth = 0;
	p->flags = 0;
	if (!d) {
		p->flags = IL_PATH_NONE;
		return;
	}
	sb_root = BPF_CORE_READ(d, d_sb, s_root);
	stop = sb_root;
	if (mnt) {
		/* struct mount (fs/mount.h) holds the vfsmount the file points at */
		struct mount *m = (void *)mnt - bpf_core_field_offset(struct mount, mnt);

		p->mnt_id = BPF_CORE_READ(m, mnt_id);
		stop = BPF_CORE_READ(mnt, mnt_root);
		if (stop != sb_root)
			p->flags |= IL_PATH_MNT_SUBDIR;
	}
	if (il_dentry_unlinked(d))
		p->flags |= IL_PATH_DELETED;
	for (i = 0; i < IL_PATH_DEPTH; i++) {
		struct dentry *parent;
		long n;

		if (d == stop)
			break;
		parent = BPF_CORE_READ(d, d_parent);
		if (!parent || parent == d)
			break; /* a root that is not stop's: marked below */
		n = bpf_probe_read_kernel_str(names + (off & (IL_PATH_BUF - 1)), IL_NAME_MAX,
					      BPF_CORE_READ(d, d_name.name));
		if (n <= 0)
			break;
		off += n;
		p->depth = i + 1;
		d = parent;
	}
	if (d != stop)
		p->flags |= IL_PATH_DEEPER;
	p->len = off > IL_PATH_BUF ? IL_PATH_BUF : off;
}

/* The bytes of an event whose names[] start at names_off, with the path p in it: a bound
 * the verifier can see (bpf_ringbuf_output() takes a variable size only when bounded). */
static __always_inline __u32 il_path_event_size(__u32 names_off, const struct il_path *p)
{
	__u32 len = p->len;

	if (len > IL_PATH_BUF)
		len = IL_PATH_BUF;
	return names_off + len;
}

#endif /* IOLAYER_PATH_BPF_H */
