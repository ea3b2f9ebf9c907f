/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * compat_calls: writes and fsyncs through the 32-bit system call entry (int 0x80), as a
 * 32-bit process makes them, after the same through the 64-bit one.
 *
 *   compat_calls [-g GOFILE] [-n N] PATH
 *
 * Opens (creates) PATH, then makes N 8-byte write(2) and N fsync(2) calls the usual way, then
 * N of each through int 0x80 (i386 numbers: write 4, fsync 118). Prints "writes64 N",
 * "fsyncs64 N", "writes32 N", "fsyncs32 N": the calls that succeeded. Exit 0 when all did, 1
 * when one failed, 2 on bad usage, 3 when the kernel has no 32-bit entry (int 0x80 faults:
 * no IA32 emulation); then nothing of the 32-bit part ran.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "wl.h"

static sigjmp_buf no_int80;
static long n = 10, w64, f64, w32, f32; /* static: kept across the siglongjmp */

static void on_fault(int sig)
{
	(void)sig;
	siglongjmp(no_int80, 1);
}

/* A 32-bit system call nr with up to three arguments; its return value (-errno on failure). */
static long int80(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(nr), "b"(a), "c"(b), "d"(c) : "memory");
	return ret;
}

int main(int argc, char **argv)
{
	const char *gofile = NULL;
	char *buf;
	int opt, fd;

	while ((opt = getopt(argc, argv, "g:n:")) != -1) {
		switch (opt) {
		case 'g': gofile = optarg; break;
		case 'n': n = atol(optarg); break;
		default: return 2;
		}
	}
	if (optind != argc - 1 || n < 1) {
		fprintf(stderr, "usage: compat_calls [-g GOFILE] [-n N] PATH\n");
		return 2;
	}
	fd = open(argv[optind], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	/* a 32-bit call takes 32-bit pointers: the buffer below 2 GiB */
	buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	if (fd < 0 || buf == MAP_FAILED) {
		perror("compat_calls");
		return 1;
	}
	memcpy(buf, "0123456\n", 8);
	wl_wait_go(gofile);
	for (long i = 0; i < n; i++) {
		w64 += write(fd, buf, 8) == 8;
		f64 += fsync(fd) == 0;
	}
	signal(SIGSEGV, on_fault);
	if (sigsetjmp(no_int80, 1)) {
		printf("writes64 %ld\nfsyncs64 %ld\nno int 0x80\n", w64, f64);
		return 3;
	}
	for (long i = 0; i < n; i++) {
		w32 += int80(4, fd, (long)buf, 8) == 8;
		f32 += int80(118, fd, 0, 0) == 0;
	}
	printf("writes64 %ld\nfsyncs64 %ld\nwrites32 %ld\nfsyncs32 %ld\n", w64, f64, w32, f32);
	return w64 == n && f64 == n && w32 == n && f32 == n ? 0 : 1;
}
