// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * writeback-ret: what the writeback path returns, call by call — ext4_writepages (default),
 * do_writepages, or any int-returning kernel function — with its sync mode, pages written
 * and latency, and at exit a table of return values by function and sync mode.
 */
#include <argp.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "libiolayer.h"
#include "writeback_ret.skel.h"

static struct env {
	const char *func;
	bool errors, stack;
} env = { .func = "ext4_writepages" };

enum { OPT_ERRORS = 0x100, OPT_STACK };

static const char doc[] =
"Show what the writeback path returns, call by call: ext4_writepages\n"
"(default), do_writepages, or any kernel function that returns int.\n"
"\n"
"USAGE: writeback-ret [-f FUNC] [-p PID | --tid TID | -C CGROUP] [--errors]\n"
"                     [--stack] [-d SECONDS] [--json]\n"
"\n"
"One row per return of the traced function: the value (signed, with its errno\n"
"name), the writeback_control's sync mode, pages written, latency, device,\n"
"inode and file (its full path through its first name, \" (deleted)\" last when\n"
"unlinked, \"...\" first when deeper than 16 components or its filesystem is\n"
"mounted nowhere whole). At exit: return values by function and sync mode\n"
"(count, total and max latency), and what could not be measured.\n"
"\n"
"RET -12 ENOMEM with WB_SYNC_ALL is the case where do_writepages retries in a\n"
"loop and fsync stalls.\n"
"\n"
"EXAMPLES:\n"
"  writeback-ret                     # every ext4_writepages call\n"
"  writeback-ret --errors --stack    # failing calls only, with kernel stacks\n"
"  writeback-ret -p 1234             # calls made by process 1234\n"
"  writeback-ret -C 3f2a9c1b          # calls made in a container (its id)\n"
"  writeback-ret -f do_writepages    # do_writepages instead\n"
"  writeback-ret -f vfs_fsync_range  # any int-returning kernel function\n"
"                                    # (needs fexit or kretprobes)\n"
"  writeback-ret -d 10 --json        # 10 seconds, one JSON object per line\n"
"\n"
"OPTIONS:";

