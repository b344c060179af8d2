// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * htab.h under the schedule explorer (htab_scenarios.h): a growth's end,
 * lock-free lookups, lookup_or_init, limits and LRU, moves, reuse across
 * tables. The walks are in htab_walk_scenarios.c.
 */
#include "explore/htab_scenarios.h"

/*
 * A growth from 16 to 32 buckets with every old bucket moved but those of
 * keys 9 and 10, and no bucket left to claim: the next update of key 9
 * moves its bucket, and the one of key 10 moves the last and retires the
 * old array. (The insert that starts the growth moves its own bucket and
 * the first four, which hold neither.)
 */
static void setup_growth_nearly_done(void)
{
	struct __ak_htab_table *old, *cur;
	unsigned long long k;

	if (ak_htab_init(&table, 8, 8, 16))
		explore_fail("setup: init");
	for (k = 1; k <= 14; k++)
		insert(k);	/* the 14th starts the growth */
	old = table.old;
	cur = table.cur;
	if (!old || old == cur) {
		explore_fail("setup: no growth in progress");
		return;
	}
	if (old->buckets[explore_bucket(old, 9)] == __AK_HTAB_MOVED ||
	    old->buckets[explore_bucket(old, 10)] == __AK_HTAB_MOVED)
		explore_fail("setup: the bucket of key 9 or 10 moved already");
	for (k = 0; k < old->nbuckets; k++)
		if (k != explore_bucket(old, 9) && k != explore_bucket(old, 10) &&
		    __ak_htab_move_counted(&table, old, cur, k))
			explore_fail("setup: move %llu", k);
	table.claimed = old->nbuckets;
}

static int copy_err;
static unsigned long long copied;

static void growth_threads(int id)
{
	unsigned long long key = 7, value;
	int err;

	if (id == 1) {
		copy_err = ak_htab_lookup_copy(&table, &key, &copied);
		return;
	}
	key = id ? 10 : 9;
	value = key * 100;
	err = ak_htab_update(&table, &key, &value, AK_HTAB_ANY);
	if (err)
		explore_fail("T%d: update %llu: %d", id, key, err);
}

static void check_growth(void)
{
	unsigned long long k;

	if (copy_err || copied != 70)
		explore_fail("lookup_copy of key 7 (present throughout): %d, value %llu",
			     copy_err, copied);
	for (k = 1; k <= 14; k++)
		expect_value(k, k == 9 || k == 10 ? k * 100 : k * 10);
	expect_sound_then_destroy(14);
}

/* The last mover frees the old array only when no one may hold it. */
Test(explore_htab, growth_retires_the_old_array_once_unheld)
{
	static const struct explore_scenario s = {
		.name = "growth: two movers finish it, a lookup_copy reads it",
		.threads = 3,
		.setup = setup_growth_nearly_done,
		.thread = growth_threads,
		.check = check_growth,
	};

	copy_err = 0;
	copied = 0;
	explore_test(&s);
}

/* ---- lock-free lookups, and a delete, during the growth's end ---- */

static int lookup_err;
static unsigned long long looked_up;

static void lookup_threads(int id)
{
	unsigned long long key = 9, value = 900;
	unsigned long long *v;
	int err = 0;

	switch (id) {
	case 0:
		err = ak_htab_update(&table, &key, &value, AK_HTAB_ANY);
		break;
	case 1:
		key = 7;
		v = ak_htab_lookup(&table, &key, &lookup_err);
		looked_up = v ? *v : 0;
		break;
	case 2:
		key = 10;
		err = ak_htab_delete(&table, &key);
		break;
	}
	if (err)
		explore_fail("T%d: %d", id, err);
}

static void check_lookup(void)
{
	unsigned long long k, absent = 10, v;

	if (looked_up != 70)
		explore_fail("lookup of key 7 (present throughout): %d, value %llu", lookup_err,
			     looked_up);
	if (ak_htab_lookup_copy(&table, &absent, &v) != -ENOENT)
		explore_fail("key 10 was deleted, and is there");
	for (k = 1; k <= 14; k++)
		if (k != 10)
			expect_value(k, k == 9 ? 900 : k * 10);
	expect_sound_then_destroy(13);
}

Test(explore_htab, lookup_finds_a_present_key_while_the_growth_ends)
{
	static const struct explore_scenario s = {
		.name = "growth: an update and a delete finish it, a lock-free lookup",
		.threads = 3,
		/*
		 * In BPF a read of a freed page is 0, of a freed node its old or
		 * reused bytes; the lookup must still be right.
		 */
		.allow_stale_reads = 1,
		.reads_freed_objects = 1,
		.setup = setup_growth_nearly_done,
		.thread = lookup_threads,
		.check = check_lookup,
	};

	lookup_err = 0;
	looked_up = 0;
	explore_test(&s);
}

