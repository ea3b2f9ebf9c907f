/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Attribution's user side (see layers.h; kernel side bpf/lib/who.bpf.h). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <bpf/bpf.h>
#include "bpfobj.h"
#include "btf.h"
#include "cgroup.h"
#include "disk.h"
#include "layers/who.h"
#include "log.h"
#include "mounts.h"
#include "run.h"
#include "util.h"

static const char *const who_maps[WHO_MAP__MAX] = { "who_procs", "who_files", "who_pd" };

void il_who_enable(struct bpf_object *obj)
{
	struct who_cfg *c = il_obj_rodata_must(obj, "who_cfg", sizeof(*c));

	static const __u32 sizes[WHO_MAP__MAX] = { WHO_MAX_PROCS, WHO_MAX_FILES, WHO_MAX_PROC_DISKS };

	c->on = 1;
	c->bio_two_args = il_btf_tp_nargs("block_bio_queue") == 2;
	for (int i = 0; i < WHO_MAP__MAX; i++) {
		struct bpf_map *m = bpf_object__find_map_by_name(obj, who_maps[i]);

		if (m)
			bpf_map__set_max_entries(m, sizes[i]);
	}
	il_obj_map_size(obj, "who_pd_slots", WHO_PD_SLOTS);
}

void il_who_users_partial(struct bpf_object *obj)
{
	struct who_cfg *c = il_obj_rodata_must(obj, "who_cfg", sizeof(*c));

	c->users_partial = 1;
}

void il_who_default(struct bpf_object *obj)
{
	struct who_cfg *c = il_obj_rodata(obj, "who_cfg", sizeof(*c));

	if (!c || c->on)
		return;
	for (int i = 0; i < WHO_MAP__MAX; i++) {
		struct bpf_map *m = bpf_object__find_map_by_name(obj, who_maps[i]);

		if (m)
			bpf_map__set_max_entries(m, 1);
	}
	il_obj_map_size(obj, "who_pd_slots", 1);
}

void il_who_plan(struct bpf_object *obj, struct il_plan *p)
{
	static const char dirty[] = "writeback:writeback_mark_inode_dirty";

	il_plan_init(p, "block submissions (who)");
	il_plan_option(p, IL_M_TP_BTF, NULL);
	il_plan_add(p, obj, "who_bio_btf", "block:block_bio_queue", false);
	il_plan_add(p, obj, "who_dirty_btf", dirty, true);
	il_plan_option(p, IL_M_RAW_TP, NULL);
	il_plan_add(p, obj, "who_bio_raw", "block:block_bio_queue", false);
	il_plan_add(p, obj, "who_dirty_raw", dirty, true);
}

void il_who_bio_in_block(struct bpf_object *obj, struct il_plan *who)
{
	struct who_cfg *c = il_obj_rodata_must(obj, "who_cfg", sizeof(*c));

	if (!c->on || (!il_plan_leave_out(who, "who_bio_btf") && !il_plan_leave_out(who, "who_bio_raw")))
		return;
	c->bio_in_blk = 1;
	il_debug("block_bio_queue: attribution in the block layer's program");
}

/* Read every entry of map `name` (key size ksz, value size vsz) into a malloc'ed array of
 * rows of rsz bytes, key first at offset 0 and value at voff. In batches of the map's size
 * (BPF_MAP_LOOKUP_BATCH, 5.6+: a few bpf() calls whatever the map holds), else one key at a
 * time. Returns the count, or -errno. */
