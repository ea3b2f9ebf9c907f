/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include "cgfilter.h"
#include "log.h"
#include "output.h"
#include "run.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL /* Linux 6.9: a pidfd of one thread, readable when it exits */
#endif

volatile sig_atomic_t il_exiting;

static void on_signal(int sig)
{
	il_exiting = 1;
	signal(sig, SIG_DFL); /* a second Ctrl-C kills */
}

void il_signals_init(void)
{
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };
	static bool done;

	if (done) /* once: a signal already taken has put its default back (a second kills) */
		return;
	done = true;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

unsigned long long il_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* The process or thread il_run() ends with: fd is its pidfd, or -1 to read /proc instead. */
static struct {
	unsigned id;
	bool thread;
	int fd;
} target = { .fd = -1 };

void il_watch_target(unsigned pid, unsigned tid)
{
	target.id = tid ? tid : pid;
	target.thread = tid != 0;
	if (target.fd >= 0)
		close(target.fd);
	target.fd = -1;
	if (!target.id)
		return;
	target.fd = syscall(SYS_pidfd_open, target.id, target.thread ? PIDFD_THREAD : 0);
	if (target.fd < 0)
		il_debug("no pidfd for %s %u (%s): /proc is read instead",
			 target.thread ? "thread" : "process", target.id, strerror(errno));
}

/* Without a pidfd: gone when /proc/ID/stat is, or says zombie/dead (a thread id has one too). */
static bool target_gone_proc(void)
{
	char path[48], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/stat", target.id);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n == 0 || errno == ESRCH;
	buf[n] = 0;
	p = strrchr(buf, ')'); /* "pid (comm) S ...": comm may hold anything */
	return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

bool il_target_gone(void)
{
	struct pollfd p = { .fd = target.fd, .events = POLLIN };

	if (!target.id)
		return il_cgfilter_gone(); /* --cgroup's is watched as a target */
	if (target.fd < 0 ? !target_gone_proc() : poll(&p, 1, 0) != 1)
		return false;
	il_warn("%s %u exited", target.thread ? "thread" : "process", target.id);
	return true;
}

/* stdout is a pipe or a socket: the kind of output whose reader can go away. */
static bool output_is_pipe(void)
{
	struct stat st;

	return !fstat(STDOUT_FILENO, &st) && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
}

bool il_output_gone(void)
{
	struct pollfd p = { .fd = STDOUT_FILENO };

	/* events 0: only POLLERR (a pipe without readers) and POLLHUP are reported */
	return output_is_pipe() && poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP));
}

int il_run(const struct il_run *r)
{
	unsigned long long start = il_now_ns(), next = 0, end = 0;
	struct pollfd fds[3];
	int nfds = 0, rb_i = -1, out_i = -1, tgt_i = -1;
	bool out_gone = false;
	unsigned ticks = 0;
	int done = 0;

	if (r->interval_s)
		next = start + r->interval_s * 1000000000ULL;
	if (r->duration_s)
		end = start + r->duration_s * 1000000000ULL;
	if (r->rb) {
		rb_i = nfds;
		fds[nfds++] = (struct pollfd){ .fd = ring_buffer__epoll_fd(r->rb), .events = POLLIN };
	}
	if (output_is_pipe()) {
		out_i = nfds;
		fds[nfds++] = (struct pollfd){ .fd = STDOUT_FILENO };
	}
	if (target.fd >= 0) {
		tgt_i = nfds;
		fds[nfds++] = (struct pollfd){ .fd = target.fd, .events = POLLIN };
	}

	while (!il_exiting) {
		unsigned long long now;
		int n = poll(fds, nfds, 100);

		if (n < 0 && errno != EINTR) {
			il_err("polling failed: %s", strerror(errno));
			return -1;
		}
		if (n <= 0) /* timeout or signal: nothing is ready */
			for (int i = 0; i < nfds; i++)
				fds[i].revents = 0;
		/* also at every timeout: records submitted without a wakeup (il_wakeup_flags(),
		 * bpf/lib/common.bpf.h) wait at most 100 ms */
		if (rb_i >= 0 && ((fds[rb_i].revents & POLLIN) || n == 0)) {
			n = ring_buffer__consume(r->rb);
			if (n < 0) {
				il_err("reading the ring buffer failed: %s", strerror(-n));
				return -1;
			}
		}
		now = il_now_ns();
		if (next && now >= next && !il_exiting) {
			if (r->tick && r->tick(r->ctx))
				break;
			ticks++;
			if (r->count && ticks >= r->count) {
				done = 1;
				break;
			}
			next += r->interval_s * 1000000000ULL;
		}
		fflush(stdout);
		/* the reader went away: a write failed (EPIPE, or EBADF, ENOSPC...), or a pipe or
		 * socket says so */
		if (ferror(stdout) || (out_i >= 0 && (fds[out_i].revents & (POLLERR | POLLHUP)))) {
			out_gone = true;
			il_info("the output cannot be written: tracing ends");
			break;
		}
		if ((tgt_i < 0 || fds[tgt_i].revents) && il_target_gone())
			break;
		if (end && now >= end)
			break;
	}
	if (r->rb && !out_gone)
		ring_buffer__consume(r->rb); /* what is still queued belongs to the summary */
	fflush(stdout);   /* rows first: a stuck stdout counts them */
	il_out_summary(); /* the caller's summary: to stderr if stdout is blocked past a signal */
	return done;
}

struct ring_buffer *il_ringbuf_open(struct bpf_map *map, ring_buffer_sample_fn fn, void *ctx)
{
	struct ring_buffer *rb = ring_buffer__new(bpf_map__fd(map), fn, ctx, NULL);

	if (!rb)
		il_err("cannot open the ring buffer: %s", strerror(errno));
	return rb;
}
