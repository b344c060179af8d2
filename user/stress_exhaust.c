// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * exhaust: an operation meets a full arena at every point where it
 * allocates. The arena is filled until no size can be had, then given back
 * one filler object at a time, the operation tried after each: until it
 * succeeds, each try must fail with -ENOMEM and leave the structure as it
 * was (its length, its entries, its whole check). The arena is
 * user/stress_exhaust.bpf.c's own, small enough to fill.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <arenakit/user.h>
#include "loader.h"
#include "stress_tool.h"
#include "stress_exhaust.skel.h"

struct exhaust {
	struct stress_exhaust *skel;
	struct stress_row *r;
	const char *what;
};

static unsigned long long exhaust_size(struct exhaust *x, int htab)
{
	return htab ? ak_htab_count(&x->skel->arena->exhaust_htab) :
		      ak_list_len(&x->skel->arena->exhaust_list);
}

/* Is the structure as it should be with @n entries? Keys 0..n-1 for the table. */
static int exhaust_sound(struct exhaust *x, int htab, unsigned long long n)
{
	unsigned long long *v;
	unsigned int k;
	int err, retval;

	if (ak_run(x->skel->progs.check, NULL, 0, &retval) || retval || x->skel->bss->list_check ||
	    x->skel->bss->htab_check || exhaust_size(x, htab) != n)
		return 0;
	for (k = 0; htab && k < n; k++) {
		v = ak_htab_lookup(&x->skel->arena->exhaust_htab, &k, &err);
		if (!v || *v != (unsigned long long)k << 8)
			return 0;
	}
	return 1;
}

/* Keys 0..@n-1 in, with memory to spare: each @op must succeed. 0 or -errno. */
static int exhaust_prefill(struct exhaust *x, const struct bpf_program *op, unsigned int n)
{
	unsigned int k;
	int err, retval;

	for (k = 0; k < n; k++) {
		x->skel->bss->op_key = k;
		err = ak_run(op, NULL, 0, &retval) ?: retval ?: x->skel->bss->op_result;
		if (err)
			return err;
	}
	return 0;
}

/*
 * Try @op with key @key in a full arena until it succeeds: the tries it
 * took, or -errno.
 */
static int exhaust_op(struct stress_run *s, struct exhaust *x, const struct bpf_program *op,
		      int htab, unsigned int key)
{
	unsigned long long n = exhaust_size(x, htab);
	long long result;
	int tries, err, retval;

	err = ak_run_until_done(x->skel->progs.fill, NULL, 0, STRESS_MAX_RUNS, &retval, NULL);
	if (err || retval) {
		stress_verdict(x->r, 0, 0, "%s: the filler failed: %s", x->what, retval == -ENOSPC ?
			       "it ran out of slots" : strerror(-(err ?: retval)));
		return err ?: retval;
	}
	stress_progress(s, "exhaust: %s, %u filler objects", x->what, x->skel->bss->nfillers);
	for (tries = 1; ; tries++) {
		x->skel->bss->op_key = key;
		err = ak_run(op, NULL, 0, &retval) ?: retval;
		if (err)
			return err;
		result = x->skel->bss->op_result;
		if (!result) {
			stress_verdict(x->r, exhaust_sound(x, htab, n + 1), 0,
				       "%s: after it succeeded (try %d) the structure is not sound",
				       x->what, tries);
			break;
		}
		stress_verdict(x->r, result == -ENOMEM, 0, "%s: try %d returned %lld, want -ENOMEM",
			x->what, tries, result);
		stress_verdict(x->r, exhaust_sound(x, htab, n), 0,
			"%s: after failing (try %d) the structure changed", x->what, tries);
		err = ak_run(x->skel->progs.unfill_one, NULL, 0, &retval) ?: retval;
		if (err) {
			stress_verdict(x->r, 0, 0,
				       "%s: still failing with all the filler freed (%s)", x->what,
				       strerror(-err));
			return err;
		}
	}
	while (!ak_run(x->skel->progs.unfill_one, NULL, 0, &retval) && !retval)
		;
	return tries;
}

