// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * htab.h built for user space, over heap pages (alloc_pages.c). The test
 * hash can be switched to a constant, so that every key shares one chain.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>

static int one_chain;	/* force every key into one chain */

#define AK_HTAB_TEST_HASH(t, w, words) (one_chain ? 0x5eedULL : __ak_htab_pms(t, w, words))
#include "host/alloc_pages.h"
#include <arenakit/htab.h>
#include <arenakit/htab_user.h>

struct key16 {
	uint64_t a, b;
};

static struct ak_htab table;

static void teardown(void)
{
	expect_pages_accounted();
}

TestSuite(htab_host, .fini = teardown);

/*
 * The hash is pair-multiply-shift of the key's 32-bit halves under the
 * array's seeds, as the formula states it (written out here on its own),
 * for 4-byte and 16-byte keys alike; a node keeps its key's hash.
 */
Test(htab_host, hash_is_pair_multiply_shift_under_the_arrays_seeds)
{
	const uint64_t *a;
	uint64_t w[2] = { 0x0123456789abcdefULL, 0xfedcba9876543210ULL }, want, v = 1;
	struct ak_htab_node *node;
	struct key16 k16 = { w[0], w[1] };
	uint32_t k4 = 0xdeadbeef;
	int err;

	cr_assert_eq(ak_htab_init(&table, sizeof(k16), sizeof(v), 16), 0);
	a = (const uint64_t *)table.cur - 4;	/* the seeds lie before the array */
	want = (a[3] + (w[0] >> 32)) * (a[2] + (uint32_t)w[0]) +
	       (a[1] + (w[1] >> 32)) * (a[0] + (uint32_t)w[1]);
	cr_expect_eq(__ak_htab_pms(table.cur, w, 2), want);
	cr_expect_neq(a[0] | a[1] | a[2] | a[3], 0, "seeds drawn");
	cr_assert_eq(ak_htab_update(&table, &k16, &v, AK_HTAB_NOEXIST), 0);
	node = __ak_htab_node_of(table.cur->buckets[want >> table.cur->shift]);
	cr_assert(node, "not in the bucket of its hash's top bits");
	cr_expect_eq(node->hash, want);
	cr_expect(ak_htab_lookup(&table, &k16, &err));
	cr_expect_eq(ak_htab_destroy(&table), 0);

	cr_assert_eq(ak_htab_init(&table, sizeof(k4), sizeof(v), 64), 0);
	cr_expect_eq(table.cur->shift, 64 - 6);
	a = (const uint64_t *)table.cur - 2;
	want = a[1] * (a[0] + k4);
	cr_expect_eq(__ak_htab_pms(table.cur, (uint64_t[]){ k4 }, 1), want);
	cr_expect_eq(ak_htab_destroy(&table), 0);
	cr_expect_eq(alloc_stats().objects, 0);
}

Test(htab_host, init_refuses_bad_sizes)
{
	cr_expect_eq(ak_htab_init(&table, 0, 8, 16), -EINVAL);
	cr_expect_eq(ak_htab_init(&table, AK_HTAB_MAX_KEY + 1, 8, 16), -EINVAL);
	cr_expect_eq(ak_htab_init(&table, 4, AK_HTAB_MAX_VALUE + 1, 16), -EINVAL);
	cr_assert_eq(ak_htab_init(&table, 4, 8, 100), 0);
	cr_expect_eq(table.cur->nbuckets, 128, "100 buckets rounds up to 128");
	cr_expect_eq(ak_htab_destroy(&table), 0);
}

/* A command and a path: the long key a tool counts opens by. */
struct comm_path {
	char comm[16];
	char path[240];
} __attribute__((aligned(8)));

/*
 * Keys over 64 bytes are taken where they are, every word of them hashed
 * and compared: 256-byte keys that differ in one byte anywhere are as many
 * entries, each found, rehashed through growth and walked whole; the
 * 80-byte key of a (command, path) tool too.
 */
