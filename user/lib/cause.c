/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Who makes it slow: each part of the victim's call time followed to its cause (cause.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cause.h"
#include "cgroup.h"
#include "layers/split.h"
#include "layers/who.h"
#include "measure.h"
#include "disk.h"
#include "escape.h"
#include "fmt.h"
#include "util.h"

/* A victim's lost time counts as caused by others when it is at least this share of its
 * call time and of the window: below, the victim is the process with the most call time. */
#define EXTERNAL_SHARE 0.2
#define EXTERNAL_OF_WINDOW 0.02

static const char *const ck_names[IL_CK__MAX] = {
	[IL_CK_SELF] = "self", [IL_CK_DEVICE] = "device", [IL_CK_NEIGHBOUR] = "neighbour",
	[IL_CK_THROTTLE] = "throttle", [IL_CK_JOURNAL] = "journal", [IL_CK_LOCK] = "lock",
	[IL_CK_KTHREAD] = "kthread", [IL_CK_CPU] = "cpu", [IL_CK_DIRTY] = "dirty",
	[IL_CK_OTHER] = "other", [IL_CK_URING] = "io_uring",
};

const char *il_ck_name(enum il_ck k)
{
	return k < IL_CK__MAX ? ck_names[k] : "?";
}

/* The causes of one candidate victim while they are summed: more than IL_CAUSE_MAX, and room
 * for every command with CPU time over a window on a busy host (the run queue's time is
 * shared among them; at 48 a host's 60 commands lost the last ones' share, which could make
 * another part look the largest) */
#define ACC_MAX 256

/* A kernel thread a cause's time went through, and how much of it. */
struct via {
	char comm[16];
	__u64 ns;
};
#define VIAS 4

struct acc {
	struct il_blame b[ACC_MAX];
	struct via via[ACC_MAX][VIAS]; /* b[i]'s, the first VIAS seen */
	int n;
	enum il_cause_part part;    /* the part being followed (blame() adds to it) */
	bool queue;                 /* its own I/O waited longer in the queue than at the device */
};

struct ctx {
	const struct il_window *w;
	struct il_cause *c;
	struct acc *a;
	double call_ns;             /* the victim's time in the calls followed */
};

/* Whether pid is a kernel thread, as far as the window knows (attribution, /proc, else its
 * name: a kworker, the journal, a loop worker). */
static bool is_kthread(const struct il_window *w, __u32 pid, const char *comm)
{
	const struct il_proc_cpu *p = il_proc_cpu_find(w->cpu, w->ncpu, pid);

	if (p)
		return p->kthread;
	for (int i = 0; i < w->view.nprocs; i++)
		if (w->view.procs[i].pid == pid)
			return w->view.procs[i].kthread;
	return !strncmp(comm, "kworker", 7) || !strncmp(comm, "jbd2/", 5) || !strncmp(comm, "loop", 4) ||
	       !pid;
}

/* The group a process is shown in: its command (kernel threads: up to a ':', so the flusher's
 * workers are one), and the title process pid set itself, after ": " (il_who_pid_title():
 * PostgreSQL's checkpointer, walwriter and backends are told apart). */
static void group_key(const char *comm, bool kthread, __u32 pid, char out[IL_CAUSE_NAME])
{
	size_t n = strnlen(comm, IL_CAUSE_NAME - 1);
	char title[32];

	memcpy(out, comm, n);
	out[n] = 0;
	if (n > 15) /* a group's name already (a task's comm has at most 15 bytes) */
		return;
	if (kthread && strchr(out, ':'))
		*strchr(out, ':') = 0;
	if (!kthread && pid && il_who_pid_title(pid, out, title, sizeof(title))[0])
		snprintf(out + n, IL_CAUSE_NAME - n, ": %s", title);
}

/* The name of process pid where the window's view has none (its attribution entry evicted on
 * a host of many short-lived processes, or never made): its block I/O rows' comm, else the
 * /proc snapshots', else "(unknown)", as group_key() makes it. */
static void window_comm(const struct il_window *w, __u32 pid, char out[IL_CAUSE_NAME])
{
	char comm[IL_TASK_COMM_LEN + 1] = "";

	for (int i = 0; i < w->nbp && !comm[0]; i++)
		if (w->bp[i].row.k.tgid == pid)
			snprintf(comm, sizeof(comm), "%.*s", (int)sizeof(w->bp[i].row.v.comm),
				 w->bp[i].row.v.comm);
	for (int i = 0; i < w->ncpu && !comm[0]; i++)
		if (w->cpu[i].pid == pid)
			snprintf(comm, sizeof(comm), "%.*s", (int)sizeof(w->cpu[i].comm), w->cpu[i].comm);
	group_key(comm[0] ? comm : "(unknown)", false, pid, out);
}

/* The time of kernel thread comm in a cause's vias v. */
static __u64 via_ns_of(const struct via *v, const char *comm)
{
	for (int k = 0; k < VIAS && v[k].ns; k++)
		if (!strcmp(v[k].comm, comm))
			return v[k].ns;
	return 0;
}

/* Add ns to cause (kind, group of comm, dev, via) of a; pid the member it came through. */
static struct il_blame *blame(struct acc *a, enum il_ck kind, __u32 pid, const char *comm, bool kthread,
			      __u32 dev, const char *via, __u64 ns)
{
	char key[IL_CAUSE_NAME] = "";
	struct il_blame *b = NULL;

	if (!ns)
		return NULL;
	if (comm)
		group_key(comm, kthread, pid, key);
	for (int i = 0; i < a->n && !b; i++)
		if (a->b[i].kind == kind && a->b[i].dev == dev && !strcmp(a->b[i].comm, key))
			b = &a->b[i];
	if (!b) {
		if (a->n == ACC_MAX)
			return NULL;
		b = &a->b[a->n++];
		memset(b, 0, sizeof(*b));
		b->kind = kind;
		b->dev = dev;
		b->kthread = kthread;
		b->npids = 0;
		snprintf(b->comm, sizeof(b->comm), "%s", key);
		if (dev)
			il_disk_name(dev, b->disk, sizeof(b->disk));
	}
	b->ns += ns;
	b->part_ns[a->part] += ns;
	/* the kernel thread most of it went through, not the last one ("through [kworker/u8:8]"
	 * was said of a worker's 0.1 ms beside the journal's 900 ms) */
	if (via && via[0]) {
		struct via *v = a->via[b - a->b];
		int k = 0;

		b->via_ns += ns;
		while (k < VIAS && v[k].ns && strcmp(v[k].comm, via))
			k++;
		if (k < VIAS) {
			snprintf(v[k].comm, sizeof(v[k].comm), "%s", via);
			v[k].ns += ns;
			if (!b->via[0] || !strcmp(b->via, via) || v[k].ns > via_ns_of(v, b->via))
				snprintf(b->via, sizeof(b->via), "%s", via);
		}
	}
	if (pid && (!b->pid || b->npids == 0))
		b->pid = pid;
	for (int i = 0; pid && i < IL_BLAME_PIDS; i++) /* the members' pids, each once */
		if (b->pids[i] == pid || (!b->pids[i] && (b->pids[i] = pid)))
			break;
	if (!b->npids)
		b->npids = 1;
	return b;
}

/* The load a group of submitters put on a disk: the bytes of its requests (what an SRE reads
 * in iostat's kB/s; per-request device times are no measure of it, as each request's includes
 * its wait behind the others'). A kernel thread's bytes are the processes' whose pages it
 * wrote back. The victim (and the thread its wait went through) stay apart, by pid; everyone
 * else is grouped by command. */
struct sub {
	__u32 pid;                  /* the group's largest member */
	double top;                 /* that member's load */
	char comm[IL_CAUSE_NAME];   /* the group's key */
	bool kthread, self;
	int npids;                  /* distinct members, at most IL_ARRAY_SIZE(pids) */
	__u32 pids[128];            /* the members, to count each once: a process's rows come
				     * once for its own requests and again for each kernel thread
				     * or sync that wrote its pages back ("dd (145 pids)" for 5) */
	bool more_pids;             /* members past pids[]: npids is a floor ("dd (128+ pids)") */
	double load;                /* bytes */
	char cgroup[128];           /* its members' cgroup, "" unknown or not one */
	bool mixed;                 /* members in several cgroups */
};

#define SUBS 64

/* Add load of pid (command comm) to subs (n of them, room for SUBS). */
static int sub_add(struct sub *s, int n, __u32 pid, const char *comm, bool kthread, bool self,
		   double load, const char *cgroup)
{
	char key[IL_CAUSE_NAME];
	int i;

	if (load <= 0)
		return n;
	group_key(comm, kthread, pid, key);
	for (i = 0; i < n; i++)
		if (s[i].self == self && (self ? s[i].pid == pid : !strcmp(s[i].comm, key)))
			break;
	if (i == n) {
		if (n == SUBS)
			return n;
		s[n++] = (struct sub){ .pid = pid, .kthread = kthread, .self = self };
		snprintf(s[i].comm, sizeof(s[i].comm), "%s", key);
		snprintf(s[i].cgroup, sizeof(s[i].cgroup), "%s", cgroup ? cgroup : "");
	} else if (!self && pid) { /* (requests of no submitter seen: pid 0, not a member) */
		int k = 0;

		while (k < (int)IL_ARRAY_SIZE(s[i].pids) && s[i].pids[k] && s[i].pids[k] != pid)
			k++;
		if (k < (int)IL_ARRAY_SIZE(s[i].pids) && !s[i].pids[k]) { /* a new member */
			s[i].pids[k] = pid;
			s[i].npids++;
		} else if (k == (int)IL_ARRAY_SIZE(s[i].pids)) { /* one more, uncounted */
			s[i].more_pids = true;
		}
		s[i].mixed |= strcmp(s[i].cgroup, cgroup ? cgroup : "") != 0;
	}
	if (!s[i].npids) {
		s[i].npids = 1;
		s[i].pids[0] = pid;
	}
	s[i].load += load;
	/* its pid: the member with the most load; of equals (short-lived dd's, 4 MiB each) the
	 * latest started, likelier alive and in the tables than the first */
	if (load > s[i].top || (load == s[i].top && !self && pid > s[i].pid)) {
		s[i].top = load;
		s[i].pid = pid;
	}
	return n;
}

/* A service or container as one culprit: the submitters of one cgroup (not the root), each
 * group of one command in it alone, become one entry named after the cgroup when there are
 * several commands there and together they put more on the disk than any other group. */
/* Whether a group of submitters may join its cgroup's: not the victim's, all in one cgroup. */
static bool groupable(const struct sub *s)
{
	return !s->self && !s->mixed && s->cgroup[0];
}

static int merge_cgroups(struct sub *s, int n)
{
	for (int i = 0; i < n; i++) {
		double sum = 0, other = 0;
		int cmds = 0, pids = 0, m = 0;
		bool more = false;
		char cg[128];

		if (!groupable(&s[i]) || !strcmp(s[i].cgroup, "/"))
			continue;
		snprintf(cg, sizeof(cg), "%s", s[i].cgroup);
		for (int j = 0; j < n; j++) {
			if (groupable(&s[j]) && !strcmp(s[j].cgroup, cg)) {
				sum += s[j].load;
				pids += s[j].npids;
				more |= s[j].more_pids;
				cmds++;
			} else if (!s[j].self && s[j].load > other) {
				other = s[j].load;
			}
		}
		if (cmds < 2 || sum <= other)
			continue;
		/* s[i] stands for the cgroup; the others of it go */
		snprintf(s[i].comm, sizeof(s[i].comm), "%.15s", strrchr(cg, '/') ? strrchr(cg, '/') + 1 : cg);
		s[i].load = sum;
		s[i].npids = pids;
		s[i].more_pids = more;
		s[i].kthread = false;
		for (int j = 0; j < n; j++)
			if (j == i || !groupable(&s[j]) || strcmp(s[j].cgroup, cg))
				s[m++] = s[j];
		return m;
	}
	return n;
}