static int read_map(struct bpf_object *obj, const char *name, size_t ksz, size_t vsz, size_t rsz,
		    size_t voff, void **out)
{
	int fd = il_obj_map_fd(obj, name), n = 0, cap = 0;
	char key[64], cur[64];
	void *prev = NULL;
	char *rows = NULL;

	*out = NULL;
	if (fd < 0 || ksz > sizeof(key))
		return -ENOENT;
	n = il_map_read_batch(fd, ksz, vsz, rsz, voff, &rows);
	if (n != -EOPNOTSUPP) {
		*out = rows;
		return n;
	}
	n = 0;
	while (!bpf_map_get_next_key(fd, prev, key)) {
		memcpy(cur, key, ksz);
		prev = cur;
		if (n == cap) {
			char *nr = realloc(rows, (cap = cap ? cap * 2 : 64) * rsz);

			if (!nr) {
				free(rows);
				return -ENOMEM;
			}
			rows = nr;
		}
		memset(rows + n * rsz, 0, rsz);
		memcpy(rows + n * rsz, key, ksz);
		if (!bpf_map_lookup_elem(fd, key, rows + n * rsz + voff))
			n++;
	}
	*out = rows;
	return n;
}

static int cmp_proc_tgid(const void *a, const void *b)
{
	__u32 x = ((const struct il_who_proc_row *)a)->tgid, y = ((const struct il_who_proc_row *)b)->tgid;

	return x < y ? -1 : x > y;
}

void il_who_procs_bios(struct il_who *w)
{
	qsort(w->procs, w->nprocs, sizeof(*w->procs), cmp_proc_tgid);
	for (int i = 0; i < w->npd; i++) {
		struct il_who_proc_row key = { .tgid = w->pd[i].k.tgid }, *p;

		p = bsearch(&key, w->procs, w->nprocs, sizeof(*w->procs), cmp_proc_tgid);
		if (!p)
			continue;
		p->v.bios += w->pd[i].v.bios;
		p->v.bio_bytes += w->pd[i].v.bytes;
		p->v.bio_write_bytes += w->pd[i].v.write_bytes;
	}
}

static int cmp_pd_key(const void *a, const void *b)
{
	const struct who_pd_key *x = &((const struct il_who_pd_row *)a)->k;
	const struct who_pd_key *y = &((const struct il_who_pd_row *)b)->k;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return x->dev < y->dev ? -1 : x->dev > y->dev;
}

int il_who_pd_merge(struct il_who_pd_row *r, int n)
{
	int m = 0;

	if (n > 1)
		qsort(r, n, sizeof(*r), cmp_pd_key);
	for (int i = 0; i < n; i++) {
		struct who_pd *to, *from = &r[i].v;

		if (!m || cmp_pd_key(&r[m - 1], &r[i])) {
			r[m++] = r[i];
			continue;
		}
		to = &r[m - 1].v;
		to->bios += from->bios;
		to->bytes += from->bytes;
		to->write_bytes += from->write_bytes;
		to->foreign_bytes += from->foreign_bytes;
		to->dirtied_bytes += from->dirtied_bytes;
		if (!to->comm[0])
			memcpy(to->comm, from->comm, sizeof(to->comm));
	}
	return m;
}

/* The taken slots of who_pd_slots (struct who_pd_slot) added to w->pd, then il_who_pd_merge()
 * (a key counted in its slot and in who_pd is in both), the slots read by il_array_read().
 * 0, or -ENOMEM. */
static int pd_slots_read(struct bpf_object *obj, struct il_who *w)
{
	struct who_pd_slot *sl = malloc(WHO_PD_SLOTS * sizeof(*sl));
	struct il_who_pd_row *r = w->pd, *grown;
	int m = 0, n = w->npd;
	__u32 cnt;

	if (!sl)
		return -ENOMEM;
	cnt = il_array_read(il_obj_map_fd(obj, "who_pd_slots"), WHO_PD_SLOTS, sizeof(*sl), sl);
	for (__u32 i = 0; i < cnt; i++)
		m += sl[i].k.tgid != 0;
	if (m) {
		if (!(grown = realloc(r, (size_t)(n + m) * sizeof(*r)))) {
			free(sl);
			return -ENOMEM;
		}
		r = w->pd = grown;
		for (__u32 i = 0; i < cnt; i++)
			if (sl[i].k.tgid)
				r[n++] = (struct il_who_pd_row){ .k = sl[i].k, .v = sl[i].v };
	}
	free(sl);
	w->npd = il_who_pd_merge(r, n);
	return 0;
}