static int scenario_exhaust(struct stress_run *s)
{
	struct exhaust x = { 0 };
	struct ak_alloc_stats st, before;
	unsigned int grew_at_once, nbuckets;
	int list_tries, htab_tries;
	int err, retval;

	x.skel = stress_exhaust__open();
	err = stress_load("exhaust", x.skel ? x.skel->skeleton : NULL);
	if (err)
		goto out;
	ak_alloc_stats_read(&x.skel->arena->ak_allocator, &before);
	err = ak_run(x.skel->progs.setup, NULL, 0, &retval) ?: retval;
	if (err)
		goto out;

	x.r = stress_row(s, "exhaust", "list add in a full arena", STRESS_EXHAUST_PAGES);
	x.what = "list add";
	err = exhaust_prefill(&x, x.skel->progs.list_add, 5);
	if (err)
		goto out;
	list_tries = exhaust_op(s, &x, x.skel->progs.list_add, 0, 5);
	err = list_tries < 0 ? list_tries : 0;
	if (err)
		goto out;
	stress_row_done(x.r);

	/* 13 of 16 buckets: the next insert starts a growth (load past 3/4). */
	x.r = stress_row(s, "exhaust", "htab insert that grows, full arena", STRESS_EXHAUST_PAGES);
	x.what = "htab insert";
	err = exhaust_prefill(&x, x.skel->progs.htab_insert, 13);
	if (err)
		goto out;
	nbuckets = x.skel->arena->exhaust_htab.cur->nbuckets;
	htab_tries = exhaust_op(s, &x, x.skel->progs.htab_insert, 1, 13);
	err = htab_tries < 0 ? htab_tries : 0;
	if (err)
		goto out;
	grew_at_once = x.skel->arena->exhaust_htab.cur->nbuckets > nbuckets;
	/* With memory back, the next insert grows the table if that one could not. */
	x.skel->bss->op_key = 14;
	err = ak_run(x.skel->progs.htab_insert, NULL, 0, &retval) ?: retval;
	if (err)
		goto out;
	stress_verdict(x.r, !x.skel->bss->op_result &&
		x.skel->arena->exhaust_htab.cur->nbuckets > nbuckets && exhaust_sound(&x, 1, 15), 0,
		"with memory back: insert %lld, %llu buckets (were %u)", x.skel->bss->op_result,
		x.skel->arena->exhaust_htab.cur->nbuckets, nbuckets);
	stress_row_done(x.r);

	x.r = stress_row(s, "exhaust", "teardown: the allocator back to baseline", 0);
	err = ak_run(x.skel->progs.teardown, NULL, 0, &retval) ?: retval;
	ak_alloc_stats_read(&x.skel->arena->ak_allocator, &st);
	stress_verdict(x.r, !err && st.objects == before.objects && st.bytes == before.bytes, 0,
		       "after teardown: %llu objects, %llu bytes (before: %llu, %llu)",
		       st.objects, st.bytes, before.objects, before.bytes);
	stress_row_done(x.r);
	stress_progress_clear(s);
	printf("exhaust: a %u-page arena; failed cleanly with -ENOMEM before they fit: "
	       "list add %d tries, htab insert %d (%s)\n", STRESS_EXHAUST_PAGES, list_tries - 1,
	       htab_tries - 1, grew_at_once ? "it grew the table when it fit" :
	       "it went in without growing; the next insert grew the table");
	err = 0;
out:
	stress_exhaust__destroy(x.skel);
	return err;
}

const struct stress_scenario stress_scenario_exhaust = {
	.name = "exhaust",
	.help = "in a 128-page arena of its own, filled until no size is left and\n"
		"given back an object at a time, a list add and a hash-table\n"
		"insert that grows the table are tried after each: until they\n"
		"fit, each try must fail with -ENOMEM and leave the list or table\n"
		"as it was; an insert whose node fits goes in even when the\n"
		"larger bucket array does not (a later insert grows the table);\n"
		"teardown must bring the allocator back to where it was",
	.run = scenario_exhaust,
};
