/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* --cgroup: a cgroup and its descendants as the tracing filter (cgfilter.h). */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "bpfobj.h"
#include "cgfilter.h"
#include "cgident.h"
#include "cgroup.h"
#include "escape.h"
#include "log.h"
#include "run.h"

static struct il_cgfilter the_filter;
static bool have_filter;

/* nftw's state for finding containers by id prefix, and counting processes (one walk at a
 * time, at start-up). */
static const char *walk_root, *walk_prefix;
static size_t walk_rootlen, walk_found;
static char walk_first[PATH_MAX], walk_second[PATH_MAX];
static unsigned walk_procs;

static int find_container(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	const char *rel = path[walk_rootlen] ? path + walk_rootlen : "/";

	(void)st;
	(void)ftw;
	const char *base = strrchr(rel, '/') + 1;

	if (type == FTW_D && (il_cgident_dir_is_container(rel, walk_prefix) || !strcmp(base, walk_prefix))) {
		snprintf(walk_found ? walk_second : walk_first, PATH_MAX, "%s", rel);
		walk_found++;
	}
	return 0;
}

/* rel: "/" + its components, each neither "." nor ".." nor empty, into out; their number. -1
 * when a component is "." or "..". */
static int normalize(const char *rel, char *out, size_t len)
{
	size_t o = 0;
	int depth = 0;

	out[0] = 0;
	for (const char *c = rel; *c;) {
		size_t n;

		while (*c == '/')
			c++;
		if (!(n = strcspn(c, "/")))
			break;
		if ((n == 1 && c[0] == '.') || (n == 2 && !strncmp(c, "..", 2)))
			return -1;
		if (o + n + 2 > len)
			return -1;
		out[o++] = '/';
		memcpy(out + o, c, n);
		o += n;
		out[o] = 0;
		depth++;
		c += n;
	}
	if (!o)
		snprintf(out, len, "/");
	return depth;
}

int il_cgfilter_resolve(const char *arg, struct il_cgfilter *f, char *err, size_t errlen)
{
	char root[PATH_MAX], full[2 * PATH_MAX];
	size_t rl;
	struct stat st;
	bool v1;
	int depth;
	const char *rel = arg;

	memset(f, 0, sizeof(*f));
	if (!il_cgroup_root(root, sizeof(root), &v1)) {
		snprintf(err, errlen, "no cgroup hierarchy is mounted (neither v1 blkio nor cgroup2)");
		return -1;
	}
	rl = strlen(root);
	if (!strncmp(arg, "cgroup:", 7)) { /* by id, as tools print a cgroup they cannot name */
		__u64 id;

		if (il_cgroup_id(arg, &id) || il_cgroup_path(id, 0, full, sizeof(full))[0] != '/') {
			snprintf(err, errlen, "no cgroup '%s' in %s", arg, root);
			return -1;
		}
		return il_cgfilter_resolve(full, f, err, errlen);
	}
	if (!arg[0]) {
		snprintf(err, errlen, "the cgroup is empty (a path in %s, or a container id)", root);
		return -1;
	}
	if (!strncmp(arg, root, rl) && (arg[rl] == '/' || !arg[rl]))
		rel = arg + rl;
	if ((depth = normalize(rel, f->path, sizeof(f->path))) < 0) {
		snprintf(err, errlen, "bad cgroup '%s': a path in %s without '.' or '..'", arg, root);
		return -1;
	}
	snprintf(full, sizeof(full), "%s%s", root, strcmp(f->path, "/") ? f->path : "");
	if (stat(full, &st) || !S_ISDIR(st.st_mode)) {
		if (strchr(arg, '/')) {
			if (arg[0] == '/' && !stat(arg, &st) && S_ISDIR(st.st_mode))
				snprintf(err, errlen, "'%s' is not in the io controller's cgroup hierarchy, %s",
					 arg, root);
			else
				snprintf(err, errlen, "no cgroup '%s' in %s (a path there, or a container id)",
					 arg, root);
			return -1;
		}
		walk_root = root;
		walk_rootlen = rl;
		walk_prefix = arg;
		walk_found = 0;
		nftw(root, find_container, 16, FTW_PHYS | FTW_MOUNT);
		if (walk_found != 1) {
			if (walk_found)
				snprintf(err, errlen, "'%s' is not unique: %zu cgroups (%s, %s%s)",
					 arg, walk_found, walk_first, walk_second, walk_found > 2 ? ", ..." : "");
			else
				snprintf(err, errlen, "no cgroup, container or unit '%s' in %s", arg, root);
			return -1;
		}
		depth = normalize(walk_first, f->path, sizeof(f->path));
		snprintf(full, sizeof(full), "%s%s", root, f->path);
		if (stat(full, &st)) {
			snprintf(err, errlen, "container '%s' went away (%s)", arg, f->path);
			return -1;
		}
	}
	f->cfg.id = st.st_ino;
	f->cfg.level = depth;
	f->cfg.v1 = v1;
	return 0;
}

