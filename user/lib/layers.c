/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The table of layers (layers.h): how code that treats every layer alike finds each one. */
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

const struct il_layer_desc il_layer_table[] = {
	{ "block", "blk_rq_start", NULL, block_all },
	{ "fs", "fs_stats", NULL, fs_all },
	{ "writeback", "wb_stats", NULL, wb_all },
	{ "iowait", "iw_waits", NULL, iowait_all },
	{ "who", "who_inserts", "who_bio_btf", who_all },
	{ "split", "split_ops", NULL, split_all },
};
const int il_nlayers = sizeof(il_layer_table) / sizeof(il_layer_table[0]);
