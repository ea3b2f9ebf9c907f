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

/* A 64-bit hash of size bytes (32 at a time in four independent lanes, then 8 at a time,
 * then the tail): a cache key, not a defence (who can change the kernel's BTF or our binary
 * needs no cache to mislead us). The lanes let the CPU overlap the multiplies: the kernel's
 * 5-6 MB of BTF are hashed at every start. */
static unsigned long long hash64(const void *p, size_t size)
{
	const unsigned char *b = p;
	unsigned long long l[4] = { 0x9e3779b97f4a7c15ULL ^ size, 0x243f6a8885a308d3ULL,
				    0x13198a2e03707344ULL, 0xa4093822299f31d0ULL }, h, w;
	size_t i = 0;

	for (; i + 32 <= size; i += 32) {
		for (int k = 0; k < 4; k++) {
			memcpy(&w, b + i + 8 * k, 8);
			l[k] = (l[k] ^ w) * 0xff51afd7ed558ccdULL;
			l[k] ^= l[k] >> 32;
		}
	}
	h = l[0];
	for (int k = 1; k < 4; k++)
		h = (h ^ l[k]) * 0xff51afd7ed558ccdULL;
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

/* fd is ours and nobody else may write it: owned by our euid, no group or other write bit. */
static bool ours(int fd, mode_t type)
{
	struct stat st;

	return !fstat(fd, &st) && (st.st_mode & S_IFMT) == type && st.st_uid == geteuid() &&
	       !(st.st_mode & 022);
}

/* Directory name in dirfd (AT_FDCWD: a path), made with mode when missing, opened without
 * following a symlink: its fd when it is ours (ours()), else -1. */
static int own_dir(int dirfd, const char *name, mode_t mode)
{
	int fd;

	if (mkdirat(dirfd, name, mode) && errno != EEXIST)
		return -1;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && !ours(fd, S_IFDIR)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* "/proc/PID/fd/FD": the open file fd by a path that any process of ours (libbpf, bpftool)
 * opens as that same file, whatever its directory holds by then. */
static const char *fd_path(int fd, char *buf, size_t len)
{
	snprintf(buf, len, "/proc/%d/fd/%d", (int)getpid(), fd);
	return buf;
}

/* The cache file name in directory dfd, opened once without following a symlink: its fd when
 * it is a regular file of ours (ours()) that libbpf parses as BTF, read through that fd; -1
 * otherwise, after removing a file that is not (made again by the caller). */
static int usable(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	char path[64];
	struct btf *b;

	if (fd < 0 && errno == ENOENT)
		return -1;
	if (fd < 0 || !ours(fd, S_IFREG)) {
		if (fd >= 0)
			close(fd);
		unlinkat(dfd, name, 0);
		return -1;
	}
	b = btf__parse_raw(fd_path(fd, path, sizeof(path)));
	if (!b) {
		il_info("cached CO-RE BTF %s is damaged: made again", name);
		close(fd);
		unlinkat(dfd, name, 0);
		return -1;
	}
	btf__free(b);
	return fd;
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

/* Make name in directory sfd: the min_core_btf of the object elf for the running kernel,
 * written aside and renamed, so a reader sees a whole file or none. Every path goes through
 * sfd (/proc/PID/fd/SFD), the directory checked. 0, or -1. */
static int make(int sfd, const char *name, const void *elf, size_t size)
{
	char sub[64], obj[PATH_MAX], out[PATH_MAX];
	int fd, rc = -1;

	fd_path(sfd, sub, sizeof(sub));
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
			rc = renameat(sfd, strrchr(out, '/') + 1, sfd, name);
		if (rc)
			unlink(out);
	}
	unlink(obj);
	return rc;
}

const char *il_kernel_key(void)
{
	static char key[2 * 64 + 24];
	static bool tried;
	unsigned char notes[4096];
	struct stat st;
	ssize_t n = 0, r;
	int fd;

	if (tried)
		return *key ? key : NULL;
	tried = true;
	if (stat("/sys/kernel/btf/vmlinux", &st) ||
	    (fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	while (n < (ssize_t)sizeof(notes) && (r = read(fd, notes + n, sizeof(notes) - n)) > 0)
		n += r;
	close(fd);
	/* Elf_Nhdr { namesz, descsz, type }, then the name and the descriptor, each padded to 4 */
	for (ssize_t o = 0; o + 12 <= n;) {
		__u32 namesz, descsz, type;
		ssize_t name_o = o + 12, desc_o;

		memcpy(&namesz, notes + o, 4);
		memcpy(&descsz, notes + o + 4, 4);
		memcpy(&type, notes + o + 8, 4);
		desc_o = name_o + ((namesz + 3) & ~3u);
		if (namesz > 64 || descsz > 64 || desc_o + descsz > n)
			break;
		if (type == 3 /* NT_GNU_BUILD_ID */ && namesz == 4 && !memcmp(notes + name_o, "GNU", 4) &&
		    descsz >= 8) {
			char *k = key;

			for (__u32 i = 0; i < descsz; i++)
				k += sprintf(k, "%02x", notes[desc_o + i]);
			sprintf(k, "-%llx", (unsigned long long)st.st_size);
			return key;
		}
		o = desc_o + ((descsz + 3) & ~3u);
	}
	return NULL;
}

int il_cache_subdir(const char *sub, const char *what)
{
	const char *dir = getenv("IOLAYER_CACHE_DIR");
	int dfd, sfd;

	if (!dir)
		dir = IL_CACHE_DIR;
	if (!*dir)
		return -1;
	/* Each directory opened once and checked on its fd, every name after it looked up in
	 * it: a user who can write somewhere above cannot swap what is checked and what is
	 * read. A directory others may write is not used at all, whatever it holds. */
	dfd = own_dir(AT_FDCWD, dir, 0755);
	sfd = dfd < 0 ? -1 : own_dir(dfd, sub, 0700);
	if (dfd >= 0)
		close(dfd);
	if (sfd < 0)
		il_info("no %s cache: %s is not a directory only root may write", what, dir);
	return sfd;
}

bool il_cache_file_ours(int fd)
{
	return ours(fd, S_IFREG);
}

const char *il_core_btf(const void *elf, size_t size)
{
	static char path[64];
	static int fd = -1; /* the file libbpf reads, open until the process ends */
	const char *dir = getenv("IOLAYER_CACHE_DIR"), *kkey = il_kernel_key();
	char name[2 * 64 + 48];
	const void *kbtf;
	size_t ksize;
	int sfd;

	if (!dir)
		dir = IL_CACHE_DIR;
	if (!*dir || !elf || !size)
		return NULL;
	/* The kernel by its build id where it has one (a few bytes to read), else by a hash of
	 * its 5-6 MB of BTF */
	if (kkey)
		snprintf(name, sizeof(name), "%s-%016llx.btf", kkey, hash64(elf, size));
	else if (!il_btf_vmlinux_bytes(&kbtf, &ksize))
		snprintf(name, sizeof(name), "%016llx-%016llx.btf", hash64(kbtf, ksize), hash64(elf, size));
	else
		return NULL;
	if ((sfd = il_cache_subdir("core-btf", "CO-RE BTF")) < 0)
		return NULL;
	if (fd >= 0)
		close(fd);
	fd = usable(sfd, name);
	if (fd < 0) {
		if (make(sfd, name, elf, size) || (fd = usable(sfd, name)) < 0) {
			close(sfd);
			il_info("no CO-RE BTF cache: bpftool gen min_core_btf failed or is not installed; "
				"relocating against all of vmlinux's BTF");
			return NULL;
		}
		il_info("CO-RE BTF cached for this kernel: %s/core-btf/%s", dir, name);
	}
	close(sfd);
	il_debug("CO-RE relocations against %s/core-btf/%s, open as %s", dir, name,
		 fd_path(fd, path, sizeof(path)));
	return path;
}
