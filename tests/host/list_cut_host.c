// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * list.h's walks check the loop budget once per group of AK_LIST_GROUP
 * nodes. Cut here at every check they make (AK_TEST_CUT), on lists whose
 * end falls at every position of a group, each walk resumed from its
 * cursor until it ends must give the answer of an uncut walk, and each cut
 * must leave its cursor on the node it has not visited yet.
 */
#include <errno.h>
#include <criterion/criterion.h>

#include "test_cut.h"
#include <arenakit/list.h>

#define MAX_NODES (3 * AK_LIST_GROUP + 1)

struct item {
	struct ak_list_node node;
	unsigned long long key;		/* its position on the list */
};

static struct ak_list list;
static struct item items[MAX_NODES];

static void build(int n)
{
	int i;

	ak_list_init(&list);
	for (i = 0; i < n; i++) {
		items[i].key = i;
		ak_list_add_tail(&list, &items[i].node);
	}
}

/* After a cut, the cursor holds the first node not visited, and the count before it. */
static void expect_cut_at(const struct ak_list_cursor *cursor, int n, unsigned long long where)
{
	cr_assert_lt(where, (unsigned long long)n, "cut past the end (%llu of %d)", where, n);
	cr_assert_eq(cursor->seen, where);
	cr_assert_eq(cursor->pos, &items[where].node, "cursor on the wrong node at %llu", where);
	cr_assert_eq(where % AK_LIST_GROUP, 0, "cut inside a group, at %llu", where);
}

Test(list_cut, count_resumes_exactly_from_every_cut)
{
	struct ak_list_cursor cursor;
	long long got;
	int n, groups, calls;

	for (n = 0; n <= MAX_NODES; n++)
		for (groups = 1; groups <= n / AK_LIST_GROUP + 1; groups++) {
			build(n);
			cursor = (struct ak_list_cursor){};
			for (calls = 1;; calls++) {
				checks_left = groups;
				got = ak_list_count(&list, &cursor);
				if (got != -AK_EBUDGET)
					break;
				expect_cut_at(&cursor, n, (unsigned long long)calls * groups *
							  AK_LIST_GROUP);
			}
			cr_expect_eq(got, n, "%d nodes, cut every %d groups: %lld", n, groups, got);
			cr_expect_null(cursor.pos);
		}
	checks_left = -1;
}

Test(list_cut, find_resumes_exactly_from_every_cut)
{
	long offset = ak_list_key_offset(struct item, node, key);
	struct ak_list_node *found;
	struct ak_list_cursor cursor;
	int n, groups, key, err;

	for (n = 0; n <= MAX_NODES; n++)
		for (groups = 1; groups <= n / AK_LIST_GROUP + 1; groups++)
			for (key = 0; key <= n; key++) {	/* key n: no node has it */
				build(n);
				cursor = (struct ak_list_cursor){};
				do {
					checks_left = groups;
					err = ak_list_find(&list, offset, key, &cursor, &found);
					if (err == -AK_EBUDGET) {
						expect_cut_at(&cursor, n, cursor.seen);
						cr_assert_lt(cursor.seen, (unsigned long long)key + 1,
							     "went past key %d", key);
					}
				} while (err == -AK_EBUDGET);
				cr_expect_eq(err, 0);
				cr_expect_eq(found, key < n ? &items[key].node : NULL,
					     "%d nodes, key %d, cut every %d groups", n, key, groups);
			}
	checks_left = -1;
}

Test(list_cut, check_resumes_exactly_from_every_cut_and_still_finds_a_bad_link)
{
	struct ak_list_node *bad;
	struct ak_list_cursor cursor;
	int n, groups, broken, err;

	for (n = 1; n <= MAX_NODES; n++)
		for (groups = 1; groups <= n / AK_LIST_GROUP + 1; groups++)
			for (broken = -1; broken < n; broken++) {	/* -1: sound */
				build(n);
				if (broken >= 0)	/* its prev no longer links back */
					items[broken].node.prev = &items[broken].node;
				cursor = (struct ak_list_cursor){};
				bad = NULL;
				do {
					checks_left = groups;
					err = ak_list_check(&list, &cursor, &bad);
				} while (err == -AK_EBUDGET);
				if (broken < 0) {
					cr_expect_eq(err, 0, "%d nodes, cut every %d groups: %d", n,
						     groups, err);
					continue;
				}
				cr_expect_eq(err, -EINVAL, "%d nodes, node %d broken: %d", n, broken,
					     err);
				cr_expect_eq(bad, &items[broken].node, "%d nodes, node %d broken", n,
					     broken);
			}
	checks_left = -1;
}

/* A spent budget cuts a walk before its first node; an empty list ends before any check. */
Test(list_cut, a_spent_budget_cuts_at_the_first_node)
{
	struct ak_list_cursor cursor = {};

	build(2);
	checks_left = 0;
	cr_expect_eq(ak_list_count(&list, &cursor), -AK_EBUDGET);
	expect_cut_at(&cursor, 2, 0);
	build(0);
	cursor = (struct ak_list_cursor){};
	cr_expect_eq(ak_list_count(&list, &cursor), 0);
	checks_left = -1;
}
