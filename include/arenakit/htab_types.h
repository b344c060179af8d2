/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/htab_types.h - the hash table as it lies in the arena: its
 * structures and the encoding of their words, no code. What a loader or a
 * skeleton needs to place a table among its arena globals or to read one
 * through the mmap. The calls are <arenakit/htab.h> (BPF, and user space);
 * the loader's copying walk is <arenakit/htab_user.h>.
 *
 * A table (struct ak_htab) points at its bucket array (struct
 * __ak_htab_table), and while it grows or reseeds at the old one too. A bucket is one
 * word: the address of its chain's first node (struct ak_htab_node), with
 * bit 0 as the bucket's lock (__AK_HTAB_LOCKED); an old bucket whose nodes
 * were moved into the new array holds __AK_HTAB_MOVED, and one whose move
 * was cut part way holds the rest of its chain with __AK_HTAB_MOVED set.
 *
 * struct ak_lock (the grow lock) is lock.h's, included whole: a loader
 * that reads a table may take its bucket locks (ak_htab_lookup_copy,
 * ak_htab_next_copy), so it has lock.h anyway.
 */
#ifndef __ARENAKIT_HTAB_TYPES_H
#define __ARENAKIT_HTAB_TYPES_H

#include <arenakit/arena.h>
#include <arenakit/lock.h>

/**
 * struct ak_htab_node - an entry; ak_htab_next's key and value point into it
 * @next: the next node of its bucket's chain
 * @hash: the key's hash
 * @data: the key, zero-padded to whole words, then the value
 */
struct ak_htab_node {
	struct ak_htab_node __arena *next;
	unsigned long long hash;
	unsigned long long data[];
};

#define __AK_HTAB_LOCKED AK_BIT_LOCK	/* the bucket's lock bit */
/* Alone: an old bucket whose nodes are in the new array; with a chain: some are. */
#define __AK_HTAB_MOVED 2ULL

/*
 * A bucket array: h->cur, and h->old while the table grows or reseeds.
 * The hash's seeds lie just before it, two words per key word, the j-th at
 * __AK_HTAB_SEED(t, j) (htab_impl_key.h says how the hash uses them): the
 * allocation begins there, so a table's arrays hold exactly the seeds its
 * key size needs.
 */
struct __ak_htab_table {
	unsigned long long nbuckets;	/* a power of two */
	unsigned long long shift;	/* 64 - log2(nbuckets): a hash's bucket is hash >> shift */
	unsigned long long buckets[];	/* node address | __AK_HTAB_LOCKED, or MOVED */
};

#define __AK_HTAB_SEED(t, j) (((const unsigned long long __arena *)(t))[-1 - (int)(j)])

/* The units of h->movers (struct ak_htab, and __ak_htab_moved_one). */
#define __AK_HTAB_RETIRED 1ULL
#define __AK_HTAB_MOVER 2ULL

/**
 * struct ak_htab - a hash table in the arena
 * @key_size: bytes per key (0 before ak_htab_init and after ak_htab_destroy)
 * @value_size: bytes per value (0 likewise)
 * @count: the entries stored (ak_htab_count)
 * @gen: the generation, bumped by every change and every bucket moved
 * @reseeds: the times the table has started a rehash under new seeds
 *	because a chain grew past AK_HTAB_CHAIN_MAX (htab.h)
 * @max_entries: the most entries it holds (ak_htab_set_limit; 0: no limit)
 * @refused: inserts refused at that limit (-E2BIG)
 * @evicted: entries an LRU table evicted at that limit to make room
 *
 * Place it in the arena (an __arena_global, or from ak_alloc) and make it
 * with ak_htab_init; user space reads it through the mmap. The other
 * members are the table's own: its bucket arrays and their growth
 * (htab_impl_table.h).
 */
struct ak_htab {
	unsigned int key_size, value_size;
	/* private: */
	unsigned int key_words, node_size;	/* the key in words; a node's bytes */
	/* public: */
	unsigned long long count;
	unsigned long long gen;
	unsigned long long reseeds;
	/* private: */
	struct __ak_htab_table __arena *cur;	/* NULL: not initialised, or destroyed */
	struct __ak_htab_table __arena *old;	/* while growing */
	unsigned long long claimed;		/* old buckets handed to movers */
	unsigned long long moved;		/* old buckets moved */
	/*
	 * __AK_HTAB_MOVER for each caller that may hold the old array now, plus
	 * __AK_HTAB_RETIRED once the old array is retired: one word, so that
	 * "no one holds it and it is retired" is one value that one
	 * compare-and-swap can claim (__ak_htab_take_retired).
	 */
	unsigned long long movers;
	struct __ak_htab_table __arena *retired;	/* old array, freed when unheld */
	struct ak_lock grow_lock;		/* one grower at a time */
	unsigned int reseed_wanted;		/* an insert found a chain too long */
	/* public: */
	unsigned long long max_entries;		/* ak_htab_set_limit; 0: none */
	unsigned long long refused;		/* inserts refused at the limit */
	unsigned long long evicted;		/* entries evicted at the limit (LRU) */
	/* private: */
	unsigned long long evict_hand;		/* LRU: the clock hand, a bucket index */
	unsigned int used_word;			/* LRU: a node's data word marked on use; 0: none */
	unsigned int unused;
};

/**
 * struct ak_htab_cursor - where a walk over every entry is (ak_htab_next)
 * @htab: the table walked (NULL: the walk has not begun)
 * @gen: the table's generation when the walk began
 * @bucket: the bucket being walked
 * @skip: the entries of that bucket already returned
 *
 * Zero it before the first call.
 */
struct ak_htab_cursor {
	struct ak_htab __arena *htab;
	unsigned long long gen;
	unsigned long long bucket;
	unsigned long long skip;
};

/* The most words of a key (AK_HTAB_MAX_KEY / 8, htab.h). */
#define __AK_HTAB_MAX_KEY_WORDS 32

/**
 * struct ak_htab_live_cursor - where a walk that never goes stale is
 * (ak_htab_next_copy_live, htab_user.h)
 * @htab: the table walked (NULL: the walk has not begun)
 * @reseeds: the table's reseeds when the walk began
 * @hash: the last entry's hash: the walk goes on after it and @key
 * @key: the last entry's key
 * @started: an entry was returned (@hash and @key are one)
 * @seed: the first seed of the array the walk last read: the order's
 *	(a reseed changes it, a growth keeps it)
 *
 * Zero it before the first call.
 */
struct ak_htab_live_cursor {
	struct ak_htab __arena *htab;
	unsigned long long reseeds;
	unsigned long long hash;
	unsigned long long key[__AK_HTAB_MAX_KEY_WORDS];
	int started;
	unsigned long long seed;
};

#endif /* __ARENAKIT_HTAB_TYPES_H */
