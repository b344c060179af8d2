// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * alloc.h built for user space, over heap pages (alloc_pages.c): objects,
 * their classes and blocks, and frees right and wrong. Each test (here and
 * in alloc_cache_host.c, which has the page runs, spare pages and CPU
 * caches, in this suite too) runs in its own process, so each starts from
 * an empty allocator; each ends by checking that every page is accounted
 * for.
 */
#include <stdint.h>
#include <string.h>
#include <criterion/criterion.h>

#include "host/alloc_pages.h"

#define STATS ak_allocator.stats

static void teardown(void)
{
	expect_pages_accounted();
}

TestSuite(alloc_host, .fini = teardown);

Test(alloc_host, freed_block_is_reused)
{
	void *p = ak_alloc(40, NULL), *q;

	cr_assert(p);
	ak_free_nosleep(p);
	q = ak_alloc(40, NULL);
	cr_expect_eq(q, p, "a freed block of the same class was not reused");
	cr_expect_eq(STATS.slab_pages, 1);
	cr_expect_eq(ak_free(q), 0);
}

Test(alloc_host, bad_sizes_fail_with_their_reason)
{
	int err = 0;

	cr_expect_null(ak_alloc(0, &err));
	cr_expect_eq(err, -EINVAL);
	cr_expect_null(ak_alloc(~0ULL, &err), "size + header wrapped to a small object");
	cr_expect_eq(err, -E2BIG);
	cr_expect_null(ak_alloc(~0ULL - 7, &err));
	cr_expect_eq(err, -E2BIG);
	cr_expect_null(ak_alloc(AK_ALLOC_MAX + 1, &err));
	cr_expect_eq(err, -E2BIG);
	cr_expect_null(ak_alloc_nosleep(AK_ALLOC_MAX_SMALL + 1, &err));
	cr_expect_eq(err, -E2BIG, "nosleep cannot take pages for a large object");
	cr_expect_null(ak_alloc_nosleep(0, NULL));
	cr_expect_eq(STATS.fail_size, 6);
	cr_expect_eq(alloc_stats().objects, 0);
	cr_expect_eq(STATS.pages, 0);
}

/* Objects of every class and some multi-page ones do not overlap. */
Test(alloc_host, objects_are_usable_and_apart)
{
	static const size_t sizes[] = { 1, 8, 9, 24, 100, 104, 105, 500, 1000, 2008, 2009,
					2016, 2017, 4032, 4033, 10000, 70000 };
	enum { N = ARRAY_SIZE(sizes) };
	unsigned char *obj[N];
	size_t i, j;

	for (i = 0; i < N; i++) {
		obj[i] = ak_alloc(sizes[i], NULL);
		cr_assert(obj[i], "size %zu", sizes[i]);
		cr_expect_eq((uintptr_t)obj[i] % 8, 0, "size %zu is not 8-aligned", sizes[i]);
		cr_expect_neq((uintptr_t)obj[i] % AK_PAGE_SIZE, 0, "an object at a page start");
		memset(obj[i], (int)i + 1, sizes[i]);
	}
	for (i = 0; i < N; i++)
		for (j = 0; j < sizes[i]; j++)
			cr_assert_eq(obj[i][j], i + 1, "object %zu byte %zu was overwritten", i, j);
	cr_expect_eq(alloc_stats().objects, N);
	for (i = 0; i < N; i++)
		cr_expect_eq(ak_free(obj[i]), 0);
	cr_expect_eq(alloc_stats().objects, 0);
	cr_expect_eq(alloc_stats().bytes, 0);
	/* Emptied pages are kept, AK_ALLOC_KEEP_EMPTY a class, until a trim. */
	cr_expect_eq(ak_alloc_trim(), 0);
	cr_expect_eq(STATS.pages, 0, "sleepable frees and a trim left %llu pages taken", STATS.pages);
}

