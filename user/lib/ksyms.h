/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Kernel symbols from /proc/kallsyms: address -> "function+0xoff [module]", name -> exists. */
#ifndef IOLAYER_KSYMS_H
#define IOLAYER_KSYMS_H

#include <stdbool.h>
#include <stddef.h>

struct il_ksym {
	unsigned long addr;  /* start address */
	const char *name;
	const char *module;  /* NULL for vmlinux */
};

struct il_ksyms;

/* Parse `path` (NULL: /proc/kallsyms). NULL with errno set on failure; addresses of 0
 * (kptr_restrict, no root) give ENOENT. */
struct il_ksyms *il_ksyms_load(const char *path);
void il_ksyms_free(struct il_ksyms *ks);

/* The symbol containing addr (greatest start <= addr), or NULL. */
const struct il_ksym *il_ksyms_find(const struct il_ksyms *ks, unsigned long addr);

/* "name+0xoff [module]" or "[unknown]" into buf (always NUL-terminated); returns buf. */
const char *il_ksyms_format(const struct il_ksyms *ks, unsigned long addr, char *buf, size_t len);

/* The address of the first function (text symbol t/T) called name in /proc/kallsyms, read
 * up to it; 0 when there is none or addresses are hidden (kptr_restrict). */
unsigned long il_ksym_addr(const char *name);

/* True when /proc/kallsyms lists a function of that name (text symbol t/T). */
bool il_ksym_exists(const char *name);

/* Does /proc/kallsyms give addresses (not zeros, as kptr_restrict makes it for some)? Reads
 * its first lines only. Sets errno when not. */
bool il_ksyms_readable(void);

#endif
