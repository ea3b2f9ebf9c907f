/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <elfutils/libdwfl.h>
#include "stacks.h"

int il_stack_read(int map_fd, __u32 id, __u64 *ips, int max)
{
	int n;

	memset(ips, 0, max * sizeof(*ips));
	if (bpf_map_lookup_elem(map_fd, &id, ips))
		return -errno;
	for (n = 0; n < max && ips[n]; n++)
		;
	return n;
}

bool il_ksym_is_tracer(const char *name)
{
	static const char *const prefixes[] = {
		"bpf_prog_", "bpf_trace_run", "__bpf_trace_", "__traceiter_", "perf_trace_",
		"trace_event_raw_event_", "bpf_get_stack", "__bpf_get_stack", "bpf_get_stackid",
		"bpf_trampoline_", /* fentry/fexit trampolines ("bpf_trampoline_<key> [bpf]") */
	};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/* ---- user symbols (libdwfl) ------------------------------------------------------ */

#define USYMS_SLOTS 256/* processes kept at once; the oldest is dropped when full */

struct proc_syms {
	int pid;        /* 0: slot unused */
	Dwfl *dwfl;     /* NULL when the process could not be read (gone, or no maps) */
	unsigned long long used;
};

struct il_usyms {
	struct proc_syms procs[USYMS_SLOTS];
	unsigned long long clock;
};

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

struct il_usyms *il_usyms_new(void)
{
	return calloc(1, sizeof(struct il_usyms));
}

static void proc_drop(struct proc_syms *p)
{
	if (p->dwfl)
		dwfl_end(p->dwfl);
	memset(p, 0, sizeof(*p));
}

void il_usyms_free(struct il_usyms *u)
{
	if (!u)
		return;
	for (int i = 0; i < USYMS_SLOTS; i++)
		proc_drop(&u->procs[i]);
	free(u);
}

void il_usyms_forget(struct il_usyms *u, int pid)
{
	for (int i = 0; i < USYMS_SLOTS; i++)
		if (u->procs[i].pid == pid)
			proc_drop(&u->procs[i]);
}

static Dwfl *proc_open(int pid)
{
	Dwfl *d = dwfl_begin(&proc_callbacks);

	if (!d)
		return NULL;
	dwfl_report_begin(d);
	if (dwfl_linux_proc_report(d, pid) || dwfl_report_end(d, NULL, NULL)) {
		dwfl_end(d);
		return NULL;
	}
	return d;
}

static Dwfl *proc_get(struct il_usyms *u, int pid)
{
	struct proc_syms *victim = &u->procs[0];

	u->clock++;
	for (int i = 0; i < USYMS_SLOTS; i++) {
		struct proc_syms *p = &u->procs[i];

		if (p->pid == pid) {
			p->used = u->clock;
			return p->dwfl;
		}
		if (p->used < victim->used)
			victim = p;
	}
	proc_drop(victim);
	victim->pid = pid;
	victim->used = u->clock;
	victim->dwfl = proc_open(pid);
	return victim->dwfl;
}

int il_usyms_load(struct il_usyms *u, int pid)
{
	return proc_get(u, pid) ? 0 : -1;
}

const char *il_usyms_format(struct il_usyms *u, int pid, __u64 addr, char *buf, size_t len)
{
	Dwfl *d = u ? proc_get(u, pid) : NULL;
	Dwfl_Module *m = d && addr ? dwfl_addrmodule(d, addr - 1) : NULL;
	const char *obj, *sym, *slash;
	Dwarf_Addr start = 0, end = 0;
	GElf_Off off = 0;
	GElf_Sym s;

	if (m)
		obj = dwfl_module_info(m, NULL, &start, &end, NULL, NULL, NULL, NULL);
	/* dwfl_addrmodule() can answer with the last module for an address past every mapping
	 * (a garbage frame of a frame-pointer walk through code built without them). */
	if (!m || addr - 1 < start || addr - 1 >= end) {
		snprintf(buf, len, "[unknown]");
		return buf;
	}
	slash = obj ? strrchr(obj, '/') : NULL;
	obj = slash ? slash + 1 : obj ? obj : "?";
	sym = dwfl_module_addrinfo(m, addr - 1, &off, &s, NULL, NULL, NULL);
	if (sym)
		snprintf(buf, len, "%s+0x%llx (%s)", sym, (unsigned long long)off + 1, obj);
	else
		snprintf(buf, len, "%s+0x%llx", obj, (unsigned long long)(addr - start));
	return buf;
}
