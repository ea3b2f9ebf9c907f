/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The child processes of a -p process and their I/O counters (children.h). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "children.h"
#include "lib/fs.h"
#include "escape.h"
#include "log.h"

/* Append pid to *v (of *n, room for *cap); out of memory, it is left out. */
static void push(struct il_child_io **v, size_t *n, size_t *cap, unsigned pid)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 16;
		struct il_child_io *p = realloc(*v, c * sizeof(**v));

		if (!p)
			return;
		*v = p;
		*cap = c;
	}
	(*v)[(*n)++] = (struct il_child_io){ .pid = pid };
}

/* The fields of /proc/PID/stat after "pid (comm) " (the comm may hold spaces and
 * parentheses: the last ')' ends it), read into buf; NULL when the process is gone. */
static const char *stat_after_comm(const char *pid, char *buf, size_t len)
{
	char path[64], *rp = NULL;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%.16s/stat", pid);
	if (!(f = fopen(path, "re")))
		return NULL;
	if (fgets(buf, len, f))
		rp = strrchr(buf, ')');
	fclose(f);
	return rp ? rp + 1 : NULL;
}

/* The children of parent, from /proc/PARENT/task/TID/children (CONFIG_PROC_CHILDREN), else
 * by their parent pid in /proc/PID/stat. -errno when neither can be read. */
static int list_children(unsigned parent, struct il_child_io **v, size_t *n)
{
	char path[64], buf[4096];
	size_t cap = 0;
	struct dirent *e;
	DIR *d;
	FILE *f;

	*v = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "/proc/%u/task", parent);
	if ((d = opendir(path))) {
		bool any = false;

		while ((e = readdir(d))) {
			if (!isdigit((unsigned char)e->d_name[0]))
				continue;
			snprintf(path, sizeof(path), "/proc/%u/task/%.16s/children", parent, e->d_name);
			if (!(f = fopen(path, "re")))
				continue;
			any = true;
			while (fscanf(f, "%4095s", buf) == 1)
				push(v, n, &cap, (unsigned)strtoul(buf, NULL, 10));
			fclose(f);
		}
		closedir(d);
		if (any)
			return 0;
	}
	if (!(d = opendir("/proc")))
		return -1;
	while ((e = readdir(d))) {
		unsigned ppid = 0;
		const char *st;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		/* "state ppid ..." */
		if ((st = stat_after_comm(e->d_name, buf, sizeof(buf))) &&
		    sscanf(st, " %*c %u", &ppid) == 1 && ppid == parent)
			push(v, n, &cap, (unsigned)strtoul(e->d_name, NULL, 10));
	}
	closedir(d);
	return 0;
}

/* The counts of /proc/...io file path into *c; false when it is gone (or not readable). */
static bool read_io_path(const char *path, struct il_child_io *c)
{
	char key[32];
	unsigned long long v;
	int got = 0;
	FILE *f;

	if (!(f = fopen(path, "re")))
		return false;
	c->calls = c->rbytes = c->wbytes = 0;
	while (fscanf(f, "%31[^:]: %llu\n", key, &v) == 2) {
		if (!strcmp(key, "syscr") || !strcmp(key, "syscw"))
			c->calls += v, got++;
		else if (!strcmp(key, "read_bytes"))
			c->rbytes = v, got++;
		else if (!strcmp(key, "write_bytes"))
			c->wbytes = v, got++;
	}
	fclose(f);
	return got == 4;
}

static bool read_io(struct il_child_io *c)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%u/io", c->pid);
	return read_io_path(path, c);
}

/* a -= b, each count at least 0 */
static void io_sub(struct il_child_io *a, const struct il_child_io *b)
{
	a->calls = a->calls > b->calls ? a->calls - b->calls : 0;
	a->rbytes = a->rbytes > b->rbytes ? a->rbytes - b->rbytes : 0;
	a->wbytes = a->wbytes > b->wbytes ? a->wbytes - b->wbytes : 0;
}

