/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The one measurement path: snapshots, and the window between two (see measure.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cgroup.h"
#include "disk.h"
#include "escape.h"
#include "hist.h"
#include "layers/fs.h"
#include "layers/iowait.h"
#include "layers/who.h"
#include "log.h"
#include "measure.h"
#include "layers/split.h"
#include "stacks.h"
#include "util.h"

/* ---- summaries -------------------------------------------------------------------------- */

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

/* ---- snapshots ---------------------------------------------------------------------------- */

void il_measure_src_free(struct il_measure_src *src)
{
	il_stacknames_free(src->names);
	src->names = NULL;
}

/* The I/O-wait totals and, with stacks, each kernel stack's (named: stacks that print alike
 * are one) into s. */
static int snap_iowait(struct il_measure_src *src, bool stacks, struct il_snap *s)
{
	struct il_iw_table t = { 0 };
	struct il_iw_report r;
	int err = il_iw_table_read(src->obj, &t, NULL, NULL);

	if (err)
		il_debug("reading the I/O-wait layer: %s", il_errno_name(err));
	il_iw_report_make(&t, false, &r);
	/* the totals from iw_hist, which counts every sleep: the entries' sums lose what their
	 * LRU ages out */
	if (il_iw_hist_read(src->obj, s->iw_slots, &s->iw)) {
		il_debug("reading the I/O-wait lengths: none");
		s->iw = r.all;
	}
	for (size_t i = 0; stacks && i < r.ngroups; i++) {
		const struct il_frames *f;
		int k;

		if (r.groups[i].kstack < 0)
			continue;
		if (!src->names && src->stacks_fd >= 0)
			src->names = il_stacknames_new(src->stacks_fd, false);
		if (!src->names || !(f = il_stacknames_get(src->names, 0, r.groups[i].kstack)))
			continue;
		for (k = 0; k < s->nstacks && s->stacks[k].f != f; k++)
			;
		if (k == s->nstacks) {
			struct il_snap_stack *n = realloc(s->stacks, (k + 1) * sizeof(*n));

			if (!n) {
				err = -ENOMEM;
				break;
			}
			s->stacks = n;
			s->stacks[s->nstacks++] = (struct il_snap_stack){ f, 0 };
		}
		s->stacks[k].total_ns += r.groups[i].sum.weight_ns; /* an estimate if sampled */
	}
	il_iw_report_free(&r);
	il_iw_table_free(&t);
	return err == -ENOMEM ? err : 0;
}

/* The path of cgroup id (of submitter tgid) into cgroup ("" when it is no path: gone, or
 * unknown), and with rule (room for 192) its throttle rules for disk dev. */
static void cg_names(__u64 id, __u32 tgid, __u32 dev, char cgroup[128], char *rule)
{
	il_cgroup_path(id, tgid, cgroup, 128);
	if (cgroup[0] != '/')
		cgroup[0] = 0;
	if (rule)
		il_cgroup_throttle_rule(cgroup, dev, rule, 192);
}

/* blk_proc_cg's n rows pcg summed by (disk, cgroup) into s, with the cgroup and throttle rules
 * of the rows a verdict may name. */
static int snap_cgroups(const struct il_blk_pcg_row *pcg, int n, struct il_snap *s)
{
	struct il_blk_cg_row *rows;

	n = il_blk_cgroups_of(pcg, n, &rows);

	if (n <= 0)
		return 0;
	s->cg = calloc(n, sizeof(*s->cg));
	if (!s->cg) {
		free(rows);
		return -ENOMEM;
	}
	for (int i = 0; i < n; i++) {
		struct il_snap_cg *c = &s->cg[s->ncg++];

		c->row = rows[i];
		if (rows[i].v.held && rows[i].v.before_q_ns)
			cg_names(rows[i].k.cgroup, rows[i].v.tgid, rows[i].k.dev, c->cgroup, c->rule);
	}
	free(rows);
	return 0;
}

/* blk_proc_cg's n rows pcg summed by (disk, process) into s, with each submitter's cgroup,
 * and the throttle rules of those held before Q. */
static int snap_procs(const struct il_blk_pcg_row *pcg, int n, struct il_snap *s)
{
	struct il_blk_proc_row *rows;

	n = il_blk_procs_of(pcg, n, &rows);

	if (n <= 0)
		return 0;
	s->bp = calloc(n, sizeof(*s->bp));
	if (!s->bp) {
		free(rows);
		return -ENOMEM;
	}
	for (int i = 0; i < n; i++) {
		struct il_snap_bp *b = &s->bp[s->nbp++];

		b->row = rows[i];
		if (rows[i].v.cgroup)
			cg_names(rows[i].v.cgroup, rows[i].k.tgid, rows[i].k.dev, b->cgroup,
				 rows[i].v.held ? b->rule : NULL);
	}
	free(rows);
	return 0;
}

/* The layers' maps into s (what flags ask for). 0, or -ENOMEM. */
static int snap_maps(struct il_measure_src *src, unsigned flags, struct il_snap *s)
{
	int err;

	if (src->fs && (err = il_fs_stats_read(src->obj, s->fs)))
		il_debug("reading the filesystem layer: %s", il_errno_name(err));
	if (src->fs)
		il_fs_nested_read(src->obj, &s->nested);
	if (src->fs) { /* 0s where io_uring is built out (no fs_uring_stats) */
		struct fs_op_stats u[FS_OP__MAX];

		if (!il_fs_iface_stats_read(src->obj, FS_IF_URING, u))
			for (int i = 0; i < FS_OP__MAX; i++)
				s->uring[i] = u[i].count;
	}
	if (src->wb && (s->nwb = il_wb_stats_read(src->obj, &s->wb)) < 0)
		s->nwb = 0;
	if ((flags & IL_SNAP_JUDGE) && src->split && (err = il_split_read(src->obj, &s->split)))
		il_debug("reading the time split: %s", il_errno_name(err));
	err = src->iw ? snap_iowait(src, flags & IL_SNAP_STACKS, s) : 0;
	if (!err && src->blk && (s->ndisk = il_blk_disks_read(src->obj, &s->disk)) < 0)
		s->ndisk = 0;
	if (!err && src->blk && (flags & IL_SNAP_JUDGE)) { /* the map read once for both sums */
		struct il_blk_pcg_row *pcg;
		int n = il_blk_pcg_read(src->obj, &pcg);

		err = n > 0 ? snap_cgroups(pcg, n, s) ?: snap_procs(pcg, n, s) : 0;
		free(pcg);
	}
	if (!err && (flags & IL_SNAP_WHO)) {
		struct il_who w;
		int e = il_who_read(src->obj, &w);

		if (e)
			il_debug("reading attribution: %s", il_errno_name(e));
		else {
			err = il_who_view_from(&w, &s->view);
			il_who_free(&w);
		}
	}
	if (!il_drops_read(src->drops_fd, s->lost) && src->fs)
		s->lost[IL_DROP_MISSED_RETURN] += il_fs_orphan_starts(src->obj);
	return err;
}

int il_snap_read(struct il_measure_src *src, unsigned long long t_ns, unsigned flags,
		 struct il_snap *s)
{
	int err = 0;

	memset(s, 0, sizeof(*s));
	s->t_ns = t_ns;
	if (flags & IL_SNAP_MAPS)
		err = snap_maps(src, flags, s);
	if (!err && (flags & IL_SNAP_CPU) && (s->ncpu = il_proc_cpu_read(&s->cpu)) < 0) {
		err = s->ncpu == -ENOMEM ? -ENOMEM : 0;
		s->ncpu = 0;
	}
	if (err)
		il_snap_free(s);
	return err;
}

void il_snap_trim(struct il_snap *s)
{
	free(s->view.files);
	s->view.files = NULL;
	s->view.nfiles = 0;
}

void il_snap_free(struct il_snap *s)
{
	free(s->wb);
	free(s->stacks);
	free(s->disk);
	free(s->cg);
	free(s->bp);
	free(s->cpu);
	il_split_free(&s->split);
	il_who_view_free(&s->view);
	memset(s, 0, sizeof(*s));
}

/* ---- the window between two snapshots ----------------------------------------------------- */

/* d = now - base for a struct of __u64 counters only (size bytes); maxima are put back by the
 * caller. base NULL: d = now. */
static void u64s_sub(void *d, const void *now, const void *base, size_t size)
{
	const __u64 *a = now, *b = base;
	__u64 *o = d;

	for (size_t i = 0; i < size / sizeof(__u64); i++)
		o[i] = a[i] - (b ? b[i] : 0);
}

static void fs_lat(struct il_lat *l, const struct fs_op_stats *now, const struct fs_op_stats *base)
{
	struct fs_op_stats d;

	u64s_sub(&d, now, base, sizeof(d));
	il_lat_from_hist(l, d.count, d.total_ns, now->max_ns, d.slots);
}

/* Writeback: calls, errors and the most frequent error of ext4_writepages. */
static void window_wb(struct il_measure *m, const struct il_snap *now, const struct il_snap *base)
{
	__u64 top = 0;

	for (int i = 0; i < now->nwb; i++) {
		const struct il_wb_row *r = &now->wb[i];
		struct wb_stat v = r->v;

		for (int j = 0; base && j < base->nwb; j++)
			if (!memcmp(&base->wb[j].k, &r->k, sizeof(r->k))) {
				v.count -= base->wb[j].v.count;
				v.total_ns -= base->wb[j].v.total_ns;
			}
		m->wb.count += v.count;
		m->wb.total_ns += v.total_ns;
		if (v.max_ns > m->wb.max_ns)
			m->wb.max_ns = v.max_ns;
		if (r->k.ret_known && r->k.ret < 0 && v.count) {
			m->wb_errors += v.count;
			if (v.count > top) {
				top = v.count;
				m->wb_top_err = r->k.ret;
				m->wb_top_err_sync_mode = r->k.sync_mode;
			}
		}
	}
}

/* I/O wait: the totals, and the kernel stack with the most wait: its frames into w->frames,
 * the frame of it that says why into m->iw_top_frame. */
static void window_iowait(struct il_window *w, const struct il_snap *now, const struct il_snap *base)
{
	/* Frames that are generic waiting machinery, not the reason for the wait. */
	static const char *generic[] = {
		"__schedule", "schedule", "io_schedule", "bit_wait", "__wait_on_bit",
		"out_of_line_wait_on_bit", "folio_wait", "__folio_lock", "folio_lock", "wait_on_page",
		"__filemap_fdatawait", "filemap_fdatawait", "file_write_and_wait", "file_fdatawait",
		"__wait_on_buffer", "wait_on_buffer", "__lock_buffer", "do_fsync", "__x64_sys",
		"wait_for_completion", "submit_bio_wait",
	};
	struct il_measure *m = &w->m;
	const struct il_frames *f = NULL;
	__u64 best = 0, all = 0, slots[IL_HIST_SLOTS];

	/* the sleeps' distribution over the window (iw_hist, per-CPU slots summed at each end) */
	for (int i = 0; i < IL_HIST_SLOTS; i++)
		slots[i] = now->iw_slots[i] - (base && base->iw_slots[i] <= now->iw_slots[i] ? base->iw_slots[i] : 0);
	il_lat_from_hist(&m->iowait, now->iw.count - (base ? base->iw.count : 0),
			 now->iw.total_ns - (base ? base->iw.total_ns : 0), now->iw.max_ns, slots);
	for (int i = 0; i < now->nstacks; i++) {
		__u64 t = now->stacks[i].total_ns;

		/* (a stack's sum goes down when the LRU ages out one of its threads' entries:
		 * what is left is an estimate of the window's) */
		for (int j = 0; base && j < base->nstacks; j++)
			if (base->stacks[j].f == now->stacks[i].f && base->stacks[j].total_ns <= t)
				t -= base->stacks[j].total_ns;
		all += t;
		if (t > best) {
			best = t;
			f = now->stacks[i].f;
		}
	}
	if (all)
		w->top_stack_ns = (__u64)((double)best / all * m->iowait.total_ns);
	for (int i = 0; f && i < f->n && w->nframes < (int)IL_ARRAY_SIZE(w->frames); i++)
		snprintf(w->frames[w->nframes++], sizeof(w->frames[0]), "%s", f->names[i]);
	for (int i = 0; f && i < f->n && !m->iw_top_frame[0]; i++) {
		bool skip = false;

		for (size_t g = 0; g < IL_ARRAY_SIZE(generic) && !skip; g++)
			skip = !strncmp(f->funcs[i], generic[g], strlen(generic[g]));
		if (!skip)
			snprintf(m->iw_top_frame, sizeof(m->iw_top_frame), "%s", f->funcs[i]);
	}
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

/* Disk dev's totals in s over the window (base's taken away), maxima now's. */
static bool disk_window(const struct il_snap *now, const struct il_snap *base, __u32 dev,
			struct blk_disk_stats *d)
{
	const struct blk_disk_stats *a = NULL, *b = NULL;

	for (int i = 0; i < now->ndisk && !a; i++)
		if (now->disk[i].dev == dev)
			a = &now->disk[i].st;
	for (int i = 0; base && i < base->ndisk && !b; i++)
		if (base->disk[i].dev == dev)
			b = &base->disk[i].st;
	if (!a)
		return false;
	u64s_sub(d, a, b, sizeof(*d));
	d->device_max_ns = a->device_max_ns;
	d->queue_max_ns = a->queue_max_ns;
	for (int p = 0; p < BLK_PH__MAX; p++)
		d->phases.ph[p].max_ns = a->phases.ph[p].max_ns;
	return true;
}

static void phase_lat(struct il_lat *l, const struct blk_phase_stat *ph)
{
	il_lat_from_hist(l, ph->count, ph->ns, ph->max_ns, ph->slots);
}

/* The phases of the bios followed on disk dev, the cgroup whose held bios waited longest
 * before Q there, and its throttle rules for the disk. */
static void window_bios(struct il_measure *m, const struct il_snap *now, const struct il_snap *base,
			__u32 dev, const struct blk_disk_stats *bd)
{
	const struct il_snap_cg *best = NULL;
	__u64 best_ns = 0;

	phase_lat(&m->before_q, &bd->phases.ph[BLK_PH_BEFORE_Q]);
	phase_lat(&m->q2g, &bd->phases.ph[BLK_PH_Q2G]);
	phase_lat(&m->g2i, &bd->phases.ph[BLK_PH_G2I]);
	phase_lat(&m->q2c, &bd->phases.ph[BLK_PH_Q2C]);
	/* only a cgroup some of whose bios a worker queued for them (held before Q) is named:
	 * time before Q without it is the submission path's own */
	for (int i = 0; i < now->ncg; i++) {
		const struct il_snap_cg *c = &now->cg[i];
		__u64 held = c->row.v.held, ns = c->row.v.before_q_ns;

		if (c->row.k.dev != dev)
			continue;
		/* (a sum that went down lost a process's entry to blk_proc_cg's LRU: from zero) */
		for (int j = 0; base && j < base->ncg; j++)
			if (!memcmp(&base->cg[j].row.k, &c->row.k, sizeof(c->row.k)) &&
			    base->cg[j].row.v.held <= held && base->cg[j].row.v.before_q_ns <= ns) {
				held -= base->cg[j].row.v.held;
				ns -= base->cg[j].row.v.before_q_ns;
			}
		m->blk_held += held;
		if (held && ns && (!best || ns > best_ns)) {
			best = c;
			best_ns = ns;
		}
	}
	if (best) {
		snprintf(m->blk_cgroup, sizeof(m->blk_cgroup), "%s", best->cgroup);
		snprintf(m->blk_throttle, sizeof(m->blk_throttle), "%s", best->rule);
	}
}

/* The block layer on the disk of the process behind the I/O (pref[0]), even when no request
 * completed there yet; the disk with the most block-layer time when no process is known
 * (npref 0). An unrelated busier disk is never chosen. Returns the disk, 0: none. */
static __u32 window_disk(struct il_measure *m, const struct il_snap *now, const struct il_snap *base,
			 const __u32 *pref, int npref)
{
	struct blk_disk_stats d, best_st;
	__u32 dev = npref ? pref[0] : 0;
	bool found = false;

	for (int i = 0; !npref && i < now->ndisk; i++) {
		/* dev 0: requests with no disk (the flush machinery) */
		if (!now->disk[i].dev || !disk_window(now, base, now->disk[i].dev, &d))
			continue;
		if (!found || disk_life_ns(&d) > disk_life_ns(&best_st)) {
			found = true;
			best_st = d;
			dev = now->disk[i].dev;
		}
	}
	if (npref)
		found = disk_window(now, base, dev, &best_st);
	if (dev)
		il_disk_name(dev, m->disk, sizeof(m->disk));
	if (found) {
		il_lat_from_hist(&m->device, best_st.count, best_st.device_ns, best_st.device_max_ns,
				 best_st.device_slots);
		il_lat_from_hist(&m->queue, best_st.queued, best_st.queue_ns, best_st.queue_max_ns,
				 best_st.queue_slots);
		memcpy(m->reqs, best_st.ops, sizeof(m->reqs));
		window_bios(m, now, base, dev, &best_st);
	}
	return dev;
}

/* The split over the window: now's rows less base's of the same key. */
static int window_split(struct il_window *w, const struct il_snap *now, const struct il_snap *base)
{
	struct il_split *d = &w->split;

	d->ops = malloc((now->split.nops + 1) * sizeof(*d->ops));
	d->wakers = malloc((now->split.nwakers + 1) * sizeof(*d->wakers));
	if (!d->ops || !d->wakers)
		return -ENOMEM;
	for (int i = 0; i < now->split.nops; i++) {
		struct il_split_op_row r = now->split.ops[i];

		for (int j = 0; base && j < base->split.nops; j++) {
			const struct il_split_op_row *b = &base->split.ops[j];

			if (memcmp(&b->k, &r.k, sizeof(r.k)) || b->v.calls > r.v.calls)
				continue; /* a smaller count: evicted meanwhile, counting again */
			u64s_sub(&r.v, &r.v, &b->v, sizeof(r.v));
		}
		if (r.v.calls)
			d->ops[d->nops++] = r;
	}
	for (int i = 0; i < now->split.nwakers; i++) {
		struct il_split_wk_row r = now->split.wakers[i];

		for (int j = 0; base && j < base->split.nwakers; j++) {
			const struct il_split_wk_row *b = &base->split.wakers[j];

			if (memcmp(&b->k, &r.k, sizeof(r.k)) || b->v.count > r.v.count)
				continue;
			r.v.ns -= b->v.ns;
			r.v.count -= b->v.count;
			r.v.io_ns -= b->v.io_ns;
		}
		if (r.v.count)
			d->wakers[d->nwakers++] = r;
	}
	return 0;
}

/* blk_procs over the window. */
static int window_procs(struct il_window *w, const struct il_snap *now, const struct il_snap *base)
{
	w->bp = malloc((now->nbp + 1) * sizeof(*w->bp));
	if (!w->bp)
		return -ENOMEM;
	for (int i = 0; i < now->nbp; i++) {
		struct il_snap_bp r = now->bp[i];
		struct blk_proc *v = &r.row.v;

		for (int j = 0; base && j < base->nbp; j++) {
			const struct blk_proc *b = &base->bp[j].row.v;

			if (memcmp(&base->bp[j].row.k, &r.row.k, sizeof(r.row.k)) || b->ios > v->ios)
				continue;
			v->ios -= b->ios;
			v->bytes -= b->bytes;
			v->write_bytes -= b->write_bytes;
			v->before_q_ns -= b->before_q_ns;
			v->queue_ns -= b->queue_ns;
			v->device_ns -= b->device_ns;
			v->held -= b->held;
		}
		if (v->ios)
			w->bp[w->nbp++] = r;
	}
	return 0;
}

static int cpu_by_pid(const void *a, const void *b)
{
	__u32 x = ((const struct il_proc_cpu *)a)->pid, y = ((const struct il_proc_cpu *)b)->pid;

	return x < y ? -1 : x > y;
}

/* CPU time over the window, when both ends read it, sorted by pid: /proc's for the processes
 * alive at its end, and for those gone by then the CPU time their threads had when they
 * exited (split_exited) past what /proc or the exits gave at its start (a process that began
 * before tracing and ended in the window: its threads that ended before tracing are in
 * neither, so it may be counted short, never long). */
static int window_cpu(struct il_window *w, const struct il_snap *now, const struct il_snap *base)
{
	if (!base || !base->ncpu || !now->ncpu)
		return 0;
	w->cpu = malloc((now->ncpu + now->split.nexited) * sizeof(*w->cpu));
	if (!w->cpu)
		return -ENOMEM;
	for (int i = 0; i < now->ncpu; i++) {
		struct il_proc_cpu r = now->cpu[i];
		const struct il_proc_cpu *b = il_proc_cpu_find(base->cpu, base->ncpu, r.pid);

		if (b && b->cpu_ns <= r.cpu_ns)
			r.cpu_ns -= b->cpu_ns;
		if (b && b->runq_ns <= r.runq_ns)
			r.runq_ns -= b->runq_ns;
		if (r.cpu_ns || r.runq_ns)
			w->cpu[w->ncpu++] = r;
	}
	for (int i = 0, j = 0; i < now->split.nexited; i++) {
		const struct il_split_exit_row *e = &now->split.exited[i];
		const struct il_proc_cpu *b = il_proc_cpu_find(base->cpu, base->ncpu, e->tgid);
		__u64 before = b ? b->cpu_ns : 0;
		struct il_proc_cpu r = { .pid = e->tgid, .kthread = e->v.kthread, .cpus = e->v.cpus };

		if (il_proc_cpu_find(now->cpu, now->ncpu, e->tgid))
			continue; /* alive at the end: /proc counts its exited threads */
		while (j < base->split.nexited && base->split.exited[j].tgid < e->tgid)
			j++;
		if (j < base->split.nexited && base->split.exited[j].tgid == e->tgid &&
		    base->split.exited[j].v.ns > before)
			before = base->split.exited[j].v.ns;
		if (e->v.ns <= before)
			continue;
		r.cpu_ns = e->v.ns - before;
		memcpy(r.comm, e->v.comm, sizeof(r.comm));
		w->cpu[w->ncpu++] = r;
	}
	qsort(w->cpu, w->ncpu, sizeof(*w->cpu), cpu_by_pid);
	return 0;
}

/* The window's processes' writeback by and for others, per disk (before -p). */
static int window_dirtiers(struct il_window *w)
{
	int n = 0;

	for (int i = 0; i < w->view.nprocs; i++)
		n += w->view.procs[i].ndisks;
	w->dirtiers = calloc(n + 1, sizeof(*w->dirtiers));
	if (!w->dirtiers)
		return -ENOMEM;
	for (int i = 0; i < w->view.nprocs; i++) {
		const struct il_who_sum *p = &w->view.procs[i];

		for (int d = 0; d < p->ndisks; d++) {
			struct il_win_dirtier *x = &w->dirtiers[w->ndirtiers];

			__u64 wb = p->kthread ? 0 : p->disks[d].wb_bytes; /* a kernel thread dirties none */

			if (!wb && !p->disks[d].foreign_bytes)
				continue;
			x->pid = p->pid;
			x->dev = p->disks[d].dev;
			x->kthread = p->kthread;
			x->wb_bytes = wb;
			x->foreign_bytes = p->disks[d].foreign_bytes;
			memcpy(x->comm, p->comm, sizeof(x->comm));
			w->ndirtiers++;
		}
	}
	return 0;
}

int il_measure_window(const struct il_measure_src *src, const struct il_snap *now,
		      const struct il_snap *base, struct il_window *w)
{
	struct il_measure *m = &w->m;
	__u32 pref[16];
	int npref = 0;

	memset(w, 0, sizeof(*w));
	m->elapsed_s = (now->t_ns - (base ? base->t_ns : 0)) / 1e9;
	m->pid = src->pid;
	m->fs_seen = src->fs;
	m->wb_seen = src->wb;
	m->iw_seen = src->iw;
	m->blk_seen = src->blk;
	for (int i = 0; src->fs && i < FS_OP__MAX; i++) {
		fs_lat(&m->ops[i], &now->fs[i], base ? &base->fs[i] : NULL);
		m->uring[i] = now->uring[i] - (base ? base->uring[i] : 0);
	}
	if (src->fs)
		fs_lat(&m->nested_sync, &now->nested, base ? &base->nested : NULL);
	if (src->wb)
		window_wb(m, now, base);
	if (src->iw)
		window_iowait(w, now, base);
	/* the processes over the window; the disks of the one behind the I/O: -p's, else the
	 * top one's */
	if (il_who_view_copy(&w->view, &now->view))
		return -ENOMEM;
	if (base)
		il_who_view_sub(&w->view, &base->view);
	npref = il_who_view_disks(&w->view, src->pid ?: src->prefer ?: il_who_view_top_pid(&w->view),
				  pref, IL_ARRAY_SIZE(pref));
	/* -p of a process that used no disk: no disk is its, and other processes' are not */
	if (src->blk && (npref || !src->pid))
		w->dev = window_disk(m, now, base, pref, npref);
	il_who_view_for_disk(&w->view, w->dev);
	if (window_dirtiers(w)) {
		il_window_free(w);
		return -ENOMEM;
	}
	if (src->pid)
		il_who_view_only(&w->view, src->pid);
	else if (src->cgroup)
		il_who_view_only_cgroup(&w->view, src->cgroup);
	memcpy(w->lost, now->lost, sizeof(w->lost));
	if (window_split(w, now, base) || window_procs(w, now, base) || window_cpu(w, now, base)) {
		il_window_free(w);
		return -ENOMEM;
	}
	return 0;
}

void il_window_free(struct il_window *w)
{
	il_who_view_free(&w->view);
	il_split_free(&w->split);
	free(w->bp);
	free(w->cpu);
	free(w->dirtiers);
	memset(w, 0, sizeof(*w));
}

bool il_window_own_io(const struct il_window *w, __u32 pid, struct blk_proc *own, __u64 *disk_bytes)
{
	memset(own, 0, sizeof(*own));
	*disk_bytes = 0;
	for (int i = 0; w->dev && i < w->nbp; i++) {
		const struct il_blk_proc_row *r = &w->bp[i].row;

		if (r->k.dev != w->dev)
			continue;
		*disk_bytes += r->v.bytes;
		if (r->k.tgid != pid)
			continue;
		own->ios += r->v.ios;
		own->bytes += r->v.bytes;
		own->write_bytes += r->v.write_bytes;
		own->before_q_ns += r->v.before_q_ns;
		own->queue_ns += r->v.queue_ns;
		own->device_ns += r->v.device_ns;
		own->held += r->v.held;
	}
	return own->ios > 0;
}

/* ---- the window's JSON ---------------------------------------------------------------------- */

/* layers.device.requests (enum il_req_op_kind) */
static const char *const req_names[IL_OP__MAX] = { "read", "write", "flush", "discard", "other" };

/* The block rows' shares: before Q, Q2G, G2I, I2D, D2C, each of their sum. */
void il_measure_blk_shares(const struct il_measure *m, double shares[IL_BLK_ROWS])
{
	const struct il_lat *lats[IL_BLK_ROWS] = { &m->before_q, &m->q2g, &m->g2i, &m->queue, &m->device };
	__u64 sum = 0;

	for (int i = 0; i < IL_BLK_ROWS; i++)
		sum += lats[i]->total_ns;
	for (int i = 0; i < IL_BLK_ROWS; i++)
		shares[i] = sum ? (double)lats[i]->total_ns / sum : 0;
}

/* layers.block_phases {before_q, q2g, g2i, i2d, d2c (with their shares), q2c}, block_held,
 * block_cgroup, block_throttle. */
static void blk_json(struct json_object *ly, const struct il_measure *m)
{
	static const char *keys[] = { "before_q", "q2g", "g2i", "i2d", "d2c", "q2c" };
	const struct il_lat *lats[] = { &m->before_q, &m->q2g, &m->g2i, &m->queue, &m->device, &m->q2c };
	struct json_object *ph = json_object_new_object();
	double shares[IL_BLK_ROWS];

	il_measure_blk_shares(m, shares);
	for (size_t i = 0; i < IL_ARRAY_SIZE(keys); i++) {
		struct json_object *x = il_lat_json(lats[i]);

		if (i < IL_BLK_ROWS)
			json_object_object_add(x, "share", json_object_new_double(shares[i]));
		json_object_object_add(ph, keys[i], x);
	}
	json_object_object_add(ly, "block_phases", ph);
	json_object_object_add(ly, "block_held", json_object_new_uint64(m->blk_held));
	il_json_add_name(ly, "block_cgroup", m->blk_cgroup, sizeof(m->blk_cgroup));
	il_json_add_name(ly, "block_throttle", m->blk_throttle, sizeof(m->blk_throttle));
}

static struct json_object *layers_json(const struct il_window *w)
{
	const struct il_measure *m = &w->m;
	struct json_object *ly = json_object_new_object();

	if (m->fs_seen) {
		struct json_object *ops = json_object_new_object();

		for (int i = 0; i < FS_OP__MAX; i++) {
			struct json_object *op = il_lat_json(&m->ops[i]);

			json_object_object_add(op, "io_uring", json_object_new_uint64(m->uring[i]));
			json_object_object_add(ops, il_fs_op_names[i], op);
		}
		json_object_object_add(ly, "syscall", ops);
		json_object_object_add(ly, "sync_in_writes", il_lat_json(&m->nested_sync));
	}
	if (m->wb_seen) {
		struct json_object *wb = il_lat_json(&m->wb);

		json_object_object_add(wb, "errors", json_object_new_uint64(m->wb_errors));
		json_object_object_add(ly, "writeback", wb);
	}
	if (m->iw_seen)
		json_object_object_add(ly, "iowait", il_lat_json(&m->iowait));
	if (m->blk_seen && m->pid) {
		struct json_object *o = json_object_new_object();
		struct blk_proc own;
		__u64 all;

		il_window_own_io(w, m->pid, &own, &all);
		json_object_object_add(o, "requests", json_object_new_uint64(own.ios));
		json_object_object_add(o, "bytes", json_object_new_uint64(own.bytes));
		json_object_object_add(o, "before_q_ns", json_object_new_uint64(own.before_q_ns));
		json_object_object_add(o, "queue_ns", json_object_new_uint64(own.queue_ns));
		json_object_object_add(o, "device_ns", json_object_new_uint64(own.device_ns));
		json_object_object_add(o, "disk_bytes", json_object_new_uint64(all));
		json_object_object_add(ly, "own_io", o);
	}
	if (m->blk_seen) {
		struct json_object *dv = il_lat_json(&m->device), *rq = json_object_new_object();

		json_object_object_add(ly, "disk", json_object_new_string(m->disk));
		json_object_object_add(ly, "queue", il_lat_json(&m->queue));
		for (int i = 0; i < IL_OP__MAX; i++)
			json_object_object_add(rq, req_names[i], json_object_new_uint64(m->reqs[i]));
		json_object_object_add(dv, "requests", rq);
		json_object_object_add(ly, "device", dv);
		blk_json(ly, m);
	}
	return ly;
}

/* {layer, reason, process{pid, comm, cgroup}, file, who, disk} (process, file and who only
 * when the verdict names one; disk null when none). */
static struct json_object *verdict_json(const struct il_verdict *vd, const char *disk)
{
	struct json_object *v = json_object_new_object();
	const struct il_culprit *c = &vd->c;
	char names[1024];

	json_object_object_add(v, "layer", json_object_new_string(il_where_name(vd->d.where)));
	json_object_object_add(v, "reason", json_object_new_string(vd->why));
	if (c->found) {
		struct json_object *pr = json_object_new_object();
		char esc[4 * sizeof(names) + 1];

		json_object_object_add(pr, "pid", json_object_new_uint64(c->pid));
		il_json_add_name(pr, "comm", c->comm, sizeof(c->comm));
		il_json_add_name(pr, "cgroup", c->cgroup, sizeof(c->cgroup));
		json_object_object_add(v, "process", pr);
		il_json_add_name(v, "file", c->file, sizeof(c->file));
		/* a sentence: its comm and file escaped as in the text output (\n, \x1b); the
		 * exact bytes are in process.comm(_b64) and file(_b64) */
		il_culprit_sentence(c, names, sizeof(names));
		json_object_object_add(v, "who", il_json_utf8(il_text_escape(names, sizeof(names), esc,
									     sizeof(esc)), sizeof(esc)));
	}
	json_object_object_add(v, "disk", disk && disk[0] ? json_object_new_string(disk) : NULL);
	return v;
}

struct json_object *il_window_json(const struct il_window *w, const struct il_verdict *v)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "duration_s", il_json_seconds(w->m.elapsed_s));
	json_object_object_add(o, "pid", json_object_new_int64(w->m.pid));
	json_object_object_add(o, "layers", layers_json(w));
	json_object_object_add(o, "verdict", verdict_json(v, w->m.disk));
	json_object_object_add(o, "lost", il_drops_json(w->lost));
	return o;
}