Test(alloc_host, accounting_returns_to_baseline)
{
	void *small[50], *large[5];
	int i;

	for (i = 0; i < 50; i++)
		small[i] = ak_alloc(100, NULL);
	for (i = 0; i < 5; i++)
		large[i] = ak_alloc(3 * 4096, NULL);
	cr_expect_eq(alloc_stats().objects, 55);
	cr_expect_eq(alloc_stats().bytes, 50 * 104 + 5 * 4 * 4096);
	cr_expect_eq(STATS.slab_pages, 2, "50 blocks of 104 bytes, 38 to a page");
	cr_expect_eq(STATS.large_pages, 5 * 4);
	expect_pages_accounted();
	for (i = 0; i < 50; i++)
		ak_free(small[i]);
	for (i = 0; i < 5; i++)
		ak_free(large[i]);
	cr_expect_eq(alloc_stats().objects, 0);
	cr_expect_eq(alloc_stats().bytes, 0);
	cr_expect_eq(STATS.slab_pages, 2, "the emptied slab pages are kept (AK_ALLOC_KEEP_EMPTY)");
	cr_expect_eq(STATS.large_pages, 0);
	cr_expect_eq(STATS.pages, 2 + STATS.spare_pages);
	expect_trim_returns_every_page();
	/* One run for the small objects' two pages, and the large objects' own. */
	cr_expect_eq(STATS.pages_taken, AK_ALLOC_PAGE_RUN + 5 * 4);
	cr_expect_eq(STATS.pages_returned, STATS.pages_taken);
}

/*
 * Emptied pages go back: at once from a sleepable free, beyond the
 * AK_ALLOC_KEEP_EMPTY a class keeps, and from a non-sleepable one at a trim.
 */
Test(alloc_host, emptied_pages_go_back)
{
	enum { N = 100000, PER_PAGE = (__AK_PAGE_DATA - 7) / 41, PAGES = (N + PER_PAGE - 1) / PER_PAGE };
	static void *obj[N];
	int i;

	cr_assert_eq(__ak_blocks_per_page(__ak_alloc_class(40)), PER_PAGE);
	shared_path_only();
	for (i = 0; i < N; i++)
		cr_assert(obj[i] = ak_alloc(40, NULL));
	cr_expect_eq(STATS.slab_pages, PAGES, "40-byte blocks, %d to a page", PER_PAGE);
	for (i = 0; i < N; i++)
		ak_free(obj[i]);
	cr_expect_eq(STATS.slab_pages, AK_ALLOC_KEEP_EMPTY);
	cr_expect_lt(STATS.spare_pages, 2 * AK_ALLOC_PAGE_RUN, "spare pages past two runs");
	cr_expect_eq(STATS.pages, AK_ALLOC_KEEP_EMPTY + STATS.spare_pages);
	/* From a non-sleepable program they wait for a trim. */
	for (i = 0; i < N; i++)
		obj[i] = ak_alloc(40, NULL);
	for (i = 0; i < N; i++)
		ak_free_nosleep(obj[i]);
	cr_expect_eq(STATS.slab_pages, PAGES);
	expect_pages_accounted();
	shared_path_done();
	expect_trim_returns_every_page();
}

Test(alloc_host, exhaustion_is_enomem_and_recovers)
{
	void *obj[200];
	int n, again, err = 0;

	test_pages_left = 3;
	for (n = 0; n < 200; n++)
		if (!(obj[n] = ak_alloc(100, &err)))
			break;
	cr_expect_eq(n, 3 * 38, "objects from 3 pages of 104-byte blocks");
	cr_expect_eq(err, -ENOMEM);
	cr_expect_eq(STATS.fail_nomem, 1);
	cr_expect_null(ak_alloc(5000, NULL), "a large object fit in a full arena");
	for (again = 0; again < n; again++)
		ak_free(obj[again]);
	cr_expect_eq(alloc_stats().objects, 0);
	for (again = 0; again < 200; again++)
		if (!(obj[again] = ak_alloc(100, NULL)))
			break;
	cr_expect_eq(again, n, "after freeing everything, %d objects fit, not %d", again, n);
	while (again--)
		ak_free(obj[again]);
}

Test(alloc_host, pool_serves_nosleep_allocations)
{
	void *obj[100];
	unsigned long long pages;
	int i, err = 0;

	cr_expect_null(ak_alloc_nosleep(64, &err), "an empty pool handed out an object");
	cr_expect_eq(err, -ENOMEM);
	cr_assert_eq(ak_alloc_reserve(64, 100), 0);
	pages = STATS.pages;
	for (i = 0; i < 100; i++)
		cr_assert(obj[i] = ak_alloc_nosleep(64, NULL), "pool object %d", i);
	cr_expect_eq(STATS.pages, pages, "nosleep allocation took pages");
	for (i = 0; i < 100; i++)
		ak_free(obj[i]);
	cr_expect_eq(alloc_stats().objects, 0);
	cr_expect_eq(STATS.pages, pages, "sleepable frees emptied the reserved pool");
	cr_expect_eq(ak_alloc_reserve(5000, 1), -E2BIG);
	cr_expect_eq(ak_alloc_reserve(~0ULL, 1), -E2BIG, "size + header wrapped to a class");
	cr_expect_eq(ak_alloc_reserve(0, 1), -EINVAL);
	expect_trim_returns_every_page();
}

