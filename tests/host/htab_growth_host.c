// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The hash table's growth and reseeds in user space (htab_host.h): an
 * array moved bucket by bucket by the writers that meet it, and a chain
 * forced long that asks for new seeds.
 */
#include "host/htab_host.h"

TestSuite(htab_growth_host, .fini = teardown);

/* Growth from 16 buckets to 16k, every key found at every step. */
Test(htab_growth_host, grows_incrementally_and_finds_everything)
{
	enum { N = 12000 };
	uint32_t k, v, *p;
	int i, j, err;

	cr_assert_eq(ak_htab_init(&table, sizeof(k), sizeof(v), 16), 0);
	for (i = 0; i < N; i++) {
		k = i * 2654435761u;
		v = i;
		cr_assert_eq(ak_htab_update(&table, &k, &v, AK_HTAB_NOEXIST), 0, "insert %d", i);
		if (i % 997 == 0 || table.old)
			for (j = i; j >= 0 && j > i - 40; j--) {
				k = j * 2654435761u;
				p = ak_htab_lookup(&table, &k, &err);
				cr_assert(p, "key %d missing after %d inserts (growing: %d)", j, i + 1,
					  table.old != NULL);
				cr_assert_eq(*p, (uint32_t)j);
			}
	}
	cr_expect_eq(ak_htab_count(&table), N);
	cr_expect_eq(ak_htab_maintain(&table), 0);
	cr_expect_null(table.old, "growth did not finish");
	cr_expect_geq(table.cur->nbuckets * 3, N * 4 / 1, "load factor over 3/4");
	for (i = 0; i < N; i++) {
		k = i * 2654435761u;
		cr_assert(ak_htab_lookup(&table, &k, &err), "key %d missing at the end", i);
	}
	cr_expect_eq(ak_htab_destroy(&table), 0);
	cr_expect_eq(alloc_stats().objects, 0);
	cr_expect_eq(ak_alloc_trim(), 0);
	cr_expect_eq(ak_allocator.stats.pages, 0);
}

/*
 * A bucket a mover could not move (its lock was held) is tried again by
 * later writers whatever keys they touch: the growth ends, so a reader
 * that waits for it (ak_htab_next_copy's -EBUSY) is not stuck until
 * someone calls ak_htab_maintain. Every key shares one chain here, so no
 * writer ever touches the held bucket's keys.
 */
Test(htab_growth_host, a_bucket_left_unmoved_is_moved_by_later_writers)
{
	struct __ak_htab_table *old;
	unsigned long long *held = NULL;
	uint32_t k, v = 1;
	int i, j;

	one_chain = 1;
	cr_assert_eq(ak_htab_init(&table, sizeof(k), sizeof(v), 16), 0);
	for (k = 0; !table.old && k < 64; k++)
		cr_assert_eq(ak_htab_update(&table, &k, &v, AK_HTAB_NOEXIST), 0);
	old = table.old;
	cr_assert(old, "no growth started");
	/* An old bucket not moved yet, other than the chain's. */
	for (j = 0; j < (int)old->nbuckets && !held; j++)
		if (j != (int)(0x5eedULL >> old->shift) &&
		    old->buckets[j] != __AK_HTAB_MOVED)
			held = &old->buckets[j];
	cr_assert(held, "every bucket moved already");
	cr_assert_eq(ak_bit_lock_acquire(held), 0);
	/* Writers claim every bucket while it is held: its move fails once. */
	for (i = 0; table.claimed < old->nbuckets && i < 1000; i++) {
		k = i % 8;
		ak_htab_update(&table, &k, &v, AK_HTAB_EXIST);
	}
	cr_assert_geq(table.claimed, old->nbuckets);
	cr_assert_not_null(table.old, "the growth ended with a bucket held");
	ak_bit_lock_release(held);
	for (i = 0; table.old && i < 4 * (int)old->nbuckets; i++) {
		k = i % 8;
		cr_assert_eq(ak_htab_update(&table, &k, &v, AK_HTAB_EXIST), 0);
	}
	cr_expect_null(table.old, "the growth did not end after %d writes", i);
	one_chain = 0;
	cr_expect_eq(ak_htab_destroy(&table), 0);
	cr_expect_eq(alloc_stats().objects, 0);
}

/* The bucket of array @t that 4-byte key @k is in, under the array's seeds. */
static unsigned long long bucket_of_key(const struct __ak_htab_table *t, uint32_t k)
{
	return __ak_htab_pms(t, (uint64_t[]){ k }, 1) >> t->shift;
}

