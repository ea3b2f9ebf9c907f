/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Kernel function prototypes from the kernel's own BTF (/sys/kernel/btf/vmlinux). */
#ifndef IOLAYER_KFUNC_H
#define IOLAYER_KFUNC_H

#include <stdbool.h>

/*
 * Prototype of kernel function `func` as vmlinux BTF describes it: *nargs receives its number
 * of arguments, *returns_int whether it returns a 4-byte signed integer (looking through
 * typedefs and qualifiers, so `int` and typedefs of it qualify; `long`, `bool`, pointers and
 * `void` do not). Returns 0, or -ENOENT when the kernel has no BTF or its vmlinux BTF has no
 * such function (a module's function, inlined, or not built).
 */
int il_kfunc_proto(const char *func, int *nargs, bool *returns_int);

#endif
