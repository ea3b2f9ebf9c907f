/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The block layer's user side (see layers.h; kernel side bpf/lib/block.bpf.h). */
#include <stddef.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "btf.h"
#include "hist.h"
#include "ksyms.h"
#include "bpfobj.h"
#include "layers/block.h"
#include "layers/who.h"
#include "log.h"
#include "probes.h"
#include "util.h"
#include "fmt.h"

/* The bio-tracking maps and their sizes when tracking is on (1 entry when off). */
static const struct { const char *name; __u32 size; } bio_maps[] = {
	{ "blk_bio_start", 4096 }, { "blk_rq_bio", 16384 }, { "blk_dio_start", 4096 },
	{ "blk_sub_task", 4096 }, { "blk_rq_slot_bio", 16384 }, { "blk_bio_slots", 8192 },
	{ "blk_wb_sub", 4096 }, { "blk_pcg_slots", BLK_PCG_SLOTS },
};

/* The tracepoints that lost their leading request_queue in 5.11, and how many arguments the
 * old shape had (blk_cfg.tp_old). */
static const struct { const char *tp; int old_nargs; __u32 bit; } tp_shapes[] = {
	{ "block_bio_queue", 2, BLK_TP_BIO_QUEUE }, { "block_getrq", 3, BLK_TP_GETRQ },
	{ "block_bio_backmerge", 3, BLK_TP_MERGE }, { "block_split", 3, BLK_TP_SPLIT },
	{ "block_bio_remap", 4, BLK_TP_BIO_REMAP }, { "block_rq_remap", 4, BLK_TP_RQ_REMAP },
	{ "block_rq_requeue", 2, BLK_TP_REQUEUE }, { "block_rq_merge", 2, BLK_TP_RQ_MERGE },
};

struct blk_cfg *il_blk_cfg(struct bpf_object *obj)
{
	struct blk_cfg *c = il_obj_rodata_must(obj, "blk_cfg", sizeof(*c));

	c->rq_two_args = il_btf_tp_nargs("block_rq_issue") == 2;
	il_debug("block_rq_issue takes %s", c->rq_two_args ? "(q, rq)" : "(rq)");
	c->tp_old = 0;
	for (size_t i = 0; i < IL_ARRAY_SIZE(tp_shapes); i++)
		if (il_btf_tp_nargs(tp_shapes[i].tp) == tp_shapes[i].old_nargs)
			c->tp_old |= tp_shapes[i].bit;
	il_debug("block bio tracepoints with a leading request_queue: 0x%x", c->tp_old);
	if (!c->bios)
		for (size_t i = 0; i < IL_ARRAY_SIZE(bio_maps); i++)
			il_obj_map_size(obj, bio_maps[i].name, 1);
	il_who_default(obj); /* attribution off unless the tool turns it on */
	return c;
}

/* The address of iomap_dio_bio_end_io (BPF's il_iomap_dio_end_io): found by the BPF
 * program blk_dio_end_io_find, run once after load, where the kernel has
 * bpf_kallsyms_lookup_name (5.16+); else looked up in /proc/kallsyms by a thread while the
 * object loads (reading kallsyms up to it takes 15-40 ms, which the verifier's time hides
 * only in part on 2 CPUs). */
static struct {
	pthread_t thread;
	bool started;   /* the thread runs */
	bool wanted;    /* bio tracking is on: the address is needed */
	bool in_bpf;    /* blk_dio_end_io_find does it */
	unsigned long addr;
} dio_end_io;

static void *dio_end_io_lookup(void *arg)
{
	(void)arg;
	dio_end_io.addr = il_ksym_addr("iomap_dio_bio_end_io");
	return NULL;
}

static void disk_slots_give(struct bpf_object *obj);

int il_blk_loaded(struct bpf_object *obj)
{
	__u64 addr;
	int err;

	disk_slots_give(obj);
	if (!dio_end_io.wanted)
		return 0;
	if (dio_end_io.in_bpf) {
		struct bpf_program *p = bpf_object__find_program_by_name(obj, "blk_dio_end_io_find");
		LIBBPF_OPTS(bpf_test_run_opts, run);

		dio_end_io.wanted = false;
		err = bpf_prog_test_run_opts(bpf_program__fd(p), &run);
		if (err)
			il_err("cannot run blk_dio_end_io_find: %s", il_errno_name(errno));
		return err ? -errno : 0;
	}
	if (dio_end_io.started)
		pthread_join(dio_end_io.thread, NULL);
	else
		dio_end_io_lookup(NULL);
	dio_end_io.started = dio_end_io.wanted = false;
	addr = dio_end_io.addr;
	il_debug("iomap_dio_bio_end_io at 0x%llx", (unsigned long long)addr);
	err = il_obj_set_bss(obj, "il_iomap_dio_end_io", &addr, sizeof(addr));
	if (err)
		il_err("cannot set the address of iomap_dio_bio_end_io: %s", il_errno_name(-err));
	return err;
}

