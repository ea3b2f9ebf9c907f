/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#include <stdio.h>
#include <string.h>
#include "util.h"
#include "verdict.h"

static const char *layer_names[] = {
	[IL_WHERE_NONE] = "none", [IL_WHERE_SYSCALL] = "syscall/VFS",
	[IL_WHERE_FILESYSTEM] = "filesystem", [IL_WHERE_WRITEBACK] = "writeback",
	[IL_WHERE_QUEUE] = "block queue", [IL_WHERE_DEVICE] = "device",
	[IL_WHERE_BLOCK] = "block layer", [IL_WHERE_CPU] = "CPU",
};
static const char *op_names[] = { "read", "write", "open", "fsync", "sync_file_range" };
_Static_assert(IL_ARRAY_SIZE(op_names) == FS_OP__MAX, "one name per enum fs_op");

const char *il_where_name(enum il_where l)
{
	return l <= IL_WHERE_CPU ? layer_names[l] : "?";
}

/* Below this p99, nothing is slow in absolute terms: say so next to the relative verdict. */
#define IL_SLOW_NS 1000000ULL
/* Below this share of the time in file operations, in I/O wait and with the disk busy, the
 * traced processes hardly do I/O: no layer is blamed. */
#define IL_IDLE_SHARE 0.05

/* The block layer's time on the disk, its part before Q, and whether that part is the
 * largest of before Q, the OS queue (Q2G, G2I, I2D) and the device, with bios held there: a
 * worker queued some for their submitter (blk-throttle's dispatch). Without held bios, the
 * time before Q is the submission path's own (with tracepoints only, the filesystem's work
 * between the start of a direct I/O or writeback and each bio): not the block layer's. */
static bool before_q_rules(const struct il_measure *m, double *share)
{
	__u64 before = m->before_q.total_ns, queue = m->q2g.total_ns + m->g2i.total_ns + m->queue.total_ns;
	__u64 dev = m->device.total_ns, after = m->q2c.count ? m->q2c.total_ns : queue + dev;

	*share = before + after ? (double)before / (before + after) : 0;
	return m->before_q.count && m->blk_held && before > queue && before > dev;
}

/* The reason of an IL_WHERE_BLOCK verdict from offset n of why: how long bios wait before the
 * queue on the disk, which cgroup, and the throttle rule that holds them. */
static size_t why_before_q(const struct il_measure *m, const char *lead, char *why, size_t len, size_t n)
{
	char a[32], b[32], c[32];
	double share;

	before_q_rules(m, &share);
	if (n < len)
		n += snprintf(why + n, len - n, "%sbios on %s wait p99 < %s before the queue, %.0f%% of their "
			      "time in the block layer (then p99 < %s in the OS queue and p99 < %s at the "
			      "device): they are held between their submission and block_bio_queue",
			      lead, m->disk, il_fmt_ns(m->before_q.p99_lt_ns, a, sizeof(a)), share * 100,
			      il_fmt_ns(m->queue.p99_lt_ns + m->q2g.p99_lt_ns, b, sizeof(b)),
			      il_fmt_ns(m->device.p99_lt_ns, c, sizeof(c)));
	if (n < len && m->blk_cgroup[0] && m->blk_throttle[0])
		n += snprintf(why + n, len - n, " by the cgroup throttle (blk-throttle) of cgroup %s: %s",
			      m->blk_cgroup, m->blk_throttle);
	else if (n < len && m->blk_cgroup[0])
		n += snprintf(why + n, len - n, ", most in cgroup %s (no throttle rule of it names %s: "
			      "look at the parent cgroups' blkio/io.max limits)", m->blk_cgroup, m->disk);
	return n;
}

/* "no file operations were seen" with what it covers: the filesystems traced, and with -p,
 * that the process's children are not in it. */
static size_t no_fs_ops(const struct il_measure *m, char *why, size_t len, size_t n)
{
	if (n >= len)
		return n;
	if (m->pid)
		return n + snprintf(why + n, len - n, "process %u made no file operations on ext4, xfs or "
				    "btrfs (the filesystems traced; -p covers its threads, not its children: "
				    "trace those by their own pids)", m->pid);
	return n + snprintf(why + n, len - n, "no file operations on ext4, xfs or btrfs were seen (the "
			    "filesystems traced)");
}

