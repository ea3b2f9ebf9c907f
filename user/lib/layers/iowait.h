/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The I/O-wait layer's user side (user/lib/iowait.c; kernel side bpf/lib/iowait.bpf.h, types
 * bpf/lib/iowait.h): settings, plan, the table of sums and its report by stack and thread,
 * the sleeps still under way, stacks as iowaitstack prints them. Prefix il_iw_.
 */
#ifndef IOLAYER_LAYERS_IOWAIT_H
#define IOLAYER_LAYERS_IOWAIT_H

#include <stdbool.h>
#include <stdio.h>
#include <json-c/json.h>
#include <bpf/libbpf.h>
#include "plan.h"
#include "lib/iowait.h"

struct il_stacknames;

/* Settings, with iw_cfg.tp_prev_state read from sched_switch's BTF prototype. */
struct iw_cfg *il_iw_cfg(struct bpf_object *obj);

/* Plan "I/O wait (sched_switch)": tp_btf, else raw_tp. Sizes the stack maps by iw_cfg's
 * user_stacks and sampled: set them first. */
void il_iw_plan(struct bpf_object *obj, struct il_plan *p);

/* Where a sleep under way is kept, by the method plan p chose (iw_cfg.task_storage): in
 * task-local storage for sampled stacks (iolayer) under tp_btf where the kernel has it. Before
 * load. */
void il_iw_chosen(struct bpf_object *obj, const struct il_plan *p);

/* Call fn for every aggregate of iw_waits of a loaded obj (cumulative since start); stops
 * when fn returns non-zero. 0, or -errno when the map cannot be read or fn returned it. */
int il_iw_foreach(struct bpf_object *obj,
		      int (*fn)(const struct iw_key *k, const struct iw_val *v, void *ctx), void *ctx);

/* What user space keeps of the layer's sums: one entry per kernel aggregate, with its value
 * at the last read (cumulative since start) and its growth since the last interval report. */
struct il_iw_entry {
	struct iw_key key;
	struct iw_val seen;   /* the kernel's cumulative value at the last read */
	struct iw_val iv;     /* growth since il_iw_table_new_interval(); max_ns is not kept */
};

struct il_iw_table {
	struct il_iw_entry *v;
	size_t n, cap;
	int *index;           /* open addressing over v, -1 = empty */
	size_t index_size;
	__u64 counted;        /* sleeps folded in since start: below iw_hist's count by those
			       * whose entry the kernel's LRU aged out before a read took them */
};

/* Fold the kernel's sums (iw_waits of a loaded obj) into t; on_new (may be NULL) is called
 * for each entry seen for the first time. 0, or -errno. */
int il_iw_table_read(struct bpf_object *obj, struct il_iw_table *t,
		     void (*on_new)(const struct il_iw_entry *e, void *ctx), void *ctx);
void il_iw_table_new_interval(struct il_iw_table *t);
void il_iw_table_free(struct il_iw_table *t);

/* One stack (kernel and user) and the entries (threads) that slept under it. */
struct il_iw_group {
	__s32 kstack, ustack;
	__u64 ucaller;                /* iw_key.ucaller of its user stack */
	__u32 utgid;                  /* user stacks are per process */
	struct iw_val sum;
	struct il_iw_entry **members; /* sorted by total wait */
	size_t nmembers;
};

/* Per-thread totals (a thread that exec()ed is shown under the name with most wait). */
struct il_iw_thread {
	const struct iw_key *key;
	struct iw_val sum;
};

/* A report's view of t: entries with waits (their interval growth when interval is true,
 * else everything since start), grouped by stack, groups sorted by total wait, and per-thread
 * totals sorted likewise. Free with il_iw_report_free(). */
struct il_iw_report {
	bool interval;
	struct il_iw_entry **list;
	size_t nlist;
	struct il_iw_group *groups;
	size_t ngroups;
	struct il_iw_thread *threads;
	size_t nthreads;
	struct iw_val all;            /* the sum of every group */
	struct il_iw_entry *rows;     /* after il_iw_report_merge(): the groups' merged rows */
	struct il_iw_entry **rowp;
};
/* 0, or -ENOMEM with r empty (free it all the same). */
int il_iw_report_make(const struct il_iw_table *t, bool interval, struct il_iw_report *r);