static const struct argp_option options[] = {
	{ "func", 'f', "FUNC", 0,
	  "Function to trace: ext4_writepages (default),\ndo_writepages, or any kernel function\n"
	  "that returns int (needs fexit or kretprobes)", 0 },
	{ "errors", OPT_ERRORS, NULL, 0, "Only rows with a non-zero return value", 0 },
	{ "stack", OPT_STACK, NULL, 0, "Under each non-zero return, the kernel stack\nof its call", 0 },
	{ 0 },
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'f': env.func = arg; break;
	case OPT_ERRORS: env.errors = true; break;
	case OPT_STACK: env.stack = true; break;
	default: return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* ---- the function to trace ----------------------------------------------------------- */

static enum wb_func func_id;
static int func_nargs = 2;
static bool func_has_btf = true; /* prototype known: fexit can read the return value */

/* Decide what -f names; exits with one line when it cannot be traced here. */
static void resolve_func(void)
{
	char why_f[256] = "", why_k[256] = "";
	bool is_int;

	if (!strcmp(env.func, "ext4_writepages")) {
		func_id = WB_FUNC_EXT4_WRITEPAGES;
		return;
	}
	if (!strcmp(env.func, "do_writepages")) {
		func_id = WB_FUNC_DO_WRITEPAGES;
		return;
	}
	func_id = WB_FUNC_GENERIC;
	if (!il_kernel_has_func(env.func))
		il_die("no kernel function named '%s' (not in the kernel's BTF nor in /proc/kallsyms)",
		       env.func);
	if (il_kfunc_proto(env.func, &func_nargs, &is_int)) {
		func_has_btf = false; /* kretprobe only: fexit needs to know where ret is */
	} else {
		if (!is_int)
			il_die("%s does not return int (its BTF prototype says so); only int-returning "
			       "functions can be traced", env.func);
		if (func_nargs > 6)
			func_has_btf = false;
	}
	if (!(func_has_btf && il_can_fentry(env.func, why_f, sizeof(why_f))) &&
	    !il_can_kprobe(env.func, why_k, sizeof(why_k)))
		il_die("tracing %s needs fexit or kretprobes, and this kernel has neither (%s; %s)",
		       env.func, func_has_btf ? why_f : "no BTF prototype for fexit", why_k);
}

/* ---- rows ------------------------------------------------------------------------------ */

static struct writeback_ret_bpf *skel;
static struct il_stacknames *stacks;
static int func_width = 15;

static const char *sync_mode_str(int m)
{
	switch (m) {
	case 0: return "WB_SYNC_NONE";
	case 1: return "WB_SYNC_ALL";
	case -1: return "-";
	default: return "?";
	}
}

/* "-12 ENOMEM", "0", "1"; "?" when the method does not see the return value. */
static const char *ret_str(int ret, bool known, char *buf, size_t len)
{
	if (!known)
		snprintf(buf, len, "?");
	else if (ret < 0 && ret >= -4095)
		snprintf(buf, len, "%d %s", ret, il_errno_name(ret));
	else
		snprintf(buf, len, "%d", ret);
	return buf;
}

/* The name of a row's device, "-" for none. */
static const char *dev_str(__u32 dev, char *buf, size_t len)
{
	if (!dev) {
		snprintf(buf, len, "-");
		return buf;
	}
	return il_disk_name(dev, buf, len);
}

static const char *func_name(int f)
{
	switch (f) {
	case WB_FUNC_EXT4_WRITEPAGES: return "ext4_writepages";
	case WB_FUNC_DO_WRITEPAGES: return "do_writepages";
	default: return env.func;
	}
}

static void print_header(void)
{
	if ((il_opts.format == IL_FMT_JSON))
		return;
	printf("%-8s %-16s %7s %7s %-*s %-14s %-12s %6s %10s %-8s %10s %s\n", "TIME", "COMM", "PID",
	       "TID", func_width, "FUNC", "RET", "SYNC_MODE", "PAGES", "LAT(us)", "DEV", "INO", "FILE");
	fflush(stdout);
}

static int on_event(void *ctx, void *data, size_t size)
{
	const struct wb_event *e = data;
	const size_t names_off = offsetof(struct wb_event, names);
	const struct il_frames *f;
	struct il_frames from_func;
	char ts[16], rs[48], ds[32], ps[24], comm[4 * IL_TASK_COMM_LEN + 1];
	char path[IL_PATH_STR_MAX], file[4 * IL_PATH_STR_MAX];
	int nips;

	/* a record holds its header and path.len bytes of names */
	if (size < names_off || size < names_off + e->path.len)
		return 0;
	f = env.stack ? il_stacknames_get(stacks, 0, e->stack_id) : NULL;
	/* The stack starts at the traced function; frames before it are the tracer's own, such
	 * as an fexit trampoline that the kernel symbols may not name: left out. */
	for (int i = 1; f && f->n && strcmp(f->funcs[0], env.func) && i < f->n; i++) {
		if (!strcmp(f->funcs[i], env.func)) {
			from_func = (struct il_frames){ f->n - i, f->names + i, f->funcs + i };
			f = &from_func;
		}
	}
	nips = f ? f->n : 0;
	il_path_str(&e->path, e->names, size - names_off, e->dev, e->ino, path, sizeof(path));

	il_clock_str(ts, sizeof(ts));
	ret_str(e->ret, e->ret_known, rs, sizeof(rs));
	dev_str(e->dev, ds, sizeof(ds));
	if ((il_opts.format == IL_FMT_JSON)) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "time", json_object_new_string(ts));
		il_json_add_name(o, "comm", e->comm, sizeof(e->comm));
		json_object_object_add(o, "pid", json_object_new_int(e->pid));
		json_object_object_add(o, "tid", json_object_new_int(e->tid));
		json_object_object_add(o, "func", json_object_new_string(func_name(e->func)));
		json_object_object_add(o, "ret", e->ret_known ? json_object_new_int(e->ret) : NULL);
		if (e->ret_known && e->ret < 0 && e->ret >= -4095)
			json_object_object_add(o, "errno", json_object_new_string(il_errno_name(e->ret)));
		json_object_object_add(o, "sync_mode", e->sync_mode >= 0 ?
				       json_object_new_string(sync_mode_str(e->sync_mode)) : NULL);
		json_object_object_add(o, "pages", e->pages >= 0 ? json_object_new_int64(e->pages) : NULL);
		json_object_object_add(o, "usecs", il_json_usecs(e->lat_ns / 1e3));
		json_object_object_add(o, "dev", e->dev ? json_object_new_string(ds) : NULL);
		json_object_object_add(o, "ino", e->ino ? json_object_new_uint64(e->ino) : NULL);
		if (e->path.flags & IL_PATH_NONE) {
			json_object_object_add(o, "file", NULL);
		} else {
			il_json_add_name(o, "file", path, sizeof(path));
			json_object_object_add(o, "deleted",
					       json_object_new_boolean(!!(e->path.flags & IL_PATH_DELETED)));
		}
		if (env.stack && e->ret_known && e->ret) {
			struct json_object *st = json_object_new_array();

			for (int i = 0; i < nips; i++)
				json_object_array_add(st, json_object_new_string(f->names[i]));
			json_object_object_add(o, "stack", st);
		}
		il_json_print(stdout, o);
		return 0;
	}
	if (e->pages >= 0)
		snprintf(ps, sizeof(ps), "%lld", (long long)e->pages);
	else
		snprintf(ps, sizeof(ps), "-");
	printf("%-8s %s %7u %7u %-*s %-14s %-12s %6s %10.1f %-8s %10llu %s\n", ts,
	       il_text_column(e->comm, sizeof(e->comm), 16, comm, sizeof(comm)), e->pid, e->tid,
	       func_width, func_name(e->func), rs, sync_mode_str(e->sync_mode), ps,
	       e->lat_ns / 1000.0, ds, (unsigned long long)e->ino,
	       e->path.flags & IL_PATH_NONE ? "-" :
	       il_text_path(path, sizeof(path), e->path.flags & IL_PATH_DELETED, file, sizeof(file)));
	if (env.stack && e->ret_known && e->ret) {
		if (!nips)
			printf("    [stack not available]\n");
		for (int i = 0; i < nips; i++)
			printf("    %s\n", f->names[i]);
	}
	fflush(stdout);
	return 0;
}

