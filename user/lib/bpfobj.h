/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A layer's handles in whatever BPF object includes it, found by name: its settings struct
 * in .rodata and its maps. So a layer's user side works from a bpf_object alone, the same in
 * every tool that composes it. */
#ifndef IOLAYER_BPFOBJ_H
#define IOLAYER_BPFOBJ_H

#include <stdbool.h>
#include <stddef.h>
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

/* True when obj has a map called name (how a layer tells it is part of an object). */
bool il_obj_has_map(struct bpf_object *obj, const char *name);

/* Turn autoload off for every program of obj: the plans then turn on what they chose. */
void il_autoload_none(struct bpf_object *obj);

#endif
