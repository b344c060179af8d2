// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * How far an ordered map's read section reads from a node it was sent to,
 * whatever that node holds: the bound arena.h's AK_ARENA_CLAMP promises
 * to keep readable (omap_impl.h's __AK_OMAP_READ_REACH).
 *
 * A reader with no lock may follow a link a change left half written, or
 * stand on a node that is memory of something else by now. Here every
 * link the reader follows is clamped to one window of exactly
 * __AK_OMAP_READ_REACH bytes, filled with random words (a node that is
 * anything), with a page no access may touch right after it or right
 * before it. The map's count stays even, so every section ends as if what
 * it read were a tree, and every read a lookup, bound, first, last and
 * walk makes is a read of the window: one past it is a SIGSEGV.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <criterion/criterion.h>

static unsigned char *reach_window;

#define AK_ARENA_CLAMP(p) ((void)(p), (void *)reach_window)
#include "host/alloc_pages.h"
#include <arenakit/omap.h>

struct key4 {
	uint64_t w[4];	/* the widest key: the furthest a key's slot can be */
};

static struct ak_omap map;
static unsigned char *pages;	/* no access, readable, no access */
static long page;

/* xorshift64: the same windows on every run. */
static uint64_t rand_state = 0x9e3779b97f4a7c15ULL;

static uint64_t next_rand(void)
{
	rand_state ^= rand_state << 13;
	rand_state ^= rand_state >> 7;
	rand_state ^= rand_state << 17;
	return rand_state;
}

static void setup(void)
{
	page = sysconf(_SC_PAGESIZE);
	cr_assert_leq(__AK_OMAP_READ_REACH, (unsigned long)page, "the window fits a page");
	pages = mmap(NULL, 3 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(pages, MAP_FAILED);
	cr_assert_eq(mprotect(pages + page, page, PROT_READ | PROT_WRITE), 0);
	cr_assert_eq(ak_omap_init(&map, sizeof(struct key4), sizeof(uint64_t)), 0);
}

static void teardown(void)
{
	munmap(pages, 3 * page);
}

/*
 * Send every read of @m to @window, filled anew @rounds times; each read
 * call in turn. The map's own root, head and depth are put back after.
 */
static void read_through(unsigned char *window, int rounds)
{
	struct ak_omap_node *root = map.root, *head = map.head;
	unsigned int depth = map.depth;
	struct ak_omap_cursor cursor;
	struct key4 key, out;
	void *value;
	uint64_t *words = (uint64_t *)window;
	size_t i, nwords = __AK_OMAP_READ_REACH / 8;
	int r, err;

	reach_window = window;
	map.root = map.head = (struct ak_omap_node *)window;
	map.depth = AK_OMAP_MAX_DEPTH;	/* the longest descent */
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < nwords; i++)
			words[i] = next_rand();
		for (i = 0; i < 4; i++)
			key.w[i] = next_rand();
		err = 0;
		(void)ak_omap_lookup(&map, &key, &err);
		(void)ak_omap_bound(&map, &key, r & 1, &out, &err);
		(void)ak_omap_first(&map, &out, &err);
		(void)ak_omap_last(&map, &out, &err);
		ak_omap_cursor_init(&cursor, &key, (struct key4 *)NULL, r & 1);
		for (i = 0; i < 3; i++)
			(void)ak_omap_next(&map, &cursor, &out, &value);
	}
	map.root = root;
	map.head = head;
	map.depth = depth;
	cr_expect_eq(map.gen & 1, 0, "no read changed the map");
}

TestSuite(omap_reach, .init = setup, .fini = teardown);

/* A window that ends where readable memory does: no read past its end. */
Test(omap_reach, no_read_section_reads_past_the_reach)
{
	read_through(pages + 2 * page - __AK_OMAP_READ_REACH, 20000);
	cr_expect_eq(ak_omap_destroy(&map), 0);
}

/* A window that starts where readable memory does: no read before it. */
Test(omap_reach, no_read_section_reads_before_the_node)
{
	read_through(pages + page, 20000);
	cr_expect_eq(ak_omap_destroy(&map), 0);
}

/*
 * The reach is no wider than it must be: the last key of a leaf whose
 * start slot and key count are the largest a reader accepts is the
 * reach's last 32 bytes, and ak_omap_last copies it from there.
 */
Test(omap_reach, the_reach_ends_at_the_widest_leafs_last_key)
{
	unsigned char *window = pages + 2 * page - __AK_OMAP_READ_REACH;
	struct ak_omap_node *root = map.root, *n = (struct ak_omap_node *)window;
	static uint64_t entry[4 + 1];	/* a key's words, then its value */
	struct key4 key, out = {};
	unsigned int last = 2 * AK_OMAP_FANOUT - 1 + AK_OMAP_FANOUT - 1;
	int err = 0;

	for (int i = 0; i < 4; i++)
		key.w[i] = next_rand();
	memset(window, 0, __AK_OMAP_READ_REACH);
	n->leaf = 1;
	n->nkeys = AK_OMAP_FANOUT;
	n->start = 2 * AK_OMAP_FANOUT - 1;	/* the mask keeps it */
	n->w[AK_OMAP_FANOUT * 4 + last] = (uint64_t)entry;
	memcpy(&n->w[last * 4], &key, sizeof(key));
	cr_assert_eq((unsigned char *)&n->w[last * 4 + 4], window + __AK_OMAP_READ_REACH);
	reach_window = window;
	map.root = map.head = n;
	map.depth = 1;
	cr_expect_eq(ak_omap_last(&map, &out, &err), (unsigned long long)&entry[4], "err %d", err);
	cr_expect_eq(memcmp(&out, &key, sizeof(key)), 0, "the last key is the window's end");
	map.root = map.head = root;
	cr_expect_eq(ak_omap_destroy(&map), 0);
}
