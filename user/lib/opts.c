/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "log.h"
#include "opts.h"

struct il_common_opts il_opts;

enum { OPT_ATTACH = 0x1000 };

static const struct argp_option options[] = {
	{ "verbose", 'v', NULL, 0, "Say which attach method each probe uses; -vv adds libbpf's log", -1 },
	{ "attach", OPT_ATTACH, "METHOD", 0,
	  "Force an attach method: fentry, kprobe or tracepoint (default: auto, best first)", -1 },
	{ NULL, 'h', NULL, OPTION_HIDDEN, "Show this help", -1 },
	{ 0 },
};

static error_t parse(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'v':
		il_opts.verbose++;
		break;
	case OPT_ATTACH:
		if (il_family_parse(arg, &il_opts.attach))
			il_argp_fail(state, "unknown attach method '%s' (use fentry, kprobe, tracepoint or auto)", arg);
		break;
	case 'h':
		argp_state_help(state, stdout, ARGP_HELP_STD_HELP);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

const struct argp il_common_argp = { options, parse, NULL, NULL, NULL, NULL, NULL };

void il_opts_init(void)
{
	argp_err_exit_status = IL_EXIT_ERR;
	il_opts.verbose = 0;
	il_opts.attach = IL_FAM_ANY;
}

void il_argp_fail(struct argp_state *state, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", state->name ? state->name : il_tool);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (try --help)\n");
	exit(IL_EXIT_ERR);
}
