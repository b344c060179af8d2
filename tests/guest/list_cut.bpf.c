// SPDX-License-Identifier: GPL-2.0
/*
 * list.h's walks cut at every budget check they make, under the real
 * verifier, on either kernel: AK_TEST_CUT stands in for a budget that runs
 * out after cut_groups checks (a may_goto's count or clock cannot be set
 * that finely; both cuts take the same path). tests/guest/list_cut.c runs
 * each walk again from its cursor until it ends, on lists whose end falls
 * at every position of a group, and checks every answer and every cut.
 */

#include "test_cut.h"
#include <arenakit/alloc.h>
#include <arenakit/list.h>

#define MAX_NODES (3 * AK_LIST_GROUP + 1)

struct cut_item {
	struct ak_list_node node;
	unsigned long long key;		/* its position on the list */
};

struct ak_list __arena_global cut_list;
struct cut_item __arena *__arena_global cut_items;

/* Set by the driver. */
int nodes, cut_groups, broken;
unsigned long long key;

/* What a run found: the walk's result, and where its cursor or answer points. */
long long result;
long long cursor_seen, cursor_key, answer_key;
struct ak_list_cursor cursor;

#define KEY_OF(at) ((at) ? (long long)ak_list_entry(at, struct cut_item, node)->key : -1LL)

SEC("syscall")
int build(void *ctx)
{
	int i;

	checks_left = -1;
	if (!cut_items)
		cut_items = ak_alloc(MAX_NODES * sizeof(struct cut_item), NULL);
	if (!cut_items)
		return -ENOMEM;
	ak_list_init(&cut_list);
	for (i = 0; i < nodes && i < MAX_NODES; i++) {
		cut_items[i].key = i;
		ak_list_add_tail(&cut_list, &cut_items[i].node);
	}
	__builtin_memset(&cursor, 0, sizeof(cursor));
	return 0;
}

/* Node @broken's prev no longer links back to the node before it. */
SEC("syscall")
int break_node(void *ctx)
{
	if (!cut_items || broken < 0 || broken >= MAX_NODES)
		return -EINVAL;
	cut_items[broken].node.prev = &cut_items[broken].node;
	return 0;
}

static __always_inline void record_cursor(void)
{
	checks_left = -1;
	cursor_seen = cursor.seen;
	cursor_key = cursor.pos == &cut_list.head ? -2 : KEY_OF(cursor.pos);
}

SEC("syscall")
int count_cut(void *ctx)
{
	checks_left = cut_groups;
	result = ak_list_count(&cut_list, &cursor);
	record_cursor();
	return 0;
}

SEC("syscall")
int find_cut(void *ctx)
{
	struct ak_list_node __arena *found = 0;

	checks_left = cut_groups;
	result = ak_list_find(&cut_list, ak_list_key_offset(struct cut_item, node, key), key,
			      &cursor, &found);
	record_cursor();
	answer_key = KEY_OF(found);
	return 0;
}

SEC("syscall")
int check_cut(void *ctx)
{
	struct ak_list_node __arena *bad = 0;

	checks_left = cut_groups;
	result = ak_list_check(&cut_list, &cursor, &bad);
	record_cursor();
	answer_key = bad == &cut_list.head ? -2 : KEY_OF(bad);
	return 0;
}

char _license[] SEC("license") = "GPL";
