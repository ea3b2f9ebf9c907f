/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The writeback layer's user side (see layers.h; kernel side bpf/lib/writeback.bpf.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include "bpfobj.h"
#include "layers/writeback.h"

struct wb_cfg *il_wb_cfg(struct bpf_object *obj)
{
	struct wb_cfg *c = il_obj_rodata_must(obj, "wb_cfg", sizeof(*c));

	c->func = WB_FUNC_EXT4_WRITEPAGES;
	c->nargs = 2;
	c->has_wbc = 1;
	c->want_rows = 1;
	/* a stack map is allocated whole at creation (16 MB zeroed: 10 ms here), so it is
	 * sized only for a tool that wants stacks */
	il_wb_want_stack(obj, false);
	return c;
}

void il_wb_want_stack(struct bpf_object *obj, bool want)
{
	struct wb_cfg *c = il_obj_rodata_must(obj, "wb_cfg", sizeof(*c));
	struct bpf_map *m = bpf_object__find_map_by_name(obj, "wb_stacks");

	c->want_stack = want;
	if (m)
		bpf_map__set_max_entries(m, want ? WB_MAX_STACKS : 1);
}

void il_wb_plan(struct bpf_object *obj, enum wb_func func, const char *target, bool fentry_ok,
		struct il_plan *p)
{
	static const char *flavour[2] = { "btf", "raw" };
	bool ext4 = func == WB_FUNC_EXT4_WRITEPAGES;

	il_plan_init(p, func == WB_FUNC_GENERIC ? "the function's returns" : "writeback returns");
	if (fentry_ok) {
		il_plan_option(p, IL_M_FENTRY, NULL);
		il_plan_add(p, obj, "wb_fentry", target, false);
		il_plan_add(p, obj, "wb_fexit", target, false);
	}
	/* The kretprobe is attached before the kprobe: kprobes sharing an address run newest
	 * first, so the entry program (which takes --stack) sees the caller's return address
	 * before the kretprobe swaps in its trampoline, which kernels before 5.15 cannot unwind
	 * through (seen on 5.10: "ext4_writepages+0x1 <- kretprobe_trampoline"). */
	il_plan_option(p, IL_M_KPROBE,
		       "a return is missed when too many calls sleep at once (counted as missed_return at exit)");
	il_plan_add(p, obj, "wb_kretprobe", target, false);
	il_plan_add(p, obj, "wb_kprobe", target, false);
	if (func == WB_FUNC_GENERIC)
		return;
	/* Tracepoints that bracket the call: tp_btf, then raw_tp, with the same handlers. */
	for (int m = 0; m < 2; m++) {
		char enter[32], exit_[32];

		snprintf(enter, sizeof(enter), "%s_%s", ext4 ? "wb_ext4_wp" : "wb_wsi_start", flavour[m]);
		snprintf(exit_, sizeof(exit_), "%s_%s", ext4 ? "wb_ext4_wpr" : "wb_wsi", flavour[m]);
		/* What these cannot see is il_wb_tp_limits(), which the tools say themselves
		 * (writeback-ret on every run): not here too, or -v says it twice. */
		il_plan_option(p, m ? IL_M_RAW_TP : IL_M_TP_BTF, NULL);
		il_plan_add(p, obj, enter,
			    ext4 ? "ext4:ext4_writepages" : "writeback:writeback_single_inode_start", false);
		il_plan_add(p, obj, exit_,
			    ext4 ? "ext4:ext4_writepages_result" : "writeback:writeback_single_inode", false);
	}
}

const char *il_wb_tp_limits(enum wb_func func, int method)
{
	if (method != IL_M_TP_BTF && method != IL_M_RAW_TP)
		return NULL;
	if (func == WB_FUNC_EXT4_WRITEPAGES)
		return "tracepoint mode: only calls that reach ext4:ext4_writepages_result are seen; "
		       "returns taken before the tracepoint (e.g. -EIO from a shut-down filesystem) "
		       "are invisible in this mode (fexit or kretprobe see them)";
	return "tracepoint mode: do_writepages is seen only where writeback:writeback_single_inode* "
	       "brackets it (the flusher threads, sync_inode(); not the data flush of most "
	       "fsyncs), and its return value is invisible (RET ?)";
}

bool il_wb_ret_visible(enum wb_func func, int method)
{
	/* writeback:writeback_single_inode carries no return value; every other method sees it */
	return !(func == WB_FUNC_DO_WRITEPAGES && (method == IL_M_TP_BTF || method == IL_M_RAW_TP));
}

static int cmp_row(const void *a, const void *b)
{
	const struct wb_stat_key *x = &((const struct il_wb_row *)a)->k;
	const struct wb_stat_key *y = &((const struct il_wb_row *)b)->k;

	if (x->func != y->func)
		return x->func < y->func ? -1 : 1;
	if (x->ret != y->ret)
		return x->ret < y->ret ? -1 : 1;
	return x->sync_mode - y->sync_mode;
}

int il_wb_stats_read(struct bpf_object *obj, struct il_wb_row **rows)
{
	int fd = il_obj_map_fd(obj, "wb_stats"), n = 0;
	struct wb_stat_key k, cur, *prev = NULL;
	struct il_wb_row *r = NULL;

	*rows = NULL;
	if (fd < 0)
		return -ENOENT;
	while (!bpf_map_get_next_key(fd, prev, &k)) {
		struct il_wb_row *nr = realloc(r, (n + 1) * sizeof(*r));

		if (!nr) {
			free(r);
			return -ENOMEM;
		}
		r = nr;
		r[n].k = cur = k;
		prev = &cur;
		if (!bpf_map_lookup_elem(fd, &k, &r[n].v))
			n++;
	}
	qsort(r, n, sizeof(*r), cmp_row);
	*rows = r;
	return n;
}
