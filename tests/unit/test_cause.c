/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Who makes it slow (user/lib/cause.h), on made-up windows: each rule of following a wait to
 * its cause, the victim's choice, and the line's bounds. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "libiolayer.h"

#define MS 1000000ULL
#define S (1000 * MS)
#define DISK ((7u << 20) | 3)

static struct il_split_op_row ops[8];
static struct il_split_wk_row wks[8];
static struct il_snap_bp bps[64];
static struct il_proc_cpu cpus[80];
static struct il_who_sum procs[8];

/* A 1 s window, nothing in it yet. */
static void window(struct il_window *w)
{
	memset(w, 0, sizeof(*w));
	memset(ops, 0, sizeof(ops));
	memset(wks, 0, sizeof(wks));
	memset(bps, 0, sizeof(bps));
	memset(cpus, 0, sizeof(cpus));
	memset(procs, 0, sizeof(procs));
	w->m.elapsed_s = 1;
	w->split.ops = ops;
	w->split.wakers = wks;
	w->bp = bps;
	w->cpu = cpus;
	w->view.procs = procs;
}

/* Process pid's calls of op: parts in ms (on CPU, run queue, I/O wait by block, by task, other). */
static void calls(struct il_window *w, __u32 pid, const char *comm, int op, __u64 on, __u64 rq,
		  __u64 blk, __u64 task, __u64 other)
{
	struct il_split_op_row *r = &ops[w->split.nops++];
	struct il_who_sum *p = &procs[w->view.nprocs++];

	r->k.tgid = pid;
	r->k.op = op;
	r->v.calls = 100;
	r->v.part_ns[SPLIT_ONCPU] = on * MS;
	r->v.part_ns[SPLIT_RUNQ] = rq * MS;
	r->v.part_ns[SPLIT_IOWAIT_BLOCK] = blk * MS;
	r->v.part_ns[SPLIT_IOWAIT_TASK] = task * MS;
	r->v.part_ns[SPLIT_OTHER] = other * MS;
	p->pid = pid;
	snprintf(p->comm, sizeof(p->comm), "%s", comm);
	snprintf(p->top_file, sizeof(p->top_file), "/data/%s.log", comm);
}

/* A waker of pid's op calls: kind, the waker (tgid, comm, kthread) or disk, ns ended, and the
 * waker's own I/O wait meanwhile on io_disk. */
static struct il_split_wk_row *woken(struct il_window *w, __u32 pid, int op, int kind, __u32 wk,
				     const char *comm, bool kthread, __u64 ms, __u64 io_ms)
{
	struct il_split_wk_row *r = &wks[w->split.nwakers++];

	r->k.tgid = pid;
	r->k.op = op;
	r->k.wk_kind = kind;
	r->k.wk_tgid = wk;
	r->k.wk_disk = kind == SPLIT_WK_BLOCK ? DISK : 0;
	r->v.ns = ms * MS;
	r->v.count = 10;
	r->v.io_ns = io_ms * MS;
	r->v.io_disk = DISK;
	r->v.kthread = kthread;
	snprintf(r->v.comm, sizeof(r->v.comm), "%s", comm ? comm : "");
	return r;
}

/* What a submitter put on the disk: bytes, device time in ms, time held before Q in ms. */
static struct il_snap_bp *sent(struct il_window *w, __u32 pid, const char *comm, __u64 bytes,
			       __u64 dev_ms, __u64 held_ms)
{
	struct il_snap_bp *b = &bps[w->nbp++];

	b->row.k.dev = DISK;
	b->row.k.tgid = pid;
	b->row.v.ios = 10;
	b->row.v.bytes = b->row.v.write_bytes = bytes;
	b->row.v.device_ns = dev_ms * MS;
	b->row.v.before_q_ns = held_ms * MS;
	b->row.v.held = held_ms ? 10 : 0;
	snprintf(b->row.v.comm, sizeof(b->row.v.comm), "%s", comm);
	return b;
}

static void cpu(struct il_window *w, __u32 pid, const char *comm, __u64 ms)
{
	struct il_proc_cpu *c = &cpus[w->ncpu++];

	c->pid = pid;
	snprintf(c->comm, sizeof(c->comm), "%s", comm);
	c->cpu_ns = ms * MS;
	c->cpus = 3;
}

static struct il_cause c;

/* A window with process 10's fsyncs: on ms on CPU, rq ms in the run queue, blk ms waiting
 * for its block I/O on DISK (its one waker row so far, wks[0]). */
static void fsyncer_runq(struct il_window *w, __u64 on, __u64 rq, __u64 blk)
{
	window(w);
	calls(w, 10, "fsyncer", FS_OP_FSYNC, on, rq, blk, 0, 0);
	woken(w, 10, FS_OP_FSYNC, SPLIT_WK_BLOCK, 0, NULL, false, blk, 0);
}

/* A window with process 10's 800 ms of fsyncs waiting for its block I/O on DISK. */
static void fsyncer(struct il_window *w)
{
	fsyncer_runq(w, 10, 0, 800);
}

/* Process 10 (comm)'s 800 ms of fsyncs woken by kernel thread 5 (kcomm), which ran 200 ms
 * and waited 600 ms for a CPU over the window (its schedstat). */
static void kthread_waiter(struct il_window *w, const char *comm, const char *kcomm)
{
	window(w);
	calls(w, 10, comm, FS_OP_FSYNC, 10, 0, 0, 0, 800);
	woken(w, 10, FS_OP_FSYNC, SPLIT_WK_TASK, 5, kcomm, true, 800, 0);
	cpu(w, 5, kcomm, 200);
	cpus[0].kthread = true;
	cpus[0].runq_ns = 600 * MS;
}

/* Its own I/O behind short-lived dd's that fill the disk: the neighbour, a group. */
static void test_neighbour(void **state)
{
	struct il_window w;

	(void)state;
	fsyncer(&w);
	sent(&w, 10, "fsyncer", 1 << 20, 100, 0);
	sent(&w, 20, "dd", 50 << 20, 500, 0);
	sent(&w, 21, "dd", 49 << 20, 500, 0);
	il_cause(&w, &c);
	assert_true(c.found);
	assert_int_equal(c.victim.pid, 10);
	assert_int_equal(c.victim.op, FS_OP_FSYNC);
	assert_int_equal(c.blames[0].kind, IL_CK_NEIGHBOUR);
	assert_string_equal(c.blames[0].comm, "dd");
	assert_int_equal(c.blames[0].npids, 2);
	assert_true(c.blames[0].disk_share > 0.98);
	assert_int_equal(c.where, IL_WHERE_DEVICE);
	/* requests no submitter was seen for (pid 0, no comm): "(unknown)", not "[]" */
	{
		char lines[5][200];

		sent(&w, 0, "", 10 << 20, 50, 0);
		il_cause(&w, &c);
		assert_true(il_cause_evidence(&c, lines) > 1);
		assert_non_null(strstr(lines[1], ", (unknown) "));
		assert_null(strstr(lines[1], "[]"));
	}
	/* its peers of the same name (a database's backends): "others of its command", not its
	 * own name twice as if it waited behind itself */
	{
		char line[256];

		fsyncer(&w);
		sent(&w, 10, "fsyncer", 1 << 20, 100, 0);
		sent(&w, 20, "fsyncer", 30 << 20, 300, 0);
		sent(&w, 21, "fsyncer", 30 << 20, 300, 0);
		sent(&w, 22, "fsyncer", 30 << 20, 300, 0);
		il_cause(&w, &c);
		il_cause_line(&c, line, sizeof(line));
		assert_non_null(strstr(line, "behind 3 others of its command on "));
	}
	/* a title and a long WAL path: the line keeps who and how much (it was cut at
	 * "behind postgres: pg postgres...") */
	{
		char line[256], verdict[300];

		window(&w);
		calls(&w, 10, "postgres: pg postgres", FS_OP_FSYNC, 10, 0, 800, 0, 0);
		woken(&w, 10, FS_OP_FSYNC, SPLIT_WK_BLOCK, 0, NULL, false, 800, 0);
		snprintf(procs[0].top_file, sizeof(procs[0].top_file),
			 "/mnt/x/pg/data/pg_wal/000000010000000000000005");
		sent(&w, 10, "postgres: pg postgres", 1 << 20, 100, 0);
		for (int i = 0; i < 3; i++)
			sent(&w, 20 + i, "postgres: pg postgres", 30 << 20, 300, 0);
		il_cause(&w, &c);
		/* as il_window_judge() cuts it: "verdict: device -- " and the line, 200 bytes */
		il_cause_line(&c, line, 200 - strlen("verdict:  -- device") + 1);
		snprintf(verdict, sizeof(verdict), "verdict: device -- %s", line);
		assert_true(strlen(verdict) <= 200);
		assert_non_null(strstr(verdict, "behind 3 others of its command on "));
		assert_non_null(strstr(verdict, "% of the disk's bytes"));
		assert_non_null(strstr(verdict, "000000010000000000000005: "));
	}
}

