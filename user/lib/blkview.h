/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The block layer's phase breakdown as tools print it (user/lib/blkview.c): btt's phases of a
 * set of I/Os (struct blk_phases) with the event counts of their disk from blk_disks (merges,
 * splits, requeues, and the rq-qos throttles' wbt steps and iocost activations), as text
 * and as JSON.
 */
#ifndef IOLAYER_BLKVIEW_H
#define IOLAYER_BLKVIEW_H

#include <stdio.h>
#include <json-c/json.h>
#include <bpf/libbpf.h>
#include "layers/block.h"

/* A disk's event counts (struct blk_disk_stats): merges, splits, requeues, wbt steps, iocost
 * activations. */
enum { IL_BLK_EV_MERGES, IL_BLK_EV_SPLITS, IL_BLK_EV_REQUEUES, IL_BLK_EV_WBT, IL_BLK_EV_IOCOST,
       IL_BLK_EV__MAX };

/* The cumulative event counts of disk dev (blk_disks of a loaded obj) into ev. 0, or -errno
 * (-ENOENT: no entry for dev yet) with ev all 0. */
int il_blk_events_read(struct bpf_object *obj, __u32 dev, __u64 ev[IL_BLK_EV__MAX]);

/* One breakdown: "  N I/Os, N bios, N bytes, N errors; disk: N merges, N splits, N requeues",
 * an rq-qos line when wbt or iocost acted, and the phase table (il_blk_phases_print()), to f;
 * or their JSON: il_blk_phases_json() with "merges", "splits", "requeues", "wbt_steps",
 * "iocost_activations" added. */
void il_blk_breakdown_print(FILE *f, const struct blk_phases *d, const __u64 ev[IL_BLK_EV__MAX]);
struct json_object *il_blk_breakdown_json(const struct blk_phases *d,
					  const __u64 ev[IL_BLK_EV__MAX]);

/* The legend under the breakdowns printed (what each phase is). */
void il_blk_breakdown_legend(FILE *f);

#endif
