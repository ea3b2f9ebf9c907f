/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * io_loop: the benchmarks' I/O loops, timed, optionally paced.
 *
 *   io_loop -m pwrite|datasync|direct [-s BYTES] [-n COUNT] [-d SECONDS] [-t THREADS]
 *           [-r OPS_PER_S] [-w WRAP] PATH
 *
 *   pwrite    pwrite(2) of BYTES (default 64) at offsets 0, BYTES, ... wrapping at WRAP
 *             (default 1 MiB): a syscall loop that stays in the page cache
 *   datasync  pwrite of BYTES (default 4096), then fdatasync(2), wrapping at WRAP (1 MiB)
 *   direct    O_DIRECT pwrite of BYTES (default 4096, a multiple of 4096) wrapping at WRAP
 *             (default 64 MiB, at most the size of PATH): one block request each
 *
 * PATH is a file (created; with THREADS > 1 each thread has its own PATH.0, PATH.1, ...) or,
 * for direct, a block device (the threads share it, each in its own slice of it). Each thread
 * does COUNT operations (default 10000), or as many as fit in SECONDS when -d is given; with
 * -r the whole process is paced at OPS_PER_S (each thread at OPS_PER_S / THREADS; a thread
 * that falls behind catches up without sleeping). Prints, for the loops alone:
 *   ops N          operations done by all threads
 *   wall_ns N      CLOCK_MONOTONIC time from the start of the loops to the end of the last
 *   ns_per_op N    wall_ns * THREADS / ops: the time one operation takes a thread
 *   ops_per_s N
 * Exit 0 when every call succeeded, 1 otherwise, 2 on bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <linux/fs.h>

enum mode { M_PWRITE, M_DATASYNC, M_DIRECT };

static enum mode mode;
static long size, count = 10000, nthreads = 1, wrap;
static double seconds, rate;
static const char *path;
static unsigned long long dev_size; /* direct on a block device: its size */
static pthread_barrier_t ready;
static long long t_start;
static volatile int failed;

