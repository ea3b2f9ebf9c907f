/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The event loop every tool shares: signals, ring-buffer polling, interval/count/duration. */
#ifndef IOLAYER_RUN_H
#define IOLAYER_RUN_H

#include <signal.h>
#include <stdbool.h>
#include <bpf/libbpf.h>

/* Set by SIGINT/SIGTERM/SIGHUP. The first signal asks the loop to stop so the tool can print
 * its final summary and detach; a second one kills the process (default action). */
extern volatile sig_atomic_t il_exiting;

/* Install the handlers above, with SA_RESTART. A write to a blocked stdout does not sleep in
 * write(2) (output.h): after a signal it waits IL_OUT_GRACE_MS for the reader, then gives up
 * and counts what it could not write. SIGPIPE is ignored so a closed pipe ends the loop with
 * EPIPE instead of killing the tool before it detaches. */
void il_signals_init(void);

/* Watch the traced process (pid; tid 0) or thread (tid) so that il_run() ends when it exits,
 * saying "process N exited" / "thread N exited" on stderr. Through a pidfd (pidfd_open(2);
 * PIDFD_THREAD for a thread), else by reading /proc/N/stat at every turn of the loop. Called
 * by il_tool_start() for -p/--tid; with both, the thread is watched. */
void il_watch_target(unsigned pid, unsigned tid);

/* Whether stdout is a pipe or socket whose reader has gone (a write would fail with EPIPE). */
bool il_output_gone(void);
/* True (and "process N exited" on stderr) once the target of il_watch_target() has exited;
 * false while it runs or when there is none. */
bool il_target_gone(void);

struct il_run {
	unsigned interval_s;       /* call tick() every interval_s seconds; 0: never */
	unsigned count;            /* stop after this many ticks; 0: no limit */
	unsigned duration_s;       /* stop after this many seconds; 0: no limit */
	struct ring_buffer *rb;    /* polled, when not NULL, with stdout and the watched target;
				    * also read at every 100-ms poll timeout (records sent
				    * without a wakeup: il_wakeup_flags(), bpf/lib/common.bpf.h) */
	int (*tick)(void *ctx);    /* non-zero return stops the loop */
	void *ctx;
};

/* Run until a signal, the count or the duration ends it, or the watched process or thread
 * exits (il_watch_target()), or the output goes away: a write to stdout failed (EPIPE, when
 * the reader of a pipe exits), or stdout is a pipe or socket whose reader has gone, seen
 * within 100 ms even while nothing is printed. stdout is flushed at every turn, so rows reach
 * a pipe as they come. As it returns, il_out_summary(): what the caller prints next is its
 * summary (on stderr when stdout is blocked past a signal). Returns 1 when the count of ticks ended it (the last tick already
 * printed everything), 0 otherwise (the caller prints its final summary; when the output is
 * gone that fails quietly and il_tool_output_status() gives 0), -1 after printing one line
 * when polling fails. */
int il_run(const struct il_run *r);

/* A ring buffer on map (a BPF_MAP_TYPE_RINGBUF of a loaded object) calling fn(ctx, ...) for
 * each record, as ring_buffer__new(); NULL after one line. */
struct ring_buffer *il_ringbuf_open(struct bpf_map *map, ring_buffer_sample_fn fn, void *ctx);

/* Monotonic clock in ns (CLOCK_MONOTONIC, the clock bpf_ktime_get_ns() reads). */
unsigned long long il_now_ns(void);

#endif
