// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * omap.h built for user space, over heap pages (alloc_pages.c), against a
 * model: a sorted array. Every call's answer (its error, the key and value
 * it copies) must be the model's, and the tree must pass ak_omap_check
 * after every change; keys come from a small range, so inserts meet
 * present keys, deletes absent ones, and nodes split and merge often.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>

/* One thread: nothing races, so a find's read section follows links as they are, as in BPF. */
#define AK_ARENA_CLAMP(p) (p)
#include "host/alloc_pages.h"
#include <arenakit/omap.h>

struct key2 {
	uint64_t hi, lo;
};

struct value {
	uint64_t a, b;
	uint32_t c;	/* 20 bytes: a value need not be whole words */
};

enum { MODEL_MAX = 1 << 16 };

static struct ak_omap map;
static struct key2 model_keys[MODEL_MAX];
static struct value model_values[MODEL_MAX];
static int model_n;

static void teardown(void)
{
	expect_pages_accounted();
}

TestSuite(omap_host, .fini = teardown);

static int key_cmp(const struct key2 *a, const struct key2 *b)
{
	if (a->hi != b->hi)
		return a->hi < b->hi ? -1 : 1;
	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* The model's first index at or after @k (after, if @strict). */
static int model_bound(const struct key2 *k, int strict)
{
	int lo = 0, hi = model_n, mid, c;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		c = key_cmp(&model_keys[mid], k);
		if (c < 0 || (strict && c == 0))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int model_has(const struct key2 *k, int *at)
{
	*at = model_bound(k, 0);
	return *at < model_n && !key_cmp(&model_keys[*at], k);
}

/* While a walk runs: by key, there since it began (a removal clears it). */
static unsigned char (*walk_throughout)[5000];

static void model_remove(int at)
{
	if (walk_throughout && model_keys[at].hi < 4 && model_keys[at].lo < 5000)
		walk_throughout[model_keys[at].hi][model_keys[at].lo] = 0;
	memmove(&model_keys[at], &model_keys[at + 1], (model_n - at - 1) * sizeof(model_keys[0]));
	memmove(&model_values[at], &model_values[at + 1],
		(model_n - at - 1) * sizeof(model_values[0]));
	model_n--;
}

static struct value value_of(const struct key2 *k, unsigned int version)
{
	return (struct value){ .a = k->hi * 3 + 1, .b = k->lo ^ version, .c = version };
}

/* Values compared by field: a struct value's last 4 bytes are padding, never copied. */
static int value_eq(const struct value *a, const struct value *b)
{
	return a->a == b->a && a->b == b->b && a->c == b->c;
}

static void expect_found(int err, int at, const struct key2 *got_key, const struct value *got,
			 const char *what)
{
	if (at >= model_n) {
		cr_assert_eq(err, -ENOENT, "%s: %d, the model has no key there", what, err);
		return;
	}
	cr_assert_eq(err, 0, "%s: %d, the model has (%lu, %lu)", what, err,
		     (unsigned long)model_keys[at].hi, (unsigned long)model_keys[at].lo);
	cr_assert_eq(key_cmp(got_key, &model_keys[at]), 0, "%s: another key", what);
	cr_assert(value_eq(got, &model_values[at]), "%s: another value", what);
}

/* A found value's copy: 0, or the error a NULL came with. */
static int copy_found(const struct value *p, const int *err, struct value *got)
{
	if (!p)
		return *err;
	*got = *p;
	return 0;
}

/* One random call, checked against the model; returns 1 if it changed the map. */
static int random_call(unsigned int *seed, unsigned long long universe)
{
	struct key2 k = { rand_r(seed) % 4, rand_r(seed) % universe }, got_key;
	struct value v = value_of(&k, rand_r(seed)), got;
	struct value *p;
	int what = rand_r(seed) % 10, at, err, had;
	unsigned int flags;

	had = model_has(&k, &at);
	switch (what) {
	case 0: case 1: case 2: case 3:
		flags = rand_r(seed) % 3;
		err = ak_omap_update(&map, &k, &v, flags);
		if ((had && flags == AK_OMAP_NOEXIST) || (!had && flags == AK_OMAP_EXIST)) {
			cr_assert_eq(err, had ? -EEXIST : -ENOENT, "insert, flags %u: %d", flags, err);
			return 0;
		}
		cr_assert_eq(err, 0, "insert, flags %u: %d", flags, err);
		if (!had) {
			cr_assert_lt(model_n, MODEL_MAX);
			memmove(&model_keys[at + 1], &model_keys[at],
				(model_n - at) * sizeof(model_keys[0]));
			memmove(&model_values[at + 1], &model_values[at],
				(model_n - at) * sizeof(model_values[0]));
			model_keys[at] = k;
			model_n++;
		}
		model_values[at] = v;
		return 1;
	case 4: case 5:
		memset(&got, 0, sizeof(got));
		err = ak_omap_lookup_and_delete(&map, &k, &got);
		if (!had) {
			cr_assert_eq(err, -ENOENT, "delete of an absent key: %d", err);
			return 0;
		}
		expect_found(err, at, &k, &got, "delete");
		model_remove(at);
		return 1;
	case 6:
		p = ak_omap_lookup(&map, &k, &err);
		expect_found(copy_found(p, &err, &got), had ? at : model_n, &k, &got, "lookup");
		return 0;
	case 7:
		flags = rand_r(seed) & 1;
		p = ak_omap_bound(&map, &k, flags, &got_key, &err);
		expect_found(copy_found(p, &err, &got), model_bound(&k, flags), &got_key, &got,
			     "bound");
		return 0;
	case 8:
		if (rand_r(seed) & 1) {
			p = ak_omap_first(&map, &got_key, &err);
			expect_found(copy_found(p, &err, &got), model_n ? 0 : model_n, &got_key, &got,
				     "first");
		} else {
			p = ak_omap_last(&map, &got_key, &err);
			expect_found(copy_found(p, &err, &got), model_n ? model_n - 1 : model_n,
				     &got_key, &got, "last");
		}
		return 0;
	default:
		err = ak_omap_pop_first(&map, &got_key, &got);
		expect_found(err, model_n ? 0 : model_n, &got_key, &got, "pop_first");
		if (!err)
			model_remove(0);
		return !err;
	}
}

Test(omap_host, every_answer_is_a_sorted_arrays)
{
	unsigned long long calls = 0, changes = 0;
	unsigned int run, seed, i, max_depth = 0;

	for (run = 1; run <= 40; run++) {
		seed = run;
		cr_assert_eq(ak_omap_init(&map, sizeof(struct key2), sizeof(struct value)), 0);
		model_n = 0;
		for (i = 0; i < 20000; i++) {
			/* Grow for a while, then a range small enough that the map shrinks. */
			changes += random_call(&seed, i < 12000 ? 5000 : 200);
			calls++;
			if (map.depth > max_depth)
				max_depth = map.depth;
			if (i % 97 == 0)
				cr_assert_eq(ak_omap_check(&map), 0, "check after call %u", i);
			cr_assert_eq(ak_omap_count(&map), (unsigned long long)model_n);
		}
		cr_assert_eq(ak_omap_check(&map), 0);
		cr_assert_eq(ak_omap_destroy(&map), 0);
		cr_assert_eq(map.depth, 0);
		cr_assert_eq(alloc_stats().objects, 0, "every node freed");
	}
	printf("omap_host: %llu calls (%llu changes) agree with the model; %u levels at most\n",
	       calls, changes, max_depth);
}

/*
 * A queue's pattern: keys in ascending order until the root's second
 * child is full, then popped from the front to the last one (and its
 * mirror: descending until the first child is full, then taken from the
 * back). The emptying subtree's only neighbour is full, so a node left
 * with no key must take one from it through the root: every way a node
 * is refilled or merged is taken on the way.
 */
static unsigned long long fill_until_a_root_child_is_full(int descending)
{
	struct key2 k = {};
	struct value v;
	unsigned long long n = 0;

	cr_assert_eq(ak_omap_init(&map, sizeof(struct key2), sizeof(struct value)), 0);
	for (;;) {
		k.lo = descending ? 1000000 - n : n;
		v = value_of(&k, 7);
		cr_assert_eq(ak_omap_update(&map, &k, &v, AK_OMAP_NOEXIST), 0);
		n++;
		if (map.depth == 3 && map.root->nkeys == 1 &&
		    __ak_omap_child(&map, map.root, descending ? 0 : 1)->nkeys == AK_OMAP_FANOUT)
			return n;
		cr_assert_lt(n, 1000000, "the root's child never filled");
	}
}

static void expect_value_of(const struct key2 *k, const struct value *got)
{
	struct value v = value_of(k, 7);

	cr_assert(value_eq(got, &v));
}

Test(omap_host, an_ascending_fill_drains_in_order_by_pop_first)
{
	unsigned long long n = fill_until_a_root_child_is_full(0), i;
	struct key2 got_key;
	struct value got;

	cr_assert_eq(ak_omap_check(&map), 0);
	for (i = 0; i < n; i++) {
		cr_assert_eq(ak_omap_pop_first(&map, &got_key, &got), 0, "pop %llu", i);
		cr_assert_eq(got_key.lo, i, "pop %llu: key %lu", i, (unsigned long)got_key.lo);
		expect_value_of(&got_key, &got);
		cr_assert_eq(ak_omap_check(&map), 0, "check after pop %llu of %llu", i, n);
	}
	cr_assert_eq(ak_omap_pop_first(&map, &got_key, &got), -ENOENT);
	cr_assert_eq(map.depth, 1, "an empty map is one leaf");
	cr_assert_eq(ak_omap_destroy(&map), 0);
	printf("omap_host: %llu keys in ascending order drained by pop_first\n", n);
}

/* The nodes of the subtree under @n (the tree is whole: no lock taken). */
static unsigned long long nodes_under(struct ak_omap_node *n)
{
	unsigned long long nodes = 1;
	unsigned int i;

	for (i = 0; !n->leaf && i <= n->nkeys; i++)
		nodes += nodes_under(__ak_omap_child(&map, n, i));
	return nodes;
}

/* The chunks the map's entries are cut from. */
static unsigned long long chunks_of_map(void)
{
	unsigned long long chunks = 0, *c;

	for (c = map.chunks; c; c = (unsigned long long *)*c)
		chunks++;
	return chunks;
}

/*
 * A drain keeps every entry and node (the allocator's count of objects
 * does not fall), and the same keys put back take none from the
 * allocator. A trim with keys in gives back the spare nodes only, and
 * leaves the tree's nodes and the chunks; with none, the chunks too: the
 * map is its root leaf again, and the destroy leaves the count where it
 * began.
 */
Test(omap_host, a_drain_keeps_its_entries_for_the_next_inserts_until_a_trim)
{
	unsigned long long before = alloc_stats().objects, n, filled, trimmed, i;
	struct key2 k = {};
	struct value v;

	n = fill_until_a_root_child_is_full(0);
	filled = alloc_stats().objects;
	for (i = 0; i < n; i++)
		cr_assert_eq(ak_omap_pop_first(&map, &k, &v), 0);
	cr_expect_eq(alloc_stats().objects, filled, "the drain freed %lld objects",
		     (long long)(filled - alloc_stats().objects));
	cr_assert_not_null(map.idle, "the entries are kept");
	for (i = 0; i < n; i++) {
		k.lo = i;
		v = value_of(&k, 7);
		cr_assert_eq(ak_omap_update(&map, &k, &v, AK_OMAP_NOEXIST), 0);
	}
	cr_expect_eq(alloc_stats().objects, filled, "the same keys again took %lld objects",
		     (long long)(alloc_stats().objects - filled));
	for (i = 0; i < n / 2; i++)	/* the nodes merges emptied kept */
		cr_assert_eq(ak_omap_pop_first(&map, &k, &v), 0);
	trimmed = alloc_stats().objects;
	cr_assert_eq(ak_omap_trim(&map), 0);
	trimmed -= alloc_stats().objects;
	cr_expect(!map.spare && !map.nspare && map.idle, "the trim: spare nodes left, or entries freed");
	cr_expect_eq(alloc_stats().objects - before, chunks_of_map() + nodes_under(map.root),
		     "after the trim: %llu objects for %llu chunks and %llu nodes",
		     alloc_stats().objects - before, chunks_of_map(), nodes_under(map.root));
	cr_assert_eq(ak_omap_check(&map), 0);
	for (i = n / 2; i < n; i++) {
		k.lo = i;
		cr_assert_not_null(ak_omap_lookup(&map, &k, NULL), "key %llu after the trim", i);
	}
	for (i = n / 2; i < n; i++)
		cr_assert_eq(ak_omap_pop_first(&map, &k, &v), 0);
	cr_assert_eq(ak_omap_trim(&map), 0);
	cr_expect(!map.idle && !map.chunks && !map.retired && !map.spare,
		  "an empty map's trim left some kept");
	cr_expect_eq(alloc_stats().objects - before, 1, "an empty map is its root leaf");
	k.lo = 5;
	cr_assert_eq(ak_omap_update(&map, &k, &v, AK_OMAP_NOEXIST), 0, "an insert after the trim");
	cr_assert_eq(ak_omap_destroy(&map), 0);
	cr_expect_eq(alloc_stats().objects, before, "the destroy left %lld objects",
		     (long long)(alloc_stats().objects - before));
	printf("omap_host: %llu keys drained and put back with no allocation; "
	       "a trim with %llu in freed %llu spare nodes\n", n, n - n / 2, trimmed);
}

/*
 * After ak_omap_reserve, the nosleep inserts it was sized for take no
 * object from the allocator: 600 keys in ascending order split a leaf
 * every 16 keys, and the reserve's 64 nodes cover those and the inner
 * splits; the map's idle count is what its idle list holds throughout.
 */
Test(omap_host, a_reserve_serves_nosleep_inserts_with_no_allocation)
{
	unsigned long long before, i, idle, *e;
	struct key2 k = {};
	struct value v;

	cr_assert_eq(ak_omap_init(&map, sizeof(struct key2), sizeof(struct value)), 0);
	cr_assert_eq(ak_omap_reserve(&map, 600, 64), 0);
	cr_assert_geq(map.nidle, 600);
	cr_assert_geq(map.nspare, 64);
	before = alloc_stats().objects;
	for (i = 0; i < 600; i++) {
		k.lo = i;
		v = value_of(&k, 7);
		cr_assert_eq(ak_omap_update_nosleep(&map, &k, &v, AK_OMAP_NOEXIST), 0, "insert %llu", i);
	}
	cr_expect_eq(alloc_stats().objects, before, "the reserved inserts took %lld objects",
		     (long long)(alloc_stats().objects - before));
	cr_assert_eq(ak_omap_check(&map), 0);
	for (i = 0; i < 300; i++)
		cr_assert_eq(ak_omap_pop_first(&map, &k, &v), 0);
	for (idle = 0, e = map.idle; e; e = (unsigned long long *)*e)
		idle++;
	cr_expect_eq(idle, map.nidle, "%llu entries idle, the count says %llu", idle, map.nidle);
	cr_assert_eq(ak_omap_reserve(&(struct ak_omap){}, 1, 1), -EINVAL, "a map not initialised");
	cr_assert_eq(ak_omap_destroy(&map), 0);
	printf("omap_host: 600 nosleep inserts after ak_omap_reserve(600, 64), no allocation\n");
}

/*
 * The read side: a find answers while another holds the lock (its read
 * section takes none), waits out a change (an odd count) by taking the
 * lock, and every change moves the count on by two, even again after it.
 */
Test(omap_host, finds_read_without_the_lock_and_wait_out_a_change)
{
	struct key2 k = {}, found = {};
	unsigned long long gen;
	struct value v, *got;
	int err = 0;

	cr_assert_eq(ak_omap_init(&map, sizeof(struct key2), sizeof(struct value)), 0);
	for (k.lo = 0; k.lo < 100; k.lo++) {
		v = value_of(&k, 7);
		cr_assert_eq(ak_omap_update(&map, &k, &v, AK_OMAP_NOEXIST), 0);
	}
	gen = map.gen;
	cr_assert_eq(gen % 2, 0, "the count is odd (%llu) with no change running", gen);
	k.lo = 100;
	v = value_of(&k, 7);
	cr_assert_eq(ak_omap_update(&map, &k, &v, AK_OMAP_NOEXIST), 0);
	cr_assert_eq(ak_omap_delete(&map, &k), 0);
	cr_assert_eq(ak_omap_update(&map, &k, &v, AK_OMAP_EXIST), -ENOENT);
	cr_assert_eq(map.gen, gen + 4, "two changes and a refused one moved the count by %llu",
		     map.gen - gen);

	cr_assert_eq(ak_lock_acquire(&map.lock), 0);
	k.lo = 42;
	got = ak_omap_lookup(&map, &k, &err);
	cr_assert_not_null(got, "a lookup under another's lock: %d", err);
	expect_value_of(&k, got);
	got = ak_omap_bound(&map, &k, 1, &found, &err);
	cr_assert(got && found.lo == 43, "the bound after 42 under another's lock");
	cr_assert(ak_omap_first(&map, &found, &err) && found.lo == 0);
	cr_assert(ak_omap_last(&map, &found, &err) && found.lo == 99);

	map.gen = gen + 5;	/* as a holder's change leaves it while it runs */
	err = 0;
	cr_assert_null(ak_omap_lookup(&map, &k, &err), "a lookup read a tree mid-change");
	cr_assert(err == -EBUSY || err == -AK_EBUDGET, "a lookup mid-change: %d", err);
	ak_lock_release(&map.lock);
	got = ak_omap_lookup(&map, &k, &err);
	cr_assert_not_null(got, "a lookup after the holder left: %d", err);
	expect_value_of(&k, got);
	map.gen = gen + 6;
	cr_assert_eq(ak_omap_destroy(&map), 0);
	printf("omap_host: finds under another's lock; mid-change they take the lock\n");
}

Test(omap_host, a_descending_fill_drains_from_the_back)
{
	unsigned long long n = fill_until_a_root_child_is_full(1), i;
	struct key2 got_key;
	struct value got, *p;
	int err;

	for (i = 0; i < n; i++) {
		p = ak_omap_last(&map, &got_key, &err);
		cr_assert_not_null(p, "last: %d", err);
		cr_assert_eq(got_key.lo, 1000000 - i);
		expect_value_of(&got_key, p);
		cr_assert_eq(ak_omap_lookup_and_delete(&map, &got_key, &got), 0);
		expect_value_of(&got_key, &got);
		cr_assert_eq(ak_omap_check(&map), 0, "check after delete %llu of %llu", i, n);
	}
	cr_assert_null(ak_omap_last(&map, &got_key, &err));
	cr_assert_eq(err, -ENOENT);
	cr_assert_eq(ak_omap_destroy(&map), 0);
}

/*
 * Range walks: from a bound to before an end, each key present throughout
 * once and in order while random calls change the map between steps; an
 * exact walk is stale after any change, and complete on a quiet map.
 */
Test(omap_host, a_walk_returns_each_key_there_throughout_once_in_order)
{
	static unsigned char throughout[4][5000], seen[4][5000];
	unsigned long long steps = 0;
	unsigned int seed = 7, run, i;
	struct ak_omap_cursor c;
	struct key2 from, end, got_key, last = {};
	struct value *p;
	int err, have_last;

	cr_assert_eq(ak_omap_init(&map, sizeof(struct key2), sizeof(struct value)), 0);
	model_n = 0;
	for (run = 0; run < 200; run++) {
		for (i = 0; i < 300; i++)
			random_call(&seed, 5000);
		from = (struct key2){ rand_r(&seed) % 4, rand_r(&seed) % 5000 };
		end = (struct key2){ from.hi + 1, rand_r(&seed) % 5000 };
		memset(throughout, 0, sizeof(throughout));
		memset(seen, 0, sizeof(seen));
		for (i = model_bound(&from, 0); i < (unsigned int)model_n &&
		     key_cmp(&model_keys[i], &end) < 0; i++)
			throughout[model_keys[i].hi][model_keys[i].lo] = 1;
		ak_omap_cursor_init(&c, &from, &end, 0);
		walk_throughout = throughout;
		have_last = 0;
		while (!(err = ak_omap_next(&map, &c, &got_key, &p))) {
			steps++;
			cr_assert(key_cmp(&got_key, &from) >= 0 && key_cmp(&got_key, &end) < 0,
				  "a key outside the range");
			cr_assert(!have_last || key_cmp(&got_key, &last) > 0, "out of order");
			cr_assert_eq(seen[got_key.hi][got_key.lo]++, 0, "a key twice");
			last = got_key;
			have_last = 1;
			/* A change between two steps (what it removes is not there throughout). */
			if (rand_r(&seed) % 3 == 0)
				random_call(&seed, 5000);
		}
		walk_throughout = NULL;
		cr_assert_eq(err, -ENOENT, "the walk ended with %d", err);
		for (i = 0; i < 4 * 5000; i++)
			cr_assert(!throughout[i / 5000][i % 5000] || seen[i / 5000][i % 5000],
				  "key (%u, %u), there throughout, missed", i / 5000, i % 5000);
	}
	/* Exact: complete on a quiet map, stale after a change. */
	ak_omap_cursor_init(&c, NULL, NULL, 1);
	for (i = 0; !(err = ak_omap_next(&map, &c, &got_key, &p)); i++)
		;
	cr_assert_eq(err, -ENOENT);
	cr_assert_eq(i, (unsigned int)model_n, "a quiet exact walk is complete");
	ak_omap_cursor_init(&c, NULL, NULL, 1);
	cr_assert_eq(ak_omap_next(&map, &c, &got_key, &p), 0);
	random_call(&seed, 5000);
	got_key = model_keys[0];
	cr_assert_eq(ak_omap_update(&map, &got_key, &model_values[0], AK_OMAP_ANY), 0);
	cr_assert_eq(ak_omap_next(&map, &c, &got_key, &p), -AK_ESTALE);
	cr_assert_eq(ak_omap_destroy(&map), 0);
	printf("omap_host: 200 range walks of %llu steps in all under random changes\n", steps);
}

/*
 * A destroyed map answers -EINVAL to every read, a walk's step too: its
 * root is gone, and nothing is read through it (the step once descended
 * from the NULL root a destroy leaves).
 */
Test(omap_host, a_destroyed_map_is_einval_to_every_read)
{
	struct key2 k = { 1, 2 }, got_key;
	struct ak_omap_cursor c;
	struct value v = {}, *p;
	unsigned long long i;
	int err;

	cr_assert_eq(ak_omap_init(&map, sizeof(struct key2), sizeof(struct value)), 0);
	for (i = 0; i < 3; i++) {
		k.lo = i;
		cr_assert_eq(ak_omap_update(&map, &k, &v, AK_OMAP_NOEXIST), 0);
	}
	ak_omap_cursor_init(&c, NULL, NULL, 0);
	err = ak_omap_next(&map, &c, &got_key, &p);
	cr_assert_eq(err, 0, "a step before: %d", err);
	cr_assert_eq(ak_omap_destroy(&map), 0);
	p = NULL;
	err = ak_omap_next(&map, &c, &got_key, &p);
	cr_expect_null(p, "a step of a kept cursor");
	cr_expect_eq(err, -EINVAL, "a step of a kept cursor: %d", err);
	ak_omap_cursor_init(&c, NULL, NULL, 0);
	err = ak_omap_next(&map, &c, &got_key, &p);
	cr_expect_null(p, "a fresh walk's step");
	cr_expect_eq(err, -EINVAL, "a fresh walk's step: %d", err);
	err = 0;
	cr_expect_null(ak_omap_lookup(&map, &k, &err), "a lookup");
	cr_expect_eq(err, -EINVAL, "a lookup: %d", err);
	err = 0;
	cr_expect_null(ak_omap_first(&map, &got_key, &err), "first");
	cr_expect_eq(err, -EINVAL, "first: %d", err);
}
