// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * alloc.h, lock.h and a locked list.h under the schedule explorer.
 */
#include <string.h>
#include <criterion/criterion.h>

#include "explore/explore.h"

/* Every object freed and every empty page trimmed: the allocator at zero. */
static void expect_allocator_empty(void)
{
	int class, cpu, err = ak_alloc_trim();
	struct ak_alloc_stats st = explore_alloc_stats(), *s = &st;

	if (err)
		explore_fail("trim: %d", err);
	for (cpu = 0; cpu < AK_ALLOC_CPUS; cpu++)
		for (class = 0; class < AK_ALLOC_CLASSES; class++)
			if (ak_allocator.cpus[cpu].count[class] || ak_allocator.cpus[cpu].head[class] ||
			    ak_allocator.cpus[cpu].lock.locked)
				explore_fail("CPU %d's cache: %u blocks of class %d, lock %u", cpu,
					     ak_allocator.cpus[cpu].count[class], class,
					     ak_allocator.cpus[cpu].lock.locked);
	if (s->objects || s->bytes)
		explore_fail("%llu objects, %llu bytes still allocated", s->objects, s->bytes);
	if (s->pages != s->slab_pages + s->large_pages + s->spare_pages ||
	    s->pages != explore_pages_held())
		explore_fail("pages %llu (slab %llu, large %llu, spare %llu), the arena holds %llu",
			     s->pages, s->slab_pages, s->large_pages, s->spare_pages,
			     explore_pages_held());
	if (s->pages)
		explore_fail("%llu pages kept after a trim with nothing allocated", s->pages);
	if (ak_allocator.queued || ak_allocator.deferred)
		explore_fail("blocks left queued (%#llx) or deferred (%#llx)", ak_allocator.queued,
			     ak_allocator.deferred);
	for (class = 0; class < AK_ALLOC_CLASSES; class++)
		if (ak_allocator.classes[class].free_blocks || ak_allocator.classes[class].partial ||
		    ak_allocator.classes[class].empty)
			explore_fail("class %d: %llu free blocks, lists %p %p", class,
				     ak_allocator.classes[class].free_blocks,
				     (void *)ak_allocator.classes[class].partial,
				     (void *)ak_allocator.classes[class].empty);
	if (ak_allocator.lock.locked)
		explore_fail("the allocator's lock is held");
}

static void *shared, *other;
static int free_result[3];

/*
 * The object to be freed twice: the only live one of its class (8 bytes),
 * and its page's second block, at offset 72, which is no block's start in
 * the classes the threads allocate (24 and 104 bytes). A double free that
 * races a reuse of its block, or of its page by another class (emptied
 * pages become spare, and spare pages serve any class), frees the new
 * owner's object, which no allocator can tell from a good free. The first
 * block is freed, and stays in the setup CPU's cache until a trim.
 */
static void *alloc_object_to_free_twice(void)
{
	void *first = ak_alloc(8, NULL), *second = ak_alloc(8, NULL);

	if (!first || !second || ak_free(first))
		explore_fail("setup: no memory");
	return second;
}

static void setup_alloc(void)
{
	shared = alloc_object_to_free_twice();
	other = ak_alloc(24, NULL);
	if (!shared || !other || ak_alloc_reserve(100, 1))
		explore_fail("setup: no memory");
	memset(free_result, 0, sizeof(free_result));
}

/*
 * Three CPUs: one allocates and frees (a page taken and given back, a large
 * object freed from a non-sleepable program, so deferred), two race to
 * free the same object (exactly one may win), one takes a block from the
 * pool, one frees a neighbour of the pool's and trims; frees that find the
 * lock busy queue their blocks for its holder.
 */
