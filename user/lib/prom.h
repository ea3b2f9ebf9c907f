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
 * (IL_PROM_PATH_LABEL_MAX for the labels named "path" and "cgroup"), ending "...", then
 * escaped for the format (\\, \", \n).
 */
#ifndef IOLAYER_PROM_H
#define IOLAYER_PROM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include "whoview.h"

#define IL_PROM_CT_TEXT "text/plain; version=0.0.4; charset=utf-8"
#define IL_PROM_CT_OPENMETRICS "application/openmetrics-text; version=1.0.0; charset=utf-8"

/* Bytes of a label value after il_text_escape(), before the format's own escaping. */
#define IL_PROM_LABEL_MAX 64
/* The same for the labels "path" and "cgroup": a path of 4 KiB is cut here. */
#define IL_PROM_PATH_LABEL_MAX 256

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

/* A gauge sample of the current family with a fractional value (4 decimals). */
void il_prom_gauge(struct il_prom *p, const char *const *labels, double v);

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

/* ---- the top processes and files (iolayer --serve) ------------------------------------- */

/* The time that ranks processes and files counts half after this many seconds. */
#define IL_PROM_TOP_HALF_LIFE_S 60

#define IL_PROM_TOP_VALS 16     /* values per process (file): the most a table has */

struct il_prom_top_row;

struct il_prom_top_table {
	struct il_prom_top_row *rows;    /* every process (file) of the last exposition, by id */
	int nrows;
	__u64 other[IL_PROM_TOP_VALS];   /* the values of the "other" series */
	__u64 evicted;                   /* series of their own that stopped since start */
};

/* What il_prom_who() keeps from one exposition to the next. */
struct il_prom_top {
	int n;                           /* processes (and files) with series of their own */
	bool started;                    /* an exposition was made, at t_ns */
	unsigned long long t_ns;
	struct il_prom_top_table procs, files;
};

void il_prom_top_init(struct il_prom_top *t, int n);
void il_prom_top_free(struct il_prom_top *t);

/* The families of the top processes and files of attribution v, as of now_ns (ns on a
 * monotonic clock), as counters:
 *   iolayer_process_fs_seconds_total{pid,comm,cgroup,op}   iolayer_process_fs_ops_total{...,op}
 *   iolayer_process_iowait_seconds_total{pid,comm,cgroup}   iolayer_process_fs_bytes_total{...,dir}
 *   iolayer_process_disk_bytes_total{pid,comm,cgroup,dir}   (dir: read, write)
 *   iolayer_file_fs_seconds_total{path}   iolayer_file_fsyncs_total{path}
 *   iolayer_file_sync_ranges_total{path}
 *   iolayer_file_fs_bytes_total{path,dir}   iolayer_file_disk_bytes_total{path,dir}
 * Each process (file) in a series of its own shows its counts since start, as in v. Which
 * ones: the t->n with the most time (file operations and I/O wait for a process, file
 * operations for a file), each nanosecond counting half after IL_PROM_TOP_HALF_LIFE_S, so
 * one that stopped gives its place to those at work; ties, and the first exposition, in v's
 * order (time since start). A file whose label would repeat a higher one's (two paths that
 * are the same once cut) is passed over. Every other process (file) is summed into one series
 * of label values "other", always written: from one exposition to the next it adds what
 * happened outside the series that were there, with the same labels, at both, so it never
 * goes down, and what leaves or enters a series of its own is not lost between the two. In
 * each family, the series of their own in rank order, then "other". At most 15 * (n + 1)
 * process series and 6 * (n + 1) file series. The process series also carry container_id,
 * pod_uid and unit, read from the cgroup path (cgident.h): bounded as the series are, never one
 * per cgroup. Then iolayer_top_series_evicted_total{table="process"|"file"}: how many series of
 * their own stopped since start (their process or file lost its place, or went away). */
void il_prom_who(struct il_prom *p, struct il_prom_top *t, const struct il_who_view *v,
		 unsigned long long now_ns);

#endif
