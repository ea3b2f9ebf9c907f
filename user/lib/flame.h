/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Flame graphs of stacks with a value each (the I/O-wait stacks' ns): a tree of frames, a
 * frame's value the sum of the stacks through it, written as an SVG file (iowaitstack
 * --flamegraph) or as JSON for the HTML report (iolayer --html, which draws and zooms it).
 * Frames are names of any bytes but NUL; the writers escape them. Not thread-safe.
 */
#ifndef IOLAYER_FLAME_H
#define IOLAYER_FLAME_H

#include <stdio.h>
#include <linux/types.h>
#include <json-c/json.h>

struct il_flame;

/* A new empty graph whose root frame is called root ("all"). NULL when out of memory. */
struct il_flame *il_flame_new(const char *root);
void il_flame_free(struct il_flame *f);

/* Add a stack of n frames, outermost first, with value (e.g. ns). 0, or -ENOMEM. */
int il_flame_add(struct il_flame *f, const char *const *frames, int n, __u64 value);

/* Add a folded line's key ("comm;outer;...;inner", il_frames_folded_key()) with value.
 * 0, or -ENOMEM. */
int il_flame_add_folded(struct il_flame *f, const char *key, __u64 value);

/* The root's value: every stack's summed. */
__u64 il_flame_total(const struct il_flame *f);

/* The graph as one SVG document to out: the root at the bottom, a frame's width its share of
 * the root's value, each frame's name, value (divided by div, in unit) and share in its
 * <title> (shown on hover), names cut to fit; frames narrower than 0.1 pixel are left out
 * (and said in the subtitle). title is the heading. 0, or -EIO when out could not be written. */
int il_flame_svg(FILE *out, const struct il_flame *f, const char *title, __u64 div, const char *unit);

/* The graph as JSON, a tree of {"n": name, "v": value, "c": [children]} ("c" only when it has
 * children; names as valid UTF-8, il_json_utf8()), children by name. NULL when out of memory. */
struct json_object *il_flame_json(const struct il_flame *f);

#endif
