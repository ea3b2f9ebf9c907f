/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A tool's layers and their lifecycle (layerset.h). */
#include <stdlib.h>
#include "cgfilter.h"
#include "layerset.h"
#include "log.h"
#include "tool.h"

struct il_layerset *il_layerset_new(struct bpf_object *obj, int max_plans)
{
	struct il_layerset *ls = calloc(1, sizeof(*ls));

	if (ls && max_plans > 0 && !(ls->plans = calloc(max_plans, sizeof(*ls->plans)))) {
		free(ls);
		ls = NULL;
	}
	if (!ls) {
		il_err("out of memory for the attach plans");
		return NULL;
	}
	ls->obj = obj;
	ls->cap = max_plans > 0 ? max_plans : 0;
	return ls;
}

static struct il_plan *add(struct il_layerset *ls, const char *layer, int n, const char *label)
{
	const struct il_layer_desc *d = il_layer_find(layer);
	struct il_layer_use *u;

	if (!d) {
		il_err("internal error: no layer named %s", layer);
		return NULL;
	}
	if (n < 0 || ls->nuses == IL_LAYERSET_MAX_USES || ls->nplans + n > ls->cap) {
		il_err("internal error: no room for %d plan%s of layer %s", n, n == 1 ? "" : "s", layer);
		return NULL;
	}
	u = &ls->uses[ls->nuses++];
	u->layer = d;
	u->label = label;
	u->plans = ls->plans + ls->nplans;
	u->n = n;
	for (int i = 0; i < n; i++)
		u->plans[i].chosen = -1; /* not chosen until il_layerset_choose() */
	ls->nplans += n;
	return u->plans;
}

struct il_plan *il_layerset_add(struct il_layerset *ls, const char *layer, int n)
{
	return add(ls, layer, n, NULL);
}

struct il_plan *il_layerset_add_optional(struct il_layerset *ls, const char *layer, int n,
					 const char *label)
{
	return add(ls, layer, n, label ? label : layer);
}

static struct il_layer_use *use_of(const struct il_layerset *ls, const struct il_plan *plans)
{
	for (int i = 0; ls && i < ls->nuses; i++)
		if (ls->uses[i].plans == plans)
			return (struct il_layer_use *)&ls->uses[i];
	return NULL;
}

/* Undo the choice of u's plans: their programs are not loaded. */
static void unchoose(struct il_layer_use *u)
{
	for (int i = 0; i < u->n; i++) {
		struct il_plan *p = &u->plans[i];

		if (p->chosen >= 0)
			for (int k = 0; k < p->opts[p->chosen].nprogs; k++)
				bpf_program__set_autoload(p->opts[p->chosen].progs[k].prog, false);
		p->chosen = -1;
	}
	u->chosen = false;
}

int il_layerset_choose(struct il_layerset *ls, enum il_family fam)
{
	il_cgfilter_apply(ls->obj); /* --cgroup, for every layer of the object */
	il_plans_hold_notes(); /* a failure below is its one line, without them */
	for (int i = 0; i < ls->nuses; i++) {
		struct il_layer_use *u = &ls->uses[i];

		if (!u->n)
			continue;
		u->chosen = !il_plans_choose(u->plans, u->n, fam);
		if (u->chosen)
			continue;
		/* il_plans_choose() said why in one line */
		if (!u->label)
			goto fail;
		for (int j = 0; fam != IL_FAM_ANY && j < u->n; j++)
			if (il_plan_has_family(&u->plans[j], fam))
				goto fail;
		il_warn("the %s layer is left out", u->label);
		unchoose(u);
	}
	il_plans_release_notes(true);
	for (int i = 0; i < ls->nuses; i++)
		if (ls->uses[i].chosen && ls->uses[i].layer->chosen)
			ls->uses[i].layer->chosen(ls->obj, ls->uses[i].plans, ls->uses[i].n);
	return 0;
fail:
	il_plans_release_notes(false);
	return -1;
}

bool il_layerset_chosen(const struct il_layerset *ls, const struct il_plan *plans)
{
	const struct il_layer_use *u = use_of(ls, plans);

	return u && u->chosen;
}

void il_layerset_drop(struct il_layerset *ls, const struct il_plan *plans)
{
	struct il_layer_use *u = use_of(ls, plans);

	if (u)
		unchoose(u);
}

/* Is u the first use of its layer in ls (so a layer's hook runs once)? */
static bool first_of_layer(const struct il_layerset *ls, int u)
{
	for (int i = 0; i < u; i++)
		if (ls->uses[i].layer == ls->uses[u].layer)
			return false;
	return true;
}

int il_layerset_loaded(struct il_layerset *ls, int err)
{
	if (il_tool_loaded(err))
		return -1;
	for (int i = 0; i < ls->nuses; i++)
		if (ls->uses[i].layer->loaded && first_of_layer(ls, i) &&
		    ls->uses[i].layer->loaded(ls->obj))
			return -1;
	return 0;
}

int il_layerset_attach(struct il_layerset *ls)
{
	return il_plans_attach(ls->plans, ls->nplans);
}

void il_layerset_detach(struct il_layerset *ls)
{
	if (ls)
		il_plans_detach(ls->plans, ls->nplans);
}

void il_layerset_free(struct il_layerset *ls)
{
	if (!ls)
		return;
	il_layerset_detach(ls);
	for (int i = 0; i < ls->nuses; i++)
		if (ls->uses[i].layer->unload && first_of_layer(ls, i))
			ls->uses[i].layer->unload(ls->obj);
	free(ls->plans);
	free(ls);
}
