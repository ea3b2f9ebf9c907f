/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * split_sched: pwrite + fsync calls that measure their own CPU and run-queue time, the
 * kernel's answers for the split layer's on-CPU and run-queue parts (fsslower --split).
 *
 *   split_sched [-g GOFILE] [-n COUNT] [-s BYTES] PATH
 *
 * Opens PATH (O_WRONLY|O_CREAT|O_TRUNC) and does COUNT times (default 100): pwrite of BYTES
 * (default 1 MiB) at offset i * BYTES, then fsync. Each call is bracketed by reads of the
 * thread's own counters, just before and just after it:
 *   - /proc/thread-self/schedstat: field 1, on-CPU ns (se.sum_exec_runtime, brought up to
 *     date only at a tick or a switch), field 2, run-queue ns (sched_info.run_delay, added at
 *     each switch-in, so exact while the thread runs);
 *   - clock_gettime(CLOCK_THREAD_CPUTIME_ID): the same on-CPU ns, brought up to date at the
 *     read (task_sched_runtime()), the one to compare with.
 * The schedstat reads are outside the clock reads, the clock reads next to the call. Prints
 * "pid PID" and "tid TID" first (with -g, then waits until GOFILE exists), and at the end the
 * sums of the deltas over every call:
 *   calls N, oncpu_ns N (the CPU clock), schedstat_oncpu_ns N (field 1), runq_ns N (field 2)
 * Exit 0 when every call succeeded, 1 otherwise, 2 on bad usage.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "wl.h"

static int sfd;

/* schedstat fields 1 and 2 of this thread */
static void schedstat(unsigned long long *oncpu, unsigned long long *runq)
{
	char buf[128];
	ssize_t n = pread(sfd, buf, sizeof(buf) - 1, 0);

	if (n <= 0 || sscanf((buf[n] = 0, buf), "%llu %llu", oncpu, runq) != 2) {
		perror("split_sched: /proc/thread-self/schedstat");
		exit(1);
	}
}

static unsigned long long cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	unsigned long long c0, c1, s0, s1, r0, r1, sum_c = 0, sum_s = 0, sum_r = 0;
	long count = 100, size = 1 << 20, calls = 0;
	const char *gofile = NULL;
	char *buf;
	int c, fd;

	while ((c = getopt(argc, argv, "g:n:s:")) != -1) {
		switch (c) {
		case 'g': gofile = optarg; break;
		case 'n': count = atol(optarg); break;
		case 's': size = atol(optarg); break;
		default: goto usage;
		}
	}
	if (optind != argc - 1 || count <= 0 || size <= 0)
		goto usage;
	buf = malloc(size);
	sfd = open("/proc/thread-self/schedstat", O_RDONLY);
	fd = open(argv[optind], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (!buf || sfd < 0 || fd < 0) {
		perror("split_sched");
		return 1;
	}
	memset(buf, 's', size);
	printf("tid %ld\n", (long)syscall(SYS_gettid));
	if (!gofile)
		printf("pid %d\n", getpid());
	wl_wait_go(gofile);
	for (long i = 0; i < count; i++) {
		for (int k = 0; k < 2; k++) {
			int bad;

			schedstat(&s0, &r0);
			c0 = cpu_ns();
			bad = k ? fsync(fd) != 0 : pwrite(fd, buf, size, i * size) != size;
			c1 = cpu_ns();
			schedstat(&s1, &r1);
			if (bad) {
				perror("split_sched: pwrite/fsync");
				return 1;
			}
			if (getenv("SPLIT_SCHED_EACH"))
				fprintf(stderr, "call %ld %c oncpu_ns %llu runq_ns %llu\n", calls, k ? 'F' : 'W',
					c1 - c0, r1 - r0);
			sum_c += c1 - c0;
			sum_s += s1 - s0;
			sum_r += r1 - r0;
			calls++;
		}
	}
	printf("calls %ld\noncpu_ns %llu\nschedstat_oncpu_ns %llu\nrunq_ns %llu\n", calls, sum_c,
	       sum_s, sum_r);
	return 0;
usage:
	fprintf(stderr, "usage: split_sched [-g GOFILE] [-n COUNT] [-s BYTES] PATH\n");
	return 2;
}
