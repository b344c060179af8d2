// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * htab.h built for user space, over heap pages (alloc_pages.c). The test
 * hash can be switched to a constant, so that every key shares one chain.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>

static int one_chain;	/* force every key into one chain */

#define AK_HTAB_TEST_HASH(h, w, words, size)				\
	(one_chain ? 0x5eedULL : __ak_siphash(w, words, size, (h)->seed[0], (h)->seed[1], 1, 3))
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
 * SipHash-c-d of @len bytes as the paper states it, a byte at a time:
 * independent of siphash.h's word-wise form, to check it at every length.
 */
static uint64_t siphash_bytes(const uint8_t *msg, unsigned int len, uint64_t k0, uint64_t k1,
			      int c, int d)
{
	uint64_t v0 = k0 ^ 0x736f6d6570736575ULL, v1 = k1 ^ 0x646f72616e646f6dULL;
	uint64_t v2 = k0 ^ 0x6c7967656e657261ULL, v3 = k1 ^ 0x7465646279746573ULL;
	uint64_t m;
	unsigned int at, i;
	int r;

	for (at = 0; at <= len; at += 8) {
		/* The last block: the bytes left, and the length in its top byte. */
		m = at + 8 > len ? (uint64_t)len << 56 : 0;
		for (i = 0; i < 8 && at + i < len; i++)
			m |= (uint64_t)msg[at + i] << (8 * i);
		v3 ^= m;
		for (r = 0; r < c; r++)
			__AK_SIPROUND(v0, v1, v2, v3);
		v0 ^= m;
		if (at + 8 > len)
			break;
	}
	v2 ^= 0xff;
	for (r = 0; r < d; r++)
		__AK_SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

/*
 * SipHash-2-4 reference vectors (key 00..0f; messages "", "\x00", and
 * 00..0e, the paper's example), then
 * siphash.h against the byte-wise form at every length 0..64, with words
 * exactly as many as the length needs, as htab.h gives them.
 */
Test(htab_host, siphash_matches_the_reference)
{
	const uint64_t k0 = 0x0706050403020100ULL, k1 = 0x0f0e0d0c0b0a0908ULL;
	unsigned long long words[AK_HTAB_MAX_KEY / 8] = { 0 };
	uint8_t msg[AK_HTAB_MAX_KEY];
	unsigned int len, n;

	cr_expect_eq(__ak_siphash(words, 0, 0, k0, k1, 2, 4), 0x726fdb47dd0e0e31ULL);
	cr_expect_eq(__ak_siphash(words, 1, 1, k0, k1, 2, 4), 0x74f839c593dc67fdULL);
	cr_expect_eq(siphash_bytes((uint8_t[]){ 0 }, 1, k0, k1, 2, 4), 0x74f839c593dc67fdULL);
	/* The paper's worked example: the 15 bytes 00..0e. */
	for (n = 0; n < 15; n++)
		msg[n] = (uint8_t)n;
	cr_expect_eq(siphash_bytes(msg, 15, k0, k1, 2, 4), 0xa129ca6149be45e5ULL);
	for (len = 0; len <= AK_HTAB_MAX_KEY; len++) {
		memset(words, 0, sizeof(words));
		for (n = 0; n < len; n++)
			msg[n] = (uint8_t)(n * 37 + len);
		memcpy(words, msg, len);
		n = (len + 7) / 8;
		cr_expect_eq(__ak_siphash(words, n, len, k0, k1, 1, 3),
			     siphash_bytes(msg, len, k0, k1, 1, 3), "SipHash-1-3 of %u bytes", len);
		cr_expect_eq(__ak_siphash(words, n, len, k0, k1, 2, 4),
			     siphash_bytes(msg, len, k0, k1, 2, 4), "SipHash-2-4 of %u bytes", len);
	}
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
	bucket = (unsigned long long *)&table.cur->buckets[__ak_htab_hash(&table,
		(unsigned long long[]){ k }, 1) & (table.cur->nbuckets - 1)];
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
		if (j != (int)(0x5eedULL & (old->nbuckets - 1)) &&
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
