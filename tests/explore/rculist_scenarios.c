// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rculist.h under the schedule explorer: readers in read sections walk a
 * list while a writer deletes, adds and reclaims. A reader must see every
 * entry present throughout once and in order, and never touch a freed one:
 * an entry's node lies past its first word, where a freed object is
 * poisoned, so a schedule whose reader reads a link of an entry the
 * reclaim freed fails (explore_access.c).
 */
#include <string.h>
#include <criterion/criterion.h>

#include "explore/explore.h"
#include <arenakit/rculist.h>

struct rule {
	unsigned long long id;
	struct ak_list_node node;
};

#define RULES 4	/* ids 1 to 4 at the start; the writer adds 5 */

static struct ak_list __arena_global rules;
static struct ak_rcu __arena_global rcu;
static struct ak_lock __arena_global lock;
static struct rule *first[RULES + 1];
static unsigned long long base_objects;

/* What each reader saw: ids in order, and how its walk ended. */
static unsigned long long seen[EXPLORE_MAX_THREADS][8];
static int nseen[EXPLORE_MAX_THREADS], status[EXPLORE_MAX_THREADS];

static void setup_rules(void)
{
	unsigned long long id;

	memset(&rcu, 0, sizeof(rcu));
	memset(nseen, 0, sizeof(nseen));
	lock.locked = 0;
	ak_list_init(&rules);
	base_objects = explore_alloc_stats().objects;
	for (id = 1; id <= RULES; id++) {
		first[id] = ak_alloc(sizeof(struct rule), NULL);
		if (!first[id]) {
			explore_fail("setup: alloc");
			return;
		}
		first[id]->id = id;
		ak_list_add_tail_rcu(&rules, &first[id]->node);
	}
}

static void read_rules(int id)
{
	unsigned int token = ak_rcu_read_begin(&rcu);
	struct rule *r;

	ak_list_for_each_entry_rcu(r, &rules, node) {
		if (nseen[id] < 8)
			seen[id][nseen[id]++] = r->id;
	}
	status[id] = ak_list_walk_status(r, &rules, node);
	ak_rcu_read_end(&rcu, token);
}

static void locked(void (*edit)(void))
{
	if (ak_lock_acquire(&lock)) {
		explore_fail("writer: the lock stayed busy");
		return;
	}
	edit();
	ak_lock_release(&lock);
}

static void reclaim(void)
{
	long long n = ak_rcu_reclaim(&rcu, struct rule, node);

	if (n < 0 && n != -EBUSY)
		explore_fail("reclaim: %lld", n);
}

static void delete_2(void)
{
	if (ak_list_del_rcu(&rules, &first[2]->node, &rcu))
		explore_fail("writer: del 2");
}

static void delete_3(void)
{
	if (ak_list_del_rcu(&rules, &first[3]->node, &rcu))
		explore_fail("writer: del 3");
}

static void add_5(void)
{
	struct rule *r = ak_alloc_nosleep(sizeof(*r), NULL);

	if (!r) {
		explore_fail("writer: alloc");
		return;
	}
	r->id = 5;
	ak_list_add_head_rcu(&rules, &r->node);
}

/*
 * A reader's ids: 1 and 4 (there throughout) once each, in order; 2, 3 and
 * 5 (deleted or added meanwhile) at most once, each in its place.
 */
static void check_reader(int id)
{
	static const unsigned long long order[] = { 5, 1, 2, 3, 4 };
	int i, at = 0, ones = 0, fours = 0;

	if (status[id])
		explore_fail("reader %d: walk status %d", id, status[id]);
	for (i = 0; i < nseen[id]; i++) {
		while (at < 5 && order[at] != seen[id][i])
			at++;
		if (at == 5) {
			explore_fail("reader %d: id %llu out of order or twice", id, seen[id][i]);
			return;
		}
		ones += seen[id][i] == 1;
		fours += seen[id][i] == 4;
		at++;
	}
	if (ones != 1 || fours != 1)
		explore_fail("reader %d: saw 1 %d times and 4 %d times", id, ones, fours);
}

/* The readers' views, then: nothing retired left after two more reclaims. */
static void check_readers(int readers)
{
	int i;

	for (i = 0; i < readers; i++)
		check_reader(i);
	reclaim();
	reclaim();
	if (ak_rcu_pending(&rcu))
		explore_fail("%llu entries still retired with no reader", ak_rcu_pending(&rcu));
	if (explore_alloc_stats().objects != base_objects + ak_list_len(&rules))
		explore_fail("%llu objects live for %llu entries",
			     explore_alloc_stats().objects - base_objects, ak_list_len(&rules));
	if (ak_list_check(&rules, NULL, NULL))
		explore_fail("the list is broken");
}

static void reader_and_writer(int id)
{
	if (id == 0) {
		read_rules(0);
		return;
	}
	locked(delete_2);
	locked(reclaim);
	locked(reclaim);
}

static void check_one_reader(void)
{
	check_readers(1);
}

Test(explore_rculist, a_reader_never_touches_what_a_reclaim_frees)
{
	static const struct explore_scenario s = {
		.name = "a read section against a delete and two reclaims",
		.threads = 2,
		.setup = setup_rules,
		.thread = reader_and_writer,
		.check = check_one_reader,
	};

	explore_test(&s);
}

/*
 * Two readers, which may enter on either side of an epoch's move, and a
 * writer that deletes twice, adds, and reclaims after each: an entry is
 * freed only when both reader counts were seen at zero after its delete.
 */
static void two_readers_and_writer(int id)
{
	if (id < 2) {
		read_rules(id);
		return;
	}
	locked(delete_2);
	locked(reclaim);
	locked(delete_3);
	locked(add_5);
	locked(reclaim);
	locked(reclaim);
}

static void check_two_readers(void)
{
	check_readers(2);
}

Test(explore_rculist, two_readers_across_epochs_never_touch_what_is_freed)
{
	static const struct explore_scenario s = {
		.name = "two read sections against deletes, an add and reclaims",
		.threads = 3,
		.setup = setup_rules,
		.thread = two_readers_and_writer,
		.check = check_two_readers,
	};

	explore_test(&s);
}
