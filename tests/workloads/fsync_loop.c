/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * fsync_loop: the bundled write+fsync workload with known answers.
 *
 *   fsync_loop [-n COUNT] [-s BYTES] [-t THREADS] [-m sync|data|osync|none|msync] [-g GOFILE]
 *              [-w ENDFILE] PATH
 *
 * Each of THREADS threads opens its own file (PATH when THREADS is 1, else PATH.0, PATH.1,
 * ...) and does COUNT times: pwrite(BYTES at offset i*BYTES), then fsync (-m sync, default),
 * fdatasync (-m data), nothing (-m none), or opens the file O_SYNC so the write syncs itself
 * (-m osync). With -m msync it writes no call at all: the file is sized to COUNT*BYTES and
 * mapped shared, and each time it stores BYTES into the mapping at i*BYTES and calls
 * msync(MS_SYNC) on those bytes (BYTES a multiple of the page size): one fsync of the file by
 * the kernel per msync (mm/msync.c: vfs_fsync_range). With -g it first prints "pid PID" and the thread ids ("tid TID" lines) and
 * waits until GOFILE exists, so a tracer can be started on the pid before the first write.
 * With -w, once every thread is done (/proc/PID/status says "Threads: 1") it waits until
 * ENDFILE exists before exiting, writing nothing more, so a test can read /proc/PID/io then.
 * Exit 0 when every call succeeded, 1 otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static long count = 200, size = 4096;
static const char *mode = "sync", *path, *gofile, *endfile;
static int nthreads = 1;
static pthread_barrier_t ready;
static volatile int failed;

static void wait_file(const char *f)
{
	while (f && access(f, F_OK))
		usleep(10000);
}

/* -m msync on fd: COUNT stores of BYTES into a shared mapping of it, each followed by
 * msync(MS_SYNC) of those bytes. 0, or -1 after a line on stderr. */
static int msync_loop(int fd)
{
	char *map;

	if (ftruncate(fd, count * size)) {
		fprintf(stderr, "fsync_loop: ftruncate: %s\n", strerror(errno));
		return -1;
	}
	if (!count)
		return 0;
	map = mmap(NULL, count * size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		fprintf(stderr, "fsync_loop: mmap: %s\n", strerror(errno));
		return -1;
	}
	for (long i = 0; i < count; i++) {
		memset(map + i * size, 'x', size);
		if (msync(map + i * size, size, MS_SYNC)) {
			fprintf(stderr, "fsync_loop: msync: %s\n", strerror(errno));
			munmap(map, count * size);
			return -1;
		}
	}
	return munmap(map, count * size);
}

static void *worker(void *arg)
{
	long idx = (long)arg, n = count;
	char name[4096], *buf;
	int fd, flags = O_WRONLY | O_CREAT | O_TRUNC;

	if (nthreads == 1)
		snprintf(name, sizeof(name), "%s", path);
	else
		snprintf(name, sizeof(name), "%s.%ld", path, idx);
	if (!strcmp(mode, "osync"))
		flags |= O_SYNC;
	if (!strcmp(mode, "msync"))
		flags = O_RDWR | O_CREAT | O_TRUNC; /* a shared writable mapping needs read too */
	buf = malloc(size);
	memset(buf, 'x', size);
	printf("tid %ld\n", (long)syscall(SYS_gettid));
	fflush(stdout);
	pthread_barrier_wait(&ready);
	wait_file(gofile);
	fd = open(name, flags, 0644);
	if (fd < 0) {
		fprintf(stderr, "fsync_loop: open %s: %s\n", name, strerror(errno));
		failed = 1;
		return NULL;
	}
	if (!strcmp(mode, "msync")) {
		if (msync_loop(fd))
			failed = 1;
		n = 0; /* no write */
	}
	for (long i = 0; i < n; i++) {
		if (pwrite(fd, buf, size, i * size) != size) {
			failed = 1;
			break;
		}
		if (!strcmp(mode, "sync") && fsync(fd))
			failed = 1;
		if (!strcmp(mode, "data") && fdatasync(fd))
			failed = 1;
	}
	close(fd);
	free(buf);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[64];
	int c;

	while ((c = getopt(argc, argv, "n:s:t:m:g:w:")) != -1) {
		switch (c) {
		case 'n': count = atol(optarg); break;
		case 's': size = atol(optarg); break;
		case 't': nthreads = atoi(optarg); break;
		case 'm': mode = optarg; break;
		case 'g': gofile = optarg; break;
		case 'w': endfile = optarg; break;
		default: goto usage;
		}
	}
	if (optind != argc - 1 || count < 0 || size <= 0 || nthreads < 1 || nthreads > 64 ||
	    (strcmp(mode, "sync") && strcmp(mode, "data") && strcmp(mode, "osync") && strcmp(mode, "none") &&
	     strcmp(mode, "msync")))
		goto usage;
	path = argv[optind];
	if (gofile) {
		printf("pid %d\n", getpid());
		fflush(stdout);
	}
	pthread_barrier_init(&ready, NULL, nthreads + 1);
	for (long i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	pthread_barrier_wait(&ready);
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	wait_file(endfile);
	return failed;
usage:
	fprintf(stderr, "usage: fsync_loop [-n COUNT] [-s BYTES] [-t THREADS] [-m sync|data|osync|none|msync] [-g GOFILE] [-w ENDFILE] PATH\n");
	return 2;
}
