/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The layers' table of a window (measure.h), as iolayer prints it: LAYER WHAT COUNT P50 P99
 * MAX TOTAL, a row per operation, writeback, I/O wait and block phase of the window's disk,
 * and with -p the process's own requests there and whose bytes the rest were (cause c's disk
 * evidence). */
#ifndef IOLAYER_TABLE_H
#define IOLAYER_TABLE_H

#include <stdio.h>

struct il_window;
struct il_cause;

void il_window_table(FILE *f, const struct il_window *w, const struct il_cause *c);

#endif
