/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The user side of the kernel layers: one module per layer (user/lib/block.c, fs.c,
 * writeback.c, iowait.c) beside its BPF side (bpf/lib/LAYER.bpf.h) and its types
 * (bpf/lib/LAYER.h). Each works from the bpf_object of any tool that includes the layer:
 * it finds its programs, its settings struct in .rodata and its maps by name, so every tool
 * composes a layer the same way. A layer module gives:
 *   - il_LAYER_cfg(obj): its settings, with what it knows itself already filled in;
 *   - its attach plan(s);
 *   - readers of its maps, and the names it prints.
 * Adding a layer: bpf/lib/NEW.h, bpf/lib/NEW.bpf.h, user/lib/NEW.c, user/lib/layers/NEW.h, and a
 * line in il_layer_table (layers.c) so the plan test covers it.
 */
#ifndef IOLAYER_LAYERS_H
#define IOLAYER_LAYERS_H

#include <bpf/libbpf.h>
#include "plan.h"

/* Every layer, for code that treats them alike (the plan test, -V, the layer sets of
 * layerset.h, which run its hooks in a tool's lifecycle). */
struct il_layer_desc {
	const char *name;                               /* "fs" */
	const char *marker_map;                         /* a map only this layer defines */
	const char *marker_prog;                        /* and a program, when not every object
							 * with the map has the programs (or NULL) */
	/* Build every plan the layer can make from obj into plans (room for max); returns how
	 * many. Plans carry their own building errors (plan.error). */
	int (*all_plans)(struct bpf_object *obj, struct il_plan *plans, int max);
	/* The lifecycle hooks, each optional (NULL: nothing to do), run by layerset.c:
	 * chosen: after il_plans_choose() chose n plans of this layer, before load (settings
	 *         that depend on the methods chosen);
	 * loaded: after load, before attach; 0, or -errno after printing one line;
	 * unload: after detach, before the object is destroyed. */
	void (*chosen)(struct bpf_object *obj, const struct il_plan *plans, int n);
	int (*loaded)(struct bpf_object *obj);
	void (*unload)(struct bpf_object *obj);
};
extern const struct il_layer_desc il_layer_table[];
extern const int il_nlayers;

/* The layer named name ("block", "fs", "writeback", "iowait", "who"), or NULL. */
const struct il_layer_desc *il_layer_find(const char *name);

#endif
