// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * htab.h's walks under the schedule explorer (htab_scenarios.h): ak_htab_next
 * and ak_htab_delete_current, and the loader's copying walks, against
 * writers, a delete in the walk's chain and a whole reseed.
 */
#include "explore/htab_scenarios.h"

/* ---- walks (ak_htab_next, ak_htab_delete_current) against writers ---- */

/* Keys 1, 17, 33 share a bucket; 2 and 18 another; 3 is alone. */
static const unsigned long long walk_keys[] = { 1, 17, 33, 2, 18, 3 };
#define WALK_KEYS ARRAY_SIZE(walk_keys)

static unsigned long long seen[64];
static int walk_end, walk_deleted;

static void setup_walk(void)
{
	unsigned int i;

	memset(seen, 0, sizeof(seen));
	walk_end = 0;
	walk_deleted = 0;
	if (ak_htab_init(&table, 8, 8, 16))
		explore_fail("setup: init");
	for (i = 0; i < WALK_KEYS; i++)
		insert(walk_keys[i]);
}

/* Walk the table, deleting key @doomed on the way (0: none). */
/*
 * The entry a step returned is read marked, and trusted only once the next
 * step did not say the walk went stale: a delete after the step may free
 * it, and any owner take its bytes (htab.h).
 */
static void walk(unsigned long long doomed)
{
	struct ak_htab_cursor c = {};
	unsigned long long *key, *value, k = 0, v = 0;
	int err, steps, read = 0;

	for (steps = 0; steps < 64; steps++) {
		err = ak_htab_next(&table, &c, (void **)&key, (void **)&value);
		if (read && err != -AK_ESTALE) {
			if (k >= 64 || v != k * 10) {
				explore_fail("the walk returned key %llu, value %llu", k, v);
				return;
			}
			seen[k]++;
		}
		read = 0;
		if (err) {
			walk_end = err;
			return;
		}
		k = ak_read_once(*key);
		v = ak_read_once(*value);
		read = 1;
		if (k == doomed) {
			err = ak_htab_delete_current(&table, &c);
			if (err == -AK_ESTALE) {
				walk_end = err;
				return;
			}
			if (err)
				explore_fail("delete_current: %d", err);
			walk_deleted = 1;
		}
	}
	explore_fail("the walk went on past 64 entries");
}

/* A walk that ends at -ENOENT saw every key present throughout, once. */
static void check_walk(const unsigned long long *changed, int nchanged)
{
	unsigned int i;
	int k, j, touched;

	if (walk_end != -ENOENT && walk_end != -AK_ESTALE)
		explore_fail("the walk ended with %d", walk_end);
	for (k = 0; k < 64 && walk_end == -ENOENT; k++) {
		touched = 0;
		for (j = 0; j < nchanged; j++)
			touched |= changed[j] == (unsigned long long)k;
		for (i = 0; i < WALK_KEYS && !touched; i++)
			touched = walk_keys[i] == (unsigned long long)k ? 2 : 0;
		/* Present throughout: once; inserted or deleted meanwhile: at most once. */
		if (touched == 2 ? seen[k] != 1 : seen[k] > 1)
			explore_fail("a complete walk returned key %d %llu times", k, seen[k]);
	}
}

static void next_vs_delete_threads(int id)
{
	unsigned long long key = 17, value = 490;
	int err;

	if (id == 0) {
		walk(0);
		return;
	}
	err = ak_htab_delete(&table, &key);
	key = 49;
	err = err ?: ak_htab_update(&table, &key, &value, AK_HTAB_NOEXIST);
	if (err)
		explore_fail("T1: %d", err);
}

static void check_next_vs_delete(void)
{
	static const unsigned long long changed[] = { 17, 49 };

	check_walk(changed, 2);
	expect_sound_then_destroy(WALK_KEYS);
}

Test(explore_htab, a_walk_is_complete_or_stale_while_a_key_goes)
{
	static const struct explore_scenario s = {
		.name = "ak_htab_next against a delete and an insert in its chain",
		.threads = 2,
		.setup = setup_walk,
		.thread = next_vs_delete_threads,
		/* The walker reads an entry a delete may have freed since (walk()). */
		.allow_stale_reads = 1,
		.reads_freed_objects = 1,
		.check = check_next_vs_delete,
	};

	explore_test(&s);
}

