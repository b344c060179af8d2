// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rculist.h built for user space, over heap pages (alloc_pages.c): the
 * edits keep a reader's view whole, and a retired entry is freed exactly
 * when both reader counts have been seen at zero after its delete. The
 * interleavings themselves are the schedule explorer's
 * (tests/explore/rculist_scenarios.c).
 */
#include <errno.h>
#include <criterion/criterion.h>

#include "test_cut.h"
#include "host/alloc_pages.h"
#include <arenakit/rculist.h>

struct rule {
	unsigned long long id;		/* before the node: a freed one is poisoned there */
	struct ak_list_node node;
};

static struct ak_list rules;
static struct ak_rcu rcu;

static void setup(void)
{
	memset(&rcu, 0, sizeof(rcu));
	ak_list_init(&rules);
}

static struct rule *add(unsigned long long id)
{
	struct rule *r = ak_alloc(sizeof(*r), NULL);

	cr_assert_not_null(r);
	r->id = id;
	ak_list_add_tail_rcu(&rules, &r->node);
	return r;
}

/* Reclaim until nothing is left retired; the number of entries freed. */
static long long reclaim_all(void)
{
	long long n, freed = 0;
	int i;

	for (i = 0; i < 4; i++) {
		n = ak_rcu_reclaim(&rcu, struct rule, node);
		cr_assert_geq(n, 0, "reclaim: %lld", n);
		freed += n;
	}
	cr_assert_eq(ak_rcu_pending(&rcu), 0);
	return freed;
}

static void teardown(void)
{
	struct rule *r, *tmp;

	ak_list_for_each_entry_safe(r, tmp, &rules, node) {
		cr_assert_eq(ak_list_del_rcu(&rules, &r->node, &rcu), 0);
	}
	reclaim_all();
	cr_expect_eq(alloc_stats().objects, 0, "entries leaked: %llu", alloc_stats().objects);
	expect_pages_accounted();
}

TestSuite(rculist_host, .init = setup, .fini = teardown);

/* The ids in list order, read as a reader does, in a read section. */
static int read_ids(unsigned long long *ids, int max)
{
	unsigned int token = ak_rcu_read_begin(&rcu);
	struct rule *r;
	int n = 0;

	ak_list_for_each_entry_rcu(r, &rules, node) {
		cr_assert_lt(n, max);
		ids[n++] = r->id;
	}
	cr_assert_eq(ak_list_walk_status(r, &rules, node), 0);
	ak_rcu_read_end(&rcu, token);
	return n;
}

Test(rculist_host, adds_and_deletes_keep_the_order)
{
	unsigned long long ids[8];
	struct rule *two;

	add(1);
	two = add(2);
	add(3);
	ak_list_add_head_rcu(&rules, &((struct rule *)ak_alloc(sizeof(struct rule), NULL))->node);
	ak_list_entry(rules.head.next, struct rule, node)->id = 0;
	cr_assert_eq(read_ids(ids, 8), 4);
	cr_expect(ids[0] == 0 && ids[1] == 1 && ids[2] == 2 && ids[3] == 3);
	cr_assert_eq(ak_list_del_rcu(&rules, &two->node, &rcu), 0);
	cr_expect_eq(ak_list_len(&rules), 3);
	cr_assert_eq(ak_list_check(&rules, NULL, NULL), 0);
	cr_assert_eq(read_ids(ids, 8), 3);
	cr_expect(ids[0] == 0 && ids[1] == 1 && ids[2] == 3);
	cr_expect_eq(ak_rcu_pending(&rcu), 1);
	cr_expect_eq(ak_list_del_rcu(&rules, &two->node, &rcu), -EINVAL, "a second delete");
	cr_expect_eq(ak_rcu_pending(&rcu), 1);
}

Test(rculist_host, a_reader_on_a_deleted_node_goes_on_to_the_rest)
{
	struct rule *r[5];
	struct rule *pos;
	unsigned long long seen[8];
	unsigned int token;
	int i, n = 0;

	for (i = 0; i < 5; i++)
		r[i] = add(i);
	token = ak_rcu_read_begin(&rcu);
	ak_list_for_each_entry_rcu(pos, &rules, node) {
		seen[n++] = pos->id;
		/* Standing on 1, a writer deletes it and the next one. */
		if (pos->id == 1) {
			cr_assert_eq(ak_list_del_rcu(&rules, &r[1]->node, &rcu), 0);
			cr_assert_eq(ak_list_del_rcu(&rules, &r[2]->node, &rcu), 0);
			/* Neither may be freed while this reader is inside. */
			cr_assert_eq(ak_rcu_reclaim(&rcu, struct rule, node), 0);
			cr_assert_eq(ak_rcu_reclaim(&rcu, struct rule, node), -EBUSY);
			cr_assert_eq(ak_rcu_pending(&rcu), 2);
		}
	}
	cr_assert_eq(ak_list_walk_status(pos, &rules, node), 0);
	ak_rcu_read_end(&rcu, token);
	/* 2 was deleted while the reader stood on 1: seen through 1's link, as allowed. */
	cr_assert_eq(n, 5);
	cr_expect(seen[0] == 0 && seen[1] == 1 && seen[2] == 2 && seen[3] == 3 && seen[4] == 4);
	cr_expect_eq(reclaim_all(), 2);
}

Test(rculist_host, an_entry_is_freed_at_the_second_reclaim_with_no_reader)
{
	struct rule *r = add(7);

	add(8);
	cr_assert_eq(ak_list_del_rcu(&rules, &r->node, &rcu), 0);
	cr_expect_eq(alloc_stats().objects, 2);
	cr_expect_eq(ak_rcu_reclaim(&rcu, struct rule, node), 0, "the first moves the epoch");
	cr_expect_eq(alloc_stats().objects, 2);
	cr_expect_eq(ak_rcu_reclaim(&rcu, struct rule, node), 1, "the second frees");
	cr_expect_eq(alloc_stats().objects, 1);
	cr_expect_eq(ak_rcu_pending(&rcu), 0);
	cr_expect_eq(ak_rcu_reclaim(&rcu, struct rule, node), 0, "nothing left");
}

