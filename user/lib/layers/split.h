/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The split layer's user side (user/lib/split.c; kernel side bpf/lib/split.bpf.h, types
 * bpf/lib/split.h): where each traced file operation's time went -- on CPU, waiting for a
 * CPU, in I/O wait (ended by its block I/O, or by a task), in other waits -- and who ended
 * its sleeps. It rides on the fs layer: only calls the fs layer traces are split.
 *
 * Kernel sources of what the BPF side reads (every supported kernel, 5.10 to 6.18):
 *   sched:sched_switch(preempt, prev, next[, prev_state]): prev_state is an argument since
 *     5.18 (commit fa2c3254d7cf), else task_struct.state/__state (renamed in 5.14, commit
 *     2f064a59a11f; core_fixes.bpf.h il_task_state);
 *   sched:sched_waking(p), fired by try_to_wake_up() in the waker's context (current);
 *   sched:sched_wakeup(p), fired once p is enqueued (ttwu_do_activate; on p's CPU after the
 *     IPI of a remote wake-up);
 *   block:block_rq_complete(rq, error, nr_bytes): the request's disk from request.rq_disk,
 *     rq->q->disk since 6.0 (commit f3fa33acca9f; il_rq_disk), gendisk.major/first_minor;
 *   task_struct.in_iowait (io_schedule_prepare(), a bitfield read through CO-RE),
 *     .pid, .tgid, .comm, .flags & PF_KTHREAD, .nvcsw + .nivcsw.
 *
 * Call order, as for the other layers: il_split_cfg() after il_fs_cfg() (which turns the
 * layer off by default) -> il_split_plan() -> il_plans_choose() -> il_split_chosen() ->
 * load -> attach ... il_split_read(). Output, the same in every tool: a row's split with
 * il_split_text() / il_split_csv() / il_split_json(), the sums at exit with
 * il_split_sums_print() / il_split_sums_json().
 */
#ifndef IOLAYER_LAYERS_SPLIT_H
#define IOLAYER_LAYERS_SPLIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <json-c/json.h>
#include <bpf/libbpf.h>
#include "plan.h"
#include "lib/split.h"

/* Turn the layer on (or leave it off) in obj, before load: split_cfg.on, tp_prev_state from
 * sched_switch's BTF prototype; the maps sized (one entry each when off). Returns the
 * settings (.rodata of obj). */
struct split_cfg *il_split_cfg(struct bpf_object *obj, bool on);

/* The layer off in obj (what il_fs_cfg() does for every object with the fs layer): its maps
 * shrunk, the task-storage map an array where the kernel has no task storage. */
void il_split_default(struct bpf_object *obj);

/* Plan "time split (sched_switch, sched_waking, sched_wakeup, block_rq_complete,
 * sched_process_exit)": tp_btf, else raw_tp. */
void il_split_plan(struct bpf_object *obj, struct il_plan *p);

/* After il_plans_choose(), before load: per-task state in task-local storage when the plan
 * chose tp_btf and the kernel has it (5.11+), else in the hash split_by_tid. */
void il_split_chosen(struct bpf_object *obj, const struct il_plan *p);

/* After il_split_chosen(), where the block layer's block_rq_complete program is loaded and
 * calls split_on_rq_done() itself (iolayer): the layer's own program on that tracepoint is
 * left out of plan p, and split_cfg.rq_done_in_blk set. Nothing when the layer is off. */
void il_split_rq_done_in_block(struct bpf_object *obj, struct il_plan *p);

/* After il_split_chosen(), where the I/O-wait layer's sched_switch program is loaded with
 * plan iw (iolayer): when iw and p chose the same method, the layer's own sched_switch
 * program is left out of p and split_cfg.switch_in_iw set, so that the I/O-wait layer's
 * program runs the time split's handler (one program on the hook, not two). Nothing when the
 * layer is off or the methods differ. */
void il_split_switch_in_iowait(struct bpf_object *obj, struct il_plan *p, const struct il_plan *iw);

/* Names of the parts (enum split_part): JSON keys "on_cpu", "runq", "iowait_block",
 * "iowait_task", "other". */
extern const char *const il_split_part_keys[SPLIT_PARTS];

/* Names of the waker kinds (enum split_wk_kind): "none", "task", "block", "irq", "cpu" (a
 * run-queue wait's CPU holder, not a waker). */
extern const char *const il_split_kind_names[5];

/* A waker in one word, into buf (len >= IL_TASK_COMM_LEN + 3): a kernel thread's comm in
 * brackets as ps(1) shows it ("[jbd2/loop3-8]"), a process's comm as it is (its bytes
 * unescaped: escape it for output); "disk:loop3" for a block completion (il_disk_name());
 * "irq"; a CPU holder (SPLIT_WK_CPU) as a task, "idle" for the idle task; "-" for none.
 * Returns buf. */
const char *il_split_waker_name(const struct split_waker *w, char *buf, size_t len);

/* Per (process, operation): split_ops. Times in ns, sums over every call (the nested syncs
 * kept apart by fs_cfg.nested_apart not included). */
struct il_split_op_row {
	struct split_op_key k;
	struct split_op_val v;
};

/* Per (victim process, operation, waker): split_wakers. Rows of kind SPLIT_WK_CPU are the
 * tasks that ran on the victim's CPU while it waited in the run queue (ns: the part of its
 * waits each ran; count: its runs there). */
struct il_split_wk_row {
	struct split_wk_key k;
	struct split_wk_val v;
};

