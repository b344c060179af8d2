// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <criterion/criterion.h>

#include "host/alloc_pages.h"

struct ak_allocator ak_allocator;
unsigned long long test_pages_left = ~0ULL;
unsigned long long test_pages_held;
unsigned long long test_get_calls, test_put_calls;
unsigned int test_put_least = ~0U, test_put_most;

/*
 * An arena's address space: pages handed out first fit (as the kernel's
 * range allocator does), given back in any run of held pages whatever
 * calls took them, zero when handed out again, and unmapped meanwhile, so
 * a touch of a page given back faults.
 */
#define TEST_ARENA_PAGES (1U << 18)	/* 1 GiB, reserved lazily */

static char *test_arena;
static unsigned char test_page_held[TEST_ARENA_PAGES];
static unsigned int test_first_free;	/* no free page below it */

void *ak_user_pages_get(unsigned int pages)
{
	unsigned int first, n;
	char *p;

	if (!pages || pages > test_pages_left)
		return NULL;
	if (!test_arena) {
		test_arena = mmap(NULL, (size_t)TEST_ARENA_PAGES * AK_PAGE_SIZE, PROT_NONE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		cr_assert_neq(test_arena, MAP_FAILED, "the host test arena: %m");
	}
	for (first = test_first_free, n = 0; n < pages && first + n < TEST_ARENA_PAGES;) {
		if (test_page_held[first + n]) {
			first += n + 1;
			n = 0;
		} else {
			n++;
		}
	}
	if (n < pages)
		return NULL;
	p = test_arena + (size_t)first * AK_PAGE_SIZE;
	cr_assert_eq(mprotect(p, (size_t)pages * AK_PAGE_SIZE, PROT_READ | PROT_WRITE), 0);
	memset(test_page_held + first, 1, pages);
	if (first == test_first_free)
		test_first_free += pages;
	test_get_calls++;
	test_pages_left -= pages;
	test_pages_held += pages;
	return p;
}

void ak_user_pages_put(void *ptr, unsigned int pages)
{
	size_t first = ((char *)ptr - test_arena) / AK_PAGE_SIZE, i;

	cr_assert(test_arena && (char *)ptr >= test_arena &&
		  ((char *)ptr - test_arena) % AK_PAGE_SIZE == 0 &&
		  first + pages <= TEST_ARENA_PAGES, "pages %p (%u) are not the arena's", ptr, pages);
	for (i = first; i < first + pages; i++)
		cr_assert(test_page_held[i], "page %zu given back, but not held", i);
	/* Zero when handed out again, as the kernel's are; a fault until then. */
	cr_assert_eq(madvise(ptr, (size_t)pages * AK_PAGE_SIZE, MADV_DONTNEED), 0);
	cr_assert_eq(mprotect(ptr, (size_t)pages * AK_PAGE_SIZE, PROT_NONE), 0);
	memset(test_page_held + first, 0, pages);
	if (first < test_first_free)
		test_first_free = first;
	test_put_calls++;
	if (pages < test_put_least)
		test_put_least = pages;
	if (pages > test_put_most)
		test_put_most = pages;
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

	cr_expect_eq(s->pages, s->slab_pages + s->large_pages + s->spare_pages,
		     "pages %llu != slab %llu + large %llu + spare %llu", s->pages, s->slab_pages,
		     s->large_pages, s->spare_pages);
	cr_expect_eq(s->pages, test_pages_held, "stats say %llu pages, %llu are held",
		     s->pages, test_pages_held);
}

void shared_path_only(void)
{
	ak_allocator.cpus[0].lock.locked = 1;
}

void shared_path_done(void)
{
	ak_allocator.cpus[0].lock.locked = 0;
}

void expect_trim_returns_every_page(void)
{
	cr_expect_eq(ak_alloc_trim(), 0);
	cr_expect_eq(ak_allocator.stats.pages, 0);
}
