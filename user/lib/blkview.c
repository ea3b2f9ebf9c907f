/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The block layer's phase breakdown as tools print it (blkview.h). */
#include <string.h>
#include "blkview.h"

int il_blk_events_read(struct bpf_object *obj, __u32 dev, __u64 ev[IL_BLK_EV__MAX])
{
	struct blk_disk_stats st;
	int err;

	memset(ev, 0, IL_BLK_EV__MAX * sizeof(ev[0]));
	if ((err = il_blk_disk_lookup(obj, dev, &st)))
		return err;
	ev[IL_BLK_EV_MERGES] = st.merges;
	ev[IL_BLK_EV_SPLITS] = st.splits;
	ev[IL_BLK_EV_REQUEUES] = st.requeues;
	ev[IL_BLK_EV_WBT] = st.wbt_steps;
	ev[IL_BLK_EV_IOCOST] = st.iocost_activations;
	return 0;
}

void il_blk_breakdown_print(FILE *f, const struct blk_phases *d, const __u64 ev[IL_BLK_EV__MAX])
{
	fprintf(f, "  %llu I/Os, %llu bios, %llu bytes, %llu errors; disk: %llu merges, %llu splits, "
		"%llu requeues\n", (unsigned long long)d->ios, (unsigned long long)d->bios,
		(unsigned long long)d->bytes, (unsigned long long)d->errors,
		(unsigned long long)ev[IL_BLK_EV_MERGES], (unsigned long long)ev[IL_BLK_EV_SPLITS],
		(unsigned long long)ev[IL_BLK_EV_REQUEUES]);
	if (ev[IL_BLK_EV_WBT] || ev[IL_BLK_EV_IOCOST])
		fprintf(f, "  rq-qos (waits in Q2G): wbt changed its depth %llu times, iocost activated "
			"%llu cgroups\n", (unsigned long long)ev[IL_BLK_EV_WBT],
			(unsigned long long)ev[IL_BLK_EV_IOCOST]);
	il_blk_phases_print(f, "  ", d);
}

struct json_object *il_blk_breakdown_json(const struct blk_phases *d,
					  const __u64 ev[IL_BLK_EV__MAX])
{
	static const char *const keys[IL_BLK_EV__MAX] = { "merges", "splits", "requeues",
							  "wbt_steps", "iocost_activations" };
	struct json_object *o = il_blk_phases_json(d);

	for (int e = 0; e < IL_BLK_EV__MAX; e++)
		json_object_object_add(o, keys[e], json_object_new_uint64(ev[e]));
	return o;
}

void il_blk_breakdown_legend(FILE *f)
{
	fprintf(f, "  (before Q: submit -> Q, the cgroup throttle; Q2G: rq-qos and tags; G2I: plug; "
		"I2D: I/O scheduler; D2C: device; P99: bucket bound; SHARE: of the I/Os' lives, each\n"
		"   before Q + Q2C, or I2D + D2C for a request with no Q: the flushes the kernel makes)\n");
}
