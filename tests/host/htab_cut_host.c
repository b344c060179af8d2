// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * An LRU table's insert past its limit searches the buckets for a node to
 * evict. Cut at every budget check the insert makes (AK_TEST_CUT), it must
 * say it was cut (-AK_EBUDGET), never that the table refused the entry
 * (-E2BIG, for "no entry could be had"), leave the table as it was, and
 * go in when called again.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <criterion/criterion.h>

#include "test_cut.h"
#include "host/alloc_pages.h"
#include <arenakit/htab.h>

static struct ak_htab table;

static void teardown(void)
{
	expect_pages_accounted();
}

TestSuite(htab_cut_host, .fini = teardown);

Test(htab_cut_host, a_cut_eviction_says_so_and_refuses_nothing)
{
	const uint32_t limit = 32;
	uint64_t v = 1;
	uint32_t k;
	int err = 0, at, cuts = 0;

	cr_assert_eq(ak_htab_init(&table, sizeof(k), sizeof(v), 64), 0);
	cr_assert_eq(ak_htab_set_limit(&table, limit, AK_HTAB_LRU), 0);
	for (k = 0; k < limit; k++)
		cr_assert_eq(ak_htab_update(&table, &k, &v, AK_HTAB_NOEXIST), 0, "key %u", k);
	/* A new key each time, cut after 0, 1, 2... checks, until one is not cut. */
	for (at = 0;; at++) {
		cr_assert_lt(at, 100000, "every insert was cut");
		k = 1000 + at;
		checks_left = at;
		err = ak_htab_update(&table, &k, &v, AK_HTAB_NOEXIST);
		checks_left = -1;
		if (!err)
			break;
		cr_assert_eq(err, -AK_EBUDGET, "cut after %d checks: %d", at, err);
		cuts++;
		cr_assert_eq(ak_htab_count(&table), limit, "cut after %d checks", at);
		cr_assert_eq(table.refused, 0, "a cut counted as a refusal");
		cr_assert_null(ak_htab_lookup(&table, &k, &err), "a cut insert went in");
	}
	cr_expect_gt(cuts, 0, "no check was cut");
	cr_expect_eq(table.evicted, 1, "the insert that went in evicted one entry");
	cr_expect_eq(ak_htab_count(&table), limit);
	cr_expect_eq(ak_htab_check_all(&table, NULL), 0);
	cr_expect_eq(ak_htab_destroy(&table), 0);
	cr_expect_eq(alloc_stats().objects, 0);
	printf("htab_cut_host: an LRU insert cut at each of its first %d checks: -AK_EBUDGET each time\n",
	       cuts);
}
