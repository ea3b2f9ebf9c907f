/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The kernel's own BTF: one handle on vmlinux BTF for the whole process, module BTF on
 * demand, and what the library reads from them (functions, tracepoint prototypes). */
#ifndef IOLAYER_BTF_H
#define IOLAYER_BTF_H

#include <stdbool.h>
#include <linux/types.h>

struct btf;

/* vmlinux BTF (/sys/kernel/btf/vmlinux), loaded once and kept; NULL when the kernel has none. */
struct btf *il_btf_vmlinux(void);

/* Find type `name` of BTF kind `kind` (BTF_KIND_FUNC, BTF_KIND_TYPEDEF, ...) in vmlinux BTF,
 * then in the loaded modules' BTF. On success sets *type_id and *obj_fd (0 for vmlinux, else
 * an fd of the module's BTF object that the caller closes). 0, or -ENOENT. */
int il_btf_find(const char *name, int kind, __u32 *type_id, int *obj_fd);

/* Number of arguments of tracepoint NAME's BTF prototype (btf_trace_NAME), not counting the
 * leading `void *`; -1 when the kernel's BTF does not describe it. Tracepoint argument lists
 * change between kernels (block_rq_issue lost its request_queue in 5.11). */
int il_btf_tp_nargs(const char *name);

/*
 * Prototype of kernel function `func` as vmlinux BTF describes it: *nargs receives its number
 * of arguments, *returns_int whether it returns a 4-byte signed integer (looking through
 * typedefs and qualifiers, so `int` and typedefs of it qualify; `long`, `bool`, pointers and
 * `void` do not). Returns 0, or -ENOENT when the kernel has no BTF or its vmlinux BTF has no
 * such function (a module's function, inlined, or not built).
 */
int il_kfunc_proto(const char *func, int *nargs, bool *returns_int);

#endif