/* ---- ak_htab_set_limit: a table at its limit, two inserts racing ---- */

static int limit_err[2];

static void setup_limit(int flags)
{
	if (ak_htab_init(&table, 8, 8, 16) || ak_htab_set_limit(&table, 2, flags) ||
	    ak_htab_reserve(&table, 4))
		explore_fail("setup: init, limit and reserve");
	insert(1);
	if (flags)
		insert(2);	/* full: each insert must evict */
}

static void setup_limit_refusing(void)
{
	setup_limit(0);
}

static void setup_limit_lru(void)
{
	setup_limit(AK_HTAB_LRU);
}

/* T0 inserts key 3, T1 key 4 (non-sleeping, as a tracing program would). */
static void limit_threads(int id)
{
	unsigned long long key = 3 + id, value = key * 10;

	limit_err[id] = ak_htab_update_nosleep(&table, &key, &value, AK_HTAB_NOEXIST);
}

/*
 * One entry left under the limit, two inserts for it: exactly one goes in,
 * the other is refused and counted, whichever way they interleave (each
 * counts itself in before it checks).
 */
static void check_limit_refusing(void)
{
	int in = !limit_err[0] + !limit_err[1];

	if (in != 1 || (limit_err[0] && limit_err[0] != -E2BIG) ||
	    (limit_err[1] && limit_err[1] != -E2BIG))
		explore_fail("inserts answered %d and %d: want one 0 and one -E2BIG",
			     limit_err[0], limit_err[1]);
	if (table.refused != 1)
		explore_fail("refused %llu, want 1", table.refused);
	expect_sound_then_destroy(2);
}

Test(explore_htab, a_limit_admits_one_of_two_racing_inserts)
{
	static const struct explore_scenario s = {
		.name = "two inserts into a table one entry under its limit",
		.threads = 2,
		.setup = setup_limit_refusing,
		.thread = limit_threads,
		.check = check_limit_refusing,
	};

	explore_test(&s);
}

/*
 * A full LRU table, two inserts: each evicts one entry (an old one, or the
 * other's new one) and goes in; the table holds its limit, sound, the
 * evictions counted, and nothing is lost (each evicted node became an
 * entry again).
 */
static void check_limit_lru(void)
{
	if (limit_err[0] || limit_err[1])
		explore_fail("inserts answered %d and %d: want both 0", limit_err[0],
			     limit_err[1]);
	if (table.evicted != 2 || table.refused)
		explore_fail("evicted %llu, refused %llu: want 2 and 0", table.evicted,
			     table.refused);
	expect_sound_then_destroy(2);
}

Test(explore_htab, a_full_lru_table_evicts_one_for_each_racing_insert)
{
	static const struct explore_scenario s = {
		.name = "two inserts into a full LRU table",
		.threads = 2,
		.setup = setup_limit_lru,
		.thread = limit_threads,
		.check = check_limit_lru,
	};

	explore_test(&s);
}

/*
 * A locked lookup that looked before a growth began, then met its bucket
 * partly moved: a program nested on its CPU (T1) starts the growth, and
 * its move of the bucket stops behind the first key (the next key's new
 * bucket is held), leaving the old bucket marked moved with the rest of
 * its chain. Key 1 heads the bucket of keys 1 and 17 (17 went in first),
 * so it moved; a lookup_copy of it must find it in the new array, or say
 * -EBUSY, never -ENOENT.
 */
static unsigned long long moved_key_value;
static int moved_key_err, maintain_err;

static void setup_partly_moved(void)
{
	unsigned long long k;

	if (ak_htab_init(&table, 8, 8, 16))
		explore_fail("setup: init");
	insert(17);
	for (k = 1; k <= 12; k++)
		insert(k);	/* 13 keys in 16 buckets: no growth yet */
	if (table.old)
		explore_fail("setup: a growth began");
}

static void partly_moved_threads(int id)
{
	unsigned long long key = 1;
	unsigned long long *held;

	if (id == 0) {
		moved_key_err = ak_htab_lookup_copy(&table, &key, &moved_key_value);
		return;
	}
	__ak_htab_resize(&table, 1);
	if (!table.old) {
		explore_fail("T1: no growth began");
		return;
	}
	held = &table.cur->buckets[explore_bucket(table.cur, 17)];
	*held |= __AK_HTAB_LOCKED;	/* a writer interrupted on another CPU */
	maintain_err = ak_htab_maintain(&table);
	*held &= ~__AK_HTAB_LOCKED;
}