Test(htab_host, long_keys_are_whole_keys)
{
	struct comm_path k, got_key;
	struct { char comm[16]; char path[64]; } __attribute__((aligned(8))) k80 = { "cat", "/etc" };
	struct ak_htab_cursor c = {};
	uint64_t v, got, *p;
	unsigned int i, seen = 0, sum = 0;
	int err = 0;

	cr_assert_eq(ak_htab_init(&table, sizeof(k), sizeof(v), 16), 0);
	for (i = 0; i < sizeof(k); i++) {
		memset(&k, 'a', sizeof(k));
		((char *)&k)[i] = 'b';	/* one byte differs, word by word: every word counts */
		v = i;
		cr_assert_eq(ak_htab_update(&table, &k, &v, AK_HTAB_NOEXIST), 0, "byte %u", i);
	}
	cr_expect_eq(ak_htab_count(&table), sizeof(k));
	cr_expect_gt(table.cur->nbuckets, 16, "grown, each key rehashed on its way");
	for (i = 0; i < sizeof(k); i++) {
		memset(&k, 'a', sizeof(k));
		((char *)&k)[i] = 'b';
		p = ak_htab_lookup(&table, &k, &err);
		cr_assert(p, "byte %u: %d", i, err);
		cr_expect_eq(*p, i);
	}
	memset(&k, 'a', sizeof(k));
	cr_expect_null(ak_htab_lookup(&table, &k, &err), "no byte differs: absent");
	cr_expect_eq(err, -ENOENT);
	while ((err = ak_htab_next_copy(&table, &c, &got_key, &got)) == 0) {
		cr_expect_eq(((char *)&got_key)[got], 'b', "the key copied whole with its value");
		seen++;
		sum += got;
	}
	cr_expect_eq(err, -ENOENT);
	cr_expect_eq(seen, sizeof(k));
	cr_expect_eq(sum, sizeof(k) * (sizeof(k) - 1) / 2);
	memset(&k, 'a', sizeof(k));
	k.path[239] = 'b';
	cr_expect_eq(ak_htab_lookup_and_delete(&table, &k, &got), 0);
	cr_expect_eq(got, 16 + 239);
	cr_expect_eq(ak_htab_delete(&table, &k), -ENOENT);
	cr_expect_eq(ak_htab_lookup(&table, &k80, &err), NULL, "another key size");
	cr_expect_eq(err, -EINVAL);
	cr_expect_eq(ak_htab_destroy(&table), 0);

	cr_assert_eq(ak_htab_init(&table, sizeof(k80), sizeof(v), 16), 0);
	v = 1;
	cr_expect_eq(ak_htab_update(&table, &k80, &v, AK_HTAB_NOEXIST), 0);
	k80.path[63] = 'x';
	cr_expect_null(ak_htab_lookup(&table, &k80, &err), "the last byte is the key's too");
	k80.path[63] = 0;
	p = ak_htab_lookup(&table, &k80, &err);
	cr_assert(p);
	cr_expect_eq(*p, 1);
	cr_expect_eq(ak_htab_destroy(&table), 0);
	cr_expect_eq(alloc_stats().objects, 0);
}

