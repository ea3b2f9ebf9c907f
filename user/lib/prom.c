/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "escape.h"
#include "lib/shared.h"
#include "prom.h"

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

const char *il_prom_label_value(const char *s, char *buf, size_t len)
{
	char text[IL_PROM_LABEL_MAX + 1];
	size_t o = 0;

	il_text_escape(s, strlen(s), text, sizeof(text));
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

/* One sample: family + suffix, the labels (and le when not NULL), the value. */
static void sample(struct il_prom *p, const char *suffix, const char *const *labels,
		   const char *le, const char *value)
{
	char v[2 * IL_PROM_LABEL_MAX + 1];
	const char *sep = "{";

	fprintf(p->f, "%s%s", p->family, suffix);
	for (int i = 0; labels && labels[i] && labels[i + 1]; i += 2) {
		fprintf(p->f, "%s%s=\"%s\"", sep, labels[i], il_prom_label_value(labels[i + 1], v, sizeof(v)));
		sep = ",";
	}
	if (le)
		fprintf(p->f, "%sle=\"%s\"", sep, le), sep = ",";
	fprintf(p->f, "%s %s\n", *sep == ',' ? "}" : "", value);
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

int il_prom_finish(struct il_prom *p)
{
	if (p->om)
		fputs("# EOF\n", p->f);
	return ferror(p->f) ? -1 : 0;
}
