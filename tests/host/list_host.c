// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* list.h built for user space, over ordinary memory standing in for the arena. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>
#include <arenakit/list.h>
#include <arenakit/list_user.h>
#include <arenakit/rculist.h>

struct item {
	unsigned long long value;	/* before the node: a negative key offset */
	struct ak_list_node node;
};

static struct ak_list list;
static struct item items[8];

static void setup(void)
{
	int i;

	ak_list_init(&list);
	for (i = 0; i < 8; i++)
		items[i].value = i;
}

/* The values in list order, checked both ways and against the links. */
static void expect_values(const int *want, int n)
{
	struct ak_list_node *node = list.head.next;
	struct item *pos;
	int i = 0;

	cr_assert_eq(ak_list_check(&list, NULL, NULL), 0);
	cr_assert_eq(ak_list_count(&list, NULL), n);
	cr_assert_eq(ak_list_len(&list), (unsigned long long)n);
	ak_list_for_each_entry(pos, &list, node) {
		cr_assert_lt(i, n);
		cr_expect_eq(pos->value, want[i], "position %d: %llu, want %d", i, pos->value, want[i]);
		i++;
	}
	cr_expect_eq(ak_list_walk_status(pos, &list, node), 0);
	cr_expect_eq(i, n);
	for (node = list.head.prev, i = n - 1; node != &list.head; node = node->prev, i--)
		cr_expect_eq(ak_list_entry(node, struct item, node)->value, (unsigned long long)want[i]);
}

TestSuite(list_host, .init = setup);

Test(list_host, empty_list)
{
	struct item *pos;
	int visited = 0;

	cr_expect(ak_list_empty(&list));
	cr_expect_null(ak_list_first(&list));
	cr_expect_null(ak_list_last(&list));
	ak_list_for_each_entry(pos, &list, node)
		visited++;
	cr_expect_eq(visited, 0);
	expect_values(NULL, 0);
}

Test(list_host, single_node)
{
	ak_list_add_head(&list, &items[3].node);
	cr_expect_not(ak_list_empty(&list));
	cr_expect_eq(ak_list_first(&list), &items[3].node);
	cr_expect_eq(ak_list_last(&list), &items[3].node);
	expect_values((int[]){ 3 }, 1);
	ak_list_del(&list, &items[3].node);
	cr_expect(ak_list_empty(&list));
	expect_values(NULL, 0);
}

Test(list_host, add_head_tail_before_after)
{
	ak_list_add_tail(&list, &items[2].node);
	ak_list_add_head(&list, &items[0].node);
	ak_list_add_tail(&list, &items[4].node);
	ak_list_add_after(&list, &items[1].node, &items[0].node);
	ak_list_add_before(&list, &items[3].node, &items[4].node);
	expect_values((int[]){ 0, 1, 2, 3, 4 }, 5);
}

static void fill(int n)
{
	int i;

	for (i = 0; i < n; i++)
		ak_list_add_tail(&list, &items[i].node);
}

/*
 * A cursor as a walk cut at items[i] would leave it (in user space the
 * budget never runs out, so cuts are made by hand).
 */
static struct ak_list_cursor saved_at(int i)
{
	struct ak_list_cursor cursor = {
		.pos = &items[i].node, .list = &list, .gen = list.gen, .seen = i,
	};

	return cursor;
}

Test(list_host, del_head_middle_tail)
{
	fill(5);
	ak_list_del(&list, &items[0].node);
	expect_values((int[]){ 1, 2, 3, 4 }, 4);
	ak_list_del(&list, &items[2].node);
	expect_values((int[]){ 1, 3, 4 }, 3);
	ak_list_del(&list, &items[4].node);
	expect_values((int[]){ 1, 3 }, 2);
}

/* The 6.12 selftests' list_del wrote a local, leaving the node linked. */
Test(list_host, del_really_unlinks)
{
	fill(3);
	ak_list_del(&list, &items[1].node);
	cr_expect_eq(items[0].node.next, &items[2].node);
	cr_expect_eq(items[2].node.prev, &items[0].node);
	cr_expect_null(items[1].node.next);
	cr_expect_null(items[1].node.prev);
}

