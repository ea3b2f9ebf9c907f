/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The block layer's types, shared by its BPF side (bpf/lib/block.bpf.h), its user side
 * (user/lib/block.c) and the tools that compose it. Fixed-width types only.
 */
#ifndef IOLAYER_BLOCK_H
#define IOLAYER_BLOCK_H

#include "lib/shared.h"

/* The layer's settings, one struct in .rodata (`blk_cfg`), filled by user space before load
 * (user/lib/block.c). */
struct blk_cfg {
	/* block_rq_insert/issue take (q, rq) rather than (rq): kernels before 5.11 (and 5.10
	 * stable before 5.10.137), commit a54895fa057c; read from the tracepoint's BTF. */
	__u8 rq_two_args;
	__u8 bios;       /* track bios from submission to their request (blk_track_bios) */
	__u8 files;      /* and the file each bio belongs to (who_files) */
	/* bios only of bio-based devices (no mq_ops: dm, md, zram, brd), which have no
	 * request: requests are not linked to their bios (biolatency's plain mode on a
	 * machine with such a disk; blk_track_bio_based()) */
	__u8 bio_only;
	/* The bio and request tracepoints that still take a leading struct request_queue *
	 * (kernels before 5.11: commit e8a676d61c07 and its series), one bit each (enum
	 * blk_tp), read from their BTF prototypes by blk_cfg(). */
	__u32 tp_old;
};

/* Tracepoints whose argument list lost its request_queue in 5.11 (bits of blk_cfg.tp_old). */
enum blk_tp {
	BLK_TP_BIO_QUEUE = 1,     /* block_bio_queue(q, bio) -> (bio) */
	BLK_TP_GETRQ = 2,         /* block_getrq(q, bio, rw) -> (bio) */
	BLK_TP_MERGE = 4,         /* block_bio_backmerge/frontmerge(q, rq, bio) -> (bio) */
	BLK_TP_SPLIT = 8,         /* block_split(q, bio, new_sector) -> (bio, new_sector) */
	BLK_TP_BIO_REMAP = 16,    /* block_bio_remap(q, bio, dev, from) -> (bio, dev, from) */
	BLK_TP_RQ_REMAP = 32,     /* block_rq_remap(q, rq, dev, from) -> (rq, dev, from) */
	BLK_TP_REQUEUE = 64,      /* block_rq_requeue(q, rq) -> (rq) */
	BLK_TP_RQ_MERGE = 128,    /* block_rq_merge(q, rq) -> (rq) */
};

/*
 * The points of a bio's life, in blktrace's letters, and the phases between them (btt's
 * names). Times are bpf_ktime_get_ns(), 0 when the point was not seen.
 *   submit  the bio's submission began: submit_bio() (fentry/kprobe), else, with
 *           tracepoints only, in the task that queues it: the start of its direct I/O
 *           (iomap:iomap_dio_rw_begin) or of its inode's writeback
 *           (writeback:writeback_single_inode_start, ext4:ext4_writepages), or the task's
 *           last block event since (Q, G, merge, insert, issue of its earlier bios), the
 *           later of the two
 *   Q       block:block_bio_queue        G  block:block_getrq (a request was allocated)
 *   I       block:block_rq_insert        D  block:block_rq_issue (sent to the driver)
 *   C       block:block_rq_complete, or block:block_bio_complete for bio-based devices
 */
enum blk_mark { BLK_MK_SUBMIT, BLK_MK_Q, BLK_MK_G, BLK_MK_I, BLK_MK_D, BLK_MK_C, BLK_MK__MAX };

/* BEFORE_Q: submit -> Q: the cgroup throttle (blk-throttle) and the bio checks; with
 *           tracepoints only, also the filesystem's work between the start of the direct I/O
 *           or writeback and the bio.
 * Q2G: Q -> G: splitting, merge attempts, rq-qos throttling (wbt, iocost, iolatency) and
 *      waiting for a request tag.
 * G2I: G -> I: the request sits in the submitter's plug; for a request issued without an
 *      insert (no I/O scheduler), G -> D.
 * I2D: I -> D: in the I/O scheduler or dispatch queues.
 * D2C: D -> C: the driver and the device.
 * Q2C: Q -> C: the whole life in the block layer after Q (for bio-based devices, which
 *      have no request, the only phase after Q). */