/* Bio tracking on (blk_cfg.bios, the maps sized); dio: look up iomap_dio_bio_end_io
 * meanwhile, which names a direct I/O's file and submitter. */
static void track_bios(struct bpf_object *obj, bool files, bool dio)
{
	struct blk_cfg *c = il_obj_rodata_must(obj, "blk_cfg", sizeof(*c));

	/* the program type first: libbpf's helper probe answers "supported" when the kernel
	 * refuses the probe's program type itself (5.10) */
	if (dio && !dio_end_io.wanted && libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_SYSCALL, NULL) == 1 &&
	    libbpf_probe_bpf_helper(BPF_PROG_TYPE_SYSCALL, BPF_FUNC_kallsyms_lookup_name, NULL) == 1) {
		dio_end_io.wanted = dio_end_io.in_bpf = true; /* loaded with the bio plan */
	} else if (dio && !dio_end_io.wanted) {
		pthread_attr_t attr;

		dio_end_io.wanted = true;
		pthread_attr_init(&attr);
		pthread_attr_setstacksize(&attr, 64 << 10); /* stdio */
		dio_end_io.started = !pthread_create(&dio_end_io.thread, &attr, dio_end_io_lookup, NULL);
		pthread_attr_destroy(&attr);
	}

	c->bios = 1;
	c->files = files;
	for (size_t i = 0; i < IL_ARRAY_SIZE(bio_maps); i++)
		il_obj_map_size(obj, bio_maps[i].name, bio_maps[i].size);
	if (files)
		il_obj_map_size(obj, "who_files", WHO_MAX_FILES);
}

void il_blk_track_bios(struct bpf_object *obj, bool files)
{
	track_bios(obj, files, true);
}

void il_blk_track_bio_based(struct bpf_object *obj)
{
	struct blk_cfg *c = il_obj_rodata_must(obj, "blk_cfg", sizeof(*c));

	/* only Q to the bio's end is measured: nobody asks for a bio's submitter or file */
	track_bios(obj, false, false);
	c->bio_only = 1;
}

void il_blk_bio_plan(struct bpf_object *obj, struct il_plan *p)
{
	/* rq: about requests (their link to bios, merges, requeues) or the throttles' counters:
	 * of no use with blk_cfg.bio_only, whose programs return at once there */
	static const struct { const char *name, *tp; bool optional, rq; } progs[] = {
		{ "bio_queue", "block:block_bio_queue", false, false },
		{ "getrq", "block:block_getrq", true, true },
		{ "bio_backmerge", "block:block_bio_backmerge", true, true },
		{ "bio_frontmerge", "block:block_bio_frontmerge", true, true },
		{ "rq_merge", "block:block_rq_merge", true, true },
		{ "split", "block:block_split", true, false },
		{ "bio_remap", "block:block_bio_remap", true, false },
		{ "rq_remap", "block:block_rq_remap", true, true },
		{ "rq_requeue", "block:block_rq_requeue", true, true },
		{ "bio_complete", "block:block_bio_complete", true, false },
		{ "wbt_step", "wbt:wbt_step", true, true },
		{ "iocost_activate", "iocost:iocost_iocg_activate", true, true },
	};
	static const char *prefix[2] = { "btf", "raw" };
	const struct blk_cfg *c = il_obj_rodata_must(obj, "blk_cfg", sizeof(*c));

	/* not part of a plan: loaded where it runs, after load (il_blk_loaded) */
	if (dio_end_io.in_bpf)
		bpf_program__set_autoload(bpf_object__find_program_by_name(obj, "blk_dio_end_io_find"), true);
	il_plan_init(p, "block bio lifetime");
	for (int m = 0; m < 2; m++) {
		char name[32];

		il_plan_option(p, m ? IL_M_RAW_TP : IL_M_TP_BTF, NULL);
		for (size_t i = 0; i < IL_ARRAY_SIZE(progs); i++) {
			if (c->bio_only && progs[i].rq)
				continue;
			snprintf(name, sizeof(name), "blk_%s_%s", progs[i].name, prefix[m]);
			il_plan_add(p, obj, name, progs[i].tp, progs[i].optional);
		}
	}
}