static void check_partly_moved(void)
{
	if (maintain_err != -EBUSY)
		explore_fail("T1's maintain: %d, want -EBUSY (its move stopped at 17)",
			     maintain_err);
	if (moved_key_err == -EBUSY)
		moved_key_err = ak_htab_lookup_copy(&table, &(unsigned long long){ 1 },
						    &moved_key_value);
	if (moved_key_err || moved_key_value != 10)
		explore_fail("lookup_copy of key 1 (present throughout): %d, value %llu",
			     moved_key_err, moved_key_value);
	if (ak_htab_maintain(&table))
		explore_fail("check: the growth did not finish");
	expect_sound_then_destroy(13);
}

Test(explore_htab, a_locked_lookup_follows_a_move_begun_after_it_looked)
{
	static const int cpus[] = { 0, 0 }, nested_on[] = { -1, 0 };
	static const struct explore_scenario s = {
		.name = "a locked lookup, and a growth begun and cut on its CPU meanwhile",
		.threads = 2,
		.cpus = cpus,
		.nested_on = nested_on,
		.setup = setup_partly_moved,
		.thread = partly_moved_threads,
		.check = check_partly_moved,
	};

	moved_key_err = 0;
	moved_key_value = 0;
	maintain_err = 0;
	explore_test(&s);
}

/*
 * A lock-free hit in memory another table took: T1 deletes key 7 from the
 * table and inserts 7 into a second table, whose node is the block the
 * delete freed (one CPU's cache, the same size, the same seeds), with 777.
 * T0's lookup of 7, lock-free, may stand on that block meanwhile: it must
 * answer 70 or -ENOENT, never the other table's 777 (a hit is checked
 * against the generation, as a miss is).
 */
static struct ak_htab __arena_global other;
static unsigned long long hit_value;
static int hit_err;

/* A lock-free lookup of @key, and its value read at once (or its error). */
static void look_up_and_read(unsigned long long key)
{
	unsigned long long *v;
	int err = 0;

	v = ak_htab_lookup(&table, &key, &err);
	/*
	 * Read at once, as if by the lookup: the address was the key's at a
	 * moment inside the call (htab.h); a read after it, which a delete
	 * may race, is the caller's, not what this scenario checks.
	 */
	explore_read_at_once(1);
	hit_value = v ? *v : 0;
	hit_err = v ? 0 : err;
}

/* The second table sound, holding @count keys, then destroyed. */
static void expect_other_sound_then_destroy(unsigned long long count)
{
	struct ak_htab_node *bad;

	if (ak_htab_check_all(&other, &bad) || ak_htab_count(&other) != count ||
	    ak_htab_destroy(&other))
		explore_fail("the other table is not sound");
}

static void setup_two_tables(void)
{
	if (ak_htab_init(&table, 8, 8, 16) || ak_htab_init(&other, 8, 8, 16))
		explore_fail("setup: init");
	else
		explore_htab_same_seeds(other.cur, table.cur);
	insert(7);
}

static void reuse_threads(int id)
{
	unsigned long long key = 7, value = 777, *kept;
	int err = 0;

	if (id == 0) {
		look_up_and_read(7);
		return;
	}
	kept = ak_htab_lookup(&table, &key, &err);
	err = ak_htab_delete(&table, &key);
	if (err)
		explore_fail("T1: delete 7: %d", err);
	err = ak_htab_update(&other, &key, &value, AK_HTAB_NOEXIST);
	if (err)
		explore_fail("T1: insert 7 into the other table: %d", err);
	if (ak_htab_lookup(&other, &key, &err) != kept)
		explore_fail("T1: the other table's 7 is not in the block the delete freed");
}

static void check_reuse(void)
{
	if (hit_err ? hit_err != -ENOENT : hit_value != 70)
		explore_fail("the lookup of 7: %d, value %llu: want 70 or -ENOENT",
			     hit_err, hit_value);
	expect_other_sound_then_destroy(1);
	expect_sound_then_destroy(0);
}

Test(explore_htab, a_hit_is_never_a_node_another_table_took)
{
	static const struct explore_scenario s = {
		.name = "a lock-free lookup while its node goes to another table",
		.threads = 2,
		.allow_stale_reads = 1,
		.reads_freed_objects = 1,
		.setup = setup_two_tables,
		.thread = reuse_threads,
		.check = check_reuse,
	};

	hit_value = 0;
	hit_err = 0;
	explore_test(&s);
}

