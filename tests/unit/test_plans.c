/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Unit tests: the contract between the BPF objects and the layers' plans. Every built
 * build/bpf/NAME.bpf.o is opened (no load, no root, no kernel features needed), every layer it
 * includes builds every plan it can make, and each plan must name only programs the object
 * has, fit its arrays, and offer an option in each attach family the layer supports.
 */
#include <dirent.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "libiolayer.h"

static char bpf_dir[PATH_MAX];

/* Families each layer must offer in every plan (writeback's generic mode has no tracepoint,
 * so the writeback layer is held to fentry and kprobe only). */
static bool family_required(const char *layer, enum il_family f)
{
	if (!strcmp(layer, "block") || !strcmp(layer, "iowait") || !strcmp(layer, "who") ||
	    !strcmp(layer, "split"))
		return f == IL_FAM_TRACEPOINT;
	if (!strcmp(layer, "writeback"))
		return f != IL_FAM_TRACEPOINT;
	return true;
}

static int check_object(const char *path)
{
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	struct il_plan *plans = calloc(16, sizeof(*plans));
	int layers = 0;

	assert_non_null(obj);
	assert_non_null(plans);
	for (int l = 0; l < il_nlayers; l++) {
		const struct il_layer_desc *d = &il_layer_table[l];
		int n;

		if (!il_obj_has_map(obj, d->marker_map) ||
		    (d->marker_prog && !bpf_object__find_program_by_name(obj, d->marker_prog)))
			continue;
		layers++;
		n = d->all_plans(obj, plans, 16);
		assert_true(n > 0);
		for (int i = 0; i < n; i++) {
			const struct il_plan *p = &plans[i];

			if (p->error[0])
				fail_msg("%s: layer %s: %s", path, d->name, p->error);
			assert_true(p->nopts > 0);
			for (int f = IL_FAM_FENTRY; f < IL_FAM__MAX; f++) {
				bool has = false;

				for (int j = 0; j < p->nopts; j++) {
					const struct il_option *o = &p->opts[j];

					assert_true(o->nprogs > 0);
					for (int k = 0; k < o->nprogs; k++)
						assert_non_null(o->progs[k].prog);
					has |= il_method_family(o->method) == (enum il_family)f;
				}
				if (family_required(d->name, f) && !has)
					fail_msg("%s: %s has no %s option", path, p->what,
						 il_family_name(f));
			}
		}
	}
	free(plans);
	bpf_object__close(obj);
	return layers;
}

