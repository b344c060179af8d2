// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * ak_list_next_copy_live, the loader's walk that never goes stale, against
 * a model: between its calls a writer makes random changes (inserts at the
 * head, the tail and after a node, deletes, moves) with entries taken from
 * a pool that hands a freed entry's memory straight back, as an allocator
 * does. Every entry on the list for the whole walk must be copied once and
 * in the list's order, every other at most once, and the walk must end.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>
#include <arenakit/list.h>
#include <arenakit/list_user.h>

struct record {
	unsigned long long key;		/* unique: a new entry takes a new key */
	struct ak_list_node node;
	unsigned long long check;	/* key * 3 + 1: a copy is of one entry, whole */
};

enum { POOL = 64, KEYS = 1 << 16 };

static struct ak_list list;
static struct ak_lock lock;
static struct record pool[POOL];
static struct record *free_entries[POOL];
static int nfree;
static unsigned long long next_key;
/* By key: on the list when the walk began and never unlinked since; copies. */
static unsigned char throughout[KEYS], copies[KEYS];

static struct record *take(void)
{
	struct record *r = free_entries[--nfree];

	r->key = next_key++;
	r->check = r->key * 3 + 1;
	return r;
}

static void give_back(struct record *r)
{
	throughout[r->key] = 0;
	free_entries[nfree++] = r;	/* the next take reuses this memory */
}

/* The entry at @index in list order. */
static struct record *nth(unsigned long long index)
{
	struct ak_list_node *node = list.head.next;

	while (index--)
		node = node->next;
	return ak_list_entry(node, struct record, node);
}

/* One random change, as a BPF writer makes it under the lock. */
static void change(unsigned int *seed)
{
	unsigned long long len = ak_list_len(&list);
	int what = rand_r(seed) % 6;
	struct record *r;

	if (!len || (what < 3 && nfree)) {
		if (!nfree)
			return;
		r = take();
		if (what == 0 || !len)
			ak_list_add_head(&list, &r->node);
		else if (what == 1)
			ak_list_add_tail(&list, &r->node);
		else
			ak_list_add_after(&list, &r->node, &nth(rand_r(seed) % len)->node);
		return;
	}
	r = nth(rand_r(seed) % len);
	if (what == 5) {
		/* A move is an unlink and an insert: the entry is not there throughout. */
		throughout[r->key] = 0;
		cr_assert_eq(ak_list_move_tail(&list, &r->node, &list), 0);
		return;
	}
	cr_assert_eq(ak_list_del(&list, &r->node), 0);
	give_back(r);
}

/*
 * A walk with up to @changes changes before each call; returns its calls.
 * Every entry there throughout copied once, every other at most once, and
 * those there throughout in the order the list has them at the end (their
 * order never changed: a move is not there throughout).
 */
static unsigned long long walk_while_changing(unsigned int seed, int changes)
{
	static unsigned long long copied_at[KEYS];
	struct ak_list_live_cursor c = {};
	unsigned long long calls = 0, last = 0, i;
	struct record *r, copy;
	int err, k;

	memset(throughout, 0, sizeof(throughout));
	memset(copies, 0, sizeof(copies));
	ak_list_for_each_entry(r, &list, node)
		throughout[r->key] = 1;
	for (;;) {
		for (k = rand_r(&seed) % (changes + 1); k > 0; k--)
			change(&seed);
		err = ak_list_next_copy_live(&list, &lock, &c, &copy, node);
		if (err)
			break;
		calls++;
		cr_assert_lt(copy.key, next_key, "a key no writer made");
		cr_assert_eq(copy.check, copy.key * 3 + 1, "a copy of two entries");
		cr_assert_eq(++copies[copy.key], 1, "key %llu copied twice", copy.key);
		copied_at[copy.key] = calls;
		cr_assert_leq(calls, next_key, "the walk went on past every key ever made");
	}
	cr_assert_eq(err, -ENOENT, "the walk ended with %d", err);
	cr_assert_null(c.seen, "the end gives the set back");
	cr_assert_not(ak_lock_is_locked(&lock), "nothing held between calls");
	for (i = 0; i < next_key; i++)
		cr_assert(!throughout[i] || copies[i] == 1, "key %llu, there throughout, missed",
			  i);
	ak_list_for_each_entry(r, &list, node) {
		if (!throughout[r->key])
			continue;
		cr_assert_gt(copied_at[r->key], last, "key %llu copied out of the list's order",
			     r->key);
		last = copied_at[r->key];
	}
	return calls;
}

static void fill(int n)
{
	int i;

	ak_list_init(&list);
	nfree = 0;
	next_key = 0;
	for (i = POOL - 1; i >= 0; i--)
		free_entries[nfree++] = &pool[i];
	for (i = 0; i < n; i++)
		ak_list_add_tail(&list, &take()->node);
}