/* A submitter as attribution saw it on DISK (its view entry): bytes of bios, a kernel thread? */
static void seen_on_disk(struct il_window *w, __u32 pid, const char *comm, bool kthread, __u64 bytes)
{
	struct il_who_sum *p = &procs[w->view.nprocs++];

	p->pid = pid;
	p->kthread = kthread;
	snprintf(p->comm, sizeof(p->comm), "%s", comm);
	p->ndisks = 1;
	p->disks[0].dev = DISK;
	p->disks[0].bio_bytes = bytes;
}

/* A kernel thread's own writes (ext4lazyinit zeroing inode tables: no file's pages, so none
 * written back for others, who_pd.foreign_bytes 0) are its load on the disk, a neighbour as a
 * process's are; the flusher's writes of the victim's pages stay the victim's. Before, every
 * write of a kernel thread went to the processes whose pages others wrote back, first come
 * first served: ext4lazyinit's row, read first, took the victim's 60 MiB, and the flusher's
 * were left its own ("[kworker/u8] 38%", ext4lazyinit 19%, the device the culprit). dd in
 * ext4lazyinit's place is judged alike. */
static void test_kthread_neighbour(void **state)
{
	struct il_win_dirtier d[] = {
		{ .pid = 10, .dev = DISK, .comm = "fsyncer", .wb_bytes = 60 << 20 },
		{ .pid = 6, .dev = DISK, .comm = "kworker/u8:3", .kthread = true, .foreign_bytes = 60 << 20 },
	};
	struct il_window w;
	char line[256], lines[5][200];
	__u64 ns;

	(void)state;
	fsyncer(&w);
	procs[0].used_disk = DISK;
	sent(&w, 10, "fsyncer", 10 << 20, 100, 0);
	sent(&w, 7, "ext4lazyinit", 90 << 20, 900, 0);
	sent(&w, 6, "kworker/u8:3", 60 << 20, 600, 0);
	seen_on_disk(&w, 7, "ext4lazyinit", true, 90 << 20);
	seen_on_disk(&w, 6, "kworker/u8:3", true, 60 << 20);
	w.dirtiers = d;
	w.ndirtiers = 2;
	il_cause(&w, &c);
	assert_int_equal(c.blames[0].kind, IL_CK_NEIGHBOUR);
	assert_string_equal(c.blames[0].comm, "ext4lazyinit");
	assert_true(c.blames[0].kthread);
	/* 90 of 160 MiB: the victim's 10 and the 60 the flusher wrote of its pages its own */
	assert_true(c.blames[0].disk_share > 0.5624 && c.blames[0].disk_share < 0.5626);
	assert_true(c.blames[0].ns == 450 * MS);
	il_cause_line(&c, line, sizeof(line));
	assert_non_null(strstr(line, "waits behind [ext4lazyinit] on "));
	assert_non_null(strstr(line, ", 56% of the disk's bytes"));
	assert_true(il_cause_evidence(&c, lines) > 1);
	assert_non_null(strstr(lines[1], "[ext4lazyinit] 56%, fsyncer (the victim) 44%"));
	assert_null(strstr(lines[1], "kworker"));
	/* a process in its place: the same time, the same share */
	ns = c.blames[0].ns;
	snprintf(bps[1].row.v.comm, sizeof(bps[1].row.v.comm), "dd");
	snprintf(procs[1].comm, sizeof(procs[1].comm), "dd");
	procs[1].kthread = false;
	il_cause(&w, &c);
	assert_int_equal(c.blames[0].kind, IL_CK_NEIGHBOUR);
	assert_string_equal(c.blames[0].comm, "dd");
	assert_true(c.blames[0].ns == ns);
	assert_true(c.blames[0].disk_share > 0.5624 && c.blames[0].disk_share < 0.5626);
}

/* A service of several commands filling the disk, beside a bigger single command: the
 * service (its cgroup) is the culprit, one entry. */
static void test_service(void **state)
{
	struct il_window w;

	(void)state;
	fsyncer(&w);
	sent(&w, 10, "fsyncer", 1 << 20, 100, 0);
	snprintf(sent(&w, 20, "tar", 30 << 20, 300, 0)->cgroup, 128, "/system.slice/etl.service");
	snprintf(sent(&w, 21, "gzip", 30 << 20, 300, 0)->cgroup, 128, "/system.slice/etl.service");
	snprintf(sent(&w, 22, "dd", 40 << 20, 300, 0)->cgroup, 128, "/");
	il_cause(&w, &c);
	assert_int_equal(c.blames[0].kind, IL_CK_NEIGHBOUR);
	assert_string_equal(c.blames[0].comm, "etl.service");
	assert_string_equal(c.blames[0].cgroup, "/system.slice/etl.service");
	assert_int_equal(c.blames[0].npids, 2);
	/* one command of it alone: the command, with its cgroup */
	bps[2].row.v.bytes = 1 << 10;
	il_cause(&w, &c);
	assert_string_equal(c.blames[0].comm, "dd");
}

/* Alone on a busy disk: the device. */
static void test_device(void **state)
{
	struct il_window w;

	(void)state;
	fsyncer(&w);
	sent(&w, 10, "fsyncer", 10 << 20, 900, 0);
	il_cause(&w, &c);
	assert_int_equal(c.blames[0].kind, IL_CK_DEVICE);
	assert_int_equal(c.where, IL_WHERE_DEVICE);
}

/* io_uring requests (fio, iodepth 32): 1,024 writes timed submission to completion in its
 * file-operation time, 800 ms, beside 100 output writes the split has (5 ms on CPU); its
 * requests spent 600 ms in the block layer of DISK, where dd sent twice its bytes: the
 * requests are the victim's writes, 600 ms of them its block I/O (dd 400 ms of it, by its
 * two thirds of the disk's bytes; the device 200), 200 ms unexplained. */
static void test_uring(void **state)
{
	struct il_window w;

	(void)state;
	window(&w);
	calls(&w, 20, "fio", FS_OP_WRITE, 5, 0, 0, 0, 0);
	procs[0].op_count[FS_OP_WRITE] = 1124;
	procs[0].op_ns[FS_OP_WRITE] = 805 * MS;
	w.m.uring[FS_OP_WRITE] = 1024;
	sent(&w, 20, "fio", 400 << 20, 600, 0);
	sent(&w, 30, "dd", 800 << 20, 300, 0);
	il_cause(&w, &c);
	assert_true(c.found);
	assert_int_equal(c.victim.pid, 20);
	assert_int_equal(c.victim.op, FS_OP_WRITE);
	assert_int_equal(c.victim.calls, 1124);
	assert_int_equal(c.victim.requests, 1024);
	assert_int_equal(c.victim.call_ns, 805 * MS);
	assert_int_equal(c.victim.part_ns[SPLIT_IOWAIT_BLOCK], 600 * MS);
	assert_int_equal(c.victim.part_ns[SPLIT_OTHER], 200 * MS);
	assert_int_equal(c.blames[0].kind, IL_CK_NEIGHBOUR);
	assert_int_equal(c.blames[0].pid, 30);
	assert_true(c.blames[0].ns > 399 * MS && c.blames[0].ns < 401 * MS);
	for (int i = 0; i < c.nblames; i++)
		if (c.blames[i].kind == IL_CK_URING)
			assert_int_equal(c.blames[i].ns, 200 * MS);
	assert_true(c.nblames >= 3 && (c.blames[1].kind == IL_CK_URING || c.blames[2].kind == IL_CK_URING));
	/* its own calls a real part of the window (a database's redo log writes, 300 ms of 1 s,
	 * beside data pages flushed through io_uring): they are what it waits for */
	ops[0].v.part_ns[SPLIT_ONCPU] = 300 * MS;
	procs[0].op_ns[FS_OP_WRITE] = 1100 * MS;
	il_cause(&w, &c);
	assert_int_equal(c.victim.requests, 0);
	assert_int_equal(c.victim.calls, 100);
	assert_int_equal(c.victim.call_ns, 300 * MS);
	ops[0].v.part_ns[SPLIT_ONCPU] = 5 * MS;
	procs[0].op_ns[FS_OP_WRITE] = 805 * MS;
	/* no io_uring request in the window: calls the split missed are not taken for requests */
	w.m.uring[FS_OP_WRITE] = 0;
	il_cause(&w, &c);
	assert_int_equal(c.victim.requests, 0);
	assert_int_equal(c.victim.calls, 100);
	/* the same time all in its split calls (syscalls): no requests, nothing added */
	window(&w);
	calls(&w, 20, "fio", FS_OP_WRITE, 5, 0, 800, 0, 0);
	woken(&w, 20, FS_OP_WRITE, SPLIT_WK_BLOCK, 0, NULL, false, 800, 0);
	procs[0].op_count[FS_OP_WRITE] = 100;
	procs[0].op_ns[FS_OP_WRITE] = 805 * MS;
	sent(&w, 20, "fio", 400 << 20, 600, 0);
	il_cause(&w, &c);
	assert_int_equal(c.victim.calls, 100);
	assert_int_equal(c.victim.requests, 0);
	assert_int_equal(c.victim.call_ns, 805 * MS);
}

