/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Attribution: who is behind each layer's time (types and maps in lib/who.h). The other
 * layers call in where they know the process: the fs layer when a call returns (who_fs), the
 * I/O-wait layer when a sleep ends (who_iowait), and the block layer's block_bio_queue
 * program (who_bio), which runs in the context of whoever submits the bio. Everything is
 * skipped when who_cfg.on is 0 (the verifier drops it as dead code), so tools without
 * attribution pay nothing. Include after lib/common.bpf.h and lib/core_fixes.bpf.h.
 */
#ifndef IOLAYER_WHO_BPF_H
#define IOLAYER_WHO_BPF_H

#include "lib/core_fixes.bpf.h"
#include "lib/who.h"

/* The address of iomap_dio_bio_end_io, the end_io of iomap's direct-I/O bios (0 when the
 * kernel has none): such a bio's bi_private is its struct iomap_dio (fs/iomap/direct-io.c),
 * whose iocb names the file and, for a synchronous direct I/O, whose submit.waiter is the
 * submitter. Set by user space from /proc/kallsyms after load, before attach
 * (blk_loaded, user/lib/block.c), by blk_dio_end_io_find or from /proc/kallsyms: a
 * typeless __ksym made libbpf read all of kallsyms at load. */
volatile __u64 il_iomap_dio_end_io = 0;

/* The body of blk_dio_end_io_find (BLK_BIO_PROGS), a BPF_PROG_TYPE_SYSCALL program that
 * user space runs once after load (BPF_PROG_TEST_RUN) where the kernel has
 * bpf_kallsyms_lookup_name (5.16+): il_iomap_dio_end_io from the kernel's own symbol table,
 * a binary search, instead of formatting /proc/kallsyms up to it (~44,000 lines, 15-40 ms of
 * a tool's start-up). 0; the address stays 0 when the kernel has no such symbol. */
static __always_inline int blk_dio_end_io_lookup(void)
{
	char name[] = "iomap_dio_bio_end_io";
	__u64 addr = 0;

	if (!bpf_kallsyms_lookup_name(name, sizeof(name), 0, &addr))
		il_iomap_dio_end_io = addr;
	return 0;
}

/* The direct I/O bio belongs to, NULL when it is not an iomap direct I/O's (bio.bi_end_io,
 * bi_private). btf: bio is a BTF pointer (a tp_btf program's), read with plain loads. */
static __always_inline struct iomap_dio *il_bio_iomap_dio(struct bio *bio, bool btf)
{
	__u64 end_io = il_iomap_dio_end_io;

	if (!bpf_core_type_exists(struct iomap_dio) || !end_io)
		return NULL;
	if ((unsigned long)IL_BTF_READ(btf, bio, bi_end_io) != end_io)
		return NULL;
	return IL_BTF_READ(btf, bio, bi_private);
}

#ifdef IL_NO_WHO
/* A tool that never attributes (fsslower, iowaitstack) defines IL_NO_WHO before including
 * the layers: the calls below compile to nothing, and the object has no attribution maps and
 * no relocations against the cgroup and kernfs types, each of which costs libbpf a search
 * of the kernel's whole BTF at load time. */
static __always_inline void who_fs(__u64 pid_tgid, enum fs_op op, struct file *file, __u64 delta,
				   __s64 ret, __u64 now, struct task_struct *task, bool btf) {}
static __always_inline void who_fs_of(__u64 pid_tgid, enum fs_op op, struct file *file, __u64 delta,
				      __s64 ret, bool btf) {}
static __always_inline void who_submitter(__u32 tgid, __u64 now, bool btf) {}
static __always_inline void who_iowait(struct task_struct *task, __u32 tgid, __u64 delta,
				       __u64 now, bool btf) {}
#define WHO_PROGS
#else

/* Settings, filled by user space before load (struct who_cfg, user/lib/who.c). */
const volatile struct who_cfg who_cfg = {};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, WHO_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct who_proc);
} who_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, WHO_MAX_FILES);
	__type(key, struct who_file_key);
	__type(value, struct who_file);
} who_files SEC(".maps");

/* Also each process's bio totals, which user space sums (il_who_procs_bios()), where a bio
 * looked its process's entry up to add to it too. (Per CPU, BPF_MAP_TYPE_LRU_PERCPU_HASH, its
 * lookup is a helper call the verifier does not inline: no cheaper than the atomic adds.) */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, WHO_MAX_PROC_DISKS);
	__type(key, struct who_pd_key);
	__type(value, struct who_pd);
} who_pd SEC(".maps");

/* who_pd's slots (struct who_pd_slot, who.h), looked up first. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, WHO_PD_SLOTS);
	__type(key, __u32);
	__type(value, struct who_pd_slot);
} who_pd_slots SEC(".maps");

/* The process that last dirtied each file's pages (writeback:writeback_mark_inode_dirty, in
 * the dirtier's context): whose pages the flusher writes back, also of processes whose file
 * operations are not traced (-p). */