/* The largest p99 of everything measured (the table's rows), ns. */
static __u64 max_p99(const struct il_measure *m, bool blk)
{
	const struct il_lat *b[] = { &m->device, &m->queue, &m->before_q, &m->q2g, &m->g2i };
	__u64 mx = 0;

	for (int i = 0; m->fs_seen && i < FS_OP__MAX; i++)
		if (m->ops[i].count && m->ops[i].p99_lt_ns > mx)
			mx = m->ops[i].p99_lt_ns;
	for (size_t i = 0; blk && i < IL_ARRAY_SIZE(b); i++)
		if (b[i]->count && b[i]->p99_lt_ns > mx)
			mx = b[i]->p99_lt_ns;
	return mx;
}

/* A phase's p99 when it was seen, else 0. */
static __u64 p99_of(const struct il_lat *l)
{
	return l->count ? l->p99_lt_ns : 0;
}

/* The block layer's part of the sentence from offset n: every p99 that blk_ns sums (the
 * device, the OS queue, Q to getrq, before Q when bios were held there), and their sum when
 * more than one; then the time in the submitter's plug (getrq to insert), named but not
 * summed: it is the submitter's batching, its own time in the filesystem's submission path. */
static size_t why_block(const struct il_measure *m, char *why, size_t len, size_t n, __u64 blk_ns)
{
	struct { const struct il_lat *l; const char *where; } parts[] = {
		{ &m->queue, "queued in the OS (insert -> issue)" },
		{ &m->q2g, "from queue to getrq (rq-qos, tags)" },
		{ &m->before_q, "before the queue" },
	};
	char a[32];
	int nparts = 1;

	if (n < len)
		n += snprintf(why + n, len - n, "block requests on %s take p99 < %s at the device", m->disk,
			      il_fmt_ns(m->device.p99_lt_ns, a, sizeof(a)));
	for (size_t i = 0; i < IL_ARRAY_SIZE(parts) && n < len; i++) {
		if (!p99_of(parts[i].l) || (parts[i].l == &m->before_q && !m->blk_held))
			continue;
		n += snprintf(why + n, len - n, ", p99 < %s %s", il_fmt_ns(parts[i].l->p99_lt_ns, a, sizeof(a)),
			      parts[i].where);
		nparts++;
	}
	if (n < len && (nparts > 1 || p99_of(&m->g2i)))
		n += snprintf(why + n, len - n, " (");
	if (n < len && nparts > 1)
		n += snprintf(why + n, len - n, "together p99 < %s", il_fmt_ns(blk_ns, a, sizeof(a)));
	if (n < len && p99_of(&m->g2i))
		n += snprintf(why + n, len - n, "%sthe p99 < %s from getrq to insert, in the submitter's "
			      "plug, is not counted: its own batching", nparts > 1 ? "; " : "",
			      il_fmt_ns(m->g2i.p99_lt_ns, a, sizeof(a)));
	if (n < len && (nparts > 1 || p99_of(&m->g2i)))
		n += snprintf(why + n, len - n, ")");
	return n;
}