/* The cgroup process pid was seen in (the process table's, a path), NULL unknown: a
 * dirtier's, whose bytes a kernel thread submitted in no cgroup of its own. */
static const char *seen_cgroup(const struct il_window *w, __u32 pid)
{
	for (int i = 0; i < w->view.nprocs; i++)
		if (w->view.procs[i].pid == pid)
			return w->view.procs[i].cgroup[0] == '/' ? w->view.procs[i].cgroup : NULL;
	return NULL;
}

/* Did attribution see process pid submit bios to disk dev (who_pd)? */
static bool seen_submit(const struct il_window *w, __u32 pid, __u32 dev)
{
	for (int i = 0; i < w->view.nprocs; i++) {
		const struct il_who_sum *p = &w->view.procs[i];

		for (int d = 0; p->pid == pid && d < p->ndisks; d++)
			if (p->disks[d].dev == dev && p->disks[d].bio_bytes)
				return true;
	}
	return false;
}

/* Of submitter r's bytes, those it wrote back for others: its writes of pages of files it does
 * not use (who_pd.foreign_bytes), a kernel thread's as a process's. The rest are its own load,
 * a neighbour's like any process's: ext4lazyinit's zeroing of inode tables (sb_issue_zeroout(),
 * no file's pages) was given to whoever the flusher wrote for, the victim too. A kernel thread
 * attribution did not see submit there (no who_pd row): all its writes, as it cannot tell. */
static double for_others(const struct il_window *w, const struct il_blk_proc_row *r, bool kt)
{
	for (int j = 0; j < w->ndirtiers; j++)
		if (w->dirtiers[j].dev == r->k.dev && w->dirtiers[j].pid == r->k.tgid)
			return w->dirtiers[j].foreign_bytes;
	return kt && !seen_submit(w, r->k.tgid, r->k.dev) ? r->v.write_bytes : 0;
}

/* The submitters of disk dev over the window, the victim's pids (victim, self2) apart: the
 * pages a submitter wrote back for others (for_others(): a kernel thread's or a process's,
 * of files it does not use) go to the processes whose pages they were, by their bytes written
 * back by others there (what is left, its own: the journal's blocks, metadata). Returns how
 * many, every submitter's load into *total. */
static int disk_subs(const struct il_window *w, __u32 dev, __u32 victim, __u32 self2,
		     struct sub *s, double *total)
{
	double *left = calloc(w->ndirtiers + 1, sizeof(*left));
	__u64 wb = 0;
	int n = 0;

	*total = 0;
	for (int i = 0; i < w->ndirtiers; i++)
		if (w->dirtiers[i].dev == dev) {
			wb += w->dirtiers[i].wb_bytes;
			if (left)
				left[i] = w->dirtiers[i].wb_bytes;
		}
	for (int i = 0; i < w->nbp; i++) {
		const struct il_blk_proc_row *r = &w->bp[i].row;
		double foreign = 0, mapped = 0;
		bool kt;

		if (r->k.dev != dev || !r->v.bytes)
			continue;
		*total += r->v.bytes;
		/* requests whose submitter no event saw (no comm, pid 0): "(unknown)", not "[]" */
		kt = r->v.comm[0] && is_kthread(w, r->k.tgid, r->v.comm);
		foreign = for_others(w, r, kt);
		if (foreign > r->v.bytes)
			foreign = r->v.bytes;
		/* a dirtier is given at most its pages' bytes that others wrote, whichever kernel
		 * threads wrote them: the rest of a kernel thread's writes are its own (jbd2's
		 * journal; a trial's throttled fdatasync loop read "python3 (the victim) 100%" of a
		 * disk its journal wrote three quarters of) */
		for (int j = 0; foreign > 0 && wb && j < w->ndirtiers; j++) {
			const struct il_win_dirtier *d = &w->dirtiers[j];
			double part = foreign * d->wb_bytes / wb;

			if (d->dev != dev || !d->wb_bytes)
				continue;
			if (left) {
				part = part < left[j] ? part : left[j];
				left[j] -= part;
			}
			mapped += part;
			n = sub_add(s, n, d->pid, d->comm, false, d->pid == victim, part,
				    seen_cgroup(w, d->pid));
		}
		n = sub_add(s, n, r->k.tgid, r->v.comm[0] ? r->v.comm : "(unknown)", kt,
			    r->k.tgid == victim || (self2 && r->k.tgid == self2),
			    (double)r->v.bytes - mapped, w->bp[i].cgroup);
	}
	free(left);
	return merge_cgroups(s, n);
}

static int cmp_sub(const void *a, const void *b)
{
	const struct sub *x = a, *y = b;

	return x->load < y->load ? 1 : x->load > y->load ? -1 : (x->pid > y->pid) - (x->pid < y->pid);
}

/* For a journal thread (pid, comm jbd2/...): the process whose traced calls it woke the
 * most (their waits for its commits: the commits they forced), its name (group_key()) into out and
 * its pid returned; 0 when not known (not a journal, no such wake-up, or the calls of only
 * one process traced, -p, which would always name it). */
static __u32 journal_for(const struct il_window *w, __u32 pid, const char *comm, char out[IL_CAUSE_NAME])
{
	struct { __u32 tgid; __u64 n; } t[64]; /* wakes by woken process, in one pass */
	int nt = 0, best = -1;

	out[0] = 0;
	if (strncmp(comm, "jbd2/", 5) || w->m.pid)
		return 0;
	for (int i = 0; i < w->split.nwakers; i++) {
		const struct il_split_wk_row *r = &w->split.wakers[i];
		int k = 0;

		if (r->k.wk_kind != SPLIT_WK_TASK || r->k.wk_tgid != pid)
			continue;
		while (k < nt && t[k].tgid != r->k.tgid)
			k++;
		if (k == nt) {
			if (nt == (int)IL_ARRAY_SIZE(t))
				continue;
			t[nt].tgid = r->k.tgid;
			t[nt++].n = 0;
		}
		t[k].n += r->v.count; /* its wakes of that process, every op */
		if (best < 0 || t[k].n > t[best].n)
			best = k;
	}
	for (int i = 0; best >= 0 && i < w->view.nprocs; i++)
		if (w->view.procs[i].pid == t[best].tgid) {
			group_key(w->view.procs[i].comm, false, t[best].tgid, out);
			return t[best].tgid;
		}
	return 0;
}

/* The evidence of disk dev: its load by submitter group, once per disk. */
static void disk_evidence(const struct il_window *w, struct il_cause *c, __u32 dev,
			  const struct sub *s, int n, double total)
{
	struct il_cause_disk *d = NULL;

	for (int i = 0; i < c->ndisks; i++)
		if (c->disks[i].dev == dev)
			return;
	if (c->ndisks == IL_CAUSE_DISKS || total <= 0)
		return;
	d = &c->disks[c->ndisks++];
	memset(d, 0, sizeof(*d));
	d->dev = dev;
	d->busy_ns = total;
	il_disk_name(dev, d->disk, sizeof(d->disk));
	for (int i = 0; i < n && d->n < (int)IL_ARRAY_SIZE(d->top); i++) {
		if (s[i].load < total / 200) /* under 0.5 %: not worth a name */
			break;
		snprintf(d->top[d->n].comm, sizeof(d->top[0].comm), "%s", s[i].comm);
		d->top[d->n].pid = s[i].pid;
		d->top[d->n].kthread = s[i].kthread;
		d->top[d->n].self = s[i].self;
		d->top[d->n].npids = s[i].npids;
		d->top[d->n].more_pids = s[i].more_pids;
		if (s[i].kthread)
			journal_for(w, s[i].pid, s[i].comm, d->top[d->n].for_comm);
		d->top[d->n++].share = s[i].load / total;
	}
}

/* ns of the victim's wait on its I/O on disk dev, to its causes: the throttle that held its
 * bios before Q; of the rest, the other submitters' share of the disk's load, as far as the
 * disk was busy (each group its part), and the disk itself. self2: a second submitter counted
 * as the victim's own (the kernel thread whose work it waited for, named via). */
static void blame_disk(struct ctx *x, __u32 dev, __u64 ns, __u32 victim, __u32 self2, const char *via)
{
	const struct il_window *w = x->w;
	struct sub s[SUBS];
	double total, own = 0, others = 0, b = 0, q = 0, d = 0, busy = 0, rest;
	const struct il_snap_bp *held = NULL;
	struct il_blame *bl_dev;
	int n;

	if (!ns || !dev)
		return;
	n = disk_subs(w, dev, victim, self2, s, &total);
	qsort(s, n, sizeof(*s), cmp_sub);
	disk_evidence(w, x->c, dev, s, n, total);
	for (int i = 0; i < w->nbp; i++) {
		const struct blk_proc *v = &w->bp[i].row.v;

		if (w->bp[i].row.k.dev != dev)
			continue;
		busy += v->device_ns;
		if (w->bp[i].row.k.tgid != victim)
			continue;
		b += v->before_q_ns;
		q += v->queue_ns;
		d += v->device_ns;
		if (v->held && w->bp[i].cgroup[0])
			held = &w->bp[i];
	}
	for (int i = 0; i < n; i++) {
		if (s[i].self)
			own += s[i].load;
		else
			others += s[i].load;
	}
	x->a->queue |= q > d;
	/* the throttle: its own bios' time before Q, of their time in the block layer */
	if (held && b > 0) {
		__u64 t = ns * (b / (b + q + d));
		struct il_blame *bl = blame(x->a, IL_CK_THROTTLE, victim, "", false, dev, via, t);

		if (bl) {
			snprintf(bl->cgroup, sizeof(bl->cgroup), "%s", held->cgroup);
			snprintf(bl->rule, sizeof(bl->rule), "%s", held->rule);
		}
		ns -= t;
	}
	/* the others' share of the disk's load, as far as requests kept it busy while the
	 * victim was in its calls (its call time, not the window's, which an idle tail would
	 * stretch: two windows of the same calls judge alike) */
	rest = others + own > 0 ? ns * others / (others + own) : 0;
	if (x->call_ns > 0 && busy / x->call_ns < 1)
		rest *= busy / x->call_ns;
	for (int i = 0; i < n && others > 0; i++) {
		struct il_blame *bl;

		if (s[i].self)
			continue;
		bl = blame(x->a, IL_CK_NEIGHBOUR, s[i].pid, s[i].comm, s[i].kthread, dev, via,
			   rest * s[i].load / others);
		if (bl) {
			bl->disk_share = s[i].load / total;
			bl->npids = s[i].npids;
			bl->more_pids = s[i].more_pids;
			if (s[i].kthread)
				bl->for_pid = journal_for(w, s[i].pid, s[i].comm, bl->for_comm);
			if (!s[i].mixed)
				snprintf(bl->cgroup, sizeof(bl->cgroup), "%s", s[i].cgroup);
		}
	}
	bl_dev = blame(x->a, IL_CK_DEVICE, 0, "", false, dev, via, ns - (__u64)rest);
	if (bl_dev && total > 0)
		bl_dev->disk_share = others / total; /* the others' bytes, said beside it */
}

/* The share of process p's CPU time that ran on the CPUs of mask, as far as its affinity
 * tells: all of it when it may run only there, else the part of its CPUs that are mask's. */
static double on_cpus(const struct il_proc_cpu *p, __u64 mask)
{
	int mine = __builtin_popcountll(p->cpus ? p->cpus : ~0ULL);
	int both = __builtin_popcountll((p->cpus ? p->cpus : ~0ULL) & mask);

	return mine ? (double)both / mine : 0;
}

/* Run-queue time of the victim, or of the kernel thread waiter (its comm via) that the victim
 * waited for, to the CPU hogs on the waiter's CPUs, by the CPU time they had there over the
 * window (their CPU time, times the share of their CPUs that are the waiter's); the waiter
 * is no hog of its own wait, the victim's threads are its own (IL_CK_SELF) when the waiter
 * is a kernel thread, and no hog when the waiter is the victim (its CPU time holds the wait). */
