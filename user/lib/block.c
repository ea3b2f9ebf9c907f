/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The block layer's user side (see layers.h; kernel side bpf/lib/block.bpf.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include "btf.h"
#include "bpfobj.h"
#include "layers.h"
#include "log.h"

struct blk_cfg *il_block_cfg(struct bpf_object *obj)
{
	struct blk_cfg *c = il_obj_rodata_must(obj, "blk_cfg", sizeof(*c));

	c->rq_two_args = il_btf_tp_nargs("block_rq_issue") == 2;
	il_debug("block_rq_issue takes %s", c->rq_two_args ? "(q, rq)" : "(rq)");
	il_who_default(obj); /* attribution off unless the tool turns it on */
	return c;
}

void il_block_plan(struct bpf_object *obj, bool with_insert, struct il_plan *p)
{
	static const char *prefix[2] = { "btf", "raw" };

	il_plan_init(p, "block request lifetime");
	for (int m = 0; m < 2; m++) {
		char name[32];

		il_plan_option(p, m ? IL_M_RAW_TP : IL_M_TP_BTF, NULL);
		snprintf(name, sizeof(name), "%s_rq_issue", prefix[m]);
		il_plan_add(p, obj, name, "block:block_rq_issue", false);
		snprintf(name, sizeof(name), "%s_rq_complete", prefix[m]);
		il_plan_add(p, obj, name, "block:block_rq_complete", false);
		if (with_insert) {
			snprintf(name, sizeof(name), "%s_rq_insert", prefix[m]);
			il_plan_add(p, obj, name, "block:block_rq_insert", true);
		}
	}
}

int il_block_disks_read(struct bpf_object *obj, struct il_disk_row **rows)
{
	int fd = il_obj_map_fd(obj, "blk_disks"), n = 0;
	__u32 k, *prev = NULL;
	struct il_disk_row *r = NULL;

	*rows = NULL;
	if (fd < 0)
		return -ENOENT;
	while (!bpf_map_get_next_key(fd, prev, &k)) {
		struct il_disk_row *nr = realloc(r, (n + 1) * sizeof(*r));

		if (!nr) {
			free(r);
			return -ENOMEM;
		}
		r = nr;
		prev = &k;
		r[n].dev = k;
		if (!bpf_map_lookup_elem(fd, &k, &r[n].st))
			n++;
	}
	*rows = r;
	return n;
}
