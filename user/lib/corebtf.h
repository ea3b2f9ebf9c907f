/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A small BTF for CO-RE, cached per kernel and per BPF object.
 *
 * When a BPF object is loaded, libbpf relocates each field access against the kernel's BTF
 * (CO-RE). For each type the object reads it searches all of vmlinux's types (126,611 on
 * 6.18) by name: 40-45 ms of a tool's start-up on this project's 2-CPU machines, the largest
 * part. The answer depends only on the kernel's BTF and the object, so it is kept: the first
 * start on a kernel runs `bpftool gen min_core_btf` (the types and members the object's
 * relocations use, a few KB), and later starts relocate against that file
 * (bpf_object_open_opts.btf_custom_path). Where bpftool or the cache directory is missing,
 * libbpf searches vmlinux's BTF as before: the same relocations, only slower.
 */
#ifndef IOLAYER_COREBTF_H
#define IOLAYER_COREBTF_H

#include <stddef.h>

/* Where the cache lives unless IOLAYER_CACHE_DIR names another directory (empty: no
 * cache). Files: <dir>/core-btf/<kernel BTF hash>-<object hash>.btf, 1-13 KB each. */
#define IL_CACHE_DIR "/var/cache/iolayer"

/*
 * The path of the cached CO-RE BTF for the BPF object `elf` (its ELF bytes, size bytes: the
 * skeleton's X_bpf__elf_bytes()) on the running kernel, made first when missing (bpftool
 * gen min_core_btf, ~0.1 s). NULL when there is none to use: no vmlinux BTF, the cache
 * disabled or not writable, no bpftool, or bpftool failed; the caller then lets libbpf search
 * vmlinux's BTF. A cached file that libbpf cannot parse, or that is not root's and private,
 * is removed and made again. The directory and the file are opened once (no symlink
 * followed), checked on their fds (ours, written by nobody else), and the path returned is
 * that open file's, /proc/PID/fd/N: what libbpf parses is the file checked, whatever the
 * directories hold by then. A directory that others may write is not used. The string is
 * valid until the next call (which closes the file of the one before).
 */
const char *il_core_btf(const void *elf, size_t size);

#endif
