/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Names from the kernel (file names, comm) as text, CSV and JSON. Such a name is any bytes:
 * it ends at its first NUL or after n bytes, whichever comes first (comm and d_name need not
 * be NUL-terminated), and may hold control bytes and bytes that are not UTF-8.
 *
 * Valid UTF-8 here: the shortest form of a code point in U+0000..U+10FFFF that is not a
 * surrogate (U+D800..U+DFFF); overlong forms, surrogates, stray continuation bytes and
 * sequences cut short are not. A byte that does not start a valid sequence is "invalid".
 */
#ifndef IOLAYER_ESCAPE_H
#define IOLAYER_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <json-c/json.h>

/* Name s (n bytes at most) for a terminal, as strace and `ls -b` show it: "\n", "\t", "\r",
 * "\\" for a backslash; "\xhh" (two lower-case hex digits) for every other byte below 0x20,
 * for 0x7f, for each byte of a C1 control (U+0080..U+009F, "\xc2\x9b"), for each byte of a
 * bidirectional control (U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069: "\xe2\x80\xae"
 * for U+202E, which would reverse what follows on a terminal) and for each invalid byte. Other valid UTF-8 characters and printable ASCII pass unchanged, so the result holds
 * no control byte and is valid UTF-8. Into buf of len bytes, always NUL-terminated (len 0:
 * buf is not touched); when the result does not fit it ends in "..." (fewer dots when len
 * < 4), cut between escapes and characters, never inside one. Returns buf. */
const char *il_text_escape(const char *s, size_t n, char *buf, size_t len);

/* A file's path s (n bytes at most) for a terminal, whether deleted says the file was
 * unlinked: il_text_escape() of its name, then " (deleted)" when deleted (s may end with that
 * mark already, as il_path_str() writes it). A name that itself ends in " (deleted)" shows
 * that blank as "\x20" ("x\x20(deleted)"), so a live file of that name never reads as a
 * deleted "x". Into buf of len bytes, NUL-terminated. Returns buf. */
const char *il_text_path(const char *s, size_t n, bool deleted, char *buf, size_t len);

/* Name s (n bytes at most) escaped as il_text_escape() does, for a table column of width
 * columns: cut to at most width columns, ending in "..." when cut (escapes and characters
 * kept whole), and padded with blanks to width columns, so the columns after it stay where
 * they are whatever the name. An escape or ASCII byte takes a column each, a UTF-8 character
 * one. Into buf of len bytes (4 * width + 1 always suffice), NUL-terminated. Returns buf. */
const char *il_text_column(const char *s, size_t n, size_t width, char *buf, size_t len);

/* Write NUL-terminated s to f as one CSV field (RFC 4180), without separator or newline:
 * il_text_escape() of s (no control byte, valid UTF-8: safe on a terminal and in any UTF-8
 * reader, and reversible, a backslash being "\\"), then quoted ("a,b" -> "\"a,b\"",
 * embedded quotes doubled) when it holds a comma or a double quote, or begins or ends with a
 * blank; written as is otherwise ("" gives an empty field). Errors are those of f (ferror);
 * out of memory, the field is empty. */
void il_csv_field(FILE *f, const char *s);

/* A json-c string of name s (n bytes at most) that is always valid UTF-8: each invalid byte
 * becomes U+FFFD; a valid name is kept byte for byte. Lossy for invalid names: see
 * il_json_add_name() for the exact bytes. NULL when out of memory. */
struct json_object *il_json_utf8(const char *s, size_t n);

/* Add name s (n bytes at most) to JSON object obj as key: the string il_json_utf8() gives
 * and, only when the name is not valid UTF-8, also key + "_b64" with the raw bytes in
 * base64 (RFC 4648, "+/" alphabet, "=" padding):
 *     {"file":"a<U+FFFD>b","file_b64":"Yf9i"}    for the bytes 61 ff 62
 * A consumer that needs the exact bytes decodes key + "_b64" when it is present, and takes
 * key's UTF-8 otherwise. 0, or -1 when out of memory (obj then holds neither key). */
int il_json_add_name(struct json_object *obj, const char *key, const char *s, size_t n);

#endif