struct who_dirtier {
	__u32 tgid;
	__u32 pad;
	char comm[IL_TASK_COMM_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, WHO_MAX_FILES);
	__type(key, struct who_file_key);
	__type(value, struct who_dirtier);
} who_dirtiers SEC(".maps");

/* New keys inserted per map (enum who_map), per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, WHO_MAP__MAX);
	__type(key, __u32);
	__type(value, __u64);
} who_inserts SEC(".maps");

/* Zeroed values to insert from (too large for the BPF stack). */
static const struct who_proc who_zero_proc;
static const struct who_file who_zero_file;

static __always_inline void who_count_insert(enum who_map m)
{
	__u32 k = m;
	__u64 *v = bpf_map_lookup_elem(&who_inserts, &k);

	if (v)
		*v += 1;
}

/* The value of key in LRU map, inserted from zero when new (counted). NULL when the map
 * refuses (counted as IL_DROP_MAP_FULL). */
static __always_inline void *who_get(void *map, const void *key, const void *zero, enum who_map m,
				     bool *is_new)
{
	void *v = bpf_map_lookup_elem(map, key);

	*is_new = false;
	if (v)
		return v;
	if (!bpf_map_update_elem(map, key, zero, BPF_NOEXIST)) {
		who_count_insert(m);
		*is_new = true;
	}
	v = bpf_map_lookup_elem(map, key);
	if (!v)
		il_drop(IL_DROP_MAP_FULL);
	return v;
}

/* Names of the dentries from d up to (not including) its filesystem's root: d_name.name,
 * following d_parent (include/linux/dcache.h). */
static __always_inline void who_fill_names(struct who_file *f, struct dentry *d)
{
	int i;

	f->depth = 0;
	f->cut = 0;
	for (i = 0; i < WHO_PATH_DEPTH; i++) {
		struct dentry *parent = BPF_CORE_READ(d, d_parent);

		if (!d || !parent || parent == d)
			return;
		bpf_probe_read_kernel_str(f->names[i], WHO_NAME_LEN, BPF_CORE_READ(d, d_name.name));
		if (BPF_CORE_READ(d, d_name.len) >= WHO_NAME_LEN)
			f->cut |= 1u << i;
		f->depth = i + 1;
		d = parent;
	}
	f->deeper = BPF_CORE_READ(d, d_parent) != d;
}

/* The key of inode's file entry (struct inode: i_sb->s_dev, i_generation, i_ino). btf: inode
 * is a BTF pointer (read through one), read with plain loads; else probe reads. */
static __always_inline void who_file_key_btf(struct inode *inode, struct who_file_key *k, bool btf)
{
	k->dev = btf ? inode->i_sb->s_dev : BPF_CORE_READ(inode, i_sb, s_dev);
	k->gen = IL_BTF_READ(btf, inode, i_generation);
	k->ino = IL_BTF_READ(btf, inode, i_ino);
}

static __always_inline void who_file_key_of(struct inode *inode, struct who_file_key *k)
{
	who_file_key_btf(inode, k, false);
}

/* A new file entry (dev, gen, ino) filled in from its inode (kernel address inode_addr):
 * whether it is a block device (i_mode, i_rdev) or a directory, and its names from dentry
 * d_addr (0: the inode's first alias, inode->i_dentry). A global function, which the
 * verifier checks once per program, not on every path that reaches it: a file's path walk
 * multiplied the paths of the fs layer's exits (about 9 ms of iolayer's start-up each). 0,
 * or -1 when the entry is gone already. */
__noinline int who_file_fill(__u32 dev, __u32 gen, __u64 ino, __u64 inode_addr, __u64 d_addr)
{
	struct who_file_key k = { .dev = dev, .gen = gen, .ino = ino };
	struct inode *inode = (void *)inode_addr;
	struct dentry *d = (void *)d_addr;
	struct who_file *f = bpf_map_lookup_elem(&who_files, &k);
	__u16 mode;

	if (!f)
		return -1;
	mode = BPF_CORE_READ(inode, i_mode) & 00170000; /* S_IFMT */
	if (mode == 0060000) /* S_ISBLK */
		f->rdev = BPF_CORE_READ(inode, i_rdev);
	f->dir = mode == 0040000; /* S_ISDIR */
	if (!d) {
		struct hlist_node *first = BPF_CORE_READ(inode, i_dentry.first);

		if (first)
			d = (void *)first - bpf_core_field_offset(struct dentry, d_u.d_alias);
	}
	if (d)
		who_fill_names(f, d);
	return 0;
}

/* The file entry k of inode (who_file_key_of), made when missing and then filled in
 * (who_file_fill; d may be NULL). */
static __always_inline struct who_file *who_file_get_of(const struct who_file_key *k,
						       struct inode *inode, struct dentry *d)
{
	struct who_file *f;
	bool is_new;

	f = who_get(&who_files, k, &who_zero_file, WHO_MAP_FILES, &is_new);
	if (f && is_new)
		who_file_fill(k->dev, k->gen, k->ino, (__u64)inode, (__u64)d);
	return f;
}

/* The file entry k of file (made when missing, as who_file_get_of; file may be a BTF pointer:
 * its inode and dentry are read only for a new entry, with probe reads, which give the global
 * who_file_fill the numbers it takes). */
