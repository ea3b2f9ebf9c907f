/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "log.h"
#include "run.h"

volatile sig_atomic_t il_exiting;

static void on_signal(int sig)
{
	il_exiting = 1;
	signal(sig, SIG_DFL); /* a second Ctrl-C kills */
}

void il_signals_init(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

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

int il_run(const struct il_run *r)
{
	unsigned long long start = il_now_ns(), next = 0, end = 0;
	unsigned ticks = 0;
	int done = 0;

	if (r->interval_s)
		next = start + r->interval_s * 1000000000ULL;
	if (r->duration_s)
		end = start + r->duration_s * 1000000000ULL;

	while (!il_exiting) {
		unsigned long long now;

		if (r->rb) {
			int n = ring_buffer__poll(r->rb, 100);

			if (n < 0 && n != -EINTR) {
				il_err("polling the ring buffer failed: %s", strerror(-n));
				return -1;
			}
		} else {
			usleep(100000);
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
		if (end && now >= end)
			break;
	}
	if (r->rb)
		ring_buffer__consume(r->rb); /* what is still queued belongs to the summary */
	return done;
}
