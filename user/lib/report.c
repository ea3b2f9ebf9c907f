/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* iolayer --html: heat maps over time and the self-contained page (see report.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "layers/fs.h"
#include "measure.h"
#include "report.h"
#include "util.h"

/* The page's files, embedded at build time (the Makefile makes report.o depend on them). */
#define IL_EMBED(sym, file)                                                                   \
	__asm__(".pushsection .rodata\n.global " #sym "\n" #sym ":\n.incbin \"" file "\"\n"  \
		".global " #sym "_end\n" #sym "_end:\n.byte 0\n.popsection\n")
IL_EMBED(il_report_page, "user/lib/report/report.html");
IL_EMBED(il_report_css, "user/lib/report/report.css");
IL_EMBED(il_report_js, "user/lib/report/report.js");
extern const char il_report_page[], il_report_page_end[], il_report_css[], il_report_css_end[],
	il_report_js[], il_report_js_end[];

/* ---- heat maps ------------------------------------------------------------------------------ */

/* A non-empty cell: a count in one slot of one column. */
struct cell {
	__u32 col, slot;
	__u64 n;
};

/* One layer's histogram over time (on one disk for the block layer's). */
struct series {
	char key[40];
	__u32 dev;
	__u64 last[IL_HIST_SLOTS];      /* the cumulative histogram of the last snapshot */
	struct cell *cells;
	size_t ncells, cap;
};

struct il_heat {
	double *t;                      /* each column's end, s */
	int ncols;
	struct series *s;
	int ns;
};

struct il_heat *il_heat_new(void)
{
	return calloc(1, sizeof(struct il_heat));
}

void il_heat_free(struct il_heat *h)
{
	for (int i = 0; h && i < h->ns; i++)
		free(h->s[i].cells);
	if (h) {
		free(h->s);
		free(h->t);
	}
	free(h);
}

static struct series *series_get(struct il_heat *h, const char *key, __u32 dev)
{
	struct series *n;

	for (int i = 0; i < h->ns; i++)
		if (h->s[i].dev == dev && !strcmp(h->s[i].key, key))
			return &h->s[i];
	if (!(n = realloc(h->s, (h->ns + 1) * sizeof(*n))))
		return NULL;
	h->s = n;
	n = &h->s[h->ns++];
	memset(n, 0, sizeof(*n));
	snprintf(n->key, sizeof(n->key), "%s", key);
	n->dev = dev;
	return n;
}

static int cell_add(struct series *s, __u32 col, __u32 slot, __u64 n)
{
	void *v = s->cells;
	int err = il_grow(&v, &s->cap, s->ncells, sizeof(*s->cells));

	s->cells = v;
	if (!err)
		s->cells[s->ncells++] = (struct cell){ col, slot, n };
	return err;
}

/* The growth of cumulative histogram now since the series' last into the current column. */
static int grow(struct il_heat *h, const char *key, __u32 dev, const __u64 *now)
{
	struct series *s;
	bool any = false;

	for (int i = 0; i < IL_HIST_SLOTS && !any; i++)
		any = now[i];
	if (!any)
		return 0;
	if (!(s = series_get(h, key, dev)))
		return -ENOMEM;
	for (int i = 0; i < IL_HIST_SLOTS; i++) {
		/* a smaller count cannot happen (the maps only grow): counted from zero then */
		__u64 d = now[i] >= s->last[i] ? now[i] - s->last[i] : now[i];

		s->last[i] = now[i];
		if (d && cell_add(s, h->ncols - 1, i, d))
			return -ENOMEM;
	}
	return 0;
}

static int column(struct il_heat *h, double t_s)
{
	double *t;

	if (h->ncols && h->t[h->ncols - 1] == t_s)
		return 0;
	if (!(t = realloc(h->t, (h->ncols + 1) * sizeof(*t))))
		return -ENOMEM;
	h->t = t;
	h->t[h->ncols++] = t_s;
	return 0;
}

/* The block phases a heat map shows, with their keys in iolayer --json. */
static const struct { int ph; const char *key; } heat_phases[] = {
	{ BLK_PH_BEFORE_Q, "block_phases.before_q" },
	{ BLK_PH_Q2G, "block_phases.q2g" },
	{ BLK_PH_G2I, "block_phases.g2i" },
};

int il_heat_add(struct il_heat *h, const struct il_snap *now, double t_s)
{
	char key[40];
	int err = column(h, t_s);

	for (int op = 0; !err && op < FS_OP__MAX; op++) {
		snprintf(key, sizeof(key), "syscall.%s", il_fs_op_names[op]);
		err = grow(h, key, 0, now->fs[op].slots);
	}
	if (!err)
		err = grow(h, "iowait", 0, now->iw_slots);
	for (int i = 0; !err && i < now->ndisk; i++) {
		const struct blk_disk_stats *st = &now->disk[i].st;
		__u32 dev = now->disk[i].dev;

		if (!dev) /* requests with no disk (the flush machinery) */
			continue;
		for (size_t p = 0; !err && p < sizeof(heat_phases) / sizeof(heat_phases[0]); p++)
			err = grow(h, heat_phases[p].key, dev, st->phases.ph[heat_phases[p].ph].slots);
		if (!err)
			err = grow(h, "queue", dev, st->queue_slots);
		if (!err)
			err = grow(h, "device", dev, st->device_slots);
	}
	return err;
}

int il_heat_add_cells(struct il_heat *h, const char *key, const __u64 *cells, double t_s)
{
	struct series *s;
	int err = column(h, t_s);

	if (err || !(s = series_get(h, key, 0)))
		return -ENOMEM;
	for (int i = 0; i < IL_HIST_SLOTS; i++)
		if (cells[i] && cell_add(s, h->ncols - 1, i, cells[i]))
			return -ENOMEM;
	return 0;
}

static struct json_object *layer_json(const struct il_heat *h, const char *key, const char *name,
				      __u32 dev, bool traced)
{
	struct json_object *o = json_object_new_object(), *c = json_object_new_array();

	json_object_object_add(o, "key", json_object_new_string(key));
	json_object_object_add(o, "name", json_object_new_string(name));
	json_object_object_add(o, "traced", json_object_new_boolean(traced));
	for (int i = 0; i < h->ns; i++) {
		const struct series *s = &h->s[i];

		if (s->dev != dev || strcmp(s->key, key))
			continue;
		for (size_t k = 0; k < s->ncells; k++) {
			struct json_object *t = json_object_new_array_ext(3);

			json_object_array_add(t, json_object_new_int(s->cells[k].col));
			json_object_array_add(t, json_object_new_int(s->cells[k].slot));
			json_object_array_add(t, json_object_new_uint64(s->cells[k].n));
			json_object_array_add(c, t);
		}
	}
	json_object_object_add(o, "cells", c);
	return o;
}

struct json_object *il_heat_json(const struct il_heat *h, __u32 dev, bool fs, bool iw, bool blk)
{
	static const char *const blk_names[] = { "block: before Q (held)", "block: Q2G (getting a request)",
						 "block: G2I (plug)" };
	struct json_object *o = json_object_new_object(), *t = json_object_new_array(),
			   *l = json_object_new_array();
	char key[40], name[64];

	if (!o || !t || !l) {
		json_object_put(o);
		json_object_put(t);
		json_object_put(l);
		return NULL;
	}
	for (int i = 0; i < h->ncols; i++)
		json_object_array_add(t, il_json_seconds(h->t[i]));
	for (int op = 0; op < FS_OP__MAX; op++) {
		snprintf(key, sizeof(key), "syscall.%s", il_fs_op_names[op]);
		snprintf(name, sizeof(name), "syscall/VFS: %s", il_fs_op_names[op]);
		json_object_array_add(l, layer_json(h, key, name, 0, fs));
	}
	json_object_array_add(l, layer_json(h, "iowait", "I/O wait (sleeps)", 0, iw));
	for (size_t p = 0; p < sizeof(heat_phases) / sizeof(heat_phases[0]); p++)
		json_object_array_add(l, layer_json(h, heat_phases[p].key, blk_names[p], dev, blk));
	json_object_array_add(l, layer_json(h, "queue", "block queue (I2D)", dev, blk));
	json_object_array_add(l, layer_json(h, "device", "device (D2C)", dev, blk));
	json_object_object_add(o, "t", t);
	json_object_object_add(o, "layers", l);
	return o;
}

/* ---- the page ------------------------------------------------------------------------------- */

/* JSON text for inside a <script> element: every '<' as \u003c (only strings can hold one),
 * so no name can close the element or open a comment. */
static void put_script_json(FILE *f, const char *s)
{
	for (; *s; s++)
		if (*s == '<')
			fputs("\\u003c", f);
		else
			fputc(*s, f);
}

/* Write template [p, end) to f with each marker replaced by what it stands for. */
static void put_page(FILE *f, const char *p, const char *end, const char *json)
{
	static const char *const marks[] = { "/*@CSS@*/", "/*@JS@*/", "@DATA@" };

	while (p < end) {
		const char *at = NULL;
		int which = -1;

		for (int i = 0; i < 3; i++) {
			const char *m = memmem(p, end - p, marks[i], strlen(marks[i]));

			if (m && (!at || m < at)) {
				at = m;
				which = i;
			}
		}
		if (!at) {
			fwrite(p, 1, end - p, f);
			return;
		}
		fwrite(p, 1, at - p, f);
		if (which == 0)
			fwrite(il_report_css, 1, il_report_css_end - il_report_css, f);
		else if (which == 1)
			fwrite(il_report_js, 1, il_report_js_end - il_report_js, f);
		else
			put_script_json(f, json);
		p = at + strlen(marks[which]);
	}
}

int il_report_html(const char *path, struct json_object *data)
{
	FILE *f = fopen(path, "w");
	int err = 0;

	if (!f) {
		err = -errno;
		json_object_put(data);
		return err;
	}
	put_page(f, il_report_page, il_report_page_end,
		 json_object_to_json_string_ext(data, JSON_C_TO_STRING_PLAIN));
	json_object_put(data);
	if (ferror(f))
		err = -EIO;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}
