/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Every process's CPU time and CPU affinity, from /proc: what the verdict needs to name the
 * CPU hogs behind a traced call's run-queue time. Sampled at the ends of a window; a process
 * that died before its end is not here: the time split's split_exited gives its threads' CPU
 * time at their exits (il_window's cpu holds both). Any thread may call it (no state).
 */
#ifndef IOLAYER_PROCSTAT_H
#define IOLAYER_PROCSTAT_H

#include <stdbool.h>
#include <linux/types.h>

struct il_proc_cpu {
	__u32 pid, ppid;
	char comm[16];
	bool kthread;           /* PF_KTHREAD in /proc/PID/stat's flags */
	__u64 cpu_ns;           /* utime + stime (/proc/PID/stat fields 14, 15), ns; tick-grained;
				 * a kernel thread's from /proc/PID/schedstat field 1
				 * (se.sum_exec_runtime), exact */
	__u64 runq_ns;          /* a kernel thread's time waiting on a run queue
				 * (/proc/PID/schedstat field 2, sched_info.run_delay; needs
				 * CONFIG_SCHED_INFO), ns; 0 for a process or when unreadable */
	__u64 cpus;             /* the CPUs it may run on (sched_getaffinity(), its main
				 * thread's) as a mask: bit i for CPU i, CPUs 64 and above on
				 * bit i % 64 */
};

/* Every process of /proc (a kernel thread with its schedstat too) into a malloc'ed array sorted by pid (*rows, freed by the caller).
 * Returns how many, or -errno. */
int il_proc_cpu_read(struct il_proc_cpu **rows);

/* Whether process pid is a kernel thread (PF_KTHREAD in /proc/PID/stat); false when gone. */
bool il_proc_kthread(__u32 pid);

/* The entry of pid in rows[n] (sorted by pid), or NULL. */
const struct il_proc_cpu *il_proc_cpu_find(const struct il_proc_cpu *rows, int n, __u32 pid);

/* Thread tid of process tgid's state letter (R, S, D, ...) from /proc/TGID/task/TID/stat
 * (a short file, cheaper to read than status): false when the thread is gone. */
bool il_proc_task_state(__u32 tgid, __u32 tid, char *state);

/* Thread tid of process tgid, from /proc/TGID/task/TID/status: its state letter (R, S, D, ...)
 * into *state and its voluntary + involuntary context switches into *switches. false when the
 * thread is gone or a field is missing. */
bool il_proc_task_status(__u32 tgid, __u32 tid, char *state, unsigned long long *switches);

/* Thread tid's comm, raw (from /proc/TGID/task/TID/comm: status escapes it), into comm[16];
 * "" when it is gone. */
void il_proc_task_comm(__u32 tgid, __u32 tid, char comm[16]);

#endif
