/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stdout and stderr as every tool writes them: streams of our own (fopencookie) on fds 1 and
 * 2 that never block past a signal, and that know what they could not write and why.
 *
 * - fds 0, 1 and 2 are made valid first: a closed one is opened on /dev/null read-only, so no
 *   later open (a BPF object, a map) takes fd 1 and receives the output, and a write to a
 *   closed stdout still fails with EBADF, as it would have.
 * - A write to a pipe, socket or character device waits with poll() and writes at most
 *   PIPE_BUF bytes at a time (cut after a newline where one is), so it never sleeps in
 *   write(2) where a signal cannot end it. Once a signal asked the tool to end (il_exiting),
 *   output that cannot be written within IL_OUT_GRACE_MS is given up: that stream is
 *   "stuck", and what it is given after is counted (lines, bytes), not written.
 * - From il_out_summary() on (il_run() calls it as it returns: the tool's final summary
 *   follows), a stuck stdout's output goes to stderr, after one line that counts the lines
 *   stdout could not take.
 * - The first failed write's errno is kept (EPIPE, EBADF, ENOSPC, EIO...), so the error
 *   reported at the end is that write's, not whatever errno says by then.
 */
#ifndef IOLAYER_OUTPUT_H
#define IOLAYER_OUTPUT_H

#include <stdbool.h>

/* How long output may still wait for its reader once a signal came (ms). */
#define IL_OUT_GRACE_MS 250

/* Make fds 0-2 valid and put our streams in place of stdout and stderr (stdout line-buffered
 * on a terminal, fully buffered otherwise; stderr unbuffered). Once, before anything is
 * printed or opened (il_tool_start() calls it first); a second call does nothing. */
void il_out_init(void);

/* The final summary starts: a stuck stdout's output goes to stderr from here on. */
void il_out_summary(void);

/* What writing stdout came to so far. */
struct il_out_status {
	int err;                        /* errno of the first failed write, 0 if none */
	bool stuck;                     /* given up after a signal (reader did not read) */
	unsigned long long lost_lines;  /* newlines not written (rows lost) */
	unsigned long long lost_bytes;  /* bytes not written */
};

/* The status of stdout (zeros before il_out_init()). */
struct il_out_status il_out_stdout(void);

/* Whether the lines stdout could not take were already counted on stderr (by the switch of
 * il_out_summary()). */
bool il_out_told(void);

#endif
