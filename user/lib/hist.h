/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * log2 histograms as the BPF side fills them (bpf/lib/shared.h: il_hist_slot()): slot 0
 * holds values 0 and 1, slot i >= 1 holds [2^i, 2^(i+1) - 1]. Units are the caller's
 * ("usecs", "msecs").
 */
#ifndef IOLAYER_HIST_H
#define IOLAYER_HIST_H

#include <stdio.h>
#include <linux/types.h>
#include <json-c/json.h>

/* Inclusive value range [*lo, *hi] of slot i. */
void il_slot_bounds(int slot, __u64 *lo, __u64 *hi);

/* Sum of all slots. */
__u64 il_hist_total(const __u64 *slots, int nslots);

/* The slot that holds the pct-th percentile (0 < pct <= 100): the first slot where the
 * running count reaches ceil(total * pct / 100). -1 when the histogram is empty. */
int il_hist_percentile_slot(const __u64 *slots, int nslots, double pct);

/* Print in the layout of the classic biolatency:
 *      usecs               : count    distribution
 *          0 -> 1          : 0        |                                        |
 * from slot 0 to the highest non-empty slot; prints nothing for an empty histogram. */
void il_hist_print(FILE *f, const __u64 *slots, int nslots, const char *unit);

/* One line of percentiles as the bucket bounds that hold them, e.g.
 *   percentiles (bucket bounds, usecs): p50 4096-8191  p90 4096-8191  p99 8192-16383  p99.9 8192-16383 */
void il_hist_print_percentiles(FILE *f, const __u64 *slots, int nslots, const char *unit);

/* "LO-HI" (each divided by div, 3 decimals) of the bucket holding the pct-th percentile into
 * buf, "-" for an empty histogram. Returns buf, or the "-". */
const char *il_hist_pct_range(const __u64 *slots, int nslots, double pct, double div, char *buf,
			      size_t len);

/* {"unit":..., "total":N, "buckets":[{"low":..,"high":..,"count":..}...],
 *  "percentiles":{"p50":{"low":..,"high":..},...}} with non-empty buckets only. */
struct json_object *il_hist_json(const __u64 *slots, int nslots, const char *unit);

/* The growth of n cumulative counters since seen: d[i] = now[i] - seen[i], then seen = now. */
void il_counts_delta(__u64 *d, __u64 *seen, const __u64 *now, int n);

/* What an interval printed last of the kernel's cumulative counters, per key: the interval's
 * growth is the counters now minus the entry's. Entries of `size` bytes, each starting with
 * its key of key_len bytes, in a growing array (v, n). */
struct il_snaps {
	size_t size, key_len;
	void *v;
	size_t n;
};

/* The entry of key in s, appended zeroed (with its key) when new. NULL when out of memory. */
void *il_snaps_get(struct il_snaps *s, const void *key);
void il_snaps_free(struct il_snaps *s);

#endif