static void delete_current_threads(int id)
{
	unsigned long long key = 49, value = 490;
	int err;

	if (id == 0) {
		walk(17);
		return;
	}
	err = ak_htab_update(&table, &key, &value, AK_HTAB_NOEXIST);
	if (err)
		explore_fail("T1: insert 49: %d", err);
}

/* Key 17 is gone exactly when the walk's ak_htab_delete_current said it deleted it. */
static void expect_key_17_as_delete_current_said(void)
{
	unsigned long long key = 17, v;

	if (walk_deleted != (ak_htab_lookup_copy(&table, &key, &v) == -ENOENT))
		explore_fail("delete_current said %d, and key 17 is %s", walk_deleted,
			     walk_deleted ? "there" : "gone");
}

static void check_delete_current(void)
{
	static const unsigned long long changed[] = { 49 };

	check_walk(changed, 1);
	expect_key_17_as_delete_current_said();
	expect_sound_then_destroy(WALK_KEYS + 1 - walk_deleted);
}

Test(explore_htab, delete_current_keeps_a_walk_exact_or_stale)
{
	static const struct explore_scenario s = {
		.name = "ak_htab_delete_current against an insert into its chain",
		.threads = 2,
		.setup = setup_walk,
		.thread = delete_current_threads,
		/* The walker reads an entry a delete may have freed since (walk()). */
		.allow_stale_reads = 1,
		.reads_freed_objects = 1,
		.check = check_delete_current,
	};

	explore_test(&s);
}

/* A walk that deletes key 17 while another CPU deletes its chain neighbour 33. */
static void delete_current_vs_delete_threads(int id)
{
	unsigned long long key = 33;
	int err;

	if (id == 0) {
		walk(17);
		return;
	}
	err = ak_htab_delete(&table, &key);
	if (err)
		explore_fail("T1: delete 33: %d", err);
}

static void check_delete_current_vs_delete(void)
{
	static const unsigned long long changed[] = { 33 };
	unsigned long long key = 33, v;

	check_walk(changed, 1);
	expect_key_17_as_delete_current_said();
	if (ak_htab_lookup_copy(&table, &key, &v) != -ENOENT)
		explore_fail("key 33 was deleted, and is there");
	expect_sound_then_destroy(WALK_KEYS - 1 - walk_deleted);
}

Test(explore_htab, delete_current_beside_a_delete_in_its_chain)
{
	static const struct explore_scenario s = {
		.name = "ak_htab_delete_current against a delete in its chain",
		.threads = 2,
		.setup = setup_walk,
		.thread = delete_current_vs_delete_threads,
		/* The walker reads an entry a delete may have freed since (walk()). */
		.allow_stale_reads = 1,
		.reads_freed_objects = 1,
		.check = check_delete_current_vs_delete,
	};

	explore_test(&s);
}

/* ---- ak_htab_lookup_or_init: one insert of a new key, however they race ---- */

static void setup_counting(void)
{
	if (ak_htab_init(&table, 8, 8, 16) || ak_htab_reserve(&table, 4))
		explore_fail("setup: init and reserve");
	insert(5);	/* in the bucket where key 21 will go too */
}

/*
 * Two CPUs count into key 21, absent at the start, and one into key 5,
 * present, in the same bucket: whichever CPU inserts 21, the other must
 * find that entry, not make a second one, and no count is lost.
 */
static void counting_threads(int id)
{
	unsigned long long key = id == 2 ? 5 : 21, zero = 0, *count;
	int err = 0;

	count = ak_htab_lookup_or_init(&table, &key, &zero, &err);
	if (!count) {
		explore_fail("T%d: lookup_or_init %llu: %d", id, key, err);
		return;
	}
	__atomic_fetch_add(count, 1, __ATOMIC_RELAXED);
}

static void check_counting(void)
{
	expect_value(21, 2);
	expect_value(5, 51);
	expect_sound_then_destroy(2);
}

Test(explore_htab, lookup_or_init_inserts_a_racing_key_once)
{
	static const struct explore_scenario s = {
		.name = "two ak_htab_lookup_or_init of one new key, one of a key beside it",
		.threads = 3,
		.setup = setup_counting,
		.thread = counting_threads,
		.check = check_counting,
	};

	explore_test(&s);
}

/* ---- ak_htab_next_copy: the loader's walk, against a delete and an insert ---- */

