// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fsslower: read, write, open, fsync/fdatasync and sync_file_range calls on ext4, xfs and
 * btrfs that took longer than a threshold, with the process, thread and file; a
 * per-operation summary at exit. Kernel side: bpf/lib/fs.bpf.h.
 */
#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "iolayer.h"
#include "layers.h"
#include "fsslower.h"
#include "fsslower.skel.h"

static const char op_letter[] = { 'R', 'W', 'O', 'F', 'S' };
static const char *op_key[] = { "read", "write", "open", "fsync", "sync_range" };
_Static_assert(sizeof(op_letter) == FS_OP__MAX && IL_ARRAY_SIZE(op_key) == FS_OP__MAX,
	       "one letter and one JSON key per enum fs_op");

enum output { OUT_TEXT, OUT_CSV, OUT_JSON };

static struct env {
	int tgid, tid;
	unsigned long long min_ms;
	unsigned duration_s;
	bool fs_wanted[FS_TYPE__MAX];
	bool fs_given;               /* -t was given */
	const char *file;            /* -f */
	bool show_tid;               /* -L */
	enum output out;
} env = { .min_ms = 10 };

enum { OPT_TID = 0x100, OPT_CSV, OPT_JSON };

static const char doc[] =
"Show read, write, open, fsync/fdatasync and sync_file_range calls on ext4,\n"
"xfs and btrfs slower than a threshold, with process, thread and file, and a\n"
"per-operation summary at exit.\n"
"\n"
"EXAMPLES:\n"
"  fsslower                  # calls over 10 ms, every mounted ext4/xfs/btrfs\n"
"  fsslower -m 0 -p 1234     # every call of process 1234 (all its threads)\n"
"  fsslower -p 1234 -L       # add a TID column\n"
"  fsslower --tid 1240       # one thread only\n"
"  fsslower -m 1 -f /var/lib/redis/appendonly.aof   # one file, over 1 ms\n"
"  fsslower -t xfs -d 10     # xfs only, for 10 seconds\n"
"  fsslower --json -m 0 -p 1234 > calls.json\n"
"\n"
"T is R (read, pread64, readv, preadv, preadv2), W (write, pwrite64,\n"
"writev, pwritev, pwritev2), O (open, creat, openat, openat2), F (fsync,\n"
"fdatasync, and the sync an O_SYNC/O_DSYNC write runs inside it: that F row\n"
"comes just before its W row) or S (sync_file_range). BYTES is what the call\n"
"returned (an errno name when it failed); OFF_KB is the file position at\n"
"entry (S: the start of the range).\n"
"\n"
"OPTIONS:";

static const struct argp_option options[] = {
	{ "pid", 'p', "PID", 0, "Only this process (all its threads)", 0 },
	{ "tid", OPT_TID, "TID", 0, "Only this thread", 0 },
	{ "min", 'm', "MS", 0, "Show calls taking at least MS milliseconds (default 10; 0 shows every call)", 0 },
	{ "type", 't', "TYPE", 0, "Filesystems to trace: ext4, xfs, btrfs, comma-separated (default: those mounted)", 0 },
	{ "file", 'f', "PATH", 0, "Only this file (its filesystem is traced)", 0 },
	{ "duration", 'd', "SECONDS", 0, "Stop after SECONDS", 0 },
	{ "tid-column", 'L', NULL, 0, "Show a TID column", 0 },
	{ "csv", OPT_CSV, NULL, 0, "Comma-separated rows (summary on stderr)", 0 },
	{ "json", OPT_JSON, NULL, 0, "One JSON object per line, then a summary object", 0 },
	{ 0 },
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'p':
		env.tgid = il_arg_uint(arg, "PID", 1, INT_MAX);
		break;
	case OPT_TID:
		env.tid = il_arg_uint(arg, "TID", 1, INT_MAX);
		break;
	case 'm':
		env.min_ms = il_arg_uint(arg, "the threshold (-m, milliseconds)", 0, 1000000000);
		break;
	case 'd':
		env.duration_s = il_arg_uint(arg, "the duration (-d, seconds)", 1, UINT_MAX);
		break;
	case 't': {
		char *copy = strdup(arg), *save = NULL, *tok;

		for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			int t = il_fs_by_name(tok);

			if (t < 0)
				il_argp_fail(state, "unknown filesystem type '%s' (use ext4, xfs or btrfs)", tok);
			env.fs_wanted[t] = true;
			env.fs_given = true;
		}
		free(copy);
		if (!env.fs_given)
			il_argp_fail(state, "-t needs a filesystem type (ext4, xfs or btrfs)");
		break;
	}
	case 'f':
		env.file = arg;
		break;
	case 'L':
		env.show_tid = true;
		break;
	case OPT_CSV:
	case OPT_JSON:
		if (env.out != OUT_TEXT && env.out != (key == OPT_CSV ? OUT_CSV : OUT_JSON))
			il_argp_fail(state, "--csv and --json cannot be combined");
		env.out = key == OPT_CSV ? OUT_CSV : OUT_JSON;
		break;
	case ARGP_KEY_ARG:
		il_argp_fail(state, "unexpected argument '%s'", arg);
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* ---- mount points: dev -> where the filesystem's root is mounted ------------------ */

