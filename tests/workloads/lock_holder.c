/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * lock_holder: appends to a file while holding its inode lock for a set time, asleep: the
 * lock-wait answer of the split layer and of iolayer's verdict, whatever the machine's speed.
 *
 *   lock_holder [-g GOFILE] [-n COUNT] [-t HOLD_MS] [-p GAP_MS] [-z] PATH
 *
 * Opens PATH (O_WRONLY|O_APPEND|O_CREAT) and does COUNT times (default 10; 0: until killed):
 * write() of one page whose source page is missing and registered with userfaultfd, then
 * HOLD_MS (default 20) later its handler thread fills it (UFFDIO_COPY); then GAP_MS (default
 * 5) of pause, so that waiters get the lock. An append to a file holds the inode lock
 * (i_rwsem, exclusive: ext4_buffered_write_iter, generic_perform_write) while it faults the
 * source page in (fault_in_iov_iter_readable), so each write holds the lock HOLD_MS asleep
 * in the fault (not in I/O wait, not on a CPU): another writer of the file sleeps on the lock
 * (the rw-semaphore's waiters spin only while the owner runs) until this one's unlock wakes
 * it. The page is dropped again (MADV_DONTNEED) after each write, so the next one faults.
 * With -z the file is truncated to 0 after each write (the other writers' appends do not
 * fill the filesystem, however long they run).
 *
 * Prints "pid PID" (with -g, then waits until GOFILE exists), and at the end
 *   holds N, held_ns N (the writes' wall time, summed)
 * Exit 0 when every write succeeded, 1 otherwise (no userfaultfd: needs CONFIG_USERFAULTFD
 * and, for faults in the kernel, CAP_SYS_PTRACE), 2 on bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include "wl.h"

static int uffd;
static long hold_ms = 20, page;
static char *fill; /* what UFFDIO_COPY puts in the missing page */

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* The handler thread: each fault on the registered page is filled hold_ms after it came. */
static void *handler(void *arg)
{
	struct uffd_msg msg;
	struct pollfd p = { .fd = uffd, .events = POLLIN };

	(void)arg;
	for (;;) {
		if (poll(&p, 1, -1) < 0 || read(uffd, &msg, sizeof(msg)) != sizeof(msg)) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			perror("lock_holder: userfaultfd read");
			exit(1);
		}
		if (msg.event != UFFD_EVENT_PAGEFAULT)
			continue;
		sleep_ms(hold_ms);
		struct uffdio_copy c = {
			.dst = msg.arg.pagefault.address & ~(page - 1),
			.src = (unsigned long)fill,
			.len = page,
		};
		if (ioctl(uffd, UFFDIO_COPY, &c) && errno != EEXIST) {
			perror("lock_holder: UFFDIO_COPY");
			exit(1);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long count = 10, gap_ms = 5, holds = 0;
	int truncate_each = 0;
	unsigned long long held = 0;
	const char *gofile = NULL;
	pthread_t th;
	char *src;
	int c, fd;

	while ((c = getopt(argc, argv, "g:n:t:p:z")) != -1) {
		switch (c) {
		case 'g': gofile = optarg; break;
		case 'n': count = atol(optarg); break;
		case 't': hold_ms = atol(optarg); break;
		case 'p': gap_ms = atol(optarg); break;
		case 'z': truncate_each = 1; break;
		default: goto usage;
		}
	}
	if (optind != argc - 1 || count < 0 || hold_ms <= 0 || gap_ms < 0)
		goto usage;
	page = sysconf(_SC_PAGESIZE);
	fd = open(argv[optind], O_WRONLY | O_APPEND | O_CREAT, 0644);
	src = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	fill = malloc(page);
	uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
	if (fd < 0 || src == MAP_FAILED || !fill || uffd < 0) {
		perror("lock_holder");
		return 1;
	}
	memset(fill, 'h', page);
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = {
		.range = { .start = (unsigned long)src, .len = page },
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};
	if (ioctl(uffd, UFFDIO_API, &api) || ioctl(uffd, UFFDIO_REGISTER, &reg) ||
	    pthread_create(&th, NULL, handler, NULL)) {
		perror("lock_holder: userfaultfd");
		return 1;
	}
	if (!gofile)
		printf("pid %d\n", getpid());
	wl_wait_go(gofile);
	for (long i = 0; !count || i < count; i++) {
		unsigned long long t0 = now_ns();

		if (write(fd, src, page) != page) {
			perror("lock_holder: write");
			return 1;
		}
		held += now_ns() - t0;
		holds++;
		madvise(src, page, MADV_DONTNEED); /* the next write faults again */
		if (truncate_each && ftruncate(fd, 0)) {
			perror("lock_holder: ftruncate");
			return 1;
		}
		if (gap_ms)
			sleep_ms(gap_ms);
	}
	printf("holds %ld\nheld_ns %llu\n", holds, held);
	return 0;
usage:
	fprintf(stderr, "usage: lock_holder [-g GOFILE] [-n COUNT] [-t HOLD_MS] [-p GAP_MS] [-z] PATH\n");
	return 2;
}