/* A table at its limit refuses a new key, counted; the keys it has still change. */
Test(htab_host, a_limit_refuses_new_keys_and_counts_them)
{
	uint32_t k;
	uint64_t v = 1, *p;
	int err = 0;

	cr_assert_eq(ak_htab_init(&table, sizeof(k), sizeof(v), 16), 0);
	cr_expect_eq(ak_htab_set_limit(&table, 0, AK_HTAB_LRU), -EINVAL, "LRU with no limit");
	cr_expect_eq(ak_htab_set_limit(&table, 10, 2), -EINVAL, "an unknown flag");
	cr_assert_eq(ak_htab_set_limit(&table, 40, 0), 0);
	for (k = 0; k < 40; k++)
		cr_assert_eq(ak_htab_update(&table, &k, &v, AK_HTAB_NOEXIST), 0, "key %u", k);
	k = 40;
	cr_expect_eq(ak_htab_update(&table, &k, &v, AK_HTAB_ANY), -E2BIG);
	cr_expect_null(ak_htab_lookup_or_init(&table, &k, &v, &err));
	cr_expect_eq(err, -E2BIG);
	cr_expect_eq(table.refused, 2);
	cr_expect_eq(ak_htab_count(&table), 40);
	k = 7;
	v = 70;
	cr_expect_eq(ak_htab_update(&table, &k, &v, AK_HTAB_ANY), 0, "a key it has: an update");
	p = ak_htab_lookup_or_init(&table, &k, &v, &err);
	cr_assert(p);
	cr_expect_eq(*p, 70);
	cr_expect_eq(ak_htab_delete(&table, &k), 0);
	k = 40;
	cr_expect_eq(ak_htab_update(&table, &k, &v, AK_HTAB_NOEXIST), 0, "room again");
	cr_expect_eq(ak_htab_count(&table), 40);
	cr_expect_eq(table.refused, 2);
	cr_expect_eq(ak_htab_set_limit(&table, 40, AK_HTAB_LRU), -EBUSY, "LRU on a full table");
	cr_expect_eq(ak_htab_check_all(&table, NULL), 0);
	cr_expect_eq(ak_htab_destroy(&table), 0);
	cr_expect_eq(alloc_stats().objects, 0);
}

/*
 * An LRU table at its limit evicts instead: it holds exactly its limit,
 * every insert past it evicts one entry (counted), the entries used since
 * the hand last passed survive it, and nothing is allocated for an insert
 * that evicts (the evicted node is reused).
 */
Test(htab_host, an_lru_table_evicts_what_was_not_used)
{
	const uint32_t limit = 64, hot = 8, rounds = 1000;
	uint64_t v = 0, *p, objects;
	uint32_t k, i, lost_hot = 0;
	int err = 0;

	cr_assert_eq(ak_htab_init(&table, sizeof(k), sizeof(v), 128), 0);
	cr_assert_eq(ak_htab_set_limit(&table, limit, AK_HTAB_LRU), 0);
	cr_expect_eq(ak_htab_set_limit(&table, limit, 0), -EINVAL, "LRU is not taken back");
	for (k = 0; k < limit; k++)
		cr_assert_eq(ak_htab_update(&table, &k, &v, AK_HTAB_NOEXIST), 0);
	objects = alloc_stats().objects;
	for (i = 0; i < rounds; i++) {
		/* The hot keys are used between any two inserts. */
		for (k = 0; k < hot; k++) {
			p = ak_htab_lookup(&table, &k, &err);
			if (!p) {
				lost_hot++;
				continue;
			}
			ak_htab_touch(&table, p);
		}
		k = limit + i;
		p = ak_htab_lookup_or_init(&table, &k, &v, &err);
		cr_assert(p, "insert %u at the limit: %d", k, err);
		cr_assert_eq(ak_htab_count(&table), limit);
	}
	cr_expect_eq(table.evicted, rounds);
	cr_expect_eq(table.refused, 0);
	cr_expect_eq(lost_hot, 0, "a hot key was evicted %u times", lost_hot);
	cr_expect_eq(alloc_stats().objects, objects, "an eviction's node is the insert's");
	k = limit + rounds - 1;
	cr_expect(ak_htab_lookup(&table, &k, &err), "the newest entry is there");
	cr_expect_eq(ak_htab_check_all(&table, NULL), 0);
	cr_expect_eq(ak_htab_destroy(&table), 0);
	cr_expect_eq(alloc_stats().objects, 0);
}

/*
 * The walk that never goes stale, between whose steps keys come and go
 * and the table grows four times over: it ends, with each key present
 * throughout returned once and each other at most once, never a key the
 * table did not hold.
 */