static void io_add(struct il_child_io *a, const struct il_child_io *b)
{
	a->calls += b->calls;
	a->rbytes += b->rbytes;
	a->wbytes += b->wbytes;
}

/* The page faults of parent's reaped children (/proc/PID/stat cminflt + cmajflt): they grow
 * whenever it reaps one, as every process faults. false when the parent is gone. */
static bool children_faults(unsigned parent, unsigned long long *faults)
{
	unsigned long long minflt, majflt;
	char pid[16], buf[1024];
	const char *st;

	snprintf(pid, sizeof(pid), "%u", parent);
	/* "state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt" */
	if (!(st = stat_after_comm(pid, buf, sizeof(buf))) ||
	    sscanf(st, " %*c %*d %*d %*d %*d %*d %*u %*u %llu %*u %llu", &minflt, &majflt) != 2)
		return false;
	*faults = minflt + majflt;
	return true;
}

/* What the parent's threads that exited had done: the sum over CPUs of fs_exited_io. */
static void threads_exited(int fd, struct il_child_io *e)
{
	struct fs_exited_io *v;
	int ncpu = libbpf_num_possible_cpus();
	__u32 zero = 0;

	memset(e, 0, sizeof(*e));
	if (fd < 0 || ncpu <= 0 || !(v = calloc(ncpu, sizeof(*v))))
		return;
	if (!bpf_map_lookup_elem(fd, &zero, v))
		for (int i = 0; i < ncpu; i++) {
			e->calls += v[i].calls;
			e->rbytes += v[i].rbytes;
			e->wbytes += v[i].wbytes;
		}
	free(v);
}

/* The parent's counters less its live threads' own: what its reaped children (and its
 * exited threads) did, into *d. false when the parent is gone. */
static bool parent_dead(unsigned parent, struct il_child_io *d)
{
	struct il_child_io t;
	char path[64];
	struct dirent *e;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%u/io", parent);
	if (!read_io_path(path, d))
		return false;
	snprintf(path, sizeof(path), "/proc/%u/task", parent);
	if (!(dir = opendir(path)))
		return false;
	while ((e = readdir(dir))) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%u/task/%.16s/io", parent, e->d_name);
		if (read_io_path(path, &t))
			io_sub(d, &t);
	}
	closedir(dir);
	return true;
}

/* Is pid among v[n]? */
static bool listed(const struct il_child_io *v, size_t n, unsigned pid)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].pid == pid)
			return true;
	return false;
}

/* The name in /proc/PID/comm into buf (16 bytes): all of it, a newline in it included,
 * less the one the file ends with. */
static void read_comm(unsigned pid, char buf[16])
{
	char path[64], tmp[17];
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	if ((f = fopen(path, "re"))) {
		n = fread(tmp, 1, sizeof(tmp), f);
		fclose(f);
	}
	if (n && tmp[n - 1] == '\n')
		n--;
	memset(buf, 0, 16);
	memcpy(buf, tmp, n < 16 ? n : 15);
}

int il_children_start(struct il_children *c, unsigned parent, int exited_fd)
{
	size_t k = 0;
	int err;

	memset(c, 0, sizeof(*c));
	if (!parent)
		return 0;
	if ((err = list_children(parent, &c->start, &c->nstart)))
		return err;
	c->exited_fd = exited_fd;
	threads_exited(exited_fd, &c->exited0); /* before dead0: none is taken off twice */
	if (!parent_dead(parent, &c->dead0) || !children_faults(parent, &c->cflt0))
		return -ENOENT;
	c->parent = parent;
	for (size_t i = 0; i < c->nstart; i++) {
		if (read_io(&c->start[i]))
			c->start[k++] = c->start[i];
	}
	c->nstart = k;
	return 0;
}