/*
 * A reader that entered before the delete, under either parity, holds the
 * free back; one that entered after it does not.
 */
Test(rculist_host, readers_inside_at_the_delete_hold_the_free)
{
	struct rule *r = add(1);
	unsigned int early, late;

	add(2);
	early = ak_rcu_read_begin(&rcu);
	cr_assert_eq(ak_list_del_rcu(&rules, &r->node, &rcu), 0);
	cr_assert_eq(ak_rcu_reclaim(&rcu, struct rule, node), 0);	/* epoch 0 -> 1 */
	late = ak_rcu_read_begin(&rcu);
	cr_assert_neq(early, late, "the late reader counts under the other parity");
	cr_expect_eq(ak_rcu_reclaim(&rcu, struct rule, node), -EBUSY, "the early reader is inside");
	ak_rcu_read_end(&rcu, early);
	cr_expect_eq(ak_rcu_reclaim(&rcu, struct rule, node), 1, "the late one cannot reach it");
	ak_rcu_read_end(&rcu, late);
	cr_expect_eq(alloc_stats().objects, 1);
}

Test(rculist_host, many_deletes_between_reclaims_are_all_freed)
{
	struct rule *r[300];
	int i;

	for (i = 0; i < 300; i++)
		r[i] = add(i);
	for (i = 0; i < 300; i += 2)
		cr_assert_eq(ak_list_del_rcu(&rules, &r[i]->node, &rcu), 0);
	cr_expect_eq(ak_rcu_pending(&rcu), 150);
	cr_expect_eq(reclaim_all(), 150);
	cr_expect_eq(alloc_stats().objects, 150);
	cr_expect_eq(ak_list_len(&rules), 150);
	cr_assert_eq(ak_list_check(&rules, NULL, NULL), 0);
}

Test(rculist_host, a_plain_delete_is_a_fault_for_a_reader_on_the_node)
{
	struct rule *r = add(1), *pos;
	unsigned int token;

	add(2);
	token = ak_rcu_read_begin(&rcu);
	ak_list_for_each_entry_rcu(pos, &rules, node) {
		if (pos == r)
			cr_assert_eq(ak_list_del(&rules, &r->node), 0);
	}
	cr_expect_eq(ak_list_walk_status(pos, &rules, node), -EFAULT);
	ak_rcu_read_end(&rcu, token);
	ak_free(r);
}

/* Three neighbours retired in one epoch: their chain must not pass for links. */
Test(rculist_host, a_second_delete_of_a_retired_node_is_refused)
{
	struct rule *r[5];
	int i;

	for (i = 0; i < 5; i++)
		r[i] = add(i);
	for (i = 1; i <= 3; i++)
		cr_assert_eq(ak_list_del_rcu(&rules, &r[i]->node, &rcu), 0);
	for (i = 1; i <= 3; i++)
		cr_expect_eq(ak_list_del_rcu(&rules, &r[i]->node, &rcu), -EINVAL, "again: %d", i);
	cr_expect_eq(ak_list_len(&rules), 2);
	cr_expect_eq(ak_rcu_pending(&rcu), 3);
	cr_expect_eq(ak_list_check(&rules, NULL, NULL), 0);
	cr_expect_eq(reclaim_all(), 3);
}

/*
 * An entry freed by hand cannot be freed again: the reclaim says so once
 * (-EINVAL), drops it, and frees the others on its next calls.
 */
Test(rculist_host, an_entry_freed_by_hand_does_not_stop_the_reclaims)
{
	struct rule *r[3];
	long long n;
	int i, einval = 0;

	for (i = 0; i < 3; i++)
		r[i] = add(i);
	for (i = 0; i < 3; i++)
		cr_assert_eq(ak_list_del_rcu(&rules, &r[i]->node, &rcu), 0);
	ak_free(r[1]);	/* the mistake */
	for (i = 0; i < 6; i++) {
		n = ak_rcu_reclaim(&rcu, struct rule, node);
		if (n == -EINVAL)
			einval++;
		else
			cr_assert_geq(n, 0, "reclaim: %lld", n);
	}
	cr_expect_eq(einval, 1);
	cr_expect_eq(ak_rcu_pending(&rcu), 0);
	cr_expect_eq(alloc_stats().objects, 0, "the other two not freed");
}

/* A reclaim cut part way keeps what it did not free, and the next goes on. */
Test(rculist_host, a_reclaim_cut_by_the_budget_goes_on_at_the_next_call)
{
	struct rule *r[3];
	int i;

	for (i = 0; i < 3; i++)
		r[i] = add(i);
	for (i = 0; i < 3; i++)
		cr_assert_eq(ak_list_del_rcu(&rules, &r[i]->node, &rcu), 0);
	cr_assert_eq(ak_rcu_reclaim(&rcu, struct rule, node), 0);	/* the epoch moves */
	checks_left = 1;	/* one budget check passes: two frees, then the cut */
	cr_expect_eq(ak_rcu_reclaim(&rcu, struct rule, node), -AK_EBUDGET);
	checks_left = -1;
	cr_expect_eq(ak_rcu_pending(&rcu), 1);
	cr_expect_eq(alloc_stats().objects, 1);
	cr_expect_eq(ak_rcu_reclaim(&rcu, struct rule, node), 1);
	cr_expect_eq(ak_rcu_pending(&rcu), 0);
}
