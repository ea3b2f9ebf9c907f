/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#include <stdio.h>
#include <string.h>
#include "mounts.h"
#include "path.h"

/* Append s (n bytes) to buf at *pos, cut at len - 1; buf stays NUL-terminated. */
static void put(char *buf, size_t len, size_t *pos, const char *s, size_t n)
{
	if (*pos + 1 >= len)
		return;
	if (n > len - 1 - *pos)
		n = len - 1 - *pos;
	memcpy(buf + *pos, s, n);
	*pos += n;
	buf[*pos] = 0;
}

const char *il_path_str(const struct il_path *p, const char *names, size_t nbytes, __u32 dev,
			__u64 ino, char *buf, size_t len)
{
	size_t offs[IL_PATH_DEPTH], lens[IL_PATH_DEPTH], at = 0, pos = 0;
	const char *mp = NULL;
	int depth = 0;

	if (!len)
		return buf;
	buf[0] = 0;
	if (p->flags & IL_PATH_NONE)
		return buf;
	if (nbytes > p->len)
		nbytes = p->len;
	/* names[]: the file's own name first, each ending in NUL */
	while (depth < p->depth && depth < IL_PATH_DEPTH && at < nbytes) {
		const char *nul = memchr(names + at, 0, nbytes - at);
		size_t n = nul ? (size_t)(nul - (names + at)) : nbytes - at;

		offs[depth] = at;
		lens[depth++] = n;
		at += n + 1;
	}
	if (!(p->flags & IL_PATH_DEEPER)) {
		mp = il_mount_by_id(p->mnt_id);
		if (!mp && !(p->flags & IL_PATH_MNT_SUBDIR))
			mp = il_mount_of(dev);
	}
	if (!depth && mp) {
		put(buf, len, &pos, mp, strlen(mp));
	} else if (!depth) {
		snprintf(buf, len, "[inode %llu]", (unsigned long long)ino);
		pos = strlen(buf);
	} else if (!mp) {
		put(buf, len, &pos, "...", 3);
	} else if (strcmp(mp, "/")) {
		put(buf, len, &pos, mp, strlen(mp));
	}
	for (int i = depth - 1; i >= 0; i--) {
		put(buf, len, &pos, "/", 1);
		put(buf, len, &pos, names + offs[i], lens[i]);
	}
	if (p->flags & IL_PATH_DELETED)
		put(buf, len, &pos, " (deleted)", 10);
	return buf;
}