/* Its bios held before Q by its cgroup's throttle: the block layer, the rule. */
static void test_throttle(void **state)
{
	struct il_window w;
	struct il_snap_bp *b;

	(void)state;
	window(&w);
	calls(&w, 10, "dd", FS_OP_WRITE, 5, 0, 900, 0, 0);
	woken(&w, 10, FS_OP_WRITE, SPLIT_WK_BLOCK, 0, NULL, false, 900, 0);
	b = sent(&w, 10, "dd", 1 << 20, 10, 880);
	snprintf(b->cgroup, sizeof(b->cgroup), "/slow");
	snprintf(b->rule, sizeof(b->rule), "blkio.throttle.write_iops_device 7:3 50");
	sent(&w, 30, "fio", 500 << 20, 900, 0);
	il_cause(&w, &c);
	assert_int_equal(c.blames[0].kind, IL_CK_THROTTLE);
	assert_string_equal(c.blames[0].cgroup, "/slow");
	assert_non_null(strstr(c.blames[0].rule, "7:3 50"));
	assert_int_equal(c.where, IL_WHERE_BLOCK);
}

/* Waiting for a CPU behind hogs: the CPU, the hogs by their CPU time. */
static void test_cpu(void **state)
{
	struct il_window w;

	(void)state;
	fsyncer_runq(&w, 50, 700, 100);
	sent(&w, 10, "fsyncer", 1 << 20, 100, 0);
	cpu(&w, 10, "fsyncer", 50);
	cpu(&w, 40, "hog", 450);
	cpu(&w, 41, "hog", 450);
	il_cause(&w, &c);
	assert_int_equal(c.blames[0].kind, IL_CK_CPU);
	assert_string_equal(c.blames[0].comm, "hog");
	assert_int_equal(c.blames[0].npids, 2);
	assert_int_equal(c.where, IL_WHERE_CPU);
}

/* Run-queue time shared by 70 commands (a busy host) beside a smaller lock wait: the run
 * queue is still the largest part, and the culprit a CPU hog. */
static void test_cpu_many(void **state)
{
	struct il_window w;
	char name[16], line[256];

	(void)state;
	window(&w);
	calls(&w, 10, "small", FS_OP_WRITE, 50, 500, 0, 0, 420);
	woken(&w, 10, FS_OP_WRITE, SPLIT_WK_TASK, 50, "big", false, 420, 0);
	for (int i = 0; i < 70; i++) {
		snprintf(name, sizeof(name), "cmd%d", i);
		cpu(&w, 100 + i, name, i ? 10 : 200);
	}
	il_cause(&w, &c);
	assert_int_equal(c.part, IL_CP_RUNQ);
	assert_int_equal(c.blames[0].kind, IL_CK_CPU);
	assert_string_equal(c.blames[0].comm, "cmd0");
	/* the line gives the CPU's part, then the largest hog's */
	il_cause_line(&c, line, sizeof(line));
	assert_non_null(strstr(line, ": 52% of its time waits for a CPU, 12% behind cmd0"));
	/* and, the lock's kind nearly as large (43% of 52%) and its holder larger than cmd0, that
	 * holder after it: which kind comes first turns on a few points */
	assert_non_null(strstr(line, "12% behind cmd0 (pid 100); lock 43%: woken by big (pid 50)"));
	/* and the lock wait, summed after the 70, is still there: the largest other cause */
	assert_int_equal(c.blames[1].kind, IL_CK_LOCK);
	assert_true(c.blames[1].ns == 420 * MS);
	/* the evidence says why cmd0's 12% beat the lock's 43%: the CPU's 52% as a kind */
	{
		char lines[5][200];
		int n = il_cause_evidence(&c, lines), k = 0;

		while (k < n && strncmp(lines[k], "causes", 6))
			k++;
		assert_true(k < n);
		assert_non_null(strstr(lines[k], "causes (cpu 52%, lock 43%): cpu cmd0 (pid 100) 12%, lock big (pid 50) 43%"));
	}
}

/* The run queue's time goes to the tasks that held the CPU as the waits ended, not to the
 * biggest CPU user: a busy process elsewhere (qemu, by CPU time the largest) held the
 * victim's CPU for a small part of its waits; two hogs beside it for most. An idle CPU's
 * share (the wake-up's latency) is no one's, its own thread's its own. */
static void test_cpu_holders(void **state)
{
	struct il_window w;
	char line[256];

	(void)state;
	fsyncer_runq(&w, 50, 700, 100);
	woken(&w, 10, FS_OP_FSYNC, SPLIT_WK_CPU, 40, "hog", false, 300, 0);
	woken(&w, 10, FS_OP_FSYNC, SPLIT_WK_CPU, 41, "hog", false, 250, 0);
	woken(&w, 10, FS_OP_FSYNC, SPLIT_WK_CPU, 50, "qemu", false, 50, 0);
	woken(&w, 10, FS_OP_FSYNC, SPLIT_WK_CPU, 0, "", false, 50, 0);
	woken(&w, 10, FS_OP_FSYNC, SPLIT_WK_CPU, 10, "fsyncer", false, 50, 0);
	cpu(&w, 40, "hog", 300);
	cpu(&w, 41, "hog", 300);
	cpu(&w, 50, "qemu", 1900);
	il_cause(&w, &c);
	assert_int_equal(c.part, IL_CP_RUNQ);
	assert_int_equal(c.where, IL_WHERE_CPU);
	assert_int_equal(c.blames[0].kind, IL_CK_CPU);
	assert_string_equal(c.blames[0].comm, "hog");
	assert_int_equal(c.blames[0].npids, 2);
	assert_true(c.blames[0].ns == 550 * MS); /* 700 ms by 300 + 250 of 700; of 850 ms */
	for (int i = 1; i < c.nblames; i++) {
		if (c.blames[i].kind == IL_CK_CPU && !strcmp(c.blames[i].comm, "qemu"))
			assert_true(c.blames[i].ns == 50 * MS);
		if (c.blames[i].kind == IL_CK_CPU && !c.blames[i].comm[0])
			assert_true(c.blames[i].ns == 50 * MS); /* the idle CPU: no one named */
		if (c.blames[i].kind == IL_CK_SELF) /* 50 ms on CPU, 50 behind its own thread */
			assert_true(c.blames[i].part_ns[IL_CP_RUNQ] == 50 * MS);
	}
	il_cause_line(&c, line, sizeof(line));
	/* the hogs' pids, and their cgroup: both in /batch (cgroup_stub) */
	assert_non_null(strstr(line, ": 82% of its time waits for a CPU, 65% behind hog (2 pids: 40, 41) "
				    "of cgroup /batch"));
	assert_string_equal(c.blames[0].cgroup, "/batch");

	/* its own threads most: the verdict says so, the CPU the layer */
	window(&w);
	calls(&w, 10, "fsyncer", FS_OP_FSYNC, 50, 700, 100, 0, 0);
	woken(&w, 10, FS_OP_FSYNC, SPLIT_WK_CPU, 10, "fsyncer", false, 600, 0);
	woken(&w, 10, FS_OP_FSYNC, SPLIT_WK_CPU, 40, "hog", false, 100, 0);
	il_cause(&w, &c);
	assert_int_equal(c.blames[0].kind, IL_CK_SELF);
	assert_int_equal(c.where, IL_WHERE_CPU);
	il_cause_line(&c, line, sizeof(line));
	/* the CPU's whole part first (the hog's 100 ms too), its own threads' after */
	assert_non_null(strstr(line, ": 82% of its time waits for a CPU, 71% behind its own threads"));
}

/* Judge w into c; its line holds want. */
static void line_has(const struct il_window *w, const char *want)
{
	char line[256];

	il_cause(w, &c);
	il_cause_line(&c, line, sizeof(line));
	assert_non_null(strstr(line, want));
}

