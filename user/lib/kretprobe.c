/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Return probes with room for many sleeping calls.
 *
 * A kretprobe can follow only `maxactive` calls of its function at once. The kernel's default
 * is the number of CPUs (kernels without CONFIG_PREEMPTION, e.g. Debian's 5.10) or
 * max(10, 2 x CPUs); fsync and the file write path sleep, so more threads than that inside
 * one function lose their returns. perf_event_open's kprobe PMU, which libbpf uses, cannot set
 * maxactive; tracefs kprobe_events can ("rN:", since 4.12). So a return probe is made there
 * as iolayer/r<pid>_<n>, opened as a tracepoint perf event and given to libbpf, which owns the
 * perf event from then on. The tracefs definition is removed at detach, at exit, and, for a
 * tool that died without cleaning up, by the next tool that starts (its pid is in the name).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include <bpf/libbpf.h>
#include "kretprobe.h"
#include "log.h"
#include "tracefs.h"

#define KRP_GROUP "iolayer"

/* Events this process defined (names under KRP_GROUP), removed by il_kretprobes_remove(). */
static char (*defined)[48];
static int ndefined;

static int kprobe_events_write(const char *line)
{
	char path[256];
	int fd, err = 0;

	if (!il_tracefs_path("kprobe_events", path, sizeof(path)))
		return -ENOENT;
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, line, strlen(line)) < 0)
		err = -errno;
	close(fd);
	return err;
}

static void remove_event(const char *name)
{
	char line[96];

	snprintf(line, sizeof(line), "-:%s/%s\n", KRP_GROUP, name);
	kprobe_events_write(line);
}

void il_kretprobes_remove(void)
{
	for (int i = 0; i < ndefined; i++)
		remove_event(defined[i]);
	free(defined);
	defined = NULL;
	ndefined = 0;
}

/* Remove KRP_GROUP events left by tools that are gone (killed with SIGKILL, say). */
static void remove_stale(void)
{
	char path[256], line[512];
	FILE *f;

	if (!il_tracefs_path("kprobe_events", path, sizeof(path)))
		return;
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char name[48];
		int pid;

		/* "r1024:iolayer/r123_0 ext4_sync_file" */
		if (sscanf(line, "r%*d:" KRP_GROUP "/%47s", name) != 1 ||
		    sscanf(name, "r%d_", &pid) != 1)
			continue;
		if (pid != getpid() && kill(pid, 0) && errno == ESRCH)
			remove_event(name);
	}
	fclose(f);
}

static int event_id(const char *name)
{
	char rel[128], path[256], buf[32];
	int fd, n;

	snprintf(rel, sizeof(rel), "events/%s/%s/id", KRP_GROUP, name);
	if (!il_tracefs_path(rel, path, sizeof(path)))
		return -ENOENT;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EINVAL;
	buf[n] = 0;
	return atoi(buf);
}

static struct bpf_link *tracefs_kretprobe(struct bpf_program *prog, const char *func,
					  int maxactive, int *err)
{
	static int seq;
	static bool cleaned;
	struct perf_event_attr attr = { .size = sizeof(attr), .type = PERF_TYPE_TRACEPOINT,
					.sample_period = 1, .wakeup_events = 1 };
	char name[48], line[160];
	struct bpf_link *link;
	int id, pfd;
	void *nd;

	if (!cleaned) {
		remove_stale();
		atexit(il_kretprobes_remove);
		cleaned = true;
	}
	snprintf(name, sizeof(name), "r%d_%d", getpid(), seq++);
	snprintf(line, sizeof(line), "r%d:%s/%s %s\n", maxactive, KRP_GROUP, name, func);
	*err = kprobe_events_write(line);
	if (*err)
		return NULL;
	nd = realloc(defined, (ndefined + 1) * sizeof(*defined));
	if (!nd)
		il_die("out of memory");
	defined = nd;
	snprintf(defined[ndefined++], sizeof(*defined), "%s", name);
	id = event_id(name);
	if (id < 0) {
		*err = id;
		goto undefine;
	}
	attr.config = id;
	pfd = syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (pfd < 0) {
		*err = -errno;
		goto undefine;
	}
	link = bpf_program__attach_perf_event(prog, pfd);
	if (!link) {
		*err = -errno;
		close(pfd);
		goto undefine;
	}
	return link;
undefine:
	remove_event(name);
	ndefined--;
	return NULL;
}

struct bpf_link *il_attach_kretprobe(struct bpf_program *prog, const char *func)
{
	struct bpf_link *link;
	int err;

	link = tracefs_kretprobe(prog, func, IL_KRETPROBE_MAXACTIVE, &err);
	if (link) {
		il_debug("kretprobe on %s through tracefs, maxactive %d", func,
			 IL_KRETPROBE_MAXACTIVE);
		return link;
	}
	il_debug("kretprobe on %s through tracefs failed (%s): the kernel's default maxactive "
		 "applies", func, strerrorname_np(-err) ?: strerror(-err));
	return bpf_program__attach_kprobe(prog, true, func);
}
