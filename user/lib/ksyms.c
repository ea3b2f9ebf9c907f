/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ksyms.h"

struct il_ksyms {
	struct il_ksym *syms;
	size_t n, cap;
	char **strs; /* owned strings (names and module names) */
	size_t nstrs, capstrs;
};

static char *keep(struct il_ksyms *ks, const char *s)
{
	char *d = strdup(s);

	if (!d)
		return NULL;
	if (ks->nstrs == ks->capstrs) {
		size_t cap = ks->capstrs ? ks->capstrs * 2 : 4096;
		char **n = realloc(ks->strs, cap * sizeof(*n));

		if (!n) {
			free(d);
			return NULL;
		}
		ks->strs = n;
		ks->capstrs = cap;
	}
	ks->strs[ks->nstrs++] = d;
	return d;
}

/* Section and region markers (__sched_text_start, _stext, __irqentry_text_end, ...) share
 * the address of the first function after them: on 5.10 __sched_text_start is where
 * io_schedule_timeout begins. */
static bool is_marker(const char *name)
{
	size_t n = strlen(name);

	if (name[0] != '_')
		return false;
	if ((n > 6 && !strcmp(name + n - 6, "_start")) || (n > 4 && !strcmp(name + n - 4, "_end")))
		return true;
	return !strcmp(name, "_stext") || !strcmp(name, "_text") || !strcmp(name, "_etext") ||
	       !strcmp(name, "_sinittext") || !strcmp(name, "_einittext");
}

/* By address; at one address markers first, so lookups (which take the last symbol at or
 * below an address) name the function, not the marker. */
static int cmp_addr(const void *a, const void *b)
{
	const struct il_ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return (int)is_marker(y->name) - (int)is_marker(x->name);
}

/* One line of /proc/kallsyms, "ADDR TYPE NAME" then "\t[MODULE]" for a module's, into *addr,
 * *type, name and mod (truncated to their sizes): 3, 4 with a module, or 0 for a line that
 * is not one. By hand rather than sscanf, ~10x faster over the file's ~200,000 lines. */
static int parse_line(char *line, unsigned long *addr, char *type, char *name, size_t nlen,
		      char *mod, size_t mlen)
{
	char *p, *end, *tab;
	size_t n;

	*addr = strtoul(line, &p, 16);
	if (p == line || p[0] != ' ' || !p[1] || p[2] != ' ')
		return 0;
	*type = p[1];
	p += 3;
	end = p + strcspn(p, "\t\n");
	n = (size_t)(end - p) < nlen ? (size_t)(end - p) : nlen - 1;
	if (!n)
		return 0;
	memcpy(name, p, n);
	name[n] = 0;
	if (*end != '\t' || end[1] != '[')
		return 3;
	p = end + 2;
	tab = strchr(p, ']');
	if (!tab)
		return 3;
	n = (size_t)(tab - p) < mlen ? (size_t)(tab - p) : mlen - 1;
	memcpy(mod, p, n);
	mod[n] = 0;
	return 4;
}

struct il_ksyms *il_ksyms_load(const char *path)
{
	struct il_ksyms *ks = calloc(1, sizeof(*ks));
	char line[512], name[256], mod[128], type, *lastmod = NULL;
	unsigned long addr;
	FILE *f;

	if (!ks)
		return NULL;
	f = fopen(path ? path : "/proc/kallsyms", "r");
	if (!f) {
		free(ks);
		return NULL;
	}
	while (fgets(line, sizeof(line), f)) {
		int n = parse_line(line, &addr, &type, name, sizeof(name), mod, sizeof(mod));

		if (n < 3 || !addr)
			continue;
		if (ks->n == ks->cap) {
			size_t cap = ks->cap ? ks->cap * 2 : 65536;
			struct il_ksym *s = realloc(ks->syms, cap * sizeof(*s));

			if (!s)
				goto nomem;
			ks->syms = s;
			ks->cap = cap;
		}
		struct il_ksym *s = &ks->syms[ks->n];
		s->addr = addr;
		s->name = keep(ks, name);
		s->module = NULL;
		if (n == 4) {
			if (!lastmod || strcmp(lastmod, mod))
				lastmod = keep(ks, mod);
			s->module = lastmod;
		}
		if (!s->name || (n == 4 && !s->module))
			goto nomem;
		ks->n++;
	}
	fclose(f);
	if (!ks->n) {
		il_ksyms_free(ks);
		errno = ENOENT;
		return NULL;
	}
	qsort(ks->syms, ks->n, sizeof(*ks->syms), cmp_addr);
	return ks;
nomem:
	fclose(f);
	il_ksyms_free(ks);
	errno = ENOMEM;
	return NULL;
}