enum blk_phase { BLK_PH_BEFORE_Q, BLK_PH_Q2G, BLK_PH_G2I, BLK_PH_I2D, BLK_PH_D2C, BLK_PH_Q2C, BLK_PH__MAX };

/* One finished I/O: a request (block_rq_complete, all of it) or a bio of a bio-based device
 * (block_bio_complete). What completion handlers get (blk_done(), blk_bio_done())
 * and biosnoop's event. Identity is the submitter's, taken at submission or Q, never at
 * completion. */
struct blk_io {
	__u64 ts[BLK_MK__MAX];   /* enum blk_mark; 0: not seen */
	__u64 cgroup;           /* cgroup id of the bio's blkcg (v1 blkio or v2), else the
				 * submitter's v2 cgroup; 0 unknown */
	__u64 ino;              /* inode of the file the I/O belongs to, 0 unknown */
	__u64 sector;           /* first sector on the disk */
	__u32 ino_dev;          /* its superblock's dev (key of who_files with ino, ino_gen) */
	__u32 ino_gen;          /* its inode.i_generation */
	__u32 tgid, pid;        /* submitter, 0 unknown */
	__u32 dev;              /* the disk, major << 20 | minor */
	__u32 part;             /* the block device the bio was sent to (a partition or the
				 * disk; 5.12 and later), 0 unknown */
	__u32 from;             /* block_bio_remap's device: the partition (before 5.12) or the
				 * stacked device (dm) the bio came from, 0 none */
	__u32 bytes;
	__u32 flags;            /* enum il_rq_flag */
	__u16 bios;             /* bios in the request (merged ones included) */
	__u8 op;                /* enum il_req_op_kind */
	__u8 error;             /* completed (in any part) with an error */
	__u8 bio_based;         /* a bio of a bio-based device, no request */
	__u8 requeued;          /* the request was requeued (block_rq_requeue) */
	__u8 held;              /* its first bio was queued (block_bio_queue) by another task
				 * than its submitter: held, then let go by a worker (blk-throttle's
				 * dispatch work) */
	__u8 in_cg;             /* with --cgroup (struct il_cg_cfg): its first bio's cgroup (as
				 * cgroup) is that one or below it */
	__u8 pad[4];
	char comm[IL_TASK_COMM_LEN]; /* submitter's thread name */
};
_Static_assert(__builtin_offsetof(struct blk_io, comm) + IL_TASK_COMM_LEN == sizeof(struct blk_io),
	       "struct blk_io has no padding: it goes whole through the ring buffer");

/* Time in phase ph of io (ns) into *ns: 1, or 0 when io has no such phase (a point not seen,
 * or the clock going backwards), *ns then 0. Branch-free (il_gt(), timestamps below 2^63):
 * the verifier walked each of three compares' two ways at every phase of a request (about
 * 8,000 of iolayer's block_rq_complete's instructions verified), and the CPU guessed them. */
static inline int blk_phase_ns(const struct blk_io *io, int ph, __u64 *ns)
{
	__u64 a = 0, b = 0, ok;

	switch (ph) {
	case BLK_PH_BEFORE_Q: a = io->ts[BLK_MK_SUBMIT]; b = io->ts[BLK_MK_Q]; break;
	case BLK_PH_Q2G: a = io->ts[BLK_MK_Q]; b = io->ts[BLK_MK_G]; break;
	case BLK_PH_G2I: /* to I, else (no insert: issued directly) to D */
		a = io->ts[BLK_MK_G];
		b = io->ts[BLK_MK_D] ^ ((io->ts[BLK_MK_D] ^ io->ts[BLK_MK_I]) & -il_gt(io->ts[BLK_MK_I], 0));
		break;
	case BLK_PH_I2D: a = io->ts[BLK_MK_I]; b = io->ts[BLK_MK_D]; break;
	case BLK_PH_D2C: a = io->ts[BLK_MK_D]; b = io->ts[BLK_MK_C]; break;
	case BLK_PH_Q2C: a = io->ts[BLK_MK_Q]; b = io->ts[BLK_MK_C]; break;
	}
	ok = il_gt(a, 0) & il_gt(b, 0) & (il_gt(a, b) ^ 1);
	*ns = (b - a) & -ok;
	return ok;
}

