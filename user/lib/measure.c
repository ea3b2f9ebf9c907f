/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What the layers measured, read into the verdict's struct il_measure (see measure.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "escape.h"
#include "hist.h"
#include "layers.h"
#include "layers/block.h"
#include "layers/iowait.h"
#include "layers/writeback.h"
#include "measure.h"
#include "stacks.h"
#include "util.h"

void il_lat_from_hist(struct il_lat *l, __u64 count, __u64 total, __u64 max, const __u64 *slots)
{
	static const double pct[] = { 50, 99 };
	__u64 *at[] = { &l->p50_lt_ns, &l->p99_lt_ns }, lo, hi;

	*l = (struct il_lat){ .count = count, .total_ns = total, .max_ns = max };
	for (int i = 0; slots && i < 2; i++) {
		int slot = il_hist_percentile_slot(slots, IL_HIST_SLOTS, pct[i]);

		if (slot >= 0) {
			il_slot_bounds(slot, &lo, &hi);
			*at[i] = hi + 1;
		}
	}
}

struct json_object *il_json_seconds(double s)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%.3f", s);
	return json_object_new_double_s(strtod(buf, NULL), buf);
}

struct json_object *il_lat_json(const struct il_lat *l)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "count", json_object_new_uint64(l->count));
	json_object_object_add(o, "total_ns", json_object_new_uint64(l->total_ns));
	json_object_object_add(o, "max_ns", json_object_new_uint64(l->max_ns));
	/* 0: no percentile known (a layer without a histogram, or no calls): null, not 0 */
	json_object_object_add(o, "p50_lt_ns", l->p50_lt_ns ? json_object_new_uint64(l->p50_lt_ns) : NULL);
	json_object_object_add(o, "p99_lt_ns", l->p99_lt_ns ? json_object_new_uint64(l->p99_lt_ns) : NULL);
	return o;
}

/* A disk's time in the block layer: before Q, and after (Q2C, or the queue and device times
 * when more: requests with no Q seen). */
static __u64 disk_life_ns(const struct blk_disk_stats *st)
{
	__u64 after = st->queue_ns + st->device_ns;

	if (st->phases.ph[BLK_PH_Q2C].ns > after)
		after = st->phases.ph[BLK_PH_Q2C].ns;
	return st->phases.ph[BLK_PH_BEFORE_Q].ns + after;
}

/* The phases of the bios followed on the disk (lib/block.h), the cgroup whose bios waited
 * longest before Q there, and its throttle rules for the disk. */
static void measure_bios(struct bpf_object *obj, struct il_measure *m, __u32 dev,
			 const struct blk_disk_stats *bd)
{
	const struct blk_phase_stat *ph = bd->phases.ph;
	struct il_blk_cg_row *rows;
	int n = il_blk_cgroups_read(obj, &rows), best = -1;

	il_lat_from_hist(&m->before_q, ph[BLK_PH_BEFORE_Q].count, ph[BLK_PH_BEFORE_Q].ns,
			 ph[BLK_PH_BEFORE_Q].max_ns, ph[BLK_PH_BEFORE_Q].slots);
	il_lat_from_hist(&m->q2g, ph[BLK_PH_Q2G].count, ph[BLK_PH_Q2G].ns, ph[BLK_PH_Q2G].max_ns,
			 ph[BLK_PH_Q2G].slots);
	il_lat_from_hist(&m->g2i, ph[BLK_PH_G2I].count, ph[BLK_PH_G2I].ns, ph[BLK_PH_G2I].max_ns,
			 ph[BLK_PH_G2I].slots);
	il_lat_from_hist(&m->q2c, ph[BLK_PH_Q2C].count, ph[BLK_PH_Q2C].ns, ph[BLK_PH_Q2C].max_ns,
			 ph[BLK_PH_Q2C].slots);
	/* only a cgroup some of whose bios a worker queued for them (held before Q) is named:
	 * time before Q without it is the submission path's own */
	for (int i = 0; i < n; i++) {
		if (rows[i].k.dev != dev)
			continue;
		m->blk_held += rows[i].v.held;
		if (rows[i].v.held && rows[i].v.before_q_ns &&
		    (best < 0 || rows[i].v.before_q_ns > rows[best].v.before_q_ns))
			best = i;
	}
	if (best >= 0) {
		il_blk_cgroup_path(rows[best].k.cgroup, rows[best].v.tgid, m->blk_cgroup,
				     sizeof(m->blk_cgroup));
		if (m->blk_cgroup[0] != '/') /* not a path: gone, or unknown */
			m->blk_cgroup[0] = 0;
		il_blk_throttle_rule(m->blk_cgroup, dev, m->blk_throttle, sizeof(m->blk_throttle));
	}
	if (n > 0)
		free(rows);
}

/* Block: the disk of the process behind the I/O (pref[0], the disk with most of its bytes,
 * as il_who_view_disks() orders them), even when no request completed there yet; the disk
 * with the most block-layer time (before Q and after) when no process is known (npref 0).
 * Sets *dev. An unrelated busier disk is never chosen. */
