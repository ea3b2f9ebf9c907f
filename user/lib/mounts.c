/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "log.h"
#include "mounts.h"
#include "run.h"
#include "util.h"

/* One line of mountinfo: "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS ... - TYPE SOURCE SUPER". */
struct mnt {
	__u32 id;
	__u32 dev;
	char *root, *point, *type, *opts; /* opts: the superblock's options (the last field) */
};

static struct mnt *mnts;
static int nmnts;

void il_mount_unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '7' && s[2] && s[3]) {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
}

static void load(void)
{
	char line[8192], root[PATH_MAX], point[PATH_MAX], type[64], opts[1024];
	FILE *f = fopen("/proc/self/mountinfo", "re");

	for (int i = 0; i < nmnts; i++) {
		free(mnts[i].root);
		free(mnts[i].point);
		free(mnts[i].type);
		free(mnts[i].opts);
	}
	nmnts = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		const char *dash = strstr(line, " - ");
		unsigned id, ma, mi;
		struct mnt *n;

		if (!dash || sscanf(line, "%u %*d %u:%u %4095s %4095s", &id, &ma, &mi, root, point) != 5 ||
		    sscanf(dash, " - %63s", type) != 1)
			continue;
		if (sscanf(dash, " - %*s %*s %1023s", opts) != 1)
			opts[0] = 0;
		if (!(n = realloc(mnts, (nmnts + 1) * sizeof(*mnts)))) {
			il_err("out of memory reading the mount table: some paths are not known");
			break;
		}
		mnts = n;
		il_mount_unescape(root);
		il_mount_unescape(point);
		n = &mnts[nmnts];
		*n = (struct mnt){ id, IL_MKDEV(ma, mi), strdup(root), strdup(point), strdup(type), strdup(opts) };
		if (!n->root || !n->point || !n->type || !n->opts) {
			free(n->root);
			free(n->point);
			free(n->type);
			free(n->opts);
			il_err("out of memory reading the mount table: some paths are not known");
			break;
		}
		nmnts++;
	}
	fclose(f);
}

static void ensure_loaded(void)
{
	static bool done;

	if (!done) {
		load();
		done = true;
	}
}

/* The mount point of the first mount that match() accepts; the table is re-read at most once
 * per second on a miss (a filesystem mounted after start). */
static const char *find_mount(bool (*match)(const struct mnt *m, __u32 key), __u32 key)
{
	static unsigned long long last;

	ensure_loaded();
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < nmnts; i++)
			if (match(&mnts[i], key))
				return mnts[i].point;
		if (pass || il_now_ns() - last < 1000000000ULL)
			break;
		last = il_now_ns();
		load();
	}
	return NULL;
}

static bool is_root_of(const struct mnt *m, __u32 dev)
{
	return m->dev == dev && !strcmp(m->root, "/");
}

static bool has_id(const struct mnt *m, __u32 id)
{
	return m->id == id;
}

const char *il_mount_of(__u32 dev)
{
	return find_mount(is_root_of, dev);
}

const char *il_mount_by_id(__u32 id)
{
	return id ? find_mount(has_id, id) : NULL;
}

int il_mount_dev_of(const char *path, __u32 *dev)
{
	char real[PATH_MAX];
	size_t best = 0;
	int found = -1;

	if (!realpath(path, real))
		return -1;
	load(); /* the path may be on a filesystem mounted a moment ago */
	for (int i = 0; i < nmnts; i++) {
		const char *mp = mnts[i].point;
		size_t n = strlen(mp);

		if (strcmp(mp, "/") && (strncmp(real, mp, n) || (real[n] && real[n] != '/')))
			continue;
		if (n >= best) {
			best = n;
			*dev = mnts[i].dev;
			found = 0;
		}
	}
	return found;
}

bool il_fs_mounted(const char *type)
{
	ensure_loaded();
	for (int i = 0; i < nmnts; i++)
		if (!strcmp(mnts[i].type, type))
			return true;
	return false;
}

/* Is opt one of the comma-separated options of opts? */
static bool has_option(const char *opts, const char *opt)
{
	size_t n = strlen(opt);

	for (const char *o = opts; *o; o += strcspn(o, ","), o += *o == ',')
		if (!strncmp(o, opt, n) && (o[n] == ',' || !o[n]))
			return true;
	return false;
}

const char *il_mount_of_type(const char *type, const char *opt, char *buf, size_t len)
{
	ensure_loaded();
	for (int i = 0; i < nmnts; i++) {
		if (strcmp(mnts[i].type, type) || (opt && !has_option(mnts[i].opts, opt)))
			continue;
		snprintf(buf, len, "%s", mnts[i].point);
		return buf;
	}
	return NULL;
}