Test(htab_host, a_live_walk_ends_with_each_key_once_as_the_table_changes)
{
	enum { STABLE = 500, CHURN = 3000 };
	static unsigned char seen[STABLE + CHURN];
	struct ak_htab_live_cursor c = {};
	uint32_t k, next_new = STABLE, got_key;
	uint64_t v, got;
	unsigned int steps = 0, busy = 0, i;
	int err;

	cr_assert_eq(ak_htab_init(&table, sizeof(k), sizeof(v), 16), 0);
	for (k = 0; k < STABLE; k++) {
		v = k;
		cr_assert_eq(ak_htab_update(&table, &k, &v, AK_HTAB_NOEXIST), 0);
	}
	while ((err = ak_htab_next_copy_live(&table, &c, &got_key, &got)) != -ENOENT) {
		if (err == -EBUSY) {
			busy++;
			cr_assert_eq(ak_htab_maintain(&table), 0, "a growth moved on");
			continue;
		}
		cr_assert_eq(err, 0, "step %u: %d", steps, err);
		cr_assert_lt(got_key, STABLE + CHURN);
		cr_assert_eq(got, got_key, "key %u with another's value", got_key);
		seen[got_key]++;
		/* Between steps: six new keys, and the one before the last new one goes. */
		for (i = 0; i < 6 && next_new < STABLE + CHURN; i++, next_new++) {
			k = next_new;
			v = k;
			cr_assert_eq(ak_htab_update(&table, &k, &v, AK_HTAB_NOEXIST), 0);
		}
		k = next_new - 2;
		if (k >= STABLE)
			ak_htab_delete(&table, &k);
		steps++;
	}
	for (k = 0; k < STABLE; k++)
		cr_expect_eq(seen[k], 1, "stable key %u returned %u times", k, seen[k]);
	for (; k < STABLE + CHURN; k++)
		cr_expect_leq(seen[k], 1, "key %u returned %u times", k, seen[k]);
	printf("htab_host: a live walk of %u steps while %u keys came and the table grew to %llu "
	       "buckets (%u -EBUSY while entries moved)\n", steps, next_new - STABLE,
	       table.cur->nbuckets, busy);
	cr_expect_gt(table.cur->nbuckets, 1024, "it grew under the walk");
	cr_expect_eq(ak_htab_destroy(&table), 0);
	cr_expect_eq(alloc_stats().objects, 0);
}

Test(htab_host, flags_and_errors_as_the_bpf_map)
{
	uint32_t k = 7, absent = 8;
	uint64_t v = 70, got = 0, *p;
	uint16_t short_key = 7;
	int err = 0;

	cr_assert_eq(ak_htab_init(&table, sizeof(k), sizeof(v), 16), 0);
	cr_expect_null(ak_htab_lookup(&table, &k, &err));
	cr_expect_eq(err, -ENOENT);
	cr_expect_eq(ak_htab_update(&table, &k, &v, AK_HTAB_EXIST), -ENOENT);
	cr_expect_eq(ak_htab_update(&table, &k, &v, AK_HTAB_NOEXIST), 0);
	cr_expect_eq(ak_htab_update(&table, &k, &v, AK_HTAB_NOEXIST), -EEXIST);
	v = 71;
	cr_expect_eq(ak_htab_update(&table, &k, &v, AK_HTAB_EXIST), 0);
	cr_expect_eq(ak_htab_update(&table, &k, &v, 3), -EINVAL, "unknown flag");
	p = ak_htab_lookup(&table, &k, &err);
	cr_assert(p);
	cr_expect_eq(*p, 71);
	cr_expect_eq(ak_htab_count(&table), 1);
	cr_expect_null(ak_htab_lookup(&table, &short_key, &err));
	cr_expect_eq(err, -EINVAL, "a key of the wrong size");
	cr_expect_eq(ak_htab_delete(&table, &absent), -ENOENT);
	cr_expect_eq(ak_htab_lookup_and_delete(&table, &k, &got), 0);
	cr_expect_eq(got, 71);
	cr_expect_eq(ak_htab_count(&table), 0);
	cr_expect_eq(ak_htab_delete(&table, &k), -ENOENT);
	/* A stored 0 is a value, not "missing". */
	v = 0;
	cr_expect_eq(ak_htab_update(&table, &k, &v, AK_HTAB_ANY), 0);
	p = ak_htab_lookup(&table, &k, &err);
	cr_assert(p);
	cr_expect_eq(*p, 0);
	cr_expect_eq(ak_htab_destroy(&table), 0);
	cr_expect_eq(alloc_stats().objects, 0);
}

