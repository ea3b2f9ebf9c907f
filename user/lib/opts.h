/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Options every tool takes, as an argp child: -v/--verbose (repeatable), --attach=METHOD,
 * -h/--help. Use it as
 *     static const struct argp_child children[] = { { &il_common_argp, 0, NULL, 0 }, { 0 } };
 * and read il_opts after argp_parse(). il_opts_init() also makes argp exit with status 1 on
 * a usage error, as every other error does.
 */
#ifndef IOLAYER_OPTS_H
#define IOLAYER_OPTS_H

#include <argp.h>
#include "attach.h"

struct il_common_opts {
	int verbose;            /* count of -v */
	enum il_family attach;  /* --attach, IL_FAM_ANY by default */
};

extern struct il_common_opts il_opts;
extern const struct argp il_common_argp;

/* Call before argp_parse(). */
void il_opts_init(void);

/* For a tool's own parser: report a bad value of an option or argument, exit 1. */
void il_argp_fail(struct argp_state *state, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

#endif