/* The line names the syscall: fdatasync when every sync was one, both when some were. */
static void test_fdatasync_word(void **state)
{
	struct il_window w;

	(void)state;
	fsyncer(&w);
	sent(&w, 10, "fsyncer", 1 << 20, 100, 0);
	ops[0].v.datasync = 100;
	line_has(&w, "fsyncer (pid 10) fdatasync on ");
	ops[0].v.datasync = 40;
	line_has(&w, "fsyncer (pid 10) fsync/fdatasync on ");
	ops[0].v.datasync = 0;
	line_has(&w, "fsyncer (pid 10) fsync on ");
}

/* A kernel thread it waits for waits for a CPU behind the victim's own threads (spinning
 * on the CPUs the thread may use): its own threads, through that thread. */
static void test_kthread_own_threads(void **state)
{
	struct il_window w;

	(void)state;
	kthread_waiter(&w, "spinner", "kworker/u8:0");
	cpu(&w, 10, "spinner", 1800);
	cpu(&w, 40, "other", 200);
	line_has(&w, "of its time waits through [kworker/u8:0] for a CPU");
	line_has(&w, "behind its own threads");
	assert_int_equal(c.blames[0].kind, IL_CK_SELF);
	assert_int_equal(c.where, IL_WHERE_CPU);
}

/* The journal as a neighbour: its commits are named with the process whose syncs it woke
 * the most (the commits they forced), unless only one process's calls were traced (-p). */
static void test_journal_for(void **state)
{
	struct il_window w;
	char line[256], lines[5][200];
	int n;

	(void)state;
	fsyncer(&w);
	sent(&w, 10, "fsyncer", 40 << 20, 400, 0);
	sent(&w, 5, "jbd2/loop3-8", 50 << 20, 500, 0);
	sent(&w, 30, "logger", 2 << 20, 20, 0);
	calls(&w, 30, "logger", FS_OP_FSYNC, 1, 0, 0, 0, 30);
	woken(&w, 30, FS_OP_FSYNC, SPLIT_WK_TASK, 5, "jbd2/loop3-8", true, 30, 0);
	woken(&w, 10, FS_OP_FSYNC, SPLIT_WK_TASK, 5, "jbd2/loop3-8", true, 1, 0);
	wks[w.split.nwakers - 1].v.count = 2; /* the victim's syncs woke less often */
	il_cause(&w, &c);
	assert_int_equal(c.victim.pid, 10);
	assert_int_equal(c.blames[0].kind, IL_CK_NEIGHBOUR);
	assert_string_equal(c.blames[0].comm, "jbd2/loop3-8");
	assert_string_equal(c.blames[0].for_comm, "logger");
	assert_int_equal(c.blames[0].for_pid, 30);
	il_cause_line(&c, line, sizeof(line));
	assert_non_null(strstr(line, "behind [jbd2/loop3-8] committing for logger (pid 30) on "));
	n = il_cause_evidence(&c, lines);
	assert_true(n > 1);
	assert_non_null(strstr(lines[1], "[jbd2/loop3-8] (for logger) "));
	/* -p 10: the logger's syncs are not seen, so no one is named */
	w.m.pid = 10;
	il_cause(&w, &c);
	assert_string_equal(c.blames[0].for_comm, "");
	il_cause_line(&c, line, sizeof(line));
	assert_null(strstr(line, "committing for"));
}

/* Every p99 under 1 ms: the evidence says nothing is slow in absolute terms. */
static void test_quiet(void **state)
{
	struct il_window w;
	char lines[5][200];
	int n;

	(void)state;
	fsyncer(&w);
	sent(&w, 10, "fsyncer", 1 << 20, 100, 0);
	il_cause(&w, &c);
	n = il_cause_evidence(&c, lines);
	assert_true(n < 5);
	assert_null(strstr(lines[n - 1], "nothing is slow"));
	c.quiet = true;
	assert_int_equal(il_cause_evidence(&c, lines), n + 1);
	assert_non_null(strstr(lines[n], "every p99 is under 1 ms: nothing is slow in absolute terms"));
}

/* Woken by another process after other waits: the lock holder. */
static void test_lock(void **state)
{
	struct il_window w;

	(void)state;
	window(&w);
	calls(&w, 10, "small", FS_OP_WRITE, 100, 50, 0, 0, 700);
	woken(&w, 10, FS_OP_WRITE, SPLIT_WK_TASK, 50, "big", false, 700, 0);
	il_cause(&w, &c);
	assert_int_equal(c.blames[0].kind, IL_CK_LOCK);
	assert_string_equal(c.blames[0].comm, "big");
	assert_int_equal(c.blames[0].pid, 50);
	assert_int_equal(c.where, IL_WHERE_SYSCALL);
}

/* Woken by the journal, whose commit waited on the disk behind dd: dd, through the journal. */
static void test_journal_followed(void **state)
{
	struct il_window w;

	(void)state;
	window(&w);
	calls(&w, 10, "fsyncer", FS_OP_FSYNC, 10, 0, 0, 0, 800);
	woken(&w, 10, FS_OP_FSYNC, SPLIT_WK_TASK, 5, "jbd2/loop3-8", true, 800, 700);
	sent(&w, 5, "jbd2/loop3-8", 1 << 20, 100, 0);
	sent(&w, 20, "dd", 100 << 20, 900, 0);
	procs[0].used_disk = DISK; /* its file is there */
	il_cause(&w, &c);
	assert_int_equal(c.blames[0].kind, IL_CK_NEIGHBOUR);
	assert_string_equal(c.blames[0].comm, "dd");
	assert_string_equal(c.blames[0].via, "jbd2/loop3-8");
	/* the commit's time beyond its I/O wait is the journal's */
	assert_int_equal(c.blames[1].kind, IL_CK_JOURNAL);
	/* a kernel thread's I/O on a disk the victim does not use is not followed there */
	procs[0].used_disk = 0;
	il_cause(&w, &c);
	assert_int_equal(c.blames[0].kind, IL_CK_JOURNAL);
	assert_int_equal(c.ndisks, 0);
}

/* Woken by the journal, which spent most of the victim's wait beyond its I/O on a run queue
 * (its schedstat over the window: 600 ms waiting for a CPU, 200 ms on one) while a hog held
 * the CPUs: that part is the hog's, through the journal; the rest the journal's own. */
static void test_journal_runq(void **state)
{
	struct il_window w;
	char line[256];

	(void)state;
	kthread_waiter(&w, "fsyncer", "jbd2/loop3-8");
	cpu(&w, 10, "fsyncer", 10);
	cpu(&w, 40, "hog", 450);
	cpu(&w, 41, "hog", 450);
	il_cause(&w, &c);
	assert_int_equal(c.blames[0].kind, IL_CK_CPU);
	assert_string_equal(c.blames[0].comm, "hog");
	assert_string_equal(c.blames[0].via, "jbd2/loop3-8");
	/* 600 ms by CPU time: the hogs' 900 of 910 ms, the victim's own threads' 10 */
	assert_true(c.blames[0].ns > 593 * MS && c.blames[0].ns < 594 * MS);
	assert_int_equal(c.blames[0].npids, 2);
	for (int i = 1; i < c.nblames; i++)
		if (c.blames[i].kind == IL_CK_SELF)
			assert_true(c.blames[i].ns > 16 * MS && c.blames[i].ns < 17 * MS); /* +10 on CPU */
	/* and with the victim's own run-queue time too (a second share among the same two) */
	ops[0].v.part_ns[SPLIT_RUNQ] = 100 * MS;
	il_cause(&w, &c);
	assert_int_equal(c.blames[0].kind, IL_CK_CPU);
	assert_int_equal(c.blames[0].npids, 2);
	assert_int_equal(c.blames[1].kind, IL_CK_JOURNAL);
	assert_true(c.blames[1].ns == 200 * MS);
	il_cause_line(&c, line, sizeof(line));
	assert_non_null(strstr(line, "through [jbd2/loop3-8] for a CPU behind hog"));
	/* no run-queue wait of its own: all the journal's */
	cpus[0].runq_ns = 0;
	il_cause(&w, &c);
	assert_int_equal(c.blames[0].kind, IL_CK_JOURNAL);
	assert_true(c.blames[0].ns == 800 * MS);
}

/* The CPU waits (the hogs' and the victim's own threads') c puts through kernel thread via. */
static __u64 cpu_through(const char *via)
{
	__u64 ns = 0;

	for (int i = 0; i < c.nblames; i++)
		if ((c.blames[i].kind == IL_CK_CPU || c.blames[i].kind == IL_CK_SELF) &&
		    !strcmp(c.blames[i].via, via))
			ns += c.blames[i].ns;
	return ns;
}

