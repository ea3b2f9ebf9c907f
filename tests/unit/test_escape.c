/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Unit tests: hostile names (control bytes, invalid UTF-8) as text, CSV and JSON. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "escape.h"

/* il_text_escape() of a NUL-terminated name into a buffer of len bytes. */
static const char *esc(const char *s, size_t len)
{
	static char buf[256];

	return il_text_escape(s, strlen(s), buf, len);
}

/* UTF-8 check written apart from the library's: decode, then refuse what is not allowed. */
static bool valid_utf8(const unsigned char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned c = s[i], need, cp;

		if (c < 0x80) {
			i++;
			continue;
		}
		if ((c & 0xe0) == 0xc0)
			need = 1, cp = c & 0x1f;
		else if ((c & 0xf0) == 0xe0)
			need = 2, cp = c & 0x0f;
		else if ((c & 0xf8) == 0xf0)
			need = 3, cp = c & 0x07;
		else
			return false;
		if (i + need >= n)
			return false;
		for (unsigned j = 1; j <= need; j++) {
			if ((s[i + j] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + j] & 0x3f);
		}
		static const unsigned min[] = { 0, 0x80, 0x800, 0x10000 };
		if (cp < min[need] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += need + 1;
	}
	return true;
}

/* Base64 decoder for the test (RFC 4648, padded): bytes into out, their count or -1. */
static int unbase64(const char *s, unsigned char *out)
{
	static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t len = strlen(s);
	int n = 0;

	if (len % 4)
		return -1;
	for (size_t i = 0; i < len; i += 4) {
		unsigned v = 0, pad = 0;

		for (int j = 0; j < 4; j++) {
			const char *c = s[i + j] ? strchr(abc, s[i + j]) : NULL;

			if (s[i + j] == '=' && i + 4 == len && j >= 2)
				pad++;
			else if (!c || pad)
				return -1;
			v = v << 6 | (c ? (unsigned)(c - abc) : 0);
		}
		out[n++] = v >> 16;
		if (pad < 2)
			out[n++] = v >> 8 & 0xff;
		if (pad < 1)
			out[n++] = v & 0xff;
	}
	return n;
}

static void test_text_controls(void **state)
{
	assert_string_equal(esc("\x1b[31mred", 256), "\\x1b[31mred");
	/* OSC window title, 7-bit (ESC ] ... BEL) and 8-bit (raw 0x9d, UTF-8 encoded C1) */
	assert_string_equal(esc("\x1b]0;pwned\x07" "x", 256), "\\x1b]0;pwned\\x07x");
	assert_string_equal(esc("\x9d" "0;t\x9c", 256), "\\x9d0;t\\x9c");
	assert_string_equal(esc("\xc2\x9d" "0;t\xc2\x9c", 256), "\\xc2\\x9d0;t\\xc2\\x9c");
	assert_string_equal(esc("\xc2\x80\xc2\x9f\xc2\xa0", 256), "\\xc2\\x80\\xc2\\x9f\xc2\xa0");
	assert_string_equal(esc("a\nb\rc\td", 256), "a\\nb\\rc\\td");
	assert_string_equal(esc("\x01\x1f\x7f \x7e", 256), "\\x01\\x1f\\x7f ~");
	assert_string_equal(esc("a\\nb", 256), "a\\\\nb");
	assert_string_equal(esc("a,b\"c'd", 256), "a,b\"c'd");
}

static void test_text_utf8(void **state)
{
	assert_string_equal(esc("caf\xc3\xa9", 256), "caf\xc3\xa9");
	assert_string_equal(esc("\xe6\x97\xa5\xe6\x9c\xac.txt", 256), "\xe6\x97\xa5\xe6\x9c\xac.txt");
	assert_string_equal(esc("\xf0\x9f\x98\x80!", 256), "\xf0\x9f\x98\x80!");
	assert_string_equal(esc("\xf4\x8f\xbf\xbf", 256), "\xf4\x8f\xbf\xbf"); /* U+10FFFF */
	assert_string_equal(esc("a\xff\xfe" "b", 256), "a\\xff\\xfeb");
	/* overlong "/", surrogate U+D800, U+110000, stray continuation, cut sequence */
	assert_string_equal(esc("\xc0\xaf", 256), "\\xc0\\xaf");
	assert_string_equal(esc("\xe0\x80\xaf", 256), "\\xe0\\x80\\xaf");
	assert_string_equal(esc("\xed\xa0\x80", 256), "\\xed\\xa0\\x80");
	assert_string_equal(esc("\xf4\x90\x80\x80", 256), "\\xf4\\x90\\x80\\x80");
	assert_string_equal(esc("\x80" "a", 256), "\\x80a");
	assert_string_equal(esc("\xe6\x97", 256), "\\xe6\\x97");
	assert_string_equal(esc("\xe6\x97" "a", 256), "\\xe6\\x97a");
}

