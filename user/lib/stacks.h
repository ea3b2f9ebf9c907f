/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Stacks recorded by bpf_get_stackid(): reading them from a BPF_MAP_TYPE_STACK_TRACE map,
 * recognising the tracer's own kernel frames, and naming user-space addresses with libdw
 * (elfutils' libdwfl: the process's mappings from /proc/PID/maps, symbols from .symtab or
 * .dynsym, separate debuginfo where installed).
 */
#ifndef IOLAYER_STACKS_H
#define IOLAYER_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include <json-c/json.h>
#include "ksyms.h"

/* Read stack `id` of the stack map `map_fd` into ips (room for max addresses). Returns the
 * number of frames (the map pads unused slots with 0), or -errno (-ENOENT: no such id). */
int il_stack_read(int map_fd, __u32 id, __u64 *ips, int max);

/* True when a kernel symbol belongs to the tracer rather than the traced code: BPF programs
 * (bpf_prog_*), fentry/fexit trampolines (bpf_trampoline_*), the tracepoint glue that runs
 * them (bpf_trace_run*, __bpf_trace_*, __traceiter_*, perf_trace_*, trace_event_raw_event_*)
 * and the stack helpers (bpf_get_stack*). Such frames are dropped before printing. */
bool il_ksym_is_tracer(const char *name);

struct il_usyms;

/* An empty cache of per-process symbol tables. NULL when out of memory. */
struct il_usyms *il_usyms_new(void);
void il_usyms_free(struct il_usyms *u);

/* Name user address addr of process pid into buf (always NUL-terminated) as
 * "function+0xoff (object)", or "object+0xoff" when the object has no symbol there, or
 * "[unknown]" when no mapping of pid holds addr (or pid is gone); escaped as il_text_escape()
 * does (a binary's symbol and file names are any bytes). Return addresses are looked
 * up at addr - 1 so a call at the end of a function is charged to that function. The
 * process's mappings are read the first time pid is seen and kept until il_usyms_forget().
 * Returns buf. */
const char *il_usyms_format(struct il_usyms *u, int pid, __u64 addr, char *buf, size_t len);

/* Read pid's mappings now (they are otherwise read at the first il_usyms_format() for pid),
 * e.g. as soon as a process is first seen, since it may exit before its stacks are named.
 * The objects themselves are opened by path later, which works after the process exits.
 * 0, or -1 when the process cannot be read (gone, or no permission). */
int il_usyms_load(struct il_usyms *u, int pid);

/* Drop what is cached for pid (e.g. after it exec()ed). */
void il_usyms_forget(struct il_usyms *u, int pid);

/* ---- named stacks, cached ------------------------------------------------------------- */

/* A stack's frames, innermost first, the tracer's own kernel frames left out. names[i] is
 * "function+0xoff [module]" (kernel) or "function+0xoff (object)" (user); funcs[i] is the
 * same without the offset, for folded output. */
struct il_frames {
	int n;
	char **names;
	char **funcs;
};

struct il_stacknames;

/* A cache naming the stacks of stack map map_fd: kernel stacks with /proc/kallsyms (read when
 * the first kernel stack is named; only whether it gives addresses is checked now: call it
 * after attaching, so the tracer's own programs have symbols and are recognised), and, when
 * user is true, user stacks with libdw. NULL after printing one line on failure. */
struct il_stacknames *il_stacknames_new(int map_fd, bool user);
/* The same with kernel symbols given (taken over: freed with s), e.g. read from a file. */
struct il_stacknames *il_stacknames_new_ksyms(int map_fd, bool user, struct il_ksyms *ksyms);
void il_stacknames_free(struct il_stacknames *s);

/* The frames of stack id (a kernel stack when pid is 0, else a user stack of process pid),
 * read and named at the first call and kept until il_stacknames_free(); NULL when id < 0
 * (not collected or lost), or out of memory. A stack that cannot be read has the one frame
 * "[stack not readable]". Stacks that print alike once the tracer's frames are left out (the kernel keeps
 * them apart when those frames differ: another BPF program, the tp_btf or raw_tp glue) get
 * the same struct il_frames: equal pointers mean equal frames, and sums kept per stack id are
 * merged by comparing them. */
const struct il_frames *il_stacknames_get(struct il_stacknames *s, __u32 pid, __s32 id);

/* Name stack id from addresses read elsewhere (n of them, innermost first; n < 0: not
 * readable), as il_stacknames_get_user() names what it reads from the map; kept the same way
 * (an id already named keeps its first frames). */
const struct il_frames *il_stacknames_add(struct il_stacknames *s, __u32 pid, __s32 id,
					  __u64 caller, const __u64 *addrs, int n);

/* The same for a user stack of process pid whose first frame is a function that keeps no
 * stack frame (a libc syscall wrapper): caller, the return address that was at the stack
 * pointer (iw_key.ucaller), is put back as the second frame, where a frame-pointer walk
 * misses it, unless the walk has it there already or no mapping of pid holds it. caller 0
 * is il_stacknames_get(). */
const struct il_frames *il_stacknames_get_user(struct il_stacknames *s, __u32 pid, __s32 id,
					       __u64 caller);

/* Read process pid's mappings now (forgetting what was cached for an earlier process of that
 * pid), while it still runs. 0, or -1 when it cannot be read. */
int il_stacknames_load_proc(struct il_stacknames *s, __u32 pid);

/* Output of a stack's frames (NULL: not collected or lost, said as `missing` when not NULL):
 * one "INDENTframe" line each ("[empty stack]" when none); a JSON array of the names (JSON
 * null for NULL); and one folded line for flame graphs, "comm;user frames outermost
 * first;-;kernel frames outermost first VALUE" (user may be NULL; ';' and ' ' in comm become
 * '_', control bytes are escaped). */
void il_frames_print(FILE *f, const struct il_frames *fr, const char *indent, const char *missing);
struct json_object *il_frames_json(const struct il_frames *fr);
/* The folded line's key (without " VALUE\n"), malloc'ed: lines of equal keys are one stack to
 * a flame graph, and are summed into one line by who prints them. NULL after one line when out
 * of memory. */
char *il_frames_folded_key(const char *comm, size_t comm_len, const struct il_frames *user,
			   const struct il_frames *kernel);

/* Folded lines: a key (il_frames_folded_key(), malloc'ed) and its value. */
struct il_folded {
	char *key;
	unsigned long long value;
};

/* Print n folded lines to f, "KEY VALUE/div", sorted by key, lines of equal keys summed into
 * one (a flame graph would add them: no key is printed twice); frees the keys. */
void il_folded_print(FILE *f, struct il_folded *v, size_t n, unsigned long long div);

#endif