static void blame_cpu_of(struct ctx *x, __u32 victim, __u32 waiter, const char *via, __u64 ns)
{
	const struct il_window *w = x->w;
	const struct il_proc_cpu *me = il_proc_cpu_find(w->cpu, w->ncpu, waiter);
	__u64 mask = me && me->cpus ? me->cpus : ~0ULL;
	double total = 0;

	if (!ns)
		return;
	/* a kernel thread the victim waited for may wait behind the victim's own threads */
	for (int i = 0; i < w->ncpu; i++)
		if (w->cpu[i].pid != waiter && (w->cpu[i].pid != victim || waiter != victim))
			total += w->cpu[i].cpu_ns * on_cpus(&w->cpu[i], mask);
	if (total <= 0) {
		x->c->no_cpu = true;
		blame(x->a, IL_CK_CPU, 0, "", false, 0, via, ns);
		return;
	}
	/* a group's processes counted once here, and not again by a later call for another
	 * waiter (npids is the most any call counted) */
	int members[ACC_MAX] = { 0 };

	for (int i = 0; i < w->ncpu; i++) {
		const struct il_proc_cpu *p = &w->cpu[i];
		double there = p->cpu_ns * on_cpus(p, mask);
		struct il_blame *bl;

		if (p->pid == waiter || there <= 0 || (p->pid == victim && waiter == victim))
			continue;
		if (p->pid == victim) { /* its own threads, behind which the kernel thread waited */
			blame(x->a, IL_CK_SELF, victim, NULL, false, 0, via, ns * there / total);
			continue;
		}
		bl = blame(x->a, IL_CK_CPU, p->pid, p->comm, p->kthread, 0, via, ns * there / total);
		if (bl && ++members[bl - x->a->b] > bl->npids)
			bl->npids = members[bl - x->a->b];
	}
}

/* A run-queue holder row of the victim's operation op: not the part of its waits past the
 * CPU's ring of runs (SPLIT_RQ_PAST_RING), which goes to the holders seen, by their parts. */
static bool runq_row(const struct il_split_wk_row *r, __u32 victim, __u32 op)
{
	return r->k.wk_kind == SPLIT_WK_CPU && r->k.tgid == victim && r->k.op == op &&
	       !(!r->k.wk_tgid && r->k.wk_tid == SPLIT_RQ_PAST_RING);
}

/* The victim's run-queue time ns in its operation op: to the tasks that ran on its CPU while
 * its waits ended (split_wakers' SPLIT_WK_CPU rows), by the wait each ended; its own threads
 * are its own (IL_CK_SELF), an idle CPU no one's (the wake-up's latency). What ran before the
 * ring's runs is spread over them (a trial's fsync loop beside CPU hogs and a loop of
 * short-lived processes read "cpu (idle) 13%" with no CPU idle). Without such rows (none seen
 * yet), to the CPU hogs of its CPUs by their CPU time there (blame_cpu_of). */
static void blame_runq(struct ctx *x, __u32 victim, __u32 op, __u64 ns)
{
	const struct il_window *w = x->w;
	int members[ACC_MAX] = { 0 };
	double total = 0;

	if (!ns)
		return;
	for (int i = 0; i < w->split.nwakers; i++) {
		const struct il_split_wk_row *r = &w->split.wakers[i];

		if (runq_row(r, victim, op))
			total += r->v.ns;
	}
	if (total <= 0) {
		blame_cpu_of(x, victim, victim, NULL, ns);
		return;
	}
	for (int i = 0; i < w->split.nwakers; i++) {
		const struct il_split_wk_row *r = &w->split.wakers[i];
		char comm[IL_TASK_COMM_LEN + 1] = "";
		__u64 part;
		struct il_blame *bl;

		if (!runq_row(r, victim, op))
			continue;
		part = (__u64)((double)ns * r->v.ns / total);
		if (r->k.wk_tgid == victim) {
			blame(x->a, IL_CK_SELF, victim, NULL, false, 0, NULL, part);
			continue;
		}
		memcpy(comm, r->v.comm, IL_TASK_COMM_LEN);
		bl = blame(x->a, IL_CK_CPU, r->k.wk_tgid, r->k.wk_tgid ? comm : "", r->v.kthread, 0,
			   NULL, part);
		if (bl && r->k.wk_tgid && ++members[bl - x->a->b] > bl->npids)
			bl->npids = members[bl - x->a->b];
	}
}

/* A kernel thread's run-queue time over the window, and how much of it the victim's waits
 * took so far (waker_runq). */
struct kt_runq {
	__u32 pid;
	__u64 used;
};
#define KT_RUNQ_MAX 8

/* Of ns, the time a kernel thread the victim waited for (pid) spent itself waiting for a
 * CPU: ns times its share of run-queue time in its runnable time over the window
 * (schedstat's run_delay / (run_delay + on-CPU)), and at most the run-queue time it had in the
 * window less what the victim's other waits for it took (kt[], *nkt: per victim). The ratio
 * alone reads a thread that mostly slept as mostly waiting for a CPU: a trial's journal, runnable
 * 46 ms (36 of them on a run queue) of a window where it slept on throttled I/O, had 1.27 s of
 * the victim's waits put on CPU hogs. 0 when /proc did not tell. */
static __u64 waker_runq(const struct il_window *w, __u32 pid, __u64 ns, struct kt_runq *kt, int *nkt)
{
	const struct il_proc_cpu *p = il_proc_cpu_find(w->cpu, w->ncpu, pid);
	struct kt_runq *k = NULL, spare = { pid, 0 };
	__u64 rq;

	if (!p || !p->runq_ns)
		return 0;
	for (int i = 0; i < *nkt && !k; i++)
		if (kt[i].pid == pid)
			k = &kt[i];
	if (!k)
		k = *nkt < KT_RUNQ_MAX ? &kt[(*nkt)++] : &spare;
	k->pid = pid;
	rq = (__u64)((double)ns * p->runq_ns / (p->runq_ns + p->cpu_ns));
	if (rq > p->runq_ns - k->used)
		rq = p->runq_ns > k->used ? p->runq_ns - k->used : 0;
	k->used += rq;
	return rq;
}

/* Dirty throttling: the processes whose pages kernel threads wrote back to the victim's disk
 * (itself, often), by their bytes. */
static void blame_dirty(struct ctx *x, __u32 victim, __u64 ns)
{
	const struct il_window *w = x->w;
	__u32 dev = 0;
	__u64 total = 0;

	for (int i = 0; i < w->view.nprocs && !dev; i++)
		if (w->view.procs[i].pid == victim)
			dev = w->view.procs[i].used_disk ? w->view.procs[i].used_disk :
			      w->view.procs[i].ndisks ? w->view.procs[i].disks[0].dev : 0;
	for (int i = 0; i < w->ndirtiers; i++)
		if (!dev || w->dirtiers[i].dev == dev)
			total += w->dirtiers[i].wb_bytes;
	if (!total) {
		blame(x->a, IL_CK_DIRTY, victim, NULL, false, dev, NULL, ns);
		return;
	}
	for (int i = 0; i < w->ndirtiers; i++) {
		const struct il_win_dirtier *p = &w->dirtiers[i];
		struct il_blame *bl;

		if (dev && p->dev != dev)
			continue;
		bl = blame(x->a, IL_CK_DIRTY, p->pid, p->comm, false, p->dev, NULL,
			   (double)ns * p->wb_bytes / total);
		if (bl && bl->pid != p->pid)
			bl->npids++;
	}
}

/* The victim's operation with the most time, and its parts. NULL when it has none. */
static const struct il_split_op_row *top_op(const struct il_window *w, __u32 pid)
{
	const struct il_split_op_row *best = NULL;
	__u64 bt = 0;

	for (int i = 0; i < w->split.nops; i++) {
		const struct il_split_op_row *r = &w->split.ops[i];
		__u64 t = 0;

		if (r->k.tgid != pid)
			continue;
		for (int p = 0; p < SPLIT_PARTS; p++)
			t += r->v.part_ns[p];
		if (!best || t > bt) {
			best = r;
			bt = t;
		}
	}
	return best;
}

/* Does process pid use disk dev: its bios, or its files' disk? */
static bool victim_uses(const struct il_window *w, __u32 pid, __u32 dev)
{
	for (int i = 0; dev && i < w->view.nprocs; i++) {
		const struct il_who_sum *p = &w->view.procs[i];

		if (p->pid != pid)
			continue;
		if (p->used_disk == dev)
			return true;
		for (int d = 0; d < p->ndisks; d++)
			if (p->disks[d].dev == dev)
				return true;
	}
	return false;
}

/* The disk the victim's block I/O is on, for a completion that woke it: the completion's,
 * when the victim uses that disk; else its own main disk (a completion on another disk just
 * before its own, in the same context, took the wake-up's credit), else the completion's. */
static __u32 own_disk(const struct il_window *w, __u32 pid, __u32 dev)
{
	if (victim_uses(w, pid, dev))
		return dev;
	for (int i = 0; i < w->view.nprocs; i++) {
		const struct il_who_sum *p = &w->view.procs[i];

		if (p->pid == pid && (p->used_disk || p->ndisks))
			return p->used_disk ? p->used_disk : p->disks[0].dev;
	}
	return dev;
}

/* Did a waker row before row i of the same victim and operation name the same process? */
static bool seen_waker(const struct il_window *w, int i, const struct il_split_wk_row *r)
{
	for (int j = 0; j < i; j++) {
		const struct il_split_wk_row *q = &w->split.wakers[j];

		if (q->k.tgid == r->k.tgid && q->k.op == r->k.op && q->k.wk_kind == r->k.wk_kind &&
		    q->k.wk_tgid == r->k.wk_tgid)
			return true;
	}
	return false;
}

/* ---- requests no thread waits in ---------------------------------------------------------
 * A process's io_uring requests are timed from submission to completion (the fs layer's
 * who_proc.op_ns has them; Linux AIO's are not timed per request), but no thread of its
 * waits in them for the split to
 * follow: they have no split rows. Each (process, operation) whose file-operation time goes
 * beyond its split rows' (by over ASYNC_SHARE of it) gets the difference in a copy of the
 * split: as I/O wait on its block I/O as far as the process's time in the block layer
 * (blk_procs: before Q, queue, device) goes beyond what its split calls waited for their own
 * block I/O, on each disk by its share of that time (a waker row of kind SPLIT_WK_BLOCK, which
 * follow() takes to the disk's throttle, neighbours and device as any call's); the rest as a
 * wait nothing here explains (no waker row: follow() says so). */
#define ASYNC_SHARE 0.01

static const struct il_split_op_row *split_row(const struct il_split *s, __u32 pid, __u32 op)
{
	for (int i = 0; i < s->nops; i++)
		if (s->ops[i].k.tgid == pid && s->ops[i].k.op == op)
			return &s->ops[i];
	return NULL;
}

static __u64 row_ns(const struct il_split_op_row *r)
{
	__u64 t = 0;

	for (int p = 0; r && p < SPLIT_PARTS; p++)
		t += r->v.part_ns[p];
	return t;
}

/* Process p's calls of op that the split has no row of: how many into *n (0: none), their
 * time returned. Only for a process whose split calls, every operation's, took a trifle of
 * the window (IL_CAUSE_IDLE): where its threads wait in calls of their own (a database's
 * redo log writes and fdatasyncs, with data pages flushed through io_uring in the
 * background), those are what it waits for, and requests in flight together would sum past
 * them without anyone waiting (a trial's MariaDB: 284 page writes' 2.53 s read as 54% of its
 * redo log writes' time). */
