/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * pipe_pingpong: a context-switch-heavy workload with no I/O wait.
 *
 *   pipe_pingpong [-n ROUNDS]
 *
 * A parent and a child pass one byte back and forth over two pipes ROUNDS times (default
 * 200000); each round is two sleeps in pipe_read (not I/O wait) and two wake-ups, so the cost
 * of anything attached to sched_switch shows directly. Both are pinned to CPU 0 when the
 * machine allows, so every round is two real context switches. Prints
 *   rounds N
 *   ns_per_round N
 *   rounds_per_s N
 * Exit 0 on success, 1 on an error.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

int main(int argc, char **argv)
{
	long rounds = 200000;
	int ab[2], ba[2], opt;
	struct timespec t0, t1;
	cpu_set_t one;
	char c = 'x';
	pid_t child;

	while ((opt = getopt(argc, argv, "n:")) != -1) {
		if (opt != 'n' || (rounds = atol(optarg)) <= 0) {
			fprintf(stderr, "usage: pipe_pingpong [-n ROUNDS]\n");
			return 1;
		}
	}
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	sched_setaffinity(0, sizeof(one), &one); /* best effort; inherited by the child */
	if (pipe(ab) || pipe(ba))
		return 1;
	child = fork();
	if (child < 0)
		return 1;
	if (child == 0) {
		for (long i = 0; i < rounds; i++)
			if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
				_exit(1);
		_exit(0);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < rounds; i++)
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			return 1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	int st;
	waitpid(child, &st, 0);
	double ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
	printf("rounds %ld\nns_per_round %.0f\nrounds_per_s %.0f\n", rounds, ns / rounds, rounds / (ns / 1e9));
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