void il_decide(const struct il_measure *m, struct il_decision *d)
{
	int top = -1;

	memset(d, 0, sizeof(*d));
	/* The operation the application spent the most time in. */
	for (int i = 0; m->fs_seen && i < FS_OP__MAX; i++)
		if (m->ops[i].count && (top < 0 || m->ops[i].total_ns > m->ops[top].total_ns))
			top = i;
	d->top = top;
	d->blk = m->blk_seen && m->disk[0] && (m->device.count || m->q2c.count);
	if (top < 0 && !d->blk) {
		d->where = IL_WHERE_NONE;
		d->why = IL_WHY_NOTHING;
		return;
	}
	if (m->wb_seen && m->wb_errors) {
		d->where = IL_WHERE_WRITEBACK;
		d->why = IL_WHY_WB_ERRORS;
		return;
	}

	bool blk = d->blk;
	/* the block layer's p99s, each phase the sentence quotes; the time before Q is the block
	 * layer's only with bios held there (before_q_rules()) */
	__u64 os_ns = blk ? p99_of(&m->queue) + p99_of(&m->q2g) : 0;

	d->blk_ns = blk ? p99_of(&m->device) + os_ns + (m->blk_held ? p99_of(&m->before_q) : 0) : 0;
	d->queue_worse = blk && os_ns > p99_of(&m->device);
	d->before_q = blk && before_q_rules(m, &d->before_q_share);
	d->busy = blk && m->elapsed_s > 0 ? m->device.total_ns / (m->elapsed_s * 1e9) : 0;
	/* requests in the block layer at once, on average (before Q, in the OS, at the device) */
	d->in_blk = blk && m->elapsed_s > 0 ?
		(m->device.total_ns + m->queue.total_ns + m->q2g.total_ns + m->g2i.total_ns +
		 (m->blk_held ? m->before_q.total_ns : 0)) / (m->elapsed_s * 1e9) : 0;
	for (int i = 0; m->fs_seen && i < FS_OP__MAX; i++)
		d->fs_share += m->ops[i].total_ns;
	if (m->elapsed_s > 0) {
		d->fs_share /= m->elapsed_s * 1e9;
		d->iw_share = m->iw_seen ? m->iowait.total_ns / (m->elapsed_s * 1e9) : 0;
	}
	d->quiet = max_p99(m, blk) <= IL_SLOW_NS;
	if (!d->before_q && m->elapsed_s > 0 && d->fs_share < IL_IDLE_SHARE &&
	    d->iw_share < IL_IDLE_SHARE && d->busy < IL_IDLE_SHARE) {
		d->where = IL_WHERE_NONE;
		d->why = IL_WHY_IDLE;
		return;
	}
	/* The block layer accounts for the operation when the p99s it quotes make at least half
	 * of the operation's, the device's own p99 is not above it (a call that returns before a
	 * request could complete did not wait for one) and the requests were in the block layer
	 * a non-trivial share of the time (a disk idle 99% of it is slow for nobody). */
	bool accounts = top >= 0 && blk && d->in_blk >= IL_IDLE_SHARE &&
			d->blk_ns * 2 >= m->ops[top].p99_lt_ns &&
			p99_of(&m->device) <= 2 * m->ops[top].p99_lt_ns;

	if (top < 0 && d->before_q) {
		d->where = IL_WHERE_BLOCK;
		d->why = IL_WHY_NOFS_BEFORE_Q;
	} else if (top < 0 && d->in_blk < IL_IDLE_SHARE) {
		/* waits, but not on this disk: nothing here to blame */
		d->where = IL_WHERE_NONE;
		d->why = IL_WHY_NOFS_NOT_HERE;
	} else if (top < 0) {
		d->where = d->queue_worse ? IL_WHERE_QUEUE : IL_WHERE_DEVICE;
		d->why = IL_WHY_NOFS_BLOCK;
	} else if (!blk) {
		d->where = top == FS_OP_FSYNC || top == FS_OP_SYNC_RANGE ? IL_WHERE_FILESYSTEM
									  : IL_WHERE_SYSCALL;
		d->why = IL_WHY_NO_BLOCK;
	} else if (accounts && d->before_q) {
		d->where = IL_WHERE_BLOCK;
		d->why = IL_WHY_BEFORE_Q;
	} else if (accounts) {
		d->where = d->queue_worse ? IL_WHERE_QUEUE : IL_WHERE_DEVICE;
		d->why = IL_WHY_BLOCK;
	} else {
		if (top == FS_OP_WRITE && strstr(m->iw_top_frame, "balance_dirty_pages"))
			d->where = IL_WHERE_WRITEBACK;
		else if (top == FS_OP_FSYNC || top == FS_OP_SYNC_RANGE || top == FS_OP_OPEN)
			d->where = IL_WHERE_FILESYSTEM;
		else
			d->where = IL_WHERE_SYSCALL;
		d->why = IL_WHY_ABOVE_BLOCK;
		/* the calls return sooner than a request completes at the device */
		d->no_wait = p99_of(&m->device) > 2 * m->ops[top].p99_lt_ns;
	}
}

/* "OP takes p99 < X" from offset n of why. */
static size_t op_p99(const struct il_measure *m, int top, const char *then, char *why, size_t len,
		     size_t n)
{
	char a[32];

	if (n < len)
		n += snprintf(why + n, len - n, "%s takes p99 < %s%s", op_names[top],
			      il_fmt_ns(m->ops[top].p99_lt_ns, a, sizeof(a)), then);
	return n;
}

