// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The lock-free paths of htab.h under the explorer's weak mode (README.md):
 * the headers built as for a weakly ordered CPU, and a load not ordered by
 * a fully ordered atomic, an address dependency or a token (atomic.h's
 * ak_dep) may return an older value of its location, as arm64 allows. Each
 * check here holds on every such CPU: it compares the answers only with
 * what the threads' own reads tell them, never with the order the schedule
 * happened to run the calls in (a load may see a store the schedule made
 * long before it as not yet made).
 *
 * Keys are 8-byte numbers hashed as explore.h says: in a table of 16
 * buckets key k is in bucket reverse_4(k mod 16), so keys 1, 17 and 33
 * share bucket 8; key 8 is in bucket 1, 2 in bucket 4, 7 in 14, 15 in 15.
 * Every key's value is ten times the key.
 */
#define EXPLORE_WEAK_MODE
#include "explore/htab_scenarios.h"	/* the table, insert, expect_sound_then_destroy */
#include <arenakit/omap.h>

static void setup_keys(const unsigned long long *keys, unsigned int n)
{
	unsigned int i;

	if (ak_htab_init(&table, 8, 8, 16))
		explore_fail("setup: init");
	for (i = 0; i < n; i++)
		insert(keys[i]);
}

/* ---- A lock-free lookup's miss, a node ahead of its key freed ---- */

static int lookup_err;
static unsigned long long looked_up;

/* Chain 1 -> 17 -> 33 (each insert goes first); 17, ahead of 33, goes. */
static void setup_chain(void)
{
	static const unsigned long long keys[] = { 33, 17, 1 };

	lookup_err = 0;
	looked_up = 0;
	setup_keys(keys, 3);
}

static void lookup_vs_delete_threads(int id)
{
	unsigned long long key = 33, *v;
	int err;

	if (id == 0) {
		v = ak_htab_lookup(&table, &key, &lookup_err);
		looked_up = v ? *v : 0;
		return;
	}
	key = 17;
	err = ak_htab_delete(&table, &key);
	if (err)
		explore_fail("T1: delete 17: %d", err);
}

static void check_lookup_vs_delete(void)
{
	if (looked_up != 330)
		explore_fail("lookup of key 33 (present throughout): %d, value %llu", lookup_err,
			     looked_up);
	expect_sound_then_destroy(2);
}

/*
 * The delete unlinks 17, moves the generation and frees the node, whose
 * first word (its link) the allocator then writes. A lookup that reads the
 * freed link ends its walk before 33; its re-check of the bucket and the
 * generation must then be ordered after that read, or it may read both as
 * they were before the delete and answer -ENOENT.
 */
Test(explore_weak, lookup_finds_a_key_while_a_node_ahead_of_it_is_freed)
{
	static const struct explore_scenario s = {
		.name = "weak: a lock-free lookup of 33 while 17, ahead of it, is deleted and freed",
		.threads = 2,
		/* A lock-free lookup reads freed nodes: BPF reads their bytes. */
		.allow_stale_reads = 1,
		.reads_freed_objects = 1,
		.weak = 1,
		.shared = &table,
		.shared_size = sizeof(table),
		.setup = setup_chain,
		.thread = lookup_vs_delete_threads,
		.check = check_lookup_vs_delete,
	};

	explore_test(&s);
}

/* ---- ak_htab_next, complete or stale ---- */

static unsigned long long seen[64];
static unsigned long long walk_gen, setup_gen;
static int walk_end;

static void setup_walk(void)
{
	static const unsigned long long keys[] = { 7, 15 };

	memset(seen, 0, sizeof(seen));
	walk_end = 0;
	walk_gen = 0;
	setup_keys(keys, 2);
	setup_gen = table.gen;
}

/* Walk the table; walk_gen is the generation the walk's first call read. */
static void walk(void)
{
	struct ak_htab_cursor c = {};
	unsigned long long *key, *value;
	int err, steps;

	for (steps = 0; steps < 64; steps++) {
		err = ak_htab_next(&table, &c, (void **)&key, (void **)&value);
		if (err) {
			walk_end = err;
			return;
		}
		if (!walk_gen)
			walk_gen = c.gen;
		if (*key >= 64 || *value != *key * 10) {
			explore_fail("the walk returned key %llu, value %llu", *key, *value);
			return;
		}
		seen[*key]++;
	}
	explore_fail("the walk went on past 64 entries");
}

static void walk_vs_insert_threads(int id)
{
	if (id == 0)
		walk();
	else
		insert(8);
}

/*
 * A complete walk whose first call read the generation the insert of 8
 * moved to must return 8: the insert linked it before it moved the
 * generation, fully ordered, and the walk read the generation first.
 */
static void check_walk_vs_insert(void)
{
	if (walk_end != -ENOENT && walk_end != -AK_ESTALE)
		explore_fail("the walk ended with %d", walk_end);
	if (walk_end == -ENOENT && (seen[7] != 1 || seen[15] != 1 || seen[8] > 1))
		explore_fail("a complete walk returned 7, 15 and 8 %llu, %llu and %llu times",
			     seen[7], seen[15], seen[8]);
	if (walk_end == -ENOENT && walk_gen > setup_gen && !seen[8])
		explore_fail("a complete walk at generation %llu (the insert's) missed key 8",
			     walk_gen);
	expect_sound_then_destroy(3);
}