struct worker {
	pthread_t th;
	long idx;
	long done;
};

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_until(long long t)
{
	struct timespec ts = { .tv_sec = t / 1000000000LL, .tv_nsec = t % 1000000000LL };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static int open_target(long idx, long *base, long *span)
{
	char name[4096];
	int flags = O_WRONLY, fd;
	struct stat st;

	*base = 0;
	*span = wrap;
	if (mode == M_DIRECT)
		flags |= O_DIRECT;
	if (stat(path, &st) == 0 && S_ISBLK(st.st_mode)) {
		if (mode != M_DIRECT) {
			fprintf(stderr, "io_loop: %s is a block device: only -m direct writes to one\n", path);
			return -1;
		}
		fd = open(path, flags);
		if (fd < 0)
			goto err;
		/* each thread in its own slice of the device */
		*span = (long)(dev_size / nthreads) < wrap ? (long)(dev_size / nthreads) : wrap;
		*span -= *span % size;
		*base = idx * *span;
		if (*span < size) {
			fprintf(stderr, "io_loop: %s is too small\n", path);
			close(fd);
			return -1;
		}
		return fd;
	}
	if (nthreads == 1)
		snprintf(name, sizeof(name), "%s", path);
	else
		snprintf(name, sizeof(name), "%s.%ld", path, idx);
	fd = open(name, flags | O_CREAT, 0644);
	if (fd >= 0)
		return fd;
	fprintf(stderr, "io_loop: open %s: %s\n", name, strerror(errno));
	return -1;
err:
	fprintf(stderr, "io_loop: open %s: %s\n", path, strerror(errno));
	return -1;
}

static void *worker(void *arg)
{
	struct worker *w = arg;
	long base, span, off = 0;
	long long period = rate > 0 ? (long long)(1e9 * nthreads / rate) : 0, end = 0, next;
	void *buf = NULL;
	int fd = open_target(w->idx, &base, &span);

	if (fd < 0 || posix_memalign(&buf, 4096, size))
		failed = 1;
	else
		memset(buf, 'x', size);
	pthread_barrier_wait(&ready); /* t_start is set by main after this */
	pthread_barrier_wait(&ready);
	if (failed) {
		if (fd >= 0)
			close(fd);
		free(buf);
		return NULL;
	}
	next = t_start;
	if (seconds > 0)
		end = t_start + (long long)(seconds * 1e9);
	for (long i = 0; seconds > 0 || i < count; i++) {
		if (period) {
			long long t = now_ns();

			next += period;
			if (next > t)
				sleep_until(next);
		}
		if (end && (i & 15) == 0 && now_ns() >= end)
			break;
		if (pwrite(fd, buf, size, base + off) != size ||
		    (mode == M_DATASYNC && fdatasync(fd))) {
			fprintf(stderr, "io_loop: write: %s\n", strerror(errno));
			failed = 1;
			break;
		}
		w->done++;
		off += size;
		if (off + size > span)
			off = 0;
	}
	close(fd);
	free(buf);
	return NULL;
}

int main(int argc, char **argv)
{
	struct worker *ws;
	long long t_end;
	long ops = 0;
	int c;

	mode = -1;
	while ((c = getopt(argc, argv, "m:s:n:d:t:r:w:")) != -1) {
		switch (c) {
		case 'm':
			mode = !strcmp(optarg, "pwrite") ? M_PWRITE : !strcmp(optarg, "datasync") ? M_DATASYNC :
			       !strcmp(optarg, "direct") ? M_DIRECT : (enum mode)-1;
			break;
		case 's': size = atol(optarg); break;
		case 'n': count = atol(optarg); break;
		case 'd': seconds = atof(optarg); break;
		case 't': nthreads = atol(optarg); break;
		case 'r': rate = atof(optarg); break;
		case 'w': wrap = atol(optarg); break;
		default: goto usage;
		}
	}
	if (optind != argc - 1 || (int)mode < 0 || count <= 0 || nthreads < 1 || nthreads > 256 ||
	    seconds < 0 || rate < 0 || size < 0 || wrap < 0)
		goto usage;
	path = argv[optind];
	if (!size)
		size = mode == M_PWRITE ? 64 : 4096;
	if (!wrap)
		wrap = mode == M_DIRECT ? 64 << 20 : 1 << 20;
	if (wrap < size || (mode == M_DIRECT && size % 4096))
		goto usage;
	if (mode == M_DIRECT) {
		int fd = open(path, O_RDONLY);
		struct stat st;

		if (fd >= 0 && !fstat(fd, &st) && S_ISBLK(st.st_mode))
			ioctl(fd, BLKGETSIZE64, &dev_size);
		if (fd >= 0)
			close(fd);
	}
	prctl(PR_SET_TIMERSLACK, 1UL); /* pacing: wake up on time */
	ws = calloc(nthreads, sizeof(*ws));
	if (!ws)
		return 1;
	pthread_barrier_init(&ready, NULL, nthreads + 1);
	for (long i = 0; i < nthreads; i++) {
		ws[i].idx = i;
		pthread_create(&ws[i].th, NULL, worker, &ws[i]);
	}
	pthread_barrier_wait(&ready);
	t_start = now_ns();
	pthread_barrier_wait(&ready);
	for (long i = 0; i < nthreads; i++) {
		pthread_join(ws[i].th, NULL);
		ops += ws[i].done;
	}
	t_end = now_ns();
	printf("ops %ld\nwall_ns %lld\nns_per_op %.0f\nops_per_s %.0f\n", ops, t_end - t_start,
	       ops ? (double)(t_end - t_start) * nthreads / ops : 0.0,
	       ops ? ops / ((t_end - t_start) / 1e9) : 0.0);
	return failed;
usage:
	fprintf(stderr, "usage: io_loop -m pwrite|datasync|direct [-s BYTES] [-n COUNT] [-d SECONDS] "
			"[-t THREADS] [-r OPS_PER_S] [-w WRAP] PATH\n");
	return 2;
}