/* Woken by the journal after 1.3 s of the victim's wait, the journal runnable only 46 ms of the
 * window (36 on a run queue, 10 on a CPU) and asleep the rest (on throttled I/O the split did
 * not see as its I/O wait): the hogs get at most its 36 ms, the journal the rest. The ratio
 * alone put 1,017 ms on the hogs (a trial's throttled SQLite: "cpu dd (565 pids)" through
 * [jbd2/loop0-8] where the journal's schedstat had 36 ms of run_delay). */
static void test_journal_runq_capped(void **state)
{
	struct il_window w;
	__u64 cpu_ns;

	(void)state;
	kthread_waiter(&w, "fsyncer", "jbd2/loop3-8");
	ops[0].v.part_ns[SPLIT_OTHER] = 1300 * MS;
	wks[0].v.ns = 1300 * MS;
	cpus[0].runq_ns = 36 * MS;
	cpus[0].cpu_ns = 10 * MS;
	cpu(&w, 40, "hog", 450);
	il_cause(&w, &c);
	assert_int_equal(c.blames[0].kind, IL_CK_JOURNAL);
	cpu_ns = cpu_through("jbd2/loop3-8");
	assert_true(cpu_ns > 35 * MS && cpu_ns <= 36 * MS);
	assert_true(c.blames[0].ns >= 1264 * MS);
	/* a second row of the same thread (another waker kind of the same op) shares the cap */
	woken(&w, 10, FS_OP_FSYNC, SPLIT_WK_TASK, 5, "jbd2/loop3-8", true, 300, 0);
	ops[0].v.part_ns[SPLIT_OTHER] = 1600 * MS;
	il_cause(&w, &c);
	assert_true(cpu_through("jbd2/loop3-8") <= 36 * MS);
}

/* A logger pinned beside two CPU hogs: its own block I/O (280 ms, the device's) is the largest
 * part, but the hogs held its CPU for most of its run-queue time (200 ms) and the journal's
 * while it waited for a commit (150 of 250 ms): 327 ms in all, the culprit. */
static void test_hogs_across_parts(void **state)
{
	struct il_window w;
	char line[256];

	(void)state;
	window(&w);
	calls(&w, 10, "logger", FS_OP_FSYNC, 20, 200, 280, 0, 250);
	woken(&w, 10, FS_OP_FSYNC, SPLIT_WK_BLOCK, 0, NULL, false, 280, 0);
	woken(&w, 10, FS_OP_FSYNC, SPLIT_WK_TASK, 5, "jbd2/loop0-8", true, 250, 0);
	sent(&w, 10, "logger", 1 << 20, 280, 0);
	procs[0].used_disk = DISK;
	cpu(&w, 5, "jbd2/loop0-8", 100);
	cpus[0].kthread = true;
	cpus[0].runq_ns = 150 * MS;
	cpu(&w, 10, "logger", 20);
	cpu(&w, 40, "hog", 450);
	cpu(&w, 41, "hog", 450);
	il_cause(&w, &c);
	assert_int_equal(c.blames[0].kind, IL_CK_CPU);
	assert_string_equal(c.blames[0].comm, "hog");
	assert_int_equal(c.blames[0].npids, 2);
	assert_int_equal(c.where, IL_WHERE_CPU);
	/* of 200 ms, the share of the CPU time on its CPUs (900 of 1,000 ms: the journal's 100
	 * too), and of 150 through the journal, 900 of 920 (the journal is no hog of its own
	 * wait; the victim's 20 ms are its own): 326.7 ms */
	assert_true(c.blames[0].ns > 326 * MS && c.blames[0].ns < 327 * MS);
	assert_int_equal(c.part, IL_CP_RUNQ);
	/* the disk's 280 ms, its own, is still among the causes */
	assert_int_equal(c.blames[1].kind, IL_CK_DEVICE);
	assert_true(c.blames[1].ns == 280 * MS);
	il_cause_line(&c, line, sizeof(line));
	assert_non_null(strstr(line, "for a CPU behind hog (2 pids: 40, 41)"));
	/* with no wait for a CPU, its own or the journal's, the disk (280 ms beside the journal's
	 * 250) */
	ops[0].v.part_ns[SPLIT_RUNQ] = 0;
	cpus[0].runq_ns = 0;
	il_cause(&w, &c);
	assert_int_equal(c.blames[0].kind, IL_CK_DEVICE);
}

/* xfs's fsync: woken by the workqueue workers that end its log writes (no I/O wait of their
 * own): the wait is for the disk, and a buffered dd keeps it busy; without a disk of its
 * own, the worker's. */
static void test_worker_completion(void **state)
{
	struct il_window w;
	char line[256];

	(void)state;
	window(&w);
	calls(&w, 10, "fsyncer", FS_OP_FSYNC, 50, 0, 0, 700, 0);
	woken(&w, 10, FS_OP_FSYNC, SPLIT_WK_TASK, 5, "kworker/0:3", true, 700, 0);
	sent(&w, 10, "fsyncer", 1 << 20, 100, 0);
	sent(&w, 20, "dd", 99 << 20, 900, 0);
	procs[0].used_disk = DISK;
	il_cause(&w, &c);
	assert_int_equal(c.blames[0].kind, IL_CK_NEIGHBOUR);
	assert_string_equal(c.blames[0].comm, "dd");
	assert_string_equal(c.blames[0].via, "kworker/0:3");
	il_cause_line(&c, line, sizeof(line));
	assert_non_null(strstr(line, "waits through [kworker/0:3] behind dd (pid 20) on "));
	/* the journal's commit after it, 1 ms behind dd: still through the worker, which most
	 * of it went through (the last one's name was said: "through [jbd2/loop3-8]") */
	ops[0].v.part_ns[SPLIT_IOWAIT_TASK] = 701 * MS;
	woken(&w, 10, FS_OP_FSYNC, SPLIT_WK_TASK, 7, "jbd2/loop3-8", true, 1, 1);
	il_cause(&w, &c);
	assert_string_equal(c.blames[0].comm, "dd");
	assert_string_equal(c.blames[0].via, "kworker/0:3");
	ops[0].v.part_ns[SPLIT_IOWAIT_TASK] = 700 * MS;
	w.split.nwakers--;
	/* a worker that waited for I/O itself: that wait followed, the rest its own */
	wks[0].v.io_ns = 100 * MS;
	il_cause(&w, &c);
	assert_int_equal(c.blames[0].kind, IL_CK_KTHREAD);
	assert_true(c.blames[0].ns == 600 * MS);
	/* no disk of the victim's: the worker's */
	wks[0].v.io_ns = 0;
	procs[0].used_disk = 0;
	w.nbp = 0;
	il_cause(&w, &c);
	assert_int_equal(c.blames[0].kind, IL_CK_KTHREAD);
	assert_true(c.blames[0].ns == 700 * MS);
}

/* Its run-queue waits mostly ended on an idle CPU (the wake-up's latency: no one's), a third
 * behind a hog: the CPU, said with all its time, and the hog named, not "30% of its time
 * waits for a CPU" with no one (a trial's verdict under -C). */
static void test_cpu_unnamed(void **state)
{
	struct il_window w;
	char line[256];

	(void)state;
	fsyncer_runq(&w, 50, 500, 450);
	woken(&w, 10, FS_OP_FSYNC, SPLIT_WK_CPU, 0, "", false, 300, 0);
	woken(&w, 10, FS_OP_FSYNC, SPLIT_WK_CPU, 40, "hog", false, 200, 0);
	sent(&w, 10, "fsyncer", 1 << 20, 100, 0);
	il_cause(&w, &c);
	assert_int_equal(c.where, IL_WHERE_CPU);
	assert_int_equal(c.blames[0].kind, IL_CK_CPU);
	assert_string_equal(c.blames[0].comm, "hog");
	il_cause_line(&c, line, sizeof(line));
	assert_non_null(strstr(line, ": 50% of its time waits for a CPU, 20% behind hog (pid 40)"));
	/* no one held it at all: all of it, no one named */
	wks[2].v.ns = 0;
	wks[2].k.wk_kind = SPLIT_WK_IRQ;
	ops[0].v.part_ns[SPLIT_RUNQ] = 300 * MS;
	ops[0].v.part_ns[SPLIT_IOWAIT_BLOCK] = 250 * MS;
	wks[0].v.ns = 250 * MS;
	il_cause(&w, &c);
	assert_int_equal(c.blames[0].kind, IL_CK_CPU);
	assert_string_equal(c.blames[0].comm, "");
	il_cause_line(&c, line, sizeof(line));
	assert_non_null(strstr(line, ": 50% of its time waits for a CPU"));
}

