// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Misuse the headers must refuse with an error, changing nothing: a table
 * used after destroy or never initialised, a set (value size 0), macro
 * arguments with side effects, a node deleted twice, a growth past the
 * largest bucket array, a reserve too large to count, a list cursor that
 * outlived its list's memory, a pointer into a large object's later pages
 * (whatever bytes they hold), a stale free racing its page's reuse.
 */
#include <stdint.h>
#include <string.h>
#include <criterion/criterion.h>

/*
 * A program nested on this CPU, as a tracing program interrupts another at
 * any instruction: set nested_call, and it runs at the nested_at-th
 * schedule point (atomic.h: before each of the library's atomics) of this
 * file's calls from then on, once.
 */
static void (*nested_call)(void);
static unsigned int nested_at;

static void nested_point(void)
{
	void (*call)(void) = nested_call;

	if (call && !--nested_at) {
		nested_call = NULL;
		call();
	}
}

#define AK_SCHED_POINT(op) nested_point()

#include "host/alloc_pages.h"
#include <arenakit/htab.h>
#include <arenakit/list.h>

static void teardown(void)
{
	expect_pages_accounted();
}

TestSuite(misuse, .fini = teardown);

/* Every call on @t is -EINVAL, and neither @t nor the allocator changes. */
static void expect_every_call_refused(struct ak_htab *t)
{
	struct ak_htab before = *t;
	struct ak_alloc_stats stats = ak_allocator.stats;
	struct ak_htab_cursor c = { .htab = t, .skip = 1 };
	uint32_t key = 7;
	uint64_t value = 70, got = 0;
	void *k, *v;
	int err = 0;

	cr_expect_eq(ak_htab_update(t, &key, &value, AK_HTAB_ANY), -EINVAL);
	cr_expect_eq(ak_htab_update_nosleep(t, &key, &value, AK_HTAB_ANY), -EINVAL);
	cr_expect_null(ak_htab_lookup(t, &key, &err));
	cr_expect_eq(err, -EINVAL);
	cr_expect_eq(ak_htab_lookup_copy(t, &key, &got), -EINVAL);
	cr_expect_eq(ak_htab_lookup_and_delete(t, &key, &got), -EINVAL);
	cr_expect_eq(ak_htab_delete(t, &key), -EINVAL);
	cr_expect_eq(ak_htab_delete_nosleep(t, &key), -EINVAL);
	cr_expect_eq(ak_htab_maintain(t), -EINVAL);
	cr_expect_eq(ak_htab_clear(t), -EINVAL);
	cr_expect_eq(ak_htab_reserve(t, 10), -EINVAL);
	cr_expect_eq(ak_htab_next(t, &c, &k, &v), -EINVAL);
	cr_expect_eq(ak_htab_delete_current(t, &c), -EINVAL);
	cr_expect_eq(ak_htab_check_all(t, NULL), -EINVAL);
	cr_expect_eq(ak_htab_destroy(t), -EINVAL);
	cr_expect_eq(memcmp(&before, t, sizeof(before)), 0, "the table changed");
	cr_expect_eq(memcmp(&stats, &ak_allocator.stats, sizeof(stats)), 0,
		     "the allocator changed");
}

Test(misuse, a_destroyed_table_refuses_every_call)
{
	static struct ak_htab t;
	uint32_t key = 1;
	uint64_t value = 10;

	cr_assert_eq(ak_htab_init(&t, sizeof(key), sizeof(value), 16), 0);
	cr_assert_eq(ak_htab_update(&t, &key, &value, AK_HTAB_ANY), 0);
	cr_assert_eq(ak_htab_destroy(&t), 0);
	expect_every_call_refused(&t);
	cr_expect_eq(alloc_stats().objects, 0);
	cr_expect_eq(ak_htab_init(&t, sizeof(key), sizeof(value), 16), 0, "init makes it usable");
	cr_expect_eq(ak_htab_update(&t, &key, &value, AK_HTAB_ANY), 0);
	cr_expect_eq(ak_htab_destroy(&t), 0);
}

Test(misuse, a_never_initialised_table_refuses_every_call)
{
	static struct ak_htab t;	/* zero, as arena memory comes */

	expect_every_call_refused(&t);
}

Test(misuse, a_table_whose_init_failed_refuses_every_call)
{
	static struct ak_htab t;

	test_pages_left = 0;
	cr_assert_eq(ak_htab_init(&t, 4, 8, 16), -ENOMEM);
	expect_every_call_refused(&t);
	test_pages_left = ~0ULL;
}

Test(misuse, a_value_size_of_zero_is_refused)
{
	static struct ak_htab t;

	cr_expect_eq(ak_htab_init(&t, 4, 0, 16), -EINVAL);
	cr_expect_null(t.cur);
}

