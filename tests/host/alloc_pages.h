/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The page source of alloc.h's user-space build, for the host tests: pages
 * of an address space of their own, as an arena's are, with a limit and a count
 * of the pages held, so the allocator's statistics can be checked against
 * what it really took; and what the allocator's tests (alloc_host.c,
 * alloc_cache_host.c) share.
 */
#ifndef ARENAKIT_TESTS_ALLOC_PAGES_H
#define ARENAKIT_TESTS_ALLOC_PAGES_H

#include <arenakit/alloc.h>

/* Pages the allocator may still take (default: no limit). */
extern unsigned long long test_pages_left;
/* Pages it holds now, by this page source's own count. */
extern unsigned long long test_pages_held;
/* Calls that took pages, calls that gave some back, and the fewest and most pages one gave. */
extern unsigned long long test_get_calls, test_put_calls;
extern unsigned int test_put_least, test_put_most;

/* The allocator's statistics, every CPU's part summed. */
struct ak_alloc_stats alloc_stats(void);

/* pages == slab_pages + large_pages + spare_pages == test_pages_held, or fail the test. */
void expect_pages_accounted(void);

/*
 * Hold this CPU's cache, as a program that this one interrupted would: every
 * call then takes the shared path (the page lists under the allocator's
 * lock), which the tests that call this are about.
 */
void shared_path_only(void);

/* The interrupted program goes on: the cache is free again (trim needs it). */
void shared_path_done(void);

/* ak_alloc_trim gives every page back (the teardown checks the accounting). */
void expect_trim_returns_every_page(void);

#endif