/* The victim without -p: the one that lost time to others, not the one with most call time
 * spent on its own I/O; with -p, that process whatever. */
static void test_victim_choice(void **state)
{
	struct il_window w;
	struct il_snap_bp *b;

	(void)state;
	window(&w);
	calls(&w, 30, "fio", FS_OP_WRITE, 10, 0, 990, 0, 0);
	woken(&w, 30, FS_OP_WRITE, SPLIT_WK_BLOCK, 0, NULL, false, 990, 0);
	sent(&w, 30, "fio", 500 << 20, 990, 0);
	calls(&w, 10, "dd", FS_OP_WRITE, 5, 0, 600, 0, 0);
	woken(&w, 10, FS_OP_WRITE, SPLIT_WK_BLOCK, 0, NULL, false, 600, 0);
	b = sent(&w, 10, "dd", 1 << 20, 10, 580);
	snprintf(b->cgroup, sizeof(b->cgroup), "/slow");
	il_cause(&w, &c);
	assert_int_equal(c.victim.pid, 10);
	assert_int_equal(c.blames[0].kind, IL_CK_THROTTLE);
	w.m.pid = 30;
	il_cause(&w, &c);
	assert_int_equal(c.victim.pid, 30);
	/* nobody lost time to others: the most time in calls */
	w.m.pid = 0;
	b->row.v.held = 0;
	b->cgroup[0] = 0;
	sent(&w, 31, "other", 0, 0, 0);
	bps[0].row.v.bytes = 1 << 20; /* fio no longer fills the disk */
	bps[1].row.v.bytes = 1 << 20;
	il_cause(&w, &c);
	assert_int_equal(c.victim.pid, 30);
}

/* Dirty throttling: woken by no task while the top I/O-wait stack is balance_dirty_pages;
 * the processes whose pages fill the disk. */
static void test_dirty(void **state)
{
	struct il_window w;
	struct il_win_dirtier d = { .pid = 10, .dev = DISK, .comm = "etl", .wb_bytes = 1 << 30 };

	(void)state;
	window(&w);
	snprintf(w.m.iw_top_frame, sizeof(w.m.iw_top_frame), "balance_dirty_pages");
	calls(&w, 10, "etl", FS_OP_WRITE, 100, 0, 0, 800, 0);
	woken(&w, 10, FS_OP_WRITE, SPLIT_WK_IRQ, 0, NULL, false, 800, 0);
	procs[0].used_disk = DISK;
	w.dirtiers = &d;
	w.ndirtiers = 1;
	il_cause(&w, &c);
	assert_int_equal(c.blames[0].kind, IL_CK_DIRTY);
	assert_string_equal(c.blames[0].comm, "etl");
	assert_int_equal(c.where, IL_WHERE_WRITEBACK);
}

/* A buffered writer in another cgroup fills the disk through the flusher: named with the
 * cgroup it was seen in (a trial's -C run said "dd (24 pids)" with no cgroup). */
static void test_dirtier_cgroup(void **state)
{
	struct il_window w;
	struct il_win_dirtier d = { .pid = 20, .dev = DISK, .comm = "dd", .wb_bytes = 100 << 20 };
	char line[256];

	(void)state;
	fsyncer(&w);
	procs[0].used_disk = DISK;
	sent(&w, 10, "fsyncer", 1 << 20, 100, 0);
	sent(&w, 5, "kworker/u8:3", 100 << 20, 900, 0);
	w.dirtiers = &d;
	w.ndirtiers = 1;
	procs[w.view.nprocs].pid = 20;
	snprintf(procs[w.view.nprocs].comm, sizeof(procs[0].comm), "dd");
	snprintf(procs[w.view.nprocs++].cgroup, sizeof(procs[0].cgroup), "/batch");
	il_cause(&w, &c);
	assert_int_equal(c.blames[0].kind, IL_CK_NEIGHBOUR);
	assert_string_equal(c.blames[0].comm, "dd");
	assert_string_equal(c.blames[0].cgroup, "/batch");
	il_cause_line(&c, line, sizeof(line));
	assert_non_null(strstr(line, "behind dd (pid 20) of cgroup /batch on "));
}

/* The line: at most 200 bytes, one line, a long path cut from the front; the evidence: at
 * most five lines; the causes' shares add up to at most the whole. */
static void test_line(void **state)
{
	struct il_window w;
	char line[512], lines[5][200];
	double sum = 0;
	int n;

	(void)state;
	window(&w);
	calls(&w, 10, "fsyncer\n", FS_OP_FSYNC, 10, 0, 800, 0, 0);
	memset(procs[0].top_file, 'a', 400);
	procs[0].top_file[0] = '/';
	woken(&w, 10, FS_OP_FSYNC, SPLIT_WK_BLOCK, 0, NULL, false, 800, 0);
	sent(&w, 20, "dd", 50 << 20, 500, 0);
	sent(&w, 10, "fsyncer\n", 10 << 20, 100, 0);
	sent(&w, 30, "ev\n\x1b[31m", 20 << 20, 100, 0);
	il_cause(&w, &c);
	il_cause_line(&c, line, sizeof(line));
	assert_true(strlen(line) <= 200);
	assert_null(strchr(line, '\n'));
	assert_non_null(strstr(line, "fsyncer\\n (pid 10) fsync on ..."));
	n = il_cause_evidence(&c, lines);
	assert_true(n >= 1 && n <= 5);
	/* every name escaped in the evidence too (the submitters' line), the victim marked */
	for (int i = 0; i < n; i++)
		for (const char *q = lines[i]; *q; q++)
			assert_true((unsigned char)*q >= 0x20 && *q != 0x7f);
	assert_non_null(strstr(lines[1], "ev\\n\\x1b[31m"));
	assert_non_null(strstr(lines[1], "fsyncer\\n (the victim)"));
	for (int i = 0; i < c.nblames; i++)
		sum += c.blames[i].share;
	assert_true(sum <= 1.0001);

	/* a long culprit sentence (the device, through the journal) beside a long path: the
	 * file keeps its name, the sentence gives way at a clause */
	window(&w);
	calls(&w, 11790, "redis-server", FS_OP_FSYNC, 10, 0, 0, 0, 800);
	snprintf(procs[0].top_file, sizeof(procs[0].top_file), "%s",
		 "/var/lib/redis/appendonlydir/appendonly.aof.1.incr.aof");
	procs[0].used_disk = DISK;
	woken(&w, 11790, FS_OP_FSYNC, SPLIT_WK_TASK, 5, "jbd2/nvme0n1p2-8", true, 800, 700);
	sent(&w, 5, "jbd2/nvme0n1p2-8", 30 << 20, 100, 0);
	sent(&w, 20, "dd", 10 << 20, 10, 0);
	il_cause(&w, &c);
	il_cause_line(&c, line, 200 - strlen("verdict:  -- device") + 1);
	assert_true(strlen(line) <= 200 - strlen("verdict:  -- device"));
	assert_non_null(strstr(line, "appendonly.aof.1.incr.aof: "));
	assert_non_null(strstr(line, "for loop3 itself, not behind others' requests"));
	/* cut, the path starts at a slash: every name left whole (it read "...nt/redis/...") */
	assert_true(!strstr(line, " on ...") || strstr(line, " on ...")[7] == '/');

	/* a throttle's long cgroup beside a long path: the path gives way to its last name
	 * before the cgroup does (a trial's PostgreSQL read "...by the throttle of cgroup..." with
	 * "pg/data/pg_wal/" kept) */
	window(&w);
	calls(&w, 14454, "postgres", FS_OP_FSYNC, 5, 0, 900, 0, 0);
	snprintf(procs[0].top_file, sizeof(procs[0].top_file), "%s",
		 "/tmp/db-trial-mnt/pg/data/pg_wal/000000010000000000000007");
	woken(&w, 14454, FS_OP_FSYNC, SPLIT_WK_BLOCK, 0, NULL, false, 900, 0);
	{
		struct il_snap_bp *b = sent(&w, 14454, "postgres", 1 << 20, 10, 880);

		snprintf(b->cgroup, sizeof(b->cgroup), "/system.slice/db-pg-15.service");
		snprintf(b->rule, sizeof(b->rule), "blkio.throttle.write_iops_device 7:3 200");
	}
	il_cause(&w, &c);
	il_cause_line(&c, line, 200 - strlen("verdict:  -- block layer") + 1);
	assert_true(strlen(line) <= 200 - strlen("verdict:  -- block layer"));
	assert_non_null(strstr(line, "by the throttle of cgroup /system.slice/db-pg-15.service"));
	assert_non_null(strstr(line, "000000010000000000000007: "));

	/* a hostile name and file beside a group of 55 dd's (a trial's: the line was cut at
	 * "behind dd..." with room left): the culprit keeps its count and its disk */
	window(&w);
	calls(&w, 10, "ev\x1b[31mil\n\"x,\xff", FS_OP_FSYNC, 10, 0, 800, 0, 0);
	snprintf(procs[0].top_file, sizeof(procs[0].top_file), "%s",
		 "/tmp/trial/mnt/bad\nname\x1b[2J\"q\",\xff\xfe.log");
	procs[0].used_disk = DISK;
	woken(&w, 10, FS_OP_FSYNC, SPLIT_WK_TASK, 5, "jbd2/loop3-8", true, 800, 700);
	sent(&w, 5, "jbd2/loop3-8", 1 << 20, 10, 0);
	for (int i = 0; i < 55; i++)
		sent(&w, 20 + i, "dd", 10 << 20, 100, 0);
	il_cause(&w, &c);
	il_cause_line(&c, line, 200 - strlen("verdict:  -- device") + 1);
	assert_true(strlen(line) <= 200 - strlen("verdict:  -- device"));
	assert_non_null(strstr(line, "behind dd (55 pids"));
	assert_non_null(strstr(line, " on loop3"));

	/* one name too long for the line, of 2-byte UTF-8 characters: cut before a character */
	window(&w);
	calls(&w, 10, "fsyncer", FS_OP_FSYNC, 10, 0, 800, 0, 0);
	procs[0].top_file[0] = '/';
	for (int i = 0; i < 150; i++)
		memcpy(procs[0].top_file + 1 + 2 * i, "\xc3\xa9", 2); /* U+00E9 */
	procs[0].top_file[301] = 0;
	woken(&w, 10, FS_OP_FSYNC, SPLIT_WK_BLOCK, 0, NULL, false, 800, 0);
	sent(&w, 20, "dd", 50 << 20, 500, 0);
	il_cause(&w, &c);
	il_cause_line(&c, line, sizeof(line));
	assert_non_null(strstr(line, " on ..."));
	assert_int_equal((unsigned char)strstr(line, " on ...")[7], 0xc3);
}