/* The bidirectional controls, which reorder a terminal's line, as bytes; their neighbours
 * (U+200D, U+202F, U+2065, U+206A, U+061B) and other UTF-8 as they are. */
static void test_text_bidi(void **state)
{
	assert_string_equal(esc("evil\xe2\x80\xaetxt.exe", 256), "evil\\xe2\\x80\\xaetxt.exe");
	assert_string_equal(esc("\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad", 256),
			    "\\xe2\\x80\\xaa\\xe2\\x80\\xab\\xe2\\x80\\xac\\xe2\\x80\\xad");
	assert_string_equal(esc("\xe2\x81\xa6\xe2\x81\xa9\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c", 256),
			    "\\xe2\\x81\\xa6\\xe2\\x81\\xa9\\xe2\\x80\\x8e\\xe2\\x80\\x8f\\xd8\\x9c");
	assert_string_equal(esc("\xe2\x80\x8d\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa\xd8\x9b", 256),
			    "\xe2\x80\x8d\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa\xd8\x9b");
}

/* A path and its deletion: a live name ending in " (deleted)" never reads as the mark. */
static void test_text_path(void **state)
{
	char buf[64];

	assert_string_equal(il_text_path("/m/x (deleted)", 64, true, buf, sizeof(buf)), "/m/x (deleted)");
	assert_string_equal(il_text_path("/m/x", 64, true, buf, sizeof(buf)), "/m/x (deleted)");
	assert_string_equal(il_text_path("/m/x (deleted)", 64, false, buf, sizeof(buf)),
			    "/m/x\\x20(deleted)");
	assert_string_equal(il_text_path("/m/x (deleted) (deleted)", 64, true, buf, sizeof(buf)),
			    "/m/x\\x20(deleted) (deleted)");
	assert_string_equal(il_text_path("/m/a\nb", 64, false, buf, sizeof(buf)), "/m/a\\nb");
	assert_string_equal(il_text_path("/m/x(deleted)", 64, false, buf, sizeof(buf)), "/m/x(deleted)");
	/* no room for the escape: cut as il_text_escape() cuts, never past buf */
	assert_string_equal(il_text_path("x (deleted)", 64, false, buf, 12), "x (deleted)");
	assert_string_equal(il_text_path("x (deleted)", 64, false, buf, 15), "x\\x20(deleted)");
}

