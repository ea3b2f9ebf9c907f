/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "btf.h"
#include "corebtf.h"
#include "log.h"

extern char **environ;

/* A 64-bit hash of size bytes (8 at a time, then the tail): a cache key, not a defence (who
 * can change the kernel's BTF or our binary needs no cache to mislead us). */
static unsigned long long hash64(const void *p, size_t size)
{
	const unsigned char *b = p;
	unsigned long long h = 0x9e3779b97f4a7c15ULL ^ size, w;
	size_t i = 0;

	for (; i + 8 <= size; i += 8) {
		memcpy(&w, b + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	for (; i < size; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	h ^= h >> 29;
	return h * 0xc4ceb9fe1a85ec53ULL;
}

/* True when path is a regular file of ours, written by nobody else, that libbpf parses. */
static bool usable(const char *path)
{
	struct stat st;
	struct btf *b;

	if (lstat(path, &st))
		return false;
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022)) {
		unlink(path);
		return false;
	}
	b = btf__parse_raw(path);
	if (!b) {
		il_info("cached CO-RE BTF %s is damaged: made again", path);
		unlink(path);
		return false;
	}
	btf__free(b);
	return true;
}

/* Make dir (mode) unless it is there as a directory of ours that nobody else may write. */
static bool own_dir(const char *dir, mode_t mode)
{
	struct stat st;

	if (mkdir(dir, mode) && errno != EEXIST)
		return false;
	return !lstat(dir, &st) && S_ISDIR(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 022);
}

/* Run bpftool gen min_core_btf /sys/kernel/btf/vmlinux out obj, quietly. 0 on success. */
static int run_bpftool(const char *out, const char *obj)
{
	static const char *const paths[] = { "/usr/sbin/bpftool", "/usr/local/sbin/bpftool", "/sbin/bpftool" };
	char *argv[] = { "bpftool", "gen", "min_core_btf", "/sys/kernel/btf/vmlinux", (char *)out, (char *)obj, NULL };
	posix_spawn_file_actions_t fa;
	int rc = -1, status;
	pid_t pid;

	if (posix_spawn_file_actions_init(&fa))
		return -1;
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	for (size_t i = 0; i <= sizeof(paths) / sizeof(paths[0]) && rc; i++) {
		if (i < sizeof(paths) / sizeof(paths[0]))
			rc = access(paths[i], X_OK) ? -1 : posix_spawn(&pid, paths[i], &fa, NULL, argv, environ);
		else
			rc = posix_spawnp(&pid, "bpftool", &fa, NULL, argv, environ);
	}
	posix_spawn_file_actions_destroy(&fa);
	if (rc)
		return -1;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* Write size bytes of buf to a new file made from template tmpl (mkstemp). 0, or -1. */
static int write_tmp(char *tmpl, const void *buf, size_t size)
{
	int fd = mkstemp(tmpl);
	const char *p = buf;

	if (fd < 0)
		return -1;
	while (size) {
		ssize_t w = write(fd, p, size);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			close(fd);
			unlink(tmpl);
			return -1;
		}
		p += w;
		size -= w;
	}
	return close(fd);
}

/* Make path: the min_core_btf of the object elf for the running kernel, written aside and
 * renamed, so a reader sees a whole file or none. 0, or -1. */
static int make(const char *sub, const char *path, const void *elf, size_t size)
{
	char obj[PATH_MAX], out[PATH_MAX];
	int fd, rc = -1;

	if (snprintf(obj, sizeof(obj), "%s/.obj-XXXXXX", sub) >= (int)sizeof(obj) ||
	    snprintf(out, sizeof(out), "%s/.btf-XXXXXX", sub) >= (int)sizeof(out))
		return -1;
	if (write_tmp(obj, elf, size))
		return -1;
	fd = mkstemp(out);
	if (fd >= 0) {
		close(fd);
		rc = run_bpftool(out, obj);
		if (!rc)
			rc = rename(out, path);
		if (rc)
			unlink(out);
	}
	unlink(obj);
	return rc;
}

const char *il_core_btf(const void *elf, size_t size)
{
	static char path[PATH_MAX];
	const char *dir = getenv("IOLAYER_CACHE_DIR");
	char sub[PATH_MAX];
	const void *kbtf;
	size_t ksize;

	if (!dir)
		dir = IL_CACHE_DIR;
	if (!*dir || !elf || !size || il_btf_vmlinux_bytes(&kbtf, &ksize))
		return NULL;
	if (snprintf(sub, sizeof(sub), "%s/core-btf", dir) >= (int)sizeof(sub) ||
	    snprintf(path, sizeof(path), "%s/%016llx-%016llx.btf", sub, hash64(kbtf, ksize),
		     hash64(elf, size)) >= (int)sizeof(path))
		return NULL;
	if (usable(path))
		goto found;
	if (!own_dir(dir, 0755) || !own_dir(sub, 0700)) {
		il_info("no CO-RE BTF cache: %s is not a directory only root may write", dir);
		return NULL;
	}
	if (make(sub, path, elf, size) || !usable(path)) {
		il_info("no CO-RE BTF cache: bpftool gen min_core_btf failed or is not installed; "
			"relocating against all of vmlinux's BTF");
		return NULL;
	}
	il_info("CO-RE BTF cached for this kernel: %s", path);
found:
	il_debug("CO-RE relocations against %s", path);
	return path;
}
