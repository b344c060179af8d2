/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/omap.h - an ordered map in a BPF arena: keys of 1 to 4 words
 * kept in order, values as in the hash table, point lookups, bounds,
 * first/last and pop-first, and range walks with a cursor.
 *
 * Why a B+tree: in an arena a node's fetch is the cost (a JITed arena load
 * is an add and a load; a miss in the cache is the rest), so few, wide
 * nodes win. A node holds up to AK_OMAP_FANOUT (32) keys, which a binary
 * search reads in 6 compares; a split leaves at least 16 keys in each
 * half, so a million keys fit 5 levels and AK_OMAP_MAX_DEPTH (8) levels
 * hold 16^7 leaves at their least dense. An rbtree of a million keys is 20
 * to 40 levels, one fetch each; a skip list alike. Every loop is bounded
 * by a constant (levels, a node's keys), so no operation is cut short.
 *
 * Keys are compared as unsigned words, the first most significant: an
 * unsigned integer is one word; a signed one is stored with its sign bit
 * flipped (ak_omap_key_s64); a byte string as big-endian words.
 *
 * Concurrency: one ak_lock per map, held by every call for one descent and
 * its change (O(levels x log2(fanout)) compares, plus a node's shift), so
 * a wait is bounded as lock.h says. Splits take nodes from a spare stock
 * filled before the lock is taken: a holder never allocates.
 *
 * Program types: every call takes the lock; an insert that finds too few
 * spare nodes refills them with ak_alloc (sleepable programs) or
 * ak_alloc_nosleep (the _nosleep form, from ak_alloc_reserve's pool; a node
 * above AK_ALLOC_MAX_SMALL cannot come from it).
 *
 * The structures are in <arenakit/omap_types.h>; the bodies in
 * omap_impl.h.
 */
#ifndef __ARENAKIT_OMAP_H
#define __ARENAKIT_OMAP_H

#include <arenakit/alloc.h>
#include <arenakit/lock.h>
#include <arenakit/omap_types.h>

/* Insert flags, as BPF_ANY, BPF_NOEXIST and BPF_EXIST. */
#define AK_OMAP_ANY 0
#define AK_OMAP_NOEXIST 1
#define AK_OMAP_EXIST 2

/**
 * ak_omap_init - make @m an empty map (sleepable)
 * @m: the map, zeroed or destroyed
 * @key_size: bytes per key: 8, 16, 24 or 32
 * @value_size: bytes per value, 1 to AK_OMAP_MAX_VALUE
 *
 * Return: 0; -EINVAL for a size out of range; an allocation's error.
 */
static inline int ak_omap_init(struct ak_omap __arena *m, unsigned int key_size,
			       unsigned int value_size);

/**
 * ak_omap_destroy - free every node of @m; @m is zero after (sleepable)
 * @m: the map
 *
 * Return: 0; -EBUSY if the lock stayed busy.
 */
static inline int ak_omap_destroy(struct ak_omap __arena *m);

/**
 * ak_omap_insert - store @value under @key, as @flags say (sleepable)
 * @m: the map
 * @key: the key's words
 * @value: value_size bytes
 * @flags: AK_OMAP_ANY, AK_OMAP_NOEXIST (-EEXIST if present) or
 *	AK_OMAP_EXIST (-ENOENT if absent)
 *
 * Return: 0; -EEXIST, -ENOENT as @flags say; -EINVAL for bad flags or an
 * uninitialised map; -E2BIG past AK_OMAP_MAX_DEPTH levels; -EBUSY if the
 * lock stayed busy; an allocation's error.
 */
static inline int ak_omap_insert(struct ak_omap __arena *m, const void *key, const void *value,
				 unsigned int flags);

/**
 * ak_omap_insert_nosleep - ak_omap_insert for any program type
 * @m: the map
 * @key: the key's words
 * @value: value_size bytes
 * @flags: as ak_omap_insert
 *
 * Splits take nodes from ak_alloc_nosleep's pool (ak_alloc_reserve).
 *
 * Return: as ak_omap_insert; -ENOMEM when the pool is empty.
 */
static inline int ak_omap_insert_nosleep(struct ak_omap __arena *m, const void *key,
					 const void *value, unsigned int flags);

/**
 * ak_omap_lookup - copy the value under @key
 * @m: the map
 * @key: the key's words
 * @value: where the value is copied, or NULL (is it there?)
 *
 * Return: 0; -ENOENT if absent; -EINVAL uninitialised; -EBUSY.
 */
static inline int ak_omap_lookup(struct ak_omap __arena *m, const void *key, void *value);

/**
 * ak_omap_delete - take @key out of @m, copying its value first
 * @m: the map
 * @key: the key's words
 * @value: where the value is copied, or NULL
 *
 * Nodes left too small are merged with a neighbour; a node freed goes to
 * the spare stock or back to the allocator (ak_free_nosleep: any program).
 *
 * Return: 0; -ENOENT if absent; -EINVAL uninitialised; -EBUSY.
 */
static inline int ak_omap_delete(struct ak_omap __arena *m, const void *key, void *value);

/**
 * ak_omap_bound - the first key at or after @key (or strictly after)
 * @m: the map
 * @key: the bound's words
 * @strict: 0: at or after (a lower bound); 1: after (an upper bound)
 * @key_out: where that key is copied, or NULL
 * @value: where its value is copied, or NULL
 *
 * Return: 0; -ENOENT if no key lies there; -EINVAL; -EBUSY.
 */
static inline int ak_omap_bound(struct ak_omap __arena *m, const void *key, int strict,
				void *key_out, void *value);

/**
 * ak_omap_first - the smallest key and its value
 * @m: the map
 * @key_out: where the key is copied, or NULL
 * @value: where the value is copied, or NULL
 *
 * Return: 0; -ENOENT if @m is empty; -EINVAL; -EBUSY.
 */
static inline int ak_omap_first(struct ak_omap __arena *m, void *key_out, void *value);

/**
 * ak_omap_last - the largest key and its value
 * @m: the map
 * @key_out: where the key is copied, or NULL
 * @value: where the value is copied, or NULL
 *
 * Return: 0; -ENOENT if @m is empty; -EINVAL; -EBUSY.
 */
static inline int ak_omap_last(struct ak_omap __arena *m, void *key_out, void *value);

/**
 * ak_omap_pop_first - take the smallest key out, copying it and its value
 * @m: the map
 * @key_out: where the key is copied, or NULL
 * @value: where the value is copied, or NULL
 *
 * One descent, under the lock: two CPUs popping never take the same key.
 *
 * Return: 0; -ENOENT if @m is empty; -EINVAL; -EBUSY.
 */
static inline int ak_omap_pop_first(struct ak_omap __arena *m, void *key_out, void *value);

/**
 * ak_omap_cursor_init - set @c to walk the keys from @from to before @end
 * @c: the cursor
 * @from: the first key the walk may return, or NULL (the smallest)
 * @end: the walk stops before this key, or NULL (no end)
 * @exact: 1: the walk says -AK_ESTALE once the map changed between two of
 *	its calls (a snapshot, or none); 0: it goes on after its last key,
 *	and every key present throughout is returned once, in order
 * @key_words: the map's words per key
 */
static inline void ak_omap_cursor_init(struct ak_omap_cursor *c, const void *from,
				       const void *end, int exact, unsigned int key_words);

/**
 * ak_omap_next - the walk's next key and value, in order
 * @m: the map
 * @c: the cursor, from ak_omap_cursor_init
 * @key_out: where the key is copied, or NULL
 * @value: where the value is copied, or NULL
 *
 * Each call is one descent under the lock, from the cursor's last key:
 * nothing is held between calls, and a walk cut by its caller goes on
 * from the cursor in another run.
 *
 * Return: 0; -ENOENT at the end (the cursor is spent: init it again);
 * -AK_ESTALE if an exact walk's map changed, or @c is another map's;
 * -EINVAL; -EBUSY (the cursor unchanged: call again).
 */
static inline int ak_omap_next(struct ak_omap __arena *m, struct ak_omap_cursor *c,
			       void *key_out, void *value);

/**
 * ak_omap_count - the keys in @m
 * @m: the map
 *
 * Return: the count (a plain read: exact under the lock, else a moment's).
 */
static inline unsigned long long ak_omap_count(const struct ak_omap __arena *m);

/**
 * ak_omap_check - verify @m's order, links, counts and depth (tests)
 * @m: the map
 *
 * Return: 0; -EINVAL at the first fault; -EBUSY.
 */
static inline int ak_omap_check(struct ak_omap __arena *m);

/**
 * ak_omap_key_s64 - the key word of a signed integer: its sign bit flipped
 * @v: the integer
 *
 * Return: a word that compares as unsigned in @v's order.
 */
static inline unsigned long long ak_omap_key_s64(long long v)
{
	return (unsigned long long)v ^ (1ULL << 63);
}

#include <arenakit/omap_impl.h>

#endif /* __ARENAKIT_OMAP_H */