int il_who_read(struct bpf_object *obj, struct il_who *w)
{
	int lru_pd, err;
	int ncpu = libbpf_num_possible_cpus(), fd = il_obj_map_fd(obj, "who_inserts");
	__u64 *v;

	memset(w, 0, sizeof(*w));
	w->nprocs = read_map(obj, "who_procs", sizeof(__u32), sizeof(struct who_proc),
			     sizeof(struct il_who_proc_row), offsetof(struct il_who_proc_row, v),
			     (void **)&w->procs);
	w->nfiles = read_map(obj, "who_files", sizeof(struct who_file_key), sizeof(struct who_file),
			     sizeof(struct il_who_file_row), offsetof(struct il_who_file_row, v),
			     (void **)&w->files);
	w->npd = read_map(obj, "who_pd", sizeof(struct who_pd_key), sizeof(struct who_pd),
			  sizeof(struct il_who_pd_row), offsetof(struct il_who_pd_row, v),
			  (void **)&w->pd);
	if (w->nprocs < 0 || w->nfiles < 0 || w->npd < 0) {
		int err = w->nprocs < 0 ? w->nprocs : w->nfiles < 0 ? w->nfiles : w->npd;

		il_who_free(w);
		return err;
	}
	lru_pd = w->npd; /* (what the eviction count below compares with who_pd's inserts) */
	err = pd_slots_read(obj, w);
	if (err) {
		il_who_free(w);
		return err;
	}
	il_who_procs_bios(w);
	if (ncpu > 0 && fd >= 0 && (v = calloc(ncpu, sizeof(*v)))) {
		int present[WHO_MAP__MAX] = { w->nprocs, w->nfiles, lru_pd };

		for (__u32 k = 0; k < WHO_MAP__MAX; k++) {
			__u64 ins = 0;

			if (bpf_map_lookup_elem(fd, &k, v))
				continue;
			for (int c = 0; c < ncpu; c++)
				ins += v[c];
			w->evicted[k] = ins > (__u64)present[k] ? ins - present[k] : 0;
		}
		free(v);
	}
	return 0;
}

void il_who_free(struct il_who *w)
{
	free(w->procs);
	free(w->files);
	free(w->pd);
	memset(w, 0, sizeof(*w));
}

/* The generation (inode.i_generation) of the file at path, not following a symlink at its
 * end, from its file handle (name_to_handle_at(2)), for the layouts known: FILEID_INO32_GEN
 * (1: u32 ino, u32 gen; ext4, xfs with 32-bit inode numbers), xfs's 64-bit one (0x81: u64 ino,
 * u32 gen; struct xfs_fid64), btrfs' (0x4d-0x4f: u64 objectid, u64 root, u32 gen; struct
 * btrfs_fid). No open: another iolayer counts an open as a use of the file (a trial's
 * --serve was listed among the processes of the files it checked). -1 when not known. */
static int handle_gen(const char *path, unsigned int *gen)
{
	union {
		struct file_handle h;
		char room[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	} fh;
	unsigned int off;
	int mount_id;

	fh.h.handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(AT_FDCWD, path, &fh.h, &mount_id, 0))
		return -1;
	switch (fh.h.handle_type) {
	case 1:
		off = 4;
		break;
	case 0x81:
		off = 8;
		break;
	case 0x4d: case 0x4e: case 0x4f:
		off = 16;
		break;
	default:
		return -1;
	}
	if (fh.h.handle_bytes < off + sizeof(*gen))
		return -1;
	memcpy(gen, fh.h.f_handle + off, sizeof(*gen));
	return 0;
}

