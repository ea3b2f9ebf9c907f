/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hist.h"

#define STARS 40

static const struct { const char *label; double pct; } pcts[] = {
	{ "p50", 50.0 }, { "p90", 90.0 }, { "p99", 99.0 }, { "p99.9", 99.9 },
};

void il_slot_bounds(int slot, __u64 *lo, __u64 *hi)
{
	if (slot <= 0) {
		*lo = 0;
		*hi = 1;
		return;
	}
	*lo = 1ULL << slot;
	*hi = slot >= 63 ? ~0ULL : (1ULL << (slot + 1)) - 1;
}

__u64 il_hist_total(const __u64 *slots, int nslots)
{
	__u64 t = 0;

	for (int i = 0; i < nslots; i++)
		t += slots[i];
	return t;
}

int il_hist_percentile_slot(const __u64 *slots, int nslots, double pct)
{
	__u64 total = il_hist_total(slots, nslots), need, run = 0;

	if (!total)
		return -1;
	/* integer ceil(total * pct / 100) with pct in tenths, exact for p99.9 */
	__u64 tenths = (__u64)llround(pct * 10);
	need = (total * tenths + 999) / 1000;
	if (!need)
		need = 1;
	for (int i = 0; i < nslots; i++) {
		run += slots[i];
		if (run >= need)
			return i;
	}
	return nslots - 1;
}

/* As the classic tools' print_log2_hist() (bcc, libbpf-tools): val * 40 / max stars, rounded
 * down, so a count under 1/40 of the largest draws none (its count column still says it). */
static void stars(FILE *f, __u64 val, __u64 max)
{
	int n = max ? (int)(val * STARS / max) : 0;

	if (n > STARS)
		n = STARS;
	for (int i = 0; i < n; i++)
		fputc('*', f);
	for (int i = n; i < STARS; i++)
		fputc(' ', f);
}

void il_hist_print(FILE *f, const __u64 *slots, int nslots, const char *unit)
{
	int top = -1;
	__u64 max = 0;

	for (int i = 0; i < nslots; i++) {
		if (slots[i])
			top = i;
		if (slots[i] > max)
			max = slots[i];
	}
	if (top < 0)
		return;
	bool wide = top > 32; /* values past 2^33 need 20 digits */
	int w = wide ? 20 : 10;

	fprintf(f, "%*s%-*s : count    distribution\n", wide ? 15 : 5, "", wide ? 29 : 19, unit);
	for (int i = 0; i <= top; i++) {
		__u64 lo, hi;

		il_slot_bounds(i, &lo, &hi);
		fprintf(f, "%*llu -> %-*llu : %-8llu |", w, (unsigned long long)lo, w,
			(unsigned long long)hi, (unsigned long long)slots[i]);
		stars(f, slots[i], max);
		fputs("|\n", f);
	}
}

void il_hist_print_percentiles(FILE *f, const __u64 *slots, int nslots, const char *unit)
{
	if (!il_hist_total(slots, nslots))
		return;
	fprintf(f, "percentiles (bucket bounds, %s):", unit);
	for (size_t i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++) {
		__u64 lo, hi;

		il_slot_bounds(il_hist_percentile_slot(slots, nslots, pcts[i].pct), &lo, &hi);
		fprintf(f, "  %s %llu-%llu", pcts[i].label, (unsigned long long)lo,
			(unsigned long long)hi);
	}
	fputc('\n', f);
}

struct json_object *il_hist_json(const __u64 *slots, int nslots, const char *unit)
{
	struct json_object *o = json_object_new_object(), *b = json_object_new_array();
	struct json_object *p = json_object_new_object();
	__u64 total = il_hist_total(slots, nslots);

	json_object_object_add(o, "unit", json_object_new_string(unit));
	json_object_object_add(o, "total", json_object_new_uint64(total));
	for (int i = 0; i < nslots; i++) {
		struct json_object *e;
		__u64 lo, hi;

		if (!slots[i])
			continue;
		il_slot_bounds(i, &lo, &hi);
		e = json_object_new_object();
		json_object_object_add(e, "low", json_object_new_uint64(lo));
		json_object_object_add(e, "high", json_object_new_uint64(hi));
		json_object_object_add(e, "count", json_object_new_uint64(slots[i]));
		json_object_array_add(b, e);
	}
	json_object_object_add(o, "buckets", b);
	for (size_t i = 0; total && i < sizeof(pcts) / sizeof(pcts[0]); i++) {
		struct json_object *e = json_object_new_object();
		__u64 lo, hi;

		il_slot_bounds(il_hist_percentile_slot(slots, nslots, pcts[i].pct), &lo, &hi);
		json_object_object_add(e, "low", json_object_new_uint64(lo));
		json_object_object_add(e, "high", json_object_new_uint64(hi));
		json_object_object_add(p, pcts[i].label, e);
	}
	json_object_object_add(o, "percentiles", p);
	return o;
}

void *il_snaps_get(struct il_snaps *s, const void *key)
{
	char *a = s->v, *e;

	for (size_t i = 0; i < s->n; i++)
		if (!memcmp(a + i * s->size, key, s->key_len))
			return a + i * s->size;
	if (!(a = realloc(s->v, (s->n + 1) * s->size)))
		return NULL;
	s->v = a;
	e = a + s->n++ * s->size;
	memset(e, 0, s->size);
	memcpy(e, key, s->key_len);
	return e;
}

void il_snaps_free(struct il_snaps *s)
{
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

const char *il_hist_pct_range(const __u64 *slots, int nslots, double pct, double div, char *buf,
			      size_t len)
{
	int slot = il_hist_percentile_slot(slots, nslots, pct);
	__u64 lo, hi;

	if (slot < 0)
		return "-";
	il_slot_bounds(slot, &lo, &hi);
	snprintf(buf, len, "%.3f-%.3f", lo / div, (hi + 1) / div);
	return buf;
}

void il_counts_delta(__u64 *d, __u64 *seen, const __u64 *now, int n)
{
	for (int i = 0; i < n; i++) {
		d[i] = now[i] - seen[i];
		seen[i] = now[i];
	}
}
