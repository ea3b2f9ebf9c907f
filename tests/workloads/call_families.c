/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * call_families: every system call of each file-operation family, with known answers.
 *
 *   call_families [-n COUNT] [-g GOFILE] PATH
 *
 * Opens PATH twice (O_RDWR|O_CREAT|O_TRUNC, then O_RDWR|O_DIRECT: 2 openat calls), then does
 * COUNT rounds (default 20) of, each on 4096 bytes of PATH:
 *
 *   W  write       at the file position, 0          (lseek to 0 first)
 *   W  writev      2 x 2048 at the file position, 4096
 *   W  pwritev     2 x 2048 at 8192
 *   W  pwritev2    2 x 2048 at pos -1: the file position, 12288 (lseek first), flags 0
 *   W  pwrite64    O_DIRECT, 4096-byte aligned buffer, at 16384
 *   S  sync_file_range(0, 20480, WAIT_BEFORE|WRITE|WAIT_AFTER)
 *   F  fsync
 *   W  io_uring WRITE  at 20480, submitted and waited for alone (IF io_uring)
 *   F  io_uring FSYNC  flags 0 (IF io_uring)
 *   R  read        at the file position, 0          (lseek to 0 first)
 *   R  readv       2 x 2048 at the file position, 4096
 *   R  preadv      2 x 2048 at 8192
 *   R  preadv2     2 x 2048 at 12288, flags 0
 *   O  open(2)     O_RDONLY (syscall(SYS_open): glibc's open() is openat(2))
 *   O  creat(2)    (syscall(SYS_creat)): truncates PATH, rewritten by the next round
 *   O  openat2(2)  O_RDONLY through struct open_how (syscall(SYS_openat2))
 *
 * so COUNT rounds make 6*COUNT W (COUNT of them io_uring requests), 4*COUNT R, 3*COUNT + 2 O,
 * COUNT S and 2*COUNT F (COUNT through io_uring), every R and W moving 4096 bytes. The ring
 * (io_uring_setup, raw system calls: no liburing needed) is made before the -g wait. lseek
 * and close are no file operation of fsslower's. With -g it first
 * prints "pid PID" and waits until GOFILE exists, so a tracer can be started on the pid
 * first; after that it does no other file I/O (nothing is printed unless a call fails).
 * Exit 0 when every call did what it should, 1 otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <linux/io_uring.h>
#include <linux/openat2.h>
#include "wl.h"

#define BS 4096

static const char *path;

static void fail(const char *what)
{
	fprintf(stderr, "call_families: %s on %s: %s\n", what, path, strerror(errno));
	exit(1);
}

/* A read or write call that must have moved BS bytes. */
static void moved(ssize_t r, const char *what)
{
	if (r != BS) {
		if (r >= 0)
			errno = EIO;
		fail(what);
	}
}

/* The fd an open call returned (-1 on failure): close it. */
static void open_close(long fd, const char *what)
{
	if (fd < 0)
		fail(what);
	close(fd);
}

static void seek(int fd, off_t off)
{
	if (lseek(fd, off, SEEK_SET) != off)
		fail("lseek");
}

/* An io_uring instance of 4 entries, driven one request at a time. */
static struct {
	int fd;
	unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
	__u64 next_id;
} ring;

static void *ring_map(size_t len, off_t what)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring.fd, what);

	if (p == MAP_FAILED)
		fail("mmap of the io_uring");
	return p;
}

static void ring_setup(void)
{
	struct io_uring_params p;
	char *sq, *cq;

	memset(&p, 0, sizeof(p));
	ring.fd = syscall(SYS_io_uring_setup, 4, &p);
	if (ring.fd < 0)
		fail("io_uring_setup");
	sq = ring_map(p.sq_off.array + p.sq_entries * sizeof(unsigned), IORING_OFF_SQ_RING);
	cq = ring_map(p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe), IORING_OFF_CQ_RING);
	ring.sqes = ring_map(p.sq_entries * sizeof(struct io_uring_sqe), IORING_OFF_SQES);
	ring.sq_tail = (unsigned *)(sq + p.sq_off.tail);
	ring.sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
	ring.sq_array = (unsigned *)(sq + p.sq_off.array);
	ring.cq_head = (unsigned *)(cq + p.cq_off.head);
	ring.cq_tail = (unsigned *)(cq + p.cq_off.tail);
	ring.cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
	ring.cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
}