/* Where the time goes above the block layer, as the sentence's end names it. */
static const char *above_block(enum il_where l, bool no_wait)
{
	if (l == IL_WHERE_WRITEBACK)
		return "writeback layer (writers throttled in balance_dirty_pages)";
	if (l == IL_WHERE_FILESYSTEM)
		return no_wait ? "filesystem (starting writeback: page locks, block allocation, bio "
				 "submission)"
			       : "filesystem (its sync path: journal or metadata writes, waits on data "
				 "already in flight)";
	return "syscall/VFS layer (locks, page cache)";
}

/* The sentence of a decision taken without the block layer's help, or on nothing at all. */
static size_t text_without_calls(const struct il_measure *m, const struct il_decision *d,
				 char *why, size_t len)
{
	char a[32];
	size_t n = 0;

	switch (d->why) {
	case IL_WHY_NOTHING:
		n = no_fs_ops(m, why, len, 0);
		if (n < len)
			n += snprintf(why + n, len - n, m->pid ? " and sent no block requests" :
				      " and no block requests were seen");
		return n;
	case IL_WHY_WB_ERRORS:
		return snprintf(why, len, "ext4_writepages failed %llu of %llu times (most often %d %s "
				"with %s): writeback is failing and being retried, and whoever waits on "
				"it (fsync, dirty throttling) waits for the retries, not for the device",
				(unsigned long long)m->wb_errors, (unsigned long long)m->wb.count,
				m->wb_top_err, il_errno_name(m->wb_top_err),
				m->wb_top_err_sync_mode == 1 ? "WB_SYNC_ALL" : "WB_SYNC_NONE");
	case IL_WHY_IDLE:
		n = snprintf(why, len, "no layer stands out: file operations took %.1f%% of the time, "
			     "I/O wait %.1f%%", d->fs_share * 100, d->iw_share * 100);
		if (n < len && d->blk)
			n += snprintf(why + n, len - n, ", and %s was busy %.1f%% of it", m->disk,
				      d->busy * 100);
		if (n < len && d->top >= 0)
			n += snprintf(why + n, len - n, " (the most time: %s, %llu calls, p99 < %s)",
				      op_names[d->top], (unsigned long long)m->ops[d->top].count,
				      il_fmt_ns(m->ops[d->top].p99_lt_ns, a, sizeof(a)));
		else if (n < len)
			n = no_fs_ops(m, why, len, n + snprintf(why + n, len - n, "; "));
		return n;
	case IL_WHY_NOFS_BEFORE_Q:
		return why_before_q(m, "; ", why, len, no_fs_ops(m, why, len, 0));
	case IL_WHY_NOFS_NOT_HERE:
		n = no_fs_ops(m, why, len, 0);
		if (n < len)
			n += snprintf(why + n, len - n, "; no layer stands out: I/O wait took %.1f%% of "
				      "the time, and block requests on %s were in the block layer %.1f%% "
				      "of it", d->iw_share * 100, m->disk, d->in_blk * 100);
		return n;
	case IL_WHY_NOFS_BLOCK:
		n = no_fs_ops(m, why, len, 0);
		if (n < len)
			n += snprintf(why + n, len - n, "; ");
		n = why_block(m, why, len, n, d->blk_ns);
		if (n < len)
			n += snprintf(why + n, len - n, ", %s busy %.0f%% of the time", m->disk,
				      d->busy > 1 ? 100.0 : d->busy * 100);
		return n;
	default:
		return 0;
	}
}

