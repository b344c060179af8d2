// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * omap.h's calls as a table for the generator (gen.h), with their
 * sequential model: a set of keys below 64 (a bit each), values key * 3,
 * but key 62's: it holds only key 9's value, which a rekey moves there.
 * The states: one full leaf (keys 1-32), where the next new key splits it
 * and grows a root from a spare stock that is empty, so racing inserts
 * refill it outside the lock and take it from one another; and a tree of
 * two levels (keys 1-40), where deletes merge leaves.
 */
#include <errno.h>
#include <string.h>
#include <criterion/criterion.h>

#include "explore/gen.h"
#include <arenakit/omap.h>

static struct ak_omap __arena_global map;

/* ---- the starting states ---- */

static void setup_keys(unsigned long long last)
{
	unsigned long long k, v;

	memset(&map, 0, sizeof(map));
	if (ak_omap_init(&map, sizeof(k), sizeof(v))) {
		explore_fail("setup: init");
		return;
	}
	for (k = 1; k <= last; k++) {
		v = k * 3;
		if (ak_omap_update(&map, &k, &v, AK_OMAP_NOEXIST))
			explore_fail("setup: update %llu", k);
	}
}

static void setup_full_leaf(void)
{
	setup_keys(AK_OMAP_FANOUT);
}

static void setup_two_levels(void)
{
	setup_keys(40);
}

enum { FULL_LEAF, TWO_LEVELS, NSTATES };

static const struct gen_state states[NSTATES] = {
	[FULL_LEAF] = { "keys 1-32, one full leaf", setup_full_leaf },
	[TWO_LEVELS] = { "keys 1-40, two levels", setup_two_levels },
};

/* ---- the calls ---- */

/* A new key of this thread's (33 + thread): a split in the full leaf. */
static void op_insert_new(struct gen_call *c)
{
	unsigned long long k = 33 + (unsigned long long)c->thread, v = k * 3;

	c->out = k;
	c->ret = ak_omap_update(&map, &k, &v, AK_OMAP_NOEXIST);
}

static void op_update_present(struct gen_call *c)
{
	unsigned long long k = 5, v = k * 3;

	c->ret = ak_omap_update(&map, &k, &v, AK_OMAP_ANY);
}

static void op_delete(struct gen_call *c)
{
	unsigned long long k = 3, v = 0;

	c->ret = ak_omap_lookup_and_delete(&map, &k, &v);
	c->aux = v;
}

static void op_pop_first(struct gen_call *c)
{
	unsigned long long k = 0, v = 0;

	c->ret = ak_omap_pop_first(&map, &k, &v);
	c->out = k;
	c->aux = v;
}

/* Key 20: a split of the full leaf moves it to the new right leaf. */
static void op_lookup(struct gen_call *c)
{
	unsigned long long k = 20, *v;
	int err = 0;

	v = ak_omap_lookup(&map, &k, &err);
	c->ret = v ? 0 : err;
	c->aux = v ? *v : 0;
}

static void op_bound(struct gen_call *c)
{
	unsigned long long k = 2, found = 0, *v;
	int err = 0;

	v = ak_omap_bound(&map, &k, 1, &found, &err);
	c->ret = v ? 0 : err;
	c->out = found;
	c->aux = v ? *v : 0;
}

/* Key 9's entry to key 62, value and all. */
static void op_rekey(struct gen_call *c)
{
	unsigned long long from = 9, to = 62;

	c->ret = ak_omap_rekey(&map, &from, &to);
}

/* The value a key holds: key * 3, and key 62 the value key 9 had. */
static unsigned long long value_of(unsigned long long k)
{
	return k == 62 ? 27 : k * 3;
}