struct mnt {
	__u32 dev;      /* kernel encoding, as BPF reads sb->s_dev */
	char *path;
};
static struct mnt *mnts;
static int nmnts;

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '7' && s[2] && s[3]) {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
}

/* Read /proc/self/mountinfo: for each dev, the first mount of its root ("/"). */
static void mounts_load(void)
{
	char line[4096];
	FILE *f = fopen("/proc/self/mountinfo", "r");

	for (int i = 0; i < nmnts; i++)
		free(mnts[i].path);
	nmnts = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned ma, mi;
		char root[1024], mp[1024];
		bool seen = false;

		if (sscanf(line, "%*d %*d %u:%u %1023s %1023s", &ma, &mi, root, mp) != 4 ||
		    strcmp(root, "/"))
			continue;
		for (int i = 0; i < nmnts; i++)
			seen |= mnts[i].dev == IL_MKDEV(ma, mi);
		if (seen)
			continue;
		struct mnt *n = realloc(mnts, (nmnts + 1) * sizeof(*mnts));
		if (!n)
			il_die("out of memory");
		mnts = n;
		unescape(mp);
		mnts[nmnts].dev = IL_MKDEV(ma, mi);
		mnts[nmnts].path = strdup(mp);
		nmnts++;
	}
	fclose(f);
}

/* Mount point of dev, or NULL. Re-reads mountinfo once per second at most on a miss. */
static const char *mount_of(__u32 dev)
{
	static unsigned long long last;

	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < nmnts; i++)
			if (mnts[i].dev == dev)
				return mnts[i].path;
		if (pass || il_now_ns() - last < 1000000000ULL)
			break;
		last = il_now_ns();
		mounts_load();
	}
	return NULL;
}

/* The superblock dev of the filesystem holding path: the device of the mount whose mount
 * point is the longest prefix of its real path (the last such mount wins, as it covers the
 * others). On btrfs this differs from stat's st_dev, which names the subvolume. 0 or -1. */
static int sb_dev_of(const char *path, __u32 *dev)
{
	char real[PATH_MAX], line[4096], mp[1024];
	size_t best = 0;
	unsigned ma, mi;
	FILE *f;
	int found = -1;

	if (!realpath(path, real) || !(f = fopen("/proc/self/mountinfo", "r")))
		return -1;
	while (fgets(line, sizeof(line), f)) {
		size_t n;

		if (sscanf(line, "%*d %*d %u:%u %*s %1023s", &ma, &mi, mp) != 3)
			continue;
		unescape(mp);
		n = strlen(mp);
		if (strcmp(mp, "/") && (strncmp(real, mp, n) || (real[n] && real[n] != '/')))
			continue;
		if (n >= best) {
			best = n;
			*dev = IL_MKDEV(ma, mi);
			found = 0;
		}
	}
	fclose(f);
	return found;
}

/* Is a filesystem of type name mounted (/proc/self/mounts)? */
/* The full path of e's file into buf: mount point + names from the root down. Without a
 * known mount point, or past FS_PATH_DEPTH names, the path starts with ".../". Never empty. */
