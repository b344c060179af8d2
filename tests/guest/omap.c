// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * omap.h in the guest, driven from user space: batches of random calls
 * run by a BPF program on a real arena, every answer checked against a
 * model here (a sorted array); then the map read through the mmap with
 * the same header's ak_omap_check.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "guest/guest.h"
#include <arenakit/omap.h>
#include <arenakit/omap_user.h>
#include "guest/omap_shared.h"
#include "omap.skel.h"

#define MAX_RUNS 1000
#define UNIVERSE 20000

static unsigned long long model_keys[OMAP_MAX_OPS], model_values[OMAP_MAX_OPS];
static int model_n;
/* The live walk's cursor, as the model sees it: its last key, once it has one. */
static unsigned long long walk_from;
static int walk_started;

static int model_bound(unsigned long long k, int strict)
{
	int lo = 0, hi = model_n, mid;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (model_keys[mid] < k || (strict && model_keys[mid] == k))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void model_insert_at(int at, unsigned long long k, unsigned long long v)
{
	memmove(&model_keys[at + 1], &model_keys[at], (model_n - at) * sizeof(model_keys[0]));
	memmove(&model_values[at + 1], &model_values[at], (model_n - at) * sizeof(model_values[0]));
	model_keys[at] = k;
	model_values[at] = v;
	model_n++;
}

static void model_remove(int at)
{
	memmove(&model_keys[at], &model_keys[at + 1], (model_n - at - 1) * sizeof(model_keys[0]));
	memmove(&model_values[at], &model_values[at + 1],
		(model_n - at - 1) * sizeof(model_values[0]));
	model_n--;
}

/* The model's answer to @op, after the BPF program gave its own; 1 if they agree. */
static int model_agrees(const struct omap_op *op)
{
	int at = model_bound(op->key, 0), has = at < model_n && model_keys[at] == op->key;

	switch (op->kind) {
	case OMAP_OP_INSERT:
		if ((has && op->flags == AK_OMAP_NOEXIST) || (!has && op->flags == AK_OMAP_EXIST))
			return op->err == (has ? -EEXIST : -ENOENT);
		if (op->err)
			return 0;
		if (has)
			model_values[at] = op->value;
		else
			model_insert_at(at, op->key, op->value);
		return 1;
	case OMAP_OP_DELETE:
		if (!has)
			return op->err == -ENOENT;
		if (op->err || op->out_value != model_values[at])
			return 0;
		model_remove(at);
		return 1;
	case OMAP_OP_LOOKUP:
		return has ? !op->err && op->out_value == model_values[at] : op->err == -ENOENT;
	case OMAP_OP_BOUND:
		at = model_bound(op->key, op->flags);
		if (at == model_n)
			return op->err == -ENOENT;
		return !op->err && op->out_key == model_keys[at] && op->out_value == model_values[at];
	case OMAP_OP_WALK:
		/* The first key from the bound, then each after the last returned. */
		if (op->flags) {
			walk_from = op->key;
			walk_started = 0;
		}
		at = model_bound(walk_from, walk_started);
		if (at == model_n)
			return op->err == -ENOENT;
		walk_from = model_keys[at];
		walk_started = 1;
		return !op->err && op->out_key == model_keys[at] && op->out_value == model_values[at];
	default:
		if (!model_n)
			return op->err == -ENOENT;
		if (op->err || op->out_key != model_keys[0] || op->out_value != model_values[0])
			return 0;
		model_remove(0);
		return 1;
	}
}

Test(omap, random_calls_agree_with_a_sorted_array, .timeout = 300)
{
	struct omap *skel = omap__open();
	unsigned long long calls = 0, disagree = 0, walks = 0;
	int retval, batch, i, err;
	unsigned int runs;
	unsigned int seed = 1;
	struct omap_op *op;
	int walk_run = 0;

	cr_assert(skel);
	cr_assert_eq(arenakit_load_skeleton(skel->skeleton), 0);
	cr_assert_eq(ak_run(skel->progs.init_map, NULL, 0, &retval), 0);
	cr_assert_eq(retval, 0, "init_map: %d", retval);
	for (batch = 0; batch < 8; batch++) {
		for (i = 0; i < OMAP_MAX_OPS / 4; i++) {
			op = (struct omap_op *)&skel->arena->ops[i];
			*op = (struct omap_op){
				.kind = rand_r(&seed) % 5,
				.key = rand_r(&seed) % (batch < 6 ? UNIVERSE : UNIVERSE / 20),
				.value = rand_r(&seed),
			};
			if (op->kind == OMAP_OP_INSERT)
				op->flags = rand_r(&seed) % 3;
			else if (op->kind == OMAP_OP_BOUND)
				op->flags = rand_r(&seed) & 1;
			else if (op->kind == OMAP_OP_POP_FIRST && rand_r(&seed) % 4)
				op->kind = OMAP_OP_INSERT;	/* a pop is rarer than an insert */
			/*
			 * A walk's steps come in runs of up to 16 (a new walk
			 * one time in 4), some unchanged map between them,
			 * some not.
			 */
			if (walk_run > 0 && rand_r(&seed) % 4) {
				*op = (struct omap_op){ .kind = OMAP_OP_WALK };
				walk_run--;
			} else if (rand_r(&seed) % 16 == 0) {
				op->kind = OMAP_OP_WALK;
				op->flags = i == 0 || rand_r(&seed) % 4 == 0;
				walk_run = rand_r(&seed) % 16;
			}
		}
		skel->bss->nops = OMAP_MAX_OPS / 4;
		skel->bss->next_op = 0;
		err = ak_run_until_done(skel->progs.run_ops, NULL, 0, MAX_RUNS, &retval, &runs);
		cr_assert_eq(err, 0, "run_ops: %s", strerror(-err));
		cr_assert_eq(retval, 0, "run_ops: %d", retval);
		for (i = 0; i < OMAP_MAX_OPS / 4; i++) {
			op = (struct omap_op *)&skel->arena->ops[i];
			walks += op->kind == OMAP_OP_WALK;
			if (!model_agrees(op) && disagree++ < 5)
				fprintf(stderr, "call %d: kind %u key %llu flags %u: %lld, %llu, %llu\n",
					i, op->kind, op->key, op->flags, op->err, op->out_key,
					op->out_value);
			calls++;
		}
		/* Through the mmap, as a loader reads it: the tree is whole, its count the model's. */
		cr_assert_eq(ak_omap_check((struct ak_omap *)&skel->arena->map), 0);
		cr_assert_eq(ak_omap_count((struct ak_omap *)&skel->arena->map),
			     (unsigned long long)model_n);
	}
	printf("omap: %llu calls in BPF (%llu walk steps), %llu disagreements with the model, "
	       "%d keys at the end, %u levels\n", calls, walks, disagree, model_n,
	       skel->arena->map.depth);
	cr_expect_eq(disagree, 0);
	omap__destroy(skel);
}

/*
 * Four CPUs at once insert 2,000 keys each; then, every insert done, pop
 * the smallest until the map is empty: every key is popped exactly once,
 * by one CPU, and each CPU's pops come in increasing order (each took the
 * least there was, and keys only leave).
 */
Test(omap, four_cpus_insert_then_pop_every_key_once, .timeout = 300)
{
	static unsigned char seen[CPU_MAX * CPU_KEYS];
	struct omap *skel = omap__open();
	struct omap_cpu_args a[CPU_MAX];
	unsigned int total = 0, busy = 0, c, i;
	int retval, errs[CPU_MAX];
	unsigned long long k;

	cr_assert(skel);
	cr_assert_eq(arenakit_load_skeleton(skel->skeleton), 0);
	cr_assert_geq(sysconf(_SC_NPROCESSORS_ONLN), CPU_MAX, "this test wants 4 CPUs");
	cr_assert_eq(ak_run(skel->progs.init_shared, NULL, 0, &retval), 0);
	cr_assert_eq(retval, 0);
	for (c = 0; c < CPU_MAX; c++)
		a[c] = (struct omap_cpu_args){ .cpu = c };
	/* Every CPU inserts, then (all inserts done) every CPU pops. */
	guest_run_on_cpus(skel->progs.cpu_churn, CPU_MAX, a, sizeof(a[0]), errs);
	for (c = 0; c < CPU_MAX; c++)
		cr_assert(!errs[c] && !a[c].err && a[c].phase == 1, "CPU %u inserting: %d, map: %d",
			  c, errs[c], a[c].err);
	cr_assert_eq(ak_omap_count((struct ak_omap *)&skel->arena->shared), CPU_MAX * CPU_KEYS);
	guest_run_on_cpus(skel->progs.cpu_churn, CPU_MAX, a, sizeof(a[0]), errs);
	for (c = 0; c < CPU_MAX; c++) {
		cr_assert(!errs[c] && !a[c].err, "CPU %u: %d, map: %d", c, errs[c], a[c].err);
		cr_assert_eq(a[c].phase, 2, "CPU %u did not finish", c);
		cr_assert_eq(a[c].inserted, CPU_KEYS);
		for (i = 0; i < a[c].popped; i++) {
			k = skel->arena->popped[c][i];
			cr_assert_lt(k, CPU_MAX * CPU_KEYS, "a key no CPU inserted");
			cr_assert_eq(seen[k]++, 0, "key %llu popped twice", k);
			cr_assert(!i || skel->arena->popped[c][i - 1] < k,
				  "CPU %u popped %llu after %llu", c, k, skel->arena->popped[c][i - 1]);
		}
		total += a[c].popped;
		busy += a[c].busy;
	}
	cr_assert_eq(total, CPU_MAX * CPU_KEYS, "%u keys popped", total);
	cr_assert_eq(ak_omap_count((struct ak_omap *)&skel->arena->shared), 0);
	cr_assert_eq(ak_omap_check((struct ak_omap *)&skel->arena->shared), 0);
	printf("omap: 4 CPUs inserted %u keys and popped each once (%u, %u, %u and %u each; "
	       "%u -EBUSY tried again)\n", total, a[0].popped, a[1].popped, a[2].popped,
	       a[3].popped, busy);
	omap__destroy(skel);
}

/*
 * The loader's range walk through the mmap (ak_omap_next_copy) of what
 * the BPF program left: every key from a bound to an end, in order, each
 * with its value, as the model has them.
 */
Test(omap, the_loader_walks_a_range_through_the_mmap, .timeout = 120)
{
	struct omap *skel = omap__open();
	unsigned long long from = 1000, end = 3000, k, v;
	struct ak_omap_cursor c;
	unsigned int i, n = 0, want = 0;
	int retval, err;

	cr_assert(skel);
	cr_assert_eq(arenakit_load_skeleton(skel->skeleton), 0);
	cr_assert_eq(ak_run(skel->progs.init_map, NULL, 0, &retval), 0);
	for (i = 0; i < 4000; i++) {
		struct omap_op *op = (struct omap_op *)&skel->arena->ops[i];

		*op = (struct omap_op){ .kind = OMAP_OP_INSERT, .key = i * 7 % 4000,
					.value = i * 7 % 4000 * 5 + 1 };
		want += op->key >= from && op->key < end;
	}
	skel->bss->nops = 4000;
	skel->bss->next_op = 0;
	cr_assert_eq(ak_run_until_done(skel->progs.run_ops, NULL, 0, MAX_RUNS, &retval, NULL), 0);
	cr_assert_eq(retval, 0);
	ak_omap_cursor_init(&c, &from, &end, 1);
	while ((err = ak_omap_next_copy((struct ak_omap *)&skel->arena->map, &c, &k, &v)) == 0) {
		cr_assert_eq(k, from + n, "key %llu, want %llu", k, from + n);
		cr_assert_eq(v, k * 5 + 1);
		n++;
	}
	cr_assert_eq(err, -ENOENT);
	cr_assert_eq(n, want, "%u keys in [%llu, %llu), want %u", n, from, end, want);
	printf("omap: the loader walked %u keys of a range through the mmap\n", n);
	omap__destroy(skel);
}

/*
 * The read side on 4 CPUs: two look up and walk stable keys, with no
 * lock, while two insert and delete batches of other keys around them
 * (splits, merges, a root that grows and shrinks): every lookup finds
 * its key with its value, every walk the stable keys after its own.
 */
Test(omap, lookups_on_two_cpus_find_every_key_while_two_change_the_tree, .timeout = 300)
{
	struct omap *skel = omap__open();
	struct omap_read_args a[CPU_MAX];
	unsigned long long lookups = 0, wrong = 0, walked = 0;
	int retval, errs[CPU_MAX];
	unsigned int c;

	cr_assert(skel);
	cr_assert_eq(arenakit_load_skeleton(skel->skeleton), 0);
	cr_assert_geq(sysconf(_SC_NPROCESSORS_ONLN), CPU_MAX, "this test wants 4 CPUs");
	cr_assert_eq(ak_run_until_done(skel->progs.init_stable, NULL, 0, UINT_MAX, &retval, NULL), 0);
	cr_assert_eq(retval, 0);
	for (c = 0; c < CPU_MAX; c++)
		a[c] = (struct omap_read_args){ .cpu = c, .reader = c >= READ_WRITERS };
	guest_run_on_cpus(skel->progs.read_churn, CPU_MAX, a, sizeof(a[0]), errs);
	for (c = 0; c < CPU_MAX; c++) {
		cr_assert(!errs[c] && !a[c].err, "CPU %u: %d, map: %d", c, errs[c], a[c].err);
		if (!a[c].reader) {
			cr_assert_eq(a[c].round, READ_ROUNDS, "writer %u did not finish", c);
			continue;
		}
		cr_expect_eq(a[c].wrong, 0, "reader %u: %llu of %llu lookups (or their walks) wrong",
			     c, a[c].wrong, a[c].done);
		cr_expect_gt(a[c].done, 0, "reader %u looked nothing up", c);
		lookups += a[c].done;
		wrong += a[c].wrong;
		walked += a[c].walked;
	}
	cr_assert_eq(ak_omap_count((struct ak_omap *)&skel->arena->shared), READ_STABLE);
	cr_assert_eq(ak_omap_check((struct ak_omap *)&skel->arena->shared), 0);
	printf("omap: %llu lookups and %llu walk steps on 2 CPUs, %llu wrong, while 2 CPUs made "
	       "%llu changes (%u and %u busy answers tried again)\n", lookups, walked, wrong,
	       a[0].done + a[1].done, a[2].busy, a[3].busy);
	omap__destroy(skel);
}
