/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "escape.h"

static const char hex[] = "0123456789abcdef";

/* Bytes up to the first NUL, at most n. */
static size_t name_len(const char *s, size_t n)
{
	const char *nul = memchr(s, '\0', n);

	return nul ? (size_t)(nul - s) : n;
}

/* Length (1 to 4) of the valid UTF-8 sequence at s[0..n), 0 when s[0] does not start one. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0; /* continuation byte, overlong lead 0xc0/0xc1, or past U+10FFFF */
	/* the second byte's range rules out overlongs, surrogates and code points > U+10FFFF */
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

/* Whether the UTF-8 character s[0..k) is a bidirectional control, which reorders what a
 * terminal shows after it: U+061C ALM, U+200E LRM, U+200F RLM, U+202A..U+202E (LRE, RLE,
 * PDF, LRO, RLO), U+2066..U+2069 (LRI, RLI, FSI, PDI). */
static bool bidi(const unsigned char *s, size_t k)
{
	if (k == 2)
		return s[0] == 0xd8 && s[1] == 0x9c;
	if (k != 3 || s[0] != 0xe2)
		return false;
	return (s[1] == 0x80 && (s[2] == 0x8e || s[2] == 0x8f || (s[2] >= 0xaa && s[2] <= 0xae))) ||
	       (s[1] == 0x81 && s[2] >= 0xa6 && s[2] <= 0xa9);
}

/* The escaped form of the character or byte at s[0..n) into out (>= 8 bytes): its length;
 * *used is set to the input bytes it stands for. */
static size_t escape_one(const unsigned char *s, size_t n, char *out, size_t *used)
{
	size_t k = utf8_seq(s, n), o = 0;

	*used = k ? k : 1;
	switch (s[0]) {
	case '\n': memcpy(out, "\\n", 2); return 2;
	case '\t': memcpy(out, "\\t", 2); return 2;
	case '\r': memcpy(out, "\\r", 2); return 2;
	case '\\': memcpy(out, "\\\\", 2); return 2;
	}
	/* C0, DEL, C1 (0xc2 0x80..0x9f), the bidi controls and invalid bytes: \xhh per byte */
	if (s[0] < 0x20 || s[0] == 0x7f || !k || (s[0] == 0xc2 && s[1] <= 0x9f) || bidi(s, k)) {
		for (size_t i = 0; i < *used; i++) {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[s[i] >> 4];
			out[o++] = hex[s[i] & 0xf];
		}
		return o;
	}
	memcpy(out, s, k);
	return k;
}

/* s escaped into buf (len bytes), in at most width columns (an escape or ASCII byte takes a
 * column each, a UTF-8 character one), ending in "..." when cut; padded with blanks to width
 * columns when pad. */
static const char *escape_cut(const char *s, size_t n, char *buf, size_t len, size_t width,
			      bool pad)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t pos = 0, cols = 0, safe = 0, safe_cols = 0, used;
	char piece[8];

	if (!len)
		return buf;
	n = name_len(s, n);
	while (n) {
		size_t k = escape_one(p, n, piece, &used);
		size_t c = (unsigned char)piece[0] >= 0x80 ? 1 : k;

		if (cols + c > width || pos + k > len - 1) {
			/* back to the last end that leaves room for "..." */
			pos = safe;
			cols = safe_cols;
			for (int d = 0; d < 3 && cols < width && pos < len - 1; d++, cols++)
				buf[pos++] = '.';
			break;
		}
		memcpy(buf + pos, piece, k);
		pos += k;
		cols += c;
		if (cols + 3 <= width && pos + 3 <= len - 1) {
			safe = pos;
			safe_cols = cols;
		}
		p += used;
		n -= used;
	}
	for (; pad && cols < width && pos < len - 1; cols++)
		buf[pos++] = ' ';
	buf[pos] = '\0';
	return buf;
}

const char *il_text_escape(const char *s, size_t n, char *buf, size_t len)
{
	return escape_cut(s, n, buf, len, SIZE_MAX, false);
}

const char *il_text_column(const char *s, size_t n, size_t width, char *buf, size_t len)
{
	return escape_cut(s, n, buf, len, width, true);
}

