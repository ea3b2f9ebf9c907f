/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * fsync_levels: a known user stack for iowaitstack -U.
 *
 *   fsync_levels [-n COUNT] [-g GOFILE] PATH
 *
 * COUNT times (default 50): pwrite 4 KiB to PATH at offset i*4096, then fsync it through
 * three levels of its own functions, main -> middle -> leaf_fsync -> fsync(3). Built with
 * frame pointers and -O0 (a rule of its own in the Makefile), so the kernel's frame-pointer
 * walk of the user stack sees main and middle, and leaf_fsync only through the return address
 * that libc's fsync wrapper leaves at the stack pointer. With -g it first prints "pid PID" and
 * waits until GOFILE exists, so a tracer can be started on the pid before the first write.
 * Single-threaded on purpose: glibc's wrapper takes its fast path (no stack frame) then.
 * Exit 0 when every call succeeded, 1 otherwise.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "wl.h"

__attribute__((noinline)) static int leaf_fsync(int fd)
{
	return fsync(fd);
}

__attribute__((noinline)) static int middle(int fd)
{
	return leaf_fsync(fd);
}

int main(int argc, char **argv)
{
	const char *gofile = NULL;
	long count = 50;
	char buf[4096];
	int c, fd, failed = 0;

	while ((c = getopt(argc, argv, "n:g:")) != -1) {
		switch (c) {
		case 'n': count = atol(optarg); break;
		case 'g': gofile = optarg; break;
		default: goto usage;
		}
	}
	if (optind != argc - 1 || count < 0)
		goto usage;
	wl_wait_go(gofile);
	fd = open(argv[optind], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror("fsync_levels: open");
		return 1;
	}
	memset(buf, 'x', sizeof(buf));
	for (long i = 0; i < count; i++) {
		if (pwrite(fd, buf, sizeof(buf), i * (off_t)sizeof(buf)) != (ssize_t)sizeof(buf))
			failed = 1;
		if (middle(fd))
			failed = 1;
	}
	close(fd);
	return failed;
usage:
	fprintf(stderr, "usage: fsync_levels [-n COUNT] [-g GOFILE] PATH\n");
	return 2;
}
