// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * alloc.h built for user space, over heap pages (alloc_pages.c): where
 * memory waits between a free and the next allocation. Pages are taken and
 * given back in runs, spare pages serve any class before a page kfunc call,
 * and each CPU's cache serves frees and allocations without the shared
 * lock. The suite (alloc_host, its teardown in alloc_host.c) is the
 * allocator's; the objects, classes and frees are in alloc_host.c.
 */
#include <stdint.h>
#include <criterion/criterion.h>

#include "host/alloc_pages.h"

#define STATS ak_allocator.stats

/* The class of @size, as the allocator picks it. */
static unsigned int class_of(unsigned long long size)
{
	return (unsigned int)__ak_alloc_class(size);
}

/*
 * Pages move in runs: one page kfunc call takes AK_ALLOC_PAGE_RUN pages,
 * and the pages a sleepable free empties go back a run per call, the
 * spare pages never more than two runs' worth.
 */
Test(alloc_host, pages_are_taken_and_given_back_in_runs)
{
	enum { N = 100000, PER_PAGE = (__AK_PAGE_DATA - 7) / 41, PAGES = (N + PER_PAGE - 1) / PER_PAGE };
	static void *obj[N];
	int i;

	cr_assert_eq(__ak_blocks_per_page(class_of(40)), PER_PAGE);
	shared_path_only();
	for (i = 0; i < N; i++)
		cr_assert(obj[i] = ak_alloc(40, NULL));
	cr_expect_eq(STATS.slab_pages, PAGES, "40-byte blocks, %d to a page", PER_PAGE);
	cr_expect_eq(test_get_calls, (PAGES + AK_ALLOC_PAGE_RUN - 1) / AK_ALLOC_PAGE_RUN);
	for (i = 0; i < N; i++) {
		ak_free(obj[i]);
		cr_assert_lt(STATS.spare_pages, 2 * AK_ALLOC_PAGE_RUN, "after %d frees", i + 1);
	}
	cr_expect_eq(STATS.slab_pages, AK_ALLOC_KEEP_EMPTY);
	cr_expect_eq(test_put_least, AK_ALLOC_PAGE_RUN, "a call gave back %u pages", test_put_least);
	cr_expect_eq(test_put_most, AK_ALLOC_PAGE_RUN, "a call gave back %u pages", test_put_most);
	cr_expect_eq(STATS.pages_returned, test_put_calls * AK_ALLOC_PAGE_RUN);
	expect_pages_accounted();
	shared_path_done();
	expect_trim_returns_every_page();
}

/* Every spare page, of every run, is used before a page kfunc call is made. */
Test(alloc_host, spare_pages_of_several_runs_are_all_reused_first)
{
	enum { PAGES = 20, PER_PAGE = (__AK_PAGE_DATA - 7) / 41, N = PAGES * PER_PAGE };
	static void *obj[N], *again[2 * AK_ALLOC_PAGE_RUN * PER_PAGE];
	unsigned long long calls, pages;
	int i;

	shared_path_only();
	for (i = 0; i < N; i++)
		cr_assert(obj[i] = ak_alloc(40, NULL));
	/* The first run's pages empty: all but the class's kept ones become spare. */
	for (i = 0; i < AK_ALLOC_PAGE_RUN * PER_PAGE; i++)
		cr_assert_eq(ak_free(obj[i]), 0);
	cr_expect_eq(STATS.spare_pages, (2 * AK_ALLOC_PAGE_RUN - PAGES) +
		     (AK_ALLOC_PAGE_RUN - AK_ALLOC_KEEP_EMPTY), "the second run's rest, the first's");
	pages = STATS.spare_pages + AK_ALLOC_KEEP_EMPTY;
	calls = test_get_calls;
	for (i = 0; i < (int)pages * PER_PAGE; i++)
		cr_assert(again[i] = ak_alloc(40, NULL));
	cr_expect_eq(test_get_calls, calls, "a page kfunc call with spare pages left");
	cr_expect_eq(STATS.spare_pages, 0);
	for (i = 0; i < (int)pages * PER_PAGE; i++)
		cr_assert_eq(ak_free(again[i]), 0);
	for (i = AK_ALLOC_PAGE_RUN * PER_PAGE; i < N; i++)
		cr_assert_eq(ak_free(obj[i]), 0);
	expect_pages_accounted();
	shared_path_done();
	expect_trim_returns_every_page();
}