/* ---- summary --------------------------------------------------------------------------- */

static int cmp_rows(const void *a, const void *b)
{
	const struct il_wb_row *x = a, *y = b;

	if (x->k.func != y->k.func)
		return x->k.func < y->k.func ? -1 : 1;
	if (x->k.sync_mode != y->k.sync_mode)
		return x->k.sync_mode < y->k.sync_mode ? -1 : 1;
	if (x->v.count != y->v.count)
		return x->v.count > y->v.count ? -1 : 1;
	return x->k.ret < y->k.ret ? -1 : x->k.ret > y->k.ret;
}

static void print_summary(void)
{
	struct il_wb_row *rows;
	__u64 drops[IL_DROP__MAX] = {};
	int n = il_wb_stats_read(skel->obj, &rows);

	if (n < 0) {
		il_err("cannot read the summary map: %s", il_errno_name(n));
		n = 0;
	}
	qsort(rows, n, sizeof(rows[0]), cmp_rows);
	il_drops_read(bpf_map__fd(skel->maps.il_drops), drops);

	if ((il_opts.format == IL_FMT_JSON)) {
		struct json_object *o = json_object_new_object(), *arr = json_object_new_array();

		for (int i = 0; i < n; i++) {
			struct json_object *r = json_object_new_object();
			const struct il_wb_row *s = &rows[i];

			json_object_object_add(r, "func", json_object_new_string(func_name(s->k.func)));
			json_object_object_add(r, "ret", s->k.ret_known ? json_object_new_int(s->k.ret) : NULL);
			if (s->k.ret_known && s->k.ret < 0 && s->k.ret >= -4095)
				json_object_object_add(r, "errno", json_object_new_string(il_errno_name(s->k.ret)));
			json_object_object_add(r, "sync_mode", s->k.sync_mode >= 0 ?
					       json_object_new_string(sync_mode_str(s->k.sync_mode)) : NULL);
			json_object_object_add(r, "count", json_object_new_uint64(s->v.count));
			json_object_object_add(r, "total_usecs", il_json_usecs(s->v.total_ns / 1e3));
			json_object_object_add(r, "max_usecs", il_json_usecs(s->v.max_ns / 1e3));
			json_object_array_add(arr, r);
		}
		json_object_object_add(o, "summary", arr);
		json_object_object_add(o, "lost", il_drops_json(drops));
		il_json_print(stdout, o);
		free(rows);
		return;
	}
	printf("\n%-*s %-14s %-12s %8s %12s %10s\n", func_width, "FUNC", "RET", "SYNC_MODE", "COUNT",
	       "TOTAL(us)", "MAX(us)");
	for (int i = 0; i < n; i++) {
		const struct il_wb_row *s = &rows[i];
		char rs[48];

		printf("%-*s %-14s %-12s %8llu %12.1f %10.1f\n", func_width, func_name(s->k.func),
		       ret_str(s->k.ret, s->k.ret_known, rs, sizeof(rs)), sync_mode_str(s->k.sync_mode),
		       (unsigned long long)s->v.count, s->v.total_ns / 1000.0, s->v.max_ns / 1000.0);
	}
	if (!n)
		printf("(no calls seen)\n");
	il_drops_print(stdout, drops);
	free(rows);
}