Test(alloc_host, large_nosleep_free_is_deferred)
{
	void *big = ak_alloc(10000, NULL);

	cr_assert(big);
	cr_expect_eq(STATS.pages, 3);
	cr_expect_eq(ak_free_nosleep(big), 0);
	cr_expect_eq(alloc_stats().objects, 0);
	cr_expect_eq(STATS.pages, 3, "pages returned from a non-sleepable free");
	cr_expect_eq(ak_free_nosleep(big), -EINVAL, "a queued object freed again");
	cr_expect_eq(STATS.double_frees, 1);
	ak_free(NULL);	/* a sleepable call returns them */
	cr_expect_eq(STATS.pages, 0);
}

/*
 * A second free is refused and counted, and changes nothing: a freed small
 * object holds its free-list link where a size would be, which a free must
 * never take for a size (it would give a huge page range back).
 */
Test(alloc_host, double_free_is_detected_and_harmless)
{
	char *a = ak_alloc(24, NULL), *b = ak_alloc(24, NULL), *c, *d;

	cr_assert(a && b);
	memset(b, 0x5a, 24);
	cr_expect_eq(ak_free(a), 0);
	cr_expect_eq(ak_free(a), -EINVAL);
	cr_expect_eq(ak_free_nosleep(a), -EINVAL);
	cr_expect_eq(STATS.double_frees, 2);
	cr_expect_eq(alloc_stats().objects, 1);
	/* The block is on its free list once: two allocations, two blocks. */
	c = ak_alloc(24, NULL);
	d = ak_alloc(24, NULL);
	cr_expect_eq(c, a);
	cr_expect_neq(d, a);
	cr_expect_neq(d, b);
	for (int i = 0; i < 24; i++)
		cr_assert_eq((unsigned char)b[i], 0x5a, "a live object was changed");
	cr_expect_eq(STATS.slab_pages, 1);
	ak_free(b);
	ak_free(c);
	ak_free(d);
	expect_trim_returns_every_page();
}

Test(alloc_host, foreign_and_interior_pointers_are_refused)
{
	/* Two pages of memory the allocator never saw, page-aligned. */
	char *foreign = aligned_alloc(AK_PAGE_SIZE, 2 * AK_PAGE_SIZE);
	char *obj = ak_alloc(100, NULL), *big = ak_alloc(5000, NULL), *next_block;

	cr_assert(foreign && obj && big);
	memset(foreign, 0, 2 * AK_PAGE_SIZE);
	cr_expect_eq(ak_free(foreign + AK_PAGE_SIZE + 72), -EINVAL, "foreign");
	cr_expect_eq(ak_free(obj + 8), -EINVAL, "interior, 8-aligned");
	cr_expect_eq(ak_free(obj + 3), -EINVAL, "interior, misaligned");
	cr_expect_eq(ak_free(big + 4096), -EINVAL, "inside a large object");
	/* The block after obj exists in the page but was never handed out. */
	next_block = obj + 104;
	cr_expect_eq(ak_free(next_block), -EINVAL, "never handed out");
	cr_expect_eq(STATS.bad_frees, 5);
	cr_expect_eq(alloc_stats().objects, 2);
	cr_expect_eq(ak_free(obj), 0);
	cr_expect_eq(ak_free(big), 0);
	expect_trim_returns_every_page();
	free(foreign);
}

