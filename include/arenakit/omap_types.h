/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/omap_types.h - the ordered map as it lies in the arena: its
 * structures, and no code but a walk's cursor set (ak_omap_cursor_init).
 * What a loader or a skeleton needs to place a map among its arena
 * globals or to read one through the mmap. The calls are <arenakit/omap.h>.
 *
 * A map (struct ak_omap) is a B+tree: its nodes (struct ak_omap_node)
 * hold up to AK_OMAP_FANOUT keys in order; an inner node's child i holds
 * the keys from its key i - 1 (inclusive) to its key i (exclusive), and
 * the leaves are linked left to right. A leaf's link i is the entry of its
 * key i: an object of its own (the key's words, then the value), so a
 * value stays where it is while nodes split and merge, and a program may
 * keep its address, as a hash table's, until the key is deleted.
 */
#ifndef __ARENAKIT_OMAP_TYPES_H
#define __ARENAKIT_OMAP_TYPES_H

#include <arenakit/arena.h>
#include <arenakit/lock.h>

/* Keys a node holds at most; a split leaves at least half in each node. */
#define AK_OMAP_FANOUT 32
/* Levels at most: 16^7 keys fill 8 levels at the least dense. */
#define AK_OMAP_MAX_DEPTH 8
/* A key is 1 to 4 words, compared as unsigned words, the first most significant. */
#define AK_OMAP_MAX_KEY 32
#define AK_OMAP_MAX_VALUE 128
/* Bytes of the blocks entries are cut from: a link, then whole entries (6 at the largest). */
#define AK_OMAP_CHUNK 1024

/**
 * struct ak_omap_node - a node of the tree
 * @nkeys: keys in use, 0 to AK_OMAP_FANOUT
 * @leaf: 1 in a leaf
 * @start: the slot of a leaf's first key and entry (0 in an inner node):
 *	a leaf's keys are slots @start to @start + @nkeys - 1, so taking its
 *	first key moves nothing (@start + @nkeys <= AK_OMAP_FANOUT)
 * @next: a leaf's right neighbour (NULL for the last)
 * @w: AK_OMAP_FANOUT keys of the map's key words, then AK_OMAP_FANOUT + 1
 *	links: an inner node's children, or a leaf's entries (one a key)
 */
struct ak_omap_node {
	unsigned int nkeys;
	unsigned short leaf;
	unsigned short start;
	struct ak_omap_node __arena *next;
	unsigned long long w[];
};

/**
 * struct ak_omap - an ordered map in the arena; zero before ak_omap_init
 * @lock: held by every call that reads or changes the tree
 * @root: the root node: a leaf while the map fits one
 * @head: the leftmost leaf, where the smallest keys are: the map's first
 *	leaf for its whole life (a split leaves a node's lower half in place,
 *	a merge keeps the left node, a root that shrinks leaves its first
 *	child), so the first key is found without a descent
 * @depth: levels of the tree, 1 for a lone leaf (0: not initialised)
 * @key_words: words per key
 * @value_size: bytes per value
 * @entry_size: bytes per entry: the key's words, then the value's
 * @count: keys in the map
 * @gen: moved by every change: an exact walk's cursor checks it
 * @seq: the priority queue's tie-breaker: pushes in order
 * @nspare: nodes in @spare
 * @spare: nodes kept for the next splits, linked by @next: filled before
 *	the lock is taken (allocation may sleep; a holder of the lock must
 *	not), and given the nodes merges take out
 * @idle: entries no key uses, each linked by its first word: new ones,
 *	those of deleted keys, and those an insert of a present key took
 * @nidle: entries in @idle
 * @chunks: the blocks the entries are cut from (AK_OMAP_CHUNK bytes each,
 *	linked by their first word): one allocation serves many inserts
 * @retired: chunks ak_omap_trim took out of an empty map, not yet freed
 *
 * A map keeps what its deletes take out, as a preallocated BPF hash map
 * keeps its elements: its memory stays that of its largest size, and
 * inserts that follow deletes take no allocation. ak_omap_trim gives the
 * spare nodes back, and the chunks once the map is empty; ak_omap_destroy
 * frees all.
 */
struct ak_omap {
	struct ak_lock lock;
	struct ak_omap_node __arena *root;
	struct ak_omap_node __arena *head;
	unsigned int depth;
	unsigned int key_words;
	unsigned int value_size;
	unsigned int entry_size;
	unsigned long long count;
	unsigned long long gen;
	unsigned long long seq;
	unsigned long long nspare;
	struct ak_omap_node __arena *spare;
	unsigned long long __arena *idle;
	unsigned long long nidle;
	unsigned long long __arena *chunks;
	unsigned long long __arena *retired;
};

/**
 * struct ak_omap_cursor - where a range walk is (ak_omap_next)
 * @map: the map walked, its address as a number (0: the walk has not begun)
 * @gen: the map's @gen at the last call
 * @leaf: the leaf of the last key returned, its address as a number
 * @pos: that key's slot in @leaf
 * @exact: 1: -AK_ESTALE once the map changed; 0: go on after the last key
 * @started: a key was returned: @key is the last one
 * @key: the last key returned, or the walk's lower bound before the first
 * @end: the walk stops before this key, if @bounded
 * @bounded: @end is set
 *
 * Set it with ak_omap_cursor_init before the first call. The addresses
 * are numbers so that a global function may take the cursor (the
 * verifier takes only scalars in a struct it is passed); @leaf and @pos
 * are trusted only while @gen is the map's: then nothing has changed.
 */
struct ak_omap_cursor {
	unsigned long long map;
	unsigned long long gen;
	unsigned long long leaf;
	unsigned int pos;
	int exact;
	int started;
	int bounded;
	unsigned long long key[AK_OMAP_MAX_KEY / 8];
	unsigned long long end[AK_OMAP_MAX_KEY / 8];
};

/* @from and @end: keys of @from_size and @end_size bytes, or NULL. */
static inline void __ak_omap_cursor_init(struct ak_omap_cursor *c, const void *from,
					 unsigned int from_size, const void *end,
					 unsigned int end_size, int exact)
{
	*c = (struct ak_omap_cursor){ .exact = exact, .bounded = !!end };
	if (from)
		__builtin_memcpy(c->key, from, from_size < sizeof(c->key) ? from_size : sizeof(c->key));
	if (end)
		__builtin_memcpy(c->end, end, end_size < sizeof(c->end) ? end_size : sizeof(c->end));
}

/**
 * ak_omap_cursor_init - set @c to walk the keys from *@from to before *@end
 * @c: the cursor
 * @from: a pointer to the first key the walk may return, or NULL (the smallest)
 * @end: a pointer to the key the walk stops before, or NULL (no end)
 * @exact: 1: the walk says -AK_ESTALE once the map changed between two of
 *	its calls (a snapshot, or none); 0: it goes on after its last key,
 *	and every key present throughout is returned once, in order
 */
#define ak_omap_cursor_init(c, from, end, exact)			\
	__ak_omap_cursor_init(c, from, sizeof(*(from)), end, sizeof(*(end)), exact)

#endif /* __ARENAKIT_OMAP_TYPES_H */
