/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "btf.h"
#include "cgfilter.h"
#include "loadpool.h"
#include "disk.h"
#include "log.h"
#include "output.h"
#include "probes.h"
#include "run.h"
#include "tool.h"
#include "util.h"

#ifndef IL_VERSION
#define IL_VERSION "unknown"
#endif

struct il_common_opts il_opts;

enum { OPT_ATTACH = 0x1000, OPT_TID, OPT_CSV, OPT_USAGE };

/* Every shared option; those a tool does not take are left out of its argp (so a tool's own
 * -d, say, is free). */
static const struct { unsigned need; struct argp_option o; } all_options[] = {
	{ IL_OPT_PID, { "pid", 'p', "PID", 0, "Only this process (all its threads)", 1 } },
	{ IL_OPT_TID, { "tid", OPT_TID, "TID", 0, "Only this thread", 1 } },
	{ IL_OPT_CGROUP, { "cgroup", 'C', "CGROUP", 0, "Only the processes of this cgroup and of those\nbelow it, children forked later included: a path\nin the blkio (v1) or v2 hierarchy, a container's\nid or a unique prefix of it, or a unit's name", 1 } },
	{ IL_OPT_DURATION, { "duration", 'd', "SECONDS", 0, "Trace for SECONDS, then print the summary\n(default: until Ctrl-C)", 1 } },
	{ IL_OPT_JSON, { "json", 'j', NULL, 0, "JSON output (one object per line)", 1 } },
	{ IL_OPT_CSV, { "csv", OPT_CSV, NULL, 0, "Comma-separated rows, RFC 4180\n(the summary on stderr)", 1 } },
	{ 0, { "verbose", 'v', NULL, 0, "Say which attach method each probe uses;\n-vv adds libbpf's log", 2 } },
	{ 0, { "attach", OPT_ATTACH, "METHOD", 0,
	       "Force an attach method (default: auto, the best\nthis kernel allows): fentry, kprobe or tracepoint", 2 } },
	{ 0, { "version", 'V', NULL, 0, "Print the version and the attach methods\nthis kernel allows", 2 } },
	{ 0, { "help", 'h', NULL, 0, "Show this help", 2 } },
	{ 0, { "usage", OPT_USAGE, NULL, 0, "Show a short usage message", 2 } },
};

static struct argp_option options[IL_ARRAY_SIZE(all_options) + 1];
static unsigned enabled;
static const struct argp *tool_argp; /* the tool's own, given to il_tool_start() */

/* A tool's own wording of shared options' help (il_tool_option_doc). */
static struct { int key; const char *doc; } docs[4];

void il_tool_option_doc(int key, const char *doc)
{
	for (size_t i = 0; i < IL_ARRAY_SIZE(docs); i++) {
		if (!docs[i].key || docs[i].key == key) {
			docs[i].key = key;
			docs[i].doc = doc;
			return;
		}
	}
}

static void print_version(void)
{
	static const char *funcs[] = { "vfs_fsync_range", "do_writepages" };
	char why[256];
	bool fentry, kprobe;

	printf("%s %s\n", il_tool, IL_VERSION);
	if (geteuid()) {
		printf("attach methods: run as root to probe this kernel\n");
		return;
	}
	fentry = il_can_fentry(funcs[0], why, sizeof(why));
	printf("attach methods on this kernel:\n  fentry/fexit      %s%s\n", fentry ? "yes" : "no: ",
	       fentry ? "" : why);
	kprobe = il_can_kprobe(funcs[1], why, sizeof(why));
	printf("  kprobe/kretprobe  %s%s\n", kprobe ? "yes" : "no: ", kprobe ? "" : why);
	printf("  tracepoints       %s\n", il_can_tp_btf("sched:sched_switch", why, sizeof(why)) ?
	       "yes (tp_btf)" : "yes (raw_tp, tracepoint)");
}

static void capture_end(void);

/* After -h, --usage or -V: 0, or 1 after one line when stdout did not take it (closed,
 * /dev/full), said on the real stderr rather than through the parser's capture. */
static int help_status(void)
{
	capture_end();
	return il_tool_output_status();
}