static void test_every_object(void **state)
{
	DIR *dir = opendir(bpf_dir);
	struct dirent *de;
	int objects = 0;

	if (!dir)
		fail_msg("no BPF objects in %s (build first)", bpf_dir);
	while ((de = readdir(dir))) {
		char path[PATH_MAX * 2];
		size_t l = strlen(de->d_name);

		if (l < 6 || strcmp(de->d_name + l - 6, ".bpf.o"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", bpf_dir, de->d_name);
		if (check_object(path) < 1)
			fail_msg("%s includes no layer", path);
		objects++;
	}
	closedir(dir);
	assert_true(objects >= 5);
}

/* The checks themselves: a missing program and an overflow are caught, not written past. */
static void test_mistakes_caught(void **state)
{
	char path[PATH_MAX * 2];
	struct bpf_object *obj;
	struct il_plan p;

	snprintf(path, sizeof(path), "%s/iowaitstack.bpf.o", bpf_dir);
	obj = bpf_object__open_file(path, NULL);
	assert_non_null(obj);
	il_plan_init(&p, "test");
	assert_int_equal(il_plan_add(&p, obj, "iw_switch_btf", "sched:sched_switch", false), -1);
	assert_non_null(strstr(p.error, "before any option"));
	il_plan_init(&p, "test");
	il_plan_option(&p, IL_M_TP_BTF, NULL);
	assert_int_equal(il_plan_add(&p, obj, "no_such_prog", "sched:sched_switch", false), -1);
	assert_non_null(strstr(p.error, "no_such_prog"));
	il_plan_init(&p, "test");
	il_plan_option(&p, IL_M_TP_BTF, NULL);
	for (int i = 0; i < IL_MAX_PROGS; i++)
		assert_int_equal(il_plan_add(&p, obj, "iw_switch_btf", "sched:sched_switch", false), 0);
	assert_int_equal(il_plan_add(&p, obj, "iw_switch_btf", "sched:sched_switch", false), -1);
	assert_int_equal(p.opts[0].nprogs, IL_MAX_PROGS);
	for (int i = 1; i < IL_MAX_OPTIONS; i++)
		assert_int_equal(il_plan_option(&p, IL_M_RAW_TP, NULL), 0);
	assert_int_equal(il_plan_option(&p, IL_M_RAW_TP, NULL), -1);
	bpf_object__close(obj);
}

/* A layer set: its plans on the heap, in a row, room checked; the fs layer's hooks; a plan of
 * the fs layer tells its filesystem. */
static void test_layerset(void **state)
{
	char path[PATH_MAX * 2];
	struct il_layerset *ls;
	struct bpf_object *obj;
	struct il_plan *a, *b;

	snprintf(path, sizeof(path), "%s/fsslower.bpf.o", bpf_dir);
	obj = bpf_object__open_file(path, NULL);
	assert_non_null(obj);
	ls = il_layerset_new(obj, 3);
	assert_non_null(ls);
	a = il_layerset_add(ls, "fs", 2);
	b = il_layerset_add_optional(ls, "fs", 1, "filesystem");
	assert_ptr_equal(b, a + 2);
	assert_int_equal(a[0].chosen, -1);
	assert_null(il_layerset_add(ls, "fs", 1));          /* full */
	assert_null(il_layerset_add(ls, "no_such_layer", 0));
	assert_false(il_layerset_chosen(ls, a));
	assert_non_null(il_layer_find("fs")->chosen);
	assert_non_null(il_layer_find("block")->loaded);
	il_fs_plan(obj, FS_XFS, &a[0]);
	assert_int_equal(il_fs_plan_type(&a[0]), FS_XFS);
	il_layerset_free(ls);
	bpf_object__close(obj);
}

/* The layers' settings are found in .rodata by name, with their size checked. */
static void test_rodata(void **state)
{
	char path[PATH_MAX * 2];
	struct bpf_object *obj;

	snprintf(path, sizeof(path), "%s/iolayer.bpf.o", bpf_dir);
	obj = bpf_object__open_file(path, NULL);
	assert_non_null(obj);
	assert_non_null(il_obj_rodata(obj, "fs_cfg", sizeof(struct fs_cfg)));
	assert_non_null(il_obj_rodata(obj, "wb_cfg", sizeof(struct wb_cfg)));
	assert_non_null(il_obj_rodata(obj, "iw_cfg", sizeof(struct iw_cfg)));
	assert_non_null(il_obj_rodata(obj, "blk_cfg", sizeof(struct blk_cfg)));
	assert_null(il_obj_rodata(obj, "fs_cfg", sizeof(struct fs_cfg) + 8));
	assert_null(il_obj_rodata(obj, "no_such_setting", 4));
	bpf_object__close(obj);
}

/* Where the block layer follows bios, its block_bio_queue program attributes them: who's
 * own program leaves its chosen plan (not loaded, not attached), its other programs stay,
 * and who_cfg.bio_in_blk says so; nothing changes while attribution is off or unchosen. */
static void test_who_bio_in_block(void **state)
{
	char path[PATH_MAX * 2];
	struct bpf_object *obj;
	struct who_cfg *c;
	struct il_plan p;
	int n;

	snprintf(path, sizeof(path), "%s/iolayer.bpf.o", bpf_dir);
	obj = bpf_object__open_file(path, NULL);
	assert_non_null(obj);
	c = il_obj_rodata(obj, "who_cfg", sizeof(*c));
	assert_non_null(c);
	il_who_plan(obj, &p);
	n = p.opts[0].nprogs;
	assert_true(n >= 2);
	il_who_bio_in_block(obj, &p); /* not chosen yet */
	assert_int_equal(c->bio_in_blk, 0);
	p.chosen = 0; /* as il_plans_choose() picks tp_btf */
	il_who_bio_in_block(obj, &p); /* attribution off */
	assert_int_equal(c->bio_in_blk, 0);
	assert_int_equal(p.opts[0].nprogs, n);
	c->on = 1;
	il_who_bio_in_block(obj, &p);
	assert_int_equal(c->bio_in_blk, 1);
	assert_int_equal(p.opts[0].nprogs, n - 1);
	for (int k = 0; k < p.opts[0].nprogs; k++)
		assert_string_not_equal(bpf_program__name(p.opts[0].progs[k].prog), "who_bio_btf");
	assert_string_equal(bpf_program__name(p.opts[0].progs[0].prog), "who_dirty_btf");
	assert_false(bpf_program__autoload(bpf_object__find_program_by_name(obj, "who_bio_btf")));
	assert_false(il_plan_leave_out(&p, "who_bio_btf")); /* gone already */
	assert_int_equal(p.opts[1].nprogs, n); /* the raw_tp option, not chosen, as it was */
	bpf_object__close(obj);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_object),
		cmocka_unit_test(test_mistakes_caught),
		cmocka_unit_test(test_layerset),
		cmocka_unit_test(test_rodata),
		cmocka_unit_test(test_who_bio_in_block),
	};
	char self[PATH_MAX];

	(void)argc;
	snprintf(self, sizeof(self), "%s", argv[0]);
	snprintf(bpf_dir, sizeof(bpf_dir), "%s/../bpf", dirname(self));
	libbpf_set_print(NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
