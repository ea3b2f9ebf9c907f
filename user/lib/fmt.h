/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Human units for the tables and sentences: durations and rates. No other dependency, so the
 * layers, the views and the verdict can all use it. */
#ifndef IOLAYER_FMT_H
#define IOLAYER_FMT_H

#include <stddef.h>
#include <linux/types.h>

/* ns as "850 ns", "12.3 us", "4.56 ms", "1.23 s" into buf; returns buf. */
const char *il_fmt_ns(__u64 ns, char *buf, size_t len);

/* A rate in the units of iolayer's tables: "45.2 KB/s" below 1024 KB/s, else "3.4 MB/s"
 * (KB = 1024 bytes, MB = 1024 KB). Returns buf. */
const char *il_fmt_rate(double bytes_per_s, char *buf, size_t len);

#endif
