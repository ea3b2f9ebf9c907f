/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include "log.h"
#include "output.h"
#include "run.h"

/* One of our two streams: fd 1 or 2. */
struct out {
	int fd;
	bool poll;  /* a pipe, socket or character device: wait with poll(), PIPE_BUF at a time */
	bool sock;  /* send(MSG_DONTWAIT): a socket can take less than poll() promised */
	struct il_out_status st;
};

static struct out outs[2] = { { .fd = STDOUT_FILENO }, { .fd = STDERR_FILENO } };
static unsigned long long deadline_ns; /* once a signal came: when waiting ends */
static bool summary, told, inited;

/* Wait until o->fd takes a write: true; false when a signal came and IL_OUT_GRACE_MS passed
 * since (poll() returns at a signal, with or without SA_RESTART, and every 100 ms). */
static bool writable(struct out *o)
{
	for (;;) {
		struct pollfd p = { .fd = o->fd, .events = POLLOUT };
		int timeout = 100;

		if (il_exiting) {
			unsigned long long now = il_now_ns();

			if (!deadline_ns)
				deadline_ns = now + IL_OUT_GRACE_MS * 1000000ULL;
			if (now >= deadline_ns)
				return false;
			if ((deadline_ns - now) / 1000000 + 1 < (unsigned long long)timeout)
				timeout = (deadline_ns - now) / 1000000 + 1;
		}
		int n = poll(&p, 1, timeout);

		/* POLLERR, POLLHUP, POLLNVAL too: the write then says what is wrong */
		if (n > 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
			return true;
	}
}

/* The bytes of buf[0..size) that o cannot take: counted, and on stdout after the summary
 * started, written to stderr instead. */
static void unwritten(struct out *o, const char *buf, size_t size)
{
	if (o == &outs[0] && o->st.stuck && !o->st.err && summary) {
		if (!told) {
			told = true;
			il_warn("stdout is blocked (its reader does not read): %llu lines not written; "
				"the rest of the output follows here", o->st.lost_lines);
		}
		fwrite(buf, 1, size, stderr);
		return;
	}
	for (const char *p = buf; (p = memchr(p, '\n', buf + size - p)); p++)
		o->st.lost_lines++;
	o->st.lost_bytes += size;
}

static ssize_t out_write(void *cookie, const char *buf, size_t size)
{
	struct out *o = cookie;
	size_t done = 0;

	while (done < size && !o->st.err && !o->st.stuck) {
		size_t n = size - done;
		ssize_t k;

		if (o->poll) {
			if (!writable(o)) {
				o->st.stuck = true;
				break;
			}
			if (n > PIPE_BUF) { /* whole lines where it can: a cut leaves no half row */
				const char *nl = memrchr(buf + done, '\n', PIPE_BUF);

				n = nl ? (size_t)(nl - (buf + done)) + 1 : PIPE_BUF;
			}
		}
		k = o->sock ? send(o->fd, buf + done, n, MSG_DONTWAIT | MSG_NOSIGNAL) :
			      write(o->fd, buf + done, n);
		if (k < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (k < 0) {
			o->st.err = errno;
			break;
		}
		done += k;
	}
	if (done == size)
		return size;
	unwritten(o, buf + done, size - done);
	if (o->st.err) {
		errno = o->st.err;
		return done; /* the stream's error flag: il_run() ends, the tool says why */
	}
	return size; /* stuck: counted, not an error of the output */
}

/* fd made valid: a closed fd 0, 1 or 2 opened on /dev/null read-only (a write fails EBADF). */
static void fd_valid(int fd)
{
	int nfd;

	if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
		return;
	nfd = open("/dev/null", O_RDONLY); /* inherited, as fds 0-2 are */
	if (nfd >= 0 && nfd != fd) { /* a lower fd was closed too: that one took it */
		dup2(nfd, fd);
		close(nfd);
	}
}

static FILE *stream(struct out *o, FILE *old, int mode)
{
	static const cookie_io_functions_t fns = { .write = out_write };
	struct stat st;
	FILE *f;

	if (!fstat(o->fd, &st)) {
		o->poll = S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISCHR(st.st_mode);
		o->sock = S_ISSOCK(st.st_mode);
	}
	f = fopencookie(o, "w", fns);
	if (!f)
		return old;
	setvbuf(f, NULL, mode, mode == _IONBF ? 0 : BUFSIZ);
	return f;
}

void il_out_init(void)
{
	if (inited)
		return;
	inited = true;
	for (int fd = 0; fd <= 2; fd++)
		fd_valid(fd);
	fflush(stdout);
	stdout = stream(&outs[0], stdout, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF);
	stderr = stream(&outs[1], stderr, _IONBF);
}

void il_out_summary(void)
{
	summary = true;
}

struct il_out_status il_out_stdout(void)
{
	return outs[0].st;
}

bool il_out_told(void)
{
	return told;
}