/* A name in a table column: cut to the column's width with "...", escapes whole, padded. */
static void test_text_column(void **state)
{
	char buf[4 * 16 + 1];

	/* the hostile comm of the report: 17 columns escaped, cut after "\n" */
	assert_string_equal(il_text_column("\x1b[31m,\"\n\xffq", 16, 16, buf, sizeof(buf)),
			    "\\x1b[31m,\"\\n... ");
	/* short names are padded; exactly 16 columns fit as they are */
	assert_string_equal(il_text_column("redis-server", 16, 16, buf, sizeof(buf)),
			    "redis-server    ");
	assert_string_equal(il_text_column("ab\x1b" "cdefghijkl", 16, 16, buf, sizeof(buf)),
			    "ab\\x1bcdefghijkl");
	assert_string_equal(il_text_column("ab\x1b" "cdefghijklm", 16, 16, buf, sizeof(buf)),
			    "ab\\x1bcdefghi...");
	/* never cut inside an escape: "\xff" does not fit after 13 columns */
	assert_string_equal(il_text_column("abcdefghijklm\xff", 16, 16, buf, sizeof(buf)),
			    "abcdefghijklm...");
	/* a UTF-8 character is one column: 16 of them fit in 16 columns */
	assert_string_equal(il_text_column("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
					   "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
					   "\xc3\xa9\xc3\xa9", 32, 16, buf, sizeof(buf)),
			    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
			    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");
	assert_string_equal(il_text_column("\xc3\xa9x", 3, 4, buf, sizeof(buf)), "\xc3\xa9x  ");
	assert_string_equal(il_text_column("", 0, 3, buf, sizeof(buf)), "   ");
}

static void test_text_length(void **state)
{
	char buf[16];

	/* the name ends at its first NUL, or after n bytes */
	assert_string_equal(il_text_escape("abc\0\x1b" "def", 8, buf, sizeof(buf)), "abc");
	assert_string_equal(il_text_escape("abcdef", 3, buf, sizeof(buf)), "abc");
	assert_string_equal(il_text_escape("\xe6\x97\xa5", 2, buf, sizeof(buf)), "\\xe6\\x97");
	assert_string_equal(il_text_escape("", 0, buf, sizeof(buf)), "");
	/* exact fit, then one byte short */
	assert_string_equal(esc("abcdefg", 8), "abcdefg");
	assert_string_equal(esc("abcdefgh", 8), "abcd...");
	/* never cut inside an escape or a character */
	assert_string_equal(esc("ab\x1b" "cdef", 8), "ab...");
	assert_string_equal(esc("ab\x1b" "c", 8), "ab\\x1bc");
	assert_string_equal(esc("\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", 8), "\xe6\x97\xa5...");
	assert_string_equal(esc("\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", 7), "\xe6\x97\xa5...");
	assert_string_equal(esc("\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", 6), "...");
	assert_string_equal(esc("\xc2\x9b" "x", 8), "...");
	/* buffers too small for "..." */
	assert_string_equal(esc("abcdef", 4), "...");
	assert_string_equal(esc("abcdef", 3), "..");
	assert_string_equal(esc("abcdef", 1), "");
	buf[0] = 'z';
	il_text_escape("abc", 3, buf, 0);
	assert_int_equal(buf[0], 'z');
}

/* Every byte, alone and in a pseudo-random mix: no control byte out, valid UTF-8 out. */
static void test_text_any_bytes(void **state)
{
	unsigned char in[64];
	char out[300];
	uint32_t x = 12345;

	for (unsigned round = 0; round < 20000; round++) {
		size_t n = round < 256 ? 1 : (x >> 8) % sizeof(in);

		for (size_t i = 0; i < n; i++) {
			x = x * 1103515245 + 12345;
			in[i] = round < 256 ? round : (x >> 16) & 0xff;
		}
		il_text_escape((char *)in, n, out, round % 2 ? sizeof(out) : 20);
		size_t len = strlen(out);
		assert_true(len < (round % 2 ? sizeof(out) : 20));
		assert_true(valid_utf8((unsigned char *)out, len));
		for (size_t i = 0; i < len; i++) {
			unsigned char c = out[i];

			assert_false(c < 0x20 || c == 0x7f);
			assert_false(c == 0xc2 && (unsigned char)out[i + 1] < 0xa0);
		}
	}
}

/* il_csv_field() of s as a string. */
static char *csv(const char *s)
{
	static char out[256];
	FILE *f = fmemopen(out, sizeof(out), "w");

	assert_non_null(f);
	il_csv_field(f, s);
	fputc('\0', f);
	fclose(f);
	return out;
}

static void test_csv(void **state)
{
	assert_string_equal(csv("fsync_loop"), "fsync_loop");
	assert_string_equal(csv(""), "");
	assert_string_equal(csv("/tmp/a b"), "/tmp/a b");
	assert_string_equal(csv("a,b"), "\"a,b\"");
	assert_string_equal(csv("say \"hi\""), "\"say \"\"hi\"\"\"");
	assert_string_equal(csv("\""), "\"\"\"\"");
	/* names escaped as on a terminal (reversibly: a backslash doubled), then quoted as
	 * needed: no control byte, valid UTF-8 */
	assert_string_equal(csv("a\nb"), "a\\nb");
	assert_string_equal(csv("a\r\nb"), "a\\r\\nb");
	assert_string_equal(csv("a\tb"), "a\\tb");
	assert_string_equal(csv(" lead"), "\" lead\"");
	assert_string_equal(csv("trail "), "\"trail \"");
	assert_string_equal(csv("\ttab"), "\\ttab");
	assert_string_equal(csv("\x1b[31mred"), "\\x1b[31mred");
	assert_string_equal(csv("a\\b"), "a\\\\b");
	assert_string_equal(csv("ev\x1b,\"x\""), "\"ev\\x1b,\"\"x\"\"\"");
	/* UTF-8 kept, invalid bytes escaped */
	assert_string_equal(csv("\xe6\x97\xa5\xff\xfe"), "\xe6\x97\xa5\\xff\\xfe");
}

/* The printed form of obj, as the tools print JSON (il_json_print), checked valid UTF-8. */
static const char *printed(struct json_object *obj)
{
	const char *s = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN |
							       JSON_C_TO_STRING_NOSLASHESCAPE);

	assert_true(valid_utf8((const unsigned char *)s, strlen(s)));
	return s;
}

