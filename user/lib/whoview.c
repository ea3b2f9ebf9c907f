/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cgident.h"
#include "cgroup.h"
#include "disk.h"
#include "escape.h"
#include "fmt.h"
#include "layers/fs.h"
#include "log.h"
#include "whoview.h"

static __u64 proc_weight(const struct il_who_sum *p)
{
	__u64 t = p->iowait_ns;

	for (int i = 0; i < FS_OP__MAX; i++)
		t += p->op_ns[i];
	return t;
}

static int cmp_proc(const void *a, const void *b)
{
	const struct il_who_sum *x = a, *y = b;
	__u64 wx = proc_weight(x), wy = proc_weight(y);

	if (wx != wy)
		return wx < wy ? 1 : -1;
	if (x->bio_bytes != y->bio_bytes)
		return x->bio_bytes < y->bio_bytes ? 1 : -1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int cmp_file(const void *a, const void *b)
{
	const struct il_who_file_sum *x = a, *y = b;
	__u64 bx = x->read_bytes + x->write_bytes + x->bio_write_bytes + x->bio_read_bytes;
	__u64 by = y->read_bytes + y->write_bytes + y->bio_write_bytes + y->bio_read_bytes;

	if (x->op_ns != y->op_ns)
		return x->op_ns < y->op_ns ? 1 : -1;
	return bx < by ? 1 : bx > by ? -1 : 0;
}

/* A file's time in traced operations, ns: what ranks a process's files (its top file). */
static __u64 file_ns(const struct who_file *f)
{
	__u64 t = 0;

	for (int o = 0; o < FS_OP__MAX; o++)
		t += f->op_ns[o];
	return t;
}

/* The length of a path without the " (deleted)" il_who_file_path() ends a deleted file's
 * with (gone: it did). */
static size_t base_len(const char *path, bool gone)
{
	static const char del[] = " (deleted)";
	size_t n = strlen(path), d = sizeof(del) - 1;

	return gone && n > d && !strcmp(path + n - d, del) ? n - d : n;
}

/* The same path, deleted or not (a_gone, b_gone: as il_who_file_path() said). */
static bool same_path(const char *a, bool a_gone, const char *b, bool b_gone)
{
	size_t n = base_len(a, a_gone);

	return n == base_len(b, b_gone) && !strncmp(a, b, n);
}

/* A hash index over up to n items: chains of item numbers by bucket, walked in the order
 * items were added (so a view is the same as the linear scans it replaces, which made a
 * scrape quadratic in the processes and files kept: 1,024 x 4,096). */
struct index {
	int *head, *tail, *next;
	unsigned mask;
};

static int index_init(struct index *x, int n)
{
	unsigned size = 64;

	while (size < 2u * (unsigned)n)
		size *= 2;
	x->mask = size - 1;
	x->head = malloc(size * sizeof(int));
	x->tail = malloc(size * sizeof(int));
	x->next = malloc((n + 1) * sizeof(int));
	if (!x->head || !x->tail || !x->next)
		return -ENOMEM;
	memset(x->head, -1, size * sizeof(int));
	return 0;
}

static void index_add(struct index *x, unsigned long h, int item)
{
	unsigned b = h & x->mask;

	x->next[item] = -1;
	if (x->head[b] < 0)
		x->head[b] = item;
	else
		x->next[x->tail[b]] = item;
	x->tail[b] = item;
}

static void index_free(struct index *x)
{
	free(x->head);
	free(x->tail);
	free(x->next);
}

static unsigned long hash_bytes(const void *p, size_t n)
{
	const unsigned char *c = p;
	unsigned long h = 1469598103934665603UL; /* FNV-1a */

	while (n--)
		h = (h ^ *c++) * 1099511628211UL;
	return h;
}

/* The indexes of an il_who read: files by key, files by each of their pids (items f * 4 + a
 * for pids[a]), (process, disk) rows by tgid. */
struct who_index {
	struct index file, file_pid, pd;
};

static void who_index_free(struct who_index *ix)
{
	index_free(&ix->file);
	index_free(&ix->file_pid);
	index_free(&ix->pd);
}

static int who_index_make(struct who_index *ix, const struct il_who *w)
{
	memset(ix, 0, sizeof(*ix));
	if (index_init(&ix->file, w->nfiles) || index_init(&ix->file_pid, w->nfiles * WHO_FILE_PIDS) ||
	    index_init(&ix->pd, w->npd)) {
		who_index_free(ix);
		return -ENOMEM;
	}
	for (int i = 0; i < w->nfiles; i++) {
		index_add(&ix->file, hash_bytes(&w->files[i].k, sizeof(w->files[i].k)), i);
		for (int a = 0; a < WHO_FILE_PIDS; a++)
			if (w->files[i].v.pids[a])
				index_add(&ix->file_pid, w->files[i].v.pids[a], i * WHO_FILE_PIDS + a);
	}
	for (int j = 0; j < w->npd; j++)
		index_add(&ix->pd, w->pd[j].k.tgid, j);
	return 0;
}

static bool pids_have(const __u32 pids[WHO_FILE_PIDS], __u32 pid)
{
	for (int i = 0; i < WHO_FILE_PIDS; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

/* The entry of whole disk dev among p's disks, added when new and there is room (NULL when
 * not: more disks than IL_WHO_DISKS are not weighed). */
static struct il_who_disk *proc_disk(struct il_who_sum *p, __u32 dev)
{
	for (int i = 0; i < p->ndisks; i++)
		if (p->disks[i].dev == dev)
			return &p->disks[i];
	if (p->ndisks == IL_WHO_DISKS || !dev)
		return NULL;
	p->disks[p->ndisks] = (struct il_who_disk){ .dev = dev };
	return &p->disks[p->ndisks++];
}

/* A process's bytes per disk: those it submitted (who_pd), then those of the files it used
 * (who_file.pids), the order il_who_view_disks() keeps for equal weights; and the disk of the
 * file with the most operation time among those (used_disk). */
static void proc_disks(struct il_who_sum *s, const struct il_who *w, const __u32 *file_disks,
		       const struct who_index *ix)
{
	__u64 top_ns = 0;
	bool top = false;

	for (int j = ix->pd.head[s->pid & ix->pd.mask]; j >= 0; j = ix->pd.next[j]) {
		struct il_who_disk *d;

		if (w->pd[j].k.tgid != s->pid || !(d = proc_disk(s, w->pd[j].k.dev)))
			continue;
		d->dirtied_bytes += w->pd[j].v.dirtied_bytes;
		if (!w->pd[j].v.bytes)
			continue;
		d->ranked = true;
		d->bio_bytes += w->pd[j].v.bytes;
		d->foreign_bytes += w->pd[j].v.foreign_bytes;
	}
	for (int it = ix->file_pid.head[s->pid & ix->file_pid.mask]; it >= 0; it = ix->file_pid.next[it]) {
		int j = it / WHO_FILE_PIDS;
		const struct who_file *f = &w->files[j].v;
		struct il_who_disk *d;

		if (f->pids[it % WHO_FILE_PIDS] != s->pid || !(d = proc_disk(s, file_disks[j])))
			continue;
		d->wb_bytes += f->foreign_write_bytes;
		if (f->rdev) /* a block device's own pages: no file of the process's */
			continue;
		d->ranked = true;
		d->file_bytes += f->read_bytes + f->write_bytes;
		if (file_ns(f) >= top_ns || !top) {
			top_ns = file_ns(f);
			top = true;
			s->used_disk = file_disks[j];
		}
	}
	if (!top_ns)
		s->used_disk = 0;
	/* a process that sends most of its bytes past the filesystems traced (to a block device
	 * it opened itself: fio on /dev/nvme0n1, a database on a raw partition), its top file's
	 * disk holding under an eighth of its busiest disk's bytes: no file's disk goes first */
	s->direct_disk[0] = 0;
	if (s->used_disk) {
		__u64 used = 0, most = 0;
		__u32 busiest = 0;

		for (int d = 0; d < s->ndisks; d++) {
			__u64 b = s->disks[d].bio_bytes + s->disks[d].file_bytes;

			if (s->disks[d].dev == s->used_disk)
				used = b;
			if (b > most) {
				most = b;
				busiest = s->disks[d].dev;
			}
		}
		if (used * 8 < most) {
			s->used_disk = 0;
			il_disk_name(busiest, s->direct_disk, sizeof(s->direct_disk));
		}
	}
	/* its pages others wrote back: by its files' users, or by who dirtied them, the more */
	for (int d = 0; d < s->ndisks; d++)
		if (s->disks[d].dirtied_bytes > s->disks[d].wb_bytes)
			s->disks[d].wb_bytes = s->disks[d].dirtied_bytes;
}

/* The dirtiers of pages written back that attribution has no process entry for (their file
 * operations were not traced: -p) into v, as processes with those bytes only. */
static void untraced_dirtiers(const struct il_who *w, struct il_who_view *v)
{
	for (int j = 0; j < w->npd; j++) {
		const struct who_pd *pd = &w->pd[j].v;
		struct il_who_sum *s = NULL;
		struct il_who_disk *d;

		if (!pd->dirtied_bytes)
			continue;
		for (int i = 0; i < v->nprocs && !s; i++)
			if (v->procs[i].pid == w->pd[j].k.tgid)
				s = &v->procs[i];
		if (s && !s->untraced) /* a traced process: proc_disks() counted them */
			continue;
		if (!s) {
			s = &v->procs[v->nprocs++];
			memset(s, 0, sizeof(*s));
			s->pid = w->pd[j].k.tgid;
			s->untraced = true;
			memcpy(s->comm, pd->comm, sizeof(pd->comm));
			s->comm[sizeof(s->comm) - 1] = 0;
			il_who_pid_cgroup(s->pid, s->cgroup, sizeof(s->cgroup));
		}
		if ((d = proc_disk(s, w->pd[j].k.dev))) {
			d->dirtied_bytes += pd->dirtied_bytes;
			d->wb_bytes = d->dirtied_bytes;
		}
	}
}

/* Process i of w summed into s, named (comm, cgroup, top file). */
static void proc_sum(struct il_who_sum *s, const struct il_who *w, int i, const __u32 *file_disks,
		     const struct who_index *ix)
{
	const struct who_proc *p = &w->procs[i].v;
	const struct who_file_key *top = NULL;

	s->pid = w->procs[i].tgid;
	memcpy(s->comm, p->comm, sizeof(p->comm));
	s->comm[sizeof(s->comm) - 1] = 0;
	s->kthread = p->flags & WHO_PROC_KTHREAD;
	il_who_proc_cgroup(s->pid, p, s->cgroup, sizeof(s->cgroup));
	memcpy(s->op_ns, p->op_ns, sizeof(s->op_ns));
	memcpy(s->op_count, p->op_count, sizeof(s->op_count));
	s->iowait_ns = p->iowait_ns;
	s->read_bytes = p->read_bytes;
	s->write_bytes = p->write_bytes;
	s->bio_bytes = p->bio_bytes;
	s->bio_write_bytes = p->bio_write_bytes;
	proc_disks(s, w, file_disks, ix);
	/* its top file: the one of its own file time counts (who_proc.files) with the most, the
	 * files that were one path summed (a file deleted and made again, as SQLite's -journal
	 * is at each transaction, is one file) */
	char paths[WHO_PROC_FILES][512];
	bool gone[WHO_PROC_FILES] = { false };
	const struct who_file *fs[WHO_PROC_FILES];
	__u64 sum[WHO_PROC_FILES] = { 0 };
	int top_j = -1;

	for (int j = 0; j < WHO_PROC_FILES; j++) {
		static const struct who_file none;

		fs[j] = &none;
		paths[j][0] = 0;
		if (!p->files[j].k.ino)
			continue;
		for (int i = ix->file.head[hash_bytes(&p->files[j].k, sizeof(p->files[j].k)) & ix->file.mask];
		     i >= 0; i = ix->file.next[i])
			if (!memcmp(&w->files[i].k, &p->files[j].k, sizeof(p->files[j].k)))
				fs[j] = &w->files[i].v;
		il_who_file_path(&p->files[j].k, fs[j], paths[j], sizeof(paths[j]), &gone[j]);
	}
	for (int j = 0; j < WHO_PROC_FILES; j++)
		for (int i = 0; paths[j][0] && i < WHO_PROC_FILES; i++)
			if (paths[i][0] && same_path(paths[i], gone[i], paths[j], gone[j]))
				sum[j] += p->files[i].ns;
	for (int j = 0; j < WHO_PROC_FILES; j++)
		if (paths[j][0] && (top_j < 0 || sum[j] >= sum[top_j]))
			top_j = j;
	if (top_j >= 0) {
		int same = 0;

		top = &p->files[top_j].k;
		for (int i = 0; i < WHO_PROC_FILES; i++) {
			if (!paths[i][0] || !same_path(paths[i], gone[i], paths[top_j], gone[top_j]))
				continue;
			same++;
			s->top_file_read_bytes += fs[i]->read_bytes;
			s->top_file_write_bytes += fs[i]->write_bytes;
		}
		il_disk_fs_name(top->dev, s->top_file_disk, sizeof(s->top_file_disk));
		snprintf(s->top_file, sizeof(s->top_file), "%.*s",
			 (int)base_len(paths[top_j], same > 1 && gone[top_j]), paths[top_j]);
		s->top_file_gone = same == 1 && gone[top_j];
	}
}

/* s->was: f's first name when s->path (il_who_file_path(): its name now) ends in another. */
static void renamed_from(struct il_who_file_sum *s, const struct who_file *f)
{
	const char *last = strrchr(s->path, '/');
	size_t n = strnlen(f->names[0], WHO_NAME_LEN);

	s->was[0] = 0;
	if (!f->depth || f->rdev || f->cut || !last || s->gone)
		return;
	if (strlen(last + 1) != n || memcmp(last + 1, f->names[0], n))
		snprintf(s->was, sizeof(s->was), "%.*s", (int)n, f->names[0]);
}

/* Files of one path (a file deleted and made again under it) summed into one entry, its
 * path without " (deleted)" (il_who_file_sum.inodes: how many). */
static int merge_paths(struct il_who_view *v)
{
	struct index x;
	int n = 0;

	if (index_init(&x, v->nfiles)) {
		index_free(&x);
		return -ENOMEM;
	}
	for (int i = 0; i < v->nfiles; i++) {
		struct il_who_file_sum *f = &v->files[i], *t = NULL;
		unsigned long h = hash_bytes(f->path, base_len(f->path, f->gone));

		for (int j = x.head[h & x.mask]; j >= 0 && !t; j = x.next[j])
			if (same_path(v->files[j].path, v->files[j].gone, f->path, f->gone))
				t = &v->files[j];
		if (!t) {
			v->files[n] = *f;
			v->files[n].inodes = 1;
			v->files[n].deleted = f->gone;
			index_add(&x, h, n++);
			continue;
		}
		t->inodes++;
		t->deleted += f->gone;
		t->path[base_len(t->path, t->gone)] = 0;
		t->gone = false; /* the mark is off: " (N files, M deleted)" says it */
		t->read_bytes += f->read_bytes;
		t->write_bytes += f->write_bytes;
		t->fsyncs += f->fsyncs;
		t->sync_ranges += f->sync_ranges;
		t->op_ns += f->op_ns;
		t->bio_write_bytes += f->bio_write_bytes;
		t->bio_read_bytes += f->bio_read_bytes;
		t->more_pids |= f->more_pids;
		for (int a = 0; a < WHO_FILE_PIDS && f->pids[a]; a++) {
			int b = 0;

			while (b < WHO_FILE_PIDS && t->pids[b] && t->pids[b] != f->pids[a])
				b++;
			if (b == WHO_FILE_PIDS)
				t->more_pids = true;
			else
				t->pids[b] = f->pids[a];
		}
	}
	v->nfiles = n;
	index_free(&x);
	return 0;
}

int il_who_view_from(const struct il_who *w, struct il_who_view *v)
{
	__u32 *file_disks = calloc(w->nfiles + 1, sizeof(*file_disks));
	struct who_index ix;

	memset(v, 0, sizeof(*v));
	memcpy(v->evicted, w->evicted, sizeof(v->evicted));
	v->procs = calloc(w->nprocs + w->npd + 1, sizeof(*v->procs));
	v->files = calloc(w->nfiles + 1, sizeof(*v->files));
	if (!v->procs || !v->files || !file_disks || who_index_make(&ix, w)) {
		free(file_disks);
		il_who_view_free(v);
		return -ENOMEM;
	}
	for (int i = 0; i < w->nfiles; i++) {
		const struct who_file *f = &w->files[i].v;
		struct il_who_file_sum *s;

		file_disks[i] = il_disk_whole(w->files[i].k.dev);
		/* an opened directory: its time is its processes', not a file's; one synced is
		 * listed (SQLite's and a rename's fsync of the directory: a quarter of its syncs) */
		if (f->dir && !f->op_count[FS_OP_FSYNC])
			continue;
		s = &v->files[v->nfiles++];
		s->k = w->files[i].k;
		il_who_file_path(&s->k, f, s->path, sizeof(s->path), &s->gone);
		memcpy(s->pids, f->pids, sizeof(s->pids));
		s->more_pids = f->more_pids;
		s->flusher_pid = f->flusher_pid;
		s->read_bytes = f->read_bytes;
		s->write_bytes = f->write_bytes;
		s->fsyncs = f->op_count[FS_OP_FSYNC];
		s->sync_ranges = f->op_count[FS_OP_SYNC_RANGE];
		s->op_ns = file_ns(f);
		s->bio_write_bytes = f->bio_write_bytes;
		s->bio_read_bytes = f->bio_read_bytes;
		renamed_from(s, f);
		s->dir = f->dir;
	}
	for (int i = 0; i < w->nprocs; i++)
		proc_sum(&v->procs[v->nprocs++], w, i, file_disks, &ix);
	untraced_dirtiers(w, v);
	free(file_disks);
	who_index_free(&ix);
	if (merge_paths(v)) {
		il_who_view_free(v);
		return -ENOMEM;
	}
	qsort(v->procs, v->nprocs, sizeof(*v->procs), cmp_proc);
	qsort(v->files, v->nfiles, sizeof(*v->files), cmp_file);
	return 0;
}

void il_who_view_for_disk(struct il_who_view *v, __u32 disk_dev)
{
	for (int i = 0; i < v->nprocs; i++) {
		struct il_who_sum *p = &v->procs[i];

		p->disk_bytes = p->wb_bytes = 0;
		for (int d = 0; disk_dev && d < p->ndisks; d++) {
			if (p->disks[d].dev != disk_dev)
				continue;
			p->disk_bytes = p->disks[d].bio_bytes;
			p->wb_bytes = p->disks[d].wb_bytes;
		}
	}
}

int il_who_view_make(struct bpf_object *obj, __u32 disk_dev, struct il_who_view *v)
{
	struct il_who w;
	int err = il_who_read(obj, &w);

	memset(v, 0, sizeof(*v));
	if (err)
		return err;
	err = il_who_view_from(&w, v);
	il_who_free(&w);
	if (!err)
		il_who_view_for_disk(v, disk_dev);
	return err;
}

int il_who_view_copy(struct il_who_view *to, const struct il_who_view *from)
{
	memset(to, 0, sizeof(*to));
	memcpy(to->evicted, from->evicted, sizeof(to->evicted));
	to->procs = malloc((from->nprocs + 1) * sizeof(*to->procs));
	to->files = malloc((from->nfiles + 1) * sizeof(*to->files));
	if (!to->procs || !to->files) {
		il_who_view_free(to);
		return -ENOMEM;
	}
	memcpy(to->procs, from->procs, from->nprocs * sizeof(*to->procs));
	memcpy(to->files, from->files, from->nfiles * sizeof(*to->files));
	to->nprocs = from->nprocs;
	to->nfiles = from->nfiles;
	return 0;
}

/* now - base, or now when below: the entry was evicted and counts again from zero. */
static __u64 since(__u64 now, __u64 base)
{
	return now >= base ? now - base : now;
}

void il_who_view_sub(struct il_who_view *v, const struct il_who_view *base)
{
	for (int i = 0; i < v->nprocs; i++) {
		struct il_who_sum *p = &v->procs[i];
		const struct il_who_sum *b = NULL;

		for (int j = 0; j < base->nprocs && !b; j++)
			if (base->procs[j].pid == p->pid)
				b = &base->procs[j];
		if (!b)
			continue;
		for (int o = 0; o < FS_OP__MAX; o++) {
			p->op_ns[o] = since(p->op_ns[o], b->op_ns[o]);
			p->op_count[o] = since(p->op_count[o], b->op_count[o]);
		}
		p->iowait_ns = since(p->iowait_ns, b->iowait_ns);
		p->read_bytes = since(p->read_bytes, b->read_bytes);
		p->write_bytes = since(p->write_bytes, b->write_bytes);
		p->bio_bytes = since(p->bio_bytes, b->bio_bytes);
		p->bio_write_bytes = since(p->bio_write_bytes, b->bio_write_bytes);
		for (int d = 0; d < p->ndisks; d++) {
			struct il_who_disk *x = &p->disks[d];

			for (int e = 0; e < b->ndisks; e++) {
				if (b->disks[e].dev != x->dev)
					continue;
				x->bio_bytes = since(x->bio_bytes, b->disks[e].bio_bytes);
				x->foreign_bytes = since(x->foreign_bytes, b->disks[e].foreign_bytes);
				x->dirtied_bytes = since(x->dirtied_bytes, b->disks[e].dirtied_bytes);
				x->wb_bytes = since(x->wb_bytes, b->disks[e].wb_bytes);
				x->file_bytes = since(x->file_bytes, b->disks[e].file_bytes);
			}
		}
	}
	qsort(v->procs, v->nprocs, sizeof(*v->procs), cmp_proc);
}

void il_who_view_only(struct il_who_view *v, __u32 pid)
{
	int np = 0, nf = 0;

	for (int i = 0; i < v->nprocs; i++)
		if (v->procs[i].pid == pid || (v->procs[i].kthread && v->procs[i].disk_bytes))
			v->procs[np++] = v->procs[i];
	for (int i = 0; i < v->nfiles; i++)
		if (pids_have(v->files[i].pids, pid))
			v->files[nf++] = v->files[i];
	v->nprocs = np;
	v->nfiles = nf;
}

/* Whether cgroup path cg is cgroup top or one below it. */
static bool cgroup_under(const char *cg, const char *top)
{
	size_t n = strlen(top);

	if (!strcmp(top, "/"))
		return cg[0] == '/';
	return !strncmp(cg, top, n) && (cg[n] == 0 || cg[n] == '/');
}

void il_who_view_only_cgroup(struct il_who_view *v, const char *cgroup)
{
	int np = 0, nf = 0;

	for (int i = 0; i < v->nprocs; i++)
		if (cgroup_under(v->procs[i].cgroup, cgroup) || (v->procs[i].kthread && v->procs[i].disk_bytes))
			v->procs[np++] = v->procs[i];
	v->nprocs = np;
	for (int i = 0; i < v->nfiles; i++) {
		bool used = false;

		for (int k = 0; k < WHO_FILE_PIDS && !used; k++)
			for (int j = 0; j < np && !used && v->files[i].pids[k]; j++)
				used = !v->procs[j].kthread && v->procs[j].pid == v->files[i].pids[k];
		if (used)
			v->files[nf++] = v->files[i];
	}
	v->nfiles = nf;
}

void il_who_view_free(struct il_who_view *v)
{
	free(v->procs);
	free(v->files);
	memset(v, 0, sizeof(*v));
}

int il_who_view_disks(const struct il_who_view *v, __u32 pid, __u32 *devs, int max)
{
	const struct il_who_sum *p = NULL;
	__u64 weights[IL_WHO_DISKS];
	int n = 0;

	for (int i = 0; i < v->nprocs && !p; i++)
		if (v->procs[i].pid == pid)
			p = &v->procs[i];
	/* its weight on a disk: the bytes it sent there, and those read and written through
	 * syscalls on its files there (they land there sooner or later); the disk of its top
	 * file first: the verdict names that file, and its times are to be compared with that
	 * disk's */
	for (int d = 0; p && d < p->ndisks && n < max; d++) {
		if (!p->disks[d].ranked)
			continue;
		devs[n] = p->disks[d].dev;
		weights[n++] = p->used_disk == p->disks[d].dev ? ~0ULL :
			       p->disks[d].bio_bytes + p->disks[d].file_bytes;
	}
	/* heaviest first (insertion sort: a few disks; equal weights keep their order) */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && weights[j] > weights[j - 1]; j--) {
			__u64 tw = weights[j];
			__u32 td = devs[j];

			weights[j] = weights[j - 1];
			devs[j] = devs[j - 1];
			weights[j - 1] = tw;
			devs[j - 1] = td;
		}
	return n;
}

__u32 il_who_view_top_pid(const struct il_who_view *v)
{
	for (int i = 0; i < v->nprocs; i++) /* kernel threads work for the processes */
		if (!v->procs[i].kthread)
			return v->procs[i].pid;
	return v->nprocs ? v->procs[0].pid : 0;
}

static double rate(__u64 bytes, double s)
{
	return s > 0 ? bytes / 1024.0 / s : 0;
}

/* What the files table says after a path: "/" for a directory, " (was app.log)" for a file
 * renamed since it was first seen, " (13 files, 12 deleted)" for files of one path deleted
 * and made again. */
static const char *file_note(const struct il_who_file_sum *s, char *buf, size_t len)
{
	char was[4 * WHO_NAME_LEN + 1];
	int n = 0;

	buf[0] = 0;
	if (s->dir) /* a directory's path ends in a slash, as ls -p shows one */
		n = snprintf(buf, len, "/");
	if (s->was[0] && n >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - n, " (was %s)", il_text_escape(s->was, sizeof(s->was), was, sizeof(was)));
	if (s->inodes > 1 && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - n, " (%u files, %u deleted)", s->inodes, s->deleted);
	return buf;
}

/* One row of the processes table. */
static void print_proc(FILE *f, const struct il_who_sum *p, double elapsed_s)
{
	char comm[4 * 16 + 1], cg[4 * 256 + 1], path[4 * 512 + 1], t1[24], t2[24], cgs[256];
	__u64 fs = 0;

	for (int o = 0; o < FS_OP__MAX; o++)
		fs += p->op_ns[o];
	/* escaped, a hostile comm is longer than its column: cut, so the columns stay */
	fprintf(f, "%-7u %-16s %-24s %10.1f %10.1f %8.1f %10s %10s %10.1f  %s\n", p->pid,
		il_text_column(p->comm, sizeof(p->comm), 16, comm, sizeof(comm)),
		/* a container's or a unit's short name (cgident.h), else the path */
		il_text_escape(il_cgident_short_of(p->cgroup, cgs, sizeof(cgs)), sizeof(cgs), cg, sizeof(cg)),
		rate(p->read_bytes, elapsed_s), rate(p->write_bytes, elapsed_s),
		elapsed_s > 0 ? p->op_count[FS_OP_FSYNC] / elapsed_s : 0,
		il_fmt_ns(fs, t1, sizeof(t1)), il_fmt_ns(p->iowait_ns, t2, sizeof(t2)),
		rate(p->bio_bytes, elapsed_s),
		p->top_file[0] ? il_text_path(p->top_file, sizeof(p->top_file), p->top_file_gone, path,
					      sizeof(path)) : "-");
}

void il_who_view_print(FILE *f, const struct il_who_view *v, double elapsed_s, int top)
{
	int np = top && top < v->nprocs ? top : v->nprocs, nf = top && top < v->nfiles ? top : v->nfiles;
	const struct il_who_sum *heavy = NULL;
	__u64 shown_bio = 0;
	char path[4 * 512 + 1], t1[24], note[4 * WHO_NAME_LEN + 64];

	fprintf(f, "\ntop processes:\n%-7s %-16s %-24s %10s %10s %8s %10s %10s %10s  %s\n", "PID",
		"COMM", "CGROUP", "READ_KB/s", "WRITE_KB/s", "FSYNC/s", "FS_TIME", "IOWAIT",
		"DISK_KB/s", "TOP_FILE");
	for (int i = 0; i < np; i++) {
		print_proc(f, &v->procs[i], elapsed_s);
		if (v->procs[i].bio_bytes > shown_bio)
			shown_bio = v->procs[i].bio_bytes;
	}
	/* The rows rank by time in file operations and I/O wait: a process whose disk load no
	 * call timed (Linux AIO, io_uring's own workers, a raw device through mmap) would be left
	 * out however many bytes it sends. The one that sent the most, where no row shown sent
	 * as much, comes after them (a trial's fio through libaio, 132 MB/s, missing beside a
	 * 395 KB/s fsync loop). */
	for (int i = np; i < v->nprocs; i++)
		if (v->procs[i].bio_bytes > shown_bio && (!heavy || v->procs[i].bio_bytes > heavy->bio_bytes))
			heavy = &v->procs[i];
	if (heavy) {
		fprintf(f, "(and the process that sent the most to disk, below the top %d by time:)\n", np);
		print_proc(f, heavy, elapsed_s);
	}
	if (!np)
		fprintf(f, "(none seen)\n");
	fprintf(f, "\ntop files:\n%-10s %10s %10s %8s %10s %12s  %-24s %s\n", "TIME", "WRITE_KB/s",
		"READ_KB/s", "FSYNCS", "DISK_W_KB", "PIDS", "FLUSHER", "PATH");
	for (int i = 0; i < nf; i++) {
		const struct il_who_file_sum *s = &v->files[i];
		char pids[64] = "", fl[4 * 16 + 16] = "-";
		size_t n = 0;

		/* as many as fit the column (12), ",+" when some are left out */
		for (int j = 0; j < WHO_FILE_PIDS && s->pids[j]; j++) {
			char one[16];
			int k = snprintf(one, sizeof(one), "%s%u", j ? "," : "", s->pids[j]);
			bool last = j + 1 == WHO_FILE_PIDS || !s->pids[j + 1];

			if (n + k + (last && !s->more_pids ? 0 : 2) > 12) {
				snprintf(pids + n, sizeof(pids) - n, "%s+", n ? "," : "");
				break;
			}
			n += snprintf(pids + n, sizeof(pids) - n, "%s", one);
			if (last && s->more_pids)
				snprintf(pids + n, sizeof(pids) - n, ",+"); /* and more */
		}
		/* the flusher by its name too where the tables know it ("[jbd2/loop0-8] 19826") */
		for (int j = 0; s->flusher_pid && j < v->nprocs; j++)
			if (v->procs[j].pid == s->flusher_pid) {
				char e[4 * 16 + 1];

				il_text_escape(v->procs[j].comm, strnlen(v->procs[j].comm, 16), e, sizeof(e));
				snprintf(fl, sizeof(fl), v->procs[j].kthread ? "[%s] %u" : "%s %u", e,
					 s->flusher_pid);
			}
		if (s->flusher_pid && !strcmp(fl, "-"))
			snprintf(fl, sizeof(fl), "%u", s->flusher_pid);
		fprintf(f, "%-10s %10.1f %10.1f %8llu %10llu %12s  %-24s %s%s\n",
			il_fmt_ns(s->op_ns, t1, sizeof(t1)), rate(s->write_bytes, elapsed_s),
			rate(s->read_bytes, elapsed_s), (unsigned long long)s->fsyncs,
			(unsigned long long)(s->bio_write_bytes / 1024), pids[0] ? pids : "-", fl,
			il_text_path(s->path, sizeof(s->path), s->gone, path, sizeof(path)),
			file_note(s, note, sizeof(note)));
	}
	if (!nf)
		fprintf(f, "(none seen)\n");
	if (v->evicted[WHO_MAP_PROCS] || v->evicted[WHO_MAP_FILES] || v->evicted[WHO_MAP_PD])
		fprintf(f, "attribution: %llu processes, %llu files and %llu process-disk pairs were "
			"evicted (least recently active first): their counts are not in these tables "
			"(a path whose files come and go, a journal or a rotated log, lacks those of "
			"its files evicted)\n",
			(unsigned long long)v->evicted[WHO_MAP_PROCS],
			(unsigned long long)v->evicted[WHO_MAP_FILES],
			(unsigned long long)v->evicted[WHO_MAP_PD]);
}

void il_who_view_json(struct json_object *o, const struct il_who_view *v, double elapsed_s, int top)
{
	int np = top && top < v->nprocs ? top : v->nprocs, nf = top && top < v->nfiles ? top : v->nfiles;
	struct json_object *pa = json_object_new_array(), *fa = json_object_new_array();
	struct json_object *ev = json_object_new_object();

	for (int i = 0; i < np; i++) {
		const struct il_who_sum *p = &v->procs[i];
		struct json_object *x = json_object_new_object(), *ops = json_object_new_object();
		struct il_cgident cgi;

		json_object_object_add(x, "pid", json_object_new_uint64(p->pid));
		il_json_add_name(x, "comm", p->comm, sizeof(p->comm));
		il_json_add_name(x, "cgroup", p->cgroup, sizeof(p->cgroup));
		if (il_cgident_parse(p->cgroup, &cgi)) /* container_id, pod_uid, unit, ... */
			il_cgident_json_add(x, &cgi);
		json_object_object_add(x, "read_bytes", json_object_new_uint64(p->read_bytes));
		json_object_object_add(x, "write_bytes", json_object_new_uint64(p->write_bytes));
		for (int o2 = 0; o2 < FS_OP__MAX; o2++) {
			struct json_object *op = json_object_new_object();

			json_object_object_add(op, "count", json_object_new_uint64(p->op_count[o2]));
			json_object_object_add(op, "total_ns", json_object_new_uint64(p->op_ns[o2]));
			json_object_object_add(ops, il_fs_op_names[o2], op);
		}
		json_object_object_add(x, "ops", ops);
		json_object_object_add(x, "iowait_ns", json_object_new_uint64(p->iowait_ns));
		json_object_object_add(x, "disk_bytes", json_object_new_uint64(p->bio_bytes));
		json_object_object_add(x, "disk_write_bytes", json_object_new_uint64(p->bio_write_bytes));
		json_object_object_add(x, "kthread", json_object_new_boolean(p->kthread));
		if (p->top_file[0])
			il_json_add_name(x, "top_file", p->top_file, sizeof(p->top_file));
		else
			json_object_object_add(x, "top_file", NULL); /* none: a kernel thread's */
		json_object_array_add(pa, x);
	}
	for (int i = 0; i < nf; i++) {
		const struct il_who_file_sum *s = &v->files[i];
		struct json_object *x = json_object_new_object(), *pids = json_object_new_array();

		il_json_add_name(x, "path", s->path, sizeof(s->path));
		for (int j = 0; j < WHO_FILE_PIDS && s->pids[j]; j++)
			json_object_array_add(pids, json_object_new_uint64(s->pids[j]));
		json_object_object_add(x, "pids", pids);
		json_object_object_add(x, "more_pids", json_object_new_boolean(s->more_pids));
		json_object_object_add(x, "flusher_pid", s->flusher_pid ?
				       json_object_new_uint64(s->flusher_pid) : NULL);
		json_object_object_add(x, "read_bytes", json_object_new_uint64(s->read_bytes));
		json_object_object_add(x, "write_bytes", json_object_new_uint64(s->write_bytes));
		json_object_object_add(x, "fsyncs", json_object_new_uint64(s->fsyncs));
		json_object_object_add(x, "sync_ranges", json_object_new_uint64(s->sync_ranges));
		json_object_object_add(x, "inodes", json_object_new_uint64(s->inodes));
		json_object_object_add(x, "deleted_inodes", json_object_new_uint64(s->deleted));
		json_object_object_add(x, "dir", json_object_new_boolean(s->dir));
		if (s->was[0]) /* its name when first seen, renamed since */
			il_json_add_name(x, "renamed_from", s->was, sizeof(s->was));
		json_object_object_add(x, "total_ns", json_object_new_uint64(s->op_ns));
		json_object_object_add(x, "disk_write_bytes", json_object_new_uint64(s->bio_write_bytes));
		json_object_object_add(x, "disk_read_bytes", json_object_new_uint64(s->bio_read_bytes));
		json_object_array_add(fa, x);
	}
	json_object_object_add(o, "processes", pa);
	json_object_object_add(o, "files", fa);
	json_object_object_add(ev, "processes", json_object_new_uint64(v->evicted[WHO_MAP_PROCS]));
	json_object_object_add(ev, "files", json_object_new_uint64(v->evicted[WHO_MAP_FILES]));
	json_object_object_add(ev, "process_disks", json_object_new_uint64(v->evicted[WHO_MAP_PD]));
	json_object_object_add(o, "evicted", ev);
	(void)elapsed_s;
}
