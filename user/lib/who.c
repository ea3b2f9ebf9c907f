/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Attribution's user side (see layers.h; kernel side bpf/lib/who.bpf.h). */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include "bpfobj.h"
#include "btf.h"
#include "layers/who.h"
#include "log.h"
#include "mounts.h"
#include "util.h"

static const char *const who_maps[WHO_MAP__MAX] = { "who_procs", "who_files", "who_pd" };

void il_who_enable(struct bpf_object *obj)
{
	struct who_cfg *c = il_obj_rodata_must(obj, "who_cfg", sizeof(*c));

	static const __u32 sizes[WHO_MAP__MAX] = { WHO_MAX_PROCS, WHO_MAX_FILES, WHO_MAX_PROC_DISKS };

	c->on = 1;
	c->bio_two_args = il_btf_tp_nargs("block_bio_queue") == 2;
	for (int i = 0; i < WHO_MAP__MAX; i++) {
		struct bpf_map *m = bpf_object__find_map_by_name(obj, who_maps[i]);

		if (m)
			bpf_map__set_max_entries(m, sizes[i]);
	}
}

void il_who_default(struct bpf_object *obj)
{
	struct who_cfg *c = il_obj_rodata(obj, "who_cfg", sizeof(*c));

	if (!c || c->on)
		return;
	for (int i = 0; i < WHO_MAP__MAX; i++) {
		struct bpf_map *m = bpf_object__find_map_by_name(obj, who_maps[i]);

		if (m)
			bpf_map__set_max_entries(m, 1);
	}
}

void il_who_plan(struct bpf_object *obj, struct il_plan *p)
{
	il_plan_tp_twins(p, obj, "block submissions (who)", "who_bio_btf", "who_bio_raw",
			 "block:block_bio_queue");
}

/* Read every entry of map `name` (key size ksz, value size vsz) into a malloc'ed array of
 * rows of rsz bytes, key first at offset 0 and value at voff. Returns the count, or -errno. */
static int read_map(struct bpf_object *obj, const char *name, size_t ksz, size_t vsz, size_t rsz,
		    size_t voff, void **out)
{
	int fd = il_obj_map_fd(obj, name), n = 0, cap = 0;
	char key[64], cur[64];
	void *prev = NULL;
	char *rows = NULL;

	*out = NULL;
	if (fd < 0 || ksz > sizeof(key))
		return -ENOENT;
	while (!bpf_map_get_next_key(fd, prev, key)) {
		memcpy(cur, key, ksz);
		prev = cur;
		if (n == cap) {
			char *nr = realloc(rows, (cap = cap ? cap * 2 : 64) * rsz);

			if (!nr) {
				free(rows);
				return -ENOMEM;
			}
			rows = nr;
		}
		memset(rows + n * rsz, 0, rsz);
		memcpy(rows + n * rsz, key, ksz);
		if (!bpf_map_lookup_elem(fd, key, rows + n * rsz + voff))
			n++;
		(void)vsz;
	}
	*out = rows;
	return n;
}

int il_who_read(struct bpf_object *obj, struct il_who *w)
{
	int ncpu = libbpf_num_possible_cpus(), fd = il_obj_map_fd(obj, "who_inserts");
	__u64 *v;

	memset(w, 0, sizeof(*w));
	w->nprocs = read_map(obj, "who_procs", sizeof(__u32), sizeof(struct who_proc),
			     sizeof(struct il_who_proc_row), offsetof(struct il_who_proc_row, v),
			     (void **)&w->procs);
	w->nfiles = read_map(obj, "who_files", sizeof(struct who_file_key), sizeof(struct who_file),
			     sizeof(struct il_who_file_row), offsetof(struct il_who_file_row, v),
			     (void **)&w->files);
	w->npd = read_map(obj, "who_pd", sizeof(struct who_pd_key), sizeof(struct who_pd),
			  sizeof(struct il_who_pd_row), offsetof(struct il_who_pd_row, v),
			  (void **)&w->pd);
	if (w->nprocs < 0 || w->nfiles < 0 || w->npd < 0) {
		int err = w->nprocs < 0 ? w->nprocs : w->nfiles < 0 ? w->nfiles : w->npd;

		il_who_free(w);
		return err;
	}
	if (ncpu > 0 && fd >= 0 && (v = calloc(ncpu, sizeof(*v)))) {
		int present[WHO_MAP__MAX] = { w->nprocs, w->nfiles, w->npd };

		for (__u32 k = 0; k < WHO_MAP__MAX; k++) {
			__u64 ins = 0;

			if (bpf_map_lookup_elem(fd, &k, v))
				continue;
			for (int c = 0; c < ncpu; c++)
				ins += v[c];
			w->evicted[k] = ins > (__u64)present[k] ? ins - present[k] : 0;
		}
		free(v);
	}
	return 0;
}