/* Two dd's whose pages two flusher workers wrote back: each dd's rows come once for its own
 * requests and again for each worker's, and the group still has 2 members (counted by pid,
 * not by row: it read "dd (5 pids)"). */
static void test_group_members(void **state)
{
	struct il_window w;
	struct il_win_dirtier d[2] = {
		{ .pid = 20, .dev = DISK, .comm = "dd", .wb_bytes = 40 << 20 },
		{ .pid = 21, .dev = DISK, .comm = "dd", .wb_bytes = 40 << 20 },
	};

	(void)state;
	fsyncer(&w);
	sent(&w, 10, "fsyncer", 1 << 20, 100, 0);
	sent(&w, 20, "dd", 10 << 20, 100, 0);
	sent(&w, 21, "dd", 12 << 20, 100, 0);
	sent(&w, 30, "kworker/u8:1", 40 << 20, 300, 0);
	sent(&w, 31, "kworker/u8:2", 40 << 20, 300, 0);
	w.dirtiers = d;
	w.ndirtiers = 2;
	il_cause(&w, &c);
	assert_int_equal(c.blames[0].kind, IL_CK_NEIGHBOUR);
	assert_string_equal(c.blames[0].comm, "dd");
	assert_int_equal(c.blames[0].npids, 2);
	line_has(&w, " behind dd (2 pids) on ");
}

/* Row i of many: a 1 MiB write of process pid (comm) on DISK. */
static void sent_one(struct il_snap_bp *many, int i, __u32 pid, const char *comm)
{
	many[i] = (struct il_snap_bp){ .row.k = { .dev = DISK, .tgid = pid } };
	many[i].row.v.ios = 1;
	many[i].row.v.bytes = many[i].row.v.write_bytes = 1 << 20;
	many[i].row.v.device_ns = 5 * MS;
	snprintf(many[i].row.v.comm, sizeof(many[i].row.v.comm), "%s", comm);
}

/* 150 short-lived dd's on the disk: the group keeps 128 pids to count them by, and says that
 * there were more where it stopped ("dd (128+ pids)"), not a count that looks exact (a
 * trial's 3,000 dd's read "dd (128 pids)" in the neighbour's line, "dd (2999 pids)" in the CPU
 * one). */
static void test_group_members_more(void **state)
{
	static struct il_snap_bp many[160];
	struct il_window w;

	(void)state;
	for (int i = 0; i < 150; i++)
		sent_one(many, i, 1000 + i, "dd");
	sent_one(many, 150, 10, "fsyncer");
	for (int nbp = 151; nbp >= 128; nbp -= 23) { /* 150 dd's, then 127 */
		fsyncer(&w);
		if (nbp == 128)
			sent_one(many, 127, 10, "fsyncer");
		w.bp = many;
		w.nbp = nbp;
		il_cause(&w, &c);
		assert_int_equal(c.blames[0].kind, IL_CK_NEIGHBOUR);
		assert_string_equal(c.blames[0].comm, "dd");
		assert_int_equal(c.blames[0].npids, nbp == 151 ? 128 : 127);
		assert_int_equal(c.blames[0].more_pids, nbp == 151);
		line_has(&w, nbp == 151 ? " behind dd (128+ pids) on " : " behind dd (127 pids) on ");
	}
}

/* A quiet window, no -p: the process with the most call time made 3 ms of open calls in 4 s,
 * and the layers saw every process quiet (a short burst of direct writes to a block device,
 * which makes no call the split sees, is in their I/O wait and disk load). The verdict is the
 * layers' sentence, not that process's ("none -- no layer stands out: qemu-system-x86 (pid
 * 10)'s open calls took 0.1%"); with -p it is that process's, as before. */
static void test_quiet_machine(void **state)
{
	struct il_judgement j;
	struct il_window w;

	(void)state;
	for (int pid = 0; pid <= 10; pid += 10) {
		window(&w);
		calls(&w, 10, "qemu-system-x86", FS_OP_OPEN, 3, 0, 0, 0, 0);
		w.m.pid = pid;
		w.m.elapsed_s = 4;
		w.m.fs_seen = true;
		w.m.ops[FS_OP_OPEN].count = 100;
		w.m.ops[FS_OP_OPEN].total_ns = 3 * MS;
		w.m.ops[FS_OP_OPEN].p99_lt_ns = 65536;
		il_window_judge(&w, &j);
		assert_int_equal(j.layers.why, IL_WHY_IDLE);
		assert_int_equal(j.v.d.where, IL_WHERE_NONE);
		assert_int_equal(j.cause.found, pid != 0);
		assert_non_null(strstr(j.v.why, pid ? "no layer stands out: qemu-system-x86 (pid 10)'s open calls took 0.1% of the 4.0 s"
						    : "no layer stands out: file operations took 0.1% of the time"));
	}
}

/* The part of the waits past the CPU's ring of runs (more switches than it holds: CPU hogs
 * beside a loop of short-lived processes) is not an idle CPU's: it goes to the holders seen,
 * by their parts (a trial read "cpu (idle) 13%" with no CPU idle in /proc/stat). 700 ms of
 * run queue: hogs 300 + 100 ms seen, the idle CPU 100, past the ring 300 -> hogs 560, idle
 * 140. */
static void test_cpu_past_ring(void **state)
{
	struct il_window w;

	(void)state;
	fsyncer_runq(&w, 50, 700, 100);
	woken(&w, 10, FS_OP_FSYNC, SPLIT_WK_CPU, 40, "hog", false, 300, 0);
	woken(&w, 10, FS_OP_FSYNC, SPLIT_WK_CPU, 41, "hog", false, 100, 0);
	woken(&w, 10, FS_OP_FSYNC, SPLIT_WK_CPU, 0, "", false, 100, 0);
	woken(&w, 10, FS_OP_FSYNC, SPLIT_WK_CPU, 0, "", false, 300, 0)->k.wk_tid = SPLIT_RQ_PAST_RING;
	il_cause(&w, &c);
	assert_int_equal(c.blames[0].kind, IL_CK_CPU);
	assert_string_equal(c.blames[0].comm, "hog");
	assert_true(c.blames[0].ns == 560 * MS);
	for (int i = 1; i < c.nblames; i++)
		if (c.blames[i].kind == IL_CK_CPU && !c.blames[i].comm[0])
			assert_true(c.blames[i].ns == 140 * MS);
}

/* The table's sync row is named for what the time split saw: fsync, fdatasync when every
 * sync was one, both when some were (it said fsync beside a line that said fdatasync). */
