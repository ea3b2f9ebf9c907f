/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shutdown_eio: a writeback error you can count on, without fault injection.
 *
 *   shutdown_eio [-n COUNT] [-g GOFILE] PATH
 *
 * PATH must be on an ext4 filesystem that may be destroyed: this program shuts it down.
 * Steps, in one thread:
 *   1. COUNT times (default 3): pwrite 4096 bytes at offset i*4096, then fsync
 *      -> COUNT calls of ext4_writepages returning 0 with WB_SYNC_ALL;
 *   2. pwrite 4096 more bytes (left dirty);
 *   3. ioctl(EXT4_IOC_SHUTDOWN, EXT4_GOING_FLAGS_NOLOGFLUSH): the filesystem stops;
 *   4. sync_file_range(SYNC_FILE_RANGE_WAIT_BEFORE | WRITE | WAIT_AFTER) on the file
 *      -> one call of ext4_writepages returning -EIO with WB_SYNC_ALL (fsync would fail
 *      earlier, in ext4_sync_file, and never reach writeback).
 * With -g it first prints "pid PID" and waits until GOFILE exists, so a tracer can be
 * started on the pid first. Prints "sync_file_range: EIO" at the end; exit 0 when every
 * step gave what is written above, 1 otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/types.h>
#include "wl.h"

/* fs/ext4/ext4.h (not exported to user space) */
#ifndef EXT4_IOC_SHUTDOWN
#define EXT4_IOC_SHUTDOWN _IOR('X', 125, __u32)
#endif
#define EXT4_GOING_FLAGS_NOLOGFLUSH 0x2 /* don't flush log nor data */

int main(int argc, char **argv)
{
	const char *gofile = NULL;
	long count = 3;
	char buf[4096];
	__u32 flags = EXT4_GOING_FLAGS_NOLOGFLUSH;
	int opt, fd, r, err;

	while ((opt = getopt(argc, argv, "n:g:")) != -1) {
		switch (opt) {
		case 'n': count = atol(optarg); break;
		case 'g': gofile = optarg; break;
		default: goto usage;
		}
	}
	if (optind != argc - 1 || count < 0)
		goto usage;
	wl_wait_go(gofile);
	memset(buf, 'x', sizeof(buf));
	fd = open(argv[optind], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		fprintf(stderr, "shutdown_eio: open %s: %s\n", argv[optind], strerror(errno));
		return 1;
	}
	for (long i = 0; i < count; i++) {
		if (pwrite(fd, buf, sizeof(buf), i * sizeof(buf)) != sizeof(buf) || fsync(fd)) {
			fprintf(stderr, "shutdown_eio: write+fsync: %s\n", strerror(errno));
			return 1;
		}
	}
	if (pwrite(fd, buf, sizeof(buf), count * sizeof(buf)) != sizeof(buf)) {
		fprintf(stderr, "shutdown_eio: write: %s\n", strerror(errno));
		return 1;
	}
	if (ioctl(fd, EXT4_IOC_SHUTDOWN, &flags)) {
		fprintf(stderr, "shutdown_eio: EXT4_IOC_SHUTDOWN: %s\n", strerror(errno));
		return 1;
	}
	r = sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
				       SYNC_FILE_RANGE_WAIT_AFTER);
	err = errno;
	printf("sync_file_range: %s\n", r ? strerrorname_np(err) : "ok");
	close(fd);
	return r && err == EIO ? 0 : 1;
usage:
	fprintf(stderr, "usage: shutdown_eio [-n COUNT] [-g GOFILE] PATH\n");
	return 1;
}
