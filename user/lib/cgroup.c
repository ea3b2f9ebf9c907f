/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Cgroups: the io controller's hierarchy, ids and paths, processes' cgroups (cgroup.h). */
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cgroup.h"
#include "log.h"
#include "mounts.h"
#include "run.h"
#include "util.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* The hierarchy: found once (root_done), "" when none. */
static char root[PATH_MAX];
static bool root_done, root_v1;
static unsigned long long (*clock_ns)(void) = il_now_ns;

/* id -> path (relative to root, "/" for the root) of every cgroup the last walk found. */
static struct cg_dir { __u64 id; char *path; } *dirs;
static size_t ndirs;
static bool walked;
static unsigned long long walked_at;

/* Cgroup paths of processes seen alive (il_cgroup_remember), for after they exit. */
static struct cg_proc { __u32 pid; char *path; } *procs;
static size_t nprocs;

void il_cgroup_test_use(const char *r, bool v1, unsigned long long (*now_ns)(void))
{
	snprintf(root, sizeof(root), "%s", r ? r : "");
	root_done = r != NULL;
	root_v1 = v1;
	clock_ns = now_ns ? now_ns : il_now_ns;
	for (size_t i = 0; i < ndirs; i++)
		free(dirs[i].path);
	ndirs = 0;
	walked = false;
}

/* The root, found when first asked (lock held); NULL when none. */
static const char *root_locked(bool *v1)
{
	if (!root_done) {
		root_done = true;
		root_v1 = il_mount_of_type("cgroup", "blkio", root, sizeof(root)) != NULL;
		if (!root_v1 && !il_mount_of_type("cgroup2", NULL, root, sizeof(root)))
			root[0] = 0;
	}
	if (v1)
		*v1 = root_v1;
	return root[0] ? root : NULL;
}

const char *il_cgroup_root(char *buf, size_t len, bool *v1)
{
	const char *r;

	pthread_mutex_lock(&lock);
	r = root_locked(v1);
	if (r)
		snprintf(buf, len, "%s", r);
	pthread_mutex_unlock(&lock);
	return r ? buf : NULL;
}

bool il_cgroup_v1(void)
{
	bool v1;

	pthread_mutex_lock(&lock);
	root_locked(&v1);
	pthread_mutex_unlock(&lock);
	return v1;
}

/* nftw's callback: one directory of the hierarchy into dirs (lock held). */
static int add_dir(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	size_t rl = strlen(root);
	struct cg_dir *n;

	(void)ftw;
	if (type != FTW_D)
		return 0;
	if (!(n = realloc(dirs, (ndirs + 1) * sizeof(*dirs))) ||
	    !(n[ndirs].path = strdup(path[rl] ? path + rl : "/")))
		il_die("out of memory");
	dirs = n;
	dirs[ndirs++].id = st->st_ino;
	return 0;
}

/* The path of cgroup id among those walked (lock held): walked again on a miss when the last
 * walk is a second old or more. NULL when not found. */
static const char *lookup_locked(__u64 id)
{
	if (!id || !root_locked(NULL))
		return NULL;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < ndirs; i++)
			if (dirs[i].id == id)
				return dirs[i].path;
		if (pass || (walked && clock_ns() - walked_at < 1000000000ULL))
			break;
		for (size_t i = 0; i < ndirs; i++)
			free(dirs[i].path);
		ndirs = 0;
		nftw(root, add_dir, 16, FTW_PHYS | FTW_MOUNT);
		walked = true;
		walked_at = clock_ns();
	}
	return NULL;
}

const char *il_cgroup_path(__u64 id, __u32 pid, char *buf, size_t len)
{
	const char *p;

	pthread_mutex_lock(&lock);
	p = lookup_locked(id);
	if (p)
		snprintf(buf, len, "%s", p);
	pthread_mutex_unlock(&lock);
	if (p || (pid && strcmp(il_cgroup_of_pid(pid, buf, len), "-")))
		return buf;
	if (id)
		snprintf(buf, len, "cgroup:%llu", (unsigned long long)id);
	else
		snprintf(buf, len, "-");
	return buf;
}

int il_cgroup_id(const char *path, __u64 *id)
{
	char r[PATH_MAX], full[PATH_MAX * 2];
	struct stat st;

	if (!strncmp(path, "cgroup:", 7))
		return il_parse_uint(path + 7, "cgroup id", 1, ~0ULL, (unsigned long long *)id) ? -1 : 0;
	if (il_cgroup_root(r, sizeof(r), NULL) && strncmp(path, r, strlen(r)))
		snprintf(full, sizeof(full), "%s%s%s", r, path[0] == '/' ? "" : "/", path);
	else
		snprintf(full, sizeof(full), "%s", path);
	if (stat(full, &st) || !S_ISDIR(st.st_mode))
		return -1;
	*id = st.st_ino;
	return 0;
}