size_t il_decision_text(const struct il_measure *m, const struct il_decision *d, char *why,
			size_t len)
{
	int top = d->top;
	size_t n;

	if (len)
		why[0] = 0;
	switch (d->why) {
	case IL_WHY_NO_BLOCK:
		n = op_p99(m, top, " and no block request was seen: the time is spent ", why, len, 0);
		if (n < len)
			n += snprintf(why + n, len - n, "%s", d->where == IL_WHERE_SYSCALL ?
				      "in the syscall/VFS layer (page cache, locks, copies)" :
				      "in the filesystem");
		break;
	case IL_WHY_BEFORE_Q:
		n = why_before_q(m, "", why, len, op_p99(m, top, " and ", why, len, 0));
		break;
	case IL_WHY_BLOCK:
		n = why_block(m, why, len, op_p99(m, top, " and ", why, len, 0), d->blk_ns);
		if (n < len)
			n += snprintf(why + n, len - n, ": the block layer accounts for %s of it (%s busy "
				      "%.0f%% of the time, %.1f requests in flight on average)",
				      d->blk_ns >= m->ops[top].p99_lt_ns ? "all" : "at least half",
				      m->disk, d->busy > 1 ? 100.0 : d->busy * 100, d->busy);
		break;
	case IL_WHY_ABOVE_BLOCK:
		n = why_block(m, why, len, op_p99(m, top, " while ", why, len, 0), d->blk_ns);
		if (n < len && d->in_blk < IL_IDLE_SHARE)
			n += snprintf(why + n, len - n, " and are in the block layer %.1f%% of the time",
				      d->in_blk * 100);
		if (n < len && d->no_wait)
			n += snprintf(why + n, len - n, ": the calls return before their requests could "
				      "complete (they do not wait for the device), so their time goes "
				      "above the block layer, in the %s", above_block(d->where, true));
		else if (n < len)
			n += snprintf(why + n, len - n, ": the time goes above the block layer, in the %s",
				      above_block(d->where, false));
		break;
	default:
		n = text_without_calls(m, d, why, len);
		/* these sentences end here: nothing measured to add, or said already */
		if (d->why == IL_WHY_NOTHING || d->why == IL_WHY_WB_ERRORS || d->why == IL_WHY_IDLE ||
		    d->why == IL_WHY_NOFS_NOT_HERE)
			return n;
	}
	if (n < len && m->iw_seen && m->iw_top_frame[0])
		n += snprintf(why + n, len - n, "; most I/O-wait time is under %s", m->iw_top_frame);
	if (n < len && d->quiet)
		n += snprintf(why + n, len - n, " (every p99 is under 1 ms: nothing is slow in absolute "
			      "terms)");
	return n;
}

const char *il_why_clause(const char **p, size_t *len)
{
	const char *start = *p, *q = start;
	int depth = 0;

	if (!*start)
		return NULL;
	for (; *q; q++) {
		depth += *q == '(' ? 1 : *q == ')' && depth ? -1 : 0;
		if (!depth && (q[0] == ';' || q[0] == ':') && q[1] == ' ')
			break;
	}
	*len = q - start;
	*p = *q ? q + 2 : q;
	return start;
}

enum il_where il_verdict(const struct il_measure *m, char *why, size_t len)
{
	struct il_decision d;

	il_decide(m, &d);
	il_decision_text(m, &d, why, len);
	return d.where;
}

void il_judge(const struct il_measure *m, const struct il_who_sum *procs, int n,
	      struct il_verdict *v)
{
	il_decide(m, &v->d);
	il_decision_text(m, &v->d, v->why, sizeof(v->why));
	il_verdict_culprit(v->d.where, procs, n, m->elapsed_s, m->disk, &v->c);
}

/* How much of layer l's time process p accounts for (ns), or its bytes on the disk for the
 * block layers. */
static __u64 weight(enum il_where l, const struct il_who_sum *p)
{
	switch (l) {
	case IL_WHERE_NONE: /* no layer stands out: who did the most file I/O */
		return p->op_ns[FS_OP_READ] + p->op_ns[FS_OP_WRITE] + p->op_ns[FS_OP_OPEN] +
		       p->op_ns[FS_OP_FSYNC] + p->op_ns[FS_OP_SYNC_RANGE] + p->iowait_ns;
	case IL_WHERE_SYSCALL:
		return p->op_ns[FS_OP_READ] + p->op_ns[FS_OP_WRITE] + p->op_ns[FS_OP_OPEN];
	case IL_WHERE_FILESYSTEM:
		return p->op_ns[FS_OP_FSYNC] + p->op_ns[FS_OP_SYNC_RANGE] + p->op_ns[FS_OP_OPEN];
	case IL_WHERE_WRITEBACK:
		return p->op_ns[FS_OP_FSYNC] + p->op_ns[FS_OP_WRITE] + p->iowait_ns;
	case IL_WHERE_QUEUE:
	case IL_WHERE_DEVICE:
	case IL_WHERE_BLOCK:
		return p->disk_bytes + p->wb_bytes;
	default:
		return 0;
	}
}