Test(alloc_host, busy_lock_fails_fast_and_loses_nothing)
{
	void *obj;
	int err = 0;

	shared_path_only();
	obj = ak_alloc(64, NULL);
	cr_assert(obj);
	ak_allocator.lock.locked = 1;	/* held by someone else */
	cr_expect_null(ak_alloc(64, &err));
	cr_expect_eq(err, -EBUSY);
	cr_expect_eq(STATS.fail_busy, 1);
	cr_expect_eq(ak_free(obj), 0, "a free waited for the lock");
	cr_expect_eq(ak_free(obj), -EINVAL, "a queued block freed again");
	cr_expect_eq(STATS.double_frees, 1);
	cr_expect_eq(alloc_stats().objects, 0);
	cr_expect_neq(ak_allocator.queued, 0, "the block was not queued");
	cr_expect_eq(ak_alloc_reserve(64, 500), -EBUSY);
	cr_expect_eq(STATS.slab_pages, 1, "a page taken under a busy lock was kept");
	cr_expect_eq(STATS.pages, AK_ALLOC_PAGE_RUN, "pages taken under a busy lock were kept");
	ak_allocator.lock.locked = 0;
	/* The lock's next holder puts the queued block back, and it is reused. */
	cr_expect_eq(ak_alloc(64, NULL), obj);
	cr_expect_eq(ak_allocator.queued, 0);
	cr_expect_eq(ak_free(obj), 0);
	shared_path_done();
	expect_trim_returns_every_page();
}

Test(alloc_host, frees_queued_while_busy_are_all_put_back)
{
	enum { N = 500 };
	static void *obj[N];
	int i;

	for (i = 0; i < N; i++)
		cr_assert(obj[i] = ak_alloc(40, NULL));
	ak_allocator.lock.locked = 1;
	for (i = 0; i < N; i++)
		cr_assert_eq(ak_free_nosleep(obj[i]), 0);
	ak_allocator.lock.locked = 0;
	cr_expect_eq(alloc_stats().objects, 0);
	cr_expect_eq(ak_alloc_trim(), 0, "trim puts every queued block back first");
	cr_expect_eq(ak_allocator.queued, 0);
	cr_expect_eq(STATS.pages, 0, "%llu pages kept", STATS.pages);
}

/*
 * Every size up to AK_ALLOC_MAX_SMALL takes the smallest class that holds
 * it, with no block over 12.5% larger than its object (16 bytes aside), and
 * the classes grow: the O(1) class computation against a search.
 */
Test(alloc_host, each_size_takes_the_smallest_class_that_holds_it)
{
	unsigned long long size;
	int class, best;

	for (class = 1; class < AK_ALLOC_CLASSES; class++)
		cr_assert_gt(__ak_block_size(class), __ak_block_size(class - 1));
	cr_expect_eq(__ak_block_size(0), 16);
	cr_expect_eq(__ak_block_size(AK_ALLOC_CLASSES - 1), AK_ALLOC_MAX_SMALL);
	for (size = 1; size <= AK_ALLOC_MAX_SMALL; size++) {
		for (best = 0; __ak_block_size(best) < size; best++)
			;
		class = __ak_alloc_class(size);
		cr_assert_eq(class, best, "size %llu: class %d, not %d", size, class, best);
		cr_assert_eq(__ak_block_size(class) % 8, 0);
		if (size > 16)
			cr_assert_leq(__ak_block_size(class) * 8, size * 9 + 8 * 7,
				      "size %llu wastes over 12.5%% in %u", size,
				      __ak_block_size(class));
	}
	cr_expect_eq(__ak_alloc_class(AK_ALLOC_MAX_SMALL + 1), -1);
}

/*
 * A full page of 16-byte blocks: every live byte after the blocks is used,
 * means live, and lies in no block.
 */
Test(alloc_host, a_full_page_of_the_smallest_blocks)
{
	enum { N = (__AK_PAGE_DATA - 7) / 17 };
	static void *obj[N];
	int i;

	cr_assert_eq(__ak_blocks_per_page(0), N);
	cr_assert_leq(__AK_PAGE_HDR + N * 16, __ak_lives_offset(0), "the live bytes after the blocks");
	for (i = 0; i < N; i++)
		cr_assert(obj[i] = ak_alloc(16, NULL));
	cr_expect_eq(STATS.slab_pages, 1, "%d blocks of 16 bytes to a page", N);
	cr_expect_eq((char *)obj[N - 1] - (char *)obj[0], (N - 1) * 16);
	for (i = 0; i < N; i++)
		cr_expect_eq(((unsigned char *)obj[0] - __AK_PAGE_HDR)[__ak_lives_offset(0) + i], 1,
			     "block %d live", i);
	cr_assert(obj[0] = (ak_free(obj[0]), ak_alloc(16, NULL)));
	cr_expect_eq(STATS.slab_pages, 1, "the freed block again");
	cr_expect_eq(ak_free((char *)obj[0] - __AK_PAGE_HDR + __ak_lives_offset(0)), -EINVAL,
		     "the live bytes are no block");
	cr_expect_eq(STATS.bad_frees, 1);
	for (i = N - 1; i >= 0; i -= 2)
		cr_expect_eq(ak_free(obj[i]), 0);
	for (i = N - 1; i >= 0; i -= 2)
		cr_expect_eq(ak_free(obj[i]), -EINVAL, "block %d freed twice", i);
	cr_expect_eq(STATS.double_frees, N / 2);
	for (i = 0; i < N; i += 2)
		cr_expect_eq(ak_free(obj[i]), 0, "block %d", i);
	cr_expect_eq(alloc_stats().objects, 0);
	cr_expect_eq(STATS.slab_pages, 1, "one emptied page kept");
	expect_trim_returns_every_page();
}

