/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What the kernel side could not count (bpf/lib/common.bpf.h, map il_drops). */
#ifndef IOLAYER_DROPS_H
#define IOLAYER_DROPS_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>
#include <json-c/json.h>
#include "lib/shared.h"

/* Sum the per-CPU counters of the il_drops map (fd) into out. 0, or -errno. */
int il_drops_read(int map_fd, __u64 out[IL_DROP__MAX]);

/* Short name of a counter: "ringbuf_full", "map_full", "missed_start", "backwards", "stack", "missed_return". */
const char *il_drop_name(enum il_drop d);

/* One line per non-zero counter, e.g. "lost: 12 events (ring buffer full)". Nothing when
 * all are zero. */
void il_drops_print(FILE *f, const __u64 d[IL_DROP__MAX]);

/* {"ringbuf_full":N, ...} with every counter. */
struct json_object *il_drops_json(const __u64 d[IL_DROP__MAX]);

/* The end of a run: read the il_drops map (fd) and report it, as one {"lost": {...}} line on
 * stdout when json, else as il_drops_print() lines on stderr. */
void il_drops_report(int map_fd, bool json);

#endif