static __u64 async_ns(const struct il_window *w, const struct il_who_sum *p, int op, __u64 *n)
{
	const struct il_split_op_row *r;
	__u64 t, calls, all = 0;

	*n = 0;
	/* only where the window has io_uring requests of op (fs_uring_stats): calls the split
	 * missed otherwise (its map full) are not requests. Tested before the split's rows are
	 * searched: every process of every window comes here. */
	if (p->kthread || p->untraced || !w->m.uring[op] || !p->op_ns[op])
		return 0;
	r = split_row(&w->split, p->pid, op);
	t = row_ns(r);
	calls = r ? r->v.calls : 0;
	if (p->op_count[op] <= calls || p->op_ns[op] <= t || p->op_ns[op] - t < ASYNC_SHARE * p->op_ns[op])
		return 0;
	for (int i = 0; i < w->split.nops; i++)
		if (w->split.ops[i].k.tgid == p->pid)
			all += row_ns(&w->split.ops[i]);
	if (all >= IL_CAUSE_IDLE * w->m.elapsed_s * 1e9)
		return 0;
	*n = p->op_count[op] - calls;
	if (*n > w->m.uring[op])
		*n = w->m.uring[op];
	return p->op_ns[op] - t;
}

static int op_row_cmp(const void *a, const void *b)
{
	const struct il_split_op_row *x = a, *y = b;

	if (x->k.tgid != y->k.tgid)
		return x->k.tgid < y->k.tgid ? -1 : 1;
	return x->k.op < y->k.op ? -1 : x->k.op > y->k.op;
}

static int wk_row_cmp(const void *a, const void *b)
{
	const struct il_split_wk_row *x = a, *y = b;

	return x->v.ns == y->v.ns ? 0 : x->v.ns > y->v.ns ? -1 : 1;
}

/* Process p's requests into s (arrays of room for them: IL_WHO_DISKS waker rows and one op
 * row per operation). */
static void async_add(const struct il_window *w, const struct il_who_sum *p, struct il_split *s)
{
	__u64 disk_ns[IL_WHO_DISKS] = { 0 }, req_ns[FS_OP__MAX], req_n[FS_OP__MAX], all = 0,
	      blk = 0, waited = 0;
	__u32 devs[IL_WHO_DISKS];
	int nd = 0;

	for (int o = 0; o < FS_OP__MAX; o++)
		all += req_ns[o] = async_ns(w, p, o, &req_n[o]);
	if (!all)
		return;
	/* its time in the block layer, by disk, less its split calls' own block I/O waits */
	for (int i = 0; i < w->nbp; i++) {
		const struct il_blk_proc_row *r = &w->bp[i].row;
		__u64 t = r->v.before_q_ns + r->v.queue_ns + r->v.device_ns;
		int d;

		if (r->k.tgid != p->pid || !t)
			continue;
		for (d = 0; d < nd && devs[d] != r->k.dev; d++)
			;
		if (d == nd) {
			if (nd == IL_WHO_DISKS)
				continue;
			devs[nd++] = r->k.dev;
		}
		disk_ns[d] += t;
		blk += t;
	}
	for (int i = 0; i < w->split.nops; i++)
		if (w->split.ops[i].k.tgid == p->pid)
			waited += w->split.ops[i].v.part_ns[SPLIT_IOWAIT_BLOCK];
	blk = blk > waited ? blk - waited : 0;
	for (int o = 0; o < FS_OP__MAX; o++) {
		struct il_split_op_row *r = NULL;
		__u64 io;

		if (!req_ns[o])
			continue;
		for (int i = 0; i < s->nops && !r; i++)
			if (s->ops[i].k.tgid == p->pid && s->ops[i].k.op == (__u32)o)
				r = &s->ops[i];
		if (!r) {
			r = &s->ops[s->nops++];
			memset(r, 0, sizeof(*r));
			r->k.tgid = p->pid;
			r->k.op = o;
		}
		io = (__u64)((double)blk * req_ns[o] / all);
		if (io > req_ns[o])
			io = req_ns[o];
		r->v.calls += req_n[o];
		r->v.part_ns[SPLIT_IOWAIT_BLOCK] += io;
		r->v.part_ns[SPLIT_OTHER] += req_ns[o] - io;
		for (int d = 0; d < nd && blk; d++) {
			struct il_split_wk_row *k = &s->wakers[s->nwakers++];

			memset(k, 0, sizeof(*k));
			k->k.tgid = p->pid;
			k->k.op = o;
			k->k.wk_kind = SPLIT_WK_BLOCK;
			k->k.wk_disk = devs[d];
			k->v.ns = (__u64)((double)io * disk_ns[d] / (blk + waited));
			k->v.count = req_n[o];
		}
	}
}

/* w with the requests of its processes added to its split (see above) into *aug, whose
 * arrays are malloc'ed (async_free()); w itself when there are none or memory is short. */
static const struct il_window *async_window(const struct il_window *w, struct il_window **aug)
{
	struct il_split s = { 0 };
	int n = 0;

	*aug = NULL;
	for (int i = 0; i < w->view.nprocs; i++) {
		__u64 k;

		for (int o = 0; o < FS_OP__MAX; o++)
			if (async_ns(w, &w->view.procs[i], o, &k)) {
				n++;
				break;
			}
	}
	if (!n || !(*aug = malloc(sizeof(**aug))))
		return w;
	s.ops = malloc((w->split.nops + n * FS_OP__MAX) * sizeof(*s.ops));
	s.wakers = malloc((w->split.nwakers + n * FS_OP__MAX * IL_WHO_DISKS) * sizeof(*s.wakers));
	if (!s.ops || !s.wakers) {
		free(s.ops);
		free(s.wakers);
		free(*aug);
		*aug = NULL;
		return w;
	}
	memcpy(s.ops, w->split.ops, w->split.nops * sizeof(*s.ops));
	memcpy(s.wakers, w->split.wakers, w->split.nwakers * sizeof(*s.wakers));
	s.nops = w->split.nops;
	s.nwakers = w->split.nwakers;
	s.exited = w->split.exited;
	s.nexited = w->split.nexited;
	for (int i = 0; i < w->view.nprocs; i++)
		async_add(w, &w->view.procs[i], &s);
	qsort(s.ops, s.nops, sizeof(*s.ops), op_row_cmp);
	qsort(s.wakers, s.nwakers, sizeof(*s.wakers), wk_row_cmp);
	**aug = *w;
	(*aug)->split = s;
	return *aug;
}

static void async_free(struct il_window *aug)
{
	if (!aug)
		return;
	free(aug->split.ops);
	free(aug->split.wakers);
	free(aug);
}

/* Every part of victim pid's top operation to its causes into a (sorted, largest first).
 * uring_ns: of its other waits, its io_uring requests' time outside the block layer
 * (async_add()), which no waker row ends. */
static void follow(struct ctx *x, const struct il_split_op_row *op, __u64 uring_ns)
{
	const struct il_window *w = x->w;
	__u32 pid = op->k.tgid;
	__u64 woken = 0, off = op->v.part_ns[SPLIT_IOWAIT_BLOCK] + op->v.part_ns[SPLIT_IOWAIT_TASK] +
				op->v.part_ns[SPLIT_OTHER];
	bool dirty = strstr(w->m.iw_top_frame, "balance_dirty_pages");
	struct kt_runq kt[KT_RUNQ_MAX];
	int nkt = 0;

	x->a->part = IL_CP_CPU;
	blame(x->a, IL_CK_SELF, pid, NULL, false, 0, NULL, op->v.part_ns[SPLIT_ONCPU]);
	x->a->part = IL_CP_RUNQ;
	blame_runq(x, pid, op->k.op, op->v.part_ns[SPLIT_RUNQ]);
	for (int i = 0; i < w->split.nwakers; i++) {
		const struct il_split_wk_row *r = &w->split.wakers[i];
		char comm[IL_TASK_COMM_LEN + 1] = "";
		__u64 ns = r->v.ns, io, rq;
		__u32 dev;

		if (r->k.tgid != pid || r->k.op != op->k.op || r->k.wk_kind == SPLIT_WK_CPU ||
		    woken >= off)
			continue;
		if (ns > off - woken)
			ns = off - woken;
		woken += ns;
		memcpy(comm, r->v.comm, IL_TASK_COMM_LEN);
		io = r->v.io_ns < ns ? r->v.io_ns : ns;
		x->a->part = r->k.wk_kind == SPLIT_WK_BLOCK ? IL_CP_IO : IL_CP_WAIT;
		switch (r->k.wk_kind) {
		case SPLIT_WK_BLOCK:
			blame_disk(x, own_disk(w, pid, r->k.wk_disk), ns, pid, 0, NULL);
			break;
		case SPLIT_WK_TASK:
			if (!r->v.kthread) {
				struct il_blame *bl = blame(x->a, IL_CK_LOCK, r->k.wk_tgid, comm, false, 0,
							    NULL, ns);

				/* a process once, however many of its threads woke the victim */
				if (bl && bl->pid != r->k.wk_tgid && !seen_waker(w, i, r))
					bl->npids++;
				break;
			}
			/* a kernel thread: its own I/O wait meanwhile, on a disk the victim uses (else
			 * what it did is none of the victim's business); its own wait for a CPU,
			 * to whoever held its CPUs; then the rest its own */
			if (!victim_uses(w, pid, r->v.io_disk))
				io = 0;
			blame_disk(x, r->v.io_disk, io, pid, r->k.wk_tgid, comm);
			rq = waker_runq(w, r->k.wk_tgid, ns - io, kt, &nkt);
			blame_cpu_of(x, pid, r->k.wk_tgid, comm, rq);
			/* a workqueue worker that did not wait for I/O itself runs the work that
			 * ends an I/O (xfs's log and unwritten-extent completions, ext4's
			 * conversions, dio and dm-crypt completions): the victim waited for that
			 * I/O, on its own disk, beside whoever kept the disk busy */
			dev = !r->v.io_ns && !strncmp(comm, "kworker/", 8) ? own_disk(w, pid, 0) : 0;
			if (dev) {
				blame_disk(x, dev, ns - io - rq, pid, r->k.wk_tgid, comm);
				break;
			}
			blame(x->a, !strncmp(comm, "jbd2/", 5) ? IL_CK_JOURNAL : IL_CK_KTHREAD,
			      r->k.wk_tgid, comm, true, r->v.io_disk, NULL, ns - io - rq);
			break;
		default: /* a timer or an interrupt: dirty throttling when that is where it waits */
			if (dirty)
				blame_dirty(x, pid, ns);
			else
				blame(x->a, IL_CK_OTHER, 0, NULL, false, 0, NULL, ns);
		}
	}
	/* off-CPU time no waker row kept (the map's bound): said as unexplained, but for the
	 * io_uring requests' time outside the block layer */
	x->a->part = IL_CP_WAIT;
	if (uring_ns > off - woken) /* (woken <= off: the loop above keeps it so) */
		uring_ns = off - woken;
	blame(x->a, IL_CK_URING, pid, NULL, false, 0, NULL, uring_ns);
	woken += uring_ns;
	if (off > woken)
		blame(x->a, dirty ? IL_CK_DIRTY : IL_CK_OTHER, dirty ? pid : 0, NULL, false, 0, NULL,
		      off - woken);
}

static int cmp_blame(const void *a, const void *b)
{
	const struct il_blame *x = a, *y = b;

	return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : (int)x->kind - (int)y->kind;
}

/* Time the victim lost to others: neighbours, a throttle, lock holders, CPU hogs, another
 * process's dirty pages. */
static __u64 external_ns(const struct acc *a, __u32 victim)
{
	__u64 t = 0;

	for (int i = 0; i < a->n; i++) {
		const struct il_blame *b = &a->b[i];

		/* a CPU with no holder named: the wake-up's own latency, or no CPU times read */
		if (b->kind == IL_CK_NEIGHBOUR || b->kind == IL_CK_THROTTLE ||
		    (b->kind == IL_CK_CPU && b->comm[0]) ||
		    (b->kind == IL_CK_LOCK && b->pid != victim) ||
		    (b->kind == IL_CK_DIRTY && b->pid != victim))
			t += b->ns;
	}
	return t;
}

/* The layer blame b is in; queue: the victim's own I/O waited longer in the queue than at the
 * device; cpu: the victim's own time is a wait for a CPU (behind its threads), not on it. */
