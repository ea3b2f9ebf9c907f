/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include "log.h"
#include "run.h"
#include "util.h"

void il_require_root(void)
{
	if (geteuid() != 0)
		il_die("must run as root (try: sudo %s ...)", il_tool);
}

void il_require_btf(void)
{
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		il_die("this kernel has no BTF (/sys/kernel/btf/vmlinux is missing): it needs "
		       "CONFIG_DEBUG_INFO_BTF=y");
}

/* Whether this process has capability cap (CAP_*, linux/capability.h) in its effective set;
 * true when capget(2) fails (the kernel will say). */
static bool has_cap(int cap)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = { { 0 } };

	if (syscall(SYS_capget, &h, d))
		return true;
	return d[CAP_TO_INDEX(cap)].effective & CAP_TO_MASK(cap);
}

void il_require_tracing(void)
{
	il_require_root();
	if (!has_cap(CAP_SYS_ADMIN) && !(has_cap(CAP_BPF) && has_cap(CAP_PERFMON)))
		il_die("needs CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN, which this root process "
		       "lacks (a container or capability bounding set takes them away)");
	il_require_btf();
}

const char *il_errno_name(int err)
{
	static __thread char buf[32];
	const char *n;

	if (err < 0)
		err = -err;
	n = strerrorname_np(err);
	if (n)
		return n;
	snprintf(buf, sizeof(buf), "errno %d", err);
	return buf;
}

int il_parse_uint(const char *s, const char *what, unsigned long long min,
		  unsigned long long max, unsigned long long *out)
{
	unsigned long long v;
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	if (!isdigit((unsigned char)*s))
		goto bad;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		goto bad;
	*out = v;
	return 0;
bad:
	if (max == ULLONG_MAX)
		il_err("%s must be a whole number >= %llu, got '%s'", what, min, s);
	else
		il_err("%s must be a whole number from %llu to %llu, got '%s'", what, min, max, s);
	return -1;
}

unsigned long long il_arg_uint(const char *s, const char *what, unsigned long long min,
			       unsigned long long max)
{
	unsigned long long v;

	if (il_parse_uint(s, what, min, max, &v))
		exit(IL_EXIT_ERR);
	return v;
}

unsigned il_arg_ringbuf_mb(const char *s)
{
	unsigned mb = il_arg_uint(s, "the ring buffer size (--ringbuf, MiB)", 1, 1024), p2 = 1;

	while (p2 < mb)
		p2 *= 2;
	return p2;
}

const char *il_clock_str(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(buf, len, "%H:%M:%S", &tm);
	return buf;
}

/* One slot of an il_strcache: when (il_now_ns(), 0: empty), then the key, then the value. */
static unsigned char *strcache_slot(struct il_strcache *c, const void *key)
{
	const unsigned char *k = key;
	__u64 h = 0xcbf29ce484222325ULL; /* FNV-1a */

	for (size_t i = 0; i < c->key_len; i++)
		h = (h ^ k[i]) * 0x100000001b3ULL;
	return c->mem + (h % c->nslots) * (8 + c->key_len + c->val_len);
}

bool il_strcache_get(struct il_strcache *c, const void *key, char *buf, size_t len)
{
	unsigned char *e = strcache_slot(c, key);
	unsigned long long at;

	memcpy(&at, e, sizeof(at));
	if (!at || il_now_ns() - at >= c->ttl_ns || memcmp(e + 8, key, c->key_len))
		return false;
	snprintf(buf, len, "%s", (const char *)e + 8 + c->key_len);
	return true;
}

void il_strcache_put(struct il_strcache *c, const void *key, const char *val)
{
	unsigned char *e = strcache_slot(c, key);
	unsigned long long at = il_now_ns();

	memcpy(e, &at, sizeof(at));
	memcpy(e + 8, key, c->key_len);
	snprintf((char *)e + 8 + c->key_len, c->val_len, "%s", val);
}

void il_json_print(FILE *f, struct json_object *obj)
{
	fprintf(f, "%s\n", json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(obj);
}

void il_require_pid(int pid, bool tid_option)
{
	char path[32], line[256];
	int tgid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (pid <= 0 || !(f = fopen(path, "re")))
		il_die("no process with pid %d", pid);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	if (tgid <= 0 || tgid == pid)
		return;
	if (tid_option)
		il_die("%d is a thread of process %d: use -p %d, or --tid %d for the thread alone",
		       pid, tgid, tgid, pid);
	il_die("%d is a thread of process %d: use -p %d (this tool follows whole processes)", pid,
	       tgid, tgid);
}

void il_require_tid(int tid, int pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d", tid); /* every thread has one */
	if (tid <= 0 || access(path, F_OK))
		il_die("no thread with tid %d", tid);
	snprintf(path, sizeof(path), "/proc/%d/task/%d", pid, tid);
	if (pid > 0 && access(path, F_OK))
		il_die("thread %d is not in process %d", tid, pid);
}

/* Wall-clock "HH:MM:SS" of a bpf_ktime_get_ns() timestamp (CLOCK_MONOTONIC, ns): the time
 * the call returned, not the time its row is printed. Formatted once per second. */
void il_mono_clock_str(__u64 mono_ns, char *buf, size_t len)
{
	static long long offset_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC */
	static time_t last = -1;
	static char cached[16];
	struct timespec rt;
	struct tm tm;
	time_t t;

	if (!offset_ns) {
		clock_gettime(CLOCK_REALTIME, &rt);
		offset_ns = rt.tv_sec * 1000000000LL + rt.tv_nsec - (long long)il_now_ns();
	}
	t = (time_t)(((long long)mono_ns + offset_ns) / 1000000000LL);
	if (t != last) {
		localtime_r(&t, &tm);
		strftime(cached, sizeof(cached), "%H:%M:%S", &tm);
		last = t;
	}
	snprintf(buf, len, "%s", cached);
}

/* A JSON number with 3 decimals (microseconds to the ns), without binary-float noise. */
struct json_object *il_json_usecs(double usecs)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%.3f", usecs);
	return json_object_new_double_s(usecs, buf);
}

int il_grow(void **v, size_t *cap, size_t n, size_t size)
{
	size_t c = *cap ? *cap : 64;
	void *p;

	if (n < *cap)
		return 0;
	while (c <= n)
		c *= 2;
	if (!(p = realloc(*v, c * size)))
		return -ENOMEM;
	*v = p;
	*cap = c;
	return 0;
}
