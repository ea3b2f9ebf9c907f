/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "cgident.h"
#include "escape.h"
#include "layers/fs.h"
#include "lib/shared.h"
#include "prom.h"
#include "util.h"

void il_prom_init(struct il_prom *p, FILE *f, bool om)
{
	memset(p, 0, sizeof(*p));
	p->f = f;
	p->om = om;
}

/* The q of a media range whose parameters are params[0..n) (";q=0.5;version=..."): 1 when
 * not given. */
static double media_q(const char *params, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t j = i + 1;

		if (params[i] != ';')
			continue;
		while (j < n && isspace((unsigned char)params[j]))
			j++;
		if (j + 2 < n && (params[j] == 'q' || params[j] == 'Q') && params[j + 1] == '=')
			return strtod(params + j + 2, NULL);
	}
	return 1;
}

bool il_prom_wants_openmetrics(const char *accept)
{
	static const char om[] = "application/openmetrics-text", text[] = "text/plain";
	double q_om = -1, q_text = -1;
	const char *s = accept;

	while (s && *s) {
		size_t range = strcspn(s, ","), type, n;
		double q;

		while (range && isspace((unsigned char)*s))
			s++, range--;
		type = strcspn(s, ";,");
		for (n = type; n && isspace((unsigned char)s[n - 1]); n--)
			;
		q = media_q(s + type, range - type);
		if (n == sizeof(om) - 1 && !strncasecmp(s, om, n) && q > q_om)
			q_om = q;
		else if (n == sizeof(text) - 1 && !strncasecmp(s, text, n) && q > q_text)
			q_text = q;
		s += range;
		if (*s)
			s++;
	}
	return q_om > 0 && q_om >= q_text;
}

const char *il_prom_seconds(__u64 ns, char *buf, size_t len)
{
	size_t n;

	snprintf(buf, len, "%llu.%09llu", (unsigned long long)(ns / 1000000000ULL),
		 (unsigned long long)(ns % 1000000000ULL));
	n = strlen(buf);
	while (n && buf[n - 1] == '0')
		buf[--n] = '\0';
	if (n && buf[n - 1] == '.')
		buf[--n] = '\0';
	return buf;
}

/* Label value of name s (n bytes at most, see escape.h) as written, cut at max bytes
 * (<= IL_PROM_PATH_LABEL_MAX) in text form. */
static const char *label_value(const char *s, size_t n, size_t max, char *buf, size_t len)
{
	char text[IL_PROM_PATH_LABEL_MAX + 1];
	size_t o = 0;

	il_text_escape(s, n, text, max + 1);
	for (const char *c = text; *c && o + 3 <= len; c++) {
		/* il_text_escape() leaves no newline or other control byte */
		if (*c == '\\' || *c == '"')
			buf[o++] = '\\';
		buf[o++] = *c;
	}
	if (len)
		buf[o < len ? o : len - 1] = '\0';
	return buf;
}

const char *il_prom_label_value(const char *s, char *buf, size_t len)
{
	return label_value(s, strlen(s), IL_PROM_LABEL_MAX, buf, len);
}

/* The cut of label name's values. */
static size_t label_max(const char *name)
{
	return !strcmp(name, "path") || !strcmp(name, "cgroup") ? IL_PROM_PATH_LABEL_MAX : IL_PROM_LABEL_MAX;
}

/* TYPE names (OpenMetrics; 0.0.4 has no info type). */
static const char *const type_names[] = {
	[IL_PROM_COUNTER] = "counter", [IL_PROM_GAUGE] = "gauge", [IL_PROM_HISTOGRAM] = "histogram",
	[IL_PROM_SUMMARY] = "summary", [IL_PROM_INFO] = "info",
};

void il_prom_family(struct il_prom *p, const char *name, enum il_prom_type type,
		    const char *unit, const char *help)
{
	const char *suffix = "", *tname = type_names[type];

	snprintf(p->family, sizeof(p->family), "%s", name);
	p->type = type;
	if (!p->om) {
		/* 0.0.4 names the sample: counters by their _total, info as a gauge */
		if (type == IL_PROM_COUNTER)
			suffix = "_total";
		else if (type == IL_PROM_INFO)
			suffix = "_info", tname = "gauge";
	}
	fprintf(p->f, "# HELP %s%s %s\n", name, suffix, help);
	fprintf(p->f, "# TYPE %s%s %s\n", name, suffix, tname);
	if (p->om && unit)
		fprintf(p->f, "# UNIT %s %s\n", name, unit);
}