/* Is path the file k? Looked at without following a symlink at its end: the inode number
 * must match, and the device where it is a real one (an anonymous device's number, major 0,
 * may be a btrfs subvolume's own, not its filesystem's); for a regular file whose filesystem
 * gives its generation (its file handle, handle_gen(); else FS_IOC_GETVERSION: ext4, xfs,
 * btrfs), that too, as a file made after another was deleted may have its number. */
static bool same_file(const char *path, const struct who_file_key *k)
{
	struct stat st;
	unsigned int v;
	bool same = true;
	int fd;

	if (lstat(path, &st) || st.st_ino != k->ino)
		return false;
	if (major(st.st_dev) && (major(st.st_dev) != IL_DEV_MAJOR(k->dev) ||
				 minor(st.st_dev) != IL_DEV_MINOR(k->dev)))
		return false;
	if (!S_ISREG(st.st_mode))
		return true;
	if (!handle_gen(path, &v))
		return v == k->gen;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return true;
	if (!ioctl(fd, FS_IOC_GETVERSION, &v))
		same = v == k->gen;
	close(fd);
	return same;
}

/* What the last check of a file found: when, and whether its recorded path still leads to
 * it, or its name now in the same directory, or that it is in neither place (deleted). Kept
 * so that a file is looked at once per round of checks (not once per process that used it),
 * and so that a reader that may not look at the filesystem (a scrape) still shows what the
 * last check found. An open-addressing table of NOTES entries, emptied when 3/4 full (files
 * then show their recorded paths until their next check). */
#define NOTES 8192
struct name_note {
	struct who_file_key k;
	unsigned long long checked_ns;   /* il_now_ns() of the last check; 0: never */
	bool used, deleted;
	char *name;                      /* malloc'ed: its name now in that directory, or NULL */
};
static struct name_note *notes;
static int nnotes;
static int check_budget = -1;            /* files that may still be looked at; -1: any */
static unsigned long long round_ns;      /* il_now_ns() when this round of checks began */

void il_who_names_check(int budget)
{
	check_budget = budget;
	round_ns = il_now_ns();
}

/* The note of k (a new one with add, the table emptied first when 3/4 full), or NULL. */
static struct name_note *note_of(const struct who_file_key *k, bool add)
{
	size_t h = (k->ino * 0x9e3779b97f4a7c15ULL ^ k->dev ^ (__u64)k->gen << 32) % NOTES;

	if (!notes && (!add || !(notes = calloc(NOTES, sizeof(*notes)))))
		return NULL;
	if (add && nnotes >= NOTES * 3 / 4) {
		for (int i = 0; i < NOTES; i++)
			free(notes[i].name);
		memset(notes, 0, NOTES * sizeof(*notes));
		nnotes = 0;
	}
	for (size_t i = 0; i < NOTES; i++, h = (h + 1) % NOTES) {
		struct name_note *n = &notes[h];

		if (n->used && !memcmp(&n->k, k, sizeof(*k)))
			return n;
		if (!n->used) {
			if (!add)
				return NULL;
			memset(n, 0, sizeof(*n));
			n->used = true;
			n->k = *k;
			nnotes++;
			return n;
		}
	}
	return NULL;
}

/* buf (a path whose last name starts after slash) as note n says: renamed, or deleted. */
static void apply_note(char *buf, size_t len, char *slash, const struct name_note *n, bool *deleted)
{
	if (n->name && slash) {
		snprintf(slash + 1, len - (slash + 1 - buf), "%s", n->name);
	} else if (n->deleted && strlen(buf) + 11 < len) {
		strcat(buf, " (deleted)");
		*deleted = true;
	}
}

/* Look for file k, recorded at path buf, into note n: in place, renamed in the directory it
 * was in (by inode number and generation), or deleted. */
