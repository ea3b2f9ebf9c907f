/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#include <string.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "bpfobj.h"
#include "log.h"

/* The object's .rodata map (libbpf names it "<prefix>.rodata"). */
static struct bpf_map *rodata_map(struct bpf_object *obj)
{
	struct bpf_map *m;

	bpf_object__for_each_map(m, obj) {
		const char *n = bpf_map__name(m);
		size_t l = strlen(n);

		if (bpf_map__is_internal(m) && l >= 7 && !strcmp(n + l - 7, ".rodata"))
			return m;
	}
	return NULL;
}

void *il_obj_rodata(struct bpf_object *obj, const char *name, size_t size)
{
	struct btf *btf = bpf_object__btf(obj);
	struct bpf_map *m = rodata_map(obj);
	const struct btf_var_secinfo *v;
	const struct btf_type *sec;
	size_t mapsz;
	char *data;
	int id;

	if (!btf || !m || !(data = (char *)bpf_map__initial_value(m, &mapsz)))
		return NULL;
	id = btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC);
	if (id <= 0)
		return NULL;
	sec = btf__type_by_id(btf, id);
	v = btf_var_secinfos(sec);
	for (int i = 0; i < btf_vlen(sec); i++, v++) {
		const struct btf_type *var = btf__type_by_id(btf, v->type);

		if (strcmp(btf__name_by_offset(btf, var->name_off), name))
			continue;
		if (v->size != size || v->offset + size > mapsz)
			return NULL;
		return data + v->offset;
	}
	return NULL;
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