Test(list_host, move_and_move_tail)
{
	fill(4);
	ak_list_move(&list, &items[2].node, &list);
	expect_values((int[]){ 2, 0, 1, 3 }, 4);
	ak_list_move_tail(&list, &items[0].node, &list);
	expect_values((int[]){ 2, 1, 3, 0 }, 4);
}

Test(list_host, splice_keeps_order_and_empties_source)
{
	struct ak_list other = {};

	ak_list_init(&other);
	fill(2);
	ak_list_add_tail(&other, &items[5].node);
	ak_list_add_tail(&other, &items[6].node);
	ak_list_splice_init(&other, &list);
	cr_expect(ak_list_empty(&other));
	cr_expect_eq(ak_list_len(&other), 0);
	expect_values((int[]){ 5, 6, 0, 1 }, 4);
	ak_list_splice_init(&other, &list);	/* splicing an empty list changes nothing */
	expect_values((int[]){ 5, 6, 0, 1 }, 4);
}

Test(list_host, for_each_safe_deletes_every_other)
{
	struct item *pos, *tmp;

	fill(6);
	ak_list_for_each_entry_safe(pos, tmp, &list, node)
		if (pos->value % 2)
			ak_list_del(&list, &pos->node);
	cr_expect_eq(ak_list_walk_status(pos, &list, node), 0);
	expect_values((int[]){ 0, 2, 4 }, 3);
}

Test(list_host, check_names_the_broken_node)
{
	struct ak_list_node *bad = NULL;

	fill(4);
	items[2].node.prev = &items[0].node;	/* 1 -> 2, but 2 points back at 0 */
	cr_expect_eq(ak_list_check(&list, NULL, &bad), -EINVAL);
	cr_expect_eq(bad, &items[2].node);
}

Test(list_host, null_link_is_efault)
{
	struct ak_list_node *bad = NULL;
	struct item *pos;

	fill(3);
	items[1].node.next = NULL;
	cr_expect_eq(ak_list_count(&list, NULL), -EFAULT);
	cr_expect_eq(ak_list_check(&list, NULL, &bad), -EFAULT);
	cr_expect_eq(bad, &items[1].node);
	ak_list_for_each_entry(pos, &list, node)
		;
	cr_expect_eq(ak_list_walk_status(pos, &list, node), -EFAULT);
}

Test(list_host, cursor_is_reset_after_a_full_walk)
{
	struct ak_list_cursor cursor = {};

	fill(5);
	cr_expect_eq(ak_list_count(&list, &cursor), 5);
	cr_expect_null(cursor.pos);
	cr_expect_eq(cursor.seen, 0);
	cr_expect_eq(ak_list_count(&list, &cursor), 5);
}

/* A walk resumed from a cursor counts what remains plus what it had seen. */
Test(list_host, count_resumes_from_cursor)
{
	struct ak_list_cursor cursor;

	fill(8);
	cursor = saved_at(3);
	cr_expect_eq(ak_list_count(&list, &cursor), 8);
}

Test(list_host, find_by_key)
{
	const long offset = ak_list_key_offset(struct item, node, value);
	struct ak_list_cursor cursor;
	struct ak_list_node *found = &list.head;

	fill(8);
	cursor = saved_at(5);
	cr_expect_eq(ak_list_find(&list, offset, 6, NULL, &found), 0);
	cr_expect_eq(found, &items[6].node);
	cr_expect_eq(ak_list_find(&list, offset, 42, NULL, &found), 0);
	cr_expect_null(found, "a missing key was found");
	/* Resumed past the node with key 2: it is not seen again. */
	cr_expect_eq(ak_list_find(&list, offset, 2, &cursor, &found), 0);
	cr_expect_null(found);
	cr_expect_null(cursor.pos);
}