static void test_json_valid_names(void **state)
{
	struct json_object *o = json_object_new_object();

	assert_int_equal(il_json_add_name(o, "comm", "fsync_loop\0\0\0\0\0\0", 16), 0);
	assert_int_equal(il_json_add_name(o, "file", "/tmp/\xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80"
					  "caf\xc3\xa9", 64), 0);
	assert_int_equal(il_json_add_name(o, "ctl", "a\"b\\c\n\x1b[0m\xc2\x9b", 64), 0);
	assert_string_equal(printed(o),
			    "{\"comm\":\"fsync_loop\","
			    "\"file\":\"/tmp/\xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80" "caf\xc3\xa9\","
			    "\"ctl\":\"a\\\"b\\\\c\\n\\u001b[0m\xc2\x9b\"}");
	json_object_put(o);
}

static void test_json_invalid_names(void **state)
{
	static const char *const names[] = {
		"a\xff" "b\xfe", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe6\x97", "\x80",
		"\xe6\x97\xa5\xff\xf0\x9f\x98\x80\xf0\x9f\x98",
	};
	struct json_object *o = json_object_new_object(), *v;
	unsigned char raw[64];

	assert_int_equal(il_json_add_name(o, "file", "a\xff" "b\xfe\0zz", 7), 0);
	assert_string_equal(printed(o), "{\"file\":\"a\xef\xbf\xbd" "b\xef\xbf\xbd\","
					"\"file_b64\":\"Yf9i/g==\"}");
	json_object_put(o);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t n = strlen(names[i]);

		o = json_object_new_object();
		assert_int_equal(il_json_add_name(o, "f", names[i], n), 0);
		printed(o);
		assert_true(json_object_object_get_ex(o, "f_b64", &v));
		assert_int_equal(unbase64(json_object_get_string(v), raw), n);
		assert_memory_equal(raw, names[i], n);
		json_object_put(o);
	}
}

/* Every single byte and pseudo-random names: valid UTF-8 printed, exact bytes given back. */
static void test_json_round_trip(void **state)
{
	unsigned char in[40], raw[64];
	uint32_t x = 777;

	for (unsigned round = 0; round < 5000; round++) {
		size_t n = round < 256 ? 1 : 1 + (x >> 8) % sizeof(in);
		struct json_object *o = json_object_new_object(), *v;

		for (size_t i = 0; i < n; i++) {
			x = x * 1103515245 + 12345;
			in[i] = round < 256 ? round : 1 + (x >> 16) % 255;
		}
		if (!in[0]) /* a NUL would end the name */
			in[0] = 'a';
		assert_int_equal(il_json_add_name(o, "f", (char *)in, n), 0);
		printed(o);
		if (json_object_object_get_ex(o, "f_b64", &v)) {
			assert_false(valid_utf8(in, n));
			assert_int_equal(unbase64(json_object_get_string(v), raw), n);
		} else {
			assert_true(valid_utf8(in, n));
			assert_true(json_object_object_get_ex(o, "f", &v));
			assert_int_equal(json_object_get_string_len(v), n);
			memcpy(raw, json_object_get_string(v), n);
		}
		assert_memory_equal(raw, in, n);
		json_object_put(o);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_controls),
		cmocka_unit_test(test_text_utf8),
		cmocka_unit_test(test_text_bidi),
		cmocka_unit_test(test_text_path),
		cmocka_unit_test(test_text_length),
		cmocka_unit_test(test_text_any_bytes),
		cmocka_unit_test(test_csv),
		cmocka_unit_test(test_text_column),
		cmocka_unit_test(test_json_valid_names),
		cmocka_unit_test(test_json_invalid_names),
		cmocka_unit_test(test_json_round_trip),
	};
	return cmocka_run_group_tests_name("escape", tests, NULL, NULL);
}
