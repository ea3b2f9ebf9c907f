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
 *   calls N, oncpu_ns N (the CPU clock), schedstat_oncpu_ns N (field 1), runq_ns N (field 2),
 *   switches N (field 3, pcount: the times the thread was switched in), wall_ns N (the
 *   CLOCK_MONOTONIC time, bpf_ktime_get_ns()'s clock, between reads just around each call,
 *   inside the CPU clock reads: a tracer's window from syscall entry to exit lies inside it)
 * and what the CPU clock counts in a bracket beyond the call inside it, measured the same way
 * after the last call (a tracer attached pays its cost in them too; after, so that the calls
 * meet a CPU hog beside them as they would without these):
 *   bracket_ns N: the median CPU clock of a bracket around a call with nothing to do (pread
 *     of 0 bytes on PATH, opened again read-only: the syscall entry and exit, the clock reads,
 *     a tracer's programs around a traced call), over CALIB brackets that were not switched;
 *   switch_ns N: what a switch-in charges to the thread besides: the median CPU clock, less
 *     bracket_ns, of CALIB brackets that switched once around a sched_yield() (given the CPU
 *     back after a preemption: switch_yield_ns), a 1 ms nanosleep() (woken by its own CPU's
 *     timer: switch_sleep_ns) and a read of a pipe that a thread on another CPU writes every
 *     millisecond (woken from another CPU, as an I/O completion's worker does:
 *     switch_remote_ns), the largest; the thread ran none of its own code in them. The
 *     kernel starts its clock at __schedule's rq clock update, before the sched_switch
 *     tracepoint, or at the enqueue when a wake-up's preemption skips that update
 *     (rq_clock_skip_update), and the return to user space runs cold. 0 when none switched.
 * SPLIT_SCHED_EACH=1 in the environment prints each call's deltas on stderr.
 * Exit 0 when every call succeeded, 1 otherwise, 2 on bad usage.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "wl.h"

#define CALIB 21 /* calibration brackets of each kind (odd: one median) */
#define MAX2(a, b) ((a) > (b) ? (a) : (b))
#define MAX3(a, b, c) MAX2(MAX2(a, b), c)

static int sfd, fd, rfd, wake_pipe[2];
static char *buf;
static long size;

/* The deltas of this thread's counters over one bracket. */
struct counters {
	unsigned long long clock;  /* CLOCK_THREAD_CPUTIME_ID, ns */
	unsigned long long oncpu;  /* schedstat field 1, ns */
	unsigned long long runq;   /* schedstat field 2, ns */
	unsigned long long pcount; /* schedstat field 3: switch-ins */
	unsigned long long wall;   /* CLOCK_MONOTONIC, ns */
};

/* schedstat fields 1-3 of this thread into c (all but clock) */
static void schedstat(struct counters *c)
{
	char sbuf[128];
	ssize_t n = pread(sfd, sbuf, sizeof(sbuf) - 1, 0);

	if (n <= 0 || sscanf((sbuf[n] = 0, sbuf), "%llu %llu %llu", &c->oncpu, &c->runq, &c->pcount) != 3) {
		perror("split_sched: /proc/thread-self/schedstat");
		exit(1);
	}
}

static unsigned long long clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static unsigned long long cpu_ns(void) { return clock_ns(CLOCK_THREAD_CPUTIME_ID); }

/* The bracketed calls: false when one failed. */
static bool do_write(long i) { return pwrite(fd, buf, size, i * size) == size; }
static bool do_fsync(long i) { (void)i; return fsync(fd) == 0; }
static bool do_nothing(long i) { (void)i; return pread(rfd, buf, 0, 0) == 0; }
static bool do_yield(long i) { (void)i; return sched_yield() == 0; }
static bool do_sleep(long i)
{
	struct timespec ms = { .tv_nsec = 1000000 };

	(void)i;
	return nanosleep(&ms, NULL) == 0;
}

/* Waits for the waker thread's next byte: a wake-up from another CPU, as an I/O completion's
 * (the loop device's worker, the journal thread) comes. */
static bool do_remote(long i)
{
	char b;

	(void)i;
	return read(wake_pipe[0], &b, 1) == 1;
}

/* The waker thread: moved off the workload's CPU (to the first other CPU it may use), it
 * writes a byte every millisecond until the pipe closes. */
static void *waker(void *arg)
{
	struct timespec ms = { .tv_nsec = 1000000 };
	int self = sched_getcpu();
	cpu_set_t set;

	(void)arg;
	CPU_ZERO(&set);
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (c != self) {
			CPU_SET(c, &set);
			if (!pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
				break;
			CPU_CLR(c, &set);
		}
	}
	do
		nanosleep(&ms, NULL);
	while (write(wake_pipe[1], "w", 1) == 1);
	return NULL;
}

/* call(i) bracketed: schedstat, the CPU clock, the wall clock, the call, the wall clock, the
 * CPU clock, schedstat; the deltas into
 * *d. Returns what call returned. */
static bool bracket(bool (*call)(long), long i, struct counters *d)
{
	struct counters a, b;
	bool good;

	schedstat(&a);
	a.clock = cpu_ns();
	a.wall = clock_ns(CLOCK_MONOTONIC);
	good = call(i);
	b.wall = clock_ns(CLOCK_MONOTONIC);
	b.clock = cpu_ns();
	schedstat(&b);
	d->clock = b.clock - a.clock;
	d->oncpu = b.oncpu - a.oncpu;
	d->runq = b.runq - a.runq;
	d->pcount = b.pcount - a.pcount;
	d->wall = b.wall - a.wall;
	return good;
}

static int cmp_ull(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

/* The median CPU clock of up to CALIB brackets around call that were switched in `switches`
 * times, out of at most CALIB * 10 tries; 0 when none was. */
static unsigned long long calibrate(bool (*call)(long), unsigned long long switches)
{
	unsigned long long v[CALIB];
	struct counters d;
	int n = 0;

	for (int tries = 0; tries < CALIB * 10 && n < CALIB; tries++) {
		if (!bracket(call, 0, &d)) {
			perror("split_sched: calibration");
			exit(1);
		}
		if (d.pcount == switches)
			v[n++] = d.clock;
	}
	if (!n)
		return 0;
	qsort(v, n, sizeof(v[0]), cmp_ull);
	return v[n / 2];
}

int main(int argc, char **argv)
{
	unsigned long long sum_c = 0, sum_s = 0, sum_r = 0, sum_p = 0, bracket_ns, yield_ns, sleep_ns;
	unsigned long long remote_ns, sum_w = 0;
	pthread_t th;
	long count = 100, calls = 0;
	const char *gofile = NULL;
	struct counters d;
	int c;

	size = 1 << 20;
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
	rfd = open(argv[optind], O_RDONLY);
	if (!buf || sfd < 0 || fd < 0 || rfd < 0) {
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
			if (!bracket(k ? do_fsync : do_write, i, &d)) {
				perror("split_sched: pwrite/fsync");
				return 1;
			}
			if (getenv("SPLIT_SCHED_EACH"))
				fprintf(stderr, "call %ld %c oncpu_ns %llu runq_ns %llu switches %llu\n", calls,
					k ? 'F' : 'W', d.clock, d.runq, d.pcount);
			sum_c += d.clock;
			sum_s += d.oncpu;
			sum_r += d.runq;
			sum_p += d.pcount;
			sum_w += d.wall;
			calls++;
		}
	}
	bracket_ns = calibrate(do_nothing, 0);
	yield_ns = calibrate(do_yield, 1);
	sleep_ns = calibrate(do_sleep, 1);
	if (pipe(wake_pipe) || pthread_create(&th, NULL, waker, NULL)) {
		perror("split_sched: waker");
		return 1;
	}
	remote_ns = calibrate(do_remote, 1);
	signal(SIGPIPE, SIG_IGN);
	close(wake_pipe[0]); /* the waker's next write fails (EPIPE): it ends */
	pthread_join(th, NULL);
	yield_ns = yield_ns > bracket_ns ? yield_ns - bracket_ns : 0;
	sleep_ns = sleep_ns > bracket_ns ? sleep_ns - bracket_ns : 0;
	remote_ns = remote_ns > bracket_ns ? remote_ns - bracket_ns : 0;
	printf("calls %ld\noncpu_ns %llu\nschedstat_oncpu_ns %llu\nrunq_ns %llu\nswitches %llu\n"
	       "bracket_ns %llu\nswitch_ns %llu\nswitch_yield_ns %llu\nswitch_sleep_ns %llu\n"
	       "switch_remote_ns %llu\nwall_ns %llu\n", calls, sum_c, sum_s, sum_r, sum_p, bracket_ns,
	       MAX3(yield_ns, sleep_ns, remote_ns), yield_ns, sleep_ns, remote_ns, sum_w);
	return 0;
usage:
	fprintf(stderr, "usage: split_sched [-g GOFILE] [-n COUNT] [-s BYTES] PATH\n");
	return 2;
}