bool il_culprit_direct(const struct il_who_sum *p, const char *disk)
{
	return disk && disk[0] && p->direct_disk[0] && !strcmp(p->direct_disk, disk);
}

void il_verdict_culprit(enum il_where l, const struct il_who_sum *procs, int n,
			double elapsed_s, const char *disk, struct il_culprit *c)
{
	const struct il_who_sum *best = NULL;
	__u64 bw = 0, total = 0;

	memset(c, 0, sizeof(*c));
	for (int i = 0; i < n; i++)
		total += weight(l, &procs[i]);
	/* processes first; kernel threads (which work for them) only when no process took a
	 * non-trivial share */
	for (int kt = 0; kt < 2 && !best; kt++) {
		for (int i = 0; i < n; i++) {
			__u64 w = weight(l, &procs[i]);

			if (procs[i].kthread != kt || !w || w < IL_CULPRIT_SHARE * total)
				continue;
			if (w > bw || (w == bw && best && procs[i].pid < best->pid)) {
				bw = w;
				best = &procs[i];
			}
		}
	}
	if (!best)
		return;
	c->found = true;
	c->pid = best->pid;
	snprintf(c->comm, sizeof(c->comm), "%s", best->comm);
	snprintf(c->cgroup, sizeof(c->cgroup), "%s", best->cgroup);
	snprintf(c->file, sizeof(c->file), "%s", best->top_file);
	snprintf(c->disk, sizeof(c->disk), "%s", disk ? disk : "");
	c->block = l == IL_WHERE_QUEUE || l == IL_WHERE_DEVICE || l == IL_WHERE_BLOCK;
	/* its file on another disk than the verdict's: a block verdict's bytes are not that
	 * file's (it is left out); nor are those of a process that sends its bytes to the
	 * verdict's disk itself (il_culprit_direct(): a block device it writes directly); any
	 * other names the disk the file is on */
	if (c->file[0] && c->disk[0] && best->top_file_disk[0] && strcmp(best->top_file_disk, c->disk)) {
		c->direct = !c->block && il_culprit_direct(best, c->disk);
		if (c->block || c->direct)
			c->file[0] = 0;
		else
			snprintf(c->disk, sizeof(c->disk), "%s", best->top_file_disk);
	}
	/* which way: the top file's own bytes when it has any (a process that reads one file and
	 * writes its log writes to the log), else the process's */
	c->file_way = c->file[0] && (best->top_file_read_bytes || best->top_file_write_bytes);
	c->writes = c->file_way ? best->top_file_write_bytes >= best->top_file_read_bytes
				: best->write_bytes >= best->read_bytes;
	__u64 bytes = c->block ? bw : c->direct ? best->disk_bytes :
		      c->writes ? best->write_bytes : best->read_bytes;

	c->moved = bytes > 0;
	if (elapsed_s > 0)
		c->bytes_per_s = bytes / elapsed_s;
}

const char *il_culprit_sentence(const struct il_culprit *c, char *buf, size_t len)
{
	char rate[32];
	size_t n;

	if (!c->found) {
		snprintf(buf, len, "no traced process took part");
		return buf;
	}
	n = snprintf(buf, len, "%s (pid %u", c->comm, c->pid);
	if (n < len && c->cgroup[0] && strcmp(c->cgroup, "-") && strcmp(c->cgroup, "/"))
		n += snprintf(buf + n, len - n, ", cgroup %s", c->cgroup);
	if (n < len)
		n += snprintf(buf + n, len - n, ")");
	if (n < len && c->moved)
		n += snprintf(buf + n, len - n, " %s %s", c->block || c->direct ? "sends" :
			      c->writes ? "writes" : "reads",
			      il_fmt_rate(c->bytes_per_s, rate, sizeof(rate)));
	if (n < len && c->file[0] && c->moved && (c->block || c->file_way))
		n += snprintf(buf + n, len - n, " %s %s", c->block ? "for" : c->writes ? "to" : "from",
			      c->file);
	else if (n < len && c->file[0])
		n += snprintf(buf + n, len - n, " (most time on %s)", c->file);
	if (n < len && c->disk[0])
		snprintf(buf + n, len - n, " on %s", c->disk);
	return buf;
}