/* One sample: family + suffix, labels already written (pre, when not NULL or ""), the labels
 * (and le when not NULL), the value. */
static void sample_pre(struct il_prom *p, const char *suffix, const char *pre, const char *const *labels,
		       const char *le, const char *value)
{
	char v[2 * IL_PROM_PATH_LABEL_MAX + 1];
	const char *sep = "{";

	fprintf(p->f, "%s%s", p->family, suffix);
	if (pre && *pre)
		fprintf(p->f, "{%s", pre), sep = ",";
	for (int i = 0; labels && labels[i] && labels[i + 1]; i += 2) {
		fprintf(p->f, "%s%s=\"%s\"", sep, labels[i],
			label_value(labels[i + 1], strlen(labels[i + 1]), label_max(labels[i]), v, sizeof(v)));
		sep = ",";
	}
	if (le)
		fprintf(p->f, "%sle=\"%s\"", sep, le), sep = ",";
	fprintf(p->f, "%s %s\n", *sep == ',' ? "}" : "", value);
}

static void sample(struct il_prom *p, const char *suffix, const char *const *labels,
		   const char *le, const char *value)
{
	sample_pre(p, suffix, NULL, labels, le, value);
}

static const char *u64_str(__u64 v, char *buf, size_t len)
{
	snprintf(buf, len, "%llu", (unsigned long long)v);
	return buf;
}

void il_prom_value(struct il_prom *p, const char *const *labels, __u64 v)
{
	const char *suffix = p->type == IL_PROM_COUNTER ? "_total" : p->type == IL_PROM_INFO ? "_info" : "";
	char n[24];

	sample(p, suffix, labels, NULL, u64_str(p->type == IL_PROM_INFO ? 1 : v, n, sizeof(n)));
}

void il_prom_gauge(struct il_prom *p, const char *const *labels, double v)
{
	char n[32];

	snprintf(n, sizeof(n), "%.4f", v);
	sample(p, "", labels, NULL, n);
}

void il_prom_hist(struct il_prom *p, const char *const *labels, const __u64 *slots, __u64 sum_ns)
{
	char n[24], le[32];
	__u64 cum = 0;

	for (int s = 0; s < IL_HIST_SLOTS; s++) {
		cum += slots[s];
		if (s < IL_PROM_FIRST_SLOT || s > IL_PROM_LAST_SLOT)
			continue;
		il_prom_seconds((2ULL << s) - 1, le, sizeof(le));
		sample(p, "_bucket", labels, le, u64_str(cum, n, sizeof(n)));
	}
	sample(p, "_bucket", labels, "+Inf", u64_str(cum, n, sizeof(n)));
	sample(p, "_sum", labels, NULL, il_prom_seconds(sum_ns, le, sizeof(le)));
	sample(p, "_count", labels, NULL, u64_str(cum, n, sizeof(n)));
}

void il_prom_summary(struct il_prom *p, const char *const *labels, __u64 count, __u64 sum_ns)
{
	char n[32];

	sample(p, "_sum", labels, NULL, il_prom_seconds(sum_ns, n, sizeof(n)));
	sample(p, "_count", labels, NULL, u64_str(count, n, sizeof(n)));
}

/* ---- the top processes and files ------------------------------------------------------- */

struct il_prom_top_row {
	__u64 id[2];                 /* the process (pid, 0) or the file (dev, inode) */
	__u64 v[IL_PROM_TOP_VALS];   /* its counts since start: the table's columns */
	double score;                /* its time in ns, each ns halved every IL_PROM_TOP_HALF_LIFE_S */
	int order;                   /* its place in the view */
	char *labels;                /* in a series of its own: its labels as written; else NULL */
};

/* The columns of the process and file tables. */
enum { P_FS_NS = 0, P_FS_OPS = FS_OP__MAX, P_IOWAIT_NS = 2 * FS_OP__MAX, P_READ, P_WRITE,
       P_DISK_READ, P_DISK_WRITE, P__MAX };
enum { F_FS_NS, F_FSYNCS, F_SYNC_RANGES, F_READ, F_WRITE, F_DISK_READ, F_DISK_WRITE, F__MAX };
_Static_assert(P__MAX <= IL_PROM_TOP_VALS && F__MAX <= IL_PROM_TOP_VALS, "IL_PROM_TOP_VALS");

/* A family of a table: columns first .. first + n - 1, told apart by label (NULL: n is 1). */
struct top_family {
	const char *name, *unit, *help, *label;
	const char *const *values;   /* label's value for each column */
	int first, n;
	bool seconds;                /* ns, written as seconds */
};

