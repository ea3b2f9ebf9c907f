/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The kernel's own BTF: what the library reads from it (functions, tracepoint prototypes),
 * from the answers kept for this kernel in the cache (btf-answers/, written again at
 * il_btf_release when a question was new), else from the raw vmlinux BTF read once (freed by
 * il_btf_release), and module BTF on demand through libbpf's handle on vmlinux BTF, which is
 * loaded only then. */
#ifndef IOLAYER_BTF_H
#define IOLAYER_BTF_H

#include <stdbool.h>
#include <linux/types.h>
#include <bpf/libbpf.h>

/* libbpf's handle on vmlinux BTF (/sys/kernel/btf/vmlinux), loaded once and kept; NULL when
 * the kernel has none. The functions below need it only to search modules. */
struct btf *il_btf_vmlinux(void);

/* True when the kernel has vmlinux BTF. */
bool il_btf_has_vmlinux(void);

/* Write the answers found in the BTF that the cache did not hold, then free them and the raw
 * vmlinux BTF the look-ups below read (several MB): once the BPF object is loaded
 * (il_tool_loaded). A later look-up reads them again. */
void il_btf_release(void);

/* The bytes of /sys/kernel/btf/vmlinux as read for the look-ups below (valid until
 * il_btf_release). 0, or -ENOENT when the kernel has none or it cannot be read. */
int il_btf_vmlinux_bytes(const void **data, size_t *size);

/* Find type `name` of BTF kind `kind` (BTF_KIND_FUNC, BTF_KIND_TYPEDEF, ...) in vmlinux BTF,
 * then in the loaded modules' BTF. On success sets *type_id and *obj_fd (0 for vmlinux, else
 * an fd of the module's BTF object that the caller closes). 0, or -ENOENT. */
int il_btf_find(const char *name, int kind, __u32 *type_id, int *obj_fd);

/* The id of type `name` of BTF kind `kind` in vmlinux BTF only (the modules' are not read);
 * 0 when it has none or there is no vmlinux BTF. */
__u32 il_btf_vmlinux_id(const char *name, int kind);

/* Fill obj's il_btf_ids (bpf/lib/shared.h) where the kernel has bpf_rdonly_cast, before its
 * load: the tp_btf programs then walk their trusted pointers as untrusted ones
 * (IL_UNTRUSTED()). Nothing when obj has no such setting. */
void il_btf_ids_fill(struct bpf_object *obj);

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

/* libbpf's prog_prepare_load_fn and prog_attach_fn for SEC("tp_btf/NAME") programs, which
 * libbpf opens as raw tracepoints (il_load_handlers registers them, before any object is
 * opened). At load the program becomes a tracing program attached to typedef btf_trace_NAME
 * (the kernel's, include/linux/tracepoint.h via DEFINE_EVENT's BTF), the id found in this
 * library's read of vmlinux BTF or in a module's, and its IL_KFUNC_* calls
 * (bpf/lib/shared.h) are bound. libbpf would otherwise parse all of vmlinux's BTF for their
 * attach targets (18-20 ms of each tool's start-up on 6.18). 0 or a negative errno (-ESRCH:
 * no such tracepoint). */
int il_btf_tp_prepare(struct bpf_program *prog, struct bpf_prog_load_opts *opts, long cookie);
int il_btf_tp_attach(const struct bpf_program *prog, long cookie, struct bpf_link **link);

#endif