Test(htab_host, lookup_copy_copies_under_the_lock_and_lets_go)
{
	uint32_t k = 7, absent = 8;
	uint64_t v = 70, got = 1;
	uint32_t small = 0;
	uint16_t short_key = 7;
	unsigned long long *bucket;

	cr_assert_eq(ak_htab_init(&table, sizeof(k), sizeof(v), 16), 0);
	cr_expect_eq(ak_htab_lookup_copy(&table, &k, &got), -ENOENT);
	cr_expect_eq(got, 1, "a miss wrote the value");
	cr_assert_eq(ak_htab_update(&table, &k, &v, AK_HTAB_NOEXIST), 0);
	cr_expect_eq(ak_htab_lookup_copy(&table, &k, &got), 0);
	cr_expect_eq(got, 70);
	cr_expect_eq(ak_htab_lookup_copy(&table, &absent, &got), -ENOENT);
	cr_expect_eq(ak_htab_lookup_copy(&table, &short_key, &got), -EINVAL);
	cr_expect_eq(ak_htab_lookup_copy(&table, &k, &small), -EINVAL, "a value of the wrong size");
	/* Every lock it took is free again, and it left no mover counted. */
	bucket = __ak_htab_bucket_of(table.cur, __ak_htab_hash(table.cur,
		(unsigned long long[]){ k }, 1));
	cr_expect_not(*bucket & AK_BIT_LOCK);
	cr_expect_eq(table.movers, 0);
	/* A bucket someone holds: -EBUSY after the bounded wait, nothing copied. */
	*bucket |= AK_BIT_LOCK;
	got = 1;
	cr_expect_eq(ak_htab_lookup_copy(&table, &k, &got), -EBUSY);
	cr_expect_eq(got, 1);
	cr_expect_eq(table.movers, 0);
	*bucket &= ~AK_BIT_LOCK;
	cr_expect_eq(ak_htab_destroy(&table), 0);
	cr_expect_eq(alloc_stats().objects, 0);
}

/*
 * An update of one key in a long chain keeps every other key of the chain
 * (the 6.12 selftests' arena hash table drops the chain's rest: 62 keys here).
 */
Test(htab_host, one_long_chain_update_keeps_every_key)
{
	struct key16 k;
	uint32_t v, *p;
	int i, err;

	one_chain = 1;
	cr_assert_eq(ak_htab_init(&table, sizeof(k), sizeof(v), 1 << 12), 0);
	for (i = 0; i < 100; i++) {
		k = (struct key16){ i, ~(uint64_t)i };
		v = i;
		cr_assert_eq(ak_htab_update(&table, &k, &v, AK_HTAB_NOEXIST), 0);
	}
	k = (struct key16){ 50, ~50ULL };
	v = 5000;
	cr_expect_eq(ak_htab_update(&table, &k, &v, AK_HTAB_ANY), 0);
	for (i = 0; i < 100; i++) {
		k = (struct key16){ i, ~(uint64_t)i };
		p = ak_htab_lookup(&table, &k, &err);
		cr_assert(p, "key %d lost (%d)", i, err);
		cr_expect_eq(*p, i == 50 ? 5000u : (uint32_t)i);
	}
	/* Delete the chain's head, a middle node and its tail. */
	for (i = 99; i >= 0; i -= 49) {
		k = (struct key16){ i, ~(uint64_t)i };
		cr_expect_eq(ak_htab_delete(&table, &k), 0);
		cr_expect_null(ak_htab_lookup(&table, &k, &err));
	}
	cr_expect_eq(ak_htab_count(&table), 97);
	cr_expect_eq(ak_htab_destroy(&table), 0);
	cr_expect_eq(alloc_stats().objects, 0);
}

/* Growth from 16 buckets to 16k, every key found at every step. */
Test(htab_host, grows_incrementally_and_finds_everything)
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
Test(htab_host, a_bucket_left_unmoved_is_moved_by_later_writers)
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
Test(htab_host, a_chain_forced_long_reseeds_and_every_lookup_holds)
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
Test(htab_host, a_nosleep_insert_asks_and_reserve_reseeds)
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