static const char *event_path(const struct fs_event *e, char *buf, size_t len)
{
	const char *mp = mount_of(e->dev);
	size_t n = 0;
	int depth = e->depth > FS_PATH_DEPTH ? FS_PATH_DEPTH : e->depth;

	buf[0] = 0;
	if (!depth) { /* the filesystem's root directory itself */
		if (mp)
			snprintf(buf, len, "%s", mp);
		else
			snprintf(buf, len, "[inode %llu]", (unsigned long long)e->ino);
		return buf;
	}
	if ((e->flags & FS_EV_DEEPER) || !mp)
		n = snprintf(buf, len, "...");
	else if (strcmp(mp, "/"))
		n = snprintf(buf, len, "%s", mp);
	for (int i = depth - 1; i >= 0 && n < len; i--)
		n += snprintf(buf + n, len - n, "/%.*s", FS_NAME_LEN, e->names[i]);
	return buf;
}

/* ---- output -------------------------------------------------------------------------- */

static void print_header(void)
{
	if (env.out == OUT_CSV) {
		printf("time,comm,pid,tid,op,bytes,offset,lat_us,errno,sync,file\n");
	} else if (env.out == OUT_TEXT) {
		printf("%-8s %-16s %-7s ", "TIME", "COMM", "PID");
		if (env.show_tid)
			printf("%-7s ", "TID");
		printf("%1s %-7s %-8s %8s %s\n", "T", "BYTES", "OFF_KB", "LAT(ms)", "FILENAME");
	}
	fflush(stdout);
}

static void csv_quoted(const char *s)
{
	if (!strpbrk(s, ",\"\n")) {
		fputs(s, stdout);
		return;
	}
	putchar('"');
	for (; *s; s++) {
		if (*s == '"')
			putchar('"');
		putchar(*s);
	}
	putchar('"');
}

static const char *sync_kind(const struct fs_event *e)
{
	if (e->op != FS_OP_FSYNC)
		return "";
	if (e->flags & FS_EV_NESTED)
		return e->flags & FS_EV_DATASYNC ? "o_dsync" : "o_sync";
	return e->flags & FS_EV_DATASYNC ? "fdatasync" : "fsync";
}

/* Wall-clock "HH:MM:SS" of a bpf_ktime_get_ns() timestamp (CLOCK_MONOTONIC, ns): the time
 * the call returned, not the time its row is printed. Formatted once per second. */
static void event_clock(__u64 mono_ns, char *buf, size_t len)
{
	static long long offset_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC */
	static time_t last = -1;
	static char cached[16];
	struct timespec rt;
	struct tm tm;
	time_t t;

	if (!offset_ns) {
		clock_gettime(CLOCK_REALTIME, &rt);
		offset_ns = rt.tv_sec * 1000000000LL + rt.tv_nsec - (long long)il_now_ns();
	}
	t = (time_t)(((long long)mono_ns + offset_ns) / 1000000000LL);
	if (t != last) {
		localtime_r(&t, &tm);
		strftime(cached, sizeof(cached), "%H:%M:%S", &tm);
		last = t;
	}
	snprintf(buf, len, "%s", cached);
}

/* A JSON number with 3 decimals (microseconds to the ns), without binary-float noise. */
static struct json_object *json_usecs(double usecs)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%.3f", usecs);
	return json_object_new_double_s(usecs, buf);
}