/* A live walk of every key: the keys it returned as bits of out. */
static void op_walk(struct gen_call *c)
{
	unsigned long long k = 0, last = 0, *v;
	struct ak_omap_cursor cursor;
	int err = 0, calls;

	ak_omap_cursor_init(&cursor, NULL, NULL, 0);
	for (calls = 0; calls < 80; calls++) {
		err = ak_omap_next(&map, &cursor, &k, &v);
		if (err) {
			c->ret = err == -ENOENT ? 0 : err;
			return;
		}
		/* Read at once, as if by the step: a later read racing a change is the caller's. */
		explore_read_at_once(1);
		if (k >= 64 || *v != value_of(k) || (c->out >> k & 1) || (calls && k <= last)) {
			c->out = ~0ULL;		/* a stranger, a twin, or out of order */
			c->ret = 0;
			return;
		}
		c->out |= 1ULL << k;
		last = k;
	}
	explore_fail("T%d: the walk went on past 80 calls", c->thread);
}

static void op_count(struct gen_call *c)
{
	c->out = ak_omap_count(&map);
	c->ret = ak_omap_check(&map);
}

enum { INSERT_NEW, UPDATE, DELETE, POP_FIRST, REKEY, LOOKUP, BOUND, WALK, COUNT, NOPS };

static const struct gen_op ops[NOPS] = {
	[INSERT_NEW] = { "update(new, NOEXIST)", GEN_CHANGES, op_insert_new },
	[UPDATE] = { "update(5, ANY)", GEN_CHANGES, op_update_present },
	[DELETE] = { "lookup_and_delete(3)", GEN_CHANGES, op_delete },
	[POP_FIRST] = { "pop_first", GEN_CHANGES, op_pop_first },
	[REKEY] = { "rekey(9 to 62)", GEN_CHANGES, op_rekey },
	[LOOKUP] = { "lookup(20)", GEN_READS_FREED, op_lookup },
	[BOUND] = { "bound(after 2)", GEN_READS_FREED, op_bound },
	[WALK] = { "walk", GEN_SPANS | GEN_READS_FREED, op_walk },
	[COUNT] = { "count and check", 0, op_count },
};

/* ---- the model: the keys present, and what each walk must have seen ---- */

struct model {
	unsigned long long keys;			/* a bit a key */
	unsigned long long at_begin[GEN_MAX_CALLS];	/* a walk's keys when it began */
};

static struct model m;

static void model_begin(int st)
{
	memset(&m, 0, sizeof(m));
	m.keys = (st == FULL_LEAF ? (1ULL << (AK_OMAP_FANOUT + 1)) : (1ULL << 41)) - 2;
}

static int has(unsigned long long k)
{
	return k < 64 && (m.keys >> k & 1);
}

/* The first key after @k, or 64. */
static unsigned long long after(unsigned long long k)
{
	for (k++; k < 64 && !has(k); k++)
		;
	return k;
}