void il_ksyms_free(struct il_ksyms *ks)
{
	if (!ks)
		return;
	for (size_t i = 0; i < ks->nstrs; i++)
		free(ks->strs[i]);
	free(ks->strs);
	free(ks->syms);
	free(ks);
}

const struct il_ksym *il_ksyms_find(const struct il_ksyms *ks, unsigned long addr)
{
	size_t lo = 0, hi;

	if (!ks || !ks->n || addr < ks->syms[0].addr)
		return NULL;
	hi = ks->n;
	while (hi - lo > 1) { /* invariant: syms[lo].addr <= addr < syms[hi].addr */
		size_t mid = lo + (hi - lo) / 2;

		if (ks->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return &ks->syms[lo];
}

const char *il_ksyms_format(const struct il_ksyms *ks, unsigned long addr, char *buf, size_t len)
{
	const struct il_ksym *s = il_ksyms_find(ks, addr);

	if (!s)
		snprintf(buf, len, "[unknown]");
	else if (s->module)
		snprintf(buf, len, "%s+0x%lx [%s]", s->name, addr - s->addr, s->module);
	else
		snprintf(buf, len, "%s+0x%lx", s->name, addr - s->addr);
	return buf;
}

bool il_ksyms_readable(void)
{
	char line[512];
	unsigned long addr = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return false;
	/* the first lines may be per-CPU symbols, at offsets from 0 (fixed_percpu_data before
	 * 6.15): look for an address among the first thousand */
	for (int i = 0; i < 1000 && !addr && fgets(line, sizeof(line), f); i++)
		sscanf(line, "%lx", &addr);
	fclose(f);
	if (!addr)
		errno = ENOENT; /* il_ksyms_load()'s answer for a file of zero addresses */
	return addr != 0;
}

/* Find text symbol name (type t or T) in /proc/kallsyms, whose lines are "ADDR TYPE NAME",
 * then "\t[MODULE]" for a module's: true when found, with its address in *addr (0 where
 * kptr_restrict hides addresses) unless addr is NULL. Parsed by hand, not with sscanf: the
 * file has ~200,000 lines, and a tool waits for this at start-up. */
static bool ksym_find(const char *name, unsigned long *addr)
{
	size_t len = strlen(name);
	char line[512], *buf;
	bool found = false;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return false;
	/* fewer reads (each costs a seq_file round): glibc ignores the size given with a NULL
	 * buffer and reads /proc files 1 KiB at a time */
	buf = malloc(64 << 10);
	if (buf)
		setvbuf(f, buf, _IOFBF, 64 << 10);
	while (!found && fgets(line, sizeof(line), f)) {
		const char *sp = strchr(line, ' '), *end;

		if (!sp || (sp[1] != 't' && sp[1] != 'T') || sp[2] != ' ' || strncmp(sp + 3, name, len))
			continue;
		end = sp + 3 + len;
		if (*end != '\n' && *end != '\t' && *end != '\0')
			continue;
		found = true;
		if (addr)
			*addr = strtoul(line, NULL, 16);
	}
	fclose(f);
	free(buf);
	return found;
}

unsigned long il_ksym_addr(const char *name)
{
	unsigned long addr = 0;

	return ksym_find(name, &addr) ? addr : 0;
}

bool il_ksym_exists(const char *name)
{
	return ksym_find(name, NULL);
}
