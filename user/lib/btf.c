/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "bpfobj.h"
#include "btf.h"
#include "corebtf.h"
#include "lib/shared.h"
#include "log.h"

/*
 * The questions the tools ask of the kernel's BTF at start-up (is this function or tracepoint
 * there, how many arguments does it take) are answered from the raw file, read into memory
 * once and walked in place (the format of include/uapi/linux/btf.h): libbpf parses the same
 * 5 MB again for CO-RE when the object is loaded, and a second full parse (indexes, checks,
 * several MB kept for the life of the process) cost start-up time and memory for a handful
 * of look-ups. il_btf_release() gives the memory back once the object is loaded. libbpf's
 * own handle (il_btf_vmlinux) is loaded only where the raw file cannot be read as expected,
 * and to search the loaded modules' BTF, which is split against vmlinux's.
 */
static struct raw {
	bool tried;
	void *map;          /* the type offsets, after the file's bytes where it was read */
	size_t map_len;
	void *file;         /* the file mapped (6.16 and later), or NULL */
	size_t file_len;
	const char *types;  /* type section */
	const char *strs;   /* string section */
	__u32 str_len;
	__u32 *off;         /* off[id - 1]: offset of type id in types */
	__u32 n;            /* types, ids 1..n */
	const void *data;   /* the file's bytes (mapped or read) */
	size_t size;
	struct tp_ent *tps; /* the btf_trace_ typedefs by name (raw_tp_index) */
	size_t ntps;
	bool tps_made;
	struct kind_index {  /* the named types of one kind, by name (raw_kind_index) */
		__u32 *ids;  /* open addressing by name_hash(), 0 empty; NULL: none made */
		__u32 mask;  /* slots - 1 */
		bool made;
	} kinds[32];
} raw;

/* The module BTF objects tp_btf programs were loaded against, open until il_btf_release(). */
static int mod_fds[16];
static int nmod_fds;

/*
 * The answers of this kernel's BTF to the questions the tools ask at start-up, kept per
 * kernel (il_kernel_key) in the cache directory: <dir>/btf-answers/<kernel key>. Reading
 * vmlinux BTF and indexing it took 15-20 ms of every start; the answers are a few hundred
 * bytes. A question not in the file is answered from the BTF as before and the file written
 * again at il_btf_release(). One line per answer, "TAG KIND NAME A B C": tag 'i' a vmlinux
 * type id (A; 0: none), 'n' a tracepoint's argument count (A; -1: not described), 'k' a
 * function's prototype (A the error, B its arguments, C whether it returns int). The first
 * line names the format and the kernel key; a file that does not parse is not used.
 */
#define ANSWERS_MAX 1024
#define ANSWERS_MAGIC "iolayer-btf-answers 1"

static struct answers {
	bool tried;        /* the file read, or found missing or unusable */
	bool off;          /* no kernel key or no usable cache directory: nothing to write */
	bool dirty;        /* answers not in the file */
	int n;
	struct answer {
		char tag;
		int kind;
		char *name;
		long long v[3];
	} *v;
} ans;

static const struct answer *ans_find(char tag, int kind, const char *name);

/* Parse the answers file's text (len bytes at text, NUL-terminated) into ans; false when any
 * line does not parse or the key is not this kernel's. */
static bool ans_parse(char *text, const char *key)
{
	char *save = NULL, *line = strtok_r(text, "\n", &save);
	char head[160];

	snprintf(head, sizeof(head), "%s %s", ANSWERS_MAGIC, key);
	if (!line || strcmp(line, head))
		return false;
	while ((line = strtok_r(NULL, "\n", &save))) {
		struct answer a = { 0 };
		char name[256];
		int used = 0;

		if (ans.n == ANSWERS_MAX ||
		    sscanf(line, "%c %d %255s %lld %lld %lld%n", &a.tag, &a.kind, name, &a.v[0], &a.v[1],
			   &a.v[2], &used) != 6 || line[used] || !strchr("ink", a.tag) ||
		    ans_find(a.tag, a.kind, name) || !(a.name = strdup(name)))
			return false;
		ans.v[ans.n++] = a;
	}
	return true;
}

/* Drop the answers kept (the array stays). */
static void ans_clear(void)
{
	for (int i = 0; i < ans.n; i++)
		free(ans.v[i].name);
	ans.n = 0;
}

static void ans_free(void)
{
	ans_clear();
	free(ans.v);
	memset(&ans, 0, sizeof(ans));
}

