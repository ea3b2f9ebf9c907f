/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#include <ctype.h>
#include <fcntl.h>
#include <sched.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "procstat.h"

#define PF_KTHREAD_FLAG 0x00200000 /* include/linux/sched.h PF_KTHREAD */

/* The stat file at path (/proc/PID/stat or /proc/PID/task/TID/stat) into buf (size bytes,
 * NUL-terminated): the ')' that ends its comm, which may hold any byte, ')' too (the last one
 * ends it), followed by " STATE ..."; NULL when the task is gone or the file is not that. */
static char *stat_read(const char *path, char *buf, size_t size)
{
	ssize_t n;
	char *rp;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = 0;
	rp = strrchr(buf, ')');
	return rp && strchr(buf, '(') && rp[1] == ' ' && rp[2] ? rp : NULL;
}

/* One process from /proc/PID/stat, its schedstat (a kernel thread) and its CPU affinity into
 * r: 0, or -1 when it is gone. */
static int read_proc(__u32 pid, struct il_proc_cpu *r, long hz)
{
	char path[64], buf[1024], *rp;
	unsigned long long ut = 0, st = 0;
	unsigned long flags = 0;
	unsigned ppid = 0;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	if (!(rp = stat_read(path, buf, sizeof(buf))))
		return -1;
	memset(r, 0, sizeof(*r));
	r->pid = pid;
	n = rp - strchr(buf, '(') - 1;
	memcpy(r->comm, strchr(buf, '(') + 1, n < sizeof(r->comm) - 1 ? n : sizeof(r->comm) - 1);
	/* after ") ": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
	if (sscanf(rp + 2, "%*c %u %*d %*d %*d %*d %lu %*u %*u %*u %*u %llu %llu", &ppid, &flags, &ut,
		   &st) != 4)
		return -1;
	r->ppid = ppid;
	r->kthread = flags & PF_KTHREAD_FLAG;
	r->cpu_ns = (ut + st) * (1000000000ULL / hz);
	if (r->kthread) { /* one thread: its schedstat is the process's, to the ns */
		unsigned long long on, rq;

		snprintf(path, sizeof(path), "/proc/%u/schedstat", pid);
		if ((f = fopen(path, "r"))) {
			if (fscanf(f, "%llu %llu", &on, &rq) == 2) {
				r->cpu_ns = on;
				r->runq_ns = rq;
			}
			fclose(f);
		}
	}
	/* the CPUs it may run on (its main thread's, as /proc/PID/status's Cpus_allowed_list):
	 * from the scheduler, where reading the status file (which formats ~50 fields, the
	 * memory ones by walking the mm) doubled the time of a scan of every process */
	{
		cpu_set_t set;

		CPU_ZERO(&set);
		if (!sched_getaffinity(pid, sizeof(set), &set))
			for (int c = 0; c < CPU_SETSIZE; c++)
				if (CPU_ISSET(c, &set))
					r->cpus |= 1ULL << (c % 64);
	}
	return 0;
}

bool il_proc_kthread(__u32 pid)
{
	struct il_proc_cpu r;

	return !read_proc(pid, &r, 100) && r.kthread;
}

bool il_proc_task_state(__u32 tgid, __u32 tid, char *state)
{
	char path[64], buf[512], *rp;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/stat", tgid, tid);
	if (!(rp = stat_read(path, buf, sizeof(buf))))
		return false;
	*state = rp[2];
	return true;
}

bool il_proc_task_status(__u32 tgid, __u32 tid, char *state, unsigned long long *switches)
{
	char path[64], line[256];
	unsigned long long vol = 0, invol = 0;
	int seen = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/status", tgid, tid);
	if (!(f = fopen(path, "re")))
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "State: %c", state) == 1)
			seen |= 1;
		else if (sscanf(line, "voluntary_ctxt_switches: %llu", &vol) == 1)
			seen |= 2;
		else if (sscanf(line, "nonvoluntary_ctxt_switches: %llu", &invol) == 1)
			seen |= 4;
	}
	fclose(f);
	*switches = vol + invol;
	return seen == 7;
}

void il_proc_task_comm(__u32 tgid, __u32 tid, char comm[16])
{
	char path[64];
	size_t n = 0;
	FILE *f;

	memset(comm, 0, 16);
	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", tgid, tid);
	if ((f = fopen(path, "re"))) {
		n = fread(comm, 1, 16, f);
		fclose(f);
	}
	if (n && comm[n - 1] == '\n') /* the file ends with one newline */
		comm[n - 1] = 0;
	comm[15] = 0;
}

static int cmp_pid(const void *a, const void *b)
{
	const struct il_proc_cpu *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

int il_proc_cpu_read(struct il_proc_cpu **rows)
{
	long hz = sysconf(_SC_CLK_TCK);
	struct il_proc_cpu *v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d = opendir("/proc");

	*rows = NULL;
	if (!d)
		return -errno;
	if (hz <= 0)
		hz = 100;
	while ((de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		if (n == cap) {
			struct il_proc_cpu *nv = realloc(v, (cap = cap ? 2 * cap : 256) * sizeof(*v));

			if (!nv) {
				free(v);
				closedir(d);
				return -ENOMEM;
			}
			v = nv;
		}
		if (!read_proc(strtoul(de->d_name, NULL, 10), &v[n], hz))
			n++;
	}
	closedir(d);
	qsort(v, n, sizeof(*v), cmp_pid);
	*rows = v;
	return n;
}

const struct il_proc_cpu *il_proc_cpu_find(const struct il_proc_cpu *rows, int n, __u32 pid)
{
	struct il_proc_cpu k = { .pid = pid };

	return n > 0 ? bsearch(&k, rows, n, sizeof(k), cmp_pid) : NULL;
}