/* A walk resumed from a saved position sees only the rest, then resets. */
Test(list_host, for_each_resume_goes_on_from_cursor)
{
	struct ak_list_cursor cursor;
	unsigned long long sum = 0;
	struct item *pos;

	fill(8);
	cursor = saved_at(4);
	ak_list_for_each_entry_resume(pos, &list, node, &cursor)
		sum += pos->value;
	cr_expect_eq(cursor.seen, 8);
	cr_expect_eq(sum, 4 + 5 + 6 + 7);
	cr_expect_eq(ak_list_walk_save(pos, &list, node, &cursor), 0);
	cr_expect_null(cursor.pos);
	cr_expect_eq(cursor.seen, 0);
}

/*
 * A cursor saved before the list changed is refused (-AK_ESTALE) and reset,
 * whatever the change: resumed, it would give an answer for neither list.
 */
Test(list_host, delete_before_cursor_is_stale_not_a_wrong_count)
{
	struct ak_list_cursor cursor;

	fill(8);
	cursor = saved_at(4);
	ak_list_del(&list, &items[1].node);
	cr_expect_eq(ak_list_count(&list, &cursor), -AK_ESTALE, "would have said 8");
	cr_expect_null(cursor.pos);
	cr_expect_eq(cursor.seen, 0);
	cr_expect_eq(ak_list_count(&list, &cursor), 7, "a fresh start is exact");
}

Test(list_host, add_at_head_is_stale)
{
	struct ak_list_cursor cursor;

	fill(6);
	cursor = saved_at(3);
	ak_list_add_head(&list, &items[7].node);
	cr_expect_eq(ak_list_count(&list, &cursor), -AK_ESTALE, "would have missed it");
	cr_expect_eq(ak_list_count(&list, &cursor), 7);
}

/* A cursor whose node moved to another list is stale: followed, it would circle that list. */
Test(list_host, cursor_node_moved_to_another_list_is_stale)
{
	struct ak_list other = {};
	struct ak_list_cursor cursor;
	struct ak_list_node *found;

	ak_list_init(&other);
	fill(6);
	cursor = saved_at(3);
	ak_list_move(&list, &items[3].node, &other);
	cr_expect_eq(ak_list_find(&list, ak_list_key_offset(struct item, node, value), 99,
				  &cursor, &found), -AK_ESTALE);
	cr_expect_null(cursor.pos);
	/* A cursor of one list handed to another is stale too. */
	cursor = saved_at(2);
	cr_expect_eq(ak_list_check(&other, &cursor, NULL), -AK_ESTALE);
}

Test(list_host, stale_resume_macro_says_so_and_resets)
{
	struct ak_list_cursor cursor;
	struct item *pos;
	int visited = 0;

	fill(5);
	cursor = saved_at(2);
	ak_list_del(&list, &items[0].node);
	ak_list_for_each_entry_resume(pos, &list, node, &cursor)
		visited++;
	cr_expect_eq(visited, 0);
	cr_expect_eq(ak_list_walk_save(pos, &list, node, &cursor), -AK_ESTALE);
	cr_expect_null(cursor.pos);
	cr_expect_eq(cursor.seen, 0);
	ak_list_for_each_entry_resume(pos, &list, node, &cursor)
		visited++;
	cr_expect_eq(ak_list_walk_save(pos, &list, node, &cursor), 0);
	cr_expect_eq(visited, 4);
}

/* -EFAULT resets the whole cursor, its count too: the walk starts again from the head. */
Test(list_host, efault_resets_the_cursor)
{
	struct ak_list_cursor cursor;
	struct item *pos;

	fill(6);
	items[4].node.next = NULL;
	cursor = saved_at(2);
	cr_expect_eq(ak_list_count(&list, &cursor), -EFAULT);
	cr_expect_null(cursor.pos);
	cr_expect_null(cursor.list);
	cr_expect_eq(cursor.seen, 0);
	cursor = saved_at(2);
	ak_list_for_each_entry_resume(pos, &list, node, &cursor)
		;
	cr_expect_eq(ak_list_walk_save(pos, &list, node, &cursor), -EFAULT);
	cr_expect_null(cursor.pos);
	cr_expect_eq(cursor.seen, 0, "a restarted walk would count twice");
}

Test(list_host, check_catches_a_wrong_length)
{
	struct ak_list_node *bad = NULL;

	fill(4);
	list.len = 5;
	cr_expect_eq(ak_list_check(&list, NULL, &bad), -EINVAL);
	cr_expect_eq(bad, &list.head);
}