/* Merge the groups of r that print alike once names has named their stacks (the kernel
 * stack; with user, also the user stack of the same process): the kernel records stacks
 * that differ only in the tracer's own frames under different ids (see il_stacknames_get()).
 * Their sums are added and the largest max kept; a thread's rows under them (same pid, tid
 * and comm) become one row, with its sums added likewise; groups and rows are sorted again.
 * r->list and r->threads are left as they are (per entry, per thread). */
void il_iw_report_merge(struct il_iw_report *r, struct il_stacknames *names, bool user);
void il_iw_report_free(struct il_iw_report *r);

/* The value of e a report uses. */
const struct iw_val *il_iw_val(const struct il_iw_entry *e, bool interval);

/* A thread table's header and rows as iowaitstack prints them: COMM PID TID WAITS USECS, and
 * MAX_USECS unless interval (an interval's growth keeps no maximum), each after indent. */
void il_iw_thread_header(FILE *f, const char *indent, bool interval);
void il_iw_thread_row(FILE *f, const char *indent, const struct iw_key *k, const struct iw_val *v,
		      bool interval);

/* v as JSON members waits, usecs and (unless interval) max_usecs added to o; returns o. A
 * thread's: {comm, pid, tid, waits, usecs[, max_usecs]}. */
struct json_object *il_iw_val_json(struct json_object *o, const struct iw_val *v, bool interval);
struct json_object *il_iw_thread_json(const struct iw_key *k, const struct iw_val *v, bool interval);

/* A sleep still under way (left in iw_sleeping): its thread, the stacks it began under and
 * how long it has lasted so far. */
struct il_iw_sleeping {
	__u32 tgid, tid;
	char comm[IL_TASK_COMM_LEN];  /* read from /proc now */
	__s32 kstack, ustack;
	__u64 ucaller;
	__u64 waited_ns;
};

/* The sleeps of a loaded obj still under way now, longest first, into a malloc'ed array
 * (*out, freed by the caller), keeping those that already count under -m min_ns / -M max_ns
 * (0: no limit). An entry whose thread has left a CPU since, or is running, or is gone, is
 * not a sleep under way (its end was missed) and is left out. Returns how many, or -errno. */
int il_iw_sleeping_read(struct bpf_object *obj, __u64 min_ns, __u64 max_ns,
			struct il_iw_sleeping **out);

/* A sleep's stacks as iowaitstack shows them: the kernel stack, and with user (-U) the user
 * stack of process tgid after "--" (ucaller: the caller frame recovered at the user stack
 * pointer, 0 none), indented by 4; as JSON members kernel_stack, user_stack (with user) and
 * lost (a stack id IW_STACK_LOST) added to o. */
void il_iw_stacks_print(FILE *f, struct il_stacknames *names, __s32 kstack, __s32 ustack,
			__u32 tgid, __u64 ucaller, bool user);
void il_iw_stacks_json(struct json_object *o, struct il_stacknames *names, __s32 kstack,
		       __s32 ustack, __u32 tgid, __u64 ucaller, bool user);

/* The sleeps still under way at exit (n of them, from il_iw_sleeping_read()): a heading and
 * "still waiting: COMM pid PID tid TID, N usecs so far" with its stacks each (nothing when
 * n <= 0); or a JSON array of {comm, pid, tid, usecs, kernel_stack, user_stack, lost}. */
void il_iw_sleeping_print(FILE *f, const struct il_iw_sleeping *sw, int n,
			  struct il_stacknames *names, bool user);
struct json_object *il_iw_sleeping_json(const struct il_iw_sleeping *sw, int n,
					struct il_stacknames *names, bool user);

/* The lengths of the sleeps iw_waits counts (map iw_hist, the CPUs summed), cumulative since
 * load, as a log2 histogram of ns into slots, and when all is not NULL their count, sum and
 * longest into it (weight_ns: the sum; every sleep, where iw_waits' entries are an LRU's).
 * 0, or -errno (-ENOENT: obj has no such map); slots and *all are zero then. */
int il_iw_hist_read(struct bpf_object *obj, __u64 slots[IL_HIST_SLOTS], struct iw_val *all);

#endif
