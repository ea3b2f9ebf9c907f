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

#include <stdbool.h>
#include <stddef.h>

/* Where the cache lives unless IOLAYER_CACHE_DIR names another directory (empty: no
 * cache). Files: <dir>/core-btf/<kernel>-<object hash>.btf, 1-13 KB each, the kernel named
 * by il_kernel_key() or, without a build id, by a hash of its BTF; <dir>/btf-answers/ (btf.c). */
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

/* The running kernel as a cache key: the GNU build id of vmlinux (/sys/kernel/notes,
 * NT_GNU_BUILD_ID, which covers the BTF linked into it) in hex, then "-" and the size of
 * /sys/kernel/btf/vmlinux in hex. NULL when the kernel has no BTF or no build id note (the
 * callers then key by the BTF's bytes, or keep nothing). Read once. */
const char *il_kernel_key(void);

/* The cache directory's subdirectory sub (IOLAYER_CACHE_DIR, else IL_CACHE_DIR), made 0700
 * when missing, opened without following a symlink and checked on its fd: its fd, which the
 * caller closes, or -1 when the cache is off (IOLAYER_CACHE_DIR empty) or a directory is not
 * root's and private (said once under -v: "no WHAT cache: ..."). */
int il_cache_subdir(const char *sub, const char *what);

/* True when fd is a regular file of ours that nobody else may write. */
bool il_cache_file_ours(int fd);

#endif
