/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bpfobj.h"
#include "drops.h"
#include "util.h"

/* Each kind's JSON name and its line of text, "WHAT (why): N": the count last, for awk's $NF. */
static const struct { const char *name, *text; } drops[IL_DROP__MAX] = {
	[IL_DROP_RINGBUF_FULL] = { "ringbuf_full", "events lost (ring buffer full)" },
	[IL_DROP_MAP_FULL] = { "map_full", "operations not measured (a BPF map full)" },
	[IL_DROP_MISSED_START] = { "missed_start", "calls or requests not timed (they ended with no start seen: under way when tracing began, or the kernel skipped the start event)" },
	[IL_DROP_BACKWARDS] = { "backwards", "operations not measured (completion time before start time)" },
	[IL_DROP_STACK] = { "stack", "stacks lost (stack map full or hash collision)" },
	[IL_DROP_MISSED_RETURN] = { "missed_return", "returns not seen (a call began again before its end was seen: an exit the kernel did not report, or, with kprobes, a kretprobe out of instances)" },
	[IL_DROP_MISSED_END] = { "missed_end", "I/O-wait sleeps not timed (their end is unknown: the task ran again with no context switch to it reported, about 1 sleep in 5,000 on some kernels)" },
	[IL_DROP_COMPAT] = { "compat_syscall", "32-bit system calls not measured (a 32-bit process's, or int 0x80: reads, writes and syncs on traced files)" },
	[IL_DROP_MSYNC] = { "msync", "msync syncs not measured (the mapping's file was not found: the kernel has no bpf_find_vma, before 5.17, or the mapping's lock was held)" },
};

const char *il_drop_name(enum il_drop d)
{
	return d < IL_DROP__MAX ? drops[d].name : "?";
}

int il_drops_read(int map_fd, __u64 out[IL_DROP__MAX])
{
	for (__u32 k = 0; k < IL_DROP__MAX; k++) {
		int err = il_percpu_sum(map_fd, &k, sizeof(__u64), &out[k], 1);

		if (err)
			return err;
	}
	return 0;
}

void il_drops_print(FILE *f, const __u64 d[IL_DROP__MAX])
{
	for (int i = 0; i < IL_DROP__MAX; i++)
		if (d[i])
			fprintf(f, "%s: %llu\n", drops[i].text, (unsigned long long)d[i]);
}

struct json_object *il_drops_json(const __u64 d[IL_DROP__MAX])
{
	struct json_object *o = json_object_new_object();

	for (int i = 0; i < IL_DROP__MAX; i++)
		json_object_object_add(o, drops[i].name, json_object_new_uint64(d[i]));
	return o;
}

void il_drops_report(int map_fd, bool json)
{
	__u64 d[IL_DROP__MAX];

	if (il_drops_read(map_fd, d))
		return;
	if (json) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "lost", il_drops_json(d));
		il_json_print(stdout, o);
	} else {
		il_drops_print(stderr, d);
	}
}