static void alloc_threads(int id)
{
	void *a, *b, *big;
	int err;

	switch (id) {
	case 0:
		a = ak_alloc(24, NULL);
		b = ak_alloc(100, NULL);
		big = ak_alloc(5000, NULL);
		if (!a || !b || !big)
			explore_fail("T0: allocations failed: %p %p %p (%llu busy)", a, b, big,
				     ak_allocator.stats.fail_busy);
		if (ak_free(a) || ak_free(b) || ak_free_nosleep(big))
			explore_fail("T0: a free of its own object failed");
		break;
	case 1:
		free_result[1] = ak_free_nosleep(shared);
		a = ak_alloc_nosleep(100, NULL);	/* from the pool, unless trimmed */
		if (a && ak_free_nosleep(a))
			explore_fail("T1: a free of its own object failed");
		break;
	case 2:
		free_result[2] = ak_free(shared);
		if (ak_free(other))
			explore_fail("T2: free of its neighbour failed");
		err = ak_alloc_trim();
		if (err && err != -EBUSY)	/* -EBUSY: a free was checking */
			explore_fail("T2: trim: %d", err);
		break;
	}
}

static void check_alloc(void)
{
	int wins = !free_result[1] + !free_result[2];

	if (wins != 1 || (free_result[1] && free_result[1] != -EINVAL) ||
	    (free_result[2] && free_result[2] != -EINVAL))
		explore_fail("two frees of one object: %d and %d (exactly one must win)",
			     free_result[1], free_result[2]);
	/* The loser may find the page on its way back: a bad free, then. */
	if (ak_allocator.stats.double_frees + ak_allocator.stats.bad_frees != 1)
		explore_fail("%llu double and %llu bad frees counted (1 double free happened)",
			     ak_allocator.stats.double_frees, ak_allocator.stats.bad_frees);
	expect_allocator_empty();
}

Test(explore_alloc, three_cpus_lose_nothing_and_one_double_free_loses)
{
	static const struct explore_scenario s = {
		.name = "allocator: alloc/free, a racing double free, the queue, trim",
		.threads = 3,
		/*
		 * A double free after the page went back reads it (in BPF, a
		 * 0: refused as a bad free); what must never happen is a write.
		 */
		.allow_stale_reads = 1,
		.setup = setup_alloc,
		.thread = alloc_threads,
		.check = check_alloc,
	};

	explore_test(&s);
}

/* ---- the CPU caches ---- */

static void *cached;

static void setup_caches(void)
{
	cached = alloc_object_to_free_twice();
	memset(free_result, 0, sizeof(free_result));
}

/*
 * T0 and T1 share CPU 0 (a sleepable program preempted there, and the next
 * one), T2 runs on CPU 1. T1 and T2 race to free one object, each through
 * its CPU's cache, or through the shared path when T0 holds CPU 0's; then
 * T1 trims, which empties every cache and gives back the page the object
 * was on, while T2's free may still be checking it. T0 and T2 allocate and
 * free beside them, from their caches, in other classes (see
 * alloc_object_to_free_twice).
 */
static void cache_threads(int id)
{
	void *a, *b;
	int err;

	switch (id) {
	case 0:
		a = ak_alloc(24, NULL);
		b = ak_alloc(100, NULL);
		if (!a || !b)
			explore_fail("T0: allocations failed: %p %p", a, b);
		if (ak_free(a) || ak_free(b))
			explore_fail("T0: a free of its own object failed");
		break;
	case 1:
		free_result[1] = ak_free(cached);
		err = ak_alloc_trim();
		if (err && err != -EBUSY)	/* -EBUSY: a cache or a free was busy */
			explore_fail("T1: trim: %d", err);
		break;
	case 2:
		free_result[2] = ak_free_nosleep(cached);
		a = ak_alloc(24, NULL);	/* into CPU 1's cache, and out */
		if (!a || ak_free_nosleep(a))
			explore_fail("T2: a free of its own object failed");
		break;
	}
}

Test(explore_alloc, cpu_caches_two_programs_on_one_cpu_a_double_free_across_cpus_trim)
{
	static const int cpus[] = { 0, 0, 1 };
	static const struct explore_scenario s = {
		.name = "allocator caches: two programs on one CPU, a double free across CPUs, trim",
		.threads = 3,
		.cpus = cpus,
		.allow_stale_reads = 1,	/* as the first scenario: a loser may read the page */
		.setup = setup_caches,
		.thread = cache_threads,
		.check = check_alloc,
	};

	explore_test(&s);
}

/* ---- the locks ---- */

static struct ak_lock __arena_global lock;
static unsigned long long bit_word, counter[2], updates[2];