/* The walk users need most: delete as it goes, and go on after a cut. */
Test(list_host, resume_safe_deletes_and_goes_on)
{
	struct ak_list_cursor cursor;
	struct item *pos, *tmp;

	fill(8);
	/* A first run deleted items 1 and 3 and was cut at item 4. */
	ak_list_del(&list, &items[1].node);
	ak_list_del(&list, &items[3].node);
	cursor = saved_at(4);
	ak_list_for_each_entry_resume_safe(pos, tmp, &list, node, &cursor)
		if (pos->value % 2)
			ak_list_del(&list, &pos->node);
	cr_expect_eq(ak_list_walk_save(pos, &list, node, &cursor), 0);
	cr_expect_eq(cursor.seen, 0);
	expect_values((int[]){ 0, 2, 4, 6 }, 4);
}

Test(list_host, resume_safe_save_keeps_its_own_deletions_valid)
{
	struct ak_list_cursor cursor = {};
	struct item *pos, *tmp;

	fill(8);
	/* Stop by hand after deleting 0 and 2, as a cut at item 3 would. */
	ak_list_for_each_entry_resume_safe(pos, tmp, &list, node, &cursor) {
		if (pos->value == 3)
			break;
		if (pos->value % 2 == 0)
			ak_list_del(&list, &pos->node);
	}
	__ak_list_cursor_save(&cursor, &list, &pos->node, cursor.seen);
	ak_list_for_each_entry_resume_safe(pos, tmp, &list, node, &cursor)
		if (pos->value % 2 == 0)
			ak_list_del(&list, &pos->node);
	cr_expect_eq(ak_list_walk_save(pos, &list, node, &cursor), 0);
	expect_values((int[]){ 1, 3, 5, 7 }, 4);
}

Test(list_host, whole_walks_count_find_and_check)
{
	struct ak_list_node *found = NULL, *bad = NULL;
	int i;

	for (i = 0; i < 8; i++)
		ak_list_add_tail(&list, &items[i].node);
	cr_expect_eq(ak_list_count_all(&list), 8);
	cr_expect_eq(ak_list_find_all(&list, ak_list_key_offset(struct item, node, value), 5,
				      &found), 0);
	cr_expect_eq(found, &items[5].node);
	cr_expect_eq(ak_list_find_all(&list, ak_list_key_offset(struct item, node, value), 9,
				      &found), 0);
	cr_expect_null(found);
	cr_expect_eq(ak_list_check_all(&list, &bad), 0);
	items[4].node.prev = &items[2].node;	/* a link that disagrees */
	cr_expect_eq(ak_list_check_all(&list, &bad), -EINVAL);
	cr_expect_eq(bad, &items[4].node);
	items[4].node.prev = &items[3].node;
	items[6].node.next = NULL;		/* a NULL link */
	cr_expect_eq(ak_list_count_all(&list), -EFAULT);
}

/*
 * ak_list_next_copy, the loader's walk through the mmap: each entry copied
 * whole under the writers' lock, in order, once; -AK_ESTALE after a change.
 */
struct record {
	unsigned long long key;
	struct ak_list_node node;
	char payload[40];		/* after the node: the whole entry is copied */
};

static struct ak_lock lock;

static void record_fill(struct record *r, unsigned long long key)
{
	r->key = key;
	snprintf(r->payload, sizeof(r->payload), "record %llu", key);
}

static void expect_record(const struct record *copy, unsigned long long key)
{
	char want[sizeof(copy->payload)];

	snprintf(want, sizeof(want), "record %llu", key);
	cr_expect_eq(copy->key, key, "key %llu, want %llu", copy->key, key);
	cr_expect_str_eq(copy->payload, want);
}

