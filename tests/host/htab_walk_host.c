// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The hash table's walks in user space (htab_host.h): ak_htab_next with
 * its deletes, the loader's copying walks, and a live walk while the
 * table changes.
 */
#include "host/htab_host.h"

TestSuite(htab_walk_host, .fini = teardown);

/*
 * The walk that never goes stale, between whose steps keys come and go
 * and the table grows four times over: it ends, with each key present
 * throughout returned once and each other at most once, never a key the
 * table did not hold.
 */
Test(htab_walk_host, a_live_walk_ends_with_each_key_once_as_the_table_changes)
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

Test(htab_walk_host, walk_visits_each_entry_once_and_may_delete)
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
Test(htab_walk_host, next_copy_copies_each_entry_once_or_says_why_not)
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
