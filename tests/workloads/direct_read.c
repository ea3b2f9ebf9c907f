/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * direct_read: a single-threaded direct-I/O reader that measures its own off-CPU time.
 *
 *   direct_read [-n COUNT] [-s BYTES] [-g GOFILE] PATH
 *
 * Opens PATH (a block device or a file) with O_DIRECT and does COUNT pread()s of BYTES
 * (default 200 of 1 MiB), offsets 0, BYTES, 2*BYTES, ... wrapping at the size of PATH. Each
 * read is a sleep in io_schedule (or io_schedule_timeout) until the device completes it.
 * With -g it first prints "pid PID" and waits until GOFILE exists, so a tracer can be started
 * on the pid before the first read. At the end it prints, for the read loop alone:
 *   wall_ns N    CLOCK_MONOTONIC time of the loop, ns
 *   cpu_ns N     CPU time the process used in the loop (CLOCK_PROCESS_CPUTIME_ID), ns
 *   reads N      reads completed
 *   nvcsw N      voluntary context switches (getrusage): the reads that really slept; a read
 *                the device completes before the reader reaches schedule() does not sleep
 * so wall_ns - cpu_ns is the time the process spent off the CPU: in I/O wait, plus waiting
 * for a CPU after each wake-up. Exit 0 when every read succeeded, 1 otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <linux/fs.h>
#include "wl.h"

static long long ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long count = 200, size = 1 << 20, done = 0;
	const char *gofile = NULL;
	unsigned long long dev_size = 0;
	long long w0, c0, w1, c1;
	struct rusage r0, r1;
	struct stat st;
	void *buf;
	int opt, fd;

	while ((opt = getopt(argc, argv, "n:s:g:")) != -1) {
		switch (opt) {
		case 'n': count = atol(optarg); break;
		case 's': size = atol(optarg); break;
		case 'g': gofile = optarg; break;
		default: goto usage;
		}
	}
	if (optind != argc - 1 || count <= 0 || size <= 0 || size % 4096)
		goto usage;
	fd = open(argv[optind], O_RDONLY | O_DIRECT);
	if (fd < 0 || fstat(fd, &st)) {
		fprintf(stderr, "direct_read: %s: %s\n", argv[optind], strerror(errno));
		return 1;
	}
	if (S_ISBLK(st.st_mode))
		ioctl(fd, BLKGETSIZE64, &dev_size);
	else
		dev_size = st.st_size;
	if (dev_size < (unsigned long long)size) {
		fprintf(stderr, "direct_read: %s is smaller than %ld bytes\n", argv[optind], size);
		return 1;
	}
	if (posix_memalign(&buf, 4096, size))
		return 1;
	memset(buf, 0, size); /* fault the buffer in before the loop */
	wl_wait_go(gofile);
	getrusage(RUSAGE_SELF, &r0);
	w0 = ns(CLOCK_MONOTONIC);
	c0 = ns(CLOCK_PROCESS_CPUTIME_ID);
	for (long i = 0; i < count; i++) {
		off_t off = (off_t)((i * (unsigned long long)size) % (dev_size - dev_size % size));

		if (pread(fd, buf, size, off) != size) {
			fprintf(stderr, "direct_read: read at %lld: %s\n", (long long)off, strerror(errno));
			break;
		}
		done++;
	}
	c1 = ns(CLOCK_PROCESS_CPUTIME_ID);
	w1 = ns(CLOCK_MONOTONIC);
	getrusage(RUSAGE_SELF, &r1);
	printf("wall_ns %lld\ncpu_ns %lld\nreads %ld\nnvcsw %ld\n", w1 - w0, c1 - c0, done,
	       r1.ru_nvcsw - r0.ru_nvcsw);
	return done == count ? 0 : 1;
usage:
	fprintf(stderr, "usage: direct_read [-n COUNT] [-s BYTES] [-g GOFILE] PATH\n");
	return 1;
}
