// SPDX-License-Identifier: GPL-2.0
/*
 * list.h on a real arena, under the real verifier: edits, walks, a broken
 * link found, stale cursors refused, and the walk users want most: remove
 * (and free) every event whose name matches a glob pattern.
 */
#include <arenakit/alloc.h>
#include <arenakit/glob.h>
#include <arenakit/list.h>
#include "guest/bpf_test.h"

#define NODES 200

struct item {
	struct ak_list_node node;
	__u64 value;
};

struct ak_list __arena_global list_a;
struct ak_list __arena_global list_b;
/* In the arena: indexing it needs no bounds proof, so loop counters stay imprecise. */
struct item __arena *__arena_global items[256];

/* NODES items from the allocator, values 0..NODES-1, on no list. */
static int make_items(void)
{
	int i;

	for (i = ak_opaque_zero(); i < NODES && can_loop; i++) {
		items[i & 255] = ak_alloc(sizeof(struct item), NULL);
		if (!items[i & 255])
			return test_fail("ak_alloc failed at item %d", i);
		items[i & 255]->value = i;
	}
	return 0;
}

static int free_items(void)
{
	int i;

	for (i = ak_opaque_zero(); i < NODES && can_loop; i++)
		test_expect_eq(ak_free(items[i & 255]), 0);
	test_expect_eq(test_live_objects(), 0);
	return 0;
}

static struct item __arena *item(int i)
{
	return items[i & 255];	/* a bound the verifier can see */
}

/* The items, and list_a holding the first @n of them in order. */
static int items_in_list_a(int n)
{
	int i, err = make_items();

	if (err)
		return err;
	ak_list_init(&list_a);
	for (i = ak_opaque_zero(); i < n && can_loop; i++)
		ak_list_add_tail(&list_a, &item(i)->node);
	return 0;
}

/* The values in order, their sum as a checksum, and a sound list. */
static int expect_list(struct ak_list __arena *l, long long count, __u64 sum)
{
	struct item __arena *pos;
	__u64 got = 0;

	test_expect_eq(ak_list_count(l, NULL), count);
	test_expect_eq(ak_list_len(l), count);
	test_expect_eq(ak_list_check(l, NULL, NULL), 0);
	ak_list_for_each_entry(pos, l, node)
		got += pos->value;
	test_expect_eq(ak_list_walk_status(pos, l, node), 0);
	test_expect_eq(got, sum);
	return 0;
}

SEC("syscall")
int test_list_build_and_edit(void *ctx)
{
	struct item __arena *pos, *tmp;
	int i, err;

	err = make_items();
	if (err)
		return err;
	ak_list_init(&list_a);
	ak_list_init(&list_b);
	test_expect(ak_list_empty(&list_a) && !ak_list_first(&list_a));
	for (i = ak_opaque_zero(); i < NODES && can_loop; i++)
		ak_list_add_tail(&list_a, &item(i)->node);
	err = expect_list(&list_a, NODES, NODES * (NODES - 1) / 2);
	if (err)
		return err;
	test_expect(ak_list_first(&list_a) == &item(0)->node);
	test_expect(ak_list_last(&list_a) == &item(NODES - 1)->node);

	/* Odd values move to the other list; then splice them back in front. */
	ak_list_for_each_entry_safe(pos, tmp, &list_a, node)
		if (pos->value & 1)
			ak_list_move_tail(&list_a, &pos->node, &list_b);
	test_expect_eq(ak_list_walk_status(pos, &list_a, node), 0);
	err = expect_list(&list_a, NODES / 2, (NODES / 2) * (NODES / 2 - 1));
	if (err)
		return err;
	test_expect_eq(ak_list_len(&list_b), NODES / 2);
	ak_list_splice_init(&list_b, &list_a);
	test_expect(ak_list_empty(&list_b));
	err = expect_list(&list_a, NODES, NODES * (NODES - 1) / 2);
	if (err)
		return err;
	test_expect(ak_list_first(&list_a) == &item(1)->node);
	ak_list_for_each_entry_safe(pos, tmp, &list_a, node)
		ak_list_del(&list_a, &pos->node);
	test_expect(ak_list_empty(&list_a));
	return free_items();
}

/*
 * ak_list_del must unlink through the neighbours (the 6.12 selftests'
 * list_del wrote a local copy and left the node linked).
 */
SEC("syscall")
int test_list_del_unlinks(void *ctx)
{
	int err;

	err = items_in_list_a(3);
	if (err)
		return err;
	ak_list_del(&list_a, &item(1)->node);
	test_expect(item(0)->node.next == &item(2)->node);
	test_expect(item(2)->node.prev == &item(0)->node);
	test_expect(!item(1)->node.next && !item(1)->node.prev);
	test_expect_eq(ak_list_count(&list_a, NULL), 2);
	test_expect_eq(ak_list_check(&list_a, NULL, NULL), 0);
	ak_list_del(&list_a, &item(0)->node);
	ak_list_del(&list_a, &item(2)->node);
	test_expect(ak_list_empty(&list_a));
	return free_items();
}