/* Submit *sqe, wait for its completion and return its result (-errno on failure). */
static int ring_do(struct io_uring_sqe *sqe)
{
	unsigned tail = *ring.sq_tail, idx = tail & *ring.sq_mask, head;
	struct io_uring_cqe *cqe;
	int res;

	sqe->user_data = ++ring.next_id;
	ring.sqes[idx] = *sqe;
	ring.sq_array[idx] = idx;
	__atomic_store_n(ring.sq_tail, tail + 1, __ATOMIC_RELEASE);
	if (syscall(SYS_io_uring_enter, ring.fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) != 1)
		fail("io_uring_enter");
	head = __atomic_load_n(ring.cq_head, __ATOMIC_ACQUIRE);
	if (head == __atomic_load_n(ring.cq_tail, __ATOMIC_ACQUIRE)) {
		errno = EIO;
		fail("io_uring completion");
	}
	cqe = &ring.cqes[head & *ring.cq_mask];
	if (cqe->user_data != ring.next_id) {
		errno = EIO;
		fail("io_uring completion's user_data");
	}
	res = cqe->res;
	__atomic_store_n(ring.cq_head, head + 1, __ATOMIC_RELEASE);
	return res;
}

int main(int argc, char **argv)
{
	const char *gofile = NULL;
	long count = 20;
	char *buf, *abuf;
	int c, fd, dfd;

	while ((c = getopt(argc, argv, "n:g:")) != -1) {
		switch (c) {
		case 'n': count = atol(optarg); break;
		case 'g': gofile = optarg; break;
		default: goto usage;
		}
	}
	if (optind != argc - 1 || count < 0)
		goto usage;
	path = argv[optind];
	buf = malloc(BS);
	if (!buf || posix_memalign((void **)&abuf, BS, BS))
		fail("malloc");
	memset(buf, 'b', BS);
	memset(abuf, 'd', BS);
	struct iovec iov[2] = { { buf, BS / 2 }, { buf + BS / 2, BS / 2 } };
	struct open_how how = { .flags = O_RDONLY };
	struct io_uring_sqe sqe;

	ring_setup();
	wl_wait_go(gofile);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		fail("open");
	dfd = open(path, O_RDWR | O_DIRECT);
	if (dfd < 0)
		fail("open O_DIRECT");
	for (long i = 0; i < count; i++) {
		seek(fd, 0);
		moved(write(fd, buf, BS), "write");
		moved(writev(fd, iov, 2), "writev");
		moved(pwritev(fd, iov, 2, 2 * BS), "pwritev");
		seek(fd, 3 * BS);
		moved(pwritev2(fd, iov, 2, -1, 0), "pwritev2");
		moved(pwrite(dfd, abuf, BS, 4 * BS), "pwrite O_DIRECT");
		if (sync_file_range(fd, 0, 5 * BS, SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
				    SYNC_FILE_RANGE_WAIT_AFTER))
			fail("sync_file_range");
		if (fsync(fd))
			fail("fsync");
		memset(&sqe, 0, sizeof(sqe));
		sqe.opcode = IORING_OP_WRITE;
		sqe.fd = fd;
		sqe.addr = (unsigned long)buf;
		sqe.len = BS;
		sqe.off = 5 * BS;
		moved(ring_do(&sqe), "io_uring write");
		memset(&sqe, 0, sizeof(sqe));
		sqe.opcode = IORING_OP_FSYNC;
		sqe.fd = fd;
		if ((errno = -ring_do(&sqe)))
			fail("io_uring fsync");
		seek(fd, 0);
		moved(read(fd, buf, BS), "read");
		moved(readv(fd, iov, 2), "readv");
		moved(preadv(fd, iov, 2, 2 * BS), "preadv");
		moved(preadv2(fd, iov, 2, 3 * BS, 0), "preadv2");
		open_close(syscall(SYS_open, path, O_RDONLY), "open(2)");
		open_close(syscall(SYS_creat, path, 0644), "creat(2)");
		open_close(syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how)), "openat2(2)");
	}
	close(ring.fd);
	close(dfd);
	close(fd);
	free(abuf);
	free(buf);
	return 0;
usage:
	fprintf(stderr, "usage: call_families [-n COUNT] [-g GOFILE] PATH\n");
	return 2;
}