struct top_table {
	const struct top_family *fams;
	int nfams;
	const int *time;             /* the columns that rank a row */
	int ntime;
	const char *other;           /* the labels of the "other" series, as written */
	int (*rows)(const struct il_who_view *v, struct il_prom_top_row *r); /* r: as many as v has */
	char *(*labels)(const struct il_who_view *v, int order); /* malloc'ed, NULL: out of memory */
};

static const char *const dirs[] = { "read", "write" };

static const struct top_family proc_fams[] = {
	{ "iolayer_process_fs_seconds", "seconds", "Time the top processes spent in file operations "
	  "(syscall/VFS, entry to return), by operation; the others add up in pid=\"other\".",
	  "op", il_fs_op_names, P_FS_NS, FS_OP__MAX, true },
	{ "iolayer_process_fs_ops", NULL, "File operations the top processes completed, by operation; "
	  "the others add up in pid=\"other\".", "op", il_fs_op_names, P_FS_OPS, FS_OP__MAX, false },
	{ "iolayer_process_iowait_seconds", "seconds", "Time the top processes slept in I/O wait "
	  "(io_schedule); the others add up in pid=\"other\".", NULL, NULL, P_IOWAIT_NS, 1, true },
	{ "iolayer_process_fs_bytes", "bytes", "Bytes the top processes read and wrote through file "
	  "operations; the others add up in pid=\"other\".", "dir", dirs, P_READ, 2, false },
	{ "iolayer_process_disk_bytes", "bytes", "Bytes of the block I/O the top processes submitted, "
	  "to every disk; the others add up in pid=\"other\".", "dir", dirs, P_DISK_READ, 2, false },
};

static const struct top_family file_fams[] = {
	{ "iolayer_file_fs_seconds", "seconds", "Time spent in file operations on the top files; "
	  "the others add up in path=\"other\".", NULL, NULL, F_FS_NS, 1, true },
	{ "iolayer_file_fsyncs", NULL, "fsync and fdatasync calls on the top files (io_uring's "
	  "included; not the syncs inside O_SYNC writes); the others add up in path=\"other\".",
	  NULL, NULL, F_FSYNCS, 1, false },
	{ "iolayer_file_sync_ranges", NULL, "sync_file_range calls on the top files (they start or "
	  "wait for writeback, and make nothing durable: not fsyncs); the others add up in "
	  "path=\"other\".", NULL, NULL, F_SYNC_RANGES, 1, false },
	{ "iolayer_file_fs_bytes", "bytes", "Bytes read from and written to the top files through "
	  "file operations; the others add up in path=\"other\".", "dir", dirs, F_READ, 2, false },
	{ "iolayer_file_disk_bytes", "bytes", "Bytes of the top files' pages read from and written to "
	  "disk, by any process or kernel thread (writeback included); the others add up in "
	  "path=\"other\".", "dir", dirs, F_DISK_READ, 2, false },
};

static int proc_rows(const struct il_who_view *v, struct il_prom_top_row *r)
{
	for (int i = 0; i < v->nprocs; i++) {
		const struct il_who_sum *p = &v->procs[i];

		r[i].id[0] = p->pid;
		r[i].order = i;
		for (int o = 0; o < FS_OP__MAX; o++) {
			r[i].v[P_FS_NS + o] = p->op_ns[o];
			r[i].v[P_FS_OPS + o] = p->op_count[o];
		}
		r[i].v[P_IOWAIT_NS] = p->iowait_ns;
		r[i].v[P_READ] = p->read_bytes;
		r[i].v[P_WRITE] = p->write_bytes;
		r[i].v[P_DISK_READ] = p->bio_bytes > p->bio_write_bytes ? p->bio_bytes - p->bio_write_bytes : 0;
		r[i].v[P_DISK_WRITE] = p->bio_write_bytes;
	}
	return v->nprocs;
}

static int file_rows(const struct il_who_view *v, struct il_prom_top_row *r)
{
	for (int i = 0; i < v->nfiles; i++) {
		const struct il_who_file_sum *f = &v->files[i];

		r[i].id[0] = f->k.dev;
		r[i].id[1] = f->k.ino;
		r[i].order = i;
		r[i].v[F_FS_NS] = f->op_ns;
		r[i].v[F_FSYNCS] = f->fsyncs;
		r[i].v[F_SYNC_RANGES] = f->sync_ranges;
		r[i].v[F_READ] = f->read_bytes;
		r[i].v[F_WRITE] = f->write_bytes;
		r[i].v[F_DISK_READ] = f->bio_read_bytes;
		r[i].v[F_DISK_WRITE] = f->bio_write_bytes;
	}
	return v->nfiles;
}