void il_blk_submit_plan(struct bpf_object *obj, struct il_plan *p)
{
	static const struct { const char *name, *tp; } progs[] = {
		{ "dio_begin", "iomap:iomap_dio_rw_begin" },
		{ "dio_complete", "iomap:iomap_dio_complete" },
		{ "wb_inode_start", "writeback:writeback_single_inode_start" },
		{ "ext4_wb_start", "ext4:ext4_writepages" },
		{ "wb_inode_end", "writeback:writeback_single_inode" },
		{ "ext4_wb_end", "ext4:ext4_writepages_result" },
	};
	static const char *prefix[2] = { "btf", "raw" };
	static const char tp_limits[] =
		"the time before Q starts at the direct I/O (iomap) or the inode's writeback, "
		"where the kernel has those tracepoints";

	il_plan_init(p, "bio submission (time before Q)");
	il_plan_option(p, IL_M_FENTRY, NULL);
	il_plan_add(p, obj, "blk_submit_fentry", "submit_bio", false);
	il_plan_option(p, IL_M_KPROBE, NULL);
	il_plan_add(p, obj, "blk_submit_kprobe", "submit_bio", false);
	for (int m = 0; m < 2; m++) {
		char name[32];

		il_plan_option(p, m ? IL_M_RAW_TP : IL_M_TP_BTF, tp_limits);
		for (size_t i = 0; i < IL_ARRAY_SIZE(progs); i++) {
			/* a module's tracepoint the kernel has no BTF for (ext4's on Debian's 5.10:
			 * no module BTF) goes on with its raw_tp twin beside the tp_btf others:
			 * else the option left it out, and a task's own writeback (an fsync's) had
			 * no start, no time before Q */
			bool raw = m || !il_can_tp_btf(progs[i].tp, NULL, 0);

			snprintf(name, sizeof(name), "blk_%s_%s", progs[i].name, prefix[raw]);
			il_plan_add(p, obj, name, progs[i].tp, true);
		}
	}
}

void il_blk_plan(struct bpf_object *obj, bool with_insert, struct il_plan *p)
{
	static const char *prefix[2] = { "btf", "raw" };

	il_plan_init(p, "block request lifetime");
	for (int m = 0; m < 2; m++) {
		char name[32];

		il_plan_option(p, m ? IL_M_RAW_TP : IL_M_TP_BTF, NULL);
		snprintf(name, sizeof(name), "blk_rq_issue_%s", prefix[m]);
		il_plan_add(p, obj, name, "block:block_rq_issue", false);
		snprintf(name, sizeof(name), "blk_rq_complete_%s", prefix[m]);
		il_plan_add(p, obj, name, "block:block_rq_complete", false);
		if (with_insert) {
			snprintf(name, sizeof(name), "blk_rq_insert_%s", prefix[m]);
			il_plan_add(p, obj, name, "block:block_rq_insert", true);
		}
	}
}

/* blk_disks is a per-CPU map (block.bpf.h): a lookup gives one
 * copy of the value per possible CPU, each rounded up to 8 bytes, which these fold into one. */

/* Add CPU copy c of a disk's totals into t: every field is a __u64 count or sum (block.h),
 * but the maxima, which take the larger. */
static void disk_merge(void *t, const void *c)
{
	struct blk_disk_stats *a = t;
	const struct blk_disk_stats *b = c;
	__u64 dmax = a->device_max_ns > b->device_max_ns ? a->device_max_ns : b->device_max_ns;
	__u64 qmax = a->queue_max_ns > b->queue_max_ns ? a->queue_max_ns : b->queue_max_ns;
	__u64 phmax[BLK_PH__MAX], *x = t;
	const __u64 *y = c;

	_Static_assert(sizeof(*a) % sizeof(__u64) == 0, "struct blk_disk_stats is __u64s");
	for (int i = 0; i < BLK_PH__MAX; i++)
		phmax[i] = a->phases.ph[i].max_ns > b->phases.ph[i].max_ns ? a->phases.ph[i].max_ns
									    : b->phases.ph[i].max_ns;
	for (size_t i = 0; i < sizeof(*a) / sizeof(__u64); i++)
		x[i] += y[i];
	a->device_max_ns = dmax;
	a->queue_max_ns = qmax;
	for (int i = 0; i < BLK_PH__MAX; i++)
		a->phases.ph[i].max_ns = phmax[i];
}

/* *b's I/Os, bytes, times and held I/Os into *a: the sums struct blk_proc and blk_cg share. */
#define BLK_SUMS_ADD(a, b)                                                                     \
	do {                                                                                   \
		(a)->ios += (b)->ios;                                                          \
		(a)->bytes += (b)->bytes;                                                      \
		(a)->before_q_ns += (b)->before_q_ns;                                          \
		(a)->queue_ns += (b)->queue_ns;                                                \
		(a)->device_ns += (b)->device_ns;                                              \
		(a)->held += (b)->held;                                                        \
	} while (0)

/* Add c, a CPU's copy of a (disk, process, cgroup)'s totals or another row of the same
 * (disk, process), into t; its cgroup and comm are the latest one's (last_ns). */
