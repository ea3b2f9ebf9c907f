/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Messages: one line each, prefixed by the tool's name, on stderr. */
#ifndef IOLAYER_LOG_H
#define IOLAYER_LOG_H

#include <stdio.h>

/* Exit statuses every tool uses: 0 success, 1 any error (bad input, missing kernel feature,
 * runtime failure). */
#define IL_EXIT_OK 0
#define IL_EXIT_ERR 1

extern const char *il_tool;  /* name used in messages, set by il_log_init() */
extern int il_verbose;       /* 0 quiet, 1 -v (attach plan, notices), 2 -vv (libbpf debug) */

/* Set the tool name and verbosity, and route libbpf's own log through il_verbose:
 * libbpf warnings show from -v, its debug output (verifier log) from -vv. */
void il_log_init(const char *tool, int verbose);

/* "tool: message" on stderr. il_warn always, il_info from -v, il_debug from -vv. */
void il_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void il_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void il_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void il_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* il_err() then exit(IL_EXIT_ERR). */
void il_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