static int handle_event(void *ctx, void *data, size_t size)
{
	const struct fs_event *e = data;
	char ts[16], path[FS_PATH_DEPTH * FS_NAME_LEN + 1024], comm[IL_TASK_COMM_LEN + 1];
	char bytes[32];

	if (size < sizeof(*e))
		return 0;
	event_clock(e->end_ns, ts, sizeof(ts));
	event_path(e, path, sizeof(path));
	memcpy(comm, e->comm, IL_TASK_COMM_LEN);
	comm[IL_TASK_COMM_LEN] = 0;
	if (e->ret < 0)
		snprintf(bytes, sizeof(bytes), "%s", il_errno_name((int)-e->ret));
	else
		snprintf(bytes, sizeof(bytes), "%lld", (long long)e->ret);

	switch (env.out) {
	case OUT_TEXT:
		printf("%-8s %-16s %-7u ", ts, comm, e->tgid);
		if (env.show_tid)
			printf("%-7u ", e->tid);
		printf("%c %-7s %-8lld %8.2f %s\n", op_letter[e->op % FS_OP__MAX], bytes,
		       (long long)(e->offset / 1024), e->delta_ns / 1e6, path);
		break;
	case OUT_CSV:
		printf("%s,", ts);
		csv_quoted(comm);
		printf(",%u,%u,%c,%lld,%lld,%.3f,%s,%s,", e->tgid, e->tid, op_letter[e->op % FS_OP__MAX],
		       e->ret < 0 ? 0LL : (long long)e->ret, (long long)e->offset, e->delta_ns / 1e3,
		       e->ret < 0 ? il_errno_name((int)-e->ret) : "", sync_kind(e));
		csv_quoted(path);
		putchar('\n');
		break;
	case OUT_JSON: {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "time", json_object_new_string(ts));
		json_object_object_add(o, "comm", json_object_new_string(comm));
		json_object_object_add(o, "pid", json_object_new_int(e->tgid));
		json_object_object_add(o, "tid", json_object_new_int(e->tid));
		json_object_object_add(o, "op", json_object_new_string((char[]){ op_letter[e->op % FS_OP__MAX], 0 }));
		json_object_object_add(o, "bytes", json_object_new_int64(e->ret < 0 ? 0 : e->ret));
		json_object_object_add(o, "size", json_object_new_uint64(e->size));
		json_object_object_add(o, "offset", json_object_new_int64(e->offset));
		json_object_object_add(o, "usecs", json_usecs(e->delta_ns / 1e3));
		json_object_object_add(o, "errno", e->ret < 0 ?
				       json_object_new_string(il_errno_name((int)-e->ret)) : NULL);
		if (e->op == FS_OP_FSYNC)
			json_object_object_add(o, "sync", json_object_new_string(sync_kind(e)));
		snprintf(bytes, sizeof(bytes), "%u:%u", IL_DEV_MAJOR(e->dev), IL_DEV_MINOR(e->dev));
		json_object_object_add(o, "dev", json_object_new_string(bytes));
		json_object_object_add(o, "ino", json_object_new_uint64(e->ino));
		json_object_object_add(o, "file", json_object_new_string(path));
		il_json_print(stdout, o);
		break;
	}
	}
	return 0;
}

static int drain(void *rb)
{
	ring_buffer__consume(rb);
	return 0;
}

/* ---- summary ------------------------------------------------------------------------ */

/* Calls whose start is still recorded though their thread has exited: their return was
 * missed (see fs_begin in fs.bpf.h). */
static __u64 orphan_starts(int map_fd)
{
	struct { __u32 tid, op; } key, next;
	void *prev = NULL;
	__u64 n = 0;
	char path[32];

	while (!bpf_map_get_next_key(map_fd, prev, &next)) {
		snprintf(path, sizeof(path), "/proc/%u", next.tid);
		if (access(path, F_OK))
			n++;
		key = next;
		prev = &key;
	}
	return n;
}

/* "lo-hi" in ms of the histogram bucket holding the pct-th percentile. */
static const char *pct_ms(const struct fs_op_stats *s, double pct, char *buf, size_t len)
{
	int slot = il_hist_percentile_slot(s->slots, IL_HIST_SLOTS, pct);
	__u64 lo, hi;

	if (slot < 0)
		return "-";
	il_slot_bounds(slot, &lo, &hi);
	snprintf(buf, len, "%.3f-%.3f", lo / 1e6, (hi + 1) / 1e6);
	return buf;
}

