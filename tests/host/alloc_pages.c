// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <stdlib.h>
#include <criterion/criterion.h>

#include "host/alloc_pages.h"

struct ak_allocator ak_allocator;
unsigned long long test_pages_left = ~0ULL;
unsigned long long test_pages_held;

void *ak_user_pages_get(unsigned int pages)
{
	void *p;

	if (pages > test_pages_left)
		return NULL;
	p = aligned_alloc(AK_PAGE_SIZE, (size_t)pages * AK_PAGE_SIZE);
	if (!p)
		return NULL;
	/* Fresh arena pages read as zeroes; so must these. */
	memset(p, 0, (size_t)pages * AK_PAGE_SIZE);
	test_pages_left -= pages;
	test_pages_held += pages;
	return p;
}

void ak_user_pages_put(void *ptr, unsigned int pages)
{
	free(ptr);
	test_pages_left += pages;
	test_pages_held -= pages;
}

struct ak_alloc_stats alloc_stats(void)
{
	struct ak_alloc_stats s;

	cr_assert_eq(ak_alloc_stats_read(&ak_allocator, &s), 0);
	return s;
}

void expect_pages_accounted(void)
{
	struct ak_alloc_stats *s = &ak_allocator.stats;

	cr_expect_eq(s->pages, s->slab_pages + s->large_pages,
		     "pages %llu != slab %llu + large %llu", s->pages, s->slab_pages,
		     s->large_pages);
	cr_expect_eq(s->pages, test_pages_held, "stats say %llu pages, %llu are held",
		     s->pages, test_pages_held);
}