static __always_inline struct who_file *who_file_get_by(const struct who_file_key *k,
						       struct file *file)
{
	struct who_file *f;
	bool is_new;

	f = who_get(&who_files, k, &who_zero_file, WHO_MAP_FILES, &is_new);
	if (f && is_new)
		who_file_fill(k->dev, k->gen, k->ino, (__u64)BPF_CORE_READ(file, f_inode),
			      (__u64)BPF_CORE_READ(file, f_path.dentry));
	return f;
}

/* The file entry of inode (NULL: none), as who_file_get_of. */
static __always_inline struct who_file *who_file_get(struct inode *inode, struct dentry *d)
{
	struct who_file_key k = {};

	if (!inode)
		return NULL;
	who_file_key_of(inode, &k);
	return who_file_get_of(&k, inode, d);
}

/* The kernfs id of the cgroup that task's io controller (blkio on v1) charges it to:
 * task->cgroups->subsys[io_cgrp_id]->cgroup->kn->id (include/linux/cgroup-defs.h); 0 on a
 * kernel without CONFIG_BLK_CGROUP. */
static __always_inline __u64 who_io_cgroup_id(struct task_struct *task)
{
	struct cgroup *cg = il_task_io_cgroup(task);

	return cg ? BPF_CORE_READ(cg, kn, id) : 0;
}

/* Who task is, into p: its process's name (the thread group leader's comm: a worker thread
 * such as redis's bio_aof does not rename the process; an exec does), its cgroups, and
 * whether it is a kernel thread. About 12 probe reads: see who_identity_fresh. */
static __always_inline void who_identity(struct who_proc *p, struct task_struct *task)
{
	BPF_CORE_READ_STR_INTO(&p->comm, task, group_leader, comm);
	p->cgroup_id = BPF_CORE_READ(task, cgroups, dfl_cgrp, kn, id);
	p->io_cgroup_id = who_io_cgroup_id(task);
	p->flags = BPF_CORE_READ(task, flags) & 0x00200000 /* PF_KTHREAD */ ? WHO_PROC_KTHREAD : 0;
}

/* Read process tgid's identity from task (kernel address task_addr) into its who_procs entry
 * (who_identity), noting the task's address space (task_struct.mm) and time now. A global function, which the verifier
 * checks once per program: inlined, its dozen probe reads and branches were walked again on
 * every path of each program that refreshes an identity (about 5,000 of block_bio_queue's
 * 25,000 instructions verified). Its callers are on the cold path (a new entry, an exec, once
 * a WHO_IDENT_NS). 0, or -1 when the entry is gone. */
__noinline int who_identity_read(__u32 tgid, __u64 task_addr, __u64 now)
{
	struct task_struct *task = (struct task_struct *)task_addr;
	struct who_proc *p = bpf_map_lookup_elem(&who_procs, &tgid);

	if (!p)
		return -1;
	who_identity(p, task);
	p->ident_mm = (__u64)BPF_CORE_READ(task, mm);
	p->ident_ns = now;
	return 0;
}

/* Refresh p's identity (process tgid's entry) from task (who_identity_read()) when the entry
 * is new, when the task's address space is another (task_struct.mm: an exec, which renames
 * it), or when it was read WHO_IDENT_NS ago or more (a move to another cgroup, a
 * prctl(PR_SET_NAME)): two helper calls at a traced I/O instead of about twelve. now: the
 * caller's bpf_ktime_get_ns(), 0: read here. btf: task is a BTF pointer, its mm a plain load;
 * its address goes to the global function as a number (a probe read of the local pointer: the
 * verifier passes no pointer where a global function takes a scalar). */
static __always_inline void who_identity_fresh_btf(struct who_proc *p, __u32 tgid,
						   struct task_struct *task, bool is_new, __u64 now,
						   bool btf)
{
	__u64 mm, addr = 0;

	if (btf) /* its pointers walked below */
		task = IL_UNTRUSTED(task, task);
	mm = (__u64)IL_BTF_READ(btf, task, mm);

	if (!now)
		now = bpf_ktime_get_ns();

	if (!is_new && mm == p->ident_mm && now - p->ident_ns < WHO_IDENT_NS)
		return;
	if (btf)
		bpf_probe_read_kernel(&addr, sizeof(addr), &task);
	else
		addr = (__u64)task;
	who_identity_read(tgid, addr, now);
}

static __always_inline void who_identity_fresh(struct who_proc *p, __u32 tgid,
					       struct task_struct *task, bool is_new, __u64 now)
{
	who_identity_fresh_btf(p, tgid, task, is_new, now, false);
}

/* The current process's entry, its identity fresh (who_identity_fresh() at now). task: the
 * current task's BTF pointer when the caller has it (its fields plain loads), else NULL. */
static __always_inline struct who_proc *who_proc_current_of(__u32 tgid, __u64 now,
							   struct task_struct *task)
{
	bool is_new;
	struct who_proc *p = who_get(&who_procs, &tgid, &who_zero_proc, WHO_MAP_PROCS, &is_new);

