/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The child processes of a -p process and their I/O counters (children.h). */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "children.h"
#include "escape.h"
#include "log.h"

/* Append pid to *v (of *n, room for *cap). */
static void push(struct il_child_io **v, size_t *n, size_t *cap, unsigned pid)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 16;
		struct il_child_io *p = realloc(*v, c * sizeof(**v));

		if (!p)
			il_die("out of memory");
		*v = p;
		*cap = c;
	}
	(*v)[(*n)++] = (struct il_child_io){ .pid = pid };
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
		char *rp;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%.16s/stat", e->d_name);
		if (!(f = fopen(path, "re")))
			continue;
		/* "pid (comm) state ppid ...": the comm may hold spaces and parentheses */
		if (fgets(buf, sizeof(buf), f) && (rp = strrchr(buf, ')')) &&
		    sscanf(rp + 1, " %*c %u", &ppid) == 1 && ppid == parent)
			push(v, n, &cap, (unsigned)strtoul(e->d_name, NULL, 10));
		fclose(f);
	}
	closedir(d);
	return 0;
}

/* c's counts from /proc/PID/io; false when it is gone (or not readable). */
static bool read_io(struct il_child_io *c)
{
	char path[64], key[32];
	unsigned long long v;
	int got = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/io", c->pid);
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

int il_children_start(struct il_children *c, unsigned parent)
{
	size_t k = 0;
	int err;

	memset(c, 0, sizeof(*c));
	if (!parent)
		return 0;
	if ((err = list_children(parent, &c->start, &c->nstart)))
		return err;
	c->parent = parent;
	for (size_t i = 0; i < c->nstart; i++)
		if (read_io(&c->start[i]))
			c->start[k++] = c->start[i];
	c->nstart = k;
	return 0;
}

void il_children_end(struct il_children *c)
{
	struct il_child_io *now = NULL, best[IL_CHILDREN_NAMED] = {};
	size_t n = 0;

	if (!c->parent || list_children(c->parent, &now, &n))
		return;
	c->n = c->calls = c->rbytes = c->wbytes = 0;
	for (size_t i = 0; i < n; i++) {
		struct il_child_io d = now[i];

		if (!read_io(&d))
			continue;
		c->n++;
		for (size_t j = 0; j < c->nstart; j++) {
			if (c->start[j].pid != d.pid)
				continue;
			d.calls -= c->start[j].calls;
			d.rbytes -= c->start[j].rbytes;
			d.wbytes -= c->start[j].wbytes;
			break;
		}
		c->calls += d.calls;
		c->rbytes += d.rbytes;
		c->wbytes += d.wbytes;
		for (int b = 0; b < IL_CHILDREN_NAMED; b++) { /* keep the busiest, in order */
			if (d.calls && (!best[b].pid || d.calls > best[b].calls)) {
				memmove(&best[b + 1], &best[b], (IL_CHILDREN_NAMED - 1 - b) * sizeof(best[0]));
				best[b] = d;
				break;
			}
		}
	}
	free(now);
	for (int b = 0; b < IL_CHILDREN_NAMED; b++) {
		char path[64];
		FILE *f;

		c->named[b] = best[b].pid;
		c->comm[b][0] = 0;
		snprintf(path, sizeof(path), "/proc/%u/comm", best[b].pid);
		if (best[b].pid && (f = fopen(path, "re"))) {
			if (fgets(c->comm[b], sizeof(c->comm[b]), f))
				c->comm[b][strcspn(c->comm[b], "\n")] = 0;
			fclose(f);
		}
	}
}

const char *il_children_note(const struct il_children *c, char *buf, size_t len)
{
	char comm[4 * 16 + 1];
	size_t k;

	buf[0] = 0;
	if (!c->parent || !c->calls)
		return buf;
	k = snprintf(buf, len, "note: process %u's %u child process%s made %llu read and write calls "
		     "meanwhile (/proc/PID/io; not traced: -p follows one process, give theirs; "
		     "busiest:", c->parent, c->n, c->n == 1 ? "" : "es", c->calls);
	for (int b = 0; b < IL_CHILDREN_NAMED && c->named[b] && k < len; b++)
		k += snprintf(buf + k, len - k, "%s %u %s", b ? "," : "", c->named[b],
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
	json_object_object_add(o, "count", json_object_new_uint64(c->n));
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