static void print_summary(const struct fs_op_stats st[FS_OP__MAX], const __u64 drops[IL_DROP__MAX])
{
	FILE *f = env.out == OUT_CSV ? stderr : stdout;
	char p50[48], p99[48];

	if (env.out == OUT_JSON) {
		struct json_object *o = json_object_new_object(), *ops = json_object_new_object();

		for (int i = 0; i < FS_OP__MAX; i++) {
			struct json_object *x = json_object_new_object();

			json_object_object_add(x, "count", json_object_new_uint64(st[i].count));
			json_object_object_add(x, "slow", json_object_new_uint64(st[i].slow));
			json_object_object_add(x, "total_usecs", json_usecs(st[i].total_ns / 1e3));
			json_object_object_add(x, "max_usecs", json_usecs(st[i].max_ns / 1e3));
			json_object_object_add(x, "latency_ns", il_hist_json(st[i].slots, IL_HIST_SLOTS, "nsecs"));
			json_object_object_add(ops, op_key[i], x);
		}
		json_object_object_add(o, "summary", ops);
		json_object_object_add(o, "threshold_ms", json_object_new_uint64(env.min_ms));
		json_object_object_add(o, "lost", il_drops_json(drops));
		il_json_print(stdout, o);
		return;
	}
	fprintf(f, "\nSummary of every traced call (rows above: %llu ms or slower):\n", env.min_ms);
	fprintf(f, "%-2s %9s %9s %12s %17s %17s %10s\n", "T", "COUNT", "SLOW", "TOTAL(ms)",
		"P50(ms)", "P99(ms)", "MAX(ms)");
	for (int i = 0; i < FS_OP__MAX; i++)
		fprintf(f, "%-2c %9llu %9llu %12.2f %17s %17s %10.2f\n", op_letter[i],
			(unsigned long long)st[i].count, (unsigned long long)st[i].slow,
			st[i].total_ns / 1e6, pct_ms(&st[i], 50, p50, sizeof(p50)),
			pct_ms(&st[i], 99, p99, sizeof(p99)), st[i].max_ns / 1e6);
	fprintf(f, "(percentiles are the log2 bucket that holds them)\n");
	il_drops_print(f, drops);
}

/* ---- filesystems and attach plans ----------------------------------------------------- */

/* Decide which filesystems to trace from -t, -f and what is mounted; exit with one line
 * when there is nothing to trace. */
static void choose_filesystems(struct fsslower_bpf *skel)
{
	if (env.file) {
		struct statfs sfs;
		struct stat st;
		int t = -1;

		if (stat(env.file, &st) || statfs(env.file, &sfs))
			il_die("cannot read %s: %s", env.file, strerror(errno));
		for (int i = 0; i < FS_TYPE__MAX; i++)
			if ((unsigned long long)(unsigned long)sfs.f_type == il_fs_table[i].magic)
				t = i;
		if (t < 0)
			il_die("%s is not on an ext4, xfs or btrfs filesystem (filesystem magic 0x%lx)",
			       env.file, (unsigned long)sfs.f_type);
		if (env.fs_given && !env.fs_wanted[t])
			il_die("%s is on %s, which -t leaves out", env.file, il_fs_table[t].name);
		memset(env.fs_wanted, 0, sizeof(env.fs_wanted));
		env.fs_wanted[t] = true;
		if (sb_dev_of(env.file, &skel->rodata->fs_targ_dev))
			skel->rodata->fs_targ_dev = IL_MKDEV(major(st.st_dev), minor(st.st_dev));
		skel->rodata->fs_targ_ino = st.st_ino;
		return;
	}
	if (env.fs_given) {
		for (int i = 0; i < FS_TYPE__MAX; i++)
			if (env.fs_wanted[i] && !il_fs_mounted(il_fs_table[i].name))
				il_die("no %s filesystem is mounted: nothing to trace", il_fs_table[i].name);
		return;
	}
	for (int i = 0; i < FS_TYPE__MAX; i++)
		env.fs_wanted[i] = il_fs_mounted(il_fs_table[i].name);
	for (int i = 0; i < FS_TYPE__MAX; i++)
		if (env.fs_wanted[i])
			return;
	il_die("no ext4, xfs or btrfs filesystem is mounted: nothing to trace");
}

