/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The table of layers (layers.h): how code that treats every layer alike finds each one. */
#include <string.h>
#include "layers.h"
#include "layers/block.h"
#include "layers/fs.h"
#include "layers/iowait.h"
#include "layers/who.h"
#include "layers/writeback.h"
#include "layers/split.h"

static int block_all(struct bpf_object *obj, struct il_plan *plans, int max)
{
	if (max < 1)
		return 0;
	il_blk_plan(obj, true, &plans[0]);
	/* the bio-tracking plans, in objects that include BLK_BIO_PROGS */
	if (max < 3 || !bpf_object__find_program_by_name(obj, "blk_bio_queue_btf"))
		return 1;
	il_blk_bio_plan(obj, &plans[1]);
	il_blk_submit_plan(obj, &plans[2]);
	return 3;
}

static int fs_all(struct bpf_object *obj, struct il_plan *plans, int max)
{
	int n = 0;

	for (int t = 0; t < FS_TYPE__MAX && n < max; t++)
		il_fs_plan(obj, t, &plans[n++]);
	return n;
}

static int wb_all(struct bpf_object *obj, struct il_plan *plans, int max)
{
	static const struct { enum wb_func f; const char *target; } funcs[] = {
		{ WB_FUNC_EXT4_WRITEPAGES, "ext4_writepages" },
		{ WB_FUNC_DO_WRITEPAGES, "do_writepages" },
		{ WB_FUNC_GENERIC, "vfs_fsync_range" },
	};
	int n = 0;

	for (unsigned i = 0; i < sizeof(funcs) / sizeof(funcs[0]) && n < max; i++)
		il_wb_plan(obj, funcs[i].f, funcs[i].target, true, &plans[n++]);
	return n;
}

static int iowait_all(struct bpf_object *obj, struct il_plan *plans, int max)
{
	if (max < 1)
		return 0;
	il_iw_plan(obj, &plans[0]);
	return 1;
}

static int who_all(struct bpf_object *obj, struct il_plan *plans, int max)
{
	if (max < 1)
		return 0;
	il_who_plan(obj, &plans[0]);
	return 1;
}

static int split_all(struct bpf_object *obj, struct il_plan *plans, int max)
{
	if (max < 1)
		return 0;
	il_split_plan(obj, &plans[0]);
	return 1;
}

/* The filesystems whose plans chose the syscall tracepoints (il_fs_chosen), told by plan. */
static void fs_chosen(struct bpf_object *obj, const struct il_plan *plans, int n)
{
	int types[FS_TYPE__MAX];

	for (int i = 0; i < n && i < FS_TYPE__MAX; i++)
		types[i] = il_fs_plan_type(&plans[i]);
	il_fs_chosen(obj, plans, types, n < FS_TYPE__MAX ? n : FS_TYPE__MAX);
}

/* Where the I/O-wait layer keeps a sleep under way, by the method its plan chose. */
static void iowait_chosen(struct bpf_object *obj, const struct il_plan *plans, int n)
{
	if (n > 0)
		il_iw_chosen(obj, &plans[0]);
}

/* Where the split keeps its per-task state, by the method its plan chose (il_split_chosen). */
static void split_chosen(struct bpf_object *obj, const struct il_plan *plans, int n)
{
	if (n > 0)
		il_split_chosen(obj, &plans[0]);
}

const struct il_layer_desc il_layer_table[] = {
	{ "block", "blk_rq_start", NULL, block_all, NULL, il_blk_loaded, NULL },
	{ "fs", "fs_stats", NULL, fs_all, fs_chosen, il_fs_loaded, il_fs_unload },
	{ "writeback", "wb_stats", NULL, wb_all, NULL, NULL, NULL },
	{ "iowait", "iw_waits", NULL, iowait_all, iowait_chosen, NULL, NULL },
	{ "who", "who_inserts", "who_bio_btf", who_all, NULL, NULL, NULL },
	{ "split", "split_ops", NULL, split_all, split_chosen, NULL, NULL },
};
const int il_nlayers = sizeof(il_layer_table) / sizeof(il_layer_table[0]);

const struct il_layer_desc *il_layer_find(const char *name)
{
	for (int l = 0; l < il_nlayers; l++)
		if (!strcmp(il_layer_table[l].name, name))
			return &il_layer_table[l];
	return NULL;
}