	if (p && task)
		who_identity_fresh_btf(p, tgid, task, is_new, now, true);
	else if (p)
		who_identity_fresh(p, tgid, (void *)bpf_get_current_task(), is_new, now);
	return p;
}

/* The current task as a BTF pointer, for plain loads of its fields: in a tp_btf program (btf)
 * on a kernel with bpf_get_current_task_btf() (5.11+, commit 3ca1032ab7ab; a CO-RE test of
 * the helper's number, so older kernels load the other branch); else NULL. */
static __always_inline struct task_struct *who_task_btf(bool btf)
{
	if (btf && bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_get_current_task_btf))
		return IL_UNTRUSTED(bpf_get_current_task_btf(), task);
	return NULL;
}

/* Remember tgid among the processes of file f (the first WHO_FILE_PIDS seen). */
static __always_inline void who_file_pid(struct who_file *f, __u32 tgid)
{
	for (int i = 0; i < WHO_FILE_PIDS; i++) {
		if (f->pids[i] == tgid)
			return;
		if (!f->pids[i]) {
			f->pids[i] = tgid;
			return;
		}
	}
	f->more_pids = 1;
}

/* Add ns to file k's time among process p's files (who_proc.files, Space-Saving): its own
 * count when it is there, else the place and count of the one with the least time. Racy
 * between CPUs (plain stores): at worst a count blurred by one call. */
static __always_inline void who_proc_file_add(struct who_proc *p, const struct who_file_key *k,
					      __u64 ns)
{
	const __u64 *kw = (const __u64 *)k;
	struct who_proc_file *e;
	__u64 least = ~0ULL;

	if (!k->ino)
		return;
	/* the key's two words compared at once (a compare per field: three branches an entry,
	 * for the CPU to guess and the verifier to walk); three passes over constant indexes:
	 * the verifier checks each once, where a variable index of the least entry multiplied
	 * its paths */
	_Static_assert(sizeof(*k) == 2 * sizeof(__u64), "struct who_file_key is two words");
	for (int i = 0; i < WHO_PROC_FILES; i++) {
		const __u64 *ew = (const __u64 *)&p->files[i].k;

		if (!((ew[0] ^ kw[0]) | (ew[1] ^ kw[1]))) {
			__sync_fetch_and_add(&p->files[i].ns, ns);
			return;
		}
	}
	for (int i = 0; i < WHO_PROC_FILES; i++)
		least = p->files[i].ns < least ? p->files[i].ns : least;
	for (int i = 0; i < WHO_PROC_FILES; i++) {
		e = &p->files[i];
		if (e->ns == least) {
			e->k = *k;
			e->ns += ns;
			return;
		}
	}
}

static __always_inline __u32 who_slot(__u64 ns)
{
	__u64 s = il_hist_slot(ns, WHO_SLOTS);

	asm volatile("" : "+r"(s)); /* keep the bound visible to older verifiers */
	return s < WHO_SLOTS ? s : WHO_SLOTS - 1;
}

/* fs layer: a traced call (of the current thread when current) on file returned ret (bytes
 * for R/W) after delta ns, at now (0: the clock is read here when needed). task: the current
 * task's BTF pointer, or NULL; btf: file is a BTF pointer (the raw_syscalls _cast programs'),
 * its fields and its inode's read with plain loads, where probe reads cost a helper call each
 * (about 7 a call). Races between threads of one process on other CPUs only blur counts by
 * an increment: the adds are atomic, the histogram slots plain (one slot, rarely contended). */
static __always_inline void who_fs_add(__u64 pid_tgid, enum fs_op op, struct file *file, __u64 delta,
				       __s64 ret, bool current, __u64 now, struct task_struct *task,
				       bool btf)
{
	__u32 tgid = pid_tgid >> 32, o = op < FS_OP__MAX ? op : 0;
	struct who_file_key k = {};
	struct inode *inode;
	struct who_proc *p;
	struct who_file *f;
	bool is_new;

	if (!who_cfg.on)
		return;
	if (current)
		p = who_proc_current_of(tgid, now, task);
	else
		p = who_get(&who_procs, &tgid, &who_zero_proc, WHO_MAP_PROCS, &is_new);
	if (p) {
		__sync_fetch_and_add(&p->op_count[o], 1);
		__sync_fetch_and_add(&p->op_ns[o], delta);
		__sync_fetch_and_add(&p->op_slots[o][who_slot(delta)], 1);
		if (ret > 0 && op == FS_OP_READ)
			__sync_fetch_and_add(&p->read_bytes, ret);
		if (ret > 0 && op == FS_OP_WRITE)
			__sync_fetch_and_add(&p->write_bytes, ret);
	}
	inode = IL_BTF_READ(btf, file, f_inode);
	if (!inode)
		return;
	who_file_key_btf(inode, &k, btf);
	/* before the file's entry, whose making (a path walk) multiplies the verifier's paths */
	if (p)
		who_proc_file_add(p, &k, delta);
	f = who_file_get_by(&k, file);
	if (f) {
		/* o again, bounded anew: 6.1's verifier loses its bound across the global
		 * who_file_fill() call above (a spill it does not link to the checked value) */
		asm volatile("" : "+r"(o));
		o = o < FS_OP__MAX ? o : 0;
		__sync_fetch_and_add(&f->op_count[o], 1);
		__sync_fetch_and_add(&f->op_ns[o], delta);
		if (ret > 0 && op == FS_OP_READ)
			__sync_fetch_and_add(&f->read_bytes, ret);
		if (ret > 0 && op == FS_OP_WRITE)
			__sync_fetch_and_add(&f->write_bytes, ret);
		who_file_pid(f, tgid);
	}
}

