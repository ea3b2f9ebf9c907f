/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Feature probes: can this kernel attach a given method to a given target? Each returns
 * true when usable; on false, `why` (may be NULL) receives a short reason. Results are cached
 * for the life of the process.
 */
#ifndef IOLAYER_PROBES_H
#define IOLAYER_PROBES_H

#include <stdbool.h>
#include <stddef.h>

bool il_can_fentry(const char *func, char *why, size_t len);   /* BTF FUNC + trial load/attach */
bool il_can_kprobe(const char *func, char *why, size_t len);   /* kprobe support + symbol */
bool il_can_tp_btf(const char *tp, char *why, size_t len);     /* btf_trace_NAME + trial load */
bool il_kernel_has_func(const char *func);                     /* in BTF or /proc/kallsyms */

/* True when the kernel has kprobes at all (the kprobe PMU or tracefs kprobe_events). */
bool il_kprobes_supported(void);

/* True when tracepoint programs may keep task-local storage (BPF_MAP_TYPE_TASK_STORAGE,
 * bpf_task_storage_get) and have the current task's BTF pointer (bpf_get_current_task_btf):
 * 5.11 and later. */
bool il_can_task_storage(void);

#endif