/*
 * An LRU mark through an address that went to another table: T0 counts a
 * use of key 5 of an LRU table (lookup_or_init of a key present, or a
 * lookup and ak_htab_touch), while T1 deletes 5 and inserts 5 into a
 * second table whose 40-byte node is the freed one, its value's second
 * word where the mark was. The mark must go to an entry of the LRU table
 * or nowhere: the other table's value stays {55, 0}.
 */
struct pair {
	unsigned long long a, b;
};

static int mark_by_touch;

static void setup_lru_and_other(void)
{
	unsigned long long key = 5, zero = 0;

	if (ak_htab_init(&table, 8, 8, 16) || ak_htab_set_limit(&table, 4, AK_HTAB_LRU) ||
	    ak_htab_reserve(&table, 4) || ak_htab_init(&other, 8, 16, 16))
		explore_fail("setup: init");
	if (ak_htab_update(&table, &key, &zero, AK_HTAB_NOEXIST))
		explore_fail("setup: insert 5");
}

static void mark_threads(int id)
{
	unsigned long long key = 5, zero = 0, *v, *kept;
	struct pair value = { 55, 0 };
	int err = 0;

	if (id == 0) {
		if (mark_by_touch) {
			v = ak_htab_lookup(&table, &key, &err);
			ak_htab_touch(&table, v);
		} else {
			ak_htab_lookup_or_init(&table, &key, &zero, &err);
		}
		return;
	}
	kept = ak_htab_lookup(&table, &key, &err);
	if (ak_htab_delete(&table, &key))
		explore_fail("T1: delete 5");
	if (ak_htab_update(&other, &key, &value, AK_HTAB_NOEXIST))
		explore_fail("T1: insert 5 into the other table");
	if (ak_htab_lookup(&other, &key, &err) != (void *)kept)
		explore_fail("T1: the other table's 5 is not in the block the delete freed");
}

static void check_mark(void)
{
	unsigned long long key = 5;
	struct pair got = {};

	if (ak_htab_lookup_copy(&other, &key, &got) || got.a != 55 || got.b != 0)
		explore_fail("the other table's 5: {%llu, %llu}, want {55, 0}", got.a, got.b);
	expect_other_sound_then_destroy(1);
	expect_sound_then_destroy(ak_htab_count(&table));
}

Test(explore_htab, an_lru_mark_never_lands_in_another_tables_node)
{
	static const struct explore_scenario by_lookup_or_init = {
		.name = "lookup_or_init of an LRU key while its node goes to another table",
		.threads = 2,
		.allow_stale_reads = 1,
		.reads_freed_objects = 1,
		.setup = setup_lru_and_other,
		.thread = mark_threads,
		.check = check_mark,
	};
	static struct explore_scenario by_touch;

	by_touch = by_lookup_or_init;
	by_touch.name = "ak_htab_touch of an LRU key while its node goes to another table";
	mark_by_touch = 0;
	explore_test(&by_lookup_or_init);
	mark_by_touch = 1;
	explore_test(&by_touch);
}

/*
 * A lock-free lookup during a growth's end, while the old array it may
 * stand on is freed and taken by a second table: T1 finishes the growth
 * (the old array freed, no holder counted), makes the second table (its
 * first array the freed block, with the first table's seeds) and puts key
 * 9 there with 999. T0's lookup of 9, present throughout with 90, must
 * answer 90: never the other table's entry in the bytes of its old array.
 */
static void array_reuse_threads(int id)
{
	unsigned long long key = 9, value = 999;

	if (id == 0) {
		look_up_and_read(9);
		return;
	}
	if (ak_htab_maintain(&table) || table.old)
		explore_fail("T1: the growth did not end");
	if (ak_htab_init(&other, 8, 8, 16)) {
		explore_fail("T1: init the other table");
		return;
	}
	explore_htab_same_seeds(other.cur, table.cur);
	if (ak_htab_update(&other, &key, &value, AK_HTAB_NOEXIST))
		explore_fail("T1: insert 9 into the other table");
}

static void check_array_reuse(void)
{
	if (hit_err || hit_value != 90)
		explore_fail("the lookup of 9 (present throughout): %d, value %llu: want 90",
			     hit_err, hit_value);
	expect_other_sound_then_destroy(1);
	expect_sound_then_destroy(14);
}

Test(explore_htab, a_hit_is_never_in_an_array_another_table_took)
{
	static const struct explore_scenario s = {
		.name = "a lock-free lookup while the growth ends and another table takes the old array",
		.threads = 2,
		.allow_stale_reads = 1,
		.reads_freed_objects = 1,
		.setup = setup_growth_nearly_done,
		.thread = array_reuse_threads,
		.check = check_array_reuse,
	};

	hit_value = 0;
	hit_err = 0;
	explore_test(&s);
}