static __always_inline void who_fs(__u64 pid_tgid, enum fs_op op, struct file *file, __u64 delta,
				   __s64 ret, __u64 now, struct task_struct *task, bool btf)
{
	who_fs_add(pid_tgid, op, file, delta, ret, true, now, task, btf);
}

/* fs layer: a call that thread pid_tgid made (not the current task: an io_uring request that
 * completes in another context) on file returned ret after delta ns. Its process's identity
 * is the one who_submitter() took when it was submitted. btf: file is a BTF pointer (an
 * untrusted cast of it), read with plain loads, as for who_fs_add(). */
static __always_inline void who_fs_of(__u64 pid_tgid, enum fs_op op, struct file *file, __u64 delta,
				      __s64 ret, bool btf)
{
	who_fs_add(pid_tgid, op, file, delta, ret, false, 0, NULL, btf);
}

/* Per CPU: the process whose entry and identity who_sure_of() last made sure of (for an
 * io_uring submission or a bio), and when (its task's mm then, as who_identity_fresh()
 * compares). */
struct who_sub_last {
	__u64 ns;
	__u64 mm;
	__u32 tgid;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct who_sub_last);
} who_sub_last SEC(".maps");

/* The current process (tgid) has an entry in who_procs and a fresh identity
 * (who_proc_current_of(), through bpf_get_current_task(): its fields probe reads) at now.
 * A global function: the verifier walks it once a program, where inlined in block_bio_queue
 * it walked it once for each state the block layer's part left (about 3,500 instructions of
 * that program's verification). 0, or -1 when who_procs is full. */
__noinline int who_proc_made_sure(__u32 tgid, __u64 now)
{
	return who_proc_current_of(tgid, now, NULL) ? 0 : -1;
}

/* The current process (tgid; task: the current task's BTF pointer or NULL, mm its mm as
 * read) has an entry in who_procs and a fresh identity: made sure of unless this CPU did so
 * for it last (who_sub_last), less than WHO_IDENT_NS ago. */
static __always_inline void who_sure_of(__u32 tgid, __u64 now, struct task_struct *task, __u64 mm)
{
	struct who_sub_last *l;
	__u32 zero = 0;

	l = bpf_map_lookup_elem(&who_sub_last, &zero);
	if (l && task && l->tgid == tgid && l->mm == mm && now - l->ns < WHO_IDENT_NS)
		return;
	if (who_proc_made_sure(tgid, now) || !l)
		return;
	l->tgid = tgid;
	l->mm = mm;
	l->ns = now;
}

/* The current task submits a request that completes elsewhere (io_uring): its process's
 * entry, with its identity, for who_fs_of(). btf: in a tp_btf program (who_task_btf()). */
static __always_inline void who_submitter(__u32 tgid, __u64 now, bool btf)
{
	struct task_struct *task;

	if (!who_cfg.on)
		return;
	task = who_task_btf(btf);
	/* the same process as this CPU's last submission, made sure of less than WHO_IDENT_NS
	 * ago, its address space the same: its entry is there, its identity fresh (an LRU hash
	 * lookup a request fewer under a submitting loop) */
	who_sure_of(tgid, now, task, task ? (__u64)task->mm : 0);
}

/* I/O-wait layer: task (tgid) slept delta ns in I/O wait, ending at now (bpf_ktime_get_ns()).
 * btf: task is a BTF pointer (a tp_btf program's), read with plain loads. */
static __always_inline void who_iowait(struct task_struct *task, __u32 tgid, __u64 delta,
				       __u64 now, bool btf)
{
	struct who_proc *p;
	bool is_new;

	if (!who_cfg.on)
		return;
	p = who_get(&who_procs, &tgid, &who_zero_proc, WHO_MAP_PROCS, &is_new);
	if (!p)
		return;
	who_identity_fresh_btf(p, tgid, task, is_new, now, btf);
	__sync_fetch_and_add(&p->iowait_count, 1);
	__sync_fetch_and_add(&p->iowait_ns, delta);
}

/* bio.bi_disk (with bi_partno) was replaced by bio.bi_bdev in 5.12, commit 309dca309fc3
 * ("block: store a block_device pointer in struct bio"). The whole disk's dev. */
struct bio___o {
	struct gendisk *bi_disk;
} __attribute__((preserve_access_index));

static __always_inline __u32 who_bio_dev(struct bio *bio)
{
	struct bio___o *old = (void *)bio;

	if (bpf_core_field_exists(old->bi_disk))
		return il_disk_dev(BPF_CORE_READ(old, bi_disk));
	return il_disk_dev(BPF_CORE_READ(bio, bi_bdev, bd_disk));
}

