/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Attribution ("who"): the processes, files and disks behind each layer's time, kept in the
 * kernel in bounded LRU maps that the layers feed (bpf/lib/who.bpf.h) and user/lib/who.c
 * reads. Identity is taken where the work is submitted (the syscall, the bio's submission),
 * never at completion, which runs in another context. Fixed-width types only.
 */
#ifndef IOLAYER_WHO_H
#define IOLAYER_WHO_H

#include "lib/shared.h"
#include "lib/fs.h"

#define WHO_MAX_PROCS 1024      /* processes kept at once (LRU: the least recent is evicted) */
#define WHO_MAX_FILES 4096      /* files kept at once (LRU) */
#define WHO_MAX_PROC_DISKS 4096 /* (process, disk) pairs kept at once (LRU) */
#define WHO_SLOTS 40            /* log2 slots of per-process latency in ns: up to 2^40 ns (18 min) */
#define WHO_PATH_DEPTH 8        /* names kept per file, from the file up */
#define WHO_NAME_LEN 64         /* bytes kept per name, NUL included */
#define WHO_FILE_PIDS 4         /* processes remembered per file */
#define WHO_PROC_FILES 4        /* files whose time is kept per process (who_proc.files) */
#define WHO_IDENT_NS 1000000000ULL /* a process's identity is read again after this long, ns */

/* The settings, one struct in .rodata (`who_cfg`), filled by user space (user/lib/who.c). */
struct who_cfg {
	__u8 on;                 /* 0: the layers skip attribution entirely (dead code for the verifier) */
	__u8 bio_two_args;       /* block_bio_queue takes (q, bio): kernels before 5.11 */
	__u8 bio_in_blk;         /* the block layer's block_bio_queue program attributes the bios
				  * (who_bio_seen() in blk_bio_queue()): who_bio_* is not loaded, one
				  * program runs where two did (il_who_bio_in_block()) */
	__u8 users_partial;      /* file operations are traced for some processes only (-p, -C):
				  * a file's users (who_file.pids) are those, so a process that
				  * writes a file's pages and is none of them is not taken as writing
				  * them back for others (its bytes stay its own) */
	__u8 pad[4];
};

/* One file (key: superblock dev, inode). */
struct who_file_key {
	__u32 dev;               /* super_block.s_dev, kernel encoding (major << 20 | minor) */
	__u32 gen;               /* inode.i_generation: a new file that gets a deleted one's
				  * inode number (ext4 and xfs reuse them) is another file */
	__u64 ino;
};

/* One file of a process and the time its calls on it took, ns. */
struct who_proc_file {
	struct who_file_key k;
	__u64 ns;
};

/* One process (key: tgid). Times in ns, sizes in bytes. comm is the process's name (its
 * thread group leader's comm, as ps shows it; renamed by exec), taken at each traced I/O.
 * cgroup_id is the task's cgroup on the v2 (default) hierarchy, io_cgroup_id the cgroup of its
 * io (blkio) controller, on a v1 blkio hierarchy where one is mounted: both are kernfs node
 * ids, the inode numbers of the cgroups' directories (user space finds their paths). */
#define WHO_PROC_KTHREAD 1       /* flags: a kernel thread (no mm): the flusher, jbd2, ... */
struct who_proc {
	char comm[IL_TASK_COMM_LEN];
	__u64 cgroup_id;
	__u64 io_cgroup_id;
	__u32 flags;                         /* WHO_PROC_* */
	__u32 pad;
	__u64 op_count[FS_OP__MAX];          /* file operations completed (enum fs_op) */
	__u64 op_ns[FS_OP__MAX];             /* their time */
	__u64 op_slots[FS_OP__MAX][WHO_SLOTS]; /* log2 histogram of their latency, ns */
	__u64 read_bytes, write_bytes;       /* returned by read/write calls on traced files */
	__u64 iowait_count, iowait_ns;       /* sleeps in I/O wait */
	/* bios submitted (block_bio_queue) from this process: not counted here but summed by user
	 * space from its who_pd entries (il_who_read()), so that a bio need not look the
	 * process's entry up (who_bio_seen()) */
	__u64 bios, bio_bytes, bio_write_bytes;
	/* The files its calls took the most time on, counted the Space-Saving way (Metwally,
	 * Agrawal, El Abbadi, 2005): a file not among them takes the place of the one with the
	 * least time and adds to that count. A count is thus at most that least count over the
	 * file's own time, and a file that took over a quarter of the process's file time is
	 * always among them (however many processes share it: who_file.pids keeps 4). */
	struct who_proc_file files[WHO_PROC_FILES];
	__u64 ident_ns;                      /* bpf_ktime_get_ns() when comm, cgroups and flags
					      * were last read (who_identity_fresh) */
	__u64 ident_mm;                      /* task_struct.mm then: an exec changes it */
};

struct who_file {
	__u64 op_count[FS_OP__MAX];
	__u64 op_ns[FS_OP__MAX];
	__u64 read_bytes, write_bytes;       /* through traced calls */
	__u64 bio_write_bytes, bio_read_bytes; /* page-cache bios of this file's pages, by anyone
						* (the writeback of a flusher included) */
	__u64 foreign_write_bytes;           /* of bio_write_bytes, those another task than its users
					      * (pids[]) submitted: a kernel thread (the flusher, the
					      * journal), or a process writing back pages it did not dirty */
	__u32 rdev;                          /* a block device's inode (the journal's and metadata
					      * blocks' page cache): its device, else 0 */
	__u32 cut;                           /* bit i: names[i] was cut, its dentry's name being
					      * WHO_NAME_LEN bytes or longer */
	__u32 pids[WHO_FILE_PIDS];           /* processes that did traced calls on it, first seen */
	__u32 flusher_pid;                   /* the last kernel thread that wrote its pages back */
	__u8 depth;                          /* names used; names[0] is the file's own name */
	__u8 deeper;                         /* the path has more than WHO_PATH_DEPTH names */
	__u8 more_pids;                      /* more processes than pids[] holds did calls on it */
	__u8 dir;                            /* a directory (opened: a listing, a lookup base) */
	char names[WHO_PATH_DEPTH][WHO_NAME_LEN];
};

/* One (process, disk): the bios it submitted there (and user space sums them per process:
 * il_who_procs_bios()). */
struct who_pd_key {
	__u32 tgid;
	__u32 dev;               /* the whole disk, major << 20 | minor */
};

struct who_pd {
	__u64 bios, bytes, write_bytes;
	__u64 foreign_bytes;     /* of write_bytes, pages of files it does not use (who_file.pids):
				  * written back for their users */
	__u64 dirtied_bytes;     /* pages it dirtied that another task wrote back to the disk
				  * (writeback:writeback_mark_inode_dirty names the dirtier) */
	char comm[IL_TASK_COMM_LEN]; /* its comm when it dirtied them (it may not be traced) */
};

/* A (process, disk) entry in the array who_pd_slots, looked up before who_pd: the key's slot
 * (who_pd_slot_idx()) is taken for good by the first key that finds it free (il_slot_claim():
 * two takers at once both back off); a key whose slot another holds goes to who_pd. An
 * array's lookup is inlined where the LRU hash's is a helper call that hashes the key and
 * takes its lock (about 70 ns of block_bio_queue's time a bio here). A key taken into its slot
 * while another CPU, finding the slot not yet its own, counted into who_pd is in both: the
 * reader sums them (il_who_read()). k's word 0: free (a tgid is never 0 here). */
struct who_pd_slot {
	struct who_pd_key k;
	__u32 claims;
	__u32 pad;
	struct who_pd v;
};

#define WHO_PD_SLOTS_BITS 12
#define WHO_PD_SLOTS (1 << WHO_PD_SLOTS_BITS)

/* The slot of key (tgid, dev) in who_pd_slots. */
static inline __u32 who_pd_slot_idx(__u32 tgid, __u32 dev)
{
	return il_hash_bits((__u64)dev << 32 | tgid, WHO_PD_SLOTS_BITS);
}

/* New entries put into each LRU map since start (array `who_inserts`, index enum who_map):
 * user space subtracts what is still there to count what was evicted. */
enum who_map { WHO_MAP_PROCS, WHO_MAP_FILES, WHO_MAP_PD, WHO_MAP__MAX };

#endif
