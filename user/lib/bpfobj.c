/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "bpfobj.h"
#include "log.h"

/* The object's internal map of section sec (libbpf names it "<prefix><sec>", ".rodata"). */
static struct bpf_map *section_map(struct bpf_object *obj, const char *sec)
{
	size_t sl = strlen(sec);
	struct bpf_map *m;

	bpf_object__for_each_map(m, obj) {
		const char *n = bpf_map__name(m);
		size_t l = strlen(n);

		if (bpf_map__is_internal(m) && l >= sl && !strcmp(n + l - sl, sec))
			return m;
	}
	return NULL;
}

/* The offset of variable name (size bytes) in section sec of obj, whose map is *map of
 * mapsz bytes; -1 when there is no such variable of that size. */
static long var_offset(struct bpf_object *obj, const char *sec_name, const char *name, size_t size,
		       struct bpf_map **map, size_t mapsz)
{
	struct btf *btf = bpf_object__btf(obj);
	const struct btf_var_secinfo *v;
	const struct btf_type *sec;
	int id;

	*map = section_map(obj, sec_name);
	id = btf && *map ? btf__find_by_name_kind(btf, sec_name, BTF_KIND_DATASEC) : -1;
	if (id <= 0)
		return -1;
	sec = btf__type_by_id(btf, id);
	v = btf_var_secinfos(sec);
	for (int i = 0; i < btf_vlen(sec); i++, v++) {
		const struct btf_type *var = btf__type_by_id(btf, v->type);

		if (strcmp(btf__name_by_offset(btf, var->name_off), name))
			continue;
		return v->size == size && v->offset + size <= mapsz ? (long)v->offset : -1;
	}
	return -1;
}

void *il_obj_rodata(struct bpf_object *obj, const char *name, size_t size)
{
	struct bpf_map *m = section_map(obj, ".rodata");
	size_t mapsz = 0;
	char *data = m ? (char *)bpf_map__initial_value(m, &mapsz) : NULL;
	long off = data ? var_offset(obj, ".rodata", name, size, &m, mapsz) : -1;

	return off < 0 ? NULL : data + off;
}

int il_obj_set_bss(struct bpf_object *obj, const char *name, const void *val, size_t size)
{
	struct bpf_map *m = section_map(obj, ".bss");
	size_t mapsz = m ? bpf_map__value_size(m) : 0;
	long off = m ? var_offset(obj, ".bss", name, size, &m, mapsz) : -1;
	__u32 zero = 0;
	char *data;
	int err;

	if (off < 0 || bpf_map__fd(m) < 0)
		return -ENOENT;
	/* the whole value, read and written back: nothing runs before attach */
	if (!(data = calloc(1, mapsz)))
		return -ENOMEM;
	err = bpf_map_lookup_elem(bpf_map__fd(m), &zero, data) ? -errno : 0;
	if (!err) {
		memcpy(data + off, val, size);
		err = bpf_map_update_elem(bpf_map__fd(m), &zero, data, BPF_ANY) ? -errno : 0;
	}
	free(data);
	return err;
}

void *il_obj_rodata_must(struct bpf_object *obj, const char *name, size_t size)
{
	void *p = il_obj_rodata(obj, name, size);

	if (!p)
		il_die("internal error: the BPF object has no setting %s of %zu bytes", name, size);
	return p;
}

int il_obj_map_fd(struct bpf_object *obj, const char *name)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, name);

	return m ? bpf_map__fd(m) : -1;
}

void il_obj_map_size(struct bpf_object *obj, const char *name, __u32 n)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, name);

	if (m)
		bpf_map__set_max_entries(m, n);
}

void il_obj_task_storage_stub(struct bpf_object *obj, const char *name)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, name);

	if (!m)
		return;
	bpf_map__set_type(m, BPF_MAP_TYPE_ARRAY);
	bpf_map__set_map_flags(m, 0);
	bpf_map__set_max_entries(m, 1);
}

bool il_obj_has_map(struct bpf_object *obj, const char *name)
{
	return bpf_object__find_map_by_name(obj, name) != NULL;
}

void il_autoload_none(struct bpf_object *obj)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj)
		bpf_program__set_autoload(prog, false);
}

#ifndef ENOTSUPP
#define ENOTSUPP 524 /* the kernel's, for an operation a map type lacks */
#endif