/* The inode whose page cache page belongs to (who_bio_inode(): the bio's first page), NULL
 * for anonymous or direct-I/O pages: page->mapping (struct address_space *, low bits set for
 * anon/movable pages: PAGE_MAPPING_FLAGS, include/linux/page-flags.h) ->host. The page may
 * be a tail page of a large folio (ext4 has them since 6.16, xfs since 5.18), whose mapping
 * field holds something else: the folio's head page is read instead, page->compound_head
 * less its tail bit 0 (include/linux/page-flags.h, since 4.6). */
static __always_inline struct inode *who_page_inode(struct page *page)
{
	unsigned long mapping, head;

	if (!page)
		return NULL;
	head = (unsigned long)BPF_CORE_READ(page, compound_head);
	if (head & 1)
		page = (struct page *)(head - 1);
	mapping = (unsigned long)BPF_CORE_READ(page, mapping);
	if (!mapping || (mapping & 3))
		return NULL;
	return BPF_CORE_READ((struct address_space *)mapping, host);
}

/* bio->bi_io_vec[0].bv_page's inode (who_page_inode()). */
static __always_inline struct inode *who_bio_inode(struct bio *bio)
{
	return who_page_inode(BPF_CORE_READ(bio, bi_io_vec, bv_page));
}

/* who_bio_inode() where btf (a tp_btf program's bio): the bio's vector and its first page
 * with plain loads. The page's compound_head and mapping are numbers with flag bits, which
 * the verifier types as pointers (list_head, address_space) and allows no bit test on: probe
 * reads, as in who_bio_inode(). Before them, the page's flags word (page.flags, its first
 * field; a memdesc_flags_t holding it in newer kernels, 6.18 here: a plain load either way):
 * a swap-backed page (PG_swapbacked: anonymous memory or shmem, the user buffer of a direct
 * I/O from fio, a database's buffer pool) is in no disk file's page cache, so its mapping is
 * not read: two probe reads fewer a bio, about 120 ns of block_bio_queue's 580 (4 KiB
 * O_DIRECT writes to a raw loop device). A shmem page's inode, which they used to name, was
 * never the file the bio writes. A tail page's flag is its head's (PF_NO_TAIL): such a page
 * is read as before. */
static __always_inline struct inode *who_bio_inode_btf(struct bio *bio, bool btf)
{
	struct page *page;

	if (!btf)
		return who_bio_inode(bio);
	page = bio->bi_io_vec ? bio->bi_io_vec->bv_page : NULL;
	if (page && (*(unsigned long *)page & (1UL << bpf_core_enum_value(enum pageflags, PG_swapbacked))))
		return NULL;
	return who_page_inode(page);
}

/* writeback_mark_inode_dirty(inode, flags), in the task that dirties the inode's pages: it
 * is their dirtier (looked up first: the tracepoint fires for every page dirtied). */
static __always_inline int who_dirty(struct inode *inode, __u32 flags)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct who_file_key k = {};
	struct who_dirtier v = { .tgid = tgid }, *old;

	if (!who_cfg.on || !(flags & il_i_dirty_pages()) || !inode || !BPF_CORE_READ(task, mm))
		return 0;
	who_file_key_of(inode, &k);
	old = bpf_map_lookup_elem(&who_dirtiers, &k);
	if (old && old->tgid == tgid)
		return 0;
	bpf_get_current_comm(v.comm, sizeof(v.comm));
	bpf_map_update_elem(&who_dirtiers, &k, &v, BPF_ANY);
	return 0;
}

/* The (process, disk) entry of key k: in its slot of who_pd_slots (taken when free), else in
 * who_pd (made when missing); NULL when who_pd is full. */
static __always_inline struct who_pd *who_pd_get(const struct who_pd_key *k)
{
	__u64 w = *(const __u64 *)k;
	__u32 i = who_pd_slot_idx(k->tgid, k->dev);
	struct who_pd_slot *sl = bpf_map_lookup_elem(&who_pd_slots, &i);
	bool is_new;

	if (sl && w) {
		if (*(volatile __u64 *)&sl->k == w)
			return &sl->v;
		if (il_slot_claim((__u64 *)&sl->k, &sl->claims)) {
			*(volatile __u64 *)&sl->k = w; /* its key's for good (claims stays 1) */
			return &sl->v;
		}
	}
	return who_get(&who_pd, k, &(struct who_pd){}, WHO_MAP_PD, &is_new);
}

/* bytes of file fk's pages written back to whole disk dev by submitter: for the process that
 * dirtied them (who_dirtiers), when it is another (who_pd.dirtied_bytes). */
static __always_inline void who_credit_dirtier(const struct who_file_key *fk, __u32 dev,
					       __u32 submitter, __u32 bytes)
{
	struct who_dirtier *d = bpf_map_lookup_elem(&who_dirtiers, fk);
	struct who_pd_key k = { .dev = dev };
	struct who_pd *pd;

	if (!d || d->tgid == submitter)
		return;
	k.tgid = d->tgid;
	pd = who_pd_get(&k);
	if (!pd)
		return;
	__sync_fetch_and_add(&pd->dirtied_bytes, bytes);
	__builtin_memcpy(pd->comm, d->comm, sizeof(pd->comm));
}