static void setup_lock(void)
{
	lock.locked = 0;
	bit_word = 0x1000;	/* a bit lock's other bits are data */
	memset(counter, 0, sizeof(counter));
	memset(updates, 0, sizeof(updates));
}

/* A read and a write, with a point between: an update lost shows. */
static void bump(int which)
{
	unsigned long long v = ak_read_once(counter[which]);

	ak_write_once(counter[which], v + 1);
	updates[which]++;
}

/*
 * T0 takes the ak_lock, then the bit lock; T1 tries the ak_lock twice; T2
 * takes the bit lock twice. Each lock guards its own counter.
 */
static void lock_threads(int id)
{
	int round;

	for (round = 0; round < 2; round++) {
		if (id == 1 ? !ak_lock_try(&lock) : id == 0 && !round ? !ak_lock_acquire(&lock) : 0) {
			bump(0);
			ak_lock_release(&lock);
		} else if (id == 2 || (id == 0 && round)) {
			if (ak_bit_lock_acquire(&bit_word)) {
				explore_fail("T%d: the bit lock stayed busy", id);
				continue;
			}
			bump(1);
			ak_bit_lock_release(&bit_word);
		}
	}
}

static void check_lock(void)
{
	if (counter[0] != updates[0] || counter[1] != updates[1])
		explore_fail("lost updates: %llu of %llu under the ak_lock, %llu of %llu under the bit lock",
			     counter[0], updates[0], counter[1], updates[1]);
	if (updates[1] != 3)
		explore_fail("bit lock: %llu of 3 acquisitions", updates[1]);
	if (lock.locked || bit_word != 0x1000)
		explore_fail("a lock left held: %u, word %#llx", lock.locked, bit_word);
}

Test(explore_lock, a_lock_excludes_and_is_released)
{
	static const struct explore_scenario s = {
		.name = "ak_lock acquire and try, a bit lock keeping its word's bits",
		.threads = 3,
		.setup = setup_lock,
		.thread = lock_threads,
		.check = check_lock,
	};

	explore_test(&s);
}

/* ---- a list written under a lock, read by user space under it ---- */

struct item {
	struct ak_list_node node;
	unsigned long long key;
};

static struct ak_list __arena_global list;
static struct item __arena_global items[4];
static int reads_done;

static void setup_list(void)
{
	int i;

	memset(items, 0, sizeof(items));
	ak_list_init(&list);
	for (i = 0; i < 2; i++) {
		items[i].key = i;
		ak_list_add_tail(&list, &items[i].node);
	}
	lock.locked = 0;
	reads_done = 0;
}

static void list_threads(int id)
{
	struct ak_list_node *bad = NULL;
	long long n;
	int round, err;

	for (round = 0; round < 2; round++) {
		if (ak_lock_acquire(&lock)) {
			explore_fail("T%d: the lock stayed busy", id);
			return;
		}
		if (id == 0) {
			items[2 + round].key = 2 + round;
			ak_list_add_tail(&list, &items[2 + round].node);
			ak_lock_release(&lock);
			if (ak_lock_acquire(&lock)) {
				explore_fail("T0: the lock stayed busy");
				return;
			}
			err = ak_list_del(&list, &items[round].node);
			if (err)
				explore_fail("T0: del: %d", err);
		} else {
			n = ak_list_count(&list, NULL);
			err = ak_list_check(&list, NULL, &bad);
			if (n != (long long)ak_list_len(&list) || err)
				explore_fail("reader: count %lld, len %llu, check %d at %p", n,
					     ak_list_len(&list), err, (void *)bad);
			reads_done++;
		}
		ak_lock_release(&lock);
	}
}

static void check_list(void)
{
	if (reads_done != 2 || ak_list_len(&list) != 2 || ak_list_check(&list, NULL, NULL))
		explore_fail("after: %d reads, %llu nodes", reads_done, ak_list_len(&list));
}

Test(explore_list, a_locked_writer_and_a_reader_under_the_lock)
{
	static const struct explore_scenario s = {
		.name = "a list written under an ak_lock, walked by a reader holding it",
		.threads = 2,
		.setup = setup_list,
		.thread = list_threads,
		.check = check_list,
	};

	explore_test(&s);
}
