// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * list.h's user-space walks under the schedule explorer: ak_list_next_copy
 * and ak_list_next_copy_live, as a loader walks a list through the mmap,
 * against a BPF writer holding
 * the list's ak_lock. The walk switches threads only where it takes and
 * releases the lock (its reads under the lock are plain), so a writer's
 * change falls between two of its calls, or before or after it.
 */
#include <errno.h>
#include <string.h>
#include <criterion/criterion.h>

#include "explore/explore.h"
#include <arenakit/list_user.h>

struct entry {
	unsigned long long key;
	struct ak_list_node node;
	unsigned long long value;	/* key * 10 + 1: a copy is of one entry, whole */
};

enum { ENTRIES = 4, MAX_COPIES = 16 };

static struct ak_list __arena_global list;
static struct ak_lock __arena_global lock;
static struct entry __arena_global entries[ENTRIES];
static unsigned long long copied[MAX_COPIES];	/* the walk's keys, in order */
static int ncopied, walk_end;

static void setup_walk(void)
{
	int i;

	memset(entries, 0, sizeof(entries));
	lock.locked = 0;
	ak_list_init(&list);
	for (i = 0; i < ENTRIES; i++) {
		entries[i].key = i;
		entries[i].value = i * 10 + 1;
		ak_list_add_tail(&list, &entries[i].node);
	}
	ncopied = 0;
	walk_end = 0;
}

/* An entry the walk copied: one the writers made, whole. */
static int keep_copy(const struct entry *e)
{
	if (e->key > ENTRIES || e->value != e->key * 10 + 1 || ncopied == MAX_COPIES) {
		explore_fail("copy %d: key %llu, value %llu", ncopied, e->key, e->value);
		return -1;
	}
	copied[ncopied++] = e->key;
	return 0;
}

/* The loader's walks: an entry a call, -EBUSY called again. */
static void walk_copying_with(int live)
{
	struct ak_list_live_cursor live_cursor = {};
	struct ak_list_cursor c = {};
	struct entry e;
	int calls, err;

	for (calls = 0; calls < 32; calls++) {
		err = live ? ak_list_next_copy_live(&list, &lock, &live_cursor, &e, node) :
			     ak_list_next_copy(&list, &lock, &c, &e, node);
		if (err == -EBUSY)
			continue;	/* the writer held the lock a moment: call again */
		if (err) {
			walk_end = err;
			return;
		}
		if (keep_copy(&e))
			break;
	}
	ak_list_live_cursor_release(&live_cursor);
	if (calls == 32)
		explore_fail("the copying walk went on past 32 calls");
}

/*
 * The writer: under the lock, deletes the entry of key 1 and adds a new
 * one, key 4, at the tail in the deleted one's memory, as an allocator
 * hands back the block it was just given. A walk whose cursor names that
 * memory and goes on regardless copies key 4 and ends, short of 2 and 3.
 */
static void delete_and_add(void)
{
	struct entry *e = &entries[1];
	int tries, err = -EBUSY;

	for (tries = 0; tries < 8 && err; tries++)
		err = ak_lock_acquire(&lock);
	if (err) {
		explore_fail("the writer: the lock stayed busy (%d)", err);
		return;
	}
	err = ak_list_del(&list, &e->node);
	e->key = ENTRIES;
	e->value = ENTRIES * 10 + 1;
	ak_list_add_tail(&list, &e->node);
	ak_lock_release(&lock);
	if (err)
		explore_fail("the writer: del: %d", err);
}

static void walk_vs_writer_threads(int id)
{
	if (id == 0)
		walk_copying_with(0);
	else
		delete_and_add();
}

static void live_walk_vs_writer_threads(int id)
{
	if (id == 0)
		walk_copying_with(1);
	else
		delete_and_add();
}

/*
 * Stale (ak_list_next_copy only), or complete: every entry on the list
 * throughout (keys 0, 2 and 3) copied once and in that order, and no key
 * twice.
 */
static void check_walk_ending(int live)
{
	static const unsigned long long throughout[] = { 0, 2, 3 };
	int times[ENTRIES + 1] = {}, i, next = 0;

	if (walk_end == -AK_ESTALE && !live)
		return;
	if (walk_end != -ENOENT) {
		explore_fail("the walk ended with %d", walk_end);
		return;
	}
	for (i = 0; i < ncopied; i++) {
		if (++times[copied[i]] > 1)
			explore_fail("a complete walk copied key %llu twice", copied[i]);
		if (next < 3 && copied[i] == throughout[next])
			next++;
		else if (copied[i] != 1 && copied[i] != ENTRIES)
			explore_fail("a complete walk copied key %llu out of order", copied[i]);
	}
	if (next < 3)
		explore_fail("a complete walk of %d copies missed key %llu", ncopied,
			     throughout[next]);
}

static void check_walk(void)
{
	check_walk_ending(0);
}

/* The live walk is never stale: it is complete. */
static void check_live_walk(void)
{
	check_walk_ending(1);
}

Test(explore_list, a_copying_walk_is_complete_or_stale_while_a_node_goes)
{
	static const struct explore_scenario s = {
		.name = "ak_list_next_copy against a delete and an add under the lock",
		.threads = 2,
		.setup = setup_walk,
		.thread = walk_vs_writer_threads,
		.check = check_walk,
	};

	explore_test(&s);
}

Test(explore_list, a_live_walk_is_complete_while_a_node_goes_and_its_memory_comes_back)
{
	static const struct explore_scenario s = {
		.name = "ak_list_next_copy_live against a delete and an add under the lock",
		.threads = 2,
		.setup = setup_walk,
		.thread = live_walk_vs_writer_threads,
		.check = check_live_walk,
	};

	explore_test(&s);
}