Test(htab_host, walk_visits_each_entry_once_and_may_delete)
{
	enum { N = 1000 };
	static char seen[N];
	struct ak_htab_cursor c = { 0 };
	void *key, *value;
	uint32_t k, v;
	int i, n = 0, err;

	cr_assert_eq(ak_htab_init(&table, sizeof(k), sizeof(v), 64), 0);
	for (i = 0; i < N; i++) {
		k = i;
		v = i * 3;
		cr_assert_eq(ak_htab_update(&table, &k, &v, AK_HTAB_ANY), 0);
	}
	while ((err = ak_htab_next(&table, &c, &key, &value)) == 0) {
		k = *(uint32_t *)key;
		cr_assert_lt(k, N);
		cr_expect_not(seen[k], "key %u twice", k);
		seen[k] = 1;
		cr_expect_eq(*(uint32_t *)value, k * 3);
		if (k % 2 == 0)
			cr_assert_eq(ak_htab_delete_current(&table, &c), 0);
		n++;
	}
	cr_expect_eq(err, -ENOENT);
	cr_expect_eq(n, N);
	cr_expect_eq(ak_htab_count(&table), N / 2);
	/* A walk resumed after someone else's change is stale. */
	cr_assert_eq(ak_htab_next(&table, &c, &key, &value), 0);
	k = 1;
	cr_assert_eq(ak_htab_delete(&table, &k), 0);
	cr_expect_eq(ak_htab_next(&table, &c, &key, &value), -AK_ESTALE);
	cr_expect_null(c.htab);
	cr_expect_eq(ak_htab_clear(&table), 0);
	cr_expect_eq(ak_htab_count(&table), 0);
	cr_expect_eq(ak_htab_next(&table, &c, &key, &value), -ENOENT);
	cr_expect_eq(ak_htab_destroy(&table), 0);
	cr_expect_eq(alloc_stats().objects, 0);
}

/* 200k random operations against a plain array model (seed printed). */
/*
 * ak_htab_next_copy, the loader's walk: every entry once, copied; stale
 * after another's change; -EBUSY while a growth is in progress; sizes.
 */
Test(htab_host, next_copy_copies_each_entry_once_or_says_why_not)
{
	enum { N = 1000 };
	static char seen[N];
	struct ak_htab_cursor c = { 0 };
	uint32_t k, v;
	uint16_t short_key;
	int i, n = 0, err;

	cr_assert_eq(ak_htab_init(&table, sizeof(k), sizeof(v), 2048), 0);
	for (i = 0; i < N; i++) {
		k = i;
		v = i * 3;
		cr_assert_eq(ak_htab_update(&table, &k, &v, AK_HTAB_ANY), 0);
	}
	while ((err = ak_htab_next_copy(&table, &c, &k, &v)) == 0) {
		cr_assert_lt(k, N);
		cr_expect_not(seen[k], "key %u twice", k);
		seen[k] = 1;
		cr_expect_eq(v, k * 3);
		n++;
	}
	cr_expect_eq(err, -ENOENT);
	cr_expect_eq(n, N);
	cr_expect_null(c.htab, "the end resets the cursor");
	cr_expect_eq(table.movers, 0, "nothing held between calls");
	/* Another's change in the middle of a walk: stale, cursor reset. */
	cr_assert_eq(ak_htab_next_copy(&table, &c, &k, &v), 0);
	k = N + 1;
	cr_assert_eq(ak_htab_update(&table, &k, &v, AK_HTAB_NOEXIST), 0);
	cr_expect_eq(ak_htab_next_copy(&table, &c, &k, &v), -AK_ESTALE);
	cr_expect_null(c.htab);
	cr_expect_eq(ak_htab_next_copy(&table, &c, &short_key, &v), -EINVAL);
	/* Filling past 3/4 of the buckets starts a growth: -EBUSY until it ends. */
	for (i = N + 2; !table.old && i < 4 * N; i++) {
		k = i;
		cr_assert_eq(ak_htab_update(&table, &k, &v, AK_HTAB_ANY), 0);
	}
	cr_assert(table.old, "no growth started");
	c = (struct ak_htab_cursor){ 0 };
	cr_expect_eq(ak_htab_next_copy(&table, &c, &k, &v), -EBUSY);
	cr_assert_eq(ak_htab_maintain(&table), 0);
	c = (struct ak_htab_cursor){ 0 };
	for (n = 0; (err = ak_htab_next_copy(&table, &c, &k, &v)) == 0; n++)
		;
	cr_expect_eq(err, -ENOENT);
	cr_expect_eq((unsigned long long)n, ak_htab_count(&table));
	cr_expect_eq(ak_htab_destroy(&table), 0);
	cr_expect_eq(alloc_stats().objects, 0);
}