/* Read this kernel's answers once; nothing when there is no key, no cache or no file. */
static void ans_read(void)
{
	const char *key;
	char *text = NULL;
	struct stat st;
	int dfd, fd;

	if (ans.tried)
		return;
	ans.tried = true;
	if (!(ans.v = calloc(ANSWERS_MAX, sizeof(*ans.v))))
		return;
	if (!(key = il_kernel_key()) || (dfd = il_cache_subdir("btf-answers", "BTF answers")) < 0) {
		ans.off = true;
		return;
	}
	fd = openat(dfd, key, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	close(dfd);
	if (fd < 0)
		return;
	if (il_cache_file_ours(fd) && !fstat(fd, &st) && st.st_size > 0 && st.st_size < (1 << 20) &&
	    (text = malloc(st.st_size + 1)) && read(fd, text, st.st_size) == st.st_size) {
		text[st.st_size] = 0;
		if (!ans_parse(text, key)) { /* all or nothing: made again from the BTF */
			ans_clear();
			ans.dirty = true;
		}
	}
	free(text);
	close(fd);
}

static const struct answer *ans_find(char tag, int kind, const char *name)
{
	for (int i = 0; i < ans.n; i++)
		if (ans.v[i].tag == tag && ans.v[i].kind == kind && !strcmp(ans.v[i].name, name))
			return &ans.v[i];
	return NULL;
}

/* The answer kept for (tag, kind, name), read from the file at the first question; NULL when
 * none is kept. */
static const struct answer *ans_get(char tag, int kind, const char *name)
{
	ans_read();
	return ans_find(tag, kind, name);
}

/* Keep an answer found in the BTF, for the file. Names that would not read back (empty,
 * too long, a space) are not kept. */
static void ans_put(char tag, int kind, const char *name, long long a, long long b, long long c)
{
	ans_read();
	if (!ans.v || ans.n == ANSWERS_MAX || !*name || strlen(name) > 255 || strpbrk(name, " \t\n") ||
	    ans_find(tag, kind, name) || !(ans.v[ans.n].name = strdup(name)))
		return;
	ans.v[ans.n].tag = tag;
	ans.v[ans.n].kind = kind;
	ans.v[ans.n].v[0] = a;
	ans.v[ans.n].v[1] = b;
	ans.v[ans.n].v[2] = c;
	ans.n++;
	ans.dirty = true;
}

/* Write the answers when some are new: aside, then renamed over the kernel's file, so a
 * reader sees a whole file or the one before. */
static void ans_write(void)
{
	char tmp[96], sub[64];
	const char *key;
	int dfd, fd;
	FILE *f;

	if (!ans.dirty || ans.off || !(key = il_kernel_key()) ||
	    (dfd = il_cache_subdir("btf-answers", "BTF answers")) < 0)
		return;
	snprintf(sub, sizeof(sub), "/proc/%d/fd/%d", (int)getpid(), dfd);
	snprintf(tmp, sizeof(tmp), "%s/.answers-XXXXXX", sub);
	if ((fd = mkstemp(tmp)) >= 0) {
		if ((f = fdopen(fd, "w"))) {
			bool ok = fprintf(f, "%s %s\n", ANSWERS_MAGIC, key) > 0;

			for (int i = 0; i < ans.n && ok; i++)
				ok = fprintf(f, "%c %d %s %lld %lld %lld\n", ans.v[i].tag, ans.v[i].kind,
					     ans.v[i].name, ans.v[i].v[0], ans.v[i].v[1], ans.v[i].v[2]) > 0;
			ok = !fclose(f) && ok;
			if (!ok || renameat(dfd, strrchr(tmp, '/') + 1, dfd, key))
				unlinkat(dfd, strrchr(tmp, '/') + 1, 0);
		} else {
			close(fd);
			unlinkat(dfd, strrchr(tmp, '/') + 1, 0);
		}
	}
	close(dfd);
	ans.dirty = false;
}

/* One btf_trace_NAME typedef: the type tp_btf programs attach to. */
struct tp_ent {
	const char *name;
	__u32 id;
};

/* Bytes a type's record takes after its struct btf_type, by kind; -1 for a kind this reader
 * does not know (a newer kernel: libbpf then answers). */
static long extra_len(const struct btf_type *t)
{
	__u16 vlen = btf_vlen(t);

	switch (btf_kind(t)) {
	case BTF_KIND_INT: return 4;
	case BTF_KIND_PTR: case BTF_KIND_FWD: case BTF_KIND_TYPEDEF: case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST: case BTF_KIND_RESTRICT: case BTF_KIND_FUNC: case BTF_KIND_FLOAT:
	case BTF_KIND_TYPE_TAG:
		return 0;
	case BTF_KIND_ARRAY: return sizeof(struct btf_array);
	case BTF_KIND_STRUCT: case BTF_KIND_UNION: return (long)vlen * sizeof(struct btf_member);
	case BTF_KIND_ENUM: return (long)vlen * sizeof(struct btf_enum);
	case BTF_KIND_FUNC_PROTO: return (long)vlen * sizeof(struct btf_param);
	case BTF_KIND_VAR: return sizeof(struct btf_var);
	case BTF_KIND_DATASEC: return (long)vlen * sizeof(struct btf_var_secinfo);
	case BTF_KIND_DECL_TAG: return sizeof(struct btf_decl_tag);
	case BTF_KIND_ENUM64: return (long)vlen * sizeof(struct btf_enum64);
	default: return -1;
	}
}

static void raw_free(void)
{
	free(raw.tps);
	for (size_t k = 0; k < sizeof(raw.kinds) / sizeof(raw.kinds[0]); k++)
		free(raw.kinds[k].ids);
	if (raw.map)
		munmap(raw.map, raw.map_len);
	if (raw.file)
		munmap(raw.file, raw.file_len);
	memset(&raw, 0, sizeof(raw));
}

/* The fd of the kernel's vmlinux BTF object (the first one loaded at boot, so the search is
 * short), or -1: kernels before 5.11 do not name BTF objects. */
static int vmlinux_btf_fd(void)
{
	__u32 id = 0;

	for (int i = 0; i < 4 && !bpf_btf_get_next_id(id, &id); i++) {
		struct bpf_btf_info info = {};
		__u32 len = sizeof(info);
		char name[16] = "";
		int fd = bpf_btf_get_fd_by_id(id);

		if (fd < 0)
			continue;
		info.name = (__u64)(unsigned long)name;
		info.name_len = sizeof(name);
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.kernel_btf &&
		    !strcmp(name, "vmlinux"))
			return fd;
		close(fd);
	}
	return -1;
}