static enum il_where where_of(const struct il_blame *b, bool queue, bool cpu)
{
	switch (b->kind) {
	case IL_CK_NEIGHBOUR:
	case IL_CK_DEVICE:
		return queue ? IL_WHERE_QUEUE : IL_WHERE_DEVICE;
	case IL_CK_THROTTLE:
		return IL_WHERE_BLOCK;
	case IL_CK_JOURNAL:
	case IL_CK_KTHREAD:
		return IL_WHERE_FILESYSTEM;
	case IL_CK_CPU:
		return IL_WHERE_CPU;
	case IL_CK_SELF: /* its threads holding its CPU (or its kernel thread's), or on CPU */
		return cpu ? IL_WHERE_CPU : IL_WHERE_SYSCALL;
	case IL_CK_DIRTY:
		return IL_WHERE_WRITEBACK;
	default:
		return IL_WHERE_SYSCALL;
	}
}

/* A kernel thread the victim's waits went through (a blame's via: the journal whose commits
 * its syncs wait for) works for it where whose work it did is not known (-p: the others'
 * syncs are not traced): that thread, as a submitter on the disk or a cause, is said to
 * be "(for the victim)" rather than read as a neighbour beside "not behind others'
 * requests". */
static void works_for_victim(struct il_cause *c)
{
	const char *via = NULL;

	for (int i = 0; i < c->nblames && !via; i++)
		if (c->blames[i].via[0])
			via = c->blames[i].via;
	if (!via)
		return;
	for (int i = 0; i < c->nblames; i++) {
		struct il_blame *b = &c->blames[i];

		if (b->kthread && !b->for_comm[0] && !strcmp(b->comm, via)) {
			snprintf(b->for_comm, sizeof(b->for_comm), "%s", c->victim.comm);
			b->for_pid = c->victim.pid;
		}
	}
	for (int d = 0; d < c->ndisks; d++)
		for (int k = 0; k < c->disks[d].n; k++)
			if (c->disks[d].top[k].kthread && !c->disks[d].top[k].for_comm[0] &&
			    !strcmp(c->disks[d].top[k].comm, via))
				snprintf(c->disks[d].top[k].for_comm, sizeof(c->disks[d].top[k].for_comm),
					 "%s", c->victim.comm);
}

static const char *(*cgroup_of_pid)(__u32, char *, size_t) = il_cgroup_cpu_of_pid;

void il_cause_cgroup_lookup(const char *(*of_pid)(__u32 pid, char *buf, size_t len))
{
	cgroup_of_pid = of_pid;
}

/* A group of CPU hogs' cgroup (the one whose cpu share an SRE would cap): that of its members
 * when they are all in one, other than the root, while they run. */
static void cpu_cgroup(struct il_blame *b)
{
	char cg[sizeof(b->cgroup)], first[sizeof(b->cgroup)] = "";

	for (int i = 0; i < IL_BLAME_PIDS && b->pids[i]; i++) {
		cgroup_of_pid(b->pids[i], cg, sizeof(cg));
		if (!strcmp(cg, "-") || !strcmp(cg, "/") || (first[0] && strcmp(cg, first)))
			return;
		snprintf(first, sizeof(first), "%s", cg);
	}
	snprintf(b->cgroup, sizeof(b->cgroup), "%s", first);
}

/* Follow candidate op's waits into *a (the cause's disks into c). */
/* orig: the window before async_window() added its requests to w's split. */
static void analyse(const struct il_window *w, const struct il_window *orig, struct il_cause *c,
		    const struct il_split_op_row *op, struct acc *a)
{
	struct ctx x = { w, c, a, 0 };
	const struct il_split_op_row *o = split_row(&orig->split, op->k.tgid, op->k.op);
	__u64 other = o ? o->v.part_ns[SPLIT_OTHER] : 0;

	for (int p = 0; p < SPLIT_PARTS; p++)
		x.call_ns += op->v.part_ns[p];
	memset(a, 0, sizeof(*a));
	c->ndisks = 0;
	c->no_cpu = false;
	follow(&x, op, op->v.part_ns[SPLIT_OTHER] > other ? op->v.part_ns[SPLIT_OTHER] - other : 0);
	qsort(a->b, a->n, sizeof(a->b[0]), cmp_blame);
}

/* What the verdict weighs causes by: the kind of wait behind them, whoever's it is. A CPU is
 * one, whoever held it (the hogs, the victim's own threads: its run-queue and other waits);
 * the disk is one, the victim's own requests and its neighbours'; a kernel thread of the
 * filesystem (the journal, a worker) one; the victim on CPU in the kernel one. */
enum cause_group { CG_ONCPU, CG_CPU, CG_DISK, CG_THROTTLE, CG_FS, CG_LOCK, CG_DIRTY, CG_OTHER,
		   CG__MAX };

static const char *const cause_group_names[CG__MAX] = {
	[CG_ONCPU] = "on-cpu", [CG_CPU] = "cpu", [CG_DISK] = "disk", [CG_THROTTLE] = "throttle",
	[CG_FS] = "filesystem", [CG_LOCK] = "lock", [CG_DIRTY] = "dirty", [CG_OTHER] = "other",
};

/* Of blame b, the time in group g. */
static __u64 group_ns(const struct il_blame *b, enum cause_group g)
{
	switch (b->kind) {
	case IL_CK_SELF:
		return g == CG_ONCPU ? b->part_ns[IL_CP_CPU] :
		       g == CG_CPU ? b->ns - b->part_ns[IL_CP_CPU] : 0;
	case IL_CK_CPU:
		return g == CG_CPU ? b->ns : 0;
	case IL_CK_NEIGHBOUR:
	case IL_CK_DEVICE:
		return g == CG_DISK ? b->ns : 0;
	case IL_CK_THROTTLE:
		return g == CG_THROTTLE ? b->ns : 0;
	case IL_CK_JOURNAL:
	case IL_CK_KTHREAD:
		return g == CG_FS ? b->ns : 0;
	case IL_CK_LOCK:
		return g == CG_LOCK ? b->ns : 0;
	case IL_CK_DIRTY:
		return g == CG_DIRTY ? b->ns : 0;
	default:
		return g == CG_OTHER ? b->ns : 0;
	}
}

/* The culprit first: the kind of wait (enum cause_group) with the most of the victim's time,
 * and in it the cause with the most (two CPU hogs at 41% together beat the disk at 21%,
 * however their time splits between the run queue and the waits of the journal they
 * delayed; seventy commands that each held its CPU a little beat one lock holder that held
 * less than all of them). The others stay largest first. *part: the part of the victim's
 * time the culprit's came from the most; *cpu: the culprit is a CPU wait. Returns the
 * group's time. */
static __u64 pick_culprit(struct acc *a, enum il_cause_part *part, bool *cpu, __u64 g[CG__MAX])
{
	__u64 most = 0;
	enum cause_group best_g = CG_ONCPU;
	int best = -1;

	memset(g, 0, CG__MAX * sizeof(*g));
	for (int i = 0; i < a->n; i++)
		for (int k = 0; k < CG__MAX; k++)
			g[k] += group_ns(&a->b[i], k);
	for (int k = 1; k < CG__MAX; k++)
		if (g[k] > g[best_g])
			best_g = k;
	/* a CPU no one held (the wake-up's own latency, or no CPU times read) is the culprit
	 * only when no one is: the line gives the group's time, then the largest holder's */
	for (int named = 1; named >= 0 && best < 0; named--)
		for (int i = 0; i < a->n; i++)
			if (group_ns(&a->b[i], best_g) > most &&
			    (!named || a->b[i].kind != IL_CK_CPU || a->b[i].comm[0])) {
				most = group_ns(&a->b[i], best_g);
				best = i;
			}
	*part = IL_CP_CPU;
	*cpu = best_g == CG_CPU;
	if (best < 0)
		return 0;
	for (int p = 1; p < IL_CAUSE_PARTS; p++)
		if (a->b[best].part_ns[p] > a->b[best].part_ns[*part])
			*part = p;
	if (a->b[best].kind == IL_CK_SELF) /* on CPU, or waiting for one behind its threads */
		*part = best_g == CG_ONCPU ? IL_CP_CPU :
			a->b[best].part_ns[IL_CP_WAIT] > a->b[best].part_ns[IL_CP_RUNQ] ? IL_CP_WAIT :
			IL_CP_RUNQ;
	if (best > 0) {
		struct il_blame t = a->b[best];

		memmove(&a->b[1], &a->b[0], best * sizeof(t));
		a->b[0] = t;
	}
	return g[best_g];
}

void il_cause(const struct il_window *orig, struct il_cause *c)
{
	const struct il_split_op_row *best = NULL, *own;
	struct acc *a = calloc(1, sizeof(*a));
	__u64 best_ext = 0, best_call = 0, part_ns, g[CG__MAX];
	bool by_ext = false, cpu_wait = false;
	struct il_window *aug;
	const struct il_window *w;

	memset(c, 0, sizeof(*c));
	if (!a)
		return;
	w = async_window(orig, &aug);
	/* the victim: -p's process; else the one that lost the most time to others, when that
	 * is a real part of its time; else the one with the most time in calls */
	for (int i = 0; i < w->split.nops; i++) {
		const struct il_split_op_row *op = &w->split.ops[i];
		__u64 call = 0, ext;

		if (op != top_op(w, op->k.tgid) || (w->m.pid && op->k.tgid != w->m.pid) ||
		    is_kthread(w, op->k.tgid, ""))
			continue;
		for (int p = 0; p < SPLIT_PARTS; p++)
			call += op->v.part_ns[p];
		analyse(w, orig, c, op, a);
		ext = external_ns(a, op->k.tgid);
		if (ext >= EXTERNAL_SHARE * call && ext >= EXTERNAL_OF_WINDOW * w->m.elapsed_s * 1e9 &&
		    (!by_ext || ext > best_ext)) {
			by_ext = true;
			best = op;
			best_ext = ext;
		} else if (!by_ext && (!best || call > best_call)) {
			best = op;
			best_call = call;
		}
	}
	if (!best) {
		async_free(aug);
		free(a);
		return;
	}
	analyse(w, orig, c, best, a);
	part_ns = pick_culprit(a, &c->part, &cpu_wait, g);
	c->found = true;
	c->victim.pid = best->k.tgid;
	c->victim.op = best->k.op;
	c->victim.calls = best->v.calls;
	own = split_row(&orig->split, best->k.tgid, best->k.op); /* its calls before requests */
	c->victim.requests = best->v.calls - (own ? own->v.calls : 0);
	c->victim.datasync = best->v.datasync;
	memcpy(c->victim.part_ns, best->v.part_ns, sizeof(c->victim.part_ns));
	for (int p = 0; p < SPLIT_PARTS; p++)
		c->victim.call_ns += best->v.part_ns[p];
	c->part_share = c->victim.call_ns ? (double)part_ns / c->victim.call_ns : 0;
	for (int r = 0; r < 2 && c->victim.call_ns; r++) { /* the two largest kinds */
		int top = -1;

		for (int k = 0; k < CG__MAX; k++)
			if (g[k] && (top < 0 || g[k] > g[top]) &&
			    (r == 0 || strcmp(cause_group_names[k], c->kinds[0].name)))
				top = k;
		if (top < 0)
			break;
		c->kinds[c->nkinds].name = cause_group_names[top];
		c->kinds[c->nkinds++].share = (double)g[top] / c->victim.call_ns;
	}
	for (int i = 0; i < w->view.nprocs; i++)
		if (w->view.procs[i].pid == c->victim.pid) {
			group_key(w->view.procs[i].comm, w->view.procs[i].kthread, c->victim.pid, c->victim.comm);
			snprintf(c->victim.file, sizeof(c->victim.file), "%s", w->view.procs[i].top_file);
		}
	if (!c->victim.comm[0]) /* no name in the view: its entry evicted, or it exited */
		window_comm(w, c->victim.pid, c->victim.comm);
	for (int i = 0; i < a->n && c->nblames < IL_CAUSE_MAX; i++) {
		struct il_blame *b = &c->blames[c->nblames++];

		*b = a->b[i];
		b->share = c->victim.call_ns ? (double)b->ns / c->victim.call_ns : 0;
		if (b->via_ns * 2 < b->ns)
			b->via[0] = 0;
		if (b->kind == IL_CK_SELF || (b->kind == IL_CK_DIRTY && !b->comm[0]))
			snprintf(b->comm, sizeof(b->comm), "%s", c->victim.comm);
	}
	for (int i = 0; i < c->nblames; i++)
		if (c->blames[i].kind == IL_CK_CPU)
			cpu_cgroup(&c->blames[i]);
	works_for_victim(c);
	c->where = c->nblames ? where_of(&c->blames[0], a->queue, cpu_wait) : IL_WHERE_NONE;
	async_free(aug);
	free(a);
}

