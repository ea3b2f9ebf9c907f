/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A layer's handles in whatever BPF object includes it, found by name: its settings struct
 * in .rodata and its maps. So a layer's user side works from a bpf_object alone, the same in
 * every tool that composes it. */
#ifndef IOLAYER_BPFOBJ_H
#define IOLAYER_BPFOBJ_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include <bpf/libbpf.h>

/* Pointer to the .rodata variable `name` of obj (before load: writable, after: the frozen
 * copy), checked to be `size` bytes; NULL when obj has no such variable. */
void *il_obj_rodata(struct bpf_object *obj, const char *name, size_t size);

/* il_obj_rodata() that exits with an internal-error line when the variable is missing. */
void *il_obj_rodata_must(struct bpf_object *obj, const char *name, size_t size);

/* Set the .bss variable `name` (size bytes) of a loaded obj, before attach. 0, or -errno
 * (-ENOENT: no such variable). */
int il_obj_set_bss(struct bpf_object *obj, const char *name, const void *val, size_t size);

/* fd of map `name` of a loaded obj; -1 when there is no such map. */
int il_obj_map_fd(struct bpf_object *obj, const char *name);

/* The value of thread tid (of process pid) in map `name` of a loaded obj into value: a
 * task-local storage map looked up by a pidfd of the thread (one of a thread other than the
 * process's first needs PIDFD_THREAD, Linux 6.9), else a hash keyed by tid (__u32), the
 * stand-in where the kernel has no task storage. 0, or -errno (-ENOENT: no entry). */
int il_obj_task_lookup(struct bpf_object *obj, const char *name, __u32 pid, __u32 tid, void *value);

/* Map name of obj sized to n entries before load; nothing when obj has no such map. */
void il_obj_map_size(struct bpf_object *obj, const char *name, __u32 n);

/* Task-storage map name of obj made a one-entry array that nothing uses, before load (a
 * kernel without task storage, 5.10, cannot even make the map type); nothing when obj has no
 * such map. */
void il_obj_task_storage_stub(struct bpf_object *obj, const char *name);

/* True when obj has a map called name (how a layer tells it is part of an object). */
bool il_obj_has_map(struct bpf_object *obj, const char *name);

/* Turn autoload off for every program of obj: the plans then turn on what they chose. */
void il_autoload_none(struct bpf_object *obj);

/* Every entry of hash map fd (keys of ksz bytes, values of vsz) into *rows, malloc'ed: row i
 * (rsz bytes each) holds a key at offset 0 and its value at voff. Read in batches
 * (BPF_MAP_LOOKUP_BATCH, 5.6+): a few bpf() calls however many entries there are. The count,
 * or -errno: -EOPNOTSUPP when the kernel or the map cannot (read it key by key then). */
/* Entries 0 to n - 1 of array map fd (values of vsz bytes, one each: not a per-CPU array)
 * into vals: one batch lookup, else one lookup an entry (kernels without batches for arrays).
 * Returns how many were read, from entry 0 (0 when fd < 0 or out of memory). */
__u32 il_array_read(int fd, __u32 n, size_t vsz, void *vals);

int il_map_read_batch(int fd, size_t ksz, size_t vsz, size_t rsz, size_t voff, char **rows);

/* The keys of hash map fd (key_size bytes each), up to max of them, into keys (room for max).
 * Returns how many. */
int il_map_keys(int fd, void *keys, size_t key_size, int max);

/* Per-CPU map fd's value at key (value_size bytes on each CPU) summed over the CPUs: its
 * first n __u64s into out[0 .. n - 1]. 0, or -errno (out zeroed). */
int il_percpu_sum(int fd, const void *key, size_t value_size, __u64 *out, size_t n);

#endif
