/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "escape.h"
#include "layers/fs.h"
#include "log.h"
#include "util.h"
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

/* Is pid among a file's first WHO_FILE_PIDS processes (who_file.pids, il_who_file_sum.pids)? */
/* The name of the whole disk a filesystem of device dev (super_block.s_dev) is on into buf,
 * "" when dev is no block device (tmpfs, overlayfs...). */
static void file_disk(__u32 dev, char *buf, size_t len)
{
	char path[64];

	buf[0] = 0;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", IL_DEV_MAJOR(dev), IL_DEV_MINOR(dev));
	if (!access(path, F_OK))
		il_disk_name(il_whole_disk(dev), buf, len);
}

/* A file's time in traced operations, ns: what ranks a process's files (its top file). */
static __u64 file_ns(const struct who_file *f)
{
	__u64 t = 0;

	for (int o = 0; o < FS_OP__MAX; o++)
		t += f->op_ns[o];
	return t;
}

static bool pids_have(const __u32 pids[WHO_FILE_PIDS], __u32 pid)
{
	for (int i = 0; i < WHO_FILE_PIDS; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

int il_who_view_make(struct bpf_object *obj, __u32 disk_dev, struct il_who_view *v)
{
	struct il_who w;
	int err = il_who_read(obj, &w);

	memset(v, 0, sizeof(*v));
	if (err)
		return err;
	memcpy(v->evicted, w.evicted, sizeof(v->evicted));
	v->procs = calloc(w.nprocs + 1, sizeof(*v->procs));
	v->files = calloc(w.nfiles + 1, sizeof(*v->files));
	if (!v->procs || !v->files)
		return il_who_free(&w), il_who_view_free(v), il_err("out of memory"), -ENOMEM;
	for (int i = 0; i < w.nfiles; i++) {
		const struct who_file *f = &w.files[i].v;
		struct il_who_file_sum *s;

		if (f->dir) /* an opened directory: its time is its processes', not a file's */
			continue;
		s = &v->files[v->nfiles++];
		s->k = w.files[i].k;
		il_who_file_path(&s->k, f, s->path, sizeof(s->path));
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
	}
	for (int i = 0; i < w.nprocs; i++) {
		struct il_who_sum *s = &v->procs[v->nprocs++];
		const struct who_proc *p = &w.procs[i].v;
		__u64 best = 0;

		s->pid = w.procs[i].tgid;
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
		for (int j = 0; j < w.npd; j++)
			if (w.pd[j].k.tgid == s->pid && w.pd[j].k.dev == disk_dev)
				s->disk_bytes += w.pd[j].v.bytes;
		for (int j = 0; j < w.nfiles; j++) {
			const struct who_file *f = &w.files[j].v;

			if (disk_dev && f->kthread_write_bytes && pids_have(f->pids, s->pid) &&
			    il_whole_disk(w.files[j].k.dev) == disk_dev)
				s->wb_bytes += f->kthread_write_bytes;
		}
		/* its top file: the one of its own file time counts (who_proc.files) with the most */
		const struct who_file_key *top = NULL;
		for (int j = 0; j < WHO_PROC_FILES; j++) {
			if (p->files[j].k.ino && p->files[j].ns >= best) {
				best = p->files[j].ns;
				top = &p->files[j].k;
			}
		}
		if (top) {
			struct who_file none = {};
			const struct who_file *f = &none;

			for (int j = 0; j < w.nfiles; j++)
				if (!memcmp(&w.files[j].k, top, sizeof(*top)))
					f = &w.files[j].v;
			file_disk(top->dev, s->top_file_disk, sizeof(s->top_file_disk));
			il_who_file_path(top, f, s->top_file, sizeof(s->top_file));
			s->top_file_read_bytes = f->read_bytes;
			s->top_file_write_bytes = f->write_bytes;
		}
	}
	qsort(v->procs, v->nprocs, sizeof(*v->procs), cmp_proc);
	qsort(v->files, v->nfiles, sizeof(*v->files), cmp_file);
	il_who_free(&w);
	return 0;
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

void il_who_view_free(struct il_who_view *v)
{
	free(v->procs);
	free(v->files);
	memset(v, 0, sizeof(*v));
}

/* Add bytes to disk dev's weight in devs/weights (n of them, room for max). */
static int add_dev(__u32 *devs, __u64 *weights, int n, int max, __u32 dev, __u64 bytes)
{
	for (int i = 0; i < n; i++) {
		if (devs[i] == dev) {
			weights[i] += bytes;
			return n;
		}
	}
	if (n < max && dev) {
		devs[n] = dev;
		weights[n++] = bytes;
	}
	return n;
}

int il_who_view_disks(struct bpf_object *obj, __u32 pid, __u32 *devs, int max)
{
	__u64 *weights = calloc(max > 0 ? max : 1, sizeof(*weights)), top_ns = 0;
	__u32 top_dev = 0;
	struct il_who w;
	int n = 0;

	if (!weights)
		return il_err("out of memory: the disks of process %u are not known", pid), 0;
	if (il_who_read(obj, &w)) {
		free(weights);
		return 0;
	}
	/* its weight on a disk: the bytes it sent there, and those read and written through
	 * syscalls on its files there (they land there sooner or later) */
	for (int i = 0; i < w.npd; i++)
		if (w.pd[i].k.tgid == pid && w.pd[i].v.bytes)
			n = add_dev(devs, weights, n, max, w.pd[i].k.dev, w.pd[i].v.bytes);
	for (int i = 0; i < w.nfiles; i++) {
		const struct who_file *f = &w.files[i].v;
		__u64 t = file_ns(f);

		if (!pids_have(f->pids, pid) || f->rdev)
			continue;
		n = add_dev(devs, weights, n, max, il_whole_disk(w.files[i].k.dev),
			    f->read_bytes + f->write_bytes);
		if (t >= top_ns) { /* its top file, as il_who_view_make() finds it */
			top_ns = t;
			top_dev = il_whole_disk(w.files[i].k.dev);
		}
	}
	/* heaviest first (insertion sort: a few disks), the disk of its top file before all:
	 * the verdict names that file, and its times are to be compared with that disk's */
	for (int i = 0; i < n; i++)
		if (top_ns && devs[i] == top_dev)
			weights[i] = ~0ULL;
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && weights[j] > weights[j - 1]; j--) {
			__u64 tw = weights[j];
			__u32 td = devs[j];

			weights[j] = weights[j - 1];
			devs[j] = devs[j - 1];
			weights[j - 1] = tw;
			devs[j - 1] = td;
		}
	il_who_free(&w);
	free(weights);
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

void il_who_view_print(FILE *f, const struct il_who_view *v, double elapsed_s, int top)
{
	int np = top && top < v->nprocs ? top : v->nprocs, nf = top && top < v->nfiles ? top : v->nfiles;
	char comm[4 * 16 + 1], cg[4 * 128 + 1], path[4 * 512 + 1], t1[24], t2[24];

	fprintf(f, "\ntop processes:\n%-7s %-16s %-24s %10s %10s %8s %10s %10s %10s  %s\n", "PID",
		"COMM", "CGROUP", "READ_KB/s", "WRITE_KB/s", "FSYNC/s", "FS_TIME", "IOWAIT",
		"DISK_KB/s", "TOP_FILE");
	for (int i = 0; i < np; i++) {
		const struct il_who_sum *p = &v->procs[i];
		__u64 fs = 0;

		for (int o = 0; o < FS_OP__MAX; o++)
			fs += p->op_ns[o];
		/* escaped, a hostile comm is longer than its column: cut, so the columns stay */
		fprintf(f, "%-7u %-16s %-24s %10.1f %10.1f %8.1f %10s %10s %10.1f  %s\n", p->pid,
			il_text_column(p->comm, sizeof(p->comm), 16, comm, sizeof(comm)),
			il_text_escape(p->cgroup, sizeof(p->cgroup), cg, sizeof(cg)),
			rate(p->read_bytes, elapsed_s), rate(p->write_bytes, elapsed_s),
			elapsed_s > 0 ? p->op_count[FS_OP_FSYNC] / elapsed_s : 0,
			il_fmt_ns(fs, t1, sizeof(t1)), il_fmt_ns(p->iowait_ns, t2, sizeof(t2)),
			rate(p->bio_bytes, elapsed_s),
			p->top_file[0] ? il_text_escape(p->top_file, sizeof(p->top_file), path, sizeof(path)) : "-");
	}
	if (!np)
		fprintf(f, "(none seen)\n");
	fprintf(f, "\ntop files:\n%-10s %10s %10s %8s %10s %12s  %-24s %s\n", "TIME", "WRITE_KB/s",
		"READ_KB/s", "FSYNCS", "DISK_W_KB", "PIDS", "FLUSHER", "PATH");
	for (int i = 0; i < nf; i++) {
		const struct il_who_file_sum *s = &v->files[i];
		char pids[64] = "", fl[16] = "-";
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
		if (s->flusher_pid)
			snprintf(fl, sizeof(fl), "%u", s->flusher_pid);
		fprintf(f, "%-10s %10.1f %10.1f %8llu %10llu %12s  %-24s %s\n",
			il_fmt_ns(s->op_ns, t1, sizeof(t1)), rate(s->write_bytes, elapsed_s),
			rate(s->read_bytes, elapsed_s), (unsigned long long)s->fsyncs,
			(unsigned long long)(s->bio_write_bytes / 1024), pids[0] ? pids : "-", fl,
			il_text_escape(s->path, sizeof(s->path), path, sizeof(path)));
	}
	if (!nf)
		fprintf(f, "(none seen)\n");
	if (v->evicted[WHO_MAP_PROCS] || v->evicted[WHO_MAP_FILES] || v->evicted[WHO_MAP_PD])
		fprintf(f, "attribution: %llu processes, %llu files and %llu process-disk pairs were "
			"evicted (least recently active first) and are not in these tables\n",
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

		json_object_object_add(x, "pid", json_object_new_uint64(p->pid));
		il_json_add_name(x, "comm", p->comm, sizeof(p->comm));
		il_json_add_name(x, "cgroup", p->cgroup, sizeof(p->cgroup));
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
