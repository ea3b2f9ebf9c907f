/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the layers measured, read from a loaded object that includes them (the layers' own
 * readers, layers.h) into the verdict's input, struct il_measure (verdict.h): shared by
 * iolayer's report and its --serve /verdict.
 */
#ifndef IOLAYER_MEASURE_H
#define IOLAYER_MEASURE_H

#include <json-c/json.h>
#include <bpf/libbpf.h>
#include "verdict.h"

/* A log2 histogram of ns (IL_HIST_SLOTS slots; NULL: no percentiles) summarized into *l:
 * percentiles as the exclusive upper bound of the bucket that holds them, ns. */
void il_lat_from_hist(struct il_lat *l, __u64 count, __u64 total, __u64 max, const __u64 *slots);

/* A duration in seconds, to the millisecond: 7.996, not 7.9964545549999997. */
struct json_object *il_json_seconds(double s);

/* {"count", "total_ns", "max_ns", "p50_lt_ns", "p99_lt_ns"} of *l (ns); the percentiles are
 * null where none is known (0 in *l: a layer without a histogram, or nothing counted). */
struct json_object *il_lat_json(const struct il_lat *l);

/* Block: the disk of the process behind the I/O (pref[0]: the disk with most of its bytes,
 * as il_who_view_disks() orders them), even when no request completed there yet; the disk
 * with the most block-layer time when no process is known (npref 0). Its queue and device
 * latencies, requests by op and, with bio tracking, its phases (before Q, Q2G, G2I, Q2C), the
 * cgroup whose bios waited longest before Q and that cgroup's throttle rules go into m, its
 * dev into *dev (0: none). An unrelated busier disk is never chosen. */
void il_measure_disks(struct bpf_object *obj, struct il_measure *m, const __u32 *pref, int npref,
		      __u32 *dev);

/* Writeback: calls, errors and the most frequent error, into m. */
void il_measure_wb(struct bpf_object *obj, struct il_measure *m);

/* I/O wait: totals into m, the frames of the kernel stack with the most wait into top[] (room
 * for maxf of 128 bytes), and the frame of it that says why into m->iw_top_frame. stacks_fd
 * is the I/O-wait layer's stack map. Returns the number of frames. */
int il_measure_iowait(struct bpf_object *obj, int stacks_fd, struct il_measure *m, char top[][128],
		      int maxf);

/* The verdict as JSON: {layer, reason, process{pid, comm, cgroup}, file, who, disk} (process,
 * file and who only when c found one; disk null when none). */
struct json_object *il_verdict_json(enum il_where l, const char *why, const struct il_culprit *c,
				    const char *disk);

#endif