/* ---- saying it ----------------------------------------------------------------------------- */

static const char *const op_words[FS_OP__MAX] = { "read", "write", "open", "fsync", "sync_file_range" };

/* The victim's operation in a word: its syscall's name, fdatasync when all its syncs were,
 * "fsync/fdatasync" when some. */
static const char *op_word(const struct il_cause *c)
{
	if (c->victim.op == FS_OP_FSYNC && c->victim.datasync)
		return c->victim.datasync >= c->victim.calls ? "fdatasync" : "fsync/fdatasync";
	return op_words[c->victim.op % FS_OP__MAX];
}

/* "dd (41 pids)", "dd (pid 77)", "[jbd2/loop3-8]" into buf. peer: the victim's name, whose
 * peers of the same name (a database's backends) are "3 others of its command", not its name
 * twice as if it waited behind itself (a title such as "postgres: app db" said twice took the
 * line's room); NULL: none. list: a group's lowest pids, to find them by ("hog (3 pids: 71,
 * 72, 73)", "3 others of its command (pids: 71, 72, 73)", "..." past three). */
static const char *group_str(const struct il_blame *b, const char *peer, bool list, char *buf,
			     size_t len)
{
	char esc[4 * IL_CAUSE_NAME + 1];
	__u32 pids[IL_BLAME_PIDS];
	int n, np = 0;

	il_text_escape(b->comm, strnlen(b->comm, sizeof(b->comm)), esc, sizeof(esc));
	if (b->kthread)
		n = snprintf(buf, len, "[%s]", esc);
	else if (b->npids > 1) {
		for (; list && np < IL_BLAME_PIDS && b->pids[np]; np++) { /* lowest first */
			int k = np;

			for (; k > 0 && pids[k - 1] > b->pids[np]; k--)
				pids[k] = pids[k - 1];
			pids[k] = b->pids[np];
		}
		bool peers = peer && !strcmp(b->comm, peer);

		const char *more = b->more_pids ? "+" : ""; /* npids a floor: "dd (128+ pids)" */

		if (peers)
			n = snprintf(buf, len, "%d%s others of its command%s", b->npids, more,
				     np ? " (pids" : "");
		else
			n = snprintf(buf, len, "%s (%d%s pids", esc, b->npids, more);
		for (int i = 0; i < np && i < 3 && n >= 0 && (size_t)n < len; i++)
			n += snprintf(buf + n, len - n, "%s%u", i ? ", " : ": ", pids[i]);
		if (n >= 0 && (size_t)n < len && (np || !peers))
			n += snprintf(buf + n, len - n, "%s)", np && b->npids > 3 ? ", ..." : "");
	} else if (b->pid)
		n = snprintf(buf, len, "%s (pid %u)", esc, b->pid);
	else
		n = snprintf(buf, len, "%s", esc);
	return n < 0 ? "" : buf;
}

static const char *who_str(const struct il_blame *b, char *buf, size_t len)
{
	return group_str(b, NULL, false, buf, len);
}

/* A group of CPU hogs with the pids to find them by and their cgroup (" of cgroup /batch"),
 * into buf; peer as for group_str(). */
static void cpu_who(const struct il_blame *b, const char *peer, char *buf, size_t len)
{
	char cg[4 * 60 + 1];
	size_t n = strlen(group_str(b, peer, true, buf, len));

	if (b->cgroup[0] && n < len) {
		il_text_escape(b->cgroup, strnlen(b->cgroup, 60), cg, sizeof(cg));
		snprintf(buf + n, len - n, " of cgroup %s", cg);
	}
}

/* The culprit's part of the line: what the victim's time waits for. */
static size_t culprit_str(const struct il_cause *c, const struct il_blame *b, char *buf, size_t len)
{
	char who[4 * IL_CAUSE_NAME + 4 * IL_CAUSE_NAME + 64], via[40] = "", cg[4 * 60 + 1];
	int pct = (int)(b->share * 100 + 0.5);

	il_text_escape(b->cgroup, strnlen(b->cgroup, 60), cg, sizeof(cg));

	if (b->via[0]) {
		char v[4 * 16 + 1];

		il_text_escape(b->via, strnlen(b->via, sizeof(b->via)), v, sizeof(v));
		snprintf(via, sizeof(via), " through [%.28s]", v);
	}
	group_str(b, c->victim.comm, false, who, sizeof(who));
	if (b->for_comm[0]) { /* a journal's commits: whose syncs forced them */
		char f[4 * IL_CAUSE_NAME + 1];
		size_t o = strlen(who);

		il_text_escape(b->for_comm, strnlen(b->for_comm, sizeof(b->for_comm)), f, sizeof(f));
		snprintf(who + o, sizeof(who) - o, " committing for %s (pid %u)", f, b->for_pid);
	}
	switch (b->kind) {
	case IL_CK_NEIGHBOUR:
		if (b->cgroup[0] && strcmp(b->cgroup, "/"))
			return snprintf(buf, len, "%d%% of its time waits%s behind %s of cgroup %.60s on %s, "
					"%d%% of the disk's bytes", pct, via, who, cg, b->disk,
					(int)(b->disk_share * 100 + 0.5));
		return snprintf(buf, len, "%d%% of its time waits%s behind %s on %s, %d%% of the disk's bytes",
				pct, via, who, b->disk, (int)(b->disk_share * 100 + 0.5));
	case IL_CK_DEVICE:
		/* the others' share of the bytes is in the evidence (and disk_share) */
		return snprintf(buf, len, "%d%% of its time waits%s for %s itself, not behind others' "
				"requests", pct, via, b->disk);
	case IL_CK_THROTTLE:
		return snprintf(buf, len, "%d%% of its time is held before the queue on %s by the throttle "
				"of cgroup %.60s", pct, b->disk, cg);
	case IL_CK_JOURNAL:
		return snprintf(buf, len, "%d%% of its time waits for the journal commit of %s", pct, who);
	case IL_CK_KTHREAD:
		return snprintf(buf, len, "%d%% of its time waits for kernel thread %s", pct, who);
	case IL_CK_LOCK:
		return snprintf(buf, len, "%d%% of its time waits for %s, which woke it (the holder of "
				"what it waits for)", pct, who);
	case IL_CK_CPU: {
		/* the CPU's part shared by several: the part first, the largest hog's after it */
		int all = (int)(c->part_share * 100 + 0.5);

		cpu_who(b, c->victim.comm, who, sizeof(who));
		if (!b->comm[0]) /* no one held it: the group's time, all of it no one's */
			return snprintf(buf, len, "%d%% of its time waits%s for a CPU", all > pct ? all : pct,
					via);
		if (all >= pct + 5)
			return snprintf(buf, len, "%d%% of its time waits%s for a CPU, %d%% behind %s", all,
					via, pct, who);
		return snprintf(buf, len, "%d%% of its time waits%s for a CPU behind %s", pct, via, who);
	}
	case IL_CK_DIRTY:
		return snprintf(buf, len, "%d%% of its time is throttled in balance_dirty_pages: %s "
				"dirties pages faster than %s writes them", pct, who,
				b->disk[0] ? b->disk : "the disk");
	case IL_CK_SELF:
		if (c->where == IL_WHERE_CPU) { /* its threads hold its CPU */
			/* as a CPU hog's: the CPU's whole part first when others held it too (a
			 * trial read "13% ... behind its own threads" above "device 32%" in the
			 * causes, where the CPU's part was the larger) */
			int own = (int)(100.0 * (b->ns - b->part_ns[IL_CP_CPU]) /
					(c->victim.call_ns ? c->victim.call_ns : 1) + 0.5);
			int all = (int)(c->part_share * 100 + 0.5);
			const char *v = c->part == IL_CP_WAIT ? via : "";

			if (all >= own + 5)
				return snprintf(buf, len, "%d%% of its time waits%s for a CPU, %d%% behind "
						"its own threads", all, v, own);
			return snprintf(buf, len, "%d%% of its time waits%s for a CPU behind its own "
					"threads", own, v);
		}
		return snprintf(buf, len, "%d%% of its time runs on CPU in the kernel", pct);
	case IL_CK_URING:
		return snprintf(buf, len, "%d%% of its requests' time is in io_uring outside the block "
				"layer (io-wq, page cache, completions it reaps late)", pct);
	default:
		return snprintf(buf, len, "%d%% of its time waits with no task waking it (a timer or "
				"an interrupt)", pct);
	}
}

/* A path cut from the front to at most max bytes, at a slash so that every name left is
 * whole: ".../of/it" (the last name cut from its front only when it alone is too long:
 * "...t_name"). p is escaped text, so an escape is never cut either way. */