void il_who_free(struct il_who *w)
{
	free(w->procs);
	free(w->files);
	free(w->pd);
	memset(w, 0, sizeof(*w));
}

/* Is path the file (ino, generation gen)? The inode number must match; for a regular file
 * whose filesystem gives its generation (FS_IOC_GETVERSION: ext4, xfs, btrfs), that too, as
 * a file made after another was deleted may have its number. */
static bool same_file(const char *path, __u64 ino, __u32 gen)
{
	struct stat st;
	unsigned int v;
	bool same = true;
	int fd;

	if (lstat(path, &st) || st.st_ino != ino)
		return false;
	if (!S_ISREG(st.st_mode))
		return true;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return true;
	if (!ioctl(fd, FS_IOC_GETVERSION, &v))
		same = v == gen;
	close(fd);
	return same;
}

/* Names are taken when a file is first seen: a file renamed since (a rotated log, app.log
 * -> app.log.1) is looked for by inode number and generation in the directory it was in,
 * and path in buf becomes its name there now; " (deleted)" is added when it is in neither
 * place. */
static void renamed(char *buf, size_t len, __u64 ino, __u32 gen)
{
	char *slash = strrchr(buf, '/');
	struct dirent *e;
	DIR *d;

	if (same_file(buf, ino, gen))
		return;
	if (slash && slash != buf) {
		*slash = 0;
		d = opendir(buf);
		*slash = '/';
		while (d && (e = readdir(d))) {
			char cand[PATH_MAX];

			if (e->d_ino != ino || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			*slash = 0;
			snprintf(cand, sizeof(cand), "%s/%s", buf, e->d_name);
			*slash = '/';
			if (!same_file(cand, ino, gen))
				continue;
			snprintf(slash + 1, len - (slash + 1 - buf), "%s", e->d_name);
			closedir(d);
			return;
		}
		if (d)
			closedir(d);
	}
	if (strlen(buf) + 11 < len)
		strcat(buf, " (deleted)");
}

const char *il_who_file_path(const struct who_file_key *k, const struct who_file *f, char *buf,
			     size_t len)
{
	const char *mp = il_mount_of(k->dev);
	int depth = f->depth > WHO_PATH_DEPTH ? WHO_PATH_DEPTH : f->depth;
	size_t n = 0;

	buf[0] = 0;
	if (f->rdev) { /* a block device's own page cache: a filesystem's journal and metadata */
		char d[32];

		snprintf(buf, len, "/dev/%s", il_disk_name(f->rdev, d, sizeof(d)));
		return buf;
	}
	if (!depth) { /* the filesystem's root directory, or an inode no name was seen for */
		if (mp && f->names[0][0] == 0 && k->ino == 2)
			snprintf(buf, len, "%s", mp);
		else
			snprintf(buf, len, "[inode %llu on %u:%u]", (unsigned long long)k->ino,
				 IL_DEV_MAJOR(k->dev), IL_DEV_MINOR(k->dev));
		return buf;
	}
	if (f->deeper || !mp)
		n = snprintf(buf, len, "...");
	else if (strcmp(mp, "/"))
		n = snprintf(buf, len, "%s", mp);
	for (int i = depth - 1; i >= 0 && n < len; i--)
		n += snprintf(buf + n, len - n, "/%.*s", WHO_NAME_LEN, f->names[i]);
	if (!f->deeper && mp && n < len)
		renamed(buf, len, k->ino, k->gen);
	return buf;
}

/* Cgroup paths of processes seen alive (il_who_note_procs), for when they have exited. */
static struct { __u32 pid; char *path; } *cg_cache;
static int ncg;

static const char *cg_cached(__u32 pid)
{
	for (int i = 0; i < ncg; i++)
		if (cg_cache[i].pid == pid)
			return cg_cache[i].path;
	return NULL;
}

static const char *cgroup_now(__u32 pid, char *buf, size_t len);

void il_who_note_procs(struct bpf_object *obj)
{
	int fd = il_obj_map_fd(obj, "who_procs");
	__u32 k, cur, *prev = NULL;
	char path[PATH_MAX];

	while (fd >= 0 && !bpf_map_get_next_key(fd, prev, &k)) {
		cur = k;
		prev = &cur;
		if (cg_cached(k) || !strcmp(cgroup_now(k, path, sizeof(path)), "-"))
			continue;
		void *n = realloc(cg_cache, (ncg + 1) * sizeof(*cg_cache));

		if (!n || !(cg_cache = n, cg_cache[ncg].path = strdup(path)))
			{ il_err("out of memory: the cgroups of processes are not noted"); return; }
		cg_cache[ncg++].pid = k;
	}
}

const char *il_who_cgroup_path(__u32 pid, char *buf, size_t len)
{
	const char *c;

	cgroup_now(pid, buf, len);
	if (!strcmp(buf, "-") && (c = cg_cached(pid)))
		snprintf(buf, len, "%s", c);
	return buf;
}

/* Paths of the cgroups, by kernfs id (the inode number of their directory), in the
 * hierarchy of the io controller: the v1 blkio hierarchy where one is mounted, else cgroup2.
 * Read once, when first asked (at the end of tracing). */
static struct cg_dir { __u64 ino; char *path; } *cg_dirs;
static int ncg_dirs, cg_root_len;
static bool cg_v1;

static int cg_walk(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	struct cg_dir *n;

	if (type != FTW_D)
		return 0;
	if (!(n = realloc(cg_dirs, (ncg_dirs + 1) * sizeof(*cg_dirs))) ||
	    !(n[ncg_dirs].path = strdup(path[cg_root_len] ? path + cg_root_len : "/")))
		return il_err("out of memory walking the cgroups"), cg_dirs = n ? n : cg_dirs, -1;
	cg_dirs = n;
	cg_dirs[ncg_dirs++].ino = st->st_ino;
	return 0;
}

static void cg_load(void)
{
	char line[8192], point[PATH_MAX], v1[PATH_MAX] = "", v2[PATH_MAX] = "";
	static bool done;
	FILE *f;

	if (done)
		return;
	done = true;
	if (!(f = fopen("/proc/self/mountinfo", "re")))
		return;
	while (fgets(line, sizeof(line), f)) {
		char type[32], opts[1024], *dash = strstr(line, " - ");

		if (!dash || sscanf(line, "%*d %*d %*s %*s %4095s", point) != 1 ||
		    sscanf(dash, " - %31s %*s %1023s", type, opts) != 2)
			continue;
		il_mount_unescape(point);
		if (!strcmp(type, "cgroup") && !v1[0] &&
		    (!strncmp(opts, "blkio", 5) || strstr(opts, ",blkio")))
			snprintf(v1, sizeof(v1), "%s", point);
		else if (!strcmp(type, "cgroup2") && !v2[0])
			snprintf(v2, sizeof(v2), "%s", point);
	}
	fclose(f);
	cg_v1 = v1[0];
	if (!v1[0] && !v2[0])
		return;
	cg_root_len = strlen(cg_v1 ? v1 : v2);
	nftw(cg_v1 ? v1 : v2, cg_walk, 16, FTW_PHYS | FTW_MOUNT);
}

const char *il_who_proc_cgroup(__u32 pid, const struct who_proc *p, char *buf, size_t len)
{
	__u64 id;

	cg_load();
	id = cg_v1 ? p->io_cgroup_id : p->cgroup_id;
	for (int i = 0; id && i < ncg_dirs; i++) {
		if (cg_dirs[i].ino == id) {
			snprintf(buf, len, "%s", cg_dirs[i].path);
			return buf;
		}
	}
	il_who_cgroup_path(pid, buf, len);
	if (!strcmp(buf, "-") && id)
		snprintf(buf, len, "id:%llu", (unsigned long long)id);
	return buf;
}

static const char *cgroup_now(__u32 pid, char *buf, size_t len)
{
	char path[64], line[PATH_MAX + 64], v2[PATH_MAX] = "";
	FILE *f;

	snprintf(buf, len, "-");
	snprintf(path, sizeof(path), "/proc/%u/cgroup", pid);
	if (!(f = fopen(path, "re")))
		return buf;
	while (fgets(line, sizeof(line), f)) {
		char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;

		if (!b)
			continue;
		b[strcspn(b, "\n")] = 0;
		*b = 0;
		if (!strcmp(a + 1, "blkio") || strstr(a + 1, ",blkio") || !strncmp(a + 1, "blkio,", 6)) {
			snprintf(buf, len, "%s", b + 1);
			fclose(f);
			return buf;
		}
		if (a[1] == 0)
			snprintf(v2, sizeof(v2), "%s", b + 1);
	}
	fclose(f);
	if (v2[0])
		snprintf(buf, len, "%s", v2);
	return buf;
}

__u32 il_whole_disk(__u32 dev)
{
	char path[96], real[PATH_MAX], devf[PATH_MAX + 8], num[32];
	unsigned ma, mi;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/partition", IL_DEV_MAJOR(dev), IL_DEV_MINOR(dev));
	if (access(path, F_OK))
		return dev;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", IL_DEV_MAJOR(dev), IL_DEV_MINOR(dev));
	if (!realpath(path, real))
		return dev;
	*strrchr(real, '/') = 0; /* the partition's directory sits in its disk's */
	snprintf(devf, sizeof(devf), "%s/dev", real);
	if (!(f = fopen(devf, "re")))
		return dev;
	if (fgets(num, sizeof(num), f) && sscanf(num, "%u:%u", &ma, &mi) == 2)
		dev = IL_MKDEV(ma, mi);
	fclose(f);
	return dev;
}