/* One phase summed over many I/Os: log2 histogram of ns (il_hist_slot). */
struct blk_phase_stat {
	__u64 count;
	__u64 ns;
	__u64 max_ns;
	__u64 slots[IL_HIST_SLOTS];
};

/* Phases of many I/Os (blk_phases_add()). */
struct blk_phases {
	__u64 ios;      /* requests, and bios of bio-based devices */
	__u64 bios;     /* bios in them */
	__u64 bytes;
	__u64 errors;
	__u64 life_ns;  /* the sum of each I/O's seen life, ns: before Q + Q2C, or without a Q
			 * (a flush request the flush machinery makes) I2D + D2C; the phases'
			 * shares are of this, so no share passes 100% */
	struct blk_phase_stat ph[BLK_PH__MAX];
};

/* Per-disk block totals (the aggregate mode of the layer, map `blk_disks`, one copy per CPU
 * that the readers sum, the maxima the largest) since tracing began; key: disk dev_t
 * (major << 20 | minor). Histograms are log2 of ns (il_hist_slot). Every field is a __u64. */
struct blk_disk_stats {
	__u64 count;         /* requests completed */
	__u64 queued;        /* of which were seen entering the OS queue (block_rq_insert) */
	__u64 bytes;         /* bytes completed (block_rq_complete nr_bytes) */
	__u64 queue_ns;      /* sum of insert -> issue, ns */
	__u64 device_ns;     /* sum of issue -> complete, ns */
	__u64 device_max_ns; /* longest issue -> complete, ns */
	__u64 queue_max_ns;  /* longest insert -> issue, ns */
	__u64 queue_slots[IL_HIST_SLOTS];
	__u64 device_slots[IL_HIST_SLOTS];
	__u64 ops[IL_OP__MAX]; /* requests issued (block_rq_issue) and completed, by operation
				* (enum il_req_op_kind). An fsync's empty PREFLUSH write, which
				* the flush machinery ends with no issue of its own, is not one:
				* /proc/diskstats counts it as a write besides its flush */
	/* With bio tracking (blk_track_bios()): */
	__u64 merges;        /* bios merged into a request (block_bio_backmerge/frontmerge) and
			      * requests into another (block_rq_merge) */
	__u64 splits;        /* block_split */
	__u64 requeues;      /* block_rq_requeue */
	/* rq-qos policies acting on the disk (their waits are in Q2G), where the kernel has
	 * their tracepoints: */
	__u64 wbt_steps;     /* wbt:wbt_step, writeback throttling changed its queue depth */
	__u64 iocost_activations; /* iocost:iocost_iocg_activate, a cgroup became active under iocost */
	struct blk_phases phases; /* every I/O finished on the disk, by phase */
};

/* A disk's totals in the per-CPU array blk_disk_slots, looked up before blk_disks: the
 * slot blk_disk_slot_idx() picks holds the disk user space wrote into it for every CPU at
 * once before attaching (il_blk_loaded(): the disks of /sys/block, the first of two that pick
 * one slot); the BPF side never takes a slot, so no two CPUs or nested programs race for one.
 * A disk that came later, or lost its slot to another, counts into blk_disks. An array's
 * lookup is inlined where the per-CPU hash's is a helper call that hashes the key (about
 * 50 ns of block_rq_complete's time a request here). The readers add both. */
struct blk_disk_slot {
	__u32 dev;  /* major << 20 | minor, 0: unused */
	__u32 pad;
	struct blk_disk_stats s;
};

#define BLK_DISK_SLOTS_BITS 4
#define BLK_DISK_SLOTS (1 << BLK_DISK_SLOTS_BITS)

/* The slot of disk dev in blk_disk_slots. */
static inline __u32 blk_disk_slot_idx(__u32 dev)
{
	return il_hash_bits(dev, BLK_DISK_SLOTS_BITS);
}

/* Per (disk, cgroup) totals of the aggregate mode: made in user space from blk_proc_cg's
 * entries of the disk and cgroup (il_blk_cgroups_of()), not a map of their own. */
