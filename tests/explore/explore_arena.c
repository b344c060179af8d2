// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The schedule explorer's emulated arena (explore.h says what it does): the
 * page source of alloc.h's user-space build, over an address space of its
 * own. Pages come zeroed, a page given back is unmapped at once, and the
 * reset between schedules zeroes the pages a schedule was given instead of
 * unmapping them. explore.c's fault handler reads the pages' states.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "explore/explore.h"
#include "explore/explore_arena.h"

char *arena_base;
unsigned char page_state[ARENA_ALL_PAGES];
unsigned char page_rw[ARENA_ALL_PAGES];
int checking;
static unsigned int arena_bump;
static unsigned long long pages_held;

struct ak_allocator __arena_global ak_allocator;

void *explore_arena_clamp(const void *p)
{
	size_t bytes = (size_t)ARENA_PAGES * AK_PAGE_SIZE;	/* a power of two */

	return arena_base + (((size_t)p - (size_t)arena_base) & (bytes - 1));
}

void *ak_user_pages_get(unsigned int pages)
{
	char *p;

	if (pages > ARENA_PAGES - arena_bump)
		return NULL;
	p = arena_base + (size_t)arena_bump * AK_PAGE_SIZE;
	/* Never used since the reset: zero, as the kernel's pages come. */
	if (memchr(page_rw + arena_bump, 0, pages)) {
		if (mprotect(p, (size_t)pages * AK_PAGE_SIZE, PROT_READ | PROT_WRITE))
			abort();
		memset(page_rw + arena_bump, 1, pages);
	}
	memset(page_state + arena_bump, PAGE_LIVE, pages);
	arena_bump += pages;
	pages_held += pages;
	return p;
}

void ak_user_pages_put(void *ptr, unsigned int pages)
{
	size_t first = ((char *)ptr - arena_base) / AK_PAGE_SIZE, i;

	if ((char *)ptr < arena_base || first + pages > arena_bump ||
	    ((char *)ptr - arena_base) % AK_PAGE_SIZE) {
		explore_fail("pages %p (%u) given back are not the arena's", ptr, pages);
		return;
	}
	for (i = first; i < first + pages; i++)
		if (page_state[i] != PAGE_LIVE) {
			explore_fail("page %zu given back twice", i);
			return;
		}
	memset(page_state + first, PAGE_FREED, pages);
	explore_weak_forget(ptr, (unsigned long long)pages * AK_PAGE_SIZE);
	pages_held -= pages;
	if (checking) {
		/* The schedule is over: nothing is left to touch it; zero is enough. */
		explore_access_object_taken(ptr, (unsigned long long)pages * AK_PAGE_SIZE);
		for (i = first; i < first + pages; i++)
			if (page_rw[i])
				memset(arena_base + i * AK_PAGE_SIZE, 0, AK_PAGE_SIZE);
		return;
	}
	/* Gone: a later touch gets a fresh zero page (see on_fault). */
	madvise(ptr, (size_t)pages * AK_PAGE_SIZE, MADV_DONTNEED);
	mprotect(ptr, (size_t)pages * AK_PAGE_SIZE, PROT_NONE);
	memset(page_rw + first, 0, pages);
}

unsigned long long explore_pages_held(void)
{
	return pages_held;
}

void explore_expect_given_back(int refused_frees_expected)
{
	int err = ak_alloc_trim();
	struct ak_alloc_stats s = explore_alloc_stats();

	if (err)
		explore_fail("trim after everything was freed: %d", err);
	if (s.objects || s.bytes)
		explore_fail("%llu objects, %llu bytes still allocated", s.objects, s.bytes);
	if (s.pages || pages_held)
		explore_fail("after a trim with nothing allocated: stats say %llu pages, the arena holds %llu",
			     s.pages, pages_held);
	if (!refused_frees_expected && (ak_allocator.stats.double_frees || ak_allocator.stats.bad_frees))
		explore_fail("%llu double and %llu bad frees", ak_allocator.stats.double_frees,
			     ak_allocator.stats.bad_frees);
	if (ak_allocator.lock.locked)
		explore_fail("the allocator's lock is held");
}

void arena_reset(void)
{
	if (!arena_base) {
		arena_base = mmap(NULL, (size_t)ARENA_ALL_PAGES * AK_PAGE_SIZE, PROT_NONE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (arena_base == MAP_FAILED)
			abort();
	} else if (arena_bump) {
		size_t i;

		for (i = 0; i < arena_bump; i++) {
			if (page_rw[i])
				memset(arena_base + i * AK_PAGE_SIZE, 0, AK_PAGE_SIZE);
			/* Which pages hold the allocator's headers: none of a fresh arena's. */
			__ak_header_mark((void *)(arena_base + i * AK_PAGE_SIZE), 0);
		}
	}
	memset(page_state, PAGE_UNUSED, sizeof(page_state));
	arena_bump = 0;
	pages_held = 0;
	memset(&ak_allocator, 0, sizeof(ak_allocator));
}