static error_t parse(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'p':
		il_opts.pid = il_arg_uint(arg, "PID", 1, INT_MAX);
		break;
	case OPT_TID:
		il_opts.tid = il_arg_uint(arg, "TID", 1, INT_MAX);
		break;
	case 'C':
		il_opts.cgroup = arg;
		break;
	case 'd':
		if (il_opts.duration_s)
			il_argp_fail(state, "the duration is given twice");
		il_opts.duration_s = il_arg_uint(arg, "the duration (seconds)", 1, 1U << 30);
		break;
	case 'j':
	case OPT_CSV: {
		enum il_format f = key == 'j' ? IL_FMT_JSON : IL_FMT_CSV;

		if (il_opts.format != IL_FMT_TEXT && il_opts.format != f)
			il_argp_fail(state, "--csv and --json cannot be combined");
		il_opts.format = f;
		break;
	}
	case 'v':
		il_opts.verbose++;
		break;
	case OPT_ATTACH:
		if (il_family_parse(arg, &il_opts.attach))
			il_argp_fail(state, "unknown attach method '%s' (use fentry, kprobe, tracepoint or auto)", arg);
		break;
	case 'V':
		print_version();
		exit(help_status());
	case 'h': {
		unsigned flags = ARGP_HELP_STD_HELP & ~ARGP_HELP_EXIT_OK;

		/* A tool's doc gives its synopsis ("USAGE: ...", as in its man page, with what
		 * argp cannot say: -p PID | --tid TID, a second form): argp's own "Usage: TOOL
		 * [OPTION...]" line before it would say it twice. */
		if (tool_argp && tool_argp->doc && strstr(tool_argp->doc, "USAGE: "))
			flags &= ~ARGP_HELP_SHORT_USAGE;
		argp_state_help(state, stdout, flags);
		exit(help_status());
	}
	case OPT_USAGE:
		argp_state_help(state, stdout, ARGP_HELP_USAGE);
		exit(help_status());
	case ARGP_KEY_ARG: /* one the tool's own parser did not take */
		il_argp_fail(state, "unexpected argument '%s'", arg);
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp common_argp = { options, parse, NULL, NULL, NULL, NULL, NULL };
const struct argp_child il_argp_children[] = { { &common_argp, 0, NULL, 0 }, { 0 } };

void il_argp_fail(struct argp_state *state, const char *fmt, ...)
{
	va_list ap;

	(void)state;
	fprintf(stderr, "%s: ", il_tool);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (try --help)\n");
	exit(IL_EXIT_ERR);
}

/* While argp parses, stderr goes to a buffer, so getopt's and argp's own two-line messages
 * ("/path/to/tool: unrecognized option '--x'" + "Try `tool --help' ...") become our one line:
 * "tool: unrecognized option '--x' (try --help)". Our own messages pass through as they are. */
static FILE *real_stderr, *capture;
static char *cap_buf;
static size_t cap_len;
static const char *argv0;

static void capture_end(void)
{
	char *line, *nl;
	size_t plen = strlen(argv0);

	if (!capture)
		return;
	fclose(capture);
	capture = NULL;
	stderr = real_stderr;
	if (!cap_len)
		goto out;
	line = cap_buf;
	if ((nl = strchr(line, '\n')))
		*nl = 0;
	if (!strncmp(line, argv0, plen) && !strncmp(line + plen, ": ", 2))
		fprintf(stderr, "%s: %s (try --help)\n", il_tool, line + plen + 2);
	else
		fprintf(stderr, "%s\n", line);
out:
	free(cap_buf);
	cap_buf = NULL;
}

void il_tool_start(const char *name, const struct argp *argp, unsigned opts, int argc, char **argv)
{
	size_t n = 0;
	int err;

	il_out_init(); /* fds 0-2 valid before anything opens one; stdout that a signal can end */
	memset(&il_opts, 0, sizeof(il_opts));
	il_opts.attach = IL_FAM_ANY;
	enabled = opts;
	tool_argp = argp;
	for (size_t i = 0; i < IL_ARRAY_SIZE(all_options); i++)
		if (!all_options[i].need || (opts & all_options[i].need)) {
			options[n] = all_options[i].o;
			for (size_t d = 0; d < IL_ARRAY_SIZE(docs); d++)
				if (docs[d].key && docs[d].key == options[n].key)
					options[n].doc = docs[d].doc;
			n++;
		}
	memset(&options[n], 0, sizeof(options[n]));
	il_log_init(name, 0); /* messages from option parsing carry the name */

	argv0 = argv[0];
	real_stderr = stderr;
	capture = open_memstream(&cap_buf, &cap_len);
	if (capture) {
		stderr = capture;
		atexit(capture_end); /* a parser that exits still gets its message out */
	}
	err = argp_parse(argp, argc, argv, ARGP_NO_HELP | ARGP_NO_EXIT, NULL, NULL);
	capture_end();
	if (err) {
		if (!cap_len)
			fprintf(stderr, "%s: bad command line: %s (try --help)\n", name, strerror(err));
		exit(IL_EXIT_ERR);
	}
	/* -p PID | --tid TID: a thread is in one process, so together they say nothing more */
	if (il_opts.pid && il_opts.tid)
		il_argp_fail(NULL, "-p and --tid cannot be combined: --tid TID alone traces thread TID");
	if (il_opts.cgroup && (il_opts.pid || il_opts.tid))
		il_argp_fail(NULL, "--cgroup and %s cannot be combined: --cgroup traces every process of the cgroup",
			     il_opts.pid ? "-p" : "--tid");
	il_log_init(name, il_opts.verbose);
	il_require_tracing();
	if (il_opts.pid)
		il_require_pid(il_opts.pid, enabled & IL_OPT_TID);
	if (il_opts.tid)
		il_require_tid(il_opts.tid, il_opts.pid);
	if (il_opts.cgroup) {
		struct il_cgfilter f;
		char why[PATH_MAX + 256];

		if (il_cgfilter_resolve(il_opts.cgroup, &f, why, sizeof(why)))
			il_die("%s", why);
		il_cgfilter_set(&f);
		fprintf(stderr, "%s\n", il_cgfilter_describe(why, sizeof(why)));
	}
	il_watch_target(il_opts.pid, il_opts.tid); /* il_run() ends when it exits */
	/* Ctrl-C from here on, during the load too, ends the run with its summary: a signal
	 * taken before the handlers were in place killed the tool, or was lost where the shell
	 * had started it with SIGINT ignored (a background job) */
	il_signals_init();
}

void il_tool_disk(const char *name, __u32 *dev, bool *part)
{
	if (!name)
		return;
	if (il_disk_dev(name, dev))
		il_die("no block device named '%s' (see lsblk)", name);
	*part = il_disk_is_partition(name);
}

void *il_tool_opened(void *skel)
{
	if (!skel)
		il_die("cannot open the BPF object: %s", strerror(errno));
	return skel;
}

/* What to do about a load's error err (< 0 or > 0): the verifier's log only for what the
 * verifier says (EINVAL, EACCES, E2BIG, ENOSPC: its log was too small). */
static const char *load_hint(int err)
{
	switch (err < 0 ? -err : err) {
	case EINVAL: case EACCES: case E2BIG: case ENOSPC:
		return " (run with -vv for the kernel's verifier log)";
	case EPERM:
		return " (the kernel refused: it needs CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN; "
		       "a lockdown=confidentiality kernel refuses tracing to root too)";
	case EMFILE: case ENFILE:
		return " (too many open files: raise the limit, e.g. ulimit -n 4096)";
	case ENOMEM:
		return " (out of memory, or the locked-memory limit: ulimit -l)";
	default:
		return "";
	}
}

int il_tool_loaded(int err)
{
	/* the programs verified on worker threads (il_load_handlers) take their stand-ins' fds */
	int joined = il_load_join(err);

	if (!err)
		err = joined;
	/* What start-up read of the kernel's BTF goes back, and with it what libbpf freed after
	 * its own parse for CO-RE: the heap keeps freed memory otherwise. */
	il_btf_release();
	malloc_trim(0);
	if (!err)
		return 0;
	il_err("cannot load the BPF programs: %s%s", il_errno_name(err), load_hint(err));
	return -1;
}

int il_tool_output_status(void)
{
	struct il_out_status st;

	fflush(stdout);
	st = il_out_stdout(); /* the failed write's own errno: errno may be a later call's */
	if (!st.err && st.stuck && !il_out_told() && st.lost_lines)
		il_warn("stdout is blocked (its reader does not read): %llu lines not written",
			st.lost_lines);
	if (!st.err && ferror(stdout))
		st.err = EIO; /* not through our stream (il_out_init() could not make it) */
	if (!st.err || st.err == EPIPE) /* the reader went away, as Unix filters take it */
		return IL_EXIT_OK;
	il_err("writing the output failed: %s (%s): %llu lines not written", strerror(st.err),
	       il_errno_name(st.err), st.lost_lines);
	return IL_EXIT_ERR;
}
