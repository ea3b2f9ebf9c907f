/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The event loop every tool shares: signals, ring-buffer polling, interval/count/duration. */
#ifndef IOLAYER_RUN_H
#define IOLAYER_RUN_H

#include <signal.h>
#include <bpf/libbpf.h>

/* Set by SIGINT/SIGTERM/SIGHUP. The first signal asks the loop to stop so the tool can print
 * its final summary and detach; a second one kills the process (default action). */
extern volatile sig_atomic_t il_exiting;

/* Install the handlers above; SIGPIPE is ignored so a closed pipe ends the loop with EPIPE
 * instead of killing the tool before it detaches. */
void il_signals_init(void);

struct il_run {
	unsigned interval_s;       /* call tick() every interval_s seconds; 0: never */
	unsigned count;            /* stop after this many ticks; 0: no limit */
	unsigned duration_s;       /* stop after this many seconds; 0: no limit */
	struct ring_buffer *rb;    /* polled every 100 ms when not NULL */
	int (*tick)(void *ctx);    /* non-zero return stops the loop */
	void *ctx;
};

/* Run until a signal, the count or the duration ends it. Returns 1 when the count of ticks
 * ended it (the last tick already printed everything), 0 when a signal or the duration did
 * (the caller prints its final summary), -1 after printing one line when polling fails. */
int il_run(const struct il_run *r);

/* Monotonic clock in ns (CLOCK_MONOTONIC, the clock bpf_ktime_get_ns() reads). */
unsigned long long il_now_ns(void);

#endif