/*
 * Key 8's bucket (1) is read by the walk's first call, before it reaches
 * 7 (bucket 14): a read of it that the generation's read does not order
 * may return the bucket as it was before the insert.
 */
Test(explore_weak, a_walks_first_call_sees_an_insert_whose_generation_it_read)
{
	static const struct explore_scenario s = {
		.name = "weak: ak_htab_next's first call against an insert before it",
		.threads = 2,
		.weak = 1,
		.shared = &table,
		.shared_size = sizeof(table),
		.setup = setup_walk,
		.thread = walk_vs_insert_threads,
		.check = check_walk_vs_insert,
	};

	explore_test(&s);
}

static void walk_vs_insert_delete_threads(int id)
{
	unsigned long long key = 15;
	int err;

	if (id == 0) {
		walk();
		return;
	}
	insert(2);
	err = ak_htab_delete(&table, &key);
	if (err)
		explore_fail("T1: delete 15: %d", err);
}

/*
 * Key 2 went in before 15 went out: no moment of the table lacked both,
 * so a complete walk returns one of them at least.
 */
static void check_walk_vs_insert_delete(void)
{
	if (walk_end != -ENOENT && walk_end != -AK_ESTALE)
		explore_fail("the walk ended with %d", walk_end);
	if (walk_end == -ENOENT && (seen[7] != 1 || seen[2] > 1 || seen[15] > 1))
		explore_fail("a complete walk returned 7, 2 and 15 %llu, %llu and %llu times",
			     seen[7], seen[2], seen[15]);
	if (walk_end == -ENOENT && !seen[2] && !seen[15])
		explore_fail("a complete walk missed both 2 (inserted first) and 15 (deleted after)");
	expect_sound_then_destroy(2);
}

/*
 * The walk's other end: its last call reads the empty buckets it
 * ends on, then the generation. If that last read is not ordered after
 * the buckets', it may return the generation from before an insert
 * behind the walk (2, in bucket 4) while the bucket of 15 is read as the
 * delete after it left it: a complete walk that is no snapshot.
 */
Test(explore_weak, a_walks_last_call_reads_the_generation_after_its_buckets)
{
	static const struct explore_scenario s = {
		.name = "weak: ak_htab_next's last call against an insert behind it, then a delete ahead",
		.threads = 2,
		/*
		 * The entry a call returns may be deleted and freed before the
		 * walk reads it: nothing orders the delete before its last read.
		 */
		.allow_stale_reads = 1,
		.reads_freed_objects = 1,
		.weak = 1,
		.shared = &table,
		.shared_size = sizeof(table),
		.setup = setup_walk,
		.thread = walk_vs_insert_delete_threads,
		.check = check_walk_vs_insert_delete,
	};

	explore_test(&s);
}

/* ---- omap.h's read section against a split ---- */

static struct ak_omap __arena_global omap;
static int omap_lookup_err;
static unsigned long long omap_lookup_value;

/* Keys 1-32, one full leaf: the next new key splits it, and 20 moves right. */
static void setup_full_leaf(void)
{
	unsigned long long k, v;

	memset(&omap, 0, sizeof(omap));
	if (ak_omap_init(&omap, sizeof(k), sizeof(v)))
		explore_fail("setup: omap init");
	for (k = 1; k <= AK_OMAP_FANOUT; k++) {
		v = k * 10;
		if (ak_omap_update(&omap, &k, &v, AK_OMAP_NOEXIST))
			explore_fail("setup: omap update %llu", k);
	}
	omap_lookup_err = 1;
}

static void lookup_vs_split_threads(int id)
{
	unsigned long long key = id ? 33 : 20, value = key * 10, *v;

	if (id) {
		if (ak_omap_update(&omap, &key, &value, AK_OMAP_NOEXIST))
			explore_fail("T1: insert 33");
		return;
	}
	omap_lookup_err = 0;
	v = ak_omap_lookup(&omap, &key, &omap_lookup_err);
	omap_lookup_value = v ? *v : 0;
}

static void check_lookup_vs_split(void)
{
	if (omap_lookup_err || omap_lookup_value != 200)
		explore_fail("lookup of 20, there throughout: %d, value %llu", omap_lookup_err,
			     omap_lookup_value);
	if (ak_omap_check(&omap) || ak_omap_count(&omap) != AK_OMAP_FANOUT + 1)
		explore_fail("the map is broken, or does not hold 33 keys");
	if (ak_omap_destroy(&omap))
		explore_fail("omap destroy");
	explore_expect_given_back(0);
}

/*
 * The insert of 33 splits the full leaf: keys 17-32 move to a new right
 * leaf, and the old one keeps 16. A lookup of 20 that read the root
 * before the split and the leaf's count after it finds nothing there; the
 * count read again after the leaf must then be the split's, which only
 * the read fence before it ensures: without it the count may be read as
 * it was before the split, and the miss trusted.
 */
Test(explore_weak, an_omap_lookup_reads_the_count_again_after_the_leaf)
{
	static const struct explore_scenario s = {
		.name = "weak: an omap lookup of 20 while 33's insert splits its leaf",
		.threads = 2,
		/* A read section reads nodes mid-change: BPF reads their bytes. */
		.allow_stale_reads = 1,
		.reads_freed_objects = 1,
		.weak = 1,
		.shared = &omap,
		.shared_size = sizeof(omap),
		.setup = setup_full_leaf,
		.thread = lookup_vs_split_threads,
		.check = check_lookup_vs_split,
	};

	explore_test(&s);
}
