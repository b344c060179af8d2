// SPDX-License-Identifier: GPL-2.0
/*
 * The other object of tests/guest/linked/ (lists.bpf.c says what the two
 * are for). Built with AK_ALLOC_EXTERN: the allocator's entry points are
 * declared here and called in lists.bpf.c's object, the one that calls the
 * page kfuncs (libbpf 1.5's linker refuses two that call one kfunc). The
 * arena map and ak_allocator are weak definitions here as there: the link
 * keeps one of each.
 */
#define AK_ALLOC_EXTERN
#include <arenakit/alloc.h>
#include <arenakit/list.h>
#define AK_HTAB_PROG_MAX_KEY 8	/* the longest key its tables take */
#include <arenakit/htab.h>
#include "guest/bpf_test.h"
#include "guest/linked_shared.h"

struct ak_htab __arena_global tables_table;	/* key -> key * 2, from lists_items */
unsigned long long tables_allocator_seen;	/* &ak_allocator, as this object sees it */
unsigned long long tables_taken;		/* items taken off lists_items */

/* lists.bpf.c's */
extern unsigned long long lists_items_at(void);
extern unsigned long long lists_allocator_at(void);
extern unsigned long long lists_objects(void);

/* For lists.bpf.c: free its object here. */
__noinline int tables_free(__arg_arena void __arena *obj)
{
	return ak_free(obj);
}

/* For lists.bpf.c: free every item of @list; the sum of their keys, or -errno. */
__noinline long long tables_take_list(__arg_arena struct ak_list __arena *list)
{
	struct linked_item __arena *item, *next;
	long long sum = 0;
	int err;

	ak_list_for_each_entry_safe(item, next, list, node) {
		sum += item->key;
		err = ak_list_del(list, &item->node);
		if (!err)
			err = ak_free(item);
		if (err)
			return err;
	}
	return sum;
}

/*
 * The second half of the driver's run: every item lists_build listed goes
 * into the table and is freed, here.
 */
SEC("syscall")
int tables_take(void *ctx)
{
	struct ak_list __arena *items = (struct ak_list __arena *)lists_items_at();
	struct linked_item __arena *item, *next;
	unsigned long long key, value;
	int err;

	tables_allocator_seen = (unsigned long long)&ak_allocator;
	err = ak_htab_init(&tables_table, sizeof(key), sizeof(value), 2 * LINKED_ITEMS);
	test_expect_eq(err, 0);
	ak_list_for_each_entry_safe(item, next, items, node) {
		key = item->key;
		value = key * 2;
		err = ak_htab_update(&tables_table, &key, &value, AK_HTAB_NOEXIST);
		test_expect_eq(err, 0);
		test_expect_eq(ak_list_del(items, &item->node), 0);
		test_expect_eq(ak_free(item), 0);
		tables_taken++;
	}
	return 0;
}

/* ... and the table goes back. */
SEC("syscall")
int tables_give_back(void *ctx)
{
	test_expect_eq(ak_htab_destroy(&tables_table), 0);
	return 0;
}

struct ak_htab __arena_global tables_own;

SEC("syscall")
int test_a_table_here_on_the_other_objects_allocator(void *ctx)
{
	unsigned long long objects = test_live_objects(), key, value;
	unsigned long long __arena *found;
	int i, err;

	/* One ak_allocator: the same address and counts from either object. */
	test_expect_eq(lists_allocator_at(), (unsigned long long)&ak_allocator);
	test_expect_eq(lists_objects(), objects);
	test_expect_eq(ak_htab_init(&tables_own, sizeof(key), sizeof(value), 16), 0);
	for (i = ak_opaque_zero(); i < 10 && can_loop; i++) {
		key = i;
		value = i * 3;
		test_expect_eq(ak_htab_update(&tables_own, &key, &value, AK_HTAB_NOEXIST), 0);
	}
	test_expect_eq(tables_own.count, 10);
	key = 7;
	found = ak_htab_lookup(&tables_own, &key, &err);
	test_expect(found);
	test_expect_eq(*found, 21);
	test_expect(test_live_objects() > objects);
	test_expect_eq(lists_objects(), test_live_objects());
	test_expect_eq(ak_htab_destroy(&tables_own), 0);
	test_expect_eq(test_live_objects(), objects);
	test_expect_eq(lists_objects(), objects);
	return 0;
}
