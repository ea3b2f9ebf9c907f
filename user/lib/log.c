/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#include <stdarg.h>
#include <stdlib.h>
#include <bpf/libbpf.h>
#include "log.h"

const char *il_tool = "iolayer";
int il_verbose;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && il_verbose < 2)
		return 0;
	if (level != LIBBPF_DEBUG && il_verbose < 1)
		return 0;
	fprintf(stderr, "%s: ", il_tool); /* libbpf starts its lines with "libbpf: " */
	return vfprintf(stderr, fmt, ap);
}

void il_log_init(const char *tool, int verbose)
{
	il_tool = tool;
	il_verbose = verbose;
	libbpf_set_print(libbpf_print);
}

static void vlog(const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", il_tool);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

#define LOG_BODY(cond)            \
	do {                      \
		va_list ap;       \
		if (!(cond))      \
			return;   \
		va_start(ap, fmt);\
		vlog(fmt, ap);    \
		va_end(ap);       \
	} while (0)

void il_err(const char *fmt, ...) { LOG_BODY(1); }
void il_warn(const char *fmt, ...) { LOG_BODY(1); }
void il_info(const char *fmt, ...) { LOG_BODY(il_verbose >= 1); }
void il_debug(const char *fmt, ...) { LOG_BODY(il_verbose >= 2); }

void il_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(fmt, ap);
	va_end(ap);
	exit(IL_EXIT_ERR);
}
