/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include "btf.h"

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

int il_btf_find(const char *name, int kind, __u32 *type_id, int *obj_fd)
{
	struct btf *vm = il_btf_vmlinux();
	__u32 id = 0;
	int t;

	if (!vm)
		return -ENOENT;
	t = btf__find_by_name_kind(vm, name, kind);
	if (t > 0) {
		*type_id = t;
		*obj_fd = 0;
		return 0;
	}
	while (!bpf_btf_get_next_id(id, &id))
		if (!find_in_module(id, vm, name, kind, type_id, obj_fd))
			return 0;
	return -ENOENT;
}

int il_btf_tp_nargs(const char *name)
{
	struct btf *vm = il_btf_vmlinux();
	const struct btf_type *t;
	char tname[256];
	int id;

	if (!vm)
		return -1;
	snprintf(tname, sizeof(tname), "btf_trace_%s", name);
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
	struct btf *vm = il_btf_vmlinux();
	const struct btf_type *t;
	int id;

	if (!vm)
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