/*
 * Allocating and freeing around a page boundary calls no page kfunc: up to
 * AK_ALLOC_KEEP_EMPTY emptied pages of a class stay.
 */
Test(alloc_host, no_page_traffic_around_a_page_boundary)
{
	static void *obj[101];
	unsigned long long taken;
	int i, round;

	for (i = 0; i < 100; i++)
		cr_assert(obj[i] = ak_alloc(40, NULL));	/* one full page */
	taken = STATS.pages_taken;
	for (round = 0; round < 1000; round++) {
		cr_assert(obj[100] = ak_alloc(40, NULL));
		cr_assert_eq(ak_free(obj[100]), 0);
	}
	/* The second page is a spare one of the first run. */
	cr_expect_eq(STATS.pages_taken, taken, "pages taken and given back in turn");
	cr_expect_eq(STATS.pages_returned, 0);
	for (i = 0; i < 100; i++)
		ak_free(obj[i]);
	cr_expect_eq(STATS.slab_pages, 2);
	cr_expect_eq(ak_alloc_trim(), 0);
}

/* The reciprocal in the page header gives every offset's block, as a division would. */
Test(alloc_host, a_block_index_by_reciprocal_is_the_quotient_for_every_offset)
{
	static union {
		struct __ak_page h;
		char bytes[AK_PAGE_SIZE];
	} page __attribute__((aligned(AK_PAGE_SIZE)));
	unsigned int class, offset, size;

	for (class = 0; class < AK_ALLOC_CLASSES; class++) {
		__ak_page_init(&page.h, class);
		size = __ak_block_size(class);
		for (offset = __AK_PAGE_HDR; offset < AK_PAGE_SIZE; offset++)
			cr_assert_eq(__ak_block_index(page.h.recip, offset), (offset - __AK_PAGE_HDR) / size,
				     "class %u (%u bytes), offset %u", class, size, offset);
	}
}

/*
 * Every class's page: its blocks and their live bytes fit in the page and
 * never overlap, and a page whose blocks held other bytes before (a spare
 * page of another class) starts with every live byte clear.
 */
Test(alloc_host, each_class_page_holds_its_blocks_and_their_live_bytes_apart)
{
	static union {
		struct __ak_page h;
		char bytes[AK_PAGE_SIZE];
	} page __attribute__((aligned(AK_PAGE_SIZE)));
	unsigned int class, n, size, at, i;

	for (class = 0; class < AK_ALLOC_CLASSES; class++) {
		memset(page.bytes + __AK_PAGE_HDR, 0xa5, __AK_PAGE_DATA);
		__ak_page_init(&page.h, class);
		n = __ak_blocks_per_page(class);
		size = __ak_block_size(class);
		at = page.h.lives_at;
		cr_expect_eq(page.h.end, __AK_PAGE_HDR + n * size, "class %u", class);
		cr_expect_eq(n, n <= __AK_HDR_LIVES ? __AK_PAGE_DATA / size : n, "class %u", class);
		if (n <= __AK_HDR_LIVES)
			cr_expect_eq(at, __builtin_offsetof(struct __ak_page, lives), "class %u", class);
		else
			cr_expect(at >= page.h.end && at % 8 == 0 && at + n <= AK_PAGE_SIZE,
				  "class %u: live bytes at %u, blocks end at %u", class, at, page.h.end);
		for (i = 0; i < n; i++)
			cr_expect_eq((unsigned char)page.bytes[at + i], 0, "class %u, block %u", class, i);
		/* The live bytes cost the blocks they cover, and one more at most. */
		cr_expect_geq(n + (n > __AK_HDR_LIVES ? ((n + 7) & ~7U) / size + 1 : 0),
			      __AK_PAGE_DATA / size, "class %u: %u blocks", class, n);
	}
}
