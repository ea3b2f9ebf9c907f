/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "btf.h"
#include "ksyms.h"
#include "log.h"
#include "probes.h"
#include "tracefs.h"

/* Load a two-instruction tracing program (r0 = 0; exit) against a BTF id and attach it.
 * This catches kernels where the BTF is there but the attach is not allowed. */
static int trial_tracing(enum bpf_attach_type type, __u32 btf_id, int obj_fd)
{
	struct bpf_insn insns[2] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = type,
		    .attach_btf_id = btf_id, .attach_btf_obj_fd = obj_fd);
	int fd, link, err = 0;

	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "il_trial", "GPL", insns, 2, &opts);
	if (fd < 0)
		return -errno;
	link = bpf_raw_tracepoint_open(NULL, fd);
	if (link < 0)
		err = -errno;
	else
		close(link);
	close(fd);
	return err;
}

/* One cached answer: (target, method) -> ok, or why not. */
struct probe_cache {
	char name[128];
	char kind;
	bool ok;
	char why[256];
	struct probe_cache *next;
};

static struct probe_cache *cache_get(const char *name, char kind, bool *hit)
{
	static struct probe_cache *cache;
	struct probe_cache *c;

	for (c = cache; c; c = c->next) {
		if (c->kind == kind && !strcmp(c->name, name)) {
			*hit = true;
			return c;
		}
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		il_die("out of memory");
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->kind = kind;
	c->next = cache;
	cache = c;
	*hit = false;
	return c;
}

static bool cache_ret(struct probe_cache *c, char *why, size_t len)
{
	if (!c->ok && why && len)
		snprintf(why, len, "%s", c->why);
	return c->ok;
}

/* Trial-attach a tracing program of attach type `type` to BTF type `btf_name`. For tp_btf
 * (BPF_TRACE_RAW_TP) the kernel's answer is the same for every tracepoint that has a
 * btf_trace_ type (what refuses it, such as lockdown, is not per tracepoint), and a trial
 * attach enables the tracepoint (code patching: 5-15 ms here, and the real attach does it
 * again), so only the first tracepoint asked about is tried; the others reuse its answer. */
static void trial(struct probe_cache *c, enum bpf_attach_type type, const char *btf_name,
		  int kind, const char *missing, const char *what)
{
	static int raw_tp_err = 1; /* 1: not tried yet, else the first trial's result */
	__u32 id;
	int fd = 0, err;

	if (!il_btf_has_vmlinux()) {
		snprintf(c->why, sizeof(c->why), "no kernel BTF (/sys/kernel/btf/vmlinux)");
	} else if (il_btf_find(btf_name, kind, &id, &fd)) {
		snprintf(c->why, sizeof(c->why), "%s", missing);
	} else {
		if (type != BPF_TRACE_RAW_TP)
			err = trial_tracing(type, id, fd);
		else if (raw_tp_err == 1)
			err = raw_tp_err = trial_tracing(type, id, fd);
		else
			err = raw_tp_err;
		if (err)
			snprintf(c->why, sizeof(c->why), "%s on %s refused by the kernel (%s)", what,
				 c->name, strerrorname_np(-err) ?: "error");
		else
			c->ok = true;
	}
	if (fd > 0)
		close(fd);
}

bool il_can_fentry(const char *func, char *why, size_t len)
{
	bool hit;
	struct probe_cache *c = cache_get(func, 'f', &hit);
	char missing[160];

	if (!hit) {
		snprintf(missing, sizeof(missing),
			 "%s is not in the kernel's BTF (not built, inlined, or a module without BTF)", func);
		trial(c, BPF_TRACE_FENTRY, func, BTF_KIND_FUNC, missing, "fentry");
	}
	return cache_ret(c, why, len);
}

bool il_can_tp_btf(const char *tp, char *why, size_t len)
{
	bool hit;
	struct probe_cache *c = cache_get(tp, 't', &hit);
	const char *name = strchr(tp, ':') ? strchr(tp, ':') + 1 : tp;
	char tname[160], missing[160];

	if (!hit) {
		snprintf(tname, sizeof(tname), "btf_trace_%s", name);
		snprintf(missing, sizeof(missing), "no BTF for tracepoint %s", tp);
		trial(c, BPF_TRACE_RAW_TP, tname, BTF_KIND_TYPEDEF, missing, "tp_btf");
	}
	return cache_ret(c, why, len);
}

bool il_kprobes_supported(void)
{
	char path[256];

	if (!access("/sys/bus/event_source/devices/kprobe/type", F_OK))
		return true;
	return il_tracefs_path("kprobe_events", path, sizeof(path)) && !access(path, F_OK);
}

bool il_can_kprobe(const char *func, char *why, size_t len)
{
	bool hit;
	struct probe_cache *c = cache_get(func, 'k', &hit);

	if (hit)
		return cache_ret(c, why, len);
	if (!il_kprobes_supported())
		snprintf(c->why, sizeof(c->why), "this kernel has no kprobes (CONFIG_KPROBES)");
	else if (!il_ksym_exists(func))
		snprintf(c->why, sizeof(c->why), "%s is not in /proc/kallsyms", func);
	else
		c->ok = true;
	return cache_ret(c, why, len);
}

bool il_can_task_storage(void)
{
	static int ok = -1;

	if (ok < 0)
		ok = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL) == 1 &&
		     libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_task_storage_get, NULL) == 1 &&
		     libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_get_current_task_btf, NULL) == 1;
	return ok;
}

bool il_kernel_has_func(const char *func)
{
	__u32 id;
	int fd = 0;

	if (!il_btf_find(func, BTF_KIND_FUNC, &id, &fd)) {
		if (fd > 0)
			close(fd);
		return true;
	}
	return il_ksym_exists(func);
}