/* The longest chain of the current array. */
static unsigned int longest_chain(void)
{
	struct ak_htab_node *node;
	unsigned long long b;
	unsigned int n, most = 0;

	for (b = 0; b < table.cur->nbuckets; b++) {
		n = 0;
		for (node = __ak_htab_node_of(table.cur->buckets[b]); node; node = node->next)
			n++;
		most = n > most ? n : most;
	}
	return most;
}

/* The reseed test's keys: present[i] says whether keys[i] is in the table. */
enum { RESEED_CHAIN = AK_HTAB_CHAIN_MAX + 2, RESEED_KEYS = 1024 };
static uint32_t keys[RESEED_KEYS];
static char present[RESEED_KEYS];
static int nkeys;

/* Every key as the model says, by both lookups; @when names the step. */
static void expect_every_key(const char *when)
{
	uint64_t *p, got;
	int i, err;

	for (i = 0; i < nkeys; i++) {
		p = ak_htab_lookup(&table, &keys[i], &err);
		got = 0;
		if (present[i]) {
			cr_assert(p, "%s: key %u lost (%d)", when, keys[i], err);
			cr_assert_eq(*p, keys[i] * 3ULL, "%s: key %u", when, keys[i]);
			if (!table.old || table.moved + 1 < table.old->nbuckets) {
				cr_assert_eq(ak_htab_lookup_copy(&table, &keys[i], &got), 0,
					     "%s: key %u by lookup_copy", when, keys[i]);
				cr_assert_eq(got, keys[i] * 3ULL);
			}
		} else {
			cr_assert_null(p, "%s: deleted key %u found", when, keys[i]);
			cr_assert_eq(err, -ENOENT);
		}
	}
}

static void add_key(uint32_t k, int nosleep)
{
	uint64_t v = k * 3ULL;

	keys[nkeys] = k;
	present[nkeys++] = 1;
	cr_assert_eq(nosleep ? ak_htab_update_nosleep(&table, &k, &v, AK_HTAB_NOEXIST) :
			       ak_htab_update(&table, &k, &v, AK_HTAB_NOEXIST), 0, "insert %u", k);
}

/*
 * Keys chosen under the table's seeds to share one bucket (as one who
 * learnt the collisions would choose them): the insert that finds the
 * chain past AK_HTAB_CHAIN_MAX asks for a reseed, the next sleepable
 * update starts it, into an array as large with new seeds, and it ends
 * with the chain spread. At every step of it (one write, moving a few
 * buckets; and a move cut part way by a lock held in the new array) every
 * key present is found, by the lock-free lookup and ak_htab_lookup_copy,
 * and every key deleted is not; inserts and deletes go on meanwhile.
 */