int main(int argc, char **argv)
{
	static const struct argp_child children[] = { { &il_common_argp, 0, NULL, 0 }, { 0 } };
	static const struct argp argp = { options, parse_arg, NULL, doc, children, NULL, NULL };
	struct il_plan plans[FS_TYPE__MAX];
	int plan_fs[FS_TYPE__MAX], nplans = 0, err, rc = IL_EXIT_ERR;
	struct fsslower_bpf *skel = NULL;
	struct ring_buffer *rb = NULL;
	struct fs_op_stats stats[FS_OP__MAX];
	__u64 drops[IL_DROP__MAX] = {};
	char names[64] = "";

	il_opts_init();
	il_log_init("fsslower", 0);
	argp_parse(&argp, argc, argv, 0, NULL, NULL);
	il_log_init("fsslower", il_opts.verbose);
	il_require_tracing();
	if (env.tgid)
		il_require_pid(env.tgid);
	if (env.tid)
		il_require_tid(env.tid, env.tgid);

	skel = fsslower_bpf__open();
	if (!skel)
		il_die("cannot open the BPF object: %s", strerror(errno));
	choose_filesystems(skel);
	skel->rodata->fs_targ_tgid = env.tgid;
	skel->rodata->fs_targ_tid = env.tid;
	skel->rodata->fs_self_tgid = getpid();
	skel->rodata->fs_min_ns = env.min_ms * 1000000ULL;

	/* Only the chosen plans' programs load: those of filesystems left out stay off. */
	il_autoload_none(skel->obj);
	for (int t = 0; t < FS_TYPE__MAX; t++) {
		if (!env.fs_wanted[t])
			continue;
		il_fs_plan(skel->obj, t, &plans[nplans]);
		plan_fs[nplans++] = t;
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
			 names[0] ? ", " : "", il_fs_table[t].name);
	}
	if (il_plans_choose(plans, nplans, il_opts.attach))
		goto out;
	for (int i = 0; i < nplans; i++)
		if (il_method_family(il_plan_method(&plans[i])) == IL_FAM_TRACEPOINT)
			skel->rodata->fs_sys_magic[plan_fs[i]] = il_fs_table[plan_fs[i]].magic;
	/* Every method counts sync_file_range at its syscall tracepoints (layers.h). */
	for (int i = 0; i < nplans; i++)
		skel->rodata->fs_sync_range_magic[plan_fs[i]] = il_fs_table[plan_fs[i]].magic;

	err = fsslower_bpf__load(skel);
	if (err) {
		il_err("cannot load the BPF programs: %s (run with -vv for the verifier log)",
		       strerror(-err));
		goto out;
	}
	if (il_plans_attach(plans, nplans))
		goto out;
	rb = ring_buffer__new(bpf_map__fd(skel->maps.fs_events), handle_event, NULL, NULL);
	if (!rb) {
		il_err("cannot open the ring buffer: %s", strerror(errno));
		goto out;
	}
	mounts_load();
	il_signals_init();
	print_header();
	if (env.min_ms)
		fprintf(stderr, "Tracing %s operations slower than %llu ms... Hit Ctrl-C to end.\n",
			names, env.min_ms);
	else
		fprintf(stderr, "Tracing every %s operation... Hit Ctrl-C to end.\n", names);

	/* The BPF side skips wakeups at high event rates; drain the rest every second. */
	struct il_run run = { .interval_s = 1, .tick = drain, .ctx = rb,
			      .duration_s = env.duration_s, .rb = rb };
	if (il_run(&run) < 0)
		goto out;
	err = il_fs_stats_read(bpf_map__fd(skel->maps.fs_stats), stats);
	if (!err)
		err = il_drops_read(bpf_map__fd(skel->maps.il_drops), drops);
	drops[IL_DROP_MISSED_RETURN] += orphan_starts(bpf_map__fd(skel->maps.fs_inflight));
	if (err) {
		il_err("cannot read the summary maps: %s", strerror(-err));
		goto out;
	}
	print_summary(stats, drops);
	fflush(stdout);
	rc = ferror(stdout) && errno != EPIPE ? IL_EXIT_ERR : IL_EXIT_OK;
out:
	ring_buffer__free(rb);
	il_plans_detach();
	fsslower_bpf__destroy(skel);
	return rc;
}