void il_children_sample(struct il_children *c)
{
	struct il_child_io *now = NULL, best[IL_CHILDREN_NAMED] = {}, sum = {}, dead, exited;
	unsigned long long faults = 0;
	size_t n = 0;

	/* the exited threads before the parent's counters: a thread that exits in between is
	 * then still among the live ones there, and is not taken off twice */
	threads_exited(c->exited_fd, &exited);
	if (!c->parent || list_children(c->parent, &now, &n) || !parent_dead(c->parent, &dead) ||
	    !children_faults(c->parent, &faults)) {
		free(now);
		return; /* the parent has gone: the last sample stands */
	}
	c->n = 0;
	for (size_t i = 0; i < n; i++) {
		struct il_child_io d = now[i];

		if (!read_io(&d))
			continue;
		c->n++;
		for (size_t j = 0; j < c->nstart; j++)
			if (c->start[j].pid == d.pid)
				io_sub(&d, &c->start[j]);
		io_add(&sum, &d);
		for (int b = 0; b < IL_CHILDREN_NAMED; b++) { /* keep the busiest, in order */
			if (d.calls && (!best[b].pid || d.calls > best[b].calls)) {
				memmove(&best[b + 1], &best[b], (IL_CHILDREN_NAMED - 1 - b) * sizeof(best[0]));
				best[b] = d;
				break;
			}
		}
	}
	/* the reaped ones: the parent's dead share grew by all they did (those running at the
	 * start brought their earlier counts along), and by what its exited threads did; none
	 * of it is theirs when no child was reaped */
	io_sub(&dead, &c->dead0);
	for (size_t j = 0; j < c->nstart; j++)
		if (!listed(now, n, c->start[j].pid))
			io_sub(&dead, &c->start[j]);
	io_sub(&exited, &c->exited0);
	io_sub(&dead, &exited);
	if (faults != c->cflt0)
		io_add(&sum, &dead);
	c->calls = sum.calls;
	c->rbytes = sum.rbytes;
	c->wbytes = sum.wbytes;
	free(now);
	for (int b = 0; b < IL_CHILDREN_NAMED; b++) {
		c->named[b] = best[b].pid;
		c->comm[b][0] = 0;
		if (best[b].pid)
			read_comm(best[b].pid, c->comm[b]);
	}
}

const char *il_children_note(const struct il_children *c, char *buf, size_t len)
{
	char comm[4 * 16 + 1];
	size_t k;

	buf[0] = 0;
	if (!c->parent || !c->calls)
		return buf;
	k = snprintf(buf, len, "note: process %u's children made %llu read and write calls meanwhile "
		     "(/proc/PID/io, those that exited included; %u running; not traced: -p follows "
		     "one process, give theirs", c->parent, c->calls, c->n);
	for (int b = 0; b < IL_CHILDREN_NAMED && c->named[b] && k < len; b++)
		k += snprintf(buf + k, len - k, "%s %u %s", b ? "," : "; busiest:", c->named[b],
			      il_text_escape(c->comm[b], sizeof(c->comm[b]), comm, sizeof(comm)));
	if (k < len)
		snprintf(buf + k, len - k, ")");
	return buf;
}

struct json_object *il_children_json(const struct il_children *c)
{
	struct json_object *o, *b;

	if (!c->parent)
		return NULL;
	o = json_object_new_object();
	b = json_object_new_array();
	json_object_object_add(o, "running", json_object_new_uint64(c->n));
	json_object_object_add(o, "calls", json_object_new_uint64(c->calls));
	json_object_object_add(o, "read_bytes", json_object_new_uint64(c->rbytes));
	json_object_object_add(o, "write_bytes", json_object_new_uint64(c->wbytes));
	for (int i = 0; i < IL_CHILDREN_NAMED && c->named[i]; i++) {
		struct json_object *x = json_object_new_object();

		json_object_object_add(x, "pid", json_object_new_uint64(c->named[i]));
		il_json_add_name(x, "comm", c->comm[i], sizeof(c->comm[i]));
		json_object_array_add(b, x);
	}
	json_object_object_add(o, "busiest", b);
	return o;
}

void il_children_free(struct il_children *c)
{
	free(c->start);
	c->start = NULL;
	c->nstart = 0;
}
