/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The layers' table of a window, as iolayer prints it (table.h). */
#include <stdio.h>
#include <string.h>
#include "cause.h"
#include "escape.h"
#include "fmt.h"
#include "layers/fs.h"
#include "measure.h"
#include "table.h"

static void print_row(FILE *f, const char *layer, const char *what, const struct il_lat *l, bool pct,
		      const char *extra)
{
	char p50[24] = "-", p99[24] = "-", mx[24] = "-", tot[24] = "-";

	if (l->count) {
		if (pct && l->p50_lt_ns) {
			il_fmt_ns(l->p50_lt_ns, p50 + 1, sizeof(p50) - 1);
			p50[0] = '<';
			il_fmt_ns(l->p99_lt_ns, p99 + 1, sizeof(p99) - 1);
			p99[0] = '<';
		}
		if (l->max_ns)
			il_fmt_ns(l->max_ns, mx, sizeof(mx));
		il_fmt_ns(l->total_ns, tot, sizeof(tot));
	}
	fprintf(f, "%-12s %-26s %9llu %11s %11s %11s %11s%s%s\n", layer, what,
	       (unsigned long long)l->count, p50, p99, mx, tot, extra ? "  " : "", extra ? extra : "");
}

/* The block rows, phase by phase (lib/block.h): before Q, Q2G, G2I, I2D, D2C; each one's share
 * of their sum. Without bios followed (no Q2C), only I2D and D2C, as they always were. */
static void blk_rows(FILE *f, const struct il_measure *m)
{
	static const char *layer[IL_BLK_ROWS] = { "block layer", "block queue", "block queue",
						    "block queue", "device" };
	static const char *phase[IL_BLK_ROWS] = { "submit -> queue", "queue -> getrq", "getrq -> insert",
						    "insert -> issue", "issue -> complete" };
	const struct il_lat *lats[IL_BLK_ROWS] = { &m->before_q, &m->q2g, &m->g2i, &m->queue, &m->device };
	char what[64], extra[160];
	double shares[IL_BLK_ROWS];
	int most = 0, n;

	il_measure_blk_shares(m, shares);
	for (int i = 1; i < IL_BLK_ROWS; i++)
		if (shares[i] > shares[most])
			most = i;
	for (int i = m->q2c.count ? 0 : 3; i < IL_BLK_ROWS; i++) {
		snprintf(what, sizeof(what), "%s %s", m->disk, phase[i]);
		n = m->q2c.count ? snprintf(extra, sizeof(extra), "%3.0f%% of block time%s", shares[i] * 100,
					    i == most && shares[i] > 0 ? " (most)" : "") : 0;
		if (i == IL_BLK_ROWS - 1)
			snprintf(extra + n, sizeof(extra) - n, "%s%llu reads, %llu writes, %llu flushes",
				 n ? "; " : "", (unsigned long long)m->reqs[IL_OP_READ],
				 (unsigned long long)m->reqs[IL_OP_WRITE], (unsigned long long)m->reqs[IL_OP_FLUSH]);
		print_row(f, layer[i], what, lats[i], true, n || i == IL_BLK_ROWS - 1 ? extra : NULL);
	}
}

/* -p: the process's own requests on the disk (their time, no percentiles: blk_procs keeps
 * sums), and whose bytes the rest of the disk's were. */
static void own_rows(FILE *f, const struct il_window *w, const struct il_cause *c)
{
	struct il_lat l = { 0 };
	struct blk_proc own;
	char what[64], extra[200];
	__u64 all;
	int n;

	il_window_own_io(w, w->m.pid, &own, &all);
	l.count = own.ios;
	l.total_ns = own.device_ns;
	snprintf(what, sizeof(what), "%s its own requests", w->m.disk);
	n = snprintf(extra, sizeof(extra), "%.0f%% of %s's bytes", all ? 100.0 * own.bytes / all : 0,
		     w->m.disk);
	for (int d = 0; d < c->ndisks && n < (int)sizeof(extra); d++) {
		if (c->disks[d].dev != w->dev)
			continue;
		for (int k = 0; k < c->disks[d].n && n < (int)sizeof(extra); k++) {
			char comm[48]; /* any byte, escaped; cut between escapes */

			il_text_escape(c->disks[d].top[k].comm, sizeof(c->disks[d].top[k].comm), comm,
				       sizeof(comm));
			char pids[24] = ""; /* a group as the verdict names it: "dd (73 pids)" */

			if (c->disks[d].top[k].npids > 1)
				snprintf(pids, sizeof(pids), " (%d%s pids)", c->disks[d].top[k].npids,
					 c->disks[d].top[k].more_pids ? "+" : "");
			else if (c->disks[d].top[k].pid && il_cause_disk_twin(&c->disks[d], k))
				snprintf(pids, sizeof(pids), " (pid %u)", c->disks[d].top[k].pid);
			n += snprintf(extra + n, sizeof(extra) - n, "%s %s%s %.0f%%",
				      k ? "," : "; the disk's bytes by", comm, pids,
				      c->disks[d].top[k].share * 100);
		}
	}
	print_row(f, "device", what, &l, false, extra);
}

/* The fsync row's name: "fdatasync" where every sync the time split saw was one, "fsync/
 * fdatasync" where some were (a trial's row said fsync beside a line that said fdatasync). */
static const char *sync_row(const struct il_window *w)
{
	__u64 calls = 0, datasync = 0;

	for (int i = 0; i < w->split.nops; i++)
		if (w->split.ops[i].k.op == FS_OP_FSYNC) {
			calls += w->split.ops[i].v.calls;
			datasync += w->split.ops[i].v.datasync;
		}
	return !datasync ? il_fs_op_rows[FS_OP_FSYNC] : datasync >= calls ? "fdatasync" : "fsync/fdatasync";
}

void il_window_table(FILE *f, const struct il_window *w, const struct il_cause *c)
{
	const struct il_measure *m = &w->m;
	char extra[96];

	fprintf(f, "%-12s %-26s %9s %11s %11s %11s %11s\n", "LAYER", "WHAT", "COUNT", "P50", "P99", "MAX",
	       "TOTAL");
	for (int i = 0; m->fs_seen && i < FS_OP__MAX; i++)
		print_row(f, "syscall/VFS", i == FS_OP_FSYNC ? sync_row(w) : il_fs_op_rows[i],
			  &m->ops[i], true, NULL);
	if (m->fs_seen && m->nested_sync.count) /* not fsync calls: their time is the writes' */
		print_row(f, "filesystem", "sync in O_(D)SYNC writes", &m->nested_sync, true,
			  "inside the write rows: not fsync calls, not in the totals");
	if (m->wb_seen) {
		snprintf(extra, sizeof(extra), "%llu errors", (unsigned long long)m->wb_errors);
		print_row(f, "writeback", "ext4_writepages", &m->wb, false, extra);
	}
	if (m->iw_seen)
		print_row(f, "I/O wait", "sleeps in io_schedule", &m->iowait, false, NULL);
	if (m->blk_seen && m->disk[0])
		blk_rows(f, m);
	if (m->blk_seen && m->disk[0] && m->pid)
		own_rows(f, w, c);
	fprintf(f, "(P50/P99: upper bound of the log2 bucket that holds them)\n");
}