static void test_sync_row(void **state)
{
	static const struct { __u64 datasync; const char *row; } cases[] = {
		{ 0, "syscall/VFS  fsync " }, { 100, "syscall/VFS  fdatasync " },
		{ 40, "syscall/VFS  fsync/fdatasync " },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct il_window w;
		char *out = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&out, &len);

		fsyncer(&w);
		ops[0].v.datasync = cases[i].datasync;
		w.m.fs_seen = true;
		w.m.ops[FS_OP_FSYNC].count = 100;
		il_cause(&w, &c);
		il_window_table(f, &w, &c);
		fclose(f);
		assert_non_null(strstr(out, cases[i].row));
		free(out);
	}
}

/* A submitter with the victim's name: its pid in the evidence, not a second bare
 * "fsyncer" beside the victim's (a trial's "python3 (the victim) 24%, python3 2%"). */
static void test_same_name_submitter(void **state)
{
	struct il_window w;
	char lines[5][200];
	int n;

	(void)state;
	fsyncer(&w);
	sent(&w, 10, "fsyncer", 10 << 20, 100, 0);
	sent(&w, 30, "fsyncer", 1 << 20, 100, 0);
	sent(&w, 20, "dd", 40 << 20, 300, 0);
	il_cause(&w, &c);
	n = il_cause_evidence(&c, lines);
	assert_true(n >= 2);
	assert_non_null(strstr(lines[1], "fsyncer (the victim) "));
	assert_non_null(strstr(lines[1], "fsyncer (pid 30) "));
	assert_null(strstr(lines[1], "dd (pid"));
}

/* The title a process set itself: its role after "COMM: ", a cluster's name skipped, two
 * words at most, none from a client address or status on. */
static void test_title_parse(void **state)
{
	static const struct { const char *cmd; size_t n; const char *comm, *want; } t[] = {
		{ "postgres: 15/main: checkpointer ", 0, "postgres", "checkpointer" },
		{ "postgres: walwriter\0\0\0", 22, "postgres", "walwriter" },
		{ "postgres: background writer   ", 0, "postgres", "background writer" },
		{ "postgres: 15/main: alice db1 [local] COMMIT", 0, "postgres", "alice db1" },
		{ "postgres: alice db1 127.0.0.1(40132) idle", 0, "postgres", "alice db1" },
		{ "postgres: logical replication launcher", 0, "postgres", "logical replication" },
		{ "nginx: master process /usr/sbin/nginx -g daemon on;", 0, "nginx", "master process" },
		{ "sshd: alice [priv]", 0, "sshd", "alice" },
		{ "sshd: alice@pts/0", 0, "sshd", "" },
		{ "/usr/lib/postgresql/15/bin/postgres\0-D\0/var/lib/pg", 52, "postgres", "" },
		{ "postgres", 0, "postgres", "" },
		{ "postgres:", 0, "postgres", "" },
		{ "postgresql: x", 0, "postgres", "" },
		{ "python3\0logger: x", 17, "python3", "" },
		{ "postgres: 127.0.0.1", 0, "postgres", "" },
	};
	char buf[32];

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		assert_string_equal(il_who_title_parse(t[i].cmd, t[i].n ? t[i].n : strlen(t[i].cmd),
						       t[i].comm, buf, sizeof(buf)), t[i].want);
	/* cut to the room given: whole words only */
	assert_string_equal(il_who_title_parse("postgres: background writer", 27, "postgres", buf, 12),
			    "background");
}

/* Processes of one command told apart by their titles: this test's own process, titled as
 * PostgreSQL's checkpointer titles itself (main() rewrites its argv[0]), and another of the
 * same command with no title. Without titles they were one group, "test_cause (2 pids)". */
static char own_comm[16];

static void test_titles(void **state)
{
	struct il_window w;
	char want[64], lines[5][200];
	__u32 me = getpid();

	(void)state;
	fsyncer(&w);
	sent(&w, 10, "fsyncer", 1 << 20, 100, 0);
	sent(&w, me, own_comm, 50 << 20, 500, 0);
	sent(&w, 999999999, own_comm, 49 << 20, 500, 0); /* no such process: no title */
	snprintf(want, sizeof(want), "%s: ckpt", own_comm);
	il_cause(&w, &c);
	assert_int_equal(c.blames[0].kind, IL_CK_NEIGHBOUR);
	assert_string_equal(c.blames[0].comm, want);
	assert_int_equal(c.blames[0].npids, 1);
	snprintf(want, sizeof(want), "behind %s: ckpt (pid %u) on ", own_comm, me);
	line_has(&w, want);
	assert_true(il_cause_evidence(&c, lines) > 1);
	snprintf(want, sizeof(want), " %s: ckpt ", own_comm);
	assert_non_null(strstr(lines[1], want));
	snprintf(want, sizeof(want), ", %s 4", own_comm); /* the untitled one apart: 49 % */
	assert_non_null(strstr(lines[1], want));
}

/* The cpu cgroup of the made-up hogs: 40 and 41 in /batch; no other pid is known. */
static const char *cgroup_stub(__u32 pid, char *buf, size_t len)
{
	snprintf(buf, len, "%s", pid == 40 || pid == 41 ? "/batch" : "-");
	return buf;
}

/* A victim the view has no entry for (its attribution entry evicted: thousands of short-lived
 * processes) is named from its block I/O rows, else from the /proc snapshots, else
 * "(unknown)": never an empty name ("no layer stands out:  (pid N)'s write calls"). */
static void test_victim_evicted(void **state)
{
	struct il_window w;

	window(&w);
	calls(&w, 10, "dd", FS_OP_WRITE, 1, 50, 1, 0, 0);
	w.view.nprocs = 0; /* evicted */
	sent(&w, 10, "dd", 4096, 1, 0);
	il_cause(&w, &c);
	assert_true(c.found);
	assert_int_equal(c.victim.pid, 10);
	assert_string_equal(c.victim.comm, "dd");
	window(&w);
	calls(&w, 11, "x", FS_OP_WRITE, 1, 50, 1, 0, 0);
	w.view.nprocs = 0;
	cpu(&w, 11, "logger", 5);
	il_cause(&w, &c);
	assert_string_equal(c.victim.comm, "logger");
	window(&w);
	calls(&w, 12, "x", FS_OP_WRITE, 1, 50, 1, 0, 0);
	w.view.nprocs = 0;
	il_cause(&w, &c);
	assert_string_equal(c.victim.comm, "(unknown)");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_victim_evicted),
		cmocka_unit_test(test_neighbour), cmocka_unit_test(test_service),
		cmocka_unit_test(test_device), cmocka_unit_test(test_uring),
		cmocka_unit_test(test_throttle), cmocka_unit_test(test_cpu),
		cmocka_unit_test(test_cpu_many), cmocka_unit_test(test_cpu_holders),
		cmocka_unit_test(test_fdatasync_word), cmocka_unit_test(test_quiet),
		cmocka_unit_test(test_kthread_own_threads), cmocka_unit_test(test_journal_for),
		cmocka_unit_test(test_lock), cmocka_unit_test(test_journal_followed),
		cmocka_unit_test(test_journal_runq),
		cmocka_unit_test(test_journal_runq_capped), cmocka_unit_test(test_hogs_across_parts),
		cmocka_unit_test(test_worker_completion), cmocka_unit_test(test_cpu_unnamed),
		cmocka_unit_test(test_dirtier_cgroup),
		cmocka_unit_test(test_victim_choice), cmocka_unit_test(test_dirty),
		cmocka_unit_test(test_line), cmocka_unit_test(test_title_parse),
		cmocka_unit_test(test_titles), cmocka_unit_test(test_group_members), cmocka_unit_test(test_group_members_more),
		cmocka_unit_test(test_quiet_machine),
		cmocka_unit_test(test_cpu_past_ring),
		cmocka_unit_test(test_sync_row),
		cmocka_unit_test(test_same_name_submitter),
		cmocka_unit_test(test_kthread_neighbour),
	};
	FILE *f = fopen("/proc/self/comm", "r");

	/* this process's title, set as PostgreSQL sets its own: over its argv[0] */
	if (!f || !fgets(own_comm, sizeof(own_comm), f))
		return 1;
	fclose(f);
	own_comm[strcspn(own_comm, "\n")] = 0;
	if (argc < 1 || strlen(argv[0]) < strlen(own_comm) + strlen(": ckpt"))
		return 1;
	memset(argv[0], 0, strlen(argv[0]));
	sprintf(argv[0], "%s: ckpt", own_comm);
	il_cause_cgroup_lookup(cgroup_stub);
	return cmocka_run_group_tests_name("cause", tests, NULL, NULL);
}
