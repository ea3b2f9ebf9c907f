/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The writeback layer's user side (user/lib/writeback.c; kernel side bpf/lib/writeback.bpf.h,
 * types bpf/lib/writeback.h): settings, plans, the summary reader. Prefix il_wb_.
 */
#ifndef IOLAYER_LAYERS_WRITEBACK_H
#define IOLAYER_LAYERS_WRITEBACK_H

#include <stdbool.h>
#include <stdio.h>
#include <json-c/json.h>
#include <bpf/libbpf.h>
#include "plan.h"
#include "lib/writeback.h"

/* Settings, with the defaults of ext4_writepages: func, 2 arguments, a wbc, rows on, no
 * stacks. */
struct wb_cfg *il_wb_cfg(struct bpf_object *obj);

/* Kernel stacks on non-zero returns (wb_cfg.want_stack) or not, with wb_stacks sized to
 * match (before load). */
void il_wb_want_stack(struct bpf_object *obj, bool want);

/* Plan of the writeback returns of func (enum wb_func) named target: fexit+fentry (when
 * fentry_ok: the function has BTF), kretprobe+kprobe, and for ext4_writepages/do_writepages
 * the tracepoints that bracket them (tp_btf, raw_tp). */
void il_wb_plan(struct bpf_object *obj, enum wb_func func, const char *target, bool fentry_ok,
		struct il_plan *p);

/* What the tracepoint method of func cannot see, one sentence; NULL for other methods. */
const char *il_wb_tp_limits(enum wb_func func, int method);

/* Does method see the return value of func? Not do_writepages through tracepoints (its
 * rows have RET ?), so filtering on the return value cannot work there. */
bool il_wb_ret_visible(enum wb_func func, int method);

/* One line of the summary map wb_stats. */
struct il_wb_row {
	struct wb_stat_key k;
	struct wb_stat v;
};

/* Read wb_stats of a loaded obj into a malloc'ed array (*rows, freed by the caller), sorted
 * by func, ret, sync_mode. Returns the number of rows, or -errno. */
int il_wb_stats_read(struct bpf_object *obj, struct il_wb_row **rows);

#endif