static int model_step(const struct gen_call *c, int phase, int others_change)
{
	unsigned long long k;

	(void)others_change;
	if (gen_weak(c->ret))
		return 1;	/* nothing done: busy, or the budget */
	switch (c->op - ops) {
	case INSERT_NEW:
		if (c->ret == -EEXIST)
			return has(c->out) ? 1 : gen_refuse("insert: -EEXIST for an absent key");
		if (c->ret || has(c->out))
			return gen_refuse("insert: an undocumented answer, or a key present");
		m.keys |= 1ULL << c->out;
		return 1;
	case UPDATE:
		if (c->ret)
			return gen_refuse("update(ANY): an error");
		m.keys |= 1ULL << 5;
		return 1;
	case DELETE:
		if (c->ret == -ENOENT)
			return has(3) ? gen_refuse("delete: a present key not found") : 1;
		if (c->ret || !has(3) || c->aux != 9)
			return gen_refuse("delete: an absent key, or another value");
		m.keys &= ~(1ULL << 3);
		return 1;
	case POP_FIRST:
		k = after(0);
		if (c->ret == -ENOENT)
			return k == 64 ? 1 : gen_refuse("pop_first: empty with keys in");
		if (c->ret || c->out != k || c->aux != value_of(k))
			return gen_refuse("pop_first: not the smallest key, or not its value");
		m.keys &= ~(1ULL << k);
		return 1;
	case REKEY:
		if (c->ret == -ENOENT)
			return has(9) ? gen_refuse("rekey: a present key not found") : 1;
		if (c->ret == -EEXIST)
			return has(9) && has(62) ? 1 : gen_refuse("rekey: -EEXIST, 62 absent");
		if (c->ret || !has(9) || has(62))
			return gen_refuse("rekey: an undocumented answer, or 9 absent, or 62 present");
		m.keys = (m.keys & ~(1ULL << 9)) | 1ULL << 62;
		return 1;
	case LOOKUP:
		if (c->ret == -ENOENT)
			return has(20) ? gen_refuse("lookup: a present key not found") : 1;
		return !c->ret && has(20) && c->aux == 60 ? 1 : gen_refuse("lookup: a wrong answer");
	case BOUND:
		k = after(2);
		if (c->ret == -ENOENT)
			return k == 64 ? 1 : gen_refuse("bound: none, with a key after 2");
		return !c->ret && c->out == k && c->aux == value_of(k) ? 1 :
			gen_refuse("bound: not the first key after 2");
	case WALK:
		if (phase == 0) {
			m.at_begin[c->thread] = m.keys;
			return 1;
		}
		if (c->ret || c->out == ~0ULL)
			return gen_refuse("walk: an error, a stranger, a twin or out of order");
		/* Every key there throughout once; others at most once (checked by the walk). */
		if ((c->out & m.at_begin[c->thread] & m.keys) != (m.at_begin[c->thread] & m.keys))
			return gen_refuse("walk: missed a key there throughout");
		return 1;
	case COUNT:
		if (c->ret)
			return gen_refuse("ak_omap_check failed under the lock");
		return c->out == (unsigned long long)__builtin_popcountll(m.keys) ? 1 :
			gen_refuse("count: not the model's");
	}
	return gen_refuse("an operation the model does not know");
}

/* The map as the schedule left it: the model's keys, each with its value. */
static int model_end(void)
{
	unsigned long long k = 0, seen = 0, *v;
	struct ak_omap_cursor cursor;
	int err = 0, i;

	if (ak_omap_check(&map) || ak_omap_count(&map) != (unsigned long long)__builtin_popcountll(m.keys))
		return gen_refuse("the map is broken, or its count is not the model's");
	ak_omap_cursor_init(&cursor, NULL, NULL, 1);
	for (i = 0; i < 80 && !(err = ak_omap_next(&map, &cursor, &k, &v)); i++) {
		if (k >= 64 || *v != value_of(k))
			return gen_refuse("the map holds a key or value the model does not");
		seen |= 1ULL << k;
	}
	if (err != -ENOENT || seen != m.keys)
		return gen_refuse("the map holds other keys than the model");
	return 1;
}

static void check_and_destroy(void)
{
	int err;

	if (map.lock.locked)
		explore_fail("the map's lock is held after the schedule");
	err = ak_omap_destroy(&map);
	if (err)
		explore_fail("destroy: %d", err);
	explore_expect_given_back(0);
}

static const struct gen_model model = {
	.begin = model_begin,
	.step = model_step,
	.end = model_end,
	.state = &m,
	.size = sizeof(m),
	.check_and_destroy = check_and_destroy,
};

/* Two inserts that both need the spare stock, and a pop beside them. */
static const int triples[][3] = {
	{ INSERT_NEW, INSERT_NEW, POP_FIRST },
	{ WALK, INSERT_NEW, DELETE },
	{ -1 },
};

static const struct gen_table omap_table = {
	.name = "omap",
	.ops = ops,
	.nops = NOPS,
	.states = states,
	.nstates = NSTATES,
	.triples = triples,
	.model = &model,
};

Test(explore_gen_omap, full_leaf)
{
	gen_explore(&omap_table, FULL_LEAF);
}

Test(explore_gen_omap, two_levels)
{
	gen_explore(&omap_table, TWO_LEVELS);
}
