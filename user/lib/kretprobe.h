/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Return probes with room for many sleeping calls (see kretprobe.c). */
#ifndef IOLAYER_KRETPROBE_H
#define IOLAYER_KRETPROBE_H

#include <bpf/libbpf.h>

/* Return probe on kernel function func for prog (a kretprobe program) with room for
 * IL_KRETPROBE_MAXACTIVE calls in flight at once (the kernel's default is as low as the number
 * of CPUs): defined in tracefs kprobe_events as iolayer/r<pid>_<n>, else, when that fails,
 * libbpf's kretprobe with the default. NULL with errno set on failure. */
#define IL_KRETPROBE_MAXACTIVE 1024
struct bpf_link *il_attach_kretprobe(struct bpf_program *prog, const char *func);

/* Remove the tracefs kprobe events this process defined; their links must be destroyed
 * first. Also runs at exit. */
void il_kretprobes_remove(void);

#endif
