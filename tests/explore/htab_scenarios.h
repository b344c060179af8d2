/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What htab.h's scenarios share (htab_scenarios.c, htab_walk_scenarios.c,
 * weak_scenarios.c): a table in the emulated arena, and the setup's and
 * check's steps on it.
 * Keys are 8-byte numbers whose hash is their bits reversed (explore.h), so
 * a scenario says which keys share a bucket: in a 16-bucket table keys that
 * agree mod 16 (the bucket is explore_bucket's). Every key's value is ten
 * times the key unless a thread changes it.
 */
#ifndef ARENAKIT_TESTS_EXPLORE_HTAB_SCENARIOS_H
#define ARENAKIT_TESTS_EXPLORE_HTAB_SCENARIOS_H

#include <string.h>
#include <criterion/criterion.h>

#include "explore/explore.h"
#include <arenakit/htab_user.h>

static struct ak_htab __arena_global table;

static inline void expect_value(unsigned long long key, unsigned long long want)
{
	unsigned long long got = 0;
	int err = ak_htab_lookup_copy(&table, &key, &got);

	if (err || got != want)
		explore_fail("key %llu: %d, value %llu (want %llu)", key, err, got, want);
}

static inline void insert(unsigned long long key)
{
	unsigned long long value = key * 10;
	int err = ak_htab_update(&table, &key, &value, AK_HTAB_NOEXIST);

	if (err)
		explore_fail("setup: insert %llu: %d", key, err);
}

/* The table sound, its count @count, and everything given back after it. */
static inline void expect_sound_then_destroy(unsigned long long count)
{
	struct ak_htab_node *bad;
	int err = ak_htab_check_all(&table, &bad);

	if (err)
		explore_fail("ak_htab_check_all: %d (node %p)", err, (void *)bad);
	if (ak_htab_count(&table) != count)
		explore_fail("count %llu, want %llu", ak_htab_count(&table), count);
	err = ak_htab_destroy(&table);
	if (err)
		explore_fail("destroy: %d", err);
	explore_expect_given_back(0);
}

#endif