/* The size bytes of vmlinux BTF into data: in one copy from its BPF object (btf_fd >= 0),
 * else read from sysfs (fd), which hands it out a page a read. */
static bool raw_read(int btf_fd, int fd, char *data, size_t size)
{
	size_t got = 0;
	ssize_t r;

	if (btf_fd >= 0) {
		struct bpf_btf_info info = {};
		__u32 len = sizeof(info);

		info.btf = (__u64)(unsigned long)data;
		info.btf_size = size;
		if (!bpf_obj_get_info_by_fd(btf_fd, &info, &len) && info.btf_size == size)
			return true;
	}
	while (got < size && (r = read(fd, data + got, size - got)) > 0)
		got += r;
	return got == size;
}

/* Read the kernel's vmlinux BTF and index its types; false when it cannot be. */
static bool raw_load(void)
{
	const struct btf_header *h;
	size_t size, ntypes_max;
	struct stat st;
	char *data;
	int fd, btf_fd;
	bool ok;

	if (raw.tried)
		return raw.map != NULL;
	raw.tried = true;
	fd = open("/sys/kernel/btf/vmlinux", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (fstat(fd, &st) || st.st_size < (off_t)sizeof(*h)) {
		close(fd);
		return false;
	}
	size = st.st_size;
	/* Kernels from 6.16 map the file read-only: no copy of its 5-6 MB. */
	raw.file = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (raw.file == MAP_FAILED)
		raw.file = NULL;
	else
		raw.file_len = size;
	/* room for the offsets (a type takes at least sizeof(struct btf_type) bytes), after the
	 * file's bytes unless mapped; populated at once, which costs less than a page fault per
	 * page */
	ntypes_max = size / sizeof(struct btf_type) + 1;
	raw.map_len = (raw.file ? 0 : size) + ntypes_max * sizeof(__u32);
	raw.map = mmap(NULL, raw.map_len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (raw.map == MAP_FAILED) {
		raw.map = NULL;
		close(fd);
		goto bad;
	}
	if (raw.file) {
		data = raw.file;
		ok = true;
	} else {
		data = raw.map;
		btf_fd = vmlinux_btf_fd();
		ok = raw_read(btf_fd, fd, data, size);
		if (btf_fd >= 0)
			close(btf_fd);
	}
	close(fd);
	h = (const void *)data;
	if (!ok || h->magic != BTF_MAGIC || h->hdr_len < sizeof(*h) ||
	    (size_t)h->hdr_len + h->type_off + h->type_len > size ||
	    (size_t)h->hdr_len + h->str_off + h->str_len > size || !h->str_len)
		goto bad;
	raw.data = data;
	raw.size = size;
	raw.types = data + h->hdr_len + h->type_off;
	raw.strs = data + h->hdr_len + h->str_off;
	raw.str_len = h->str_len;
	if (raw.strs[raw.str_len - 1])
		goto bad;
	raw.off = (__u32 *)((char *)raw.map + (raw.file ? 0 : size));
	for (__u32 o = 0; o < h->type_len; raw.n++) {
		const struct btf_type *t = (const void *)(raw.types + o);
		long extra;

		if (o + sizeof(*t) > h->type_len || raw.n >= ntypes_max ||
		    (extra = extra_len(t)) < 0 || o + sizeof(*t) + extra > h->type_len)
			goto bad;
		raw.off[raw.n] = o;
		o += sizeof(*t) + extra;
	}
	return true;
bad:
	raw_free();
	raw.tried = true;
	return false;
}

int il_btf_vmlinux_bytes(const void **data, size_t *size)
{
	if (!raw_load())
		return -ENOENT;
	*data = raw.data;
	*size = raw.size;
	return 0;
}

static const struct btf_type *raw_type(__u32 id)
{
	return id && id <= raw.n ? (const void *)(raw.types + raw.off[id - 1]) : NULL;
}

static const char *raw_name(const struct btf_type *t)
{
	return t->name_off < raw.str_len ? raw.strs + t->name_off : "";
}

static int tp_ent_cmp(const void *a, const void *b)
{
	return strcmp(((const struct tp_ent *)a)->name, ((const struct tp_ent *)b)->name);
}

#define TP_PREFIX "btf_trace_"

/* Index the btf_trace_ typedefs (one per tracepoint, about 2,000) in one walk of the types,
 * sorted by name: a tool asks for each of its tracepoints twice (can it attach, then the
 * load), and a walk of all 130,000 types each time added up to milliseconds. False when out
 * of memory (the caller walks instead). */
static bool raw_tp_index(void)
{
	size_t cap = 0;

	if (raw.tps_made)
		return raw.tps != NULL;
	raw.tps_made = true;
	for (__u32 id = 1; id <= raw.n; id++) {
		const struct btf_type *t = raw_type(id);
		const char *name;

		if (btf_kind(t) != BTF_KIND_TYPEDEF ||
		    strncmp(name = raw_name(t), TP_PREFIX, sizeof(TP_PREFIX) - 1))
			continue;
		if (raw.ntps == cap) {
			struct tp_ent *n = realloc(raw.tps, (cap = cap ? 2 * cap : 2048) * sizeof(*n));

			if (!n) {
				free(raw.tps);
				raw.tps = NULL;
				raw.ntps = 0;
				return false;
			}
			raw.tps = n;
		}
		raw.tps[raw.ntps++] = (struct tp_ent){ name, id };
	}
	if (!raw.tps)
		raw.tps = malloc(sizeof(*raw.tps)); /* none: an empty index all the same */
	qsort(raw.tps, raw.ntps, sizeof(*raw.tps), tp_ent_cmp);
	return raw.tps != NULL;
}

/* FNV-1a of a type's name. */
static __u32 name_hash(const char *s)
{
	__u32 h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

/* Index the named types of kind in one walk of the types (a tool asks for about 40 functions
 * and structs at start-up, and a walk of all 130,000 types for each took 4-6 ms in all). False
 * when out of memory or kind is out of range (the caller walks instead). */
static bool raw_kind_index(int kind)
{
	struct kind_index *x;
	__u32 count = 0, slots = 2;

	if (kind < 0 || (size_t)kind >= sizeof(raw.kinds) / sizeof(raw.kinds[0]))
		return false;
	x = &raw.kinds[kind];
	if (x->made)
		return x->ids != NULL;
	x->made = true;
	for (__u32 id = 1; id <= raw.n; id++) {
		const struct btf_type *t = raw_type(id);

		count += btf_kind(t) == kind && t->name_off;
	}
	while (slots < 2 * count)
		slots *= 2;
	if (!(x->ids = calloc(slots, sizeof(*x->ids))))
		return false;
	x->mask = slots - 1;
	/* in id order: of two types of one name, the lower id is met first when probing */
	for (__u32 id = 1; id <= raw.n; id++) {
		const struct btf_type *t = raw_type(id);
		__u32 i;

		if (btf_kind(t) != kind || !t->name_off)
			continue;
		for (i = name_hash(raw_name(t)) & x->mask; x->ids[i]; i = (i + 1) & x->mask)
			;
		x->ids[i] = id;
	}
	return true;
}

/* The id of vmlinux's type name of kind kind, or 0. */
static __u32 raw_find(const char *name, int kind)
{
	if (kind == BTF_KIND_TYPEDEF && !strncmp(name, TP_PREFIX, sizeof(TP_PREFIX) - 1) &&
	    raw_tp_index()) {
		struct tp_ent key = { name, 0 };
		const struct tp_ent *e = bsearch(&key, raw.tps, raw.ntps, sizeof(key), tp_ent_cmp);

		return e ? e->id : 0;
	}
	if (*name && raw_kind_index(kind)) {
		const struct kind_index *x = &raw.kinds[kind];

		for (__u32 i = name_hash(name) & x->mask; x->ids[i]; i = (i + 1) & x->mask)
			if (!strcmp(raw_name(raw_type(x->ids[i])), name))
				return x->ids[i];
		return 0;
	}
	for (__u32 id = 1; id <= raw.n; id++) {
		const struct btf_type *t = raw_type(id);

		if (btf_kind(t) == kind && !strcmp(raw_name(t), name))
			return id;
	}
	return 0;
}

struct btf *il_btf_vmlinux(void)
{
	static struct btf *vm;
	static bool tried;

	if (!tried) {
		tried = true;
		vm = btf__load_vmlinux_btf();
	}
	return vm;
}

bool il_btf_has_vmlinux(void)
{
	return il_kernel_key() || raw_load() || il_btf_vmlinux();
}

void il_btf_release(void)
{
	ans_write();
	ans_free();
	raw_free();
	while (nmod_fds > 0)
		close(mod_fds[--nmod_fds]);
	/* libbpf's handle is kept: it is the base module BTF is read against, and is only
	 * loaded where this process searched the modules */
}

/* Search the BTF of one loaded kernel module (BTF object id). */
static int find_in_module(__u32 id, struct btf *vm, const char *name, int kind, __u32 *type_id,
			  int *obj_fd)
{
	struct bpf_btf_info info = {};
	__u32 info_len = sizeof(info);
	char mod[64] = "";
	struct btf *b;
	int fd, tid;

	fd = bpf_btf_get_fd_by_id(id);
	if (fd < 0)
		return -ENOENT;
	info.name = (__u64)(unsigned long)mod;
	info.name_len = sizeof(mod);
	if (bpf_obj_get_info_by_fd(fd, &info, &info_len) || !info.kernel_btf ||
	    !strcmp(mod, "vmlinux") || !(b = btf__load_from_kernel_by_id_split(id, vm))) {
		close(fd);
		return -ENOENT;
	}
	tid = btf__find_by_name_kind(b, name, kind);
	btf__free(b);
	if (tid > 0 && (__u32)tid >= btf__type_cnt(vm)) {
		*type_id = tid;
		*obj_fd = fd;
		return 0;
	}
	close(fd);
	return -ENOENT;
}

/* The id of vmlinux's type name of kind kind (0: none), from the answers kept or the raw BTF;
 * *known false when neither could answer. */
static __u32 vmlinux_id(const char *name, int kind, bool *known)
{
	const struct answer *a = ans_get('i', kind, name);
	__u32 id;

	*known = true;
	if (a)
		return a->v[0] > 0 && a->v[0] <= 0xffffffffLL ? a->v[0] : 0;
	if (!raw_load()) {
		*known = false;
		return 0;
	}
	id = raw_find(name, kind);
	ans_put('i', kind, name, id, 0, 0);
	return id;
}

int il_btf_find(const char *name, int kind, __u32 *type_id, int *obj_fd)
{
	struct btf *vm;
	__u32 id = 0;
	bool known;
	int t;

	if ((id = vmlinux_id(name, kind, &known))) {
		*type_id = id;
		*obj_fd = 0;
		return 0;
	}
	id = 0;
	vm = il_btf_vmlinux(); /* the modules' BTF is read against it */
	if (!vm)
		return -ENOENT;
	if (!known) {
		t = btf__find_by_name_kind(vm, name, kind);
		if (t > 0) {
			*type_id = t;
			*obj_fd = 0;
			return 0;
		}
	}
	while (!bpf_btf_get_next_id(id, &id))
		if (!find_in_module(id, vm, name, kind, type_id, obj_fd))
			return 0;
	return -ENOENT;
}

__u32 il_btf_vmlinux_id(const char *name, int kind)
{
	struct btf *vm;
	bool known;
	__u32 id;
	int t;

	if ((id = vmlinux_id(name, kind, &known)) || known)
		return id;
	vm = il_btf_vmlinux();
	t = vm ? btf__find_by_name_kind(vm, name, kind) : -1;
	return t > 0 ? t : 0;
}

/* Through typedefs and qualifiers to the type they name (as btf__resolve_type does, without
 * sizes): NULL at void or past a bad id. */
static const struct btf_type *raw_skip_mods(const struct btf_type *t)
{
	for (int depth = 0; t && depth < 32; depth++) {
		switch (btf_kind(t)) {
		case BTF_KIND_TYPEDEF: case BTF_KIND_VOLATILE: case BTF_KIND_CONST:
		case BTF_KIND_RESTRICT: case BTF_KIND_TYPE_TAG:
			t = raw_type(t->type);
			break;
		default:
			return t;
		}
	}
	return NULL;
}

int il_btf_tp_nargs(const char *name)
{
	const struct answer *a;
	const struct btf_type *t;
	char tname[256];
	struct btf *vm;
	int id;

	snprintf(tname, sizeof(tname), "btf_trace_%s", name);
	if ((a = ans_get('n', 0, name)))
		return a->v[0] >= -1 && a->v[0] < 64 ? a->v[0] : -1;
	if (raw_load()) {
		int n = -1;

		t = raw_type(raw_find(tname, BTF_KIND_TYPEDEF)); /* typedef */
		t = t ? raw_type(t->type) : NULL;                 /* pointer */
		t = t && btf_is_ptr(t) ? raw_type(t->type) : NULL; /* func proto */
		if (t && btf_is_func_proto(t))
			n = btf_vlen(t) - 1;
		ans_put('n', 0, name, n, 0, 0);
		return n;
	}
	if (!(vm = il_btf_vmlinux()))
		return -1;
	id = btf__find_by_name_kind(vm, tname, BTF_KIND_TYPEDEF);
	if (id <= 0)
		return -1;
	t = btf__type_by_id(vm, id);                 /* typedef */
	t = btf__type_by_id(vm, t->type);            /* pointer */
	if (!t || !btf_is_ptr(t))
		return -1;
	t = btf__type_by_id(vm, t->type);            /* func proto */
	if (!t || !btf_is_func_proto(t))
		return -1;
	return btf_vlen(t) - 1;
}

int il_kfunc_proto(const char *func, int *nargs, bool *returns_int)
{
	const struct answer *a = ans_get('k', 0, func);
	const struct btf_type *t;
	struct btf *vm;
	int id;

	if (a) {
		if (a->v[0])
			return -ENOENT;
		*nargs = a->v[1];
		*returns_int = a->v[2];
		return 0;
	}
	if (raw_load()) {
		t = raw_type(raw_find(func, BTF_KIND_FUNC));
		t = t ? raw_type(t->type) : NULL; /* FUNC -> FUNC_PROTO */
		if (!t || !btf_is_func_proto(t)) {
			ans_put('k', 0, func, -ENOENT, 0, 0);
			return -ENOENT;
		}
		*nargs = btf_vlen(t);
		t = raw_skip_mods(raw_type(t->type)); /* through typedef/const/volatile */
		*returns_int = t && btf_is_int(t) && t->size == 4 &&
			       (btf_int_encoding(t) & BTF_INT_SIGNED);
		ans_put('k', 0, func, 0, *nargs, *returns_int);
		return 0;
	}
	if (!(vm = il_btf_vmlinux()))
		return -ENOENT;
	id = btf__find_by_name_kind(vm, func, BTF_KIND_FUNC);
	if (id <= 0)
		return -ENOENT;
	t = btf__type_by_id(vm, btf__type_by_id(vm, id)->type); /* FUNC -> FUNC_PROTO */
	if (!t || !btf_is_func_proto(t))
		return -ENOENT;
	*nargs = btf_vlen(t);
	t = btf__type_by_id(vm, btf__resolve_type(vm, t->type)); /* through typedef/const/volatile */
	*returns_int = t && btf_is_int(t) && t->size == 4 && (btf_int_encoding(t) & BTF_INT_SIGNED);
	return 0;
}

/* ---- tp_btf programs, loaded without libbpf's parse of vmlinux BTF ------------------------ */

void il_btf_ids_fill(struct bpf_object *obj)
{
	struct il_btf_ids *ids = il_obj_rodata(obj, "il_btf_ids", sizeof(*ids));

	if (!ids || !il_btf_vmlinux_id("bpf_rdonly_cast", BTF_KIND_FUNC))
		return;
	ids->task = il_btf_vmlinux_id("task_struct", BTF_KIND_STRUCT);
	ids->bio = il_btf_vmlinux_id("bio", BTF_KIND_STRUCT);
	ids->request = il_btf_vmlinux_id("request", BTF_KIND_STRUCT);
	ids->io_kiocb = il_btf_vmlinux_id("io_kiocb", BTF_KIND_STRUCT);
	ids->kiocb = il_btf_vmlinux_id("kiocb", BTF_KIND_STRUCT);
}

/* Bind the calls of a kfunc written as helper IL_KFUNC_* (bpf/lib/shared.h) to the kfunc's
 * vmlinux BTF id. Where the kernel has no such kfunc, its calls stay as they are, in code
 * the verifier drops as dead (IL_UNTRUSTED() with il_btf_ids 0; the plans load no _cast
 * program there); a live one is refused at load as an unknown helper. 0, or -ENOMEM. */
static int bind_kfuncs(struct bpf_program *prog)
{
	static const struct { __s32 helper; const char *name; } kfuncs[] = {
		{ IL_KFUNC_RDONLY_CAST, "bpf_rdonly_cast" },
	};
	size_t n = bpf_program__insn_cnt(prog);
	struct bpf_insn *insns = malloc(n * sizeof(*insns));
	bool bound = false;
	int err = 0;

	if (!insns)
		return -ENOMEM;
	memcpy(insns, bpf_program__insns(prog), n * sizeof(*insns));
	for (size_t i = 0; i < n && !err; i++) {
		if (insns[i].code != (BPF_JMP | BPF_CALL) || insns[i].src_reg)
			continue;
		for (size_t k = 0; k < sizeof(kfuncs) / sizeof(kfuncs[0]); k++) {
			__u32 id;

			if (insns[i].imm != kfuncs[k].helper ||
			    !(id = il_btf_vmlinux_id(kfuncs[k].name, BTF_KIND_FUNC)))
				continue;
			insns[i].imm = id;
			insns[i].src_reg = BPF_PSEUDO_KFUNC_CALL;
			insns[i].off = 0; /* vmlinux, not a module */
			bound = true;
		}
	}
	if (!err && bound)
		err = bpf_program__set_insns(prog, insns, n);
	free(insns);
	return err;
}

int il_btf_tp_prepare(struct bpf_program *prog, struct bpf_prog_load_opts *opts, long cookie)
{
	const char *tp = strchr(bpf_program__section_name(prog), '/') + 1;
	char tname[160];
	__u32 id;
	int fd, err;

	(void)cookie;
	snprintf(tname, sizeof(tname), TP_PREFIX "%s", tp);
	if (il_btf_find(tname, BTF_KIND_TYPEDEF, &id, &fd))
		return -ESRCH;
	if (fd > 0) {
		if (nmod_fds == (int)(sizeof(mod_fds) / sizeof(mod_fds[0]))) {
			close(fd);
			return -EMFILE;
		}
		mod_fds[nmod_fds++] = fd;
	}
	opts->attach_btf_id = id;
	opts->attach_btf_obj_fd = fd;
	opts->expected_attach_type = BPF_TRACE_RAW_TP;
	if ((err = bpf_program__set_type(prog, BPF_PROG_TYPE_TRACING)) ||
	    (err = bpf_program__set_expected_attach_type(prog, BPF_TRACE_RAW_TP)))
		return err;
	return bind_kfuncs(prog);
}

int il_btf_tp_attach(const struct bpf_program *prog, long cookie, struct bpf_link **link)
{
	(void)cookie;
	*link = bpf_program__attach_trace(prog);
	return libbpf_get_error(*link);
}