/*
 * The walk as user space makes it, each entry copied under its bucket's
 * lock: ak_htab_next_copy, or with @live ak_htab_next_copy_live.
 */
static void walk_copying_with(int live)
{
	const char *what = live ? "live" : "copying";
	struct ak_htab_cursor c = {};
	struct ak_htab_live_cursor lc = {};
	unsigned long long key = 0, value = 0;	/* set when err is 0; gcc cannot tell */
	int err, steps;

	for (steps = 0; steps < 64; steps++) {
		err = live ? ak_htab_next_copy_live(&table, &lc, &key, &value) :
			     ak_htab_next_copy(&table, &c, &key, &value);
		if (err == -EBUSY)
			continue;	/* a lock held a moment: call again */
		if (err) {
			walk_end = err;
			return;
		}
		if (key >= 64 || value != key * 10) {
			explore_fail("the %s walk returned key %llu, value %llu", what, key, value);
			return;
		}
		seen[key]++;
	}
	explore_fail("the %s walk went on past 64 steps", what);
}

static void next_copy_vs_delete_threads(int id)
{
	if (id == 0)
		walk_copying_with(0);
	else
		next_vs_delete_threads(id);
}

Test(explore_htab, a_copying_walk_is_complete_or_stale_while_a_key_goes)
{
	static const struct explore_scenario s = {
		.name = "ak_htab_next_copy against a delete and an insert in its chain",
		.threads = 2,
		.setup = setup_walk,
		.thread = next_copy_vs_delete_threads,
		.check = check_next_vs_delete,
	};

	explore_test(&s);
}

/* ---- ak_htab_next_copy_live: the walk that never goes stale ---- */

static void next_copy_live_vs_delete_threads(int id)
{
	if (id == 0)
		walk_copying_with(1);
	else
		next_vs_delete_threads(id);
}

/* It always ends, with every key present throughout once, the others at most once. */
static void check_next_copy_live(void)
{
	if (walk_end != -ENOENT)
		explore_fail("the live walk ended with %d, not at the end", walk_end);
	check_next_vs_delete();
}

Test(explore_htab, a_live_walk_ends_with_each_key_once_while_a_key_goes)
{
	static const struct explore_scenario s = {
		.name = "ak_htab_next_copy_live against a delete and an insert in its chain",
		.threads = 2,
		.setup = setup_walk,
		.thread = next_copy_live_vs_delete_threads,
		.check = check_next_copy_live,
	};

	explore_test(&s);
}

/*
 * A live walk across a whole reseed: T1 begins a reseed and finishes it
 * (every entry rehashed, the order the walk follows changed) while T0
 * walks. The walk ends complete (each key once) or says -AK_ESTALE; a
 * reseed begun and ended inside one of its calls must not go unseen.
 */
static void live_vs_reseed_threads(int id)
{
	struct ak_htab_live_cursor c = {};
	unsigned long long key = 0, value = 0;
	int err, steps;

	if (id == 0) {
		for (steps = 0; steps < 64; steps++) {
			err = ak_htab_next_copy_live(&table, &c, &key, &value);
			if (err == -EBUSY) {
				explore_spin();	/* entries moving: wait for T1 to move them */
				continue;
			}
			if (err) {
				walk_end = err;
				return;
			}
			if (key >= 64 || value != key * 10) {
				explore_fail("the live walk returned key %llu, value %llu", key, value);
				return;
			}
			seen[key]++;
		}
		explore_fail("the live walk went on past 64 steps");
		return;
	}
	table.reseed_wanted = 1;
	__ak_htab_resize(&table, 1);
	if (!table.old || table.reseeds != 1)
		explore_fail("T1: no reseed began");
	if (ak_htab_maintain(&table))
		explore_fail("T1: the reseed did not finish");
}

static void check_live_vs_reseed(void)
{
	check_walk(NULL, 0);
	expect_sound_then_destroy(WALK_KEYS);
}

Test(explore_htab, a_live_walk_never_misses_a_whole_reseed)
{
	static const struct explore_scenario s = {
		.name = "ak_htab_next_copy_live against a reseed begun and finished",
		.threads = 2,
		.setup = setup_walk,
		.thread = live_vs_reseed_threads,
		.check = check_live_vs_reseed,
	};

	explore_test(&s);
}