void il_measure_disks(struct bpf_object *obj, struct il_measure *m, const __u32 *pref, int npref,
		       __u32 *dev)
{
	struct il_blk_disk_row *rows;
	int n = il_blk_disks_read(obj, &rows), best = -1;

	for (int i = 0; i < n; i++) {
		/* dev 0: requests with no disk (the flush machinery) */
		if (npref ? rows[i].dev == pref[0] :
			    rows[i].dev && (best < 0 || disk_life_ns(&rows[i].st) > disk_life_ns(&rows[best].st)))
			best = i;
	}
	*dev = best >= 0 ? rows[best].dev : npref ? pref[0] : 0;
	if (*dev)
		il_disk_name(*dev, m->disk, sizeof(m->disk));
	if (best >= 0) {
		const struct blk_disk_stats *bd = &rows[best].st;

		il_lat_from_hist(&m->device, bd->count, bd->device_ns, bd->device_max_ns, bd->device_slots);
		il_lat_from_hist(&m->queue, bd->queued, bd->queue_ns, bd->queue_max_ns, bd->queue_slots);
		memcpy(m->reqs, bd->ops, sizeof(m->reqs));
		measure_bios(obj, m, rows[best].dev, bd);
	}
	if (n > 0)
		free(rows);
}

/* Writeback: calls, errors and the most frequent error of ext4_writepages. */
void il_measure_wb(struct bpf_object *obj, struct il_measure *m)
{
	struct il_wb_row *rows;
	int n = il_wb_stats_read(obj, &rows);
	__u64 top = 0;

	for (int i = 0; i < n; i++) {
		const struct wb_stat_key *k = &rows[i].k;
		const struct wb_stat *v = &rows[i].v;

		m->wb.count += v->count;
		m->wb.total_ns += v->total_ns;
		if (v->max_ns > m->wb.max_ns)
			m->wb.max_ns = v->max_ns;
		if (k->ret_known && k->ret < 0) {
			m->wb_errors += v->count;
			if (v->count > top) {
				top = v->count;
				m->wb_top_err = k->ret;
				m->wb_top_err_sync_mode = k->sync_mode;
			}
		}
	}
	if (n > 0)
		free(rows);
}

/* I/O wait: totals, and the kernel stack with the most wait (its frames into top[]), and
 * the frame of it that says why into m->iw_top_frame. */
int il_measure_iowait(struct bpf_object *obj, int stacks_fd, struct il_measure *m, char top[][128],
		      int maxf)
{
	/* Frames that are generic waiting machinery, not the reason for the wait. */
	static const char *generic[] = {
		"__schedule", "schedule", "io_schedule", "bit_wait", "__wait_on_bit",
		"out_of_line_wait_on_bit", "folio_wait", "__folio_lock", "folio_lock", "wait_on_page",
		"__filemap_fdatawait", "filemap_fdatawait", "file_write_and_wait", "file_fdatawait",
		"__wait_on_buffer", "wait_on_buffer", "__lock_buffer", "do_fsync", "__x64_sys",
		"wait_for_completion", "submit_bio_wait",
	};
	const struct il_frames *f = NULL;
	struct il_stacknames *names = NULL;
	struct il_iw_table t = { 0 };
	struct il_iw_report r;
	int nframes = 0;

	il_iw_table_read(obj, &t, NULL, NULL);
	il_iw_report_make(&t, false, &r);
	m->iowait.count = r.all.count;
	m->iowait.total_ns = r.all.total_ns;
	m->iowait.max_ns = r.all.max_ns;
	/* stacks recorded apart that print alike (the tracer's frames differ) are one; groups
	 * are sorted by total wait, and the first with a kernel stack is the top one */
	for (size_t i = 0; i < r.ngroups && !names; i++)
		if (r.groups[i].kstack >= 0 && !(names = il_stacknames_new(stacks_fd, false)))
			break;
	il_iw_report_merge(&r, names, false);
	for (size_t i = 0; i < r.ngroups && names && !f; i++)
		if (r.groups[i].kstack >= 0)
			f = il_stacknames_get(names, 0, r.groups[i].kstack);
	for (int i = 0; f && i < f->n && nframes < maxf; i++)
		snprintf(top[nframes++], 128, "%s", f->names[i]);
	for (int i = 0; f && i < f->n && !m->iw_top_frame[0]; i++) {
		bool skip = false;

		for (size_t g = 0; g < IL_ARRAY_SIZE(generic) && !skip; g++)
			skip = !strncmp(f->funcs[i], generic[g], strlen(generic[g]));
		if (!skip)
			snprintf(m->iw_top_frame, sizeof(m->iw_top_frame), "%s", f->funcs[i]);
	}
	il_stacknames_free(names);
	il_iw_report_free(&r);
	il_iw_table_free(&t);
	return nframes;
}

struct json_object *il_verdict_json(enum il_where l, const char *why, const struct il_culprit *c,
				    const char *disk)
{
	struct json_object *v = json_object_new_object();
	char names[1024];

	json_object_object_add(v, "layer", json_object_new_string(il_where_name(l)));
	json_object_object_add(v, "reason", json_object_new_string(why));
	if (c && c->found) {
		struct json_object *pr = json_object_new_object();

		json_object_object_add(pr, "pid", json_object_new_uint64(c->pid));
		il_json_add_name(pr, "comm", c->comm, sizeof(c->comm));
		il_json_add_name(pr, "cgroup", c->cgroup, sizeof(c->cgroup));
		json_object_object_add(v, "process", pr);
		il_json_add_name(v, "file", c->file, sizeof(c->file));
		/* a sentence: its comm and file escaped as in the text output (\n, \x1b); the
		 * exact bytes are in process.comm(_b64) and file(_b64) */
		char esc[4 * sizeof(names) + 1];

		il_culprit_sentence(c, names, sizeof(names));
		json_object_object_add(v, "who", il_json_utf8(il_text_escape(names, sizeof(names), esc,
									     sizeof(esc)), sizeof(esc)));
	}
	json_object_object_add(v, "disk", disk && disk[0] ? json_object_new_string(disk) : NULL);
	return v;
}