/* Each argument of each table macro is evaluated exactly once. */
Test(misuse, table_macros_evaluate_each_argument_once)
{
	static struct ak_htab t[4];
	uint32_t keys[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
	uint64_t values[8] = { 10, 10, 10, 10, 10, 10, 10, 10 };
	unsigned long long flags[4] = { AK_HTAB_ANY, AK_HTAB_ANY, AK_HTAB_ANY, AK_HTAB_ANY };
	int errs[4], i, ti = 0, ki = 0, vi = 0, fi = 0, ei = 0;

	for (i = 0; i < 4; i++)
		cr_assert_eq(ak_htab_init(&t[i], 4, 8, 16), 0);
	cr_expect_eq(ak_htab_update(&t[ti++], &keys[ki++], &values[vi++], flags[fi++]), 0);
	cr_expect(ti == 1 && ki == 1 && vi == 1 && fi == 1, "update: %d %d %d %d", ti, ki, vi, fi);
	cr_expect_eq(ak_htab_count(&t[0]), 1);
	cr_expect_eq(ak_htab_count(&t[1]), 0, "written into the wrong table");
	ti = ki = 0;
	cr_expect(ak_htab_lookup(&t[ti++], &keys[ki++], &errs[ei++]));
	cr_expect(ti == 1 && ki == 1 && ei == 1, "lookup: %d %d %d", ti, ki, ei);
	ti = ki = vi = 0;
	cr_expect_eq(ak_htab_lookup_copy(&t[ti++], &keys[ki++], &values[vi++]), 0);
	cr_expect(ti == 1 && ki == 1 && vi == 1, "lookup_copy: %d %d %d", ti, ki, vi);
	ti = ki = vi = 0;
	cr_expect_eq(ak_htab_update_nosleep(&t[ti++], &keys[ki++], &values[vi++], flags[fi++]), 0);
	cr_expect(ti == 1 && ki == 1 && vi == 1, "update_nosleep: %d %d %d", ti, ki, vi);
	ti = ki = vi = 0;
	cr_expect_eq(ak_htab_lookup_and_delete(&t[ti++], &keys[ki++], &values[vi++]), 0);
	cr_expect(ti == 1 && ki == 1 && vi == 1, "lookup_and_delete: %d %d %d", ti, ki, vi);
	ti = ki = 0;
	cr_expect_eq(ak_htab_delete(&t[ti++], &keys[ki++]), -ENOENT);
	cr_expect(ti == 1 && ki == 1, "delete: %d %d", ti, ki);
	ti = ki = 0;
	cr_expect_eq(ak_htab_delete_nosleep(&t[ti++], &keys[ki++]), -ENOENT);
	cr_expect(ti == 1 && ki == 1, "delete_nosleep: %d %d", ti, ki);
	ti = ki = vi = ei = 0;
	cr_expect(ak_htab_lookup_or_init(&t[ti++], &keys[ki++], &values[vi++], &errs[ei++]));
	cr_expect(ti == 1 && ki == 1 && vi == 1 && ei == 1, "lookup_or_init: %d %d %d %d",
		  ti, ki, vi, ei);
	cr_expect_eq(ak_htab_count(&t[0]), 1);
	cr_expect_eq(ak_htab_count(&t[1]), 0, "inserted into the wrong table");
	for (i = 0; i < 4; i++)
		cr_expect_eq(ak_htab_destroy(&t[i]), 0);
	cr_expect_eq(alloc_stats().objects, 0);
}

struct item {
	struct ak_list_node node;
	unsigned long long key;
};

Test(misuse, a_node_deleted_twice_is_refused_and_nothing_written)
{
	static struct ak_list list;
	static struct item a, b;
	struct ak_list_node head_before;

	ak_list_init(&list);
	ak_list_add_tail(&list, &a.node);
	ak_list_add_tail(&list, &b.node);
	cr_assert_eq(ak_list_del(&list, &a.node), 0);
	head_before = list.head;
	cr_expect_eq(ak_list_del(&list, &a.node), -EINVAL);
	cr_expect_eq(ak_list_move(&list, &a.node, &list), -EINVAL);
	cr_expect_eq(ak_list_move_tail(&list, &a.node, &list), -EINVAL);
	cr_expect_eq(ak_list_len(&list), 1);
	cr_expect_eq(memcmp(&head_before, &list.head, sizeof(head_before)), 0);
	cr_expect_null(a.node.next);
	cr_expect_eq(ak_list_check(&list, NULL, NULL), 0);
	/* A node another list holds is refused too: its neighbours say so. */
	b.node.next->prev = NULL;
	cr_expect_eq(ak_list_del(&list, &b.node), -EINVAL);
	cr_expect_eq(ak_list_len(&list), 1);
}

/* A cut walk's cursor, as ak_list_count leaves it after @seen nodes. */
static void cut_cursor(struct ak_list *list, struct ak_list_cursor *c, unsigned long long seen)
{
	struct ak_list_node *pos = list->head.next;
	unsigned long long i;

	for (i = 0; i < seen; i++)
		pos = pos->next;
	*c = (struct ak_list_cursor){ .pos = pos, .list = list, .gen = list->gen, .seen = seen };
}

Test(misuse, a_cursor_does_not_resume_on_a_list_whose_memory_came_back_zeroed)
{
	/* The list in a page that goes back and comes back zeroed. */
	struct ak_list *list = ak_user_pages_get(1);
	struct item *items = (struct item *)(list + 1);
	struct ak_list_cursor c;
	int i;

	cr_assert(list);
	ak_list_init(list);
	for (i = 0; i < 4; i++)
		ak_list_add_tail(list, &items[i].node);
	cut_cursor(list, &c, 2);
	memset(list, 0, AK_PAGE_SIZE);
	ak_list_init(list);
	for (i = 0; i < 4; i++)
		ak_list_add_tail(list, &items[i].node);
	cr_expect_eq(ak_list_count(list, &c), -AK_ESTALE,
		     "a cursor of the list that was here resumed on the new one");
	ak_user_pages_put(list, 1);
}

Test(misuse, a_reserve_too_large_to_count_is_refused)
{
	cr_expect_eq(ak_alloc_reserve(16, AK_ALLOC_MAX_RESERVE + 1), -E2BIG);
	cr_expect_eq(ak_alloc_reserve(16, ~0ULL), -E2BIG);
	cr_expect_eq(ak_allocator.classes[0].reserved, 0);
	cr_expect_eq(ak_allocator.stats.pages, 0, "pages taken for a refused reserve");
}

/*
 * The largest table: growth stops at AK_HTAB_MAX_BUCKETS, the largest
 * array one allocation holds; an update past 3/4 load never tries a larger
 * one, which would fail, and fail again on every later update.
 */
Test(misuse, growth_stops_at_the_largest_bucket_array)
{
	static struct ak_htab t;
	uint32_t key = 1;
	uint64_t value = 10;

	cr_expect_eq(ak_htab_init(&t, 4, 8, AK_HTAB_MAX_BUCKETS + 1), -EINVAL);
	cr_assert_eq(ak_htab_init(&t, 4, 8, AK_HTAB_MAX_BUCKETS), 0);
	cr_assert_eq(t.cur->nbuckets, AK_HTAB_MAX_BUCKETS);
	t.count = AK_HTAB_MAX_BUCKETS;	/* as if loaded past 3/4 */
	cr_expect_eq(ak_htab_update(&t, &key, &value, AK_HTAB_ANY), 0);
	cr_expect_null(t.old, "a growth started past the largest array");
	cr_expect_eq(ak_allocator.stats.fail_size, 0, "an allocation too large was tried");
	t.count = 1;
	cr_expect_eq(ak_htab_destroy(&t), 0);
}

/*
 * A free of @ptr, which is no object (it points into the live large object
 * @big of @pages pages): refused, counted as a bad free, and nothing else
 * changes, in the allocator or in the object; the next small allocations
 * come from elsewhere.
 */
static void expect_refused_inside(char *ptr, char *big, unsigned int pages)
{
	static struct ak_allocator before;
	static char object[5 * AK_PAGE_SIZE];
	size_t room = (size_t)pages * AK_PAGE_SIZE - 64;
	char *a, *b;

	cr_assert_leq(room, sizeof(object));
	before = ak_allocator;
	memcpy(object, big, room);
	cr_assert_eq(ak_free(ptr), -EINVAL, "a free %#zx bytes into a live %u-page object was accepted",
		     (size_t)(ptr - big), pages);
	before.stats.bad_frees++;
	cr_expect_eq(memcmp(&before, &ak_allocator, sizeof(before)), 0,
		     "the allocator changed (bad_frees %llu)", ak_allocator.stats.bad_frees);
	cr_expect_eq(memcmp(object, big, room), 0, "the free wrote into the object");
	a = ak_alloc(16, NULL);
	b = ak_alloc(32, NULL);
	cr_assert(a && b);
	cr_assert(a + 16 <= big || a >= big + room, "ak_alloc(16, NULL) gave %#zx bytes into the object",
		  (size_t)(a - big));
	cr_assert(b + 32 <= big || b >= big + room, "ak_alloc(32, NULL) gave %#zx bytes into the object",
		  (size_t)(b - big));
	cr_expect_eq(ak_free(a), 0);
	cr_expect_eq(ak_free(b), 0);
}

/*
 * The later pages of a large object hold the program's bytes, and a page
 * header is 64 bytes anyone can copy. With a copy of a real slab page's
 * header at such a page's start (as found, and made up with every block
 * live), or of the object's own first page's, a pointer into the page (at a
 * block's start, as a real page's blocks lie) is still no object: refused,
 * counted, and changes nothing.
 */
Test(misuse, a_pointer_into_a_large_objects_later_page_is_refused_whatever_the_page_holds)
{
	static const unsigned int pages[] = { 2, 3, 5 };
	static const unsigned int offsets[] = { 64, 80, 144, 2048, AK_PAGE_SIZE - 16 };
	unsigned char slab[64], made_up[64], own[64];
	const unsigned char *headers[] = { slab, made_up, own };
	struct __ak_page *h = (struct __ak_page *)made_up;
	char *small[8], *big, *page;
	unsigned int n, k, i, o;

	/* A live slab page: eight 16-byte objects, blocks 0 to 7. */
	for (i = 0; i < 8; i++)
		cr_assert(small[i] = ak_alloc(16, NULL));
	memcpy(slab, small[0] - 64, 64);
	cr_assert_eq(((struct __ak_page *)slab)->magic, __AK_PAGE_MAGIC);
	memcpy(made_up, slab, 64);
	h->bump = h->end = AK_PAGE_SIZE;
	h->lives_at = __builtin_offsetof(struct __ak_page, lives);
	memset(h->lives, 0xff, sizeof(h->lives));
	for (n = 0; n < ARRAY_SIZE(pages); n++) {
		big = ak_alloc((size_t)pages[n] * AK_PAGE_SIZE - 64, NULL);
		cr_assert(big);
		cr_assert_eq(alloc_stats().large_pages, pages[n]);
		memcpy(own, big - 64, 64);
		for (k = 1; k < pages[n]; k++) {
			page = big - 64 + (size_t)k * AK_PAGE_SIZE;
			for (i = 0; i < ARRAY_SIZE(headers); i++) {
				memcpy(page, headers[i], 64);
				for (o = 0; o < ARRAY_SIZE(offsets); o++)
					expect_refused_inside(page + offsets[o], big, pages[n]);
			}
			memset(page, 0, 64);
		}
		cr_expect_eq(ak_free(big), 0);
	}
	for (i = 0; i < 8; i++)
		cr_expect_eq(ak_free(small[i]), 0);
	cr_expect_eq(alloc_stats().objects, 0);
	cr_expect_eq(ak_allocator.stats.bad_frees, 3 * (1 + 2 + 4) * 5);
}

static char *nested_object;

static void nested_alloc_32(void)
{
	nested_object = ak_alloc(32, NULL);
}

/*
 * A stale free (of a block whose page went spare) races a program nested on
 * its CPU that takes the page for another class and gets the same address. At
 * whatever point of the free the nested program runs, there are never two
 * owners: either the free is refused and the 32-byte object stays live and
 * whole, or the nested program's object was already there when the free read
 * the page, and the free is a double free of it that no allocator can tell
 * from a good one (it frees it, as a 32-byte object). Never is the block
 * claimed into the 16-byte class.
 */
Test(misuse, a_stale_cached_free_racing_its_pages_reuse_is_refused)
{
	int at, refused = 0, freed_as_32 = 0;
	char *x, *y;

	for (at = 1; at <= 16; at++) {
		x = ak_alloc(16, NULL);
		cr_assert(x);
		cr_assert_eq(ak_free(x), 0);
		/* Its page empties (the cache flushed) and becomes spare. */
		cr_assert_eq(__ak_alloc_reclaim(), 0);
		cr_assert_eq(ak_allocator.stats.slab_pages, 0);
		nested_object = NULL;
		nested_call = nested_alloc_32;
		nested_at = at;
		if (ak_free(x)) {
			refused++;
			cr_expect_eq(alloc_stats().objects, nested_object ? 1 : 0, "point %d", at);
		} else {
			/* The page was the 32-byte object's before the free read it. */
			freed_as_32++;
			cr_expect_eq(nested_object, x, "point %d: a free of what?", at);
			cr_expect_eq(alloc_stats().objects, 0, "point %d", at);
			nested_object = NULL;
		}
		if (nested_call) {	/* the free ended first: the page is taken now */
			nested_call = NULL;
			nested_alloc_32();
		}
		y = ak_alloc(16, NULL);
		cr_assert(y);
		cr_expect(!nested_object || y + 16 <= nested_object || y >= nested_object + 32,
			  "point %d: ak_alloc(16, NULL) handed out the live 32-byte object", at);
		cr_expect_eq(ak_free(y), 0);
		if (nested_object)
			cr_expect_eq(ak_free(nested_object), 0,
				     "point %d: the 32-byte object is no longer live", at);
		cr_expect_eq(alloc_stats().objects, 0, "point %d", at);
		cr_assert_eq(__ak_alloc_reclaim(), 0);
	}
	cr_expect(refused > 0, "no point where the stale free was refused");
}
