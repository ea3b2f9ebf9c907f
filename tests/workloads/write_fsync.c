/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * write_fsync: one write and one fsync on each of several files, for tests of file names.
 *
 *   write_fsync [-g GOFILE] [-u PATH] PATH...
 *
 * For each PATH, in order: open (O_WRONLY|O_CREAT|O_TRUNC), write 4096 bytes, fsync, close.
 * With -u PATH, last: open PATH the same way, unlink it while it is open, then write 4096
 * bytes and fsync it (a file deleted while open), close. Names are taken byte for byte, so
 * a name may hold any byte but '/' and NUL. With -g it first prints "pid PID" and waits
 * until GOFILE exists, so a tracer can be started on the pid first. Exit 0 when every call
 * succeeded, 1 otherwise (with the failing call on stderr).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "wl.h"

#define BS 4096

static char buf[BS];

static void fail(const char *what, const char *path)
{
	fprintf(stderr, "write_fsync: %s of a %zu-byte path: %s\n", what, strlen(path), strerror(errno));
	exit(1);
}

/* open path, unlink it first when unlink_it, write BS bytes, fsync, close */
static void write_fsync(const char *path, int unlink_it)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		fail("open", path);
	if (unlink_it && unlink(path))
		fail("unlink", path);
	if (write(fd, buf, BS) != BS)
		fail("write", path);
	if (fsync(fd))
		fail("fsync", path);
	close(fd);
}

int main(int argc, char **argv)
{
	const char *gofile = NULL, *gone = NULL;
	int c;

	while ((c = getopt(argc, argv, "g:u:")) != -1) {
		switch (c) {
		case 'g': gofile = optarg; break;
		case 'u': gone = optarg; break;
		default: goto usage;
		}
	}
	if (optind == argc && !gone)
		goto usage;
	memset(buf, 'n', sizeof(buf));
	wl_wait_go(gofile);
	for (int i = optind; i < argc; i++)
		write_fsync(argv[i], 0);
	if (gone)
		write_fsync(gone, 1);
	return 0;
usage:
	fprintf(stderr, "usage: write_fsync [-g GOFILE] [-u PATH] PATH...\n");
	return 2;
}
