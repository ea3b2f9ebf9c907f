/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * fork_tree: a process whose work is done by children it forks, and by their children, for
 * the --cgroup tests: what -p misses and --cgroup must count.
 *
 *   fork_tree [-c CHILDREN] [-n CALLS] [-g GOFILE] DIR
 *
 * After the go-file (wl.h), the process forks CHILDREN children (default 2); each forks one
 * child of its own; then each of the 1 + 2 * CHILDREN processes makes CALLS fsync(2) calls
 * (default 20) on a file of its own in DIR (DIR/f.PID, 1 byte written once before), and the
 * parents wait for their children. Prints "fsyncs N" (all processes' fsync calls, as counted
 * by the calls that returned 0) and "pids P1 P2 ..." (the processes, the first one first).
 * Exit 0 when every call succeeded, 1 otherwise, 2 on bad usage.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "wl.h"

/* CALLS fsyncs on DIR/f.PID; the number that succeeded. */
static int work(const char *dir, int calls)
{
	char path[4096];
	int fd, done = 0;

	snprintf(path, sizeof(path), "%s/f.%d", dir, getpid());
	if ((fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644)) < 0 || write(fd, "x", 1) != 1)
		return 0;
	for (int i = 0; i < calls; i++)
		done += fsync(fd) == 0;
	close(fd);
	return done;
}

int main(int argc, char **argv)
{
	int children = 2, calls = 20, opt, fds[2], total = 0, n;
	const char *gofile = NULL;
	char pids[4096];
	size_t np = 0;

	while ((opt = getopt(argc, argv, "c:n:g:")) != -1) {
		switch (opt) {
		case 'c': children = atoi(optarg); break;
		case 'n': calls = atoi(optarg); break;
		case 'g': gofile = optarg; break;
		default: return 2;
		}
	}
	if (optind != argc - 1 || children < 0 || children > 64 || calls < 0)
		return 2;
	wl_wait_go(gofile);
	/* each process writes "PID DONE\n" into the pipe once its calls are made */
	if (pipe(fds))
		return 1;
	for (int c = 0; c < children; c++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid == 0) {
			pid_t g = fork();
			char line[64];

			close(fds[0]);
			if (g < 0)
				_exit(1);
			n = snprintf(line, sizeof(line), "%d %d\n", getpid(), work(argv[optind], calls));
			if (write(fds[1], line, n) != n)
				_exit(1);
			if (g > 0) {
				int st;

				waitpid(g, &st, 0);
				_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 1);
			}
			_exit(0);
		}
	}
	close(fds[1]);
	total = work(argv[optind], calls);
	np = snprintf(pids, sizeof(pids), "%d", getpid());
	{
		FILE *f = fdopen(fds[0], "r");
		int pid, done;

		while (f && fscanf(f, "%d %d", &pid, &done) == 2) {
			total += done;
			if (np < sizeof(pids))
				np += snprintf(pids + np, sizeof(pids) - np, " %d", pid);
		}
	}
	for (int c = 0, st; c < children; c++)
		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			return 1;
	printf("fsyncs %d\npids %s\n", total, pids);
	return total == calls * (1 + 2 * children) ? 0 : 1;
}