static void check_name(char *buf, char *slash, const struct who_file_key *k, struct name_note *n)
{
	struct dirent *e;
	int dfd;
	DIR *d;

	free(n->name);
	n->name = NULL;
	n->deleted = false;
	n->checked_ns = il_now_ns();
	if (same_file(buf, k))
		return;
	n->deleted = true;
	if (!slash)
		return;
	*slash = 0;
	dfd = open(buf, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d && dfd >= 0)
		close(dfd);
	*slash = '/';
	while (d && (e = readdir(d))) {
		char cand[PATH_MAX];

		if (e->d_ino != k->ino || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		*slash = 0;
		snprintf(cand, sizeof(cand), "%s/%s", buf, e->d_name);
		*slash = '/';
		if (!same_file(cand, k))
			continue;
		n->deleted = false;
		n->name = strdup(e->d_name);
		break;
	}
	if (d)
		closedir(d);
}

/* Names are taken when a file is first seen: a file renamed since (a rotated log, app.log
 * -> app.log.1) is looked for by inode number and generation in the directory it was in,
 * and path in buf becomes its name there now; " (deleted)" is added when it is in neither
 * place. Each file is looked at once per round (il_who_names_check()), within its budget;
 * otherwise what its last check found stands. */
static void renamed(char *buf, size_t len, const struct who_file_key *k, bool *deleted)
{
	char *slash = strrchr(buf, '/');
	struct name_note *n;

	if (slash == buf)
		slash = NULL;
	n = note_of(k, false);
	if (check_budget && (!n || n->checked_ns < round_ns) && (n || (n = note_of(k, true)))) {
		if (check_budget > 0)
			check_budget--;
		check_name(buf, slash, k, n);
	}
	if (n)
		apply_note(buf, len, slash, n, deleted);
}

const char *il_who_file_path(const struct who_file_key *k, const struct who_file *f, char *buf,
			     size_t len, bool *deleted)
{
	const char *mp = il_mount_of(k->dev);
	int depth = f->depth > WHO_PATH_DEPTH ? WHO_PATH_DEPTH : f->depth;
	bool gone = false;
	size_t n = 0;

	buf[0] = 0;
	if (deleted)
		*deleted = false;
	if (f->rdev) { /* a block device's own page cache: a filesystem's journal and metadata */
		char d[32];

		snprintf(buf, len, "/dev/%s", il_disk_name(f->rdev, d, sizeof(d)));
		return buf;
	}
	if (!depth) { /* the filesystem's root directory, or an inode no name was seen for */
		if (mp && f->names[0][0] == 0 && k->ino == 2)
			snprintf(buf, len, "%s", mp);
		else
			snprintf(buf, len, "[inode %llu on %u:%u]", (unsigned long long)k->ino,
				 IL_DEV_MAJOR(k->dev), IL_DEV_MINOR(k->dev));
		return buf;
	}
	if (f->deeper || !mp)
		n = snprintf(buf, len, "...");
	else if (strcmp(mp, "/"))
		n = snprintf(buf, len, "%s", mp);
	for (int i = depth - 1; i >= 0 && n < len; i--)
		n += snprintf(buf + n, len - n, "/%.*s%s", WHO_NAME_LEN, f->names[i],
			      f->cut & (1u << i) ? "..." : "");
	/* looked for where it was seen: not with a name cut (that path names nothing, and the
	 * file is not said to be deleted because it is not there) */
	if (!f->deeper && !f->cut && mp && n < len)
		renamed(buf, len, k, deleted ? deleted : &gone);
	return buf;
}

void il_who_note_procs(struct bpf_object *obj)
{
	int fd = il_obj_map_fd(obj, "who_procs");
	__u32 k, cur, *prev = NULL;

	while (fd >= 0 && !bpf_map_get_next_key(fd, prev, &k)) {
		cur = k;
		prev = &cur;
		il_cgroup_remember(k);
	}
}

const char *il_who_proc_cgroup(__u32 pid, const struct who_proc *p, char *buf, size_t len)
{
	/* /proc/PID/cgroup only where files may be looked at: not once per process per scrape */
	return il_cgroup_path(il_cgroup_v1() ? p->io_cgroup_id : p->cgroup_id, check_budget ? pid : 0,
			      buf, len);
}

const char *il_who_title_parse(const char *cmdline, size_t n, const char *comm, char *buf, size_t len)
{
	size_t c = strnlen(comm, 15), o = 0;
	const char *p, *end;
	int words = 0;

	buf[0] = 0;
	end = memchr(cmdline, 0, n);
	end = end ? end : cmdline + n;
	if (!c || len < 2 || (size_t)(end - cmdline) < c + 2 || memcmp(cmdline, comm, c) ||
	    cmdline[c] != ':' || cmdline[c + 1] != ' ')
		return buf;
	for (p = cmdline + c + 2; p < end && words < 2;) {
		const char *w = p, *we;

		while (w < end && *w == ' ')
			w++;
		for (we = w; we < end && *we != ' '; we++)
			;
		if (we == w)
			break;
		p = we;
		if (we[-1] == ':' && !o) /* a cluster's name before the role */
			continue;
		if (memchr(w, '(', we - w) || memchr(w, '[', we - w) || memchr(w, '@', we - w) ||
		    (*w >= '0' && *w <= '9'))
			break;
		if (o + (o ? 1 : 0) + (size_t)(we - w) >= len)
			break;
		if (o)
			buf[o++] = ' ';
		memcpy(buf + o, w, we - w);
		o += we - w;
		buf[o] = 0;
		words++;
	}
	return buf;
}

/* Titles read (il_who_pid_title()): an open-addressing table, emptied when 3/4 full. A
 * process's title is read once (a process sets it as it starts; an exec changes its comm,
 * and so the key): read again each round, 2,000 short-lived processes emptied a smaller
 * table within one judgement, again and again, and the main thread opened /proc/PID/cmdline
 * of gone processes about 10,000 times a second. */
static struct title_note {
	__u32 pid;
	char comm[16];
	char title[32];
} *titles;
static int ntitles;

const char *il_who_pid_title(__u32 pid, const char *comm, char *buf, size_t len)
{
	size_t h = (pid * 2654435761u) % IL_WHO_TITLES;
	struct title_note *t = NULL;
	char path[32], cmd[256];
	ssize_t n = -1;
	int fd;

	buf[0] = 0;
	if (!pid || !comm[0])
		return buf;
	if (!titles && !(titles = calloc(IL_WHO_TITLES, sizeof(*titles))))
		return buf;
	for (size_t i = 0; i < IL_WHO_TITLES && !t; i++, h = (h + 1) % IL_WHO_TITLES) {
		if (titles[h].pid == pid && !strncmp(titles[h].comm, comm, 15)) {
			snprintf(buf, len, "%s", titles[h].title);
			return buf;
		}
		if (!titles[h].pid)
			t = &titles[h];
	}
	if (!check_budget)
		return buf; /* a scrape: no /proc read */
	if (!t || ntitles >= IL_WHO_TITLES * 3 / 4) {
		memset(titles, 0, IL_WHO_TITLES * sizeof(*titles));
		ntitles = 0;
		t = &titles[(pid * 2654435761u) % IL_WHO_TITLES];
	}
	snprintf(path, sizeof(path), "/proc/%u/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, cmd, sizeof(cmd));
		close(fd);
	}
	t->pid = pid;
	snprintf(t->comm, sizeof(t->comm), "%.15s", comm);
	il_who_title_parse(cmd, n > 0 ? (size_t)n : 0, comm, t->title, sizeof(t->title));
	ntitles++;
	snprintf(buf, len, "%s", t->title);
	return buf;
}

const char *il_who_pid_cgroup(__u32 pid, char *buf, size_t len)
{
	if (check_budget)
		return il_cgroup_of_pid(pid, buf, len);
	snprintf(buf, len, "-");
	return buf;
}