static const char *short_path(const char *p, size_t max, char *buf, size_t len)
{
	size_t n = strlen(p), k;
	const char *slash;

	if (max >= len)
		max = len - 1;
	if (n <= max) {
		memcpy(buf, p, n + 1);
		return buf;
	}
	k = max - 3;
	slash = strchr(p + n - k, '/');
	if (slash) {
		k = n - (slash - p);
	} else { /* at the first whole unit: an escape (a backslash's) or a UTF-8 character */
		size_t i = 0;

		while (i < n - k) {
			unsigned char c = p[i];

			i += c == '\\' ? (p[i + 1] == 'x' ? 4 : 2) : (c & 0xe0) == 0xc0 ? 2 :
			     (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 1;
		}
		k = i < n ? n - i : 0;
	}
	memcpy(buf, "...", 3);
	memcpy(buf + 3, p + n - k, k + 1);
	return buf;
}

/* The victim's file keeps at least this many bytes of its end in the line. */
#define FILE_MIN 40

/* s cut to at most max bytes, "..." put where it was cut: at the last clause boundary that
 * fits outside parentheses (what is in them goes whole): before a ", " or a blank, so that
 * "behind dd (55 pids: 1, 2, ...) on loop0, 100% of the disk's bytes" keeps its name, its
 * count and its disk before the share; else at max. */
static void cut_phrase(char *s, size_t max)
{
	size_t n = strlen(s), at = 0;
	int depth = 0;

	if (n <= max)
		return;
	if (max < 4) {
		s[max] = 0;
		return;
	}
	for (size_t i = 0; i < max - 3 && s[i]; i++) {
		if (s[i] == '(')
			depth++;
		else if (s[i] == ')' && depth > 0)
			depth--;
		else if (!depth && i > 0 && (s[i] == ' ' || (s[i] == ',' && s[i + 1] == ' ')))
			at = s[i] == ' ' && s[i - 1] == ',' ? i - 1 : i;
	}
	memcpy(s + (at ? at : max - 3), "...", 4);
}

/* The kind of wait (enum cause_group) with most of blame b's time. */
static enum cause_group primary_group(const struct il_blame *b)
{
	enum cause_group best = CG_ONCPU;

	for (int g = 1; g < CG__MAX; g++)
		if (group_ns(b, g) > group_ns(b, best))
			best = g;
	return best;
}

/* When the second kind of wait has nearly the first's time (RUNNER_SHARE of it) and a cause
 * of its own larger than the culprit (two CPU holders at 46% together, 13% the largest,
 * beside one neighbour at 45%: which comes first turns on a point or two from one run to
 * the next), that cause in a few words: "; disk 45%: behind fio (pid 16504) on loop0", into
 * buf ("" none). */
#define RUNNER_SHARE 0.8

static const char *runner_str(const struct il_cause *c, char *buf, size_t len)
{
	char who[4 * IL_CAUSE_NAME + 64], cg[4 * 60 + 1];
	const struct il_blame *b = NULL;
	int pct;

	buf[0] = 0;
	if (c->nkinds < 2 || !c->nblames || c->kinds[1].share < RUNNER_SHARE * c->kinds[0].share)
		return buf;
	for (int i = 1; i < c->nblames && !b; i++)
		if (!strcmp(cause_group_names[primary_group(&c->blames[i])], c->kinds[1].name) &&
		    c->blames[i].share > c->blames[0].share)
			b = &c->blames[i];
	if (!b)
		return buf;
	pct = (int)(c->kinds[1].share * 100 + 0.5);
	group_str(b, c->victim.comm, false, who, sizeof(who));
	switch (b->kind) {
	case IL_CK_NEIGHBOUR:
		snprintf(buf, len, "; %s %d%%: behind %s on %s", c->kinds[1].name, pct, who, b->disk);
		break;
	case IL_CK_DEVICE:
		snprintf(buf, len, "; %s %d%%: %s itself", c->kinds[1].name, pct, b->disk);
		break;
	case IL_CK_LOCK:
		snprintf(buf, len, "; %s %d%%: woken by %s", c->kinds[1].name, pct, who);
		break;
	case IL_CK_CPU:
		if (b->comm[0])
			snprintf(buf, len, "; %s %d%%: behind %s", c->kinds[1].name, pct, who);
		break;
	case IL_CK_THROTTLE:
		il_text_escape(b->cgroup, strnlen(b->cgroup, 60), cg, sizeof(cg));
		snprintf(buf, len, "; %s %d%%: the throttle of %s", c->kinds[1].name, pct, cg);
		break;
	case IL_CK_JOURNAL:
	case IL_CK_KTHREAD:
		snprintf(buf, len, "; %s %d%%: %s", c->kinds[1].name, pct, who);
		break;
	default:
		break;
	}
	return buf;
}

const char *il_cause_line(const struct il_cause *c, char *buf, size_t len)
{
	char comm[4 * IL_CAUSE_NAME + 1], file[80], rest[256], line[512], run[512];
	size_t rr;
	size_t room, max = len - 1 < 200 ? len - 1 : 200;
	int n;

	if (!c->found || !c->nblames) {
		snprintf(buf, len, "no traced call was split");
		return buf;
	}
	il_text_escape(c->victim.comm, strnlen(c->victim.comm, sizeof(c->victim.comm)), comm, sizeof(comm));
	culprit_str(c, &c->blames[0], rest, sizeof(rest));
	runner_str(c, run, sizeof(run)); /* a runner-up nearly as large: whole, or not at all */
	rr = strlen(run);
	n = snprintf(line, sizeof(line), "%s (pid %u) %s", comm, c->victim.pid, op_word(c));
	/* The file, cut to what the line has room for, but never below its last 40 bytes; then
	 * to its last name (".../name") before the culprit's sentence gives way, or the
	 * runner-up goes; the culprit's sentence is cut last, after its last ", " or " (" that
	 * fits (a long process title took the throttle's cgroup off the line in a trial). */
	if (c->victim.file[0]) {
		char esc[4 * 512 + 1];
		const char *slash;
		size_t want, base, r = strlen(rest);

		il_text_escape(c->victim.file, strlen(c->victim.file), esc, sizeof(esc));
		want = strlen(esc) < FILE_MIN ? strlen(esc) : FILE_MIN;
		slash = strrchr(esc, '/');
		base = slash && slash != esc ? 3 + strlen(slash) : strlen(esc);
		if (n + 4 + want + 2 + r + rr > max && base < want)
			want = base < 8 ? 8 : base;
		if (n + 4 + want + 2 + r + rr > max)
			run[0] = 0, rr = 0;
		if (n + 4 + want + 2 + r > max) {
			size_t fit = max > n + 4 + want + 2 ? max - (n + 4 + want + 2) : 0;

			cut_phrase(rest, fit);
			r = strlen(rest);
		}
		room = max - (n + 4 + 2 + r + rr); /* what " on " + file may take */
		if (room > sizeof(file) - 1)
			room = sizeof(file) - 1;
		if (room >= 8)
			n += snprintf(line + n, sizeof(line) - n, " on %s", short_path(esc, room, file, sizeof(file)));
	} else if (n + 2 + strlen(rest) + rr > max) {
		run[0] = 0;
	}
	snprintf(line + n, sizeof(line) - n, ": %s%s", rest, run);
	/* one line of at most max bytes */
	n = strlen(line);
	if ((size_t)n > max)
		n = max;
	memcpy(buf, line, n);
	buf[n] = 0;
	return buf;
}

/* " (for NAME)": whose commits a journal thread made (for_comm, IL_CAUSE_NAME bytes,
 * escaped; said, when not NULL, instead), into buf; "" for none. Returns buf. */
static const char *for_str(const char *for_comm, const char *said, char *buf, size_t len)
{
	char e[4 * IL_CAUSE_NAME + 1];

	buf[0] = 0;
	if (for_comm[0])
		snprintf(buf, len, " (for %s)", said ? said :
			 il_text_escape(for_comm, strnlen(for_comm, IL_CAUSE_NAME), e, sizeof(e)));
	return buf;
}

bool il_cause_disk_twin(const struct il_cause_disk *d, int k)
{
	for (int j = 0; j < d->n; j++)
		if (j != k && !strcmp(d->top[j].comm, d->top[k].comm))
			return true;
	return false;
}

int il_cause_evidence(const struct il_cause *c, char lines[5][200])
{
	const __u64 *p = c->victim.part_ns;
	double t = c->victim.call_ns ? c->victim.call_ns / 100.0 : 1;
	char tot[32], who[256], req[64] = "";
	int n = 0;

	if (!c->found)
		return 0;
	/* its io_uring requests: no thread in them to split (async_add()) */
	if (c->victim.requests && c->victim.requests >= c->victim.calls)
		snprintf(req, sizeof(req), " io_uring requests");
	else if (c->victim.requests)
		snprintf(req, sizeof(req), " calls (%llu of them io_uring requests)",
			 (unsigned long long)c->victim.requests);
	else
		snprintf(req, sizeof(req), " calls");
	snprintf(lines[n++], 200, "split: %llu %s%s on all its files, %s: on CPU %.0f%%, run queue %.0f%%, I/O wait "
		 "%.0f%% (its block I/O %.0f%%, woken by tasks %.0f%%), other waits %.0f%%",
		 (unsigned long long)c->victim.calls, op_word(c), req,
		 il_fmt_ns(c->victim.call_ns, tot, sizeof(tot)), p[SPLIT_ONCPU] / t, p[SPLIT_RUNQ] / t,
		 (p[SPLIT_IOWAIT_BLOCK] + p[SPLIT_IOWAIT_TASK]) / t, p[SPLIT_IOWAIT_BLOCK] / t,
		 p[SPLIT_IOWAIT_TASK] / t, p[SPLIT_OTHER] / t);
	for (int i = 0; i < c->ndisks && n < 3; i++) {
		const struct il_cause_disk *d = &c->disks[i];
		int o = snprintf(lines[n], 200, "%s bytes by submitter:", d->disk);

		for (int k = 0; k < d->n && o < 200; k++) {
			struct il_blame g = { .npids = d->top[k].npids, .more_pids = d->top[k].more_pids,
					      .kthread = d->top[k].kthread };

			snprintf(g.comm, sizeof(g.comm), "%s", d->top[k].comm);
			/* a group or a name (escaped), its pid only where another entry has that
			 * name ("python3 (the victim) 24%, python3 (pid 812) 2%"); the victim's own
			 * marked */
			if (!g.kthread && g.npids <= 1 && !d->top[k].self && il_cause_disk_twin(d, k))
				g.pid = d->top[k].pid;
			char f[4 * IL_CAUSE_NAME + 16];

			for_str(d->top[k].for_comm, NULL, f, sizeof(f));
			o += snprintf(lines[n] + o, 200 - o, "%s %s%s%s %.0f%%", k ? "," : "",
				      who_str(&g, who, sizeof(who)), f,
				      d->top[k].self && !g.kthread ? " (the victim)" : "", d->top[k].share * 100);
		}
		n++;
	}
	if (c->nblames > 1) {
		/* the kinds first when two weigh in: why the culprit's kind won, where a cause of
		 * another kind is larger than the culprit ("causes (cpu 49%, disk 36%): cpu
		 * iolayer (4 pids) 12%, neighbour fio (pid 3115) 36%, ...") */
		int o = c->nkinds > 1 && c->kinds[1].share >= 0.05 ?
				snprintf(lines[n], 200, "causes (%s %.0f%%, %s %.0f%%):", c->kinds[0].name,
					 c->kinds[0].share * 100, c->kinds[1].name, c->kinds[1].share * 100) :
				snprintf(lines[n], 200, "causes:");

		for (int i = 0; i < c->nblames && i < 4 && o < 200; i++) {
			const struct il_blame *b = &c->blames[i];

			const char *name = b->kind == IL_CK_SELF || b->kind == IL_CK_URING ? "" :
					   /* a CPU no task held as it waited: idle (the wake-up's
					    * own latency, a vCPU not running) */
					   b->kind == IL_CK_CPU && !b->comm[0] ? "(idle)" :
					   b->kind == IL_CK_THROTTLE ? il_text_escape(b->cgroup, strnlen(b->cgroup, 60), who, sizeof(who)) :
					   b->kind == IL_CK_DEVICE ? b->disk : who_str(b, who, sizeof(who));

			char f[4 * IL_CAUSE_NAME + 16];

			for_str(b->for_comm, b->for_pid == c->victim.pid ? "the victim" : NULL, f, sizeof(f));
			o += snprintf(lines[n] + o, 200 - o, "%s %s%s%.60s%s %.0f%%", i ? "," : "",
				      /* the split's "other waits" are another thing: waits
				       * not for I/O, whoever ended them */
				      b->kind == IL_CK_OTHER ? "no waker" : il_ck_name(b->kind),
				      name[0] ? " " : "", name, f, b->share * 100);
		}
		n++;
	}
	for (int i = 1; i < c->nblames && i < 4 && n < 5; i++) { /* CPU hogs to find, when not
								   * the culprit (its line names them) */
		const struct il_blame *b = &c->blames[i];

		if (b->kind != IL_CK_CPU || !b->comm[0] || b->share < 0.1)
			continue;
		cpu_who(b, NULL, who, sizeof(who));
		n += snprintf(lines[n], 200, "waited for a CPU behind %.150s, %.0f%% of its time", who, b->share * 100) > 0;
		break;
	}
	if (c->blames[0].kind == IL_CK_THROTTLE && c->blames[0].rule[0] && n < 5) {
		char cg[4 * 60 + 1];

		il_text_escape(c->blames[0].cgroup, strnlen(c->blames[0].cgroup, 60), cg, sizeof(cg));
		n += snprintf(lines[n], 200, "throttle of %s: %.120s", cg, c->blames[0].rule) > 0;
	}
	if (c->no_cpu && n < 5)
		snprintf(lines[n++], 200, "run-queue time, but no process's CPU time was read to name the "
			 "CPU hogs");
	if (c->quiet && n < 5)
		snprintf(lines[n++], 200, "every p99 is under 1 ms: nothing is slow in absolute terms; "
			 "the shares above say where the time goes");
	return n;
}

void il_cause_json(struct json_object *v, const struct il_cause *c)
{
	struct json_object *vi = json_object_new_object(), *cu, *pids, *bd = json_object_new_array();
	struct json_object *all = json_object_new_array(), *ev = json_object_new_array();
	char line[256], lines[5][200];
	int n;

	if (!c->found)
		return;
	json_object_object_add(vi, "pid", json_object_new_uint64(c->victim.pid));
	il_json_add_name(vi, "comm", c->victim.comm, sizeof(c->victim.comm));
	json_object_object_add(vi, "op", json_object_new_string(op_words[c->victim.op]));
	il_json_add_name(vi, "file", c->victim.file, sizeof(c->victim.file));
	json_object_object_add(vi, "calls", json_object_new_uint64(c->victim.calls));
	json_object_object_add(vi, "requests", json_object_new_uint64(c->victim.requests));
	if (c->victim.op == FS_OP_FSYNC)
		json_object_object_add(vi, "fdatasync_calls", json_object_new_uint64(c->victim.datasync));
	json_object_object_add(vi, "time_ns", json_object_new_uint64(c->victim.call_ns));
	json_object_object_add(v, "victim", vi);
	if (c->nkinds) { /* the kinds the culprit was chosen by, the largest first */
		struct json_object *ks = json_object_new_array();

		for (int i = 0; i < c->nkinds; i++) {
			struct json_object *k = json_object_new_object();

			json_object_object_add(k, "kind", json_object_new_string(c->kinds[i].name));
			json_object_object_add(k, "share", json_object_new_double(c->kinds[i].share));
			json_object_array_add(ks, k);
		}
		json_object_object_add(v, "kinds", ks);
	}
	json_object_object_add(v, "part", json_object_new_string(
		(const char *[]){ "on_cpu", "runq", "own_io", "waits" }[c->part]));
	for (int i = 0; i < c->nblames; i++) {
		const struct il_blame *b = &c->blames[i];

		cu = json_object_new_object();
		json_object_object_add(cu, "kind", json_object_new_string(il_ck_name(b->kind)));
		json_object_object_add(cu, "pid", b->pid ? json_object_new_uint64(b->pid) : NULL);
		if (b->comm[0]) /* else no process (a throttle, a device, an idle CPU): null */
			il_json_add_name(cu, "comm", b->comm, sizeof(b->comm));
		else
			json_object_object_add(cu, "comm", NULL);
		json_object_object_add(cu, "group", json_object_new_boolean(b->npids > 1));
		json_object_object_add(cu, "npids", json_object_new_int(b->npids));
		json_object_object_add(cu, "more_pids", json_object_new_boolean(b->more_pids));
		pids = json_object_new_array();
		for (int k = 0; k < IL_BLAME_PIDS && b->pids[k]; k++)
			json_object_array_add(pids, json_object_new_uint64(b->pids[k]));
		json_object_object_add(cu, "pids", pids);
		json_object_object_add(cu, "kthread", json_object_new_boolean(b->kthread));
		il_json_add_name(cu, "cgroup", b->cgroup, sizeof(b->cgroup));
		json_object_object_add(cu, "disk", b->disk[0] ? json_object_new_string(b->disk) : NULL);
		il_json_add_name(cu, "rule", b->rule, sizeof(b->rule));
		il_json_add_name(cu, "via", b->via, sizeof(b->via));
		il_json_add_name(cu, "commits_for", b->for_comm, sizeof(b->for_comm));
		json_object_object_add(cu, "commits_for_pid", b->for_pid ? json_object_new_uint64(b->for_pid) : NULL);
		json_object_object_add(cu, "ns", json_object_new_uint64(b->ns));
		json_object_object_add(cu, "share", json_object_new_double(b->share));
		json_object_object_add(cu, "disk_share", json_object_new_double(b->disk_share));
		json_object_array_add(all, cu);
	}
	json_object_object_add(v, "culprit", c->nblames ? json_object_get(json_object_array_get_idx(all, 0))
							 : NULL);
	json_object_object_add(v, "causes", all);
	for (int p = 0; p < SPLIT_PARTS; p++) {
		struct json_object *x = json_object_new_object();

		json_object_object_add(x, "part", json_object_new_string(il_split_part_keys[p]));
		json_object_object_add(x, "ns", json_object_new_uint64(c->victim.part_ns[p]));
		json_object_object_add(x, "share", json_object_new_double(
			c->victim.call_ns ? (double)c->victim.part_ns[p] / c->victim.call_ns : 0));
		json_object_array_add(bd, x);
	}
	json_object_object_add(v, "breakdown", bd);
	json_object_object_add(v, "summary", il_json_utf8(il_cause_line(c, line, sizeof(line)), sizeof(line)));
	n = il_cause_evidence(c, lines);
	for (int i = 0; i < n; i++)
		json_object_array_add(ev, il_json_utf8(lines[i], sizeof(lines[i])));
	json_object_object_add(v, "evidence", ev);
}

/* The process the verdict is about: the victim, as il_culprit_sentence() says it. */
static void victim_culprit(const struct il_window *w, const struct il_cause *c, struct il_culprit *k)
{
	const struct il_who_sum *p = NULL;

	memset(k, 0, sizeof(*k));
	for (int i = 0; i < w->view.nprocs && !p; i++)
		if (w->view.procs[i].pid == c->victim.pid)
			p = &w->view.procs[i];
	k->found = true;
	k->pid = c->victim.pid;
	/* its command alone: the title is the cause's */
	snprintf(k->comm, sizeof(k->comm), "%.15s", p ? p->comm : c->victim.comm);
	snprintf(k->file, sizeof(k->file), "%s", c->victim.file);
	snprintf(k->disk, sizeof(k->disk), "%s", p && p->top_file_disk[0] ? p->top_file_disk : w->m.disk);
	if (!p)
		return;
	snprintf(k->cgroup, sizeof(k->cgroup), "%s", p->cgroup);
	if (il_culprit_direct(p, w->m.disk)) { /* "sends N MB/s on DISK", the bytes it submitted */
		k->direct = true;
		k->file[0] = 0;
		snprintf(k->disk, sizeof(k->disk), "%s", w->m.disk);
		k->moved = p->disk_bytes > 0;
		if (w->m.elapsed_s > 0)
			k->bytes_per_s = p->disk_bytes / w->m.elapsed_s;
		return;
	}
	k->file_way = k->file[0] && (p->top_file_read_bytes || p->top_file_write_bytes);
	k->writes = k->file_way ? p->top_file_write_bytes >= p->top_file_read_bytes
				: p->write_bytes >= p->read_bytes;
	k->moved = k->writes ? p->write_bytes > 0 : p->read_bytes > 0;
	if (w->m.elapsed_s > 0)
		k->bytes_per_s = (k->writes ? p->write_bytes : p->read_bytes) / w->m.elapsed_s;
}

/* Did the victim's calls take a trifle of window w (under IL_CAUSE_IDLE of it)? */
static bool victim_idle(const struct il_window *w, const struct il_cause *c)
{
	return w->m.elapsed_s > 0 && c->victim.call_ns < IL_CAUSE_IDLE * w->m.elapsed_s * 1e9;
}

void il_window_judge(const struct il_window *w, struct il_judgement *j)
{
	char line[256];

	size_t budget;

	il_judge(&w->m, w->view.procs, w->view.nprocs, &j->v);
	j->layers = j->v.d;
	il_cause(w, &j->cause);
	j->cause.quiet = j->v.d.quiet;
	if (!j->cause.found || !j->cause.nblames || j->v.d.why == IL_WHY_WB_ERRORS)
		return;
	/* the calls split took a trifle of the window, but the layers saw a load that stands
	 * out, of another process (io_uring's or AIO's requests, which are not split): the
	 * layers' own decision, as when no call was split (fio through io_uring beside a dd
	 * that wrote now and then was "none -- no layer stands out: dd's write calls took
	 * 0.2%" with its disk 87% busy). The victim's own load stays "none" (a write blocked
	 * all the window, its few returned calls the layers' only numbers), and so does -p's:
	 * the verdict is about that process, never a kernel thread that wrote to its disk (a
	 * trial's -p of PostgreSQL's walwriter, one fsync in 5 s, read "device -- kworker/u8:0
	 * (pid 8491) sends 22.1 MB/s on loop2"). The same where the layers find no layer
	 * either: their sentence counts every process's I/O wait and the disk's load beside the
	 * calls (a short burst of direct writes to a block device, which makes no call the split
	 * sees, read "none -- no layer stands out: qemu-system-x86's open calls took 0.7%"). */
	if (victim_idle(w, &j->cause) && !w->m.pid &&
	    (j->layers.where == IL_WHERE_NONE || (j->v.c.found && j->v.c.pid != j->cause.victim.pid))) {
		j->cause.found = false;
		return;
	}
	j->v.d.where = j->cause.where;
	victim_culprit(w, &j->cause, &j->v.c);
	/* "verdict: LAYER -- " and the line: at most 200 bytes in all */
	budget = 200 - strlen("verdict:  -- ") - strlen(il_where_name(j->cause.where));
	il_cause_line(&j->cause, line, budget + 1);
	/* calls that took a trifle of the window: nothing is slow for it, whatever its cause */
	if (victim_idle(w, &j->cause)) {
		j->v.d.where = IL_WHERE_NONE;
		j->cause.idle = true;
		char comm[4 * IL_CAUSE_NAME + 1];

		budget = 200 - strlen("verdict:  -- ") - strlen(il_where_name(IL_WHERE_NONE));
		il_text_escape(j->cause.victim.comm, strnlen(j->cause.victim.comm, IL_CAUSE_NAME), comm, sizeof(comm));
		/* the cause of so little time is in the evidence, not the line (which it made too
		 * long to read, cut in the middle) */
		snprintf(j->v.why, budget + 1 < sizeof(j->v.why) ? budget + 1 : sizeof(j->v.why),
			 "no layer stands out: %s (pid %u)'s %s calls took %.1f%% of the %.1f s", comm,
			 j->cause.victim.pid, op_word(&j->cause),
			 100.0 * j->cause.victim.call_ns / (w->m.elapsed_s * 1e9), w->m.elapsed_s);
		return;
	}
	snprintf(j->v.why, sizeof(j->v.why), "%s", line);
}

int il_measure_judge(const struct il_measure_src *src, const struct il_snap *now,
		     const struct il_snap *base, struct il_window *w, struct il_judgement *j)
{
	struct il_measure_src again = *src;
	__u32 pref[4], victim;
	int err = il_measure_window(src, now, base, w);

	if (err)
		return err;
	il_window_judge(w, j);
	victim = j->cause.found ? j->cause.victim.pid : 0;
	/* the victim's disk, unless its calls took a trifle of the window: a process that
	 * writes a block device itself (dd to /dev/sdb, fio on a raw NVMe namespace) makes no
	 * file call the time split sees, and the busiest disk stays the window's, not the disk
	 * of whoever made the most calls (a trial's 20,000 direct writes to a raw loop device
	 * read "no layer stands out: qemu-system-x86's open calls took 0.4%" with the table
	 * on vda) */
	if (src->pid || src->prefer || !victim || victim == il_who_view_top_pid(&w->view) ||
	    victim_idle(w, &j->cause) ||
	    il_who_view_disks(&w->view, victim, pref, IL_ARRAY_SIZE(pref)) <= 0 || pref[0] == w->dev)
		return 0;
	again.prefer = victim;
	il_window_free(w);
	if ((err = il_measure_window(&again, now, base, w)))
		return err;
	il_window_judge(w, j);
	return 0;
}

struct json_object *il_judgement_json(const struct il_window *w, const struct il_judgement *j)
{
	struct json_object *o = il_window_json(w, &j->v), *v = NULL, *who;
	char detail[1024];

	if (json_object_object_get_ex(o, "verdict", &v) && !(j->cause.found && j->cause.nblames)) {
		/* no cause: the layers' own sentence is the reason, and the detail; the summary
		 * is the text's line, the process the layers name, else that sentence (a trial's
		 * `jq .verdict.summary` read null on a quiet window) */
		il_decision_text(&w->m, &j->layers, detail, sizeof(detail));
		json_object_object_add(v, "detail", json_object_new_string(detail));
		json_object_object_add(v, "summary", json_object_object_get_ex(v, "who", &who) ?
					json_object_get(who) : il_json_utf8(j->v.why, sizeof(j->v.why)));
	} else if (v) {
		il_cause_json(v, &j->cause);
		json_object_object_add(v, "summary", il_json_utf8(j->v.why, sizeof(j->v.why)));
	}
	return o;
}