struct blk_cg_key {
	__u32 dev;
	__u32 pad;
	__u64 cgroup;        /* as struct blk_io.cgroup */
};

struct blk_cg {
	__u64 ios, bytes;    /* bytes: reads' and writes' (not a discard's range) */
	__u64 before_q_ns;   /* sum of BEFORE_Q */
	__u64 queue_ns;      /* Q2G + G2I + I2D */
	__u64 device_ns;     /* D2C (Q2C for bio-based devices) */
	__u32 tgid;          /* the last submitter seen (for its /proc/PID/cgroup) */
	__u32 held;          /* I/Os whose first bio a worker queued for its submitter (held
			      * before Q, as blk-throttle does: struct blk_io.held) */
	__u64 tgid_ns;       /* when tgid was seen (its I/O's completion, bpf_ktime_get_ns()) */
};

/* Per (disk, submitting process) totals of the aggregate mode: who holds the disk. The
 * submitter is the task that submitted the I/O's first bio (struct blk_io.tgid, taken at
 * submission or Q, never at completion): a flusher or the journal thread for writeback, the
 * process itself for direct I/O and reads. Made in user space from blk_proc_cg's entries of
 * the disk and process (il_blk_procs_of()). */
struct blk_proc_key {
	__u32 dev;           /* the disk, major << 20 | minor */
	__u32 tgid;          /* the submitter's process, 0 unknown */
};

/* Per (disk, submitting process, cgroup) totals of the aggregate mode (map `blk_proc_cg`,
 * value struct blk_proc): one map a completion adds to where a (disk, process) map and a
 * (disk, cgroup) map took a hash lookup each (issue 25); user space sums it both ways. */
struct blk_proc_cg_key {
	__u32 dev;           /* the disk, major << 20 | minor */
	__u32 tgid;          /* the submitter's process, 0 unknown */
	__u64 cgroup;        /* as struct blk_io.cgroup */
};

struct blk_proc {
	__u64 ios, bytes, write_bytes; /* bytes: reads' and writes' (not a discard's range) */
	__u64 before_q_ns;   /* sum of BEFORE_Q */
	__u64 queue_ns;      /* Q2G + G2I + I2D */
	__u64 device_ns;     /* D2C (Q2C for bio-based devices): its time on the device */
	__u64 cgroup;        /* as struct blk_io.cgroup (in blk_proc_cg: its key's); of a
			      * (disk, process), the last seen */
	__u32 held;          /* I/Os held before Q (struct blk_io.held) */
	__u32 pad;
	__u64 last_ns;       /* when cgroup and comm were seen (the I/O's completion,
			      * bpf_ktime_get_ns()): the map is per CPU, the readers take the
			      * latest CPU's */
	char comm[IL_TASK_COMM_LEN]; /* the submitting thread's, the last seen */
};

/* A (disk, process, cgroup) entry in map `blk_pcg_slots`, an array of BLK_PCG_SLOTS: its key
 * picks its slot (blk_pcg_slot_idx()), which the first key to come takes for good; a key whose
 * slot another holds goes to blk_proc_cg. An array's lookup is inlined where the LRU hash's
 * hashed the key and took its lock (about 80 ns of block_rq_complete's time a request here).
 * A slot's key is written without an atomic compare (none on 5.10): two CPUs taking one slot
 * at once may leave it a key neither has, with nothing counted (ios 0), which the readers
 * skip; each of them then counts into blk_proc_cg. The same shape as user space's rows. */
struct blk_pcg_slot {
	struct blk_proc_cg_key k;
	struct blk_proc v;
};

#define BLK_PCG_SLOTS_BITS 12
#define BLK_PCG_SLOTS (1 << BLK_PCG_SLOTS_BITS)

/* The slot of key (dev, tgid, cgroup): its two words, the cgroup's mixed in first. */
static inline __u32 blk_pcg_slot_idx(__u32 dev, __u32 tgid, __u64 cgroup)
{
	return il_hash_bits(((__u64)tgid << 32 | dev) ^ (cgroup * 0x9E3779B97F4A7C15ULL),
			    BLK_PCG_SLOTS_BITS);
}

#endif