/*
 * An arena full of free memory that is not where the allocation looks (in
 * a CPU's cache, on another class's empty pages) does not fail it: the
 * allocation brings it back first, from a non-sleepable program too.
 */
Test(alloc_host, a_full_arena_with_memory_free_elsewhere_does_not_fail_an_allocation)
{
	enum { MOST = 64 };
	void *obj[MOST], *small;
	int n, i, err = 0;

	test_pages_left = AK_ALLOC_PAGE_RUN;
	for (n = 0; n < MOST && (obj[n] = ak_alloc(1000, &err)); n++)
		;
	cr_assert_eq(err, -ENOMEM, "the arena never filled: %d", err);
	cr_assert_eq(STATS.slab_pages, AK_ALLOC_PAGE_RUN);
	for (i = 0; i < n; i++)
		cr_assert_eq(ak_free_nosleep(obj[i]), 0);
	/* Freed from a non-sleepable program: cached, or on their class's empty pages. */
	cr_expect_eq(STATS.slab_pages, AK_ALLOC_PAGE_RUN);
	cr_expect_gt(ak_allocator.cpus[0].count[class_of(1000)], 0);
	small = ak_alloc_nosleep(16, &err);
	cr_expect_not_null(small, "-ENOMEM with %d pages of free blocks: %d", n, err);
	cr_expect_eq(STATS.fail_nomem, 1, "the allocations that filled the arena, only");
	cr_expect_eq(ak_free(small), 0);
	expect_pages_accounted();
	expect_trim_returns_every_page();
}

/* A spare page serves any class, and a non-sleepable allocation too. */
Test(alloc_host, a_spare_page_serves_another_class_without_a_page_kfunc)
{
	void *small = ak_alloc(40, NULL), *other;
	unsigned long long calls;

	cr_assert(small);
	cr_expect_eq(STATS.spare_pages, AK_ALLOC_PAGE_RUN - 1);
	calls = test_get_calls;
	other = ak_alloc_nosleep(1000, NULL);
	cr_expect_not_null(other, "a non-sleepable allocation found no page");
	cr_expect_eq(test_get_calls, calls);
	cr_expect_eq(STATS.slab_pages, 2);
	cr_expect_eq(STATS.spare_pages, AK_ALLOC_PAGE_RUN - 2);
	/* Adjacent: the spare pages are the run's, taken in address order. */
	cr_expect_eq((char *)__ak_page_of(other) - (char *)__ak_page_of(small), AK_PAGE_SIZE);
	cr_expect_eq(ak_free(small), 0);
	cr_expect_eq(ak_free(other), 0);
	expect_trim_returns_every_page();
}

/* A large object the arena has no room for but in spare pages gets them back first. */
Test(alloc_host, a_large_object_gets_the_room_spare_pages_held)
{
	void *small, *large;

	test_pages_left = AK_ALLOC_PAGE_RUN;
	small = ak_alloc(40, NULL);
	cr_assert(small);
	cr_expect_eq(test_pages_left, 0);
	large = ak_alloc(3 * AK_PAGE_SIZE, NULL);
	cr_expect_not_null(large, "the spare pages were not given back for a large object");
	cr_expect_eq(STATS.spare_pages, 0);
	cr_expect_eq(STATS.large_pages, 4);
	expect_pages_accounted();
	cr_expect_eq(ak_free(large), 0);
	cr_expect_eq(ak_free(small), 0);
	expect_trim_returns_every_page();
}