Test(htab_growth_host, a_chain_forced_long_reseeds_and_every_lookup_holds)
{
	struct __ak_htab_table *first;
	unsigned long long target, *held;
	uint64_t v;
	uint32_t k;
	int i, chain = 0, steps, err;

	nkeys = 0;
	cr_assert_eq(ak_htab_init(&table, sizeof(k), sizeof(uint64_t), 1024), 0);
	first = table.cur;
	cr_assert_eq(first->nbuckets, 1024);
	for (k = 1; k <= 200; k++)
		add_key(k * 2654435761u, 0);
	/* An empty bucket: the chain is the chosen keys' alone. */
	for (target = 0; first->buckets[target]; target++)
		;
	for (k = 1000000; chain < RESEED_CHAIN; k++) {
		if (bucket_of_key(first, k) != target)
			continue;
		cr_expect_eq(table.reseed_wanted, 0, "asked after %d keys", chain);
		add_key(k, 0);
		chain++;
	}
	cr_expect_eq(table.reseed_wanted, 1, "a chain of %d did not ask for a reseed", chain);
	cr_expect_eq(table.reseeds, 0);
	cr_expect_null(table.old, "a reseed started under a bucket lock");
	cr_expect_geq(longest_chain(), RESEED_CHAIN);
	expect_every_key("the chain long");

	/* The next sleepable update starts it. */
	v = keys[0] * 3ULL;
	err = ak_htab_update(&table, &keys[0], &v, AK_HTAB_EXIST);
	cr_assert_eq(err, 0, "the update that starts the reseed: %d", err);
	cr_assert_eq(table.reseeds, 1);
	cr_expect_eq(table.reseed_wanted, 0);
	cr_assert_eq(table.old, first, "no reseed in progress");
	cr_expect_eq(table.cur->nbuckets, first->nbuckets, "a reseed keeps the size");
	cr_expect_neq(__AK_HTAB_SEED(table.cur, 0), __AK_HTAB_SEED(first, 0), "no new seeds");
	expect_every_key("the reseed begun");

	/* A move of the chain cut part way: the new bucket of its third node held. */
	if (first->buckets[target] != __AK_HTAB_MOVED) {
		struct ak_htab_node *third = __ak_htab_node_of(first->buckets[target])->next->next;

		held = __ak_htab_bucket_of(table.cur, __ak_htab_pms(table.cur, third->data, 1));
		cr_assert_eq(ak_bit_lock_acquire(held), 0);
		cr_expect_eq(__ak_htab_move_counted(&table, first, table.cur, target), -EBUSY);
		cr_expect(first->buckets[target] & __AK_HTAB_MOVED, "no mark on a cut move");
		for (i = 0; i < nkeys; i++)
			cr_assert(ak_htab_lookup(&table, &keys[i], &err),
				  "key %u lost in a cut move (%d)", keys[i], err);
		ak_bit_lock_release(held);
	}

	/* Writes move it on: inserts, deletes (chain keys among them), updates. */
	for (steps = 0; table.old && steps < 2000; steps++) {
		i = steps % 3;
		if (i == 0) {
			add_key(3000000 + steps, 0);
		} else if (i == 1 && present[200 + steps % RESEED_CHAIN]) {
			cr_assert_eq(ak_htab_delete(&table, &keys[200 + steps % RESEED_CHAIN]), 0);
			present[200 + steps % RESEED_CHAIN] = 0;
		} else {
			v = keys[steps % 200] * 3ULL;
			cr_assert_eq(ak_htab_update(&table, &keys[steps % 200], &v, AK_HTAB_ANY), 0);
		}
		expect_every_key("during the reseed");
		cr_assert_lt(nkeys, RESEED_KEYS);
	}
	cr_expect_null(table.old, "the reseed did not end after %d writes", steps);
	cr_expect_eq(table.reseeds, 1, "reseeded again");
	cr_expect_eq(ak_htab_check_all(&table, NULL), 0);
	cr_expect_lt(longest_chain(), AK_HTAB_CHAIN_MAX, "the chain is still long");
	expect_every_key("after the reseed");
	cr_expect_eq(ak_htab_destroy(&table), 0);
	cr_expect_eq(alloc_stats().objects, 0);
}

/*
 * A non-sleepable insert only asks; ak_htab_reserve (sleepable) starts the
 * reseed. A chain the load explains asks for none: a table past its
 * growth's end must not reseed forever.
 */
Test(htab_growth_host, a_nosleep_insert_asks_and_reserve_reseeds)
{
	uint32_t k;
	int chain = 0;

	nkeys = 0;
	cr_assert_eq(ak_htab_init(&table, sizeof(k), sizeof(uint64_t), 1024), 0);
	cr_assert_eq(ak_htab_reserve(&table, RESEED_CHAIN), 0);
	for (k = 1; chain < RESEED_CHAIN; k++)
		if (bucket_of_key(table.cur, k) == 7) {
			add_key(k, 1);
			chain++;
		}
	cr_expect_eq(table.reseed_wanted, 1);
	cr_expect_null(table.old, "a non-sleepable insert started a reseed");
	cr_assert_eq(ak_htab_reserve(&table, 1), 0);
	cr_expect_eq(table.reseeds, 1);
	cr_expect_not_null(table.old);
	cr_expect_eq(ak_htab_maintain(&table), 0);
	cr_expect_null(table.old);
	expect_every_key("after the reseed");

	/* 40 entries a bucket on average: a chain of 60 is the load's, 97 is not. */
	table.count = 40 * table.cur->nbuckets;
	cr_expect_not(__ak_htab_chain_too_long(&table, AK_HTAB_CHAIN_MAX + 80));
	cr_expect(__ak_htab_chain_too_long(&table, AK_HTAB_CHAIN_MAX + 81));
	cr_expect_not(__ak_htab_chain_too_long(&table, 60));
	table.count = nkeys;
	cr_expect_eq(ak_htab_destroy(&table), 0);
	cr_expect_eq(alloc_stats().objects, 0);
}
