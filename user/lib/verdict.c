/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#include <stdio.h>
#include <string.h>
#include "util.h"
#include "verdict.h"

static const char *layer_names[] = {
	[IL_LAYER_NONE] = "none", [IL_LAYER_SYSCALL] = "syscall/VFS",
	[IL_LAYER_FILESYSTEM] = "filesystem", [IL_LAYER_WRITEBACK] = "writeback",
	[IL_LAYER_QUEUE] = "block queue", [IL_LAYER_DEVICE] = "device",
	[IL_LAYER_BLOCK] = "block layer",
};
static const char *op_names[] = { "read", "write", "open", "fsync", "sync_file_range" };
_Static_assert(IL_ARRAY_SIZE(op_names) == FS_OP__MAX, "one name per enum fs_op");

const char *il_layer_name(enum il_layer_id l)
{
	return l <= IL_LAYER_BLOCK ? layer_names[l] : "?";
}

const char *il_fmt_ns(__u64 ns, char *buf, size_t len)
{
	if (ns < 1000)
		snprintf(buf, len, "%llu ns", (unsigned long long)ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.1f us", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.2f ms", ns / 1e6);
	else
		snprintf(buf, len, "%.2f s", ns / 1e9);
	return buf;
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
static bool before_q_rules(const struct il_layers *m, double *share)
{
	__u64 before = m->before_q.total_ns, queue = m->q2g.total_ns + m->g2i.total_ns + m->queue.total_ns;
	__u64 dev = m->device.total_ns, after = m->q2c.count ? m->q2c.total_ns : queue + dev;

	*share = before + after ? (double)before / (before + after) : 0;
	return m->before_q.count && m->blk_held && before > queue && before > dev;
}

/* The reason of an IL_LAYER_BLOCK verdict from offset n of why: how long bios wait before the
 * queue on the disk, which cgroup, and the throttle rule that holds them. */
static size_t why_before_q(const struct il_layers *m, const char *lead, char *why, size_t len, size_t n)
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

enum il_layer_id il_verdict(const struct il_layers *m, char *why, size_t len)
{
	char a[32], b[32], c[32];
	int top = -1;
	size_t n;

	/* The operation the application spent the most time in. */
	for (int i = 0; m->fs_seen && i < FS_OP__MAX; i++)
		if (m->ops[i].count && (top < 0 || m->ops[i].total_ns > m->ops[top].total_ns))
			top = i;
	bool blk = m->blk_seen && (m->device.count || m->q2c.count);
	double share;

	if (top < 0 && !blk) {
		snprintf(why, len, "no file operations and no block requests were seen");
		return IL_LAYER_NONE;
	}
	if (m->wb_seen && m->wb_errors) {
		snprintf(why, len, "ext4_writepages failed %llu of %llu times (most often %d %s with %s): "
			 "writeback is failing and being retried, and whoever waits on it (fsync, dirty "
			 "throttling) waits for the retries, not for the device",
			 (unsigned long long)m->wb_errors, (unsigned long long)m->wb.count, m->wb_top_err,
			 il_errno_name(m->wb_top_err),
			 m->wb_top_err_sync_mode == 1 ? "WB_SYNC_ALL" : "WB_SYNC_NONE");
		return IL_LAYER_WRITEBACK;
	}

	enum il_layer_id l;
	/* the time before Q is the block layer's only with bios held there (before_q_rules()) */
	__u64 blk_ns = blk ? m->device.p99_lt_ns + m->queue.p99_lt_ns + m->q2g.p99_lt_ns +
				     (m->blk_held ? m->before_q.p99_lt_ns : 0) : 0;
	bool queue_worse = blk && m->queue.count && m->queue.p99_lt_ns > m->device.p99_lt_ns;
	bool before_q = blk && before_q_rules(m, &share);
	double busy = blk && m->elapsed_s > 0 ? m->device.total_ns / (m->elapsed_s * 1e9) : 0;

	double fs_share = 0, iw_share = 0;

	for (int i = 0; m->fs_seen && i < FS_OP__MAX; i++)
		fs_share += m->ops[i].total_ns;
	if (m->elapsed_s > 0) {
		fs_share /= m->elapsed_s * 1e9;
		iw_share = m->iw_seen ? m->iowait.total_ns / (m->elapsed_s * 1e9) : 0;
	}
	if (!before_q && m->elapsed_s > 0 && fs_share < IL_IDLE_SHARE && iw_share < IL_IDLE_SHARE &&
	    busy < IL_IDLE_SHARE) {
		n = snprintf(why, len, "no layer stands out: file operations took %.1f%% of the time, I/O "
			     "wait %.1f%%", fs_share * 100, iw_share * 100);
		if (n < len && blk)
			n += snprintf(why + n, len - n, ", and %s was busy %.1f%% of it", m->disk, busy * 100);
		if (n < len && top >= 0)
			snprintf(why + n, len - n, " (the most time: %s, %llu calls, p99 < %s)", op_names[top],
				 (unsigned long long)m->ops[top].count,
				 il_fmt_ns(m->ops[top].p99_lt_ns, a, sizeof(a)));
		return IL_LAYER_NONE;
	}
	if (top < 0 && before_q) {
		l = IL_LAYER_BLOCK;
		n = why_before_q(m, "no file operations were seen; ", why, len, 0);
	} else if (top < 0) {
		l = queue_worse ? IL_LAYER_QUEUE : IL_LAYER_DEVICE;
		n = snprintf(why, len, "no file operations were seen; block requests on %s take p99 < %s "
			     "at the device", m->disk, il_fmt_ns(m->device.p99_lt_ns, a, sizeof(a)));
		if (n < len && m->queue.count)
			n += snprintf(why + n, len - n, " and p99 < %s in the OS queue",
				      il_fmt_ns(m->queue.p99_lt_ns, b, sizeof(b)));
	} else if (!blk) {
		l = m->ops[top].count && (top == FS_OP_FSYNC || top == FS_OP_SYNC_RANGE) ?
			    IL_LAYER_FILESYSTEM : IL_LAYER_SYSCALL;
		n = snprintf(why, len, "%s takes p99 < %s and no block request was seen: the time is spent %s",
			     op_names[top], il_fmt_ns(m->ops[top].p99_lt_ns, a, sizeof(a)),
			     l == IL_LAYER_SYSCALL ? "in the syscall/VFS layer (page cache, locks, copies)"
						   : "in the filesystem");
	} else if (blk_ns * 2 >= m->ops[top].p99_lt_ns && before_q) {
		l = IL_LAYER_BLOCK;
		n = snprintf(why, len, "%s takes p99 < %s and ", op_names[top],
			     il_fmt_ns(m->ops[top].p99_lt_ns, a, sizeof(a)));
		n = why_before_q(m, "", why, len, n);
	} else if (blk_ns * 2 >= m->ops[top].p99_lt_ns) {
		l = queue_worse ? IL_LAYER_QUEUE : IL_LAYER_DEVICE;
		n = snprintf(why, len, "%s takes p99 < %s and block requests on %s take p99 < %s at the device",
			     op_names[top], il_fmt_ns(m->ops[top].p99_lt_ns, a, sizeof(a)), m->disk,
			     il_fmt_ns(m->device.p99_lt_ns, b, sizeof(b)));
		if (n < len && m->queue.count)
			n += snprintf(why + n, len - n, " plus p99 < %s queued in the OS",
				      il_fmt_ns(m->queue.p99_lt_ns, c, sizeof(c)));
		if (n < len)
			n += snprintf(why + n, len - n, ": the block layer accounts for it (%s busy %.0f%% of "
				      "the time, %.1f requests in flight on average)",
				      m->disk, busy > 1 ? 100.0 : busy * 100, busy);
	} else {
		bool throttled = top == FS_OP_WRITE && strstr(m->iw_top_frame, "balance_dirty_pages");

		if (throttled)
			l = IL_LAYER_WRITEBACK;
		else if (top == FS_OP_FSYNC || top == FS_OP_SYNC_RANGE || top == FS_OP_OPEN)
			l = IL_LAYER_FILESYSTEM;
		else
			l = IL_LAYER_SYSCALL;
		char queued[64] = "";

		if (m->queue.count)
			snprintf(queued, sizeof(queued), " and p99 < %s queued in the OS",
				 il_fmt_ns(m->queue.p99_lt_ns, c, sizeof(c)));
		n = snprintf(why, len, "%s takes p99 < %s while block requests on %s take p99 < %s at the "
			     "device%s: the time goes above the block layer, in the %s",
			     op_names[top], il_fmt_ns(m->ops[top].p99_lt_ns, a, sizeof(a)), m->disk,
			     il_fmt_ns(m->device.p99_lt_ns, b, sizeof(b)), queued,
			     l == IL_LAYER_WRITEBACK ? "writeback layer (writers throttled in balance_dirty_pages)"
			     : l == IL_LAYER_FILESYSTEM ? "filesystem (its sync path: journal or metadata writes, "
							  "waits on data already in flight)"
							: "syscall/VFS layer (locks, page cache)");
	}
	if (n < len && m->iw_seen && m->iw_top_frame[0])
		n += snprintf(why + n, len - n, "; most I/O-wait time is under %s", m->iw_top_frame);
	if (n < len && top >= 0 && m->ops[top].p99_lt_ns <= IL_SLOW_NS)
		snprintf(why + n, len - n, " (every p99 is under 1 ms: nothing is slow in absolute terms)");
	return l;
}

/* How much of layer l's time process p accounts for (ns), or its bytes on the disk for the
 * block layers. */
static __u64 weight(enum il_layer_id l, const struct il_who_sum *p)
{
	switch (l) {
	case IL_LAYER_NONE: /* no layer stands out: who did the most file I/O */
		return p->op_ns[FS_OP_READ] + p->op_ns[FS_OP_WRITE] + p->op_ns[FS_OP_OPEN] +
		       p->op_ns[FS_OP_FSYNC] + p->op_ns[FS_OP_SYNC_RANGE] + p->iowait_ns;
	case IL_LAYER_SYSCALL:
		return p->op_ns[FS_OP_READ] + p->op_ns[FS_OP_WRITE] + p->op_ns[FS_OP_OPEN];
	case IL_LAYER_FILESYSTEM:
		return p->op_ns[FS_OP_FSYNC] + p->op_ns[FS_OP_SYNC_RANGE] + p->op_ns[FS_OP_OPEN];
	case IL_LAYER_WRITEBACK:
		return p->op_ns[FS_OP_FSYNC] + p->op_ns[FS_OP_WRITE] + p->iowait_ns;
	case IL_LAYER_QUEUE:
	case IL_LAYER_DEVICE:
	case IL_LAYER_BLOCK:
		return p->disk_bytes + p->wb_bytes;
	default:
		return 0;
	}
}

void il_verdict_culprit(enum il_layer_id l, const struct il_who_sum *procs, int n,
			double elapsed_s, const char *disk, struct il_culprit *c)
{
	const struct il_who_sum *best = NULL;
	__u64 bw = 0;

	memset(c, 0, sizeof(*c));
	/* processes first; kernel threads (which work for them) only when no process took part */
	for (int kt = 0; kt < 2 && !best; kt++) {
		for (int i = 0; i < n; i++) {
			__u64 w = weight(l, &procs[i]);

			if (procs[i].kthread != kt)
				continue;
			if (w > bw || (w && w == bw && best && procs[i].pid < best->pid)) {
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
	c->block = l == IL_LAYER_QUEUE || l == IL_LAYER_DEVICE || l == IL_LAYER_BLOCK;
	c->writes = best->write_bytes >= best->read_bytes;
	if (elapsed_s > 0)
		c->mb_per_s = (c->block ? bw : c->writes ? best->write_bytes
								       : best->read_bytes) / elapsed_s / 1e6;
}

const char *il_culprit_sentence(const struct il_culprit *c, char *buf, size_t len)
{
	size_t n;

	if (!c->found) {
		snprintf(buf, len, "no traced process took part");
		return buf;
	}
	n = snprintf(buf, len, "%s (pid %u", c->comm, c->pid);
	if (n < len && c->cgroup[0] && strcmp(c->cgroup, "-") && strcmp(c->cgroup, "/"))
		n += snprintf(buf + n, len - n, ", cgroup %s", c->cgroup);
	if (n < len)
		n += snprintf(buf + n, len - n, ") %s %.1f MB/s", c->block ? "sends" :
			      c->writes ? "writes" : "reads", c->mb_per_s);
	if (n < len && c->file[0])
		n += snprintf(buf + n, len - n, " %s %s", c->block ? "for" : c->writes ? "to" : "from",
			      c->file);
	if (n < len && c->disk[0])
		snprintf(buf + n, len - n, " on %s", c->disk);
	return buf;
}
