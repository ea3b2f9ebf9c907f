/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Metrics in the Prometheus text exposition format 0.0.4 and in OpenMetrics 1.0 text, the
 * two formats a Prometheus server asks for. Pure formatting (no BPF, no HTTP), so it is
 * unit-tested with made-up numbers (tests/unit/test_prom.c).
 *
 *   struct il_prom p;
 *   il_prom_init(&p, f, il_prom_wants_openmetrics(accept));
 *   il_prom_family(&p, "iolayer_fs_op_duration_seconds", IL_PROM_HISTOGRAM, "seconds", "...");
 *   il_prom_hist(&p, (const char *[]){ "op", "fsync", NULL }, slots, total_ns);
 *   il_prom_finish(&p);
 *
 * A family is named without its sample suffix: a counter "iolayer_block_bytes" gives samples
 * "iolayer_block_bytes_total"; an info family "iolayer" gives "iolayer_info"; a histogram gives
 * _bucket, _sum and _count. In the 0.0.4 format the TYPE line names the sample instead
 * (counter "..._total", info as a gauge "..._info"), as that format has no info type.
 *
 * Label values pass through il_text_escape() first (control bytes and invalid UTF-8 as \xhh,
 * a backslash doubled: the names the text output prints), are cut at IL_PROM_LABEL_MAX bytes
 * (ending "..."), then escaped for the format (\\, \", \n).
 */
#ifndef IOLAYER_PROM_H
#define IOLAYER_PROM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

#define IL_PROM_CT_TEXT "text/plain; version=0.0.4; charset=utf-8"
#define IL_PROM_CT_OPENMETRICS "application/openmetrics-text; version=1.0.0; charset=utf-8"

/* Bytes of a label value after il_text_escape(), before the format's own escaping. */
#define IL_PROM_LABEL_MAX 64

/* Histogram buckets: one per log2 slot of ns (bpf/lib/shared.h), from slot IL_PROM_FIRST_SLOT
 * (values up to 255 ns) to IL_PROM_LAST_SLOT (up to 68.72 s), then +Inf. Slot i holds the
 * integers [2^i, 2^(i+1) - 1] ns, so its bucket is le = (2^(i+1) - 1) ns, exactly: a value
 * on a slot's edge is counted where the kernel put it. Slots below the first are in the first
 * bucket (buckets are cumulative), slots above the last only in +Inf. */
#define IL_PROM_FIRST_SLOT 7
#define IL_PROM_LAST_SLOT 35

enum il_prom_type { IL_PROM_COUNTER, IL_PROM_GAUGE, IL_PROM_HISTOGRAM, IL_PROM_SUMMARY, IL_PROM_INFO };

struct il_prom {
	FILE *f;
	bool om;                  /* OpenMetrics 1.0 rather than text 0.0.4 */
	enum il_prom_type type;   /* of the current family */
	char family[96];          /* the current family's name */
};

/* Start an exposition on f; om: OpenMetrics. */
void il_prom_init(struct il_prom *p, FILE *f, bool om);

/* Whether an Accept header asks for OpenMetrics: application/openmetrics-text is listed
 * with a q above 0 and at least the q of text/plain. NULL or "": no. */
bool il_prom_wants_openmetrics(const char *accept);

/* Open a family: HELP, TYPE and (OpenMetrics, when unit is not NULL) UNIT lines. The name
 * must end in "_" + unit when a unit is given. */
void il_prom_family(struct il_prom *p, const char *name, enum il_prom_type type,
		    const char *unit, const char *help);

/* labels: names and values in turn, ended by NULL; NULL for none. */

/* A counter, gauge or info sample of the current family (an info sample's value is 1). */
void il_prom_value(struct il_prom *p, const char *const *labels, __u64 v);

/* A histogram of the current family from IL_HIST_SLOTS log2 slots of ns: the buckets above,
 * cumulative, +Inf, _sum (sum_ns in seconds) and _count (the sum of the slots). */
void il_prom_hist(struct il_prom *p, const char *const *labels, const __u64 *slots, __u64 sum_ns);

/* A summary of the current family without quantiles: _sum (seconds) and _count. */
void il_prom_summary(struct il_prom *p, const char *const *labels, __u64 count, __u64 sum_ns);

/* End the exposition ("# EOF" in OpenMetrics). 0, or -1 when writing to f failed. */
int il_prom_finish(struct il_prom *p);

/* ns as seconds in exact decimal, without trailing zeros: 255 -> "0.000000255",
 * 2000000000 -> "2", 0 -> "0". Into buf (>= 32 bytes); returns buf. */
const char *il_prom_seconds(__u64 ns, char *buf, size_t len);

/* Label value of the name s (NUL-terminated) as written between the quotes (see the top).
 * buf needs 2 * IL_PROM_LABEL_MAX + 1 bytes; returns buf. */
const char *il_prom_label_value(const char *s, char *buf, size_t len);

#endif
