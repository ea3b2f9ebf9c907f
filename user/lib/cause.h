/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Who makes it slow: the verdict that follows each wait to its cause.
 *
 * From one window (measure.h) it takes the traced calls' time split (where each call's time
 * went: on CPU, run queue, I/O wait ended by its block I/O or by a task, other waits, by
 * waker; user/lib/layers/split.h), who held each disk (blk_procs: device time by submitter),
 * every process's CPU time, attribution and the layers' totals, and:
 *   1. picks the victim: -p's process, else the process whose calls lost the most time to
 *      others (a neighbour's requests, a throttle, a lock holder, CPU hogs), else the one
 *      with the most time in calls;
 *   2. takes its operation with the most time and gives each part of that time to a cause:
 *        on CPU                -> its own work in the kernel (syscall/VFS);
 *        run queue             -> the tasks that held its CPU as its waits ended (the
 *                                 split's CPU holders), by the waits they ended: its own
 *                                 threads its own, an idle CPU no one's; where none was
 *                                 seen, the CPU hogs on its CPUs, by their CPU time;
 *        I/O wait on its I/O   -> on disk D: the throttle that held its bios before Q (block
 *                                 layer); of the rest, the other submitters' share of D's
 *                                 busy time (the neighbours, grouped by command; a flusher's
 *                                 or the journal's writes count for the processes whose pages
 *                                 they wrote), and the device itself;
 *        woken by the journal  -> its commit's own I/O wait on D followed as above; the rest
 *                                 to the journal (filesystem);
 *        woken by a process    -> that process, the lock holder (syscall/VFS);
 *        I/O wait on a timer   -> dirty throttling (balance_dirty_pages) when that is where
 *                                 the I/O wait is: writeback, and whose pages fill the disk;
 *   3. sums the causes by kind of wait (a CPU, whoever held it and in whichever part; the
 *      disk, its own requests and the neighbours'; the journal and kernel threads; a lock
 *      holder; ...): the kind with the most time names the layer, its largest cause is the
 *      culprit. Decisions are on shares of time, never on percentile bucket edges, so a
 *      steady load gives the same verdict run after run.
 * A pure function of the window: unit-tested with made-up windows (tests/unit/test_cause.c).
 */
#ifndef IOLAYER_CAUSE_H
#define IOLAYER_CAUSE_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>
#include "lib/split.h"
#include "verdict.h"

struct il_window;
struct il_snap;
struct il_measure_src;

/* What a cause is (il_blame.kind). */
enum il_ck {
	IL_CK_SELF,        /* its own work on CPU in the kernel; its threads on its run queue */
	IL_CK_DEVICE,      /* its own I/O on a disk nobody else kept busy */
	IL_CK_NEIGHBOUR,   /* other processes' requests on the disk it waits on */
	IL_CK_THROTTLE,    /* a cgroup throttle holding its bios before the queue */
	IL_CK_JOURNAL,     /* the journal thread, beyond its own I/O wait */
	IL_CK_LOCK,        /* another process that woke it: the holder of what it waited for */
	IL_CK_KTHREAD,     /* a kernel thread that woke it (not the journal), beyond its I/O */
	IL_CK_CPU,         /* run-queue time: the tasks that held its CPU (comm "": idle) */
	IL_CK_DIRTY,       /* dirty throttling: writers held in balance_dirty_pages */
	IL_CK_OTHER,       /* a wait nothing here explains (a timer, an interrupt, unknown) */
	IL_CK_URING,       /* io_uring requests' time outside the block layer: before their bios
			    * (an io-wq worker, a page-cache copy) and after (the completion
			    * posted when the submitter next enters the ring) */
	IL_CK__MAX
};

/* The JSON word of a kind: "self", "device", "neighbour", "throttle", "journal", "lock",
 * "kthread", "cpu", "dirty", "other". */
const char *il_ck_name(enum il_ck k);

/* The parts of a victim's time the verdict follows, the largest first: on CPU, waiting for a
 * CPU, waiting for its own block I/O, waiting for another task (or a timer). */
enum il_cause_part { IL_CP_CPU, IL_CP_RUNQ, IL_CP_IO, IL_CP_WAIT, IL_CAUSE_PARTS };

/* One cause of the victim's call time. */
/* A process group's name in the causes: its command, and the title its processes set (see
 * il_who_pid_title()) after ": " ("postgres: checkpointer"), escaped when shown. */
#define IL_CAUSE_NAME 48

#define IL_BLAME_PIDS 8

struct il_blame {
	enum il_ck kind;
	__u32 pid;                  /* a process (a group's busiest member), 0 none */
	char comm[IL_CAUSE_NAME];   /* its command (a kernel thread's name), and title */
	int npids;                  /* processes of that command in the group (1: one) */
	bool more_pids;             /* more than npids: the group's count stopped there */
	__u32 pids[IL_BLAME_PIDS];  /* the first of them seen, 0 past the last */
	bool kthread;
	char cgroup[128];           /* the throttled cgroup; a process's cgroup */
	__u32 dev;                  /* the disk, 0 none */
	char disk[32];
	char rule[192];             /* the throttle rules */
	char via[16];               /* the kernel thread most of it went through (jbd2/loop0-8) */
	char for_comm[IL_CAUSE_NAME]; /* a journal thread's: the process whose syncs it woke the
				     * most (whose commits they were), "" unknown (-p: others'
				     * syncs are not traced) */
	__u32 for_pid;
	__u64 via_ns;               /* of ns, what went through a kernel thread */
	__u64 ns;                   /* the victim's call time it accounts for */
	__u64 part_ns[IL_CAUSE_PARTS]; /* of ns, by the part of the time it came from */
	double share;               /* ns / the victim's call time */
	double disk_share;          /* a neighbour's share of the disk's bytes; the device's: all
				     * the other submitters' share */
};

#define IL_CAUSE_MAX 8
#define IL_CAUSE_DISKS 4

/* How a CPU hog's cgroup is found (the cpu controller's path of a pid, "-" unknown), for the
 * cgroup of a group of CPU hogs all in one: il_cgroup_cpu_of_pid() unless set (tests). */
void il_cause_cgroup_lookup(const char *(*of_pid)(__u32 pid, char *buf, size_t len));

/* A disk's load by submitter (bytes), as the evidence shows it. */
struct il_cause_disk {
	__u32 dev;
	char disk[32];
	__u64 busy_ns;                      /* bytes of every submitter */
	int n;
	struct {
		char comm[IL_CAUSE_NAME];
		__u32 pid;              /* one process's (of a group: its largest) */
		int npids;
		bool more_pids;         /* more than npids (il_blame.more_pids) */
		bool kthread, self;     /* self: the victim (or the thread its wait went through) */
		double share;
		char for_comm[IL_CAUSE_NAME]; /* a journal thread's: as il_blame.for_comm */
	} top[4];
};

/* Whether entry k of disk d shares its name with another of d's entries (then named with its
 * pid where it is one process: "python3 (pid 812)"). */
bool il_cause_disk_twin(const struct il_cause_disk *d, int k);

struct il_cause {
	bool found;                         /* a victim with split calls */
	struct {
		__u32 pid;
		char comm[IL_CAUSE_NAME];   /* its command, and title (as il_blame.comm) */
		int op;                     /* enum fs_op */
		char file[512];             /* its top file, "" none */
		__u64 calls, call_ns;
		__u64 requests;     /* of calls, io_uring requests (timed submission to
				     * completion; no thread in them to split: their time is its
				     * block I/O as far as its requests' block time goes, else
				     * "other") */
		__u64 datasync;     /* of its fsync calls, fdatasync's */
		__u64 part_ns[SPLIT_PARTS];
	} victim;
	enum il_where where;
	enum il_cause_part part;            /* the part of the victim's time the culprit's came
					     * from the most */
	double part_share;                  /* the culprit's kind of wait (a CPU, the disk, ...:
					     * all its causes), of the victim's call time */
	struct il_blame blames[IL_CAUSE_MAX]; /* blames[0] is the culprit: the largest cause of
					     * the kind of wait with the most time; then the
					     * others, largest first */
	int nblames;
	struct il_cause_disk disks[IL_CAUSE_DISKS];
	int ndisks;
	bool no_cpu;                        /* run-queue time, but no CPU times to name hogs */
	struct {                            /* the kinds of wait the culprit was chosen by (the
					     * kind with the most of the victim's time wins, then
					     * its largest cause), the two largest */
		const char *name;           /* "cpu", "disk", "throttle", "filesystem", "lock",
					     * "dirty", "on-cpu", "other" */
		double share;               /* of the victim's time in its calls */
	} kinds[2];
	int nkinds;
	bool quiet;                         /* every p99 of the window under 1 ms (il_decision's
					     * quiet, set by il_window_judge()): said in the
					     * evidence, as the cause is relative */
	bool idle;                          /* its calls took under IL_CAUSE_IDLE of the window:
					     * the verdict is none (il_window_judge(); where the
					     * layers' own decision is a layer, that decision, and
					     * found is false) */
};

/* Below this share of the window in its calls, a victim is slowed by nothing that matters. */
#define IL_CAUSE_IDLE 0.05

/* Follow the waits of window w's calls to their causes into *c (c->found false when no
 * traced call was split: the old, layer-only verdict stands). */
void il_cause(const struct il_window *w, struct il_cause *c);

/* The verdict's one line (at most 200 bytes and len - 1): "VICTIM OP on FILE: N% of its time
 * waits ... CULPRIT". Returns buf. */
const char *il_cause_line(const struct il_cause *c, char *buf, size_t len);

/* The evidence under it, at most 5 lines (each without its newline) into lines[5][200];
 * returns how many. */
int il_cause_evidence(const struct il_cause *c, char lines[5][200]);

/* Add victim{pid, comm, op, file, calls, fdatasync_calls (op fsync only), time_ns},
 * culprit{kind, pid, comm, group, npids, more_pids (npids a floor), cgroup, file, disk, rule, via, commits_for,
 * commits_for_pid, share, disk_share},
 * breakdown[{part, ns, share}],
 * causes[...], summary and evidence[] to the verdict object v. */
void il_cause_json(struct json_object *v, const struct il_cause *c);

/* A window judged: the layers' decision and the cause that names who makes it slow. */
struct il_judgement {
	struct il_verdict v;                /* where (the cause's, when found), the sentences, the
					     * process the verdict is about (the victim) */
	struct il_cause cause;
	struct il_decision layers;          /* the layers' own decision (il_decide()) */
};

/* Judge window w: il_judge() on its layers, then il_cause(); a found cause decides where the
 * time goes (failing writeback still comes first) and names its victim as the process. */
void il_window_judge(const struct il_window *w, struct il_judgement *j);

/* The window from base to now (il_measure_window()) into *w, judged into *j
 * (il_window_judge()). Every process's window takes its block rows from the top process's
 * disk; where the verdict is about another process, of another disk, the window is measured
 * again on that one's disk (src->prefer) and judged again, so that the rows and the verdict
 * speak of one disk. 0, or -errno (*w empty then). */
int il_measure_judge(const struct il_measure_src *src, const struct il_snap *now,
		     const struct il_snap *base, struct il_window *w, struct il_judgement *j);

/* The window's JSON (il_window_json()) with the cause's fields in its verdict. */
struct json_object *il_judgement_json(const struct il_window *w, const struct il_judgement *j);

#endif
