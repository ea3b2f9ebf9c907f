/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* tracefs: where it is mounted, and which tracepoints this kernel has. */
#ifndef IOLAYER_TRACEFS_H
#define IOLAYER_TRACEFS_H

#include <stdbool.h>
#include <stddef.h>

/* The tracefs mount point, mounting tracefs at /sys/kernel/tracing when it is not mounted.
 * NULL when that fails. */
const char *il_tracefs(void);

/* True when tracepoint tp ("category:event") exists (tracefs events/CAT/EVENT/id); on false,
 * why (may be NULL) receives a short reason. */
bool il_tracepoint_exists(const char *tp, char *why, size_t len);

/* Path of file `name` under tracefs into buf ("/sys/kernel/tracing/kprobe_events"). NULL
 * when tracefs is not available. */
const char *il_tracefs_path(const char *name, char *buf, size_t len);

#endif