/* What block_bio_queue's handlers read of a bio, read once (il_bio_seen_read()) for the block
 * layer (blk_bio_queue()) and attribution (who_bio_seen()), which run in one program where
 * both are on (who_cfg.bio_in_blk). The file is read on first use (il_bio_seen_file()), its
 * entry in who_files looked up on first use (il_bio_seen_entry()). */
struct il_bio_seen {
	struct bio *bio;
	struct task_struct *task;  /* the current task's BTF pointer (who_task_btf()), or NULL */
	__u64 pid_tgid;            /* the task that queues the bio: tgid << 32 | pid */
	__u64 now;                 /* bpf_ktime_get_ns() at Q */
	struct block_device *bdev; /* bio.bi_bdev (5.12 and later), else NULL */
	struct iomap_dio *dio;     /* il_bio_iomap_dio() */
	struct inode *inode;       /* the bio's file (il_bio_seen_file()): the direct I/O's, else
				    * the inode whose page cache holds its first page; NULL none */
	struct dentry *dentry;     /* the direct I/O's file's dentry, else NULL */
	struct who_file *f;        /* the file's entry in who_files (il_bio_seen_entry()), or NULL */
	struct who_file_key fk;    /* its key, when inode is not NULL */
	__u32 bytes;               /* bio.bi_iter.bi_size */
	__u32 opf;                 /* bio.bi_opf */
	__u32 dev;                 /* the whole disk, major << 20 | minor (as who_bio_dev()) */
	__u32 sub_tgid;            /* the bio's submitter as the block layer knows it, when
				    * another process than the current task's (a worker queues
				    * it: blk-throttle's dispatch); 0: the current task's */
	char sub_comm[IL_TASK_COMM_LEN]; /* its name, with sub_tgid */
	bool btf;                  /* bio is a BTF pointer (a tp_btf program's): plain loads */
	bool file_read, entry_read; /* inode and dentry, f and fk, are filled in */
};

/* Fill s from bio with the fields every handler uses: bi_iter.bi_size, bi_opf, the disk
 * (bi_bdev->bd_disk, bi_disk before 5.12: major, first_minor), bi_end_io and bi_private (the
 * direct I/O). btf: bio is a BTF pointer, read with plain loads, no helper call. */
static __always_inline void il_bio_seen_read(struct il_bio_seen *s, struct bio *bio, bool btf)
{
	struct bio___o *old = (void *)bio;
	struct block_device *bdev;
	struct gendisk *disk;

	/* (BPF_CORE_READ() and IL_BTF_READ() take locals: s's own fields would be relocated) */
	s->bio = bio;
	s->btf = btf;
	/* the task's ids, name and mm through one helper call where it has a BTF pointer */
	s->task = who_task_btf(btf);
	s->pid_tgid = s->task ? (__u64)s->task->tgid << 32 | (__u32)s->task->pid :
				bpf_get_current_pid_tgid();
	s->now = bpf_ktime_get_ns();
	s->bytes = IL_BTF_READ(btf, bio, bi_iter.bi_size);
	s->opf = IL_BTF_READ(btf, bio, bi_opf);
	if (bpf_core_field_exists(old->bi_disk)) {
		disk = IL_BTF_READ(btf, old, bi_disk);
	} else {
		s->bdev = bdev = IL_BTF_READ(btf, bio, bi_bdev);
		disk = bdev ? IL_BTF_READ(btf, bdev, bd_disk) : NULL;
	}
	if (disk)
		s->dev = btf ? disk->major << 20 | disk->first_minor : il_disk_dev(disk);
	s->dio = il_bio_iomap_dio(bio, btf);
}

/* The bio's file, read once (see struct il_bio_seen): a direct I/O's (iocb->ki_filp: its
 * pages are the process's, in no page cache), else who_bio_inode(). */
static __always_inline struct inode *il_bio_seen_file(struct il_bio_seen *s)
{
	struct iomap_dio *dio = s->dio;

	if (s->file_read)
		return s->inode;
	s->file_read = true;
	if (dio && bpf_core_type_exists(struct iomap_dio)) {
		struct file *fl = BPF_CORE_READ(dio, iocb, ki_filp);

		s->inode = BPF_CORE_READ(fl, f_inode);
		s->dentry = BPF_CORE_READ(fl, f_path.dentry);
	} else {
		s->inode = who_bio_inode_btf(s->bio, s->btf);
	}
	return s->inode;
}

/* The bio's file's entry in who_files, made when missing (who_file_get_of()), looked up once;
 * NULL when the bio has no file or the map refuses. s->fk is its key. */
static __always_inline struct who_file *il_bio_seen_entry(struct il_bio_seen *s)
{
	if (s->entry_read)
		return s->f;
	s->entry_read = true;
	if (!il_bio_seen_file(s))
		return NULL;
	who_file_key_of(s->inode, &s->fk);
	s->f = who_file_get_of(&s->fk, s->inode, s->dentry);
	return s->f;
}