Test(list_host, next_copy_copies_each_entry_once_in_order)
{
	enum { N = 1000 };
	static struct record records[N];
	struct ak_list_cursor c = {};
	struct record copy;
	int i, err;

	for (i = 0; i < N; i++) {
		record_fill(&records[i], i);
		ak_list_add_tail(&list, &records[i].node);
	}
	for (i = 0; (err = ak_list_next_copy(&list, &lock, &c, &copy, node)) == 0; i++) {
		cr_assert_lt(i, N, "more entries than the list holds");
		expect_record(&copy, i);
	}
	cr_expect_eq(err, -ENOENT);
	cr_expect_eq(i, N);
	cr_expect_null(c.pos, "the end resets the cursor");
	cr_expect_null(c.list);
	cr_expect_not(ak_lock_is_locked(&lock), "nothing held between calls");
	/* The reset cursor begins a new walk. */
	cr_expect_eq(ak_list_next_copy(&list, &lock, &c, &copy, node), 0);
	expect_record(&copy, 0);
}

Test(list_host, next_copy_after_a_change_is_stale_and_begins_again)
{
	struct ak_list_cursor c = {};
	struct item copy;
	int n;

	fill(5);
	cr_assert_eq(ak_list_next_copy(&list, &lock, &c, &copy, node), 0);
	cr_assert_eq(ak_list_next_copy(&list, &lock, &c, &copy, node), 0);
	ak_list_add_tail(&list, &items[5].node);
	cr_expect_eq(ak_list_next_copy(&list, &lock, &c, &copy, node), -AK_ESTALE);
	cr_expect_null(c.pos, "a stale walk resets the cursor");
	cr_expect_null(c.list);
	/* Begun again, it sees the list as it is now. */
	for (n = 0; ak_list_next_copy(&list, &lock, &c, &copy, node) == 0; n++)
		cr_expect_eq(copy.value, (unsigned long long)n);
	cr_expect_eq(n, 6);
	/* A delete, here of the entry the walk would copy next. */
	cr_assert_eq(ak_list_next_copy(&list, &lock, &c, &copy, node), 0);
	cr_assert_eq(ak_list_del(&list, &items[1].node), 0);
	cr_expect_eq(ak_list_next_copy(&list, &lock, &c, &copy, node), -AK_ESTALE);
	/* A change after the last entry was copied: not complete either. */
	for (n = 0; n < 5; n++)
		cr_assert_eq(ak_list_next_copy(&list, &lock, &c, &copy, node), 0);
	cr_assert_eq(ak_list_del(&list, &items[0].node), 0);
	cr_expect_eq(ak_list_next_copy(&list, &lock, &c, &copy, node), -AK_ESTALE);
}

Test(list_host, next_copy_is_ebusy_while_a_writer_holds_the_lock_then_goes_on)
{
	struct ak_list_cursor c = {}, before;
	struct item copy;

	fill(4);
	cr_assert_eq(ak_list_next_copy(&list, &lock, &c, &copy, node), 0);
	cr_assert_eq(ak_list_next_copy(&list, &lock, &c, &copy, node), 0);
	cr_assert_eq(ak_lock_acquire(&lock), 0, "a writer holds the lock");
	before = c;
	copy.value = 99;
	cr_expect_eq(ak_list_next_copy(&list, &lock, &c, &copy, node), -EBUSY);
	cr_expect_eq(memcmp(&c, &before, sizeof(c)), 0, "-EBUSY leaves the cursor");
	cr_expect_eq(copy.value, 99, "-EBUSY copies nothing");
	ak_lock_release(&lock);
	cr_expect_eq(ak_list_next_copy(&list, &lock, &c, &copy, node), 0);
	cr_expect_eq(copy.value, 2, "the walk goes on where it was");
	cr_expect_eq(ak_list_next_copy(&list, &lock, &c, &copy, node), 0);
	cr_expect_eq(copy.value, 3);
	cr_expect_eq(ak_list_next_copy(&list, &lock, &c, &copy, node), -ENOENT);
}

Test(list_host, next_copy_of_an_empty_list_ends_at_once)
{
	struct ak_list_cursor c = {};
	struct item copy = { .value = 99 };

	cr_expect_eq(ak_list_next_copy(&list, &lock, &c, &copy, node), -ENOENT);
	cr_expect_null(c.pos);
	cr_expect_eq(copy.value, 99);
	cr_expect_not(ak_lock_is_locked(&lock));
}

