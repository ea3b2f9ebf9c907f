/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What every bundled workload shares with the integration tests (tests/integration/lib.sh,
 * wl_launch/wl_go): print "pid N", then wait until the test creates the go-file, so a tracer
 * can attach to the pid before the first call. Header-only: each workload is one program. */
#ifndef IOLAYER_WL_H
#define IOLAYER_WL_H

#include <stdio.h>
#include <unistd.h>

/* With gofile (-g): print our pid and wait (polling every 10 ms) until gofile exists. */
static inline void wl_wait_go(const char *gofile)
{
	if (!gofile)
		return;
	printf("pid %d\n", getpid());
	fflush(stdout);
	while (access(gofile, F_OK))
		usleep(10000);
}

#endif