SEC("syscall")
int test_list_find(void *ctx)
{
	const long offset = ak_list_key_offset(struct item, node, value);
	struct ak_list_node __arena *found = 0;
	int err;

	err = items_in_list_a(NODES);
	if (err)
		return err;
	test_expect_eq(ak_list_find(&list_a, offset, 150, NULL, &found), 0);
	test_expect(found == &item(150)->node);
	test_expect_eq(ak_list_find(&list_a, offset, NODES + 7, NULL, &found), 0);
	test_expect(!found);
	return 0;
}

/* A corrupted back link is found and named. */
SEC("syscall")
int test_list_check_finds_broken_link(void *ctx)
{
	struct ak_list_node __arena *bad = 0;
	int err;

	err = items_in_list_a(10);
	if (err)
		return err;
	item(6)->node.prev = &item(2)->node;
	test_expect_eq(ak_list_check(&list_a, NULL, &bad), -EINVAL);
	test_expect(bad == &item(6)->node);
	return 0;
}

/*
 * A cursor saved before the list changed is refused, whatever the change;
 * the real verifier sees the cursor in .bss and the list in the arena.
 */
struct ak_list_cursor cursor;

static void save_at(int i)
{
	cursor.pos = &item(i)->node;
	cursor.list = &list_a;
	cursor.gen = list_a.gen;
	cursor.seen = i;
}

SEC("syscall")
int test_list_stale_cursors(void *ctx)
{
	struct ak_list_node __arena *found;
	int err;

	err = items_in_list_a(20);
	if (err)
		return err;
	ak_list_init(&list_b);
	save_at(10);
	test_expect_eq(ak_list_count(&list_a, &cursor), 20);	/* an unchanged list */
	save_at(10);
	ak_list_del(&list_a, &item(3)->node);
	test_expect_eq(ak_list_count(&list_a, &cursor), -AK_ESTALE);
	test_expect(!cursor.pos && !cursor.seen);
	test_expect_eq(ak_list_count(&list_a, &cursor), 19);
	save_at(10);
	ak_list_add_head(&list_a, &item(3)->node);
	test_expect_eq(ak_list_check(&list_a, &cursor, NULL), -AK_ESTALE);
	save_at(10);
	ak_list_move(&list_a, &item(10)->node, &list_b);
	test_expect_eq(ak_list_find(&list_a, 8, 999, &cursor, &found), -AK_ESTALE);
	return 0;
}

/* Events with names, as a tracing program would keep them. */
struct event {
	struct ak_list_node node;
	char name[24];
	unsigned int name_len;
};

struct ak_list __arena_global events;
char __arena_global pattern[16] = "tmp*.o";
struct ak_list_cursor event_cursor;

SEC("syscall")
int test_list_delete_matching_events(void *ctx)
{
	struct event __arena *ev, *tmp;
	int i, kept = ak_opaque_zero(), err;

	ak_list_init(&events);
	for (i = ak_opaque_zero(); i < 300 && can_loop; i++) {
		ev = ak_alloc(sizeof(*ev), NULL);
		if (!ev)
			return test_fail("ak_alloc failed at event %d", i);
		/* "tmpN.o" for every third event, "keepN.c" for the rest. */
		if ((unsigned int)i % 3 == 0) {
			ev->name[0] = 't'; ev->name[1] = 'm'; ev->name[2] = 'p';
			ev->name[3] = '0' + (unsigned int)i % 10; ev->name[4] = '.'; ev->name[5] = 'o';
			ev->name[6] = 0;
		} else {
			ev->name[0] = 'k'; ev->name[1] = 'e'; ev->name[2] = 'e';
			ev->name[3] = 'p'; ev->name[4] = '.'; ev->name[5] = 'c';
			ev->name[6] = 0;
		}
		ev->name_len = 6;
		ak_list_add_tail(&events, &ev->node);
	}
	ak_list_for_each_entry_resume_safe(ev, tmp, &events, node, &event_cursor) {
		if (ak_glob_match_len(pattern, ev->name, ev->name_len) == 1) {
			ak_list_del(&events, &ev->node);
			test_expect_eq(ak_free(ev), 0);
		}
	}
	err = ak_list_walk_save(ev, &events, node, &event_cursor);
	test_expect_eq(err, 0);
	test_expect_eq(ak_list_len(&events), 200);
	test_expect_eq(test_live_objects(), 200);
	ak_list_for_each_entry(ev, &events, node)
		kept += ev->name[0] == 'k';
	test_expect_eq(kept, 200);
	ak_list_for_each_entry_safe(ev, tmp, &events, node) {
		ak_list_del(&events, &ev->node);
		ak_free(ev);
	}
	test_expect_eq(test_live_objects(), 0);
	test_expect_eq(ak_alloc_trim(), 0);
	test_expect_eq(ak_allocator.stats.pages, 0);
	return 0;
}

char _license[] SEC("license") = "GPL";