const char *il_text_path(const char *s, size_t n, bool deleted, char *buf, size_t len)
{
	static const char mark[] = " (deleted)";
	const size_t m = sizeof(mark) - 1;
	size_t k = name_len(s, n), e;

	if (deleted && k >= m && !memcmp(s + k - m, mark, m))
		k -= m; /* the mark il_path_str() added */
	il_text_escape(s, k, buf, len);
	e = strlen(buf);
	/* the name's own " (deleted)": its blank as \x20, so it never reads as the mark */
	if (k >= m && !memcmp(s + k - m, mark, m) && e >= m && !memcmp(buf + e - m, mark, m) &&
	    e + 3 < len) {
		memmove(buf + e - m + 4, buf + e - m + 1, m); /* "(deleted)" and the NUL */
		memcpy(buf + e - m, "\\x20", 4);
		e += 3;
	}
	if (deleted && e + m < len)
		memcpy(buf + e, mark, m + 1);
	return buf;
}

void il_csv_field(FILE *f, const char *s)
{
	size_t n = strlen(s), len = 4 * n + 1;
	char *e = malloc(len);
	bool quote;

	if (!e)
		return;
	il_text_escape(s, n, e, len);
	n = strlen(e);
	quote = n && (e[0] == ' ' || e[n - 1] == ' ' || strpbrk(e, ",\""));
	if (!quote) {
		fwrite(e, 1, n, f);
		free(e);
		return;
	}
	fputc('"', f);
	for (size_t i = 0; i < n; i++) {
		if (e[i] == '"')
			fputc('"', f);
		fputc(e[i], f);
	}
	fputc('"', f);
	free(e);
}

/* Whether s[0..n) is all valid UTF-8. */
static bool utf8_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;

	while (n) {
		size_t k = utf8_seq(p, n);

		if (!k)
			return false;
		p += k;
		n -= k;
	}
	return true;
}

struct json_object *il_json_utf8(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	struct json_object *o;
	size_t o_len = 0;
	char *out;

	n = name_len(s, n);
	if (utf8_valid(s, n))
		return json_object_new_string_len(s, (int)n);
	out = malloc(3 * n); /* U+FFFD is 3 bytes for 1 invalid byte */
	if (!out)
		return NULL;
	while (n) {
		size_t k = utf8_seq(p, n);

		if (k) {
			memcpy(out + o_len, p, k);
			o_len += k;
		} else {
			memcpy(out + o_len, "\xef\xbf\xbd", 3);
			o_len += 3;
			k = 1;
		}
		p += k;
		n -= k;
	}
	o = json_object_new_string_len(out, (int)o_len);
	free(out);
	return o;
}

/* Base64 (RFC 4648, padded) of src[0..n) as a NUL-terminated string to free(); NULL when
 * out of memory. */
static char *base64(const unsigned char *src, size_t n)
{
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = malloc((n + 2) / 3 * 4 + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i += 3) {
		unsigned long v = (unsigned long)src[i] << 16;

		if (i + 1 < n)
			v |= (unsigned long)src[i + 1] << 8;
		if (i + 2 < n)
			v |= src[i + 2];
		*o++ = b64[v >> 18 & 63];
		*o++ = b64[v >> 12 & 63];
		*o++ = i + 1 < n ? b64[v >> 6 & 63] : '=';
		*o++ = i + 2 < n ? b64[v & 63] : '=';
	}
	*o = '\0';
	return out;
}

int il_json_add_name(struct json_object *obj, const char *key, const char *s, size_t n)
{
	struct json_object *str, *raw;
	char *key_b64, *enc;
	int err;

	n = name_len(s, n);
	str = il_json_utf8(s, n);
	if (!str)
		return -1;
	if (json_object_object_add(obj, key, str)) {
		json_object_put(str);
		return -1;
	}
	if (utf8_valid(s, n))
		return 0;
	enc = base64((const unsigned char *)s, n);
	raw = enc ? json_object_new_string(enc) : NULL;
	free(enc);
	if (!raw || asprintf(&key_b64, "%s_b64", key) < 0) {
		json_object_put(raw);
		json_object_object_del(obj, key);
		return -1;
	}
	err = json_object_object_add(obj, key_b64, raw);
	free(key_b64);
	if (err) {
		json_object_put(raw);
		json_object_object_del(obj, key);
		return -1;
	}
	return 0;
}
