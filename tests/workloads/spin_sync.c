/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * spin_sync: a process slowed by its own threads.
 *
 *   spin_sync [-b BUSY] [-n COUNT] [-s SECONDS] PATH
 *
 * BUSY threads (default 3) spin on the CPU while the main thread appends 4 KiB to PATH and
 * fdatasyncs it, COUNT times (default: until SECONDS, default 10, have passed). Pinned to one
 * CPU (taskset -c N), the syncs wait in the run queue behind the process's own threads: the
 * verdict "waits for a CPU behind its own threads". Prints "pid PID" first and "syncs N" at
 * the end. Exit 0 when every call succeeded, 1 otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile int done;

static void *spin(void *arg)
{
	(void)arg;
	while (!done)
		;
	return NULL;
}

int main(int argc, char **argv)
{
	long busy = 3, count = -1, secs = 10, n = 0;
	char buf[4096];
	pthread_t th[64];
	struct timespec t0, t;
	int opt, fd, rc = 0;

	while ((opt = getopt(argc, argv, "b:n:s:")) != -1) {
		switch (opt) {
		case 'b': busy = strtol(optarg, NULL, 10); break;
		case 'n': count = strtol(optarg, NULL, 10); break;
		case 's': secs = strtol(optarg, NULL, 10); break;
		default: goto usage;
		}
	}
	if (optind != argc - 1 || busy < 0 || busy > 64)
		goto usage;
	fd = open(argv[optind], O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd < 0) {
		fprintf(stderr, "spin_sync: %s: %s\n", argv[optind], strerror(errno));
		return 1;
	}
	printf("pid %d\n", getpid());
	fflush(stdout);
	for (long i = 0; i < busy; i++)
		if (pthread_create(&th[i], NULL, spin, NULL)) {
			fprintf(stderr, "spin_sync: cannot start a thread\n");
			return 1;
		}
	memset(buf, 's', sizeof(buf));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (count >= 0 ? n >= count : t.tv_sec - t0.tv_sec >= secs)
			break;
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf) || fdatasync(fd)) {
			fprintf(stderr, "spin_sync: %s\n", strerror(errno));
			rc = 1;
			break;
		}
		n++;
	}
	done = 1;
	for (long i = 0; i < busy; i++)
		pthread_join(th[i], NULL);
	printf("syncs %ld\n", n);
	return rc;
usage:
	fprintf(stderr, "usage: spin_sync [-b BUSY] [-n COUNT] [-s SECONDS] PATH\n");
	return 1;
}