static void proc_merge(void *t, const void *c)
{
	struct blk_proc *a = t;
	const struct blk_proc *b = c;

	BLK_SUMS_ADD(a, b);
	a->write_bytes += b->write_bytes;
	if (b->last_ns > a->last_ns) {
		a->last_ns = b->last_ns;
		a->cgroup = b->cgroup;
		memcpy(a->comm, b->comm, sizeof(a->comm));
	}
}

/* The per-CPU aggregate maps (enum il_blk_map): name, key and value sizes, how a CPU's copy
 * is added. */
static const struct {
	const char *name;
	size_t ksz, vsz;
	void (*merge)(void *, const void *);
	bool percpu; /* else one value the CPUs share */
} agg_maps[IL_BLK_MAP__MAX] = {
	[IL_BLK_MAP_DISKS] = { "blk_disks", sizeof(__u32), sizeof(struct blk_disk_stats), disk_merge,
			       true },
	[IL_BLK_MAP_PROC_CG] = { "blk_proc_cg", sizeof(struct blk_proc_cg_key), sizeof(struct blk_proc),
				 proc_merge, false },
};

/* A disk's I2D and D2C phases are its queue and device totals, not added twice in the kernel
 * (blk_phases_add()): copied over. Linear in the totals, so two disks' totals made whole this
 * way add up (disk_merge()) to what their sum would be made. */
static void disk_whole(struct blk_disk_stats *d)
{
	struct blk_phase_stat *i2d = &d->phases.ph[BLK_PH_I2D], *d2c = &d->phases.ph[BLK_PH_D2C];

	i2d->count = d->queued;
	i2d->ns = d->queue_ns;
	i2d->max_ns = d->queue_max_ns;
	memcpy(i2d->slots, d->queue_slots, sizeof(i2d->slots));
	d2c->count = d->count;
	d2c->ns = d->device_ns;
	d2c->max_ns = d->device_max_ns;
	memcpy(d2c->slots, d->device_slots, sizeof(d2c->slots));
}

/* il_blk_percpu_fold() of the CPUs' copies at cpus, stride bytes apart. */
static void percpu_fold(enum il_blk_map m, void *out, const void *cpus, int ncpu, size_t stride)
{
	memset(out, 0, agg_maps[m].vsz);
	for (int c = 0; c < ncpu; c++)
		agg_maps[m].merge(out, (const char *)cpus + c * stride);
	if (m == IL_BLK_MAP_DISKS)
		disk_whole(out);
}

void il_blk_percpu_fold(enum il_blk_map m, void *out, const void *cpus, int ncpu)
{
	percpu_fold(m, out, cpus, ncpu, (agg_maps[m].vsz + 7) & ~(size_t)7);
}

#define DISK_SLOT_STRIDE ((sizeof(struct blk_disk_slot) + 7) & ~(size_t)7)

/* The ncpu CPUs' copies of a blk_disk_slots entry at copies folded into *st (made whole, as
 * il_blk_percpu_fold()): its disk, or 0 when the slot is unused. */
static __u32 disk_slot_fold(const void *copies, int ncpu, struct blk_disk_stats *st)
{
	const struct blk_disk_slot *c0 = copies;

	if (!c0->dev)
		return 0;
	percpu_fold(IL_BLK_MAP_DISKS, st, (const char *)copies + offsetof(struct blk_disk_slot, s),
		    ncpu, DISK_SLOT_STRIDE);
	return c0->dev;
}

/* A buffer for the CPUs' copies (*ncpu of them) of n blk_disk_slots entries, or NULL. */
static void *disk_slot_buf(int *ncpu, int n)
{
	*ncpu = libbpf_num_possible_cpus();
	return *ncpu < 0 ? NULL : malloc((size_t)n * *ncpu * DISK_SLOT_STRIDE);
}

/* Every entry of blk_disk_slots (fd) into buf (disk_slot_buf(BLK_DISK_SLOTS)): one batch
 * lookup (a scrape's bpf() calls are counted: serve-abuse.t), else one lookup an entry.
 * Returns how many were read, from entry 0. */
static __u32 disk_slots_read(int fd, int ncpu, char *buf)
{
	__u32 cnt = BLK_DISK_SLOTS, out_batch, keys[BLK_DISK_SLOTS];

	if (!bpf_map_lookup_batch(fd, NULL, &out_batch, keys, buf, &cnt, NULL) || errno == ENOENT)
		return cnt;
	for (cnt = 0; cnt < BLK_DISK_SLOTS; cnt++)
		if (bpf_map_lookup_elem(fd, &cnt, buf + (size_t)cnt * ncpu * DISK_SLOT_STRIDE))
			break;
	return cnt;
}

