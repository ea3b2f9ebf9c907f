/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Small things every tool needs: preconditions, errno names, numbers, time, dev numbers, a
 * string cache, JSON. */
#ifndef IOLAYER_UTIL_H
#define IOLAYER_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include <json-c/json.h>

#define IL_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Exit with one line unless running as root / the kernel has BTF. */
void il_require_root(void);
void il_require_btf(void);

/* Call both of the above, in the order a user can act on, and between them refuse in one line
 * a root process without CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN (its effective set, by
 * capget(2)). */
void il_require_tracing(void);

/* "ENOMEM" for 12 or -12; "E?" style fallback "errno 1234" for unknown values (static buffer). */
const char *il_errno_name(int err);

/* Parse a decimal unsigned integer in [min, max]. On error prints one line naming `what`
 * ("interval must be a whole number of seconds, got '-1'") and returns -1. */
int il_parse_uint(const char *s, const char *what, unsigned long long min,
		  unsigned long long max, unsigned long long *out);

/* il_parse_uint() for an option's argument: the value, or exit(IL_EXIT_ERR) after its one
 * line. */
unsigned long long il_arg_uint(const char *s, const char *what, unsigned long long min,
			       unsigned long long max);

/* A --ringbuf argument: MiB of ring buffer, 1 to 1024, rounded up to a power of two (what
 * BPF_MAP_TYPE_RINGBUF takes); exit(IL_EXIT_ERR) after one line when it is not. */
unsigned il_arg_ringbuf_mb(const char *s);

/* Local wall-clock time as "HH:MM:SS" into buf (>= 9 bytes); returns buf. */
const char *il_clock_str(char *buf, size_t len);

/* Kernel dev_t encoding as BPF reads it from struct gendisk (major << 20 | minor). */
#define IL_DEV_MAJOR(d) ((unsigned)((d) >> 20))
#define IL_DEV_MINOR(d) ((unsigned)((d) & 0xfffff))
#define IL_MKDEV(ma, mi) (((__u32)(ma) << 20) | (__u32)(mi))

/* A direct-mapped cache of short strings by fixed-size key, each answer kept ttl_ns: for row
 * printers that name the same few things (a file) tens of thousands of times a second,
 * where finding the name costs a syscall or more. A key that changes hands is seen within
 * ttl_ns. Declare with IL_STRCACHE(name, nslots, key_type, value_bytes, ttl_ns). */
struct il_strcache {
	unsigned nslots;
	size_t key_len, val_len;
	unsigned long long ttl_ns;
	unsigned char *mem;        /* nslots x (at, key, value) */
};

#define IL_STRCACHE(name, n, key_type, val_bytes, ttl)                                      \
	static unsigned char name##_mem_[(n) * (8 + sizeof(key_type) + (val_bytes))]          \
		__attribute__((aligned(8)));                                                  \
	static struct il_strcache name = { (n), sizeof(key_type), (val_bytes), (ttl), name##_mem_ }

/* The value cached for key (c->key_len bytes) into buf, when there is one younger than
 * c->ttl_ns: true; else false. */
bool il_strcache_get(struct il_strcache *c, const void *key, char *buf, size_t len);

/* Cache val (cut to c->val_len - 1 bytes) for key, replacing what its slot held. */
void il_strcache_put(struct il_strcache *c, const void *key, const char *val);

/* Exit with one line unless process pid exists ("no process with pid 123") and is a process,
 * not one of its other threads (/proc/PID/status Tgid): the line names the process, and
 * --tid for the thread alone where the tool has it (tid_option). */
void il_require_pid(int pid, bool tid_option);

/* Exit with one line unless thread tid exists ("no thread with tid N") and, when pid is not
 * 0, belongs to process pid ("thread N is not in process P"): /proc/TID, /proc/PID/task/TID. */
void il_require_tid(int tid, int pid);

/* Print obj on one line to f and release it (json_object_put). */
void il_json_print(FILE *f, struct json_object *obj);

/* Local wall-clock "HH:MM:SS" of a bpf_ktime_get_ns() timestamp (CLOCK_MONOTONIC, ns), e.g.
 * the time a call returned rather than the time its row is printed. buf >= 9 bytes. */
void il_mono_clock_str(__u64 mono_ns, char *buf, size_t len);

/* A JSON number with 3 decimals (microseconds to the ns), without binary-float noise. */
struct json_object *il_json_usecs(double usecs);

/* Room for element n of size bytes in the growing array *v of *cap elements (doubled as
 * needed, from 64). 0, or -ENOMEM with *v and *cap unchanged. */
int il_grow(void **v, size_t *cap, size_t n, size_t size);

#endif
