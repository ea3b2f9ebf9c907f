/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#include <errno.h>
#include <bpf/btf.h>
#include "kfunc.h"

int il_kfunc_proto(const char *func, int *nargs, bool *returns_int)
{
	static struct btf *vm;
	const struct btf_type *t;
	int id;

	if (!vm)
		vm = btf__load_vmlinux_btf();
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
