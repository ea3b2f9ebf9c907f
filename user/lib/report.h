/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * iolayer --html: one self-contained HTML page of a run (nothing fetched when opened).
 *
 *   il_heat_*      latency heat maps: one log2 histogram per layer per second, the growth of
 *                  the cumulative histograms between successive snapshots (measure.h);
 *   il_report_html the page: user/lib/report/report.{html,css,js} (embedded in the binary at
 *                  build time) with the run's data as JSON (json-c), every name escaped.
 *
 * The page draws the verdict and its evidence, the time split per process and operation,
 * the heat maps (counts on hover), the I/O-wait flame graph (flame.h, zooms on click) and the
 * top processes, files and cgroups. Not thread-safe.
 */
#ifndef IOLAYER_REPORT_H
#define IOLAYER_REPORT_H

#include <stdbool.h>
#include <linux/types.h>
#include <json-c/json.h>

struct il_heat;
struct il_snap; /* measure.h */

/* A new heat map set with no second yet. NULL when out of memory. */
struct il_heat *il_heat_new(void);
void il_heat_free(struct il_heat *h);

/* One more column: what each histogram of now (the fs operations' latency, the I/O-wait
 * sleeps' lengths, each disk's queue and device times and its before-Q, Q2G and G2I phases;
 * all log2 of ns) grew by since the snapshot added before (the first: since zero). t_s: the
 * column's end, seconds since tracing began. 0, or -ENOMEM. */
int il_heat_add(struct il_heat *h, const struct il_snap *now, double t_s);

/* Add a column of made-up counts to the series of key (see il_heat_json), ending at t_s:
 * cells[] of IL_HIST_SLOTS, for tests and generated pages. 0, or -ENOMEM. */
int il_heat_add_cells(struct il_heat *h, const char *key, const __u64 *cells, double t_s);

/* The heat maps as JSON: {"t": [column end, s], "layers": [{"key", "name", "traced",
 * "cells": [[column, slot, count], ...]}]}: the fs operations (key "syscall.OP"), "iowait",
 * and for disk dev (0: none) "block_phases.before_q", ".q2g", ".g2i", "queue" and "device",
 * keys as in iolayer --json's "layers". traced: whether that layer was attached. NULL when
 * out of memory. */
struct json_object *il_heat_json(const struct il_heat *h, __u32 dev, bool fs, bool iw, bool blk);

/* Write the page to path: the embedded template with data (the caller's JSON, given up to
 * this function: {"report": iolayer --json's object, "heat": il_heat_json(), "flame":
 * il_flame_json(), "split": il_split_sums_json(), "verdict": [lines], ...}) inlined so that
 * no name can end its script element. 0, or -errno (the file could not be written). */
int il_report_html(const char *path, struct json_object *data);

#endif
