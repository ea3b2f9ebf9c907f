/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Flame graphs: a tree of frames, its SVG and its JSON (see flame.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "escape.h"
#include "flame.h"
#include "util.h"

/* A frame: its children are a linked list (kids, then each one's next), kept by name. */
struct node {
	char *name;
	__u64 value;
	int kids, next;                 /* indices into il_flame.v, -1: none */
};

struct il_flame {
	struct node *v;
	int n;
	size_t cap;
};

/* Room for one more node: pointers into f->v stay valid until the next call. 0, -ENOMEM. */
static int reserve(struct il_flame *f)
{
	void *v = f->v;
	int err = il_grow(&v, &f->cap, f->n, sizeof(*f->v));

	f->v = v;
	return err;
}

/* A new node named name (len bytes), with room reserved. Its index, or -ENOMEM. */
static int node_new(struct il_flame *f, const char *name, size_t len)
{
	if (!(f->v[f->n].name = strndup(name, len)))
		return -ENOMEM;
	f->v[f->n].value = 0;
	f->v[f->n].kids = f->v[f->n].next = -1;
	return f->n++;
}

struct il_flame *il_flame_new(const char *root)
{
	struct il_flame *f = calloc(1, sizeof(*f));

	if (f && (reserve(f) || node_new(f, root, strlen(root)) < 0)) {
		il_flame_free(f);
		return NULL;
	}
	return f;
}

void il_flame_free(struct il_flame *f)
{
	for (int i = 0; f && i < f->n; i++)
		free(f->v[i].name);
	if (f)
		free(f->v);
	free(f);
}

__u64 il_flame_total(const struct il_flame *f)
{
	return f->v[0].value;
}

/* The child of node at named name (len bytes), made in name order when new; -ENOMEM. */
static int child(struct il_flame *f, int at, const char *name, size_t len)
{
	int *link, c, cmp = 1;

	if (reserve(f))
		return -ENOMEM;
	for (link = &f->v[at].kids; *link >= 0; link = &f->v[*link].next) {
		const char *s = f->v[*link].name;

		cmp = strncmp(s, name, len);
		if (!cmp && s[len])
			cmp = 1;
		if (cmp >= 0)
			break;
	}
	if (*link >= 0 && !cmp)
		return *link;
	if ((c = node_new(f, name, len)) < 0)
		return c;
	f->v[c].next = *link;
	*link = c;
	return c;
}

static int add_one(struct il_flame *f, int *at, const char *name, size_t len, __u64 value)
{
	int c = child(f, *at, name, len);

	if (c < 0)
		return c;
	f->v[c].value += value;
	*at = c;
	return 0;
}

int il_flame_add(struct il_flame *f, const char *const *frames, int n, __u64 value)
{
	int at = 0, err;

	f->v[0].value += value;
	for (int i = 0; i < n; i++)
		if ((err = add_one(f, &at, frames[i], strlen(frames[i]), value)))
			return err;
	return 0;
}

int il_flame_add_folded(struct il_flame *f, const char *key, __u64 value)
{
	int at = 0, err;

	f->v[0].value += value;
	for (const char *p = key; *p;) {
		const char *e = strchrnul(p, ';');

		if ((err = add_one(f, &at, p, e - p, value)))
			return err;
		p = *e ? e + 1 : e;
	}
	return 0;
}

/* ---- SVG -------------------------------------------------------------------------------------- */

#define SVG_W 1200.0
#define ROW_H 16
#define PAD_TOP 40
#define CHAR_W 6.6

/* Text for XML (content and attributes): &, <, >, " and ' as entities. */
static void xml_put(FILE *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n && s[i]; i++) {
		switch (s[i]) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&#39;", out); break;
		default: fputc(s[i], out);
		}
	}
}

static int depth_of(const struct il_flame *f, int at)
{
	int d = 0;

	for (int c = f->v[at].kids; c >= 0; c = f->v[c].next) {
		int k = depth_of(f, c);

		if (k > d)
			d = k;
	}
	return d + 1;
}

/* A warm colour from the name, the same for the same name. */
static void colour(const char *s, int rgb[3])
{
	unsigned h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	rgb[0] = 205 + h % 50;
	rgb[1] = 80 + (h >> 8) % 130;
	rgb[2] = 40 + (h >> 16) % 40;
}

struct svg {
	FILE *out;
	const struct il_flame *f;
	double scale;                   /* pixels per unit of value */
	int height;                     /* of the frames' area, pixels */
	__u64 div;
	const char *unit;
	int hidden;                     /* frames too narrow to draw */
};