__u32 il_array_read(int fd, __u32 n, size_t vsz, void *vals)
{
	__u32 cnt = n, out_batch, *keys = malloc(n * sizeof(*keys));

	if (fd < 0 || !keys) {
		free(keys);
		return 0;
	}
	if (bpf_map_lookup_batch(fd, NULL, &out_batch, keys, vals, &cnt, NULL) && errno != ENOENT)
		for (cnt = 0; cnt < n; cnt++)
			if (bpf_map_lookup_elem(fd, &cnt, (char *)vals + cnt * vsz))
				break;
	free(keys);
	return cnt;
}

int il_map_read_batch(int fd, size_t ksz, size_t vsz, size_t rsz, size_t voff, char **out)
{
	struct bpf_map_info info = { 0 };
	__u32 ilen = sizeof(info), cap, n = 0, count;
	char *keys, *vals, *rows, in[64], outb[64];
	bool first = true;
	int err = 0;

	*out = NULL;
	if (bpf_obj_get_info_by_fd(fd, &info, &ilen) || info.key_size != ksz || info.value_size != vsz)
		return -EOPNOTSUPP;
	cap = info.max_entries + 64; /* room for a hash bucket past the end (else ENOSPC) */
	keys = malloc((size_t)cap * ksz);
	vals = malloc((size_t)cap * vsz);
	rows = calloc(cap + 1, rsz);
	if (!keys || !vals || !rows) {
		err = -ENOMEM;
		goto out;
	}
	while (n < cap) {
		count = cap - n;
		err = bpf_map_lookup_batch(fd, first ? NULL : in, outb, keys, vals, &count, NULL);
		if (err && errno != ENOENT) {
			err = -errno;
			break;
		}
		for (__u32 i = 0; i < count && n < cap; i++, n++) {
			memcpy(rows + n * rsz, keys + i * ksz, ksz);
			memcpy(rows + n * rsz + voff, vals + i * vsz, vsz);
		}
		if (err) { /* ENOENT: the end */
			err = 0;
			break;
		}
		memcpy(in, outb, ksz);
		first = false;
	}
out:
	free(keys);
	free(vals);
	if (err) {
		free(rows);
		return first && (err == -EINVAL || err == -EOPNOTSUPP || err == -ENOTSUPP) ? -EOPNOTSUPP :
		       err == -EOPNOTSUPP ? -EIO : err;
	}
	*out = rows;
	return n;
}

int il_map_keys(int fd, void *keys, size_t key_size, int max)
{
	char *k = keys;
	int n = 0;

	while (n < max && !bpf_map_get_next_key(fd, n ? k + (n - 1) * key_size : NULL,
						 k + n * key_size))
		n++;
	return n;
}

int il_percpu_sum(int fd, const void *key, size_t value_size, __u64 *out, size_t n)
{
	int ncpu = libbpf_num_possible_cpus();
	size_t stride = (value_size + 7) / 8; /* in __u64s: the kernel rounds values up to 8 */
	__u64 *vals;

	memset(out, 0, n * sizeof(*out));
	if (ncpu < 0)
		return ncpu;
	if (n > stride)
		return -EINVAL;
	if (!(vals = calloc((size_t)ncpu * stride, sizeof(*vals))))
		return -ENOMEM;
	if (bpf_map_lookup_elem(fd, key, vals)) {
		int err = -errno;

		free(vals);
		return err;
	}
	for (int c = 0; c < ncpu; c++)
		for (size_t i = 0; i < n; i++)
			out[i] += vals[c * stride + i];
	free(vals);
	return 0;
}

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL /* Linux 6.9: a pidfd of one thread */
#endif

int il_obj_task_lookup(struct bpf_object *obj, const char *name, __u32 pid, __u32 tid, void *value)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, name);
	int fd = m ? bpf_map__fd(m) : -1, pidfd, err;

	if (fd < 0)
		return -ENOENT;
	if (bpf_map__type(m) != BPF_MAP_TYPE_TASK_STORAGE)
		return bpf_map_lookup_elem(fd, &tid, value) ? -errno : 0;
	pidfd = syscall(SYS_pidfd_open, tid, tid == pid ? 0 : PIDFD_THREAD);
	if (pidfd < 0)
		return -errno;
	err = bpf_map_lookup_elem(fd, &pidfd, value) ? -errno : 0;
	close(pidfd);
	return err;
}