Test(list_live_host, each_entry_there_throughout_once_in_order_as_the_list_changes)
{
	unsigned long long calls = 0;
	unsigned int seed;
	int walks = 0;

	for (seed = 1; seed <= 2000; seed++) {
		fill(seed % 40);
		calls += walk_while_changing(seed, seed % 5);
		walks++;
		cr_assert_lt(next_key, KEYS);
	}
	printf("list_live_host: %d walks of %llu calls in all, 0 to 4 changes before each call\n",
	       walks, calls);
}

Test(list_live_host, a_quiet_list_is_walked_in_order_and_the_walk_begins_again)
{
	struct ak_list_live_cursor c = {};
	struct record copy;
	int n, err;

	fill(40);	/* the set grows past its first 64 slots' half */
	for (n = 0; (err = ak_list_next_copy_live(&list, &lock, &c, &copy, node)) == 0; n++)
		cr_expect_eq(copy.key, (unsigned long long)n);
	cr_expect_eq(err, -ENOENT);
	cr_expect_eq(n, 40);
	cr_expect_null(c.list, "the end zeroes the cursor");
	cr_expect_eq(ak_list_next_copy_live(&list, &lock, &c, &copy, node), 0);
	cr_expect_eq(copy.key, 0);
	ak_list_live_cursor_release(&c);
}

Test(list_live_host, a_walk_goes_on_after_its_next_node_is_deleted_and_reused)
{
	struct ak_list_live_cursor c = {};
	struct record copy, *second = &pool[1];
	unsigned long long want[] = { 2, 3, 4 };
	int n, err;

	fill(4);
	cr_assert_eq(ak_list_next_copy_live(&list, &lock, &c, &copy, node), 0);
	cr_assert_eq(copy.key, 0);
	cr_assert_eq(c.pos, &second->node, "the cursor names key 1's node");
	/* Key 1 deleted; its memory, as key 4, added at the tail. */
	cr_assert_eq(ak_list_del(&list, &second->node), 0);
	give_back(second);
	cr_assert_eq(take(), second);
	ak_list_add_tail(&list, &second->node);
	/* Key 4 was added during the walk, ahead of it: copied at most once; here, once. */
	for (n = 0; n < 3; n++) {
		cr_assert_eq(ak_list_next_copy_live(&list, &lock, &c, &copy, node), 0);
		cr_expect_eq(copy.key, want[n]);
	}
	err = ak_list_next_copy_live(&list, &lock, &c, &copy, node);
	cr_expect_eq(err, -ENOENT);
}

Test(list_live_host, a_copied_nodes_memory_added_again_is_passed_over)
{
	struct ak_list_live_cursor c = {};
	struct record copy, *first = &pool[0];

	fill(3);
	cr_assert_eq(ak_list_next_copy_live(&list, &lock, &c, &copy, node), 0);
	/* Key 0, copied, deleted; its memory comes back as key 3 at the head. */
	cr_assert_eq(ak_list_del(&list, &first->node), 0);
	give_back(first);
	ak_list_add_head(&list, &take()->node);
	cr_assert_eq(ak_list_next_copy_live(&list, &lock, &c, &copy, node), 0);
	cr_expect_eq(copy.key, 1, "key 3, at a copied address, passed over");
	cr_assert_eq(ak_list_next_copy_live(&list, &lock, &c, &copy, node), 0);
	cr_expect_eq(copy.key, 2);
	cr_expect_eq(ak_list_next_copy_live(&list, &lock, &c, &copy, node), -ENOENT);
}

Test(list_live_host, errors_end_the_walk_or_leave_the_cursor)
{
	struct ak_list_live_cursor c = {}, before;
	struct ak_list other;
	struct record copy;

	fill(3);
	ak_list_init(&other);
	cr_assert_eq(ak_list_next_copy_live(&list, &lock, &c, &copy, node), 0);
	/* Busy: the cursor as it was. */
	cr_assert_eq(ak_lock_acquire(&lock), 0);
	before = c;
	cr_expect_eq(ak_list_next_copy_live(&list, &lock, &c, &copy, node), -EBUSY);
	cr_expect_eq(memcmp(&c, &before, sizeof(c)), 0);
	ak_lock_release(&lock);
	/* Another list's cursor: stale, released. */
	cr_expect_eq(ak_list_next_copy_live(&other, &lock, &c, &copy, node), -AK_ESTALE);
	cr_expect_null(c.seen);
	/* A NULL link: -EFAULT, released. */
	cr_assert_eq(ak_list_next_copy_live(&list, &lock, &c, &copy, node), 0);
	pool[1].node.next = NULL;
	cr_expect_eq(ak_list_next_copy_live(&list, &lock, &c, &copy, node), -EFAULT);
	cr_expect_null(c.seen);
	/* A cycle that skips the head: -ELOOP, released. */
	pool[1].node.next = &pool[0].node;
	cr_expect_eq(ak_list_next_copy_live(&list, &lock, &c, &copy, node), 0);
	cr_expect_eq(ak_list_next_copy_live(&list, &lock, &c, &copy, node), 0);
	cr_expect_eq(ak_list_next_copy_live(&list, &lock, &c, &copy, node), -ELOOP);
	cr_expect_null(c.seen);
}