Test(alloc_host, a_cpu_cache_serves_a_free_and_an_allocation_without_the_shared_lock)
{
	struct __ak_cpu_cache *cache = &ak_allocator.cpus[0];
	void *a = ak_alloc(48, NULL), *b;

	cr_assert(a);
	ak_allocator.lock.locked = 1;	/* the shared lists are held by someone else */
	cr_expect_eq(ak_free(a), 0);
	cr_expect_eq(ak_allocator.queued, 0, "the block was queued, not cached");
	cr_expect_eq(ak_free(a), -EINVAL, "a cached block freed again");
	cr_expect_eq(STATS.double_frees, 1);
	cr_expect_eq(alloc_stats().objects, 0);
	b = ak_alloc(48, NULL);
	cr_expect_eq(b, a, "the cache's last block is the next one handed out");
	cr_expect_eq(STATS.fail_busy, 0);
	cr_expect_eq(cache->lock.locked, 0, "the cache was left held");
	ak_allocator.lock.locked = 0;
	cr_expect_eq(ak_free(b), 0);
	expect_trim_returns_every_page();
}

Test(alloc_host, a_refill_hands_out_rising_addresses_and_its_other_blocks_are_free)
{
	char *a = ak_alloc(24, NULL), *b = ak_alloc(24, NULL);
	char *page = (char *)((uintptr_t)a & ~(uintptr_t)(AK_PAGE_SIZE - 1));

	cr_assert(a && b);
	cr_expect_eq(b, a + 24, "one refill's blocks come in address order");
	cr_expect_gt(ak_allocator.cpus[0].count[class_of(24)], 0, "a refill moved one block");
	/* The next block waits in the cache: it is free, so a free of it is a double free. */
	cr_expect_eq(ak_free(b + 24), -EINVAL);
	cr_expect_eq(STATS.double_frees, 1);
	/* The page's last block is past the bump: never cut, a bad free. */
	cr_expect_eq(ak_free(page + __AK_PAGE_HDR + (__AK_PAGE_DATA / 24 - 1) * 24), -EINVAL);
	cr_expect_eq(STATS.bad_frees, 1);
	cr_expect_eq(ak_free(a), 0);
	cr_expect_eq(ak_free(b), 0);
	expect_trim_returns_every_page();
}

Test(alloc_host, a_cpu_cache_gives_half_back_past_its_cap_and_trim_empties_it)
{
	enum { N = 1000 };
	static void *obj[N];
	unsigned int class = class_of(16), cap = __ak_cache_cap(class), cpu_blocks;
	int i;

	for (i = 0; i < N; i++)
		cr_assert(obj[i] = ak_alloc(16, NULL));
	for (i = 0; i < N; i++) {
		cr_assert_eq(ak_free(obj[i]), 0);
		cr_assert_leq(ak_allocator.cpus[0].count[class], cap, "after %d frees", i + 1);
	}
	cpu_blocks = ak_allocator.cpus[0].count[class];
	cr_expect_geq(cpu_blocks, cap / 2);
	cr_expect_eq(alloc_stats().objects, 0);
	cr_expect_eq(alloc_stats().bytes, 0);
	/*
	 * The cached blocks (at most 64 of 16 bytes: on two pages at most) keep
	 * their pages; past those, the kept empty ones.
	 */
	cr_expect_leq(STATS.slab_pages, AK_ALLOC_KEEP_EMPTY + 2);
	cr_expect_eq(ak_alloc_trim(), 0);
	cr_expect_eq(ak_allocator.cpus[0].count[class], 0);
	cr_expect_null(ak_allocator.cpus[0].head[class]);
	cr_expect_eq(STATS.pages, 0);
}

Test(alloc_host, the_pool_of_a_reserve_is_not_parked_in_a_cpu_cache)
{
	unsigned int class = class_of(100), per_page = __ak_blocks_per_page(class);
	void *a;

	/* A page's worth: a refill finds no block beyond the pool. */
	cr_assert_eq(ak_alloc_reserve(100, per_page), 0);
	cr_assert(a = ak_alloc_nosleep(100, NULL));
	cr_expect_eq(ak_allocator.cpus[0].count[class], 0,
		     "a refill took pool blocks into one CPU's cache");
	cr_expect_eq(ak_allocator.classes[class].free_blocks, per_page - 1);
	cr_expect_eq(ak_free_nosleep(a), 0);
	expect_trim_returns_every_page();
}
