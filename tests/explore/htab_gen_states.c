// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The states htab_gen.c's scenarios start from: three keys, a table the
 * next update grows, a growth begun, held, at its end, and done, and a
 * reseed begun. A state mid-migration is made with the migration's own
 * steps, stopped where it says.
 */
#include "explore/gen.h"
#include "explore/htab_gen.h"

static void insert(unsigned long long key)
{
	unsigned long long value = key * 10;
	int err = ak_htab_update(&table, &key, &value, AK_HTAB_NOEXIST);

	if (err)
		explore_fail("setup: insert %llu: %d", key, err);
}

/*
 * P, Q and key 2 (P heads bucket 1's chain, so a move of the bucket takes
 * P first); nodes for four _nosleep inserts in the pool.
 */
static void setup_small(void)
{
	if (ak_htab_init(&table, 8, 8, 16))
		explore_fail("setup: init");
	insert(KEY_Q);
	insert(KEY_P);
	insert(2);
	if (ak_htab_reserve(&table, 4))
		explore_fail("setup: reserve");
}

/* 13 keys in 16 buckets: the next sleepable update starts a growth. */
static void setup_full(void)
{
	unsigned long long k;

	setup_small();
	for (k = 3; k <= 12; k++)
		insert(k);
}

/* A growth to 32 buckets begun: nothing moved, nothing claimed. */
static void setup_growth_begun(void)
{
	setup_full();
	__ak_htab_resize(&table, 1);
	if (!table.old || table.old == table.cur)
		explore_fail("setup: no growth in progress");
}

/* Every old bucket moved but P's: the next move of it retires the array. */
static void setup_growth_end(void)
{
	struct __ak_htab_table *old;
	unsigned long long b;

	setup_growth_begun();
	old = table.old;
	for (b = 0; old && b < old->nbuckets; b++)
		if (b != explore_bucket(old, KEY_P) &&
		    __ak_htab_move_counted(&table, old, table.cur, b))
			explore_fail("setup: move %llu", b);
	table.claimed = old ? old->nbuckets : 0;
}

/* The growth finished and its old array freed: 13 keys in 32 buckets. */
static void setup_grown(void)
{
	setup_growth_begun();
	if (ak_htab_maintain(&table) || table.old || table.retired)
		explore_fail("setup: the growth did not finish");
}

/*
 * A growth begun, and Q's bucket in the new array locked by a program that
 * cannot run until the scenario ends (a writer a tracing program
 * interrupted on its CPU): a move of bucket 1 takes P and stops at Q.
 */
static void setup_growth_held(void)
{
	setup_growth_begun();
	if (table.cur)
		table.cur->buckets[explore_bucket(table.cur, KEY_Q)] |= __AK_HTAB_LOCKED;
}

static void settle_growth_held(void)
{
	table.cur->buckets[explore_bucket(table.cur, KEY_Q)] &= ~__AK_HTAB_LOCKED;
}

/*
 * The three keys, and a reseed begun, as an insert into a chain too long
 * asks for: an array of as many buckets under new seeds, nothing moved. P
 * and Q share a bucket in each array, a different one.
 */
static void setup_reseed_begun(void)
{
	struct __ak_htab_table *old;

	setup_small();
	old = table.cur;
	table.reseed_wanted = 1;
	__ak_htab_resize(&table, 1);
	if (table.old != old || table.cur == old || table.reseeds != 1 ||
	    table.cur->nbuckets != old->nbuckets ||
	    explore_bucket(table.cur, KEY_P) == explore_bucket(old, KEY_P))
		explore_fail("setup: no reseed in progress");
}

/*
 * The three keys, and beside the table a second one with its seeds and an
 * ordered map (one key each, P in neither), on the same allocator: what
 * one frees another takes at once (htab_gen.c's moves).
 */
static void setup_beside(void)
{
	unsigned long long k = 5, v = 50;

	setup_small();
	if (ak_htab_init(&other, 8, 8, 16) || ak_omap_init(&beside_map, 8, 8))
		explore_fail("setup: the structures beside");
	else
		explore_htab_same_seeds(other.cur, table.cur);
	if (ak_htab_update(&other, &k, &v, AK_HTAB_NOEXIST) ||
	    ak_omap_update(&beside_map, &k, &v, AK_OMAP_NOEXIST))
		explore_fail("setup: a key beside");
}

const struct gen_state states[NSTATES] = {
	[SMALL] = { "3 keys", setup_small },
	[FULL] = { "13 keys, an update grows it", setup_full },
	[BEGUN] = { "growth begun", setup_growth_begun },
	[HELD] = { "growth begun, Q's new bucket held", setup_growth_held, settle_growth_held },
	[END] = { "growth's end", setup_growth_end },
	[GROWN] = { "grown", setup_grown },
	[RESEED] = { "reseed begun", setup_reseed_begun },
	[BESIDE] = { "3 keys, a table with its seeds and an ordered map beside it", setup_beside,
		     NULL, 1 },
};
