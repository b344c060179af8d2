// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* list.h built for user space, over ordinary memory standing in for the arena. */
#include <errno.h>
#include <stdlib.h>
#include <criterion/criterion.h>
#include <arenakit/list.h>

struct item {
	unsigned long long value;	/* before the node: a negative key offset */
	struct arena_list_node node;
};

static struct arena_list_node head;
static struct item items[8];

static void setup(void)
{
	int i;

	arena_list_init(&head);
	for (i = 0; i < 8; i++)
		items[i].value = i;
}

/* The values in list order, checked both ways and against the links. */
static void expect_values(const int *want, int n)
{
	struct arena_list_node *node = head.next;
	struct item *pos;
	int i = 0;

	cr_assert_eq(arena_list_check(&head, NULL, NULL), 0);
	cr_assert_eq(arena_list_count(&head, NULL), n);
	arena_list_for_each_entry(pos, &head, node) {
		cr_assert_lt(i, n);
		cr_expect_eq(pos->value, want[i], "position %d: %llu, want %d", i, pos->value, want[i]);
		i++;
	}
	cr_expect_eq(arena_list_walk_status(pos, &head, node), 0);
	cr_expect_eq(i, n);
	for (node = head.prev, i = n - 1; node != &head; node = node->prev, i--)
		cr_expect_eq(arena_list_entry(node, struct item, node)->value, (unsigned long long)want[i]);
}

TestSuite(list_host, .init = setup);

Test(list_host, empty_list)
{
	struct item *pos;
	int visited = 0;

	cr_expect(arena_list_empty(&head));
	cr_expect_null(arena_list_first(&head));
	cr_expect_null(arena_list_last(&head));
	arena_list_for_each_entry(pos, &head, node)
		visited++;
	cr_expect_eq(visited, 0);
	expect_values(NULL, 0);
}

Test(list_host, single_node)
{
	arena_list_add_head(&items[3].node, &head);
	cr_expect_not(arena_list_empty(&head));
	cr_expect_eq(arena_list_first(&head), &items[3].node);
	cr_expect_eq(arena_list_last(&head), &items[3].node);
	expect_values((int[]){ 3 }, 1);
	arena_list_del(&items[3].node);
	cr_expect(arena_list_empty(&head));
	expect_values(NULL, 0);
}

Test(list_host, add_head_tail_before_after)
{
	arena_list_add_tail(&items[2].node, &head);
	arena_list_add_head(&items[0].node, &head);
	arena_list_add_tail(&items[4].node, &head);
	arena_list_add_after(&items[1].node, &items[0].node);
	arena_list_add_before(&items[3].node, &items[4].node);
	expect_values((int[]){ 0, 1, 2, 3, 4 }, 5);
}

static void fill(int n)
{
	int i;

	for (i = 0; i < n; i++)
		arena_list_add_tail(&items[i].node, &head);
}

Test(list_host, del_head_middle_tail)
{
	fill(5);
	arena_list_del(&items[0].node);
	expect_values((int[]){ 1, 2, 3, 4 }, 4);
	arena_list_del(&items[2].node);
	expect_values((int[]){ 1, 3, 4 }, 3);
	arena_list_del(&items[4].node);
	expect_values((int[]){ 1, 3 }, 2);
}

/* The 6.12 selftests' list_del wrote a local, leaving the node linked. */
Test(list_host, del_really_unlinks)
{
	fill(3);
	arena_list_del(&items[1].node);
	cr_expect_eq(items[0].node.next, &items[2].node);
	cr_expect_eq(items[2].node.prev, &items[0].node);
	cr_expect_null(items[1].node.next);
	cr_expect_null(items[1].node.prev);
}

Test(list_host, del_init_leaves_an_empty_list)
{
	fill(2);
	arena_list_del_init(&items[0].node);
	cr_expect(arena_list_empty(&items[0].node));
	expect_values((int[]){ 1 }, 1);
}

Test(list_host, move_and_move_tail)
{
	fill(4);
	arena_list_move(&items[2].node, &head);
	expect_values((int[]){ 2, 0, 1, 3 }, 4);
	arena_list_move_tail(&items[0].node, &head);
	expect_values((int[]){ 2, 1, 3, 0 }, 4);
}

