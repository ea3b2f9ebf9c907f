/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A tool's layers and their lifecycle in one place: the plans of every layer a tool uses, on
 * the heap, and the layers' hooks (layers.h: chosen, loaded, unload) run in order, so no main
 * sequences them by hand.
 *
 *   struct il_layerset *ls = il_layerset_new(skel->obj, 3);     after SKEL__open, the cfgs
 *   struct il_plan *p = il_layerset_add(ls, "block", 2);        then build p[0], p[1]
 *   il_blk_plan(skel->obj, true, &p[0]); il_blk_bio_plan(skel->obj, &p[1]);
 *   if (il_layerset_choose(ls, il_opts.attach) ||                choose + chosen hooks
 *       il_layerset_loaded(ls, SKEL__load(skel)) ||              load result + loaded hooks
 *       il_layerset_attach(ls))
 *           goto out;
 *   ...
 * out:
 *   il_layerset_free(ls);                                        detach, unload hooks, free
 *   SKEL__destroy(skel);
 *
 * Every function that can fail prints one line and returns -1 (or NULL); none exits.
 */
#ifndef IOLAYER_LAYERSET_H
#define IOLAYER_LAYERSET_H

#include <stdbool.h>
#include <bpf/libbpf.h>
#include "layers.h"
#include "plan.h"

#define IL_LAYERSET_MAX_USES 16

/* One il_layerset_add(): n plans of one layer, chosen together. */
struct il_layer_use {
	const struct il_layer_desc *layer;
	const char *label;      /* optional uses: named in "the LABEL layer is left out" */
	struct il_plan *plans;  /* n plans in il_layerset.plans */
	int n;
	bool chosen;            /* after il_layerset_choose(): every plan has an option */
};

struct il_layerset {
	struct bpf_object *obj;
	struct il_plan *plans;  /* room for cap plans; the uses' plans one after another */
	int nplans, cap;
	struct il_layer_use uses[IL_LAYERSET_MAX_USES];
	int nuses;
};

/* An empty set for obj (opened, not loaded) with room for max_plans plans in all, which stay
 * where they are until il_layerset_free(). NULL after one line (out of memory). */
struct il_layerset *il_layerset_new(struct bpf_object *obj, int max_plans);

/* The next n plans of the set, for layer `layer` (a name in il_layer_table), for the caller
 * to build (il_LAYER_plan...); they are chosen together. NULL after one line when the layer is
 * unknown or the set is full (an internal error). n may be 0: nothing of the layer is traced,
 * but its loaded and unload hooks still run. */
struct il_plan *il_layerset_add(struct il_layerset *ls, const char *layer, int n);

/* The same for a layer the tool can do without: when this kernel cannot trace it,
 * il_layerset_choose() leaves it out with the warning "the LABEL layer is left out" (except
 * under --attach=FAMILY with a plan of that family: a refusal, as for other layers). */
struct il_plan *il_layerset_add_optional(struct il_layerset *ls, const char *layer, int n,
					 const char *label);

/* Choose a method for every plan, use by use in the order added (il_plans_choose(), with fam
 * from --attach), then run the chosen hook of each use chosen, with its plans. 0, or -1 after
 * il_plans_choose()'s line when a use that is not optional cannot be traced. */
int il_layerset_choose(struct il_layerset *ls, enum il_family fam);

/* Was the use whose plans are `plans` (as il_layerset_add() gave them) chosen? */
bool il_layerset_chosen(const struct il_layerset *ls, const struct il_plan *plans);

/* Leave a chosen use out after all (its programs are not loaded nor attached). */
void il_layerset_drop(struct il_layerset *ls, const struct il_plan *plans);

/* After SKEL__load(): err is its result. il_tool_loaded(err), then the loaded hook of each
 * layer in the set (once per layer). 0, or -1 after one line. */
int il_layerset_loaded(struct il_layerset *ls, int err);

/* Attach the chosen plans of every use (il_plans_attach(): a program listed with the same
 * target by several plans is attached once). 0, or -1 after one line. */
int il_layerset_attach(struct il_layerset *ls);

/* Detach every plan (all at once, il_plans_detach()). Again is harmless. */
void il_layerset_detach(struct il_layerset *ls);

/* Detach, run the unload hook of each layer in the set, free the set and its plans; before
 * SKEL__destroy(). NULL is fine. */
void il_layerset_free(struct il_layerset *ls);

#endif