Test(list_host, next_copy_with_another_lists_cursor_is_stale)
{
	struct ak_list other = {};
	struct ak_list_cursor c = {};
	struct item copy;

	ak_list_init(&other);
	fill(3);
	ak_list_add_tail(&other, &items[3].node);
	ak_list_add_tail(&other, &items[4].node);
	cr_assert_eq(ak_list_next_copy(&other, &lock, &c, &copy, node), 0);
	cr_expect_eq(ak_list_next_copy(&list, &lock, &c, &copy, node), -AK_ESTALE);
	cr_expect_null(c.pos);
	cr_expect_null(c.list);
}

Test(list_host, next_copy_meets_a_null_link_with_efault)
{
	struct ak_list_cursor c = {};
	struct item copy;

	fill(3);
	items[1].node.next = NULL;	/* a deleted node still linked */
	cr_assert_eq(ak_list_next_copy(&list, &lock, &c, &copy, node), 0);
	copy.value = 99;
	cr_expect_eq(ak_list_next_copy(&list, &lock, &c, &copy, node), -EFAULT);
	cr_expect_eq(copy.value, 99, "nothing copied past the NULL link");
	cr_expect_null(c.pos);
	cr_expect_not(ak_lock_is_locked(&lock));
}

/* Each list macro evaluates once each argument it is given as an expression. */
static int evals[4];
#define ONCE(i, x) (evals[i]++, (x))
/* Run the call, then expect each of its first @args ONCE()s to have counted one. */
#define EXPECT_ONCE(args, ...)						\
	do {								\
		__VA_ARGS__;						\
		for (int a_ = 0; a_ < (args); a_++)			\
			cr_expect_eq(evals[a_], 1, "argument %d evaluated %d times: %s", \
				     a_, evals[a_], #__VA_ARGS__);	\
		memset(evals, 0, sizeof(evals));			\
	} while (0)

Test(list_host, macros_evaluate_each_argument_once)
{
	static struct ak_rcu rcu;
	struct ak_list_cursor c = {};
	struct item *pos, *tmp, copy;
	int n = 0;

	fill(3);
	EXPECT_ONCE(1, cr_expect_eq(ak_list_entry(ONCE(0, &items[1].node), struct item, node),
				    &items[1]));
	EXPECT_ONCE(1, ak_list_for_each_entry(pos, ONCE(0, &list), node) n++);
	EXPECT_ONCE(2, cr_expect(ak_list_walk_done(ONCE(0, pos), ONCE(1, &list), node)));
	EXPECT_ONCE(2, cr_expect_eq(ak_list_walk_status(ONCE(0, pos), ONCE(1, &list), node), 0));
	EXPECT_ONCE(1, ak_list_for_each_entry_safe(pos, tmp, ONCE(0, &list), node) n++);
	EXPECT_ONCE(1, ak_list_for_each_entry_rcu(pos, ONCE(0, &list), node) n++);
	EXPECT_ONCE(2, ak_list_for_each_entry_resume(pos, ONCE(0, &list), node, ONCE(1, &c)) n++);
	EXPECT_ONCE(3, cr_expect_eq(ak_list_walk_save(ONCE(0, pos), ONCE(1, &list), node,
						      ONCE(2, &c)), 0));
	EXPECT_ONCE(2, ak_list_for_each_entry_resume_safe(pos, tmp, ONCE(0, &list), node,
							  ONCE(1, &c)) n++);
	pos = &items[1];	/* where a cut walk stopped: the cursor is saved */
	EXPECT_ONCE(3, cr_expect_eq(ak_list_walk_save(ONCE(0, pos), ONCE(1, &list), node,
						      ONCE(2, &c)), -AK_EBUDGET));
	cr_expect_eq(n, 15, "the loops walked %d entries", n);
	c = (struct ak_list_cursor){};
	EXPECT_ONCE(4, cr_expect_eq(ak_list_next_copy(ONCE(0, &list), ONCE(1, &lock), ONCE(2, &c),
						      ONCE(3, &copy), node), 0));
	EXPECT_ONCE(1, cr_expect_eq(ak_rcu_reclaim(ONCE(0, &rcu), struct item, node), 0));
}