static void svg_node(struct svg *s, int at, double x, int depth)
{
	const struct node *nd = &s->f->v[at];
	double w = nd->value * s->scale, y = PAD_TOP + s->height - (depth + 1) * ROW_H;
	char esc[4 * 256 + 4];
	int rgb[3];

	if (w < 0.1) {
		s->hidden++;
		return;
	}
	il_text_escape(nd->name, strlen(nd->name), esc, sizeof(esc));
	colour(nd->name, rgb);
	fprintf(s->out, "<g><title>");
	xml_put(s->out, esc, sizeof(esc));
	fprintf(s->out, " (%.3f %s, %.2f%%)</title><rect x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"%d\" "
		"fill=\"rgb(%d,%d,%d)\" rx=\"2\"/>", (double)nd->value / s->div, s->unit,
		100.0 * nd->value / (s->f->v[0].value ? s->f->v[0].value : 1), x, y, w, ROW_H - 1,
		rgb[0], rgb[1], rgb[2]);
	size_t fit = w > 3 * CHAR_W ? (size_t)((w - 6) / CHAR_W) : 0, len = strlen(esc);

	if (fit) {
		fprintf(s->out, "<text x=\"%.1f\" y=\"%.0f\">", x + 3, y + ROW_H - 4);
		if (len <= fit) {
			xml_put(s->out, esc, len);
		} else {
			/* cut on a character's first byte, never inside a UTF-8 sequence */
			size_t cut = fit > 2 ? fit - 2 : 0;

			while (cut && ((unsigned char)esc[cut] & 0xc0) == 0x80)
				cut--;
			xml_put(s->out, esc, cut);
			fputs("..", s->out);
		}
		fputs("</text>", s->out);
	}
	fputs("</g>\n", s->out);
	for (int c = nd->kids; c >= 0; c = s->f->v[c].next) {
		svg_node(s, c, x, depth + 1);
		x += s->f->v[c].value * s->scale;
	}
}

int il_flame_svg(FILE *out, const struct il_flame *f, const char *title, __u64 div, const char *unit)
{
	struct svg s = { out, f, 0, 0, div ? div : 1, unit, 0 };
	int h;

	s.height = depth_of(f, 0) * ROW_H;
	s.scale = f->v[0].value ? (SVG_W - 20) / f->v[0].value : 0;
	h = PAD_TOP + s.height + 10;
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" height=\"%d\" "
		"viewBox=\"0 0 %.0f %d\">\n<style>text{font:11px monospace;fill:#000;pointer-events:none}"
		"rect:hover{stroke:#000;stroke-width:0.5}</style>\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#fdfaf3\"/>\n<text x=\"%.0f\" y=\"20\" "
		"text-anchor=\"middle\" style=\"font-size:15px\">", SVG_W, h, SVG_W, h, SVG_W / 2);
	xml_put(out, title, strlen(title));
	fprintf(out, "</text>\n<g transform=\"translate(10,0)\">\n");
	if (f->v[0].value)
		svg_node(&s, 0, 0, 0);
	fprintf(out, "</g>\n<text x=\"10\" y=\"34\">%.3f %s in all; hover a frame for its total%s",
		(double)f->v[0].value / s.div, unit, s.hidden ? "; " : "");
	if (s.hidden)
		fprintf(out, "%d frame%s too narrow to draw", s.hidden, s.hidden == 1 ? "" : "s");
	fprintf(out, "</text>\n</svg>\n");
	return fflush(out) || ferror(out) ? -EIO : 0;
}

/* ---- JSON ------------------------------------------------------------------------------------- */

static struct json_object *json_node(const struct il_flame *f, int at)
{
	struct json_object *o = json_object_new_object(), *c = NULL;

	if (!o)
		return NULL;
	json_object_object_add(o, "n", il_json_utf8(f->v[at].name, strlen(f->v[at].name)));
	json_object_object_add(o, "v", json_object_new_uint64(f->v[at].value));
	for (int k = f->v[at].kids; k >= 0; k = f->v[k].next) {
		struct json_object *j = json_node(f, k);

		if (!j || (!c && !(c = json_object_new_array()))) {
			json_object_put(j);
			json_object_put(c);
			json_object_put(o);
			return NULL;
		}
		json_object_array_add(c, j);
	}
	if (c)
		json_object_object_add(o, "c", c);
	return o;
}

struct json_object *il_flame_json(const struct il_flame *f)
{
	return json_node(f, 0);
}