/* block_bio_queue: the current task submits bio s (il_bio_seen_read()): its process's bios,
 * its file's bios (and whether another task than the file's users wrote its pages back), its
 * (process, disk) totals. */
static __always_inline int who_bio_seen(struct il_bio_seen *s)
{
	__u32 op = s->opf & IL_REQ_OP_MASK, bytes = s->bytes;
	bool write = op == 1; /* REQ_OP_WRITE */
	struct who_pd_key k = { .tgid = s->pid_tgid >> 32, .dev = s->dev };
	struct who_proc *p = NULL;
	struct who_file *f;
	struct who_pd *pd;
	bool is_new, foreign = false;
	__u64 mm = 0;

	/* data only: REQ_OP_READ 0 and REQ_OP_WRITE 1 (the same in every kernel); a discard's
	 * or write-zeroes' size is a range, not bytes moved */
	if (!who_cfg.on || !bytes || op > 1)
		return 0;
	if (s->sub_tgid) { /* queued by a worker for it: its bytes, its entry (made here
			    * with the name the block layer has; its identity is read at its
			    * own next I/O) */
		k.tgid = s->sub_tgid;
		p = who_get(&who_procs, &k.tgid, &who_zero_proc, WHO_MAP_PROCS, &is_new);
		if (p && is_new)
			__builtin_memcpy(p->comm, s->sub_comm, sizeof(p->comm));
	} else {
		/* its entry and identity (its bios are counted in who_pd, which user space sums
		 * per process): no lookup while this CPU's bios are one process's */
		struct task_struct *task = s->task;

		mm = task ? (__u64)task->mm :
			    (__u64)BPF_CORE_READ((struct task_struct *)bpf_get_current_task(), mm);
		who_sure_of(k.tgid, s->now, task, mm);
	}
	f = il_bio_seen_entry(s);
	if (f) {
		/* a submitter a worker queues for is a kernel thread only when its entry says so;
		 * the current task is one when it has no mm */
		bool kthread = s->sub_tgid ? p && (p->flags & WHO_PROC_KTHREAD) : !mm;
		bool user = false;

		__sync_fetch_and_add(write ? &f->bio_write_bytes : &f->bio_read_bytes, bytes);
		for (int i = 0; i < WHO_FILE_PIDS; i++)
			user |= f->pids[i] == k.tgid;
		if (kthread) /* the flusher, or the journal */
			f->flusher_pid = k.tgid;
		/* pages its users dirtied, written back by another task: a kernel thread, or a
		 * process that is none of them (a sync, reclaim) */
		foreign = write && (kthread || (!who_cfg.users_partial && f->pids[0] && !user &&
						!f->more_pids));
		if (foreign)
			__sync_fetch_and_add(&f->foreign_write_bytes, bytes);
	}
	if (write && s->inode && (foreign || !f || !f->pids[0]))
		who_credit_dirtier(&s->fk, k.dev, k.tgid, bytes);
	pd = who_pd_get(&k);
	if (pd) {
		__sync_fetch_and_add(&pd->bios, 1);
		__sync_fetch_and_add(&pd->bytes, bytes);
		if (write)
			__sync_fetch_and_add(&pd->write_bytes, bytes);
		if (foreign)
			__sync_fetch_and_add(&pd->foreign_bytes, bytes);
	}
	return 0;
}

/* block_bio_queue in who's own program (the block layer does not follow bios): btf, as
 * il_bio_seen_read(). */
static __always_inline int who_bio(struct bio *bio, bool btf)
{
	struct il_bio_seen s = {};

	il_bio_seen_read(&s, bio, btf);
	return who_bio_seen(&s);
}

/* block_bio_queue(struct bio *) since 5.11; (struct request_queue *, struct bio *) before,
 * commit e8a676d61c07 ("block: simplify and extend the block_bio_merge tracepoint class"). */
static __always_inline struct bio *who_bio_arg(unsigned long long *ctx)
{
	return (struct bio *)il_ctx_arg01(ctx, who_cfg.bio_two_args);
}

#define WHO_PROGS                                                                      \
	SEC("tp_btf/block_bio_queue")                                                  \
	int BPF_PROG(who_bio_btf) { return who_bio(who_bio_arg(ctx), true); }               \
	SEC("raw_tp/block_bio_queue")                                                  \
	int BPF_PROG(who_bio_raw) { return who_bio(who_bio_arg(ctx), false); }               \
	SEC("tp_btf/writeback_mark_inode_dirty")                                       \
	int BPF_PROG(who_dirty_btf) { return who_dirty((struct inode *)ctx[0], (__u32)ctx[1]); } \
	SEC("raw_tp/writeback_mark_inode_dirty")                                       \
	int BPF_PROG(who_dirty_raw) { return who_dirty((struct inode *)ctx[0], (__u32)ctx[1]); }

#endif /* IL_NO_WHO */
#endif /* IOLAYER_WHO_BPF_H */
