// SPDX-License-Identifier: GPL-2.0
/* iowaitstack: time slept in I/O wait per thread and stack (all of it in lib/iowait.bpf.h). */
#define IL_NO_WHO /* no attribution: see lib/who.bpf.h */
#include "lib/common.bpf.h"
#include "lib/core_fixes.bpf.h"
#include "lib/iowait.bpf.h"

char LICENSE[] SEC("license") = "GPL";