/* A disk of /sys/block: its dev and the requests it completed (reads + writes). */
struct disk_seen {
	__u32 dev;
	unsigned long long ios;
};

static int disk_seen_busier(const void *a, const void *b)
{
	unsigned long long x = ((const struct disk_seen *)a)->ios, y = ((const struct disk_seen *)b)->ios;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* The number in file /sys/block/NAME/what read with format fmt into *a (and *b), the count of
 * those read (0 when unreadable). */
static int sys_block_scan(const char *name, const char *what, const char *fmt, void *a, void *b)
{
	char path[300], line[512];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/block/%s/%s", name, what);
	if (!(f = fopen(path, "re")))
		return 0;
	if (fgets(line, sizeof(line), f))
		n = sscanf(line, fmt, a, b);
	fclose(f);
	return n < 0 ? 0 : n;
}

/* Give the disks of /sys/block their slots in blk_disk_slots, for every CPU at once (the BPF
 * side only looks a disk's slot up): the busiest first (requests completed so far, its stat
 * file), so an idle loop device does not take a busy disk's slot. A slot already given is
 * left alone (its counts with it). */
static void disk_slots_give(struct bpf_object *obj)
{
	int fd = il_obj_map_fd(obj, "blk_disk_slots"), ncpu, given = 0, n = 0;
	size_t stride = DISK_SLOT_STRIDE;
	struct disk_seen seen[256];
	struct blk_disk_slot *buf;
	struct dirent *de;
	DIR *d;

	if (fd < 0 || !(d = opendir("/sys/block")))
		return;
	while ((de = readdir(d)) && n < (int)(sizeof(seen) / sizeof(seen[0]))) {
		unsigned long long r[11];
		unsigned ma, mi;

		if (de->d_name[0] == '.' ||
		    sys_block_scan(de->d_name, "dev", "%u:%u", &ma, &mi) != 2)
			continue;
		seen[n].dev = IL_MKDEV(ma, mi);
		/* reads completed, then writes completed, the 1st and 5th fields */
		seen[n].ios = sys_block_scan(de->d_name, "stat", "%llu %*u %*u %*u %llu", &r[0], &r[1]) == 2 ?
			      r[0] + r[1] : 0;
		n++;
	}
	closedir(d);
	qsort(seen, n, sizeof(seen[0]), disk_seen_busier);
	if (!(buf = disk_slot_buf(&ncpu, 1)))
		return;
	for (int k = 0; k < n; k++) {
		__u32 i = blk_disk_slot_idx(seen[k].dev);

		if (!seen[k].dev || bpf_map_lookup_elem(fd, &i, buf) || buf->dev)
			continue;
		memset(buf, 0, (size_t)ncpu * stride);
		for (int c = 0; c < ncpu; c++)
			((struct blk_disk_slot *)((char *)buf + c * stride))->dev = seen[k].dev;
		if (!bpf_map_update_elem(fd, &i, buf, BPF_EXIST))
			given++;
	}
	free(buf);
	il_debug("block layer: %d of %d disks given a slot of blk_disk_slots", given, n);
}

/* A buffer for one value of map m on every possible CPU (*ncpu of them; 1 for a map the CPUs
 * share), or NULL. */
static char *percpu_buf(enum il_blk_map m, int *ncpu)
{
	*ncpu = agg_maps[m].percpu ? libbpf_num_possible_cpus() : 1;
	return *ncpu < 0 ? NULL : malloc((size_t)*ncpu * ((agg_maps[m].vsz + 7) & ~(size_t)7));
}

/* Every entry of per-CPU map m of obj (its CPUs folded, il_blk_percpu_fold(), after the key at
 * voff in rows of rsz bytes) into a malloc'ed array (*rows). Returns the count, or -errno. */
static int read_rows(struct bpf_object *obj, enum il_blk_map m, size_t voff, size_t rsz, void **rows)
{
	int fd = il_obj_map_fd(obj, agg_maps[m].name), n = 0, ncpu;
	size_t ksz = agg_maps[m].ksz;
	char key[32], cur[32], *r = NULL, *buf;
	void *prev = NULL;

	*rows = NULL;
	if (fd < 0 || ksz > sizeof(key))
		return -ENOENT;
	if (!(buf = percpu_buf(m, &ncpu)))
		return -ENOMEM;
	while (!bpf_map_get_next_key(fd, prev, key)) {
		char *nr = realloc(r, (n + 1) * rsz);

		if (!nr) {
			free(r);
			free(buf);
			return -ENOMEM;
		}
		r = nr;
		memcpy(cur, key, ksz);
		prev = cur;
		memcpy(r + n * rsz, key, ksz);
		if (!bpf_map_lookup_elem(fd, key, buf)) {
			il_blk_percpu_fold(m, r + n * rsz + voff, buf, ncpu);
			n++;
		}
	}
	free(buf);
	*rows = r;
	return n;
}

int il_blk_disk_lookup(struct bpf_object *obj, __u32 dev, struct blk_disk_stats *st)
{
	int fd = il_obj_map_fd(obj, "blk_disks"), sfd = il_obj_map_fd(obj, "blk_disk_slots");
	int ncpu, sncpu, err = 0;
	char *buf, *sbuf = NULL;
	struct blk_disk_stats *in_slot = NULL;

	if (fd < 0)
		return -ENOENT;
	if (!(buf = percpu_buf(IL_BLK_MAP_DISKS, &ncpu)))
		return -ENOMEM;
	/* its slot's totals, and those it counted in blk_disks before or beside */
	if (sfd >= 0 && (sbuf = disk_slot_buf(&sncpu, 1)) && (in_slot = malloc(sizeof(*in_slot))) &&
	    (bpf_map_lookup_elem(sfd, &(__u32){ blk_disk_slot_idx(dev) }, sbuf) ||
	     disk_slot_fold(sbuf, sncpu, in_slot) != dev)) {
		free(in_slot);
		in_slot = NULL;
	}
	if (bpf_map_lookup_elem(fd, &dev, buf)) {
		err = in_slot ? 0 : -errno;
		if (in_slot)
			*st = *in_slot;
	} else {
		il_blk_percpu_fold(IL_BLK_MAP_DISKS, st, buf, ncpu);
		if (in_slot)
			disk_merge(st, in_slot);
	}
	free(in_slot);
	free(sbuf);
	free(buf);
	return err;
}

int il_blk_disks_read(struct bpf_object *obj, struct il_blk_disk_row **rows)
{
	int n = read_rows(obj, IL_BLK_MAP_DISKS, offsetof(struct il_blk_disk_row, st), sizeof(**rows),
			  (void **)rows);
	int fd = il_obj_map_fd(obj, "blk_disk_slots"), ncpu;
	struct il_blk_disk_row *r;
	__u32 cnt;
	char *buf;

	if (n < 0 || fd < 0 || !(buf = disk_slot_buf(&ncpu, BLK_DISK_SLOTS)))
		return n;
	cnt = disk_slots_read(fd, ncpu, buf);
	/* the slots' disks: added to their rows from blk_disks, else rows of their own */
	for (__u32 i = 0; i < cnt; i++) {
		struct blk_disk_stats st;
		__u32 dev = disk_slot_fold(buf + (size_t)i * ncpu * DISK_SLOT_STRIDE, ncpu, &st);
		int j = 0;

		if (!dev)
			continue;
		while (j < n && (*rows)[j].dev != dev)
			j++;
		if (j < n) {
			disk_merge(&(*rows)[j].st, &st);
			continue;
		}
		if (!(r = realloc(*rows, (size_t)(n + 1) * sizeof(*r))))
			break;
		*rows = r;
		r[n].dev = dev;
		r[n++].st = st;
	}
	free(buf);
	return n;
}

/* A grouping of blk_proc_cg's rows: by their disk and by part(), each group summed into one
 * out row of osz bytes by add() (first: the group's first row, which sets its key). */
struct pcg_group {
	__u64 (*part)(const struct il_blk_pcg_row *r);
	size_t osz;
	void (*add)(void *out, const struct il_blk_pcg_row *r, bool first);
};

static __u64 pcg_cgroup(const struct il_blk_pcg_row *r) { return r->k.cgroup; }
static __u64 pcg_tgid(const struct il_blk_pcg_row *r) { return r->k.tgid; }

/* (disk, part) order, then the rest of the key: each group's rows in one order. */
static int pcg_cmp(const void *x, const void *y, void *arg)
{
	const struct il_blk_pcg_row *a = x, *b = y;
	const struct pcg_group *g = arg;

	if (a->k.dev != b->k.dev)
		return a->k.dev < b->k.dev ? -1 : 1;
	if (g->part(a) != g->part(b))
		return g->part(a) < g->part(b) ? -1 : 1;
	if (a->k.tgid != b->k.tgid)
		return a->k.tgid < b->k.tgid ? -1 : 1;
	return a->k.cgroup < b->k.cgroup ? -1 : a->k.cgroup > b->k.cgroup;
}

/* in's n rows grouped as g says into a malloc'ed array (*out; NULL when n is 0), in group
 * order. Returns the number of groups, or -ENOMEM. */
static int pcg_sum(const struct il_blk_pcg_row *in, int n, const struct pcg_group *g, void **out)
{
	struct il_blk_pcg_row *s;
	char *r;
	int m = 0;

	*out = NULL;
	if (n <= 0)
		return 0;
	s = malloc((size_t)n * sizeof(*s));
	r = calloc(n, g->osz);
	if (!s || !r) {
		free(s);
		free(r);
		return -ENOMEM;
	}
	memcpy(s, in, (size_t)n * sizeof(*s));
	qsort_r(s, n, sizeof(*s), pcg_cmp, (void *)g);
	for (int i = 0; i < n; i++) {
		bool first = !i || s[i].k.dev != s[i - 1].k.dev || g->part(&s[i]) != g->part(&s[i - 1]);

		m += first;
		g->add(r + (m - 1) * g->osz, &s[i], first);
	}
	free(s);
	*out = r;
	return m;
}

/* A (disk, cgroup): sums added; tgid the known submitter seen latest. */
static void cg_add(void *out, const struct il_blk_pcg_row *r, bool first)
{
	struct il_blk_cg_row *c = out;

	if (first) {
		c->k.dev = r->k.dev;
		c->k.cgroup = r->k.cgroup;
	}
	BLK_SUMS_ADD(&c->v, &r->v);
	if (r->k.tgid && r->v.last_ns >= c->v.tgid_ns) {
		c->v.tgid = r->k.tgid;
		c->v.tgid_ns = r->v.last_ns;
	}
}

/* A (disk, process): as CPU copies are folded (proc_merge()). */
static void proc_add(void *out, const struct il_blk_pcg_row *r, bool first)
{
	struct il_blk_proc_row *p = out;

	if (first) {
		p->k.dev = r->k.dev;
		p->k.tgid = r->k.tgid;
	}
	proc_merge(&p->v, &r->v);
}

int il_blk_cgroups_of(const struct il_blk_pcg_row *in, int n, struct il_blk_cg_row **out)
{
	static const struct pcg_group g = { pcg_cgroup, sizeof(**out), cg_add };

	return pcg_sum(in, n, &g, (void **)out);
}

int il_blk_procs_of(const struct il_blk_pcg_row *in, int n, struct il_blk_proc_row **out)
{
	static const struct pcg_group g = { pcg_tgid, sizeof(**out), proc_add };

	return pcg_sum(in, n, &g, (void **)out);
}

/* The taken slots of blk_pcg_slots (struct blk_pcg_slot: a row's shape) after the n rows of
 * *rows (grown; il_array_read()). Returns the new count; n when the map is not there or
 * cannot be read. */
static int pcg_slots_read(struct bpf_object *obj, struct il_blk_pcg_row **rows, int n)
{
	struct blk_pcg_slot *sl = malloc(BLK_PCG_SLOTS * sizeof(*sl));
	struct il_blk_pcg_row *grown;
	__u32 cnt;
	int m = 0;

	_Static_assert(sizeof(struct blk_pcg_slot) == sizeof(struct il_blk_pcg_row),
		       "a slot is a row");
	if (!sl)
		return n;
	cnt = il_array_read(il_obj_map_fd(obj, "blk_pcg_slots"), BLK_PCG_SLOTS, sizeof(*sl), sl);
	for (__u32 i = 0; i < cnt; i++)
		if (*(const __u64 *)&sl[i].k && sl[i].v.ios) /* taken, and not a key no one has */
			sl[m++] = sl[i];
	if (!m || !(grown = realloc(*rows, (size_t)(n + m) * sizeof(**rows))))
		goto out;
	memcpy(grown + n, sl, (size_t)m * sizeof(*sl));
	*rows = grown;
	n += m;
out:
	free(sl);
	return n;
}

int il_blk_pcg_read(struct bpf_object *obj, struct il_blk_pcg_row **rows)
{
	int n = read_rows(obj, IL_BLK_MAP_PROC_CG, offsetof(struct il_blk_pcg_row, v), sizeof(**rows),
			  (void **)rows);

	return n < 0 ? n : pcg_slots_read(obj, rows, n);
}

const char *const il_blk_phase_names[BLK_PH__MAX] = {
	[BLK_PH_BEFORE_Q] = "before Q", [BLK_PH_Q2G] = "Q2G", [BLK_PH_G2I] = "G2I",
	[BLK_PH_I2D] = "I2D", [BLK_PH_D2C] = "D2C", [BLK_PH_Q2C] = "Q2C",
};
const char *const il_blk_phase_keys[BLK_PH__MAX] = {
	[BLK_PH_BEFORE_Q] = "before_q", [BLK_PH_Q2G] = "q2g", [BLK_PH_G2I] = "g2i",
	[BLK_PH_I2D] = "i2d", [BLK_PH_D2C] = "d2c", [BLK_PH_Q2C] = "q2c",
};

void il_blk_phases_sub(struct blk_phases *d, const struct blk_phases *now,
		       const struct blk_phases *before)
{
	d->ios = now->ios - before->ios;
	d->bios = now->bios - before->bios;
	d->bytes = now->bytes - before->bytes;
	d->errors = now->errors - before->errors;
	d->life_ns = now->life_ns - before->life_ns;
	for (int i = 0; i < BLK_PH__MAX; i++) {
		d->ph[i].count = now->ph[i].count - before->ph[i].count;
		d->ph[i].ns = now->ph[i].ns - before->ph[i].ns;
		d->ph[i].max_ns = now->ph[i].max_ns;
		for (int j = 0; j < IL_HIST_SLOTS; j++)
			d->ph[i].slots[j] = now->ph[i].slots[j] - before->ph[i].slots[j];
	}
}

__u64 il_blk_phase_p99_lt(const struct blk_phase_stat *s)
{
	int slot = il_hist_percentile_slot(s->slots, IL_HIST_SLOTS, 99);
	__u64 lo, hi;

	if (slot < 0)
		return 0;
	il_slot_bounds(slot, &lo, &hi);
	return hi + 1;
}

__u64 il_blk_phases_life(const struct blk_phases *p)
{
	return p->life_ns;
}

void il_blk_phases_print(FILE *f, const char *indent, const struct blk_phases *p)
{
	__u64 life = il_blk_phases_life(p);
	char a[32], b[32];

	fprintf(f, "%s%-9s %9s %11s %12s %7s\n", indent, "PHASE", "COUNT", "AVG", "P99", "SHARE");
	for (int i = 0; i < BLK_PH__MAX; i++) {
		const struct blk_phase_stat *st = &p->ph[i];

		if (!st->count) {
			fprintf(f, "%s%-9s %9s %11s %12s %7s\n", indent, il_blk_phase_names[i], "0", "-",
				"-", "-");
			continue;
		}
		il_fmt_ns(st->ns / st->count, a, sizeof(a));
		b[0] = '<';
		il_fmt_ns(il_blk_phase_p99_lt(st), b + 1, sizeof(b) - 1);
		fprintf(f, "%s%-9s %9llu %11s %12s %6.1f%%\n", indent, il_blk_phase_names[i],
			(unsigned long long)st->count, a, b, life ? 100.0 * st->ns / life : 0);
	}
}

struct json_object *il_blk_phases_json(const struct blk_phases *p)
{
	struct json_object *o = json_object_new_object(), *ph = json_object_new_object();
	__u64 life = il_blk_phases_life(p);

	json_object_object_add(o, "ios", json_object_new_uint64(p->ios));
	json_object_object_add(o, "bios", json_object_new_uint64(p->bios));
	json_object_object_add(o, "bytes", json_object_new_uint64(p->bytes));
	json_object_object_add(o, "errors", json_object_new_uint64(p->errors));
	for (int i = 0; i < BLK_PH__MAX; i++) {
		const struct blk_phase_stat *st = &p->ph[i];
		struct json_object *x = json_object_new_object();

		json_object_object_add(x, "count", json_object_new_uint64(st->count));
		json_object_object_add(x, "total_ns", json_object_new_uint64(st->ns));
		json_object_object_add(x, "avg_ns", json_object_new_uint64(st->count ? st->ns / st->count : 0));
		json_object_object_add(x, "p99_lt_ns", json_object_new_uint64(il_blk_phase_p99_lt(st)));
		json_object_object_add(x, "max_ns", json_object_new_uint64(st->max_ns));
		json_object_object_add(x, "share", json_object_new_double(life ? (double)st->ns / life : 0));
		json_object_object_add(ph, il_blk_phase_keys[i], x);
	}
	json_object_object_add(o, "phases", ph);
	return o;
}

const char *const il_blk_op_names[IL_OP__MAX] = { "read", "write", "flush", "discard", "other" };

const char *il_blk_rwbs(__u32 op, __u32 flags, char *buf, size_t len)
{
	static const char ops[IL_OP__MAX] = { [IL_OP_READ] = 'R', [IL_OP_WRITE] = 'W',
					      [IL_OP_FLUSH] = 'F', [IL_OP_DISCARD] = 'D',
					      [IL_OP_OTHER] = 'N' };
	size_t n = 0;

	if (len < 8)
		return "";
	if ((flags & IL_RQF_PREFLUSH) && op != IL_OP_FLUSH)
		buf[n++] = 'F';
	buf[n++] = op < IL_OP__MAX ? ops[op] : 'N';
	if (flags & IL_RQF_FUA)
		buf[n++] = 'F';
	if (flags & IL_RQF_RAHEAD)
		buf[n++] = 'A';
	if (flags & IL_RQF_SYNC)
		buf[n++] = 'S';
	if (flags & IL_RQF_META)
		buf[n++] = 'M';
	buf[n] = 0;
	return buf;
}