Test(list_host, splice_keeps_order_and_empties_source)
{
	struct arena_list_node other;

	arena_list_init(&other);
	fill(2);
	arena_list_add_tail(&items[5].node, &other);
	arena_list_add_tail(&items[6].node, &other);
	arena_list_splice_init(&other, &head);
	cr_expect(arena_list_empty(&other));
	expect_values((int[]){ 5, 6, 0, 1 }, 4);
	arena_list_splice_init(&other, &head);	/* splicing an empty list changes nothing */
	expect_values((int[]){ 5, 6, 0, 1 }, 4);
}

Test(list_host, for_each_safe_deletes_every_other)
{
	struct item *pos, *tmp;

	fill(6);
	arena_list_for_each_entry_safe(pos, tmp, &head, node)
		if (pos->value % 2)
			arena_list_del(&pos->node);
	cr_expect_eq(arena_list_walk_status(pos, &head, node), 0);
	expect_values((int[]){ 0, 2, 4 }, 3);
}

Test(list_host, check_names_the_broken_node)
{
	struct arena_list_node *bad = NULL;

	fill(4);
	items[2].node.prev = &items[0].node;	/* 1 -> 2, but 2 points back at 0 */
	cr_expect_eq(arena_list_check(&head, NULL, &bad), -EINVAL);
	cr_expect_eq(bad, &items[2].node);
}

Test(list_host, null_link_is_efault)
{
	struct arena_list_node *bad = NULL;
	struct item *pos;

	fill(3);
	items[1].node.next = NULL;
	cr_expect_eq(arena_list_count(&head, NULL), -EFAULT);
	cr_expect_eq(arena_list_check(&head, NULL, &bad), -EFAULT);
	cr_expect_eq(bad, &items[1].node);
	arena_list_for_each_entry(pos, &head, node)
		;
	cr_expect_eq(arena_list_walk_status(pos, &head, node), -EFAULT);
}

Test(list_host, cursor_is_reset_after_a_full_walk)
{
	struct arena_list_cursor cursor = {};

	fill(5);
	cr_expect_eq(arena_list_count(&head, &cursor), 5);
	cr_expect_null(cursor.pos);
	cr_expect_eq(cursor.seen, 0);
	cr_expect_eq(arena_list_count(&head, &cursor), 5);
}

/* A walk resumed from a cursor counts what remains plus what it had seen. */
Test(list_host, count_resumes_from_cursor)
{
	struct arena_list_cursor cursor = { .pos = &items[3].node, .seen = 3 };

	fill(8);
	cr_expect_eq(arena_list_count(&head, &cursor), 8);
}

Test(list_host, find_by_key)
{
	const long offset = arena_list_key_offset(struct item, node, value);
	struct arena_list_cursor cursor = { .pos = &items[5].node, .seen = 5 };
	struct arena_list_node *found = &head;

	fill(8);
	cr_expect_eq(arena_list_find(&head, offset, 6, NULL, &found), 0);
	cr_expect_eq(found, &items[6].node);
	cr_expect_eq(arena_list_find(&head, offset, 42, NULL, &found), 0);
	cr_expect_null(found, "a missing key was found");
	/* Resumed past the node with key 2: it is not seen again. */
	cr_expect_eq(arena_list_find(&head, offset, 2, &cursor, &found), 0);
	cr_expect_null(found);
	cr_expect_null(cursor.pos);
}

/* A walk resumed from a saved position sees only the rest, then resets. */
Test(list_host, for_each_resume_goes_on_from_cursor)
{
	struct arena_list_cursor cursor = { .pos = &items[4].node, .seen = 4 };
	unsigned long long sum = 0;
	struct item *pos;

	fill(8);
	arena_list_for_each_entry_resume(pos, &head, node, &cursor)
		sum += pos->value;
	cr_expect_eq(cursor.seen, 8);
	cr_expect_eq(sum, 4 + 5 + 6 + 7);
	cr_expect_eq(arena_list_walk_save(pos, &head, node, &cursor), 0);
	cr_expect_null(cursor.pos);
	cr_expect_eq(cursor.seen, 0);
}