Test(htab_host, agrees_with_a_model)
{
	enum { KEYS = 5000, OPS = 200000 };
	static uint64_t model[KEYS];
	static char present[KEYS];
	unsigned int seed = 20261203, i, k;
	uint64_t v, *p;
	int err, want;

	cr_log_info("seed %u", seed);
	srand(seed);
	cr_assert_eq(ak_htab_init(&table, sizeof(k), sizeof(v), 16), 0);
	for (i = 0; i < OPS; i++) {
		k = rand() % KEYS;
		v = ((uint64_t)rand() << 32) | rand();
		switch (rand() % 4) {
		case 0:
			want = present[k] ? -EEXIST : 0;
			cr_assert_eq(ak_htab_update(&table, &k, &v, AK_HTAB_NOEXIST), want, "op %u", i);
			break;
		case 1:
			want = present[k] ? 0 : -ENOENT;
			cr_assert_eq(ak_htab_update(&table, &k, &v, AK_HTAB_EXIST), want, "op %u", i);
			break;
		case 2:
			want = present[k] ? 0 : -ENOENT;
			cr_assert_eq(ak_htab_delete(&table, &k), want, "op %u", i);
			present[k] = 0;
			continue;
		default:
			p = ak_htab_lookup(&table, &k, &err);
			cr_assert_eq(p != NULL, present[k], "op %u key %u", i, k);
			if (p)
				cr_assert_eq(*p, model[k]);
			continue;
		}
		if (!want) {
			present[k] = 1;
			model[k] = v;
		}
	}
	for (k = 0, want = 0; k < KEYS; k++)
		want += present[k];
	cr_expect_eq(ak_htab_count(&table), (unsigned long long)want);
	cr_expect_eq(ak_htab_destroy(&table), 0);
	cr_expect_eq(alloc_stats().objects, 0);
}

/*
 * ak_htab_lookup_or_init: an absent key goes in with the initial value, a
 * present one keeps its own, both give the entry's value; and it says why
 * it cannot (sizes, an empty pool) rather than answering NULL alone.
 */
Test(htab_host, lookup_or_init_inserts_once_and_keeps_what_is_there)
{
	uint32_t k = 7, other = 8;
	uint64_t zero = 0, v = 70, *p, *again;
	uint32_t small_value = 0;
	uint16_t short_key = 7;
	int err = 0;

	cr_assert_eq(ak_htab_init(&table, sizeof(k), sizeof(v), 16), 0);
	cr_assert_eq(ak_htab_reserve(&table, 2), 0);
	p = ak_htab_lookup_or_init(&table, &k, &zero, &err);
	cr_assert(p, "absent key: %d", err);
	cr_expect_eq(*p, 0);
	cr_expect_eq(ak_htab_count(&table), 1);
	*p += 5;
	again = ak_htab_lookup_or_init(&table, &k, &v, &err);
	cr_expect_eq(again, p, "a second call finds the same entry");
	cr_expect_eq(*again, 5, "the value there is kept, not reset to the initial one");
	cr_expect_eq(ak_htab_count(&table), 1);
	cr_expect_eq(ak_htab_update(&table, &other, &v, AK_HTAB_NOEXIST), 0);
	p = ak_htab_lookup_or_init(&table, &other, &zero, &err);
	cr_assert(p);
	cr_expect_eq(*p, 70);
	err = 0;
	cr_expect_null(ak_htab_lookup_or_init(&table, &short_key, &zero, &err));
	cr_expect_eq(err, -EINVAL, "a key of the wrong size");
	err = 0;
	cr_expect_null(ak_htab_lookup_or_init(&table, &k, &small_value, &err));
	cr_expect_eq(err, -EINVAL, "an initial value of the wrong size");
	cr_expect_eq(ak_htab_count(&table), 2);
	cr_expect_eq(ak_htab_destroy(&table), 0);
	cr_expect_eq(alloc_stats().objects, 0);
}