static char *proc_labels(const struct il_who_view *v, int i)
{
	const struct il_who_sum *p = &v->procs[i];
	char comm[2 * IL_PROM_LABEL_MAX + 1], cg[2 * IL_PROM_PATH_LABEL_MAX + 1], *s;
	char unit[2 * IL_PROM_LABEL_MAX + 1];
	struct il_cgident id;

	/* container_id, pod_uid, unit: bounded as the process series are (cgident.h) */
	il_cgident_parse(p->cgroup, &id);
	if (asprintf(&s, "pid=\"%u\",comm=\"%s\",cgroup=\"%s\",container_id=\"%s\",pod_uid=\"%s\",unit=\"%s\"",
		     p->pid, label_value(p->comm, sizeof(p->comm), label_max("comm"), comm, sizeof(comm)),
		     label_value(p->cgroup, sizeof(p->cgroup), label_max("cgroup"), cg, sizeof(cg)),
		     id.container_id, id.pod_uid,
		     label_value(id.unit, sizeof(id.unit), label_max("unit"), unit, sizeof(unit))) < 0)
		return NULL;
	return s;
}

static char *file_labels(const struct il_who_view *v, int i)
{
	const struct il_who_file_sum *f = &v->files[i];
	char path[2 * IL_PROM_PATH_LABEL_MAX + 1], *s;

	if (asprintf(&s, "path=\"%s\"", label_value(f->path, sizeof(f->path), label_max("path"), path,
							  sizeof(path))) < 0)
		return NULL;
	return s;
}

static const int proc_time[] = { P_FS_NS, P_FS_NS + 1, P_FS_NS + 2, P_FS_NS + 3, P_FS_NS + 4, P_IOWAIT_NS };
static const int file_time[] = { F_FS_NS };
_Static_assert(FS_OP__MAX == 5, "proc_time");

static const struct top_table proc_table = {
	proc_fams, IL_ARRAY_SIZE(proc_fams), proc_time, IL_ARRAY_SIZE(proc_time),
	"pid=\"other\",comm=\"other\",cgroup=\"other\",container_id=\"other\",pod_uid=\"other\",unit=\"other\"",
	proc_rows, proc_labels,
};

static const struct top_table file_table = {
	file_fams, IL_ARRAY_SIZE(file_fams), file_time, IL_ARRAY_SIZE(file_time),
	"path=\"other\"", file_rows, file_labels,
};

static int cmp_id(const void *a, const void *b)
{
	const struct il_prom_top_row *x = a, *y = b;

	for (int i = 0; i < 2; i++)
		if (x->id[i] != y->id[i])
			return x->id[i] < y->id[i] ? -1 : 1;
	return 0;
}

/* Most time first; ties in the view's order. */
static int cmp_rank(const void *a, const void *b)
{
	const struct il_prom_top_row *x = *(const struct il_prom_top_row *const *)a;
	const struct il_prom_top_row *y = *(const struct il_prom_top_row *const *)b;

	if (x->score != y->score)
		return x->score < y->score ? 1 : -1;
	return x->order - y->order;
}

static void rows_free(struct il_prom_top_row *r, int n)
{
	for (int i = 0; i < n; i++)
		free(r[i].labels);
	free(r);
}

/* One table: rank its rows, add to "other", write its families, keep its rows for the next
 * time. Out of memory: its families are left out this time. */