/* ---- attach plan ------------------------------------------------------------------------ */

/* What the chosen method cannot see, said once at start (always, not only with -v). */
static void say_limits(int method)
{
	const char *l = il_wb_tp_limits(func_id, method);

	if (l)
		il_warn("%s", l);
}

int main(int argc, char **argv)
{
	static const struct argp argp = { options, parse_arg, NULL, doc, il_argp_children, NULL, NULL };
	struct il_layerset *ls = NULL;
	struct ring_buffer *rb = NULL;
	struct il_plan *plan;
	int rc = IL_EXIT_ERR;
	struct wb_cfg *cfg;

	il_tool_start("writeback-ret", &argp, IL_OPT_PID | IL_OPT_CGROUP | IL_OPT_TID | IL_OPT_DURATION | IL_OPT_JSON,
		      argc, argv);
	resolve_func();
	if ((int)strlen(env.func) > func_width)
		func_width = strlen(env.func);

	skel = IL_SKEL_OPEN(writeback_ret_bpf);
	cfg = il_wb_cfg(skel->obj);
	cfg->targ_tgid = il_opts.pid;
	cfg->targ_tid = il_opts.tid;
	cfg->func = func_id;
	cfg->nargs = func_nargs;
	cfg->has_wbc = func_id != WB_FUNC_GENERIC;
	cfg->errors_only = env.errors;
	il_wb_want_stack(skel->obj, env.stack);
	/* Programs the plan does not list (another function's tracepoints) must not load: their
	 * targets may not exist here (5.10's ext4 tracepoints have no BTF). */
	il_autoload_none(skel->obj);
	if (!(ls = il_layerset_new(skel->obj, 1)) || !(plan = il_layerset_add(ls, "writeback", 1)))
		goto out;
	il_wb_plan(skel->obj, func_id, env.func, func_id != WB_FUNC_GENERIC || func_has_btf, plan);
	if (il_layerset_choose(ls, il_opts.attach))
		goto out;
	if (env.errors && !il_wb_ret_visible(func_id, il_plan_method(plan))) {
		il_err("--errors cannot show anything here: %s is traced with %s, which does not see "
		       "its return value (fexit or kretprobe would)", env.func,
		       il_method_name(il_plan_method(plan)));
		goto out;
	}
	if (il_layerset_loaded(ls, il_maps_ahead(skel->obj) ?: writeback_ret_bpf__load(skel)) || il_layerset_attach(ls))
		goto out;
	if (env.stack && !(stacks = il_stacknames_new(bpf_map__fd(skel->maps.wb_stacks), false)))
		goto out;
	if (!(rb = il_ringbuf_open(skel->maps.wb_events, on_event, NULL)))
		goto out;
	say_limits(il_plan_method(plan));
	print_header();
	fprintf(stderr, "Tracing %s returns%s... Hit Ctrl-C to end.\n", env.func,
		env.errors ? " (errors only)" : "");

	struct il_run run = { .duration_s = il_opts.duration_s, .rb = rb };
	if (il_run(&run) < 0)
		goto out;
	print_summary();
	rc = il_tool_output_status();
out:
	ring_buffer__free(rb);
	il_layerset_free(ls);
	writeback_ret_bpf__destroy(skel);
	il_stacknames_free(stacks);
	return rc;
}
