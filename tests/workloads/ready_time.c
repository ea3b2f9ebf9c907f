/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * ready_time: how long a tracer takes to get ready, and its memory at rest.
 *
 *   ready_time [-p PATTERN] [-r MS] [-T SECONDS] [-o FILE] -- CMD [ARG...]
 *
 * Runs CMD with its standard output and error on a pseudo-terminal (so a tool that prints
 * its ready line with stdio on stdout is read at once, not when its buffer fills), and times
 * from just before the fork to the first output line holding PATTERN (default "Hit Ctrl-C").
 * Then it lets CMD rest for MS milliseconds (default 2000), reads VmRSS from
 * /proc/PID/status, sends SIGINT (Ctrl-C), reads the rest of the output until CMD exits
 * (SIGKILL after 10 s) and prints:
 *   ready_ns N     fork to the ready line, ns (-1 when it never came)
 *   rss_kb N       VmRSS after MS ms at rest (-1 when not read)
 *   status N       CMD's exit status (128 + signal when killed by one)
 *   exit_ns N      SIGINT to CMD's exit, ns: its summary and detaching (-1 when not sent)
 * The output of CMD goes to FILE (default: discarded). Gives up waiting for the ready line
 * after SECONDS (default 30). Exit 0 when the ready line came, 1 otherwise, 2 on bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int master = -1, out = -1;
static char line[8192];
static size_t used;

/* Read what CMD wrote within timeout_ms; copy it to FILE. Returns 2 when a line holding pat
 * came (pat NULL: never), 1 when other output came, 0 when none, -1 at end of output. */
static int pump(int timeout_ms, const char *pat)
{
	struct pollfd p = { .fd = master, .events = POLLIN };
	char buf[4096];
	ssize_t n;
	int found = 0;

	if (poll(&p, 1, timeout_ms) <= 0)
		return 0;
	n = read(master, buf, sizeof(buf));
	if (n <= 0)
		return -1; /* EIO: every holder of the terminal's other side is gone */
	if (out >= 0 && write(out, buf, n) < 0)
		out = -1;
	for (ssize_t i = 0; i < n; i++) {
		if (buf[i] == '\n' || used == sizeof(line) - 1) {
			line[used] = 0;
			if (pat && strstr(line, pat))
				found = 1;
			used = 0;
		} else {
			line[used++] = buf[i];
		}
	}
	if (pat && !found) { /* a ready line without its newline yet */
		line[used] = 0;
		found = strstr(line, pat) != NULL;
		if (found)
			used = 0;
	}
	return found ? 2 : 1;
}

static long rss_kb(pid_t pid)
{
	char name[64], buf[256];
	long kb = -1;
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/status", (int)pid);
	f = fopen(name, "r");
	if (!f)
		return -1;
	while (fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "VmRSS: %ld", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

int main(int argc, char **argv)
{
	const char *pat = "Hit Ctrl-C", *file = NULL;
	long rest_ms = 2000, give_up_s = 30, rss = -1;
	long long t0, ready = -1, deadline, t_int, exit_ns = -1;
	int opt, st = 0, r, done = 0;
	pid_t pid;

	while ((opt = getopt(argc, argv, "+p:r:T:o:")) != -1) {
		switch (opt) {
		case 'p': pat = optarg; break;
		case 'r': rest_ms = atol(optarg); break;
		case 'T': give_up_s = atol(optarg); break;
		case 'o': file = optarg; break;
		default: goto usage;
		}
	}
	if (optind >= argc || rest_ms < 0 || give_up_s <= 0)
		goto usage;
	if (file && (out = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0) {
		fprintf(stderr, "ready_time: %s: %s\n", file, strerror(errno));
		return 2;
	}
	master = posix_openpt(O_RDWR | O_NOCTTY);
	if (master < 0 || grantpt(master) || unlockpt(master)) {
		fprintf(stderr, "ready_time: no pseudo-terminal: %s\n", strerror(errno));
		return 2;
	}
	t0 = now_ns();
	pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		int s;

		setsid();
		s = open(ptsname(master), O_RDWR);
		if (s < 0)
			_exit(127);
		dup2(s, 0);
		dup2(s, 1);
		dup2(s, 2);
		if (s > 2)
			close(s);
		close(master);
		if (out >= 0)
			close(out);
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "ready_time: %s: %s\n", argv[optind], strerror(errno));
		_exit(127);
	}
	deadline = t0 + give_up_s * 1000000000LL;
	while (ready < 0 && now_ns() < deadline) {
		r = pump(100, pat);
		if (r == 2)
			ready = now_ns() - t0;
		else if (r < 0 || waitpid(pid, &st, WNOHANG) == pid) {
			done = 1;
			break;
		}
	}
	if (ready >= 0) {
		long long rest_end = now_ns() + rest_ms * 1000000LL;

		while (now_ns() < rest_end && pump((int)((rest_end - now_ns()) / 1000000) + 1, NULL) >= 0)
			;
		rss = rss_kb(pid);
	}
	if (!done) {
		kill(pid, SIGINT);
		t_int = now_ns();
		deadline = t_int + 10000000000LL;
		while (waitpid(pid, &st, WNOHANG) != pid) {
			if (now_ns() > deadline) {
				kill(pid, SIGKILL);
				waitpid(pid, &st, 0);
				break;
			}
			if (pump(5, NULL) < 0)
				usleep(1000);
		}
		if (WIFEXITED(st))
			exit_ns = now_ns() - t_int;
	}
	while (pump(0, NULL) > 0) /* what is left in the terminal */
		;
	printf("ready_ns %lld\nrss_kb %ld\nstatus %d\nexit_ns %lld\n", ready, rss,
	       WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), exit_ns);
	return ready >= 0 ? 0 : 1;
usage:
	fprintf(stderr, "usage: ready_time [-p PATTERN] [-r MS] [-T SECONDS] [-o FILE] -- CMD [ARG...]\n");
	return 2;
}