/* Per process: split_exited, its threads that exited while tracing. */
struct il_split_exit_row {
	__u64 tgid; /* the map's key */
	struct split_exited v;
};

struct il_split {
	struct il_split_op_row *ops;   /* sorted by tgid, then op */
	int nops;
	struct il_split_wk_row *wakers; /* sorted by v.ns, largest first */
	int nwakers;
	struct il_split_exit_row *exited; /* sorted by tgid */
	int nexited;
};

/* Read the aggregates of a loaded obj (cumulative since load) into malloc'ed arrays in *s
 * (il_split_free()). 0, or -errno (-ENOENT: obj has no split layer); *s is empty then. */
/* Rows r[0..n) sorted by (tgid, op), the rows of one key summed into the first: calls,
 * fdatasyncs and each part (a key counted both in its slot of split_op_slots and in
 * split_ops). Returns the rows left. */
int il_split_ops_merge(struct il_split_op_row *r, int n);

int il_split_read(struct bpf_object *obj, struct il_split *s);

/* Where the time of thread tid's (of process pid) call of operation op (enum fs_op), still
 * in flight, went so far, up to now (il_now_ns()): part_ns[SPLIT_PARTS], ns, from the
 * thread's state in a loaded obj (the interval it is in now counted to its state's part).
 * 0; -ENOENT when the thread has no such call in flight (it began before tracing), or
 * -errno. */
/* Add the five parts (ns) to o as "<part>_us" (µs, fractional): on_cpu_us, runq_us,
 * iowait_block_us, iowait_task_us, other_us. */
void il_split_parts_json(struct json_object *o, const __u64 part_ns[SPLIT_PARTS]);

int il_split_inflight(struct bpf_object *obj, __u32 pid, __u32 tid, int op, __u64 now,
		      __u64 part_ns[SPLIT_PARTS]);
void il_split_free(struct il_split *s);

/* One row's split (struct split_result, as in struct fs_event.split), in the three formats
 * of the tools' rows; the same columns in fsslower --split and any tool that prints it.
 * Parts and waker times are ns in r; text shows ms (2 decimals), CSV and JSON µs (3). A
 * disk is named by il_disk_name(); no error is reported (a stream error shows in
 * ferror(f)). */

/* Text: the 10 column titles, each left- or right-aligned to its width and followed by a
 * space ("  ONCPU    RUNQ IOW_BLK IOW_TSK   OTHER WAKER            WPID    ...W_DISK   "). */
void il_split_text_head(FILE *f);

/* Text: the 10 columns of r under il_split_text_head(), each followed by a space: the five
 * parts (ms), WAKER (il_split_waker_name(), escaped, cut to 16 columns), WPID (a task's
 * tgid, else "-"), W_MS, then for a task waker W_IO (ms) and W_DISK (its I/O wait's disk,
 * "-" for none), else "-" "-". */
void il_split_text(FILE *f, const struct split_result *r);

/* CSV: the header names of il_split_csv()'s 15 fields, comma-separated (no comma at
 * either end). */
#define IL_SPLIT_CSV_HEAD "on_cpu_us,runq_us,iowait_block_us,iowait_task_us,other_us,waker," \
	"waker_kind,waker_pid,waker_tid,waker_kthread,waker_disk,waker_us,waker_wakes," \
	"waker_io_us,waker_io_disk"

/* CSV: the 15 fields of r, each followed by a comma: the five parts (µs), waker (quoted as
 * CSV needs), waker_kind (il_split_kind_names), waker_pid, waker_tid, waker_kthread (0/1;
 * 0 when no task), waker_disk (a block waker's disk, else empty), waker_us, waker_wakes,
 * waker_io_us, waker_io_disk (empty for none). */
void il_split_csv(FILE *f, const struct split_result *r);

/* JSON: a new object {"on_cpu_us", "runq_us", "iowait_block_us", "iowait_task_us",
 * "other_us", "waker": {"kind", for a task "pid", "tid", "comm", "kthread", "io_usecs",
 * "io_disk" (null for none), for a block completion "disk", then "usecs", "wakes"}} (µs).
 * The caller owns it. */
struct json_object *il_split_json(const struct split_result *r);

/* How many wakers il_split_sums_print() lists. */
#define IL_SPLIT_TOP_WAKERS 10

/* The split's exit summary, text, to f: a blank line, "Where the time went" (a row per
 * process and operation: PID, T (il_fs_op_letters), CALLS, the five parts in ms), then "Top
 * wakers": the IL_SPLIT_TOP_WAKERS largest rows of s->wakers (PID, T, WAKER, WPID, WAKES,
 * W_MS, W_IO in ms, W_DISK, "-" for none); then, when there are any, "Top CPU holders": the
 * IL_SPLIT_TOP_WAKERS largest SPLIT_WK_CPU rows (PID, T, HOLDER, HPID, RUNS, RQ_MS). s as
 * il_split_read() fills it. */
void il_split_sums_print(FILE *f, const struct il_split *s);

/* The same as JSON, every waker: a new object {"processes": [{"pid", "op" (il_fs_op_names),
 * "calls", the five "<part>_us"}], "wakers": [{"pid", "op", "kind", "waker", for a task
 * "waker_pid", "waker_tid", "io_usecs", "io_disk" (null for none), for a block completion
 * "disk", then "usecs", "wakes"}], "cpu_holders": [{"pid", "op", "holder", "holder_pid" (null:
 * the CPU was idle), "kthread", "usecs", "runs"}]} (µs), in s's order. The caller owns it. */
struct json_object *il_split_sums_json(const struct il_split *s);

#endif