static void top_table(struct il_prom *p, const struct il_prom_top *t, struct il_prom_top_table *tb,
		      const struct top_table *k, const struct il_who_view *v, int nview, double decay)
{
	struct il_prom_top_row *cur = calloc(nview + 1, sizeof(*cur)), **rank = calloc(nview + 1, sizeof(*rank));
	struct il_prom_top_row **prev = calloc(nview + 1, sizeof(*prev));
	__u64 (*d)[IL_PROM_TOP_VALS] = calloc(nview + 1, sizeof(*d));
	int n = 0, shown = 0;
	char num[32];

	if (!cur || !rank || !prev || !d) {
		free(cur);
		goto out;
	}
	n = k->rows(v, cur);
	qsort(cur, n, sizeof(*cur), cmp_id);
	for (int i = 0; i < n; i++) {
		struct il_prom_top_row *r = &cur[i];
		double w = 0;

		prev[i] = tb->nrows ? bsearch(r, tb->rows, tb->nrows, sizeof(*r), cmp_id) : NULL;
		/* a count below the last one: the entry was evicted and has begun again */
		for (int j = 0; j < IL_PROM_TOP_VALS; j++)
			d[i][j] = prev[i] && r->v[j] >= prev[i]->v[j] ? r->v[j] - prev[i]->v[j] : r->v[j];
		for (int j = 0; j < k->ntime; j++)
			w += d[i][k->time[j]];
		r->score = (prev[i] ? prev[i]->score * decay : 0) + w;
		rank[i] = r;
	}
	qsort(rank, n, sizeof(*rank), cmp_rank);
	for (int i = 0; i < n && shown < t->n; i++) {
		char *l = k->labels(v, rank[i]->order);
		bool dup = !l;

		for (int j = 0; j < i && !dup; j++)
			dup = rank[j]->labels && !strcmp(rank[j]->labels, l);
		if (dup) {
			free(l);
			continue;
		}
		rank[i]->labels = l;
		shown++;
	}
	/* "other" takes what happened outside the series that were there, with the same labels,
	 * at both expositions (at the first one, every series is there from the start) */
	for (int i = 0; i < n; i++) {
		const struct il_prom_top_row *r = &cur[i], *o = prev[i];

		if (r->labels && (!t->started || (o && o->labels && !strcmp(o->labels, r->labels))))
			continue;
		for (int j = 0; j < IL_PROM_TOP_VALS; j++)
			tb->other[j] += d[i][j];
	}
	for (int f = 0; f < k->nfams; f++) {
		const struct top_family *fam = &k->fams[f];

		il_prom_family(p, fam->name, IL_PROM_COUNTER, fam->unit, fam->help);
		for (int i = 0; i <= n; i++) {
			const char *pre = i < n ? rank[i]->labels : k->other;
			const __u64 *val = i < n ? rank[i]->v : tb->other;

			for (int c = 0; pre && c < fam->n; c++) {
				__u64 x = val[fam->first + c];

				sample_pre(p, "_total", pre, fam->label ? (const char *[]){ fam->label, fam->values[c], NULL } : NULL,
					   NULL, fam->seconds ? il_prom_seconds(x, num, sizeof(num)) : u64_str(x, num, sizeof(num)));
			}
		}
	}
	/* a series of the last exposition that is not there now (same id, same labels) stopped */
	for (int i = 0; i < tb->nrows; i++) {
		const struct il_prom_top_row *o = &tb->rows[i], *r;

		if (o->labels && (!(r = bsearch(o, cur, n, sizeof(*cur), cmp_id)) || !r->labels ||
				  strcmp(r->labels, o->labels)))
			tb->evicted++;
	}
	rows_free(tb->rows, tb->nrows);
	tb->rows = cur;
	tb->nrows = n;
out:
	free(rank);
	free(prev);
	free(d);
}

void il_prom_top_init(struct il_prom_top *t, int n)
{
	memset(t, 0, sizeof(*t));
	t->n = n;
}

void il_prom_top_free(struct il_prom_top *t)
{
	rows_free(t->procs.rows, t->procs.nrows);
	rows_free(t->files.rows, t->files.nrows);
	memset(t, 0, sizeof(*t));
}

void il_prom_who(struct il_prom *p, struct il_prom_top *t, const struct il_who_view *v,
		 unsigned long long now_ns)
{
	double decay = 1;

	if (t->started && now_ns > t->t_ns)
		decay = exp2(-(double)(now_ns - t->t_ns) / 1e9 / IL_PROM_TOP_HALF_LIFE_S);
	top_table(p, t, &t->procs, &proc_table, v, v->nprocs, decay);
	top_table(p, t, &t->files, &file_table, v, v->nfiles, decay);
	il_prom_family(p, "iolayer_top_series_evicted", IL_PROM_COUNTER, NULL, "Series of their own "
		       "of the top processes (table=\"process\") and files (table=\"file\") that stopped "
		       "since start: the process or file lost its place to busier ones, or went away; "
		       "what it does later adds up in \"other\". The series stay bounded by --top.");
	il_prom_value(p, (const char *[]){ "table", "process", NULL }, t->procs.evicted);
	il_prom_value(p, (const char *[]){ "table", "file", NULL }, t->files.evicted);
	t->started = true;
	t->t_ns = now_ns;
}

int il_prom_finish(struct il_prom *p)
{
	if (p->om)
		fputs("# EOF\n", p->f);
	return ferror(p->f) ? -1 : 0;
}
