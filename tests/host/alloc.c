// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* alloc.h built for user space: pages come from the C heap, with a limit. */
#include <stdint.h>
#include <string.h>
#include <criterion/criterion.h>
#include <arenakit/alloc.h>

#define STATS arena_allocator.stats

Test(alloc_host, freed_block_is_reused)
{
	void *p = arena_alloc(40), *q;

	cr_assert(p);
	arena_free(p);
	q = arena_alloc(40);
	cr_expect_eq(q, p, "a freed block of the same class was not reused");
	cr_expect_eq(STATS.pages, 1);
}

Test(alloc_host, zero_size_is_null)
{
	cr_expect_null(arena_alloc(0));
	cr_expect_null(arena_alloc_nosleep(0));
	cr_expect_eq(STATS.failures, 2);
	cr_expect_eq(STATS.objects, 0);
}

/* Objects of every class and some multi-page ones do not overlap. */
Test(alloc_host, objects_are_usable_and_apart)
{
	static const size_t sizes[] = { 1, 8, 9, 24, 100, 500, 1000, 2040, 2041, 4088,
					4089, 10000, 70000 };
	enum { N = sizeof(sizes) / sizeof(sizes[0]) };
	unsigned char *obj[N];
	size_t i, j;

	for (i = 0; i < N; i++) {
		obj[i] = arena_alloc(sizes[i]);
		cr_assert(obj[i], "size %zu", sizes[i]);
		cr_expect_eq((uintptr_t)obj[i] % 8, 0, "size %zu is not 8-aligned", sizes[i]);
		cr_expect_neq((uint32_t)(uintptr_t)obj[i], 0);
		memset(obj[i], (int)i + 1, sizes[i]);
	}
	for (i = 0; i < N; i++)
		for (j = 0; j < sizes[i]; j++)
			cr_assert_eq(obj[i][j], i + 1, "object %zu byte %zu was overwritten", i, j);
	cr_expect_eq(STATS.objects, N);
	for (i = 0; i < N; i++)
		arena_free(obj[i]);
	cr_expect_eq(STATS.objects, 0);
	cr_expect_eq(STATS.bytes, 0);
}

Test(alloc_host, accounting_returns_to_baseline)
{
	void *small[50], *large[5];
	unsigned long long small_pages;
	int i;

	for (i = 0; i < 50; i++)
		small[i] = arena_alloc(100);
	small_pages = STATS.pages;
	for (i = 0; i < 5; i++)
		large[i] = arena_alloc(3 * 4096);
	cr_expect_eq(STATS.objects, 55);
	cr_expect_eq(STATS.bytes, 50 * 128 + 5 * 4 * 4096);
	cr_expect_eq(STATS.pages, small_pages + 5 * 4);
	for (i = 0; i < 50; i++)
		arena_free(small[i]);
	for (i = 0; i < 5; i++)
		arena_free(large[i]);
	cr_expect_eq(STATS.objects, 0);
	cr_expect_eq(STATS.bytes, 0);
	/* Large objects' pages went back; small ones stay on their free list. */
	cr_expect_eq(STATS.pages, small_pages);
}

Test(alloc_host, exhaustion_is_null_and_recovers)
{
	void *obj[200];
	int n, again;

	arena_user_pages_left = 3;
	for (n = 0; n < 200; n++)
		if (!(obj[n] = arena_alloc(100)))
			break;
	cr_expect_eq(n, 3 * 4096 / 128, "objects from 3 pages of 128-byte blocks");
	cr_expect_eq(STATS.failures, 1);
	cr_expect_null(arena_alloc(5000), "a large object fit in a full arena");
	for (again = 0; again < n; again++)
		arena_free(obj[again]);
	cr_expect_eq(STATS.objects, 0);
	for (again = 0; again < 200; again++)
		if (!(obj[again] = arena_alloc(100)))
			break;
	cr_expect_eq(again, n, "after freeing everything, %d objects fit, not %d", again, n);
}

Test(alloc_host, pool_serves_nosleep_allocations)
{
	void *obj[100];
	unsigned long long pages;
	int i;

	cr_expect_null(arena_alloc_nosleep(64), "an empty pool handed out an object");
	cr_assert_eq(arena_alloc_reserve(64, 100), 0);
	cr_expect_geq(arena_allocator.free_blocks[__arena_alloc_class(64)], 100);
	pages = STATS.pages;
	for (i = 0; i < 100; i++)
		cr_assert(obj[i] = arena_alloc_nosleep(64), "pool object %d", i);
	cr_expect_eq(STATS.pages, pages, "nosleep allocation took pages");
	for (i = 0; i < 100; i++)
		arena_free_nosleep(obj[i]);
	cr_expect_eq(STATS.objects, 0);
	cr_expect_eq(arena_alloc_reserve(5000, 1), -EINVAL);
	cr_expect_null(arena_alloc_nosleep(5000));
}

Test(alloc_host, large_nosleep_free_is_deferred)
{
	void *big = arena_alloc(10000);

	cr_assert(big);
	cr_expect_eq(STATS.pages, 3);
	arena_free_nosleep(big);
	cr_expect_eq(STATS.objects, 0);
	cr_expect_eq(STATS.pages, 3, "pages returned from a non-sleepable free");
	arena_free(NULL);	/* a sleepable call returns them */
	cr_expect_eq(STATS.pages, 0);
}