const struct il_cgfilter *il_cgfilter_get(void)
{
	return have_filter ? &the_filter : NULL;
}

/* The filter's directory in the mounted hierarchy and its inode then, for il_cgfilter_gone(). */
static char the_dir[2 * PATH_MAX];
static ino_t the_ino;

void il_cgfilter_set(const struct il_cgfilter *f)
{
	char root[PATH_MAX];
	struct stat st;

	the_filter = *f;
	have_filter = true;
	the_dir[0] = 0;
	if (il_cgroup_root(root, sizeof(root), NULL) &&
	    (size_t)snprintf(the_dir, sizeof(the_dir), "%s%s", root,
			     strcmp(f->path, "/") ? f->path : "") < sizeof(the_dir) &&
	    !stat(the_dir, &st))
		the_ino = st.st_ino;
	else
		the_dir[0] = 0;
}

bool il_cgfilter_gone(void)
{
	static unsigned long long last;
	unsigned long long now = il_now_ns();
	struct stat st;

	if (!have_filter || !the_dir[0] || now - last < 500000000ULL) /* twice a second at most */
		return false;
	last = now;
	if (!stat(the_dir, &st) ? st.st_ino == the_ino : errno != ENOENT)
		return false;
	il_warn("cgroup %s was removed", the_dir);
	return true;
}

void il_cgfilter_apply(struct bpf_object *obj)
{
	struct il_cg_cfg *c;

	if (have_filter && (c = il_obj_rodata(obj, "il_cg_cfg", sizeof(*c))))
		*c = the_filter.cfg;
}

static int count_procs(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	char file[PATH_MAX + 16];
	unsigned pid;
	FILE *f;

	(void)st;
	(void)ftw;
	if (type != FTW_D)
		return 0;
	snprintf(file, sizeof(file), "%s/cgroup.procs", path);
	if (!(f = fopen(file, "re")))
		return 0;
	while (fscanf(f, "%u", &pid) == 1)
		walk_procs++;
	fclose(f);
	return 0;
}

unsigned il_cgfilter_nprocs(void)
{
	char root[PATH_MAX], full[2 * PATH_MAX];

	if (!have_filter || !il_cgroup_root(root, sizeof(root), NULL))
		return 0;
	snprintf(full, sizeof(full), "%s%s", root, strcmp(the_filter.path, "/") ? the_filter.path : "");
	walk_procs = 0;
	nftw(full, count_procs, 16, FTW_PHYS | FTW_MOUNT);
	return walk_procs;
}

const char *il_cgfilter_describe(char *buf, size_t len)
{
	char path[4 * PATH_MAX], name[PATH_MAX], ename[4 * PATH_MAX], who[4 * PATH_MAX + 8] = "";
	unsigned n;

	buf[0] = 0;
	if (!have_filter)
		return buf;
	n = il_cgfilter_nprocs();
	il_text_escape(the_filter.path, sizeof(the_filter.path), path, sizeof(path));
	il_cgident_short_of(the_filter.path, name, sizeof(name));
	if (strcmp(name, the_filter.path) && strcmp(name, strrchr(the_filter.path, '/') + 1))
		snprintf(who, sizeof(who), " (%s)", il_text_escape(name, sizeof(name), ename, sizeof(ename)));
	if (n)
		snprintf(buf, len, "Only cgroup %s%s and those below it: %u process%s now", path, who, n,
			 n == 1 ? "" : "es");
	else
		snprintf(buf, len, "Only cgroup %s%s and those below it: no process now (those that join "
			 "it will be traced)", path, who);
	return buf;
}
