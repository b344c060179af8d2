// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * htab.h built for user space (htab_host.h): the hash, sizes and keys,
 * limits and LRU, flags and errors, a model, lookup_or_init, a full arena,
 * the check. Growth is in htab_growth_host.c, walks in htab_walk_host.c.
 */
#include "host/htab_host.h"

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