/* With no node to be had (no pool, no page left), -ENOMEM and nothing changed. */
Test(htab_host, lookup_or_init_says_enomem_when_the_pool_is_empty)
{
	uint32_t k;
	uint64_t zero = 0;
	int i, err = 0;

	cr_assert_eq(ak_htab_init(&table, sizeof(k), sizeof(zero), 4096), 0);
	cr_assert_eq(ak_htab_reserve(&table, 100), 0);
	test_pages_left = 0;
	for (i = 0; i < 100000; i++) {
		k = i;
		if (!ak_htab_lookup_or_init(&table, &k, &zero, &err))
			break;
	}
	cr_expect_eq(err, -ENOMEM);
	cr_expect_geq(i, 100, "the reserved nodes: %d", i);
	cr_expect_eq(ak_htab_count(&table), (unsigned long long)i);
	k = 0;
	cr_expect(ak_htab_lookup_or_init(&table, &k, &zero, &err), "a present key needs no node");
	test_pages_left = ~0ULL;
	cr_expect_eq(ak_htab_destroy(&table), 0);
	cr_expect_eq(alloc_stats().objects, 0);
}

Test(htab_host, full_arena_is_enomem_and_the_table_stays_usable)
{
	uint32_t k, v = 1;
	int i, err = 0;

	cr_assert_eq(ak_htab_init(&table, sizeof(k), sizeof(v), 4096), 0);
	test_pages_left = 2;
	for (i = 0; i < 100000; i++) {
		k = i;
		err = ak_htab_update(&table, &k, &v, AK_HTAB_ANY);
		if (err)
			break;
	}
	cr_expect_eq(err, -ENOMEM);
	cr_expect_eq(ak_htab_count(&table), (unsigned long long)i);
	for (k = 0; k < (uint32_t)i; k++)
		cr_assert(ak_htab_lookup(&table, &k, &err), "key %u lost", k);
	k = 0;
	cr_expect_eq(ak_htab_delete(&table, &k), 0);
	k = i;
	cr_expect_eq(ak_htab_update(&table, &k, &v, AK_HTAB_ANY), 0, "a freed node is reused");
	test_pages_left = ~0ULL;
	cr_expect_eq(ak_htab_destroy(&table), 0);
	cr_expect_eq(alloc_stats().objects, 0);
}

Test(htab_host, check_all_finds_a_node_in_the_wrong_chain_and_a_wrong_count)
{
	struct ak_htab_node *bad = NULL, *first = NULL;
	unsigned long long b;
	uint32_t k;
	uint64_t v = 1;

	cr_assert_eq(ak_htab_init(&table, sizeof(k), sizeof(v), 256), 0);
	for (k = 0; k < 200; k++)
		cr_assert_eq(ak_htab_update(&table, &k, &v, AK_HTAB_NOEXIST), 0);
	cr_expect_eq(ak_htab_check_all(&table, &bad), 0);
	for (b = 0; b < table.cur->nbuckets && !first; b++)
		first = __ak_htab_node_of(table.cur->buckets[b]);
	cr_assert(first);
	first->hash ^= 1;
	cr_expect_eq(ak_htab_check_all(&table, &bad), -EINVAL);
	cr_expect_eq(bad, first);
	first->hash ^= 1;
	table.count++;
	cr_expect_eq(ak_htab_check_all(&table, &bad), -EINVAL, "a count the chains disagree with");
	cr_expect_null(bad);
	table.count--;
	cr_expect_eq(ak_htab_check_all(&table, &bad), 0);
	cr_expect_eq(ak_htab_destroy(&table), 0);
}
