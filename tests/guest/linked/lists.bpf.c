// SPDX-License-Identifier: GPL-2.0
/*
 * One of the two objects of one program, compiled apart and linked into
 * build/tests/guest/linked.bpf.o (bpftool gen object), as sched_ext builds
 * its schedulers. Both include alloc.h, list.h and htab.h. This one defines
 * the allocator's functions; tables.bpf.c, built with AK_ALLOC_EXTERN,
 * calls them here (alloc.h says why). They must share one arena, one
 * ak_allocator and one set of statistics: this object allocates and lists,
 * the other frees what this one allocated and keeps a table
 * (tests/guest/linked.c runs the halves in turn and checks through the mmap).
 */
#include <arenakit/alloc.h>
#include <arenakit/list.h>
#define AK_HTAB_PROG_MAX_KEY 8	/* the longest key its tables take */
#include <arenakit/htab.h>
#include "guest/bpf_test.h"
#include "guest/linked_shared.h"

struct ak_list __arena_global lists_items;	/* built here, emptied by tables_take */
unsigned long long lists_allocator_seen;	/* &ak_allocator, as this object sees it */

/* tables.bpf.c's */
extern int tables_free(__arg_arena void __arena *obj);
extern long long tables_take_list(__arg_arena struct ak_list __arena *list);

/* For tables.bpf.c: what this object's code sees. */
__noinline unsigned long long lists_items_at(void)
{
	return (unsigned long long)&lists_items;
}

__noinline unsigned long long lists_allocator_at(void)
{
	return (unsigned long long)&ak_allocator;
}

__noinline unsigned long long lists_objects(void)
{
	return test_live_objects();
}

/* Allocate @n items, keys 1..@n, onto @list: 0, or the line that failed. */
static int build(struct ak_list __arena *list, int n)
{
	struct linked_item __arena *item;
	int i;

	ak_list_init(list);
	for (i = ak_opaque_zero(); i < n && can_loop; i++) {
		item = ak_alloc(sizeof(*item), NULL);
		test_expect(item);
		item->key = i + 1;
		ak_list_add_tail(list, &item->node);
	}
	test_expect_eq(ak_list_len(list), n);
	return 0;
}

/* The first half of the driver's run: LINKED_ITEMS items on lists_items. */
SEC("syscall")
int lists_build(void *ctx)
{
	lists_allocator_seen = (unsigned long long)&ak_allocator;
	return build(&lists_items, LINKED_ITEMS);
}

SEC("syscall")
int test_what_one_object_allocates_the_other_frees(void *ctx)
{
	unsigned long long objects = test_live_objects();
	unsigned long long double_frees = ak_allocator.stats.double_frees;
	/* Live on the item's page, which stays, so a second free finds it. */
	struct linked_item __arena *keep = ak_alloc(sizeof(*keep), NULL);
	struct linked_item __arena *item = ak_alloc(sizeof(*item), NULL);

	test_expect(keep && item);
	test_expect_eq(test_live_objects(), objects + 2);
	test_expect_eq(tables_free(item), 0);
	test_expect_eq(test_live_objects(), objects + 1);
	/* The other object's free of it again is refused, and counted here. */
	test_expect_eq(tables_free(item), -EINVAL);
	test_expect_eq(ak_allocator.stats.double_frees, double_frees + 1);
	test_expect_eq(tables_free(keep), 0);
	test_expect_eq(test_live_objects(), objects);
	return 0;
}

struct ak_list __arena_global lists_walked;

SEC("syscall")
int test_a_list_built_here_is_walked_and_freed_there(void *ctx)
{
	unsigned long long objects = test_live_objects();
	int err = build(&lists_walked, 10);

	if (err)
		return err;
	test_expect_eq(test_live_objects(), objects + 10);
	test_expect_eq(tables_take_list(&lists_walked), 55);	/* 1 + ... + 10 */
	test_expect(ak_list_empty(&lists_walked));
	test_expect_eq(test_live_objects(), objects);
	test_expect_eq(ak_allocator.stats.double_frees + ak_allocator.stats.bad_frees, 0);
	return 0;
}

char _license[] SEC("license") = "GPL";