/* Whether controllers (a /proc/PID/cgroup line's list, "cpu,cpuacct") holds ctl. */
static bool has_controller(const char *controllers, const char *ctl)
{
	size_t n = strlen(ctl);

	for (const char *c = controllers; c; c = strchr(c, ',') ? strchr(c, ',') + 1 : NULL)
		if (!strncmp(c, ctl, n) && (c[n] == ',' || !c[n]))
			return true;
	return false;
}

const char *il_cgroup_parse_proc(FILE *f, char *buf, size_t len)
{
	return il_cgroup_parse_proc_of(f, "blkio", buf, len);
}

const char *il_cgroup_parse_proc_of(FILE *f, const char *ctl, char *buf, size_t len)
{
	char line[PATH_MAX + 64], v2[PATH_MAX] = "";

	snprintf(buf, len, "-");
	while (fgets(line, sizeof(line), f)) { /* "ID:CONTROLLERS:PATH", v2's "0::PATH" */
		char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;

		if (!b)
			continue;
		b[strcspn(b, "\n")] = 0;
		*b = 0;
		if (a[1] && has_controller(a + 1, ctl)) {
			snprintf(buf, len, "%s", b + 1);
			return buf;
		}
		if (a[1] == 0)
			snprintf(v2, sizeof(v2), "%s", b + 1);
	}
	if (v2[0])
		snprintf(buf, len, "%s", v2);
	return buf;
}

/* The path /proc/PID/cgroup gives now for controller ctl, "-" when the process is gone. */
static const char *of_pid_now_ctl(__u32 pid, const char *ctl, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/cgroup", pid);
	if (!(f = fopen(path, "re"))) {
		snprintf(buf, len, "-");
		return buf;
	}
	il_cgroup_parse_proc_of(f, ctl, buf, len);
	fclose(f);
	return buf;
}

static const char *of_pid_now(__u32 pid, char *buf, size_t len)
{
	return of_pid_now_ctl(pid, "blkio", buf, len);
}

const char *il_cgroup_cpu_of_pid(__u32 pid, char *buf, size_t len)
{
	return of_pid_now_ctl(pid, "cpu", buf, len);
}

/* The remembered path of pid (lock held), or NULL. */
static const char *remembered_locked(__u32 pid)
{
	for (size_t i = 0; i < nprocs; i++)
		if (procs[i].pid == pid)
			return procs[i].path;
	return NULL;
}

void il_cgroup_remember(__u32 pid)
{
	char path[PATH_MAX];
	bool known;

	pthread_mutex_lock(&lock);
	known = remembered_locked(pid);
	pthread_mutex_unlock(&lock);
	if (known || !strcmp(of_pid_now(pid, path, sizeof(path)), "-"))
		return;
	pthread_mutex_lock(&lock);
	if (!remembered_locked(pid)) {
		struct cg_proc *n = realloc(procs, (nprocs + 1) * sizeof(*procs));

		if (!n || !(procs = n, procs[nprocs].path = strdup(path)))
			il_die("out of memory");
		procs[nprocs++].pid = pid;
	}
	pthread_mutex_unlock(&lock);
}

const char *il_cgroup_of_pid(__u32 pid, char *buf, size_t len)
{
	const char *c;

	if (strcmp(of_pid_now(pid, buf, len), "-"))
		return buf;
	pthread_mutex_lock(&lock);
	if ((c = remembered_locked(pid)))
		snprintf(buf, len, "%s", c);
	pthread_mutex_unlock(&lock);
	return buf;
}

const char *il_cgroup_throttle_rule(const char *cgroup, __u32 dev, char *buf, size_t len)
{
	static const char *files[] = {
		"blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device",
		"blkio.throttle.read_iops_device", "blkio.throttle.write_iops_device", "io.max",
	};
	char r[PATH_MAX];
	size_t n = 0;

	buf[0] = 0;
	if (!il_cgroup_root(r, sizeof(r), NULL) || !cgroup || cgroup[0] != '/')
		return buf;
	for (size_t i = 0; i < IL_ARRAY_SIZE(files); i++) {
		char path[PATH_MAX * 2], line[512];
		FILE *f;

		snprintf(path, sizeof(path), "%s%s/%s", r, strcmp(cgroup, "/") ? cgroup : "", files[i]);
		if (!(f = fopen(path, "re")))
			continue;
		while (fgets(line, sizeof(line), f)) {
			unsigned ma, mi;

			line[strcspn(line, "\n")] = 0;
			if (sscanf(line, "%u:%u", &ma, &mi) != 2 || IL_MKDEV(ma, mi) != dev)
				continue;
			if (n < len)
				n += snprintf(buf + n, len - n, "%s%s %s", n ? ", " : "", files[i], line);
		}
		fclose(f);
	}
	return buf;
}
