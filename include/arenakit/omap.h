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
 * by a constant (levels, a node's keys).
 *
 * Keys are compared as unsigned words, the first most significant: an
 * unsigned integer is one word; a signed one is stored with its sign bit
 * flipped (ak_omap_key_s64); a byte string as big-endian words
 * (ak_omap_key_bytes). A key type is any struct of whole words.
 *
 * A key's entry (its key, then its value) is an object of its own, which
 * a leaf links to: a value stays at its address while nodes split and
 * merge, so lookups return its address, as the hash table's do.
 *
 * Concurrency: one ak_lock per map, held by every change for one descent
 * and its change (O(levels x log2(fanout)) compares, plus a node's
 * shift), so a wait is bounded as lock.h says. Lookups, bounds, first,
 * last, walks and the count take no lock: they read in a read section,
 * between two reads of the map's sequence count (m->gen, odd while a
 * holder changes the tree), and read again if a change ran meanwhile; after
 * three such tries a lookup takes the lock, so writers never starve it. A
 * reader writes nothing shared: readers on many CPUs share the map's cache
 * lines. In user space, where a link read mid-change could point outside
 * the mmap or to a page given back, they take the lock unless the build
 * defines AK_ARENA_CLAMP (arena.h: an emulated arena's; a loader's headers
 * refuse it); the loader's ak_omap_next_copy holds it to copy a value
 * (omap_user.h). An update allocates what it needs
 * (entries a chunk at a time, the nodes a split may need) before it takes
 * the lock: a holder never allocates. A delete keeps its entry and nodes
 * for the next inserts (ak_omap_trim gives them back), so a queue's pushes
 * after its pops, or a map's inserts after deletes, allocate nothing.
 *
 * The smallest key needs no descent: the leftmost leaf stays the same node
 * for the map's life, so first and pop-first start there.
 *
 * Program types: lookups, bounds, walks, deletes and pops work anywhere;
 * ak_omap_update allocates with ak_alloc (sleepable programs),
 * ak_omap_update_nosleep from ak_alloc_reserve's pool. The calls are
 * global functions, one version per key width: each has its own budget.
 *
 * The structures (and ak_omap_cursor_init) are in <arenakit/omap_types.h>;
 * the bodies in omap_impl.h and the files it lists, by mechanism; the
 * loader's copying walk in <arenakit/omap_user.h>.
 */
#ifndef __ARENAKIT_OMAP_H
#define __ARENAKIT_OMAP_H

#include <arenakit/alloc.h>
#include <arenakit/lock.h>
#include <arenakit/omap_types.h>

/* Update flags, as BPF_ANY, BPF_NOEXIST and BPF_EXIST. */
#define AK_OMAP_ANY 0
#define AK_OMAP_NOEXIST 1
#define AK_OMAP_EXIST 2

/**
 * ak_omap_init - make @m an empty map (sleepable)
 * @m: the map, zeroed or destroyed, which no other program or thread uses
 *	until this returns: two inits of one map at once may both allocate
 *	its first node, and one is lost (as two ak_htab_init of one table);
 *	initialise once, from one program (a setup run, as the examples do)
 * @key_size: bytes per key: 8, 16, 24 or 32
 * @value_size: bytes per value, 1 to AK_OMAP_MAX_VALUE
 *
 * Return: 0; -EINVAL for a size out of range or a map in use; an
 * allocation's error.
 */
static inline int ak_omap_init(struct ak_omap __arena *m, unsigned int key_size,
			       unsigned int value_size);

/**
 * ak_omap_destroy - free every node and entry of @m; @m is zero after
 * @m: the map, which no other program or thread uses any more: a call
 *	that adds entries or nodes meanwhile (an insert, ak_omap_reserve) may
 *	leave them to no map; a read of a destroyed map is -EINVAL
 *
 * Return: 0; -EBUSY if the lock stayed busy; -AK_EBUDGET if the budget
 * ran out first (call again: it goes on).
 */
static inline int ak_omap_destroy(struct ak_omap __arena *m);

/**
 * ak_omap_trim - free the nodes @m keeps for its inserts, and its entries if empty
 * @m: the map
 *
 * A delete keeps its key's entry, and a merge the node it takes out, for
 * the inserts that follow (struct ak_omap says why): a map that shrank
 * for good gives back its spare nodes here, and an empty map its entries'
 * chunks too. Any program.
 *
 * Return: 0; -EBUSY; -AK_EBUDGET if the budget ran out first (what is
 * left stays kept: call again).
 */
static inline int ak_omap_trim(struct ak_omap __arena *m);

/**
 * ak_omap_reserve - keep @entries entries and @nodes nodes for inserts (sleepable)
 * @m: the map
 * @entries: idle entries to have at least (allocated a chunk at a time)
 * @nodes: spare nodes to have at least
 *
 * What ak_omap_update_nosleep (and ak_pq_push_nosleep) then takes
 * instead of allocating: an insert of a new key takes one entry, and one
 * node for each full node on its path, plus one for a new root (a leaf
 * splits once in 16 inserts at most, as a rule; a node a delete merged
 * away is kept too). Others' inserts take from the same stock.
 *
 * Return: 0; -EINVAL (a map not initialised); an allocation's error;
 * -EBUSY; -AK_EBUDGET (call again: it goes on).
 */
static inline int ak_omap_reserve(struct ak_omap __arena *m, unsigned long long entries,
				  unsigned long long nodes);

/**
 * ak_omap_update - store *@value under *@key, as @flags say (sleepable)
 * @m: the map
 * @key: a pointer to the key (its type's size is the map's key size)
 * @value: a pointer to the value (its type's size is the map's)
 * @flags: AK_OMAP_ANY, AK_OMAP_NOEXIST or AK_OMAP_EXIST
 *
 * A new key takes an idle entry: one a delete kept, or one cut from a
 * chunk of AK_OMAP_CHUNK bytes allocated before the lock is taken, as are
 * the nodes a split may need; the value is written under the lock.
 *
 * Return: 0; -EEXIST (NOEXIST, present); -ENOENT (EXIST, absent);
 * -EINVAL (sizes, flags, a map not initialised); -E2BIG past
 * AK_OMAP_MAX_DEPTH levels; -EBUSY; an allocation's error.
 */
#define ak_omap_update(m, key, value, flags) __ak_omap_update(m, key, value, flags, sleepable)

/**
 * ak_omap_update_nosleep - ak_omap_update for any program type
 * @m: the map
 * @key: a pointer to the key
 * @value: a pointer to the value
 * @flags: as ak_omap_update
 *
 * Entries and nodes come from those the map keeps (ak_omap_reserve, or
 * what deletes left), else from ak_alloc_nosleep's pool (ak_alloc_reserve:
 * chunks of AK_OMAP_CHUNK bytes and nodes).
 *
 * Return: as ak_omap_update; -ENOMEM when the pool is empty.
 */
#define ak_omap_update_nosleep(m, key, value, flags)			\
	__ak_omap_update(m, key, value, flags, nosleep)

/**
 * ak_omap_lookup - the value stored under *@key, or NULL (any program)
 * @m: the map
 * @key: a pointer to the key
 * @err: on NULL, set to -ENOENT, -EINVAL (wrong key size), -EBUSY or
 *	-AK_EBUDGET (may be NULL)
 *
 * The value stays at that address until its key is deleted: a program may
 * update it in place (atomically, if other CPUs do too). No lock is taken
 * (a read section: see Concurrency above) unless changes kept running
 * through three tries. The read section validates the lookup's answer,
 * not the value's bytes: a value updated in place while the caller reads
 * it can be read half old, half new (as with BPF_MAP_TYPE_HASH without a
 * spin lock), and after a delete of the key the address may hold another
 * owner's bytes (see ak_htab_lookup's notes in htab.h).
 *
 * Return: the address of the value in the arena, or NULL.
 */
#define ak_omap_lookup(m, key, err) __ak_omap_find(m, key, __AK_OMAP_EQ, NULL, err)

/**
 * ak_omap_bound - the first key at or after *@key (or after it), and its value
 * @m: the map
 * @key: a pointer to the bound
 * @strict: 0: at or after (a lower bound); 1: after (an upper bound)
 * @key_out: where that key is copied (a pointer to the key type), or NULL
 * @err: on NULL, set to -ENOENT (nothing there), or as ak_omap_lookup
 *
 * Return: the address of the value, or NULL.
 */
#define ak_omap_bound(m, key, strict, key_out, err)			\
	__ak_omap_find(m, key, (strict) ? __AK_OMAP_GT : __AK_OMAP_GE, key_out, err)

/**
 * ak_omap_first - the smallest key, and its value
 * @m: the map
 * @key_out: where the key is copied (a pointer to the key type)
 * @err: on NULL, set to -ENOENT (empty), or as ak_omap_lookup
 *
 * Return: the address of the value, or NULL.
 */
#define ak_omap_first(m, key_out, err) __ak_omap_find_end(m, key_out, __AK_OMAP_FIRST, err)

/**
 * ak_omap_last - the largest key, and its value
 * @m: the map
 * @key_out: where the key is copied (a pointer to the key type)
 * @err: on NULL, set to -ENOENT (empty), or as ak_omap_lookup
 *
 * Return: the address of the value, or NULL.
 */
#define ak_omap_last(m, key_out, err) __ak_omap_find_end(m, key_out, __AK_OMAP_LAST, err)

/**
 * ak_omap_delete - take *@key out of @m (any program)
 * @m: the map
 * @key: a pointer to the key
 *
 * Nodes left small are merged with a neighbour; the entry, and any node
 * a merge takes out, are kept for the next inserts (ak_omap_trim).
 *
 * Return: 0; -ENOENT if absent; -EINVAL; -EBUSY; -AK_EBUDGET.
 */
#define ak_omap_delete(m, key) __ak_omap_take(m, key, 0, NULL, (void *)0)

/**
 * ak_omap_lookup_and_delete - copy *@key's value to @value, and take it out
 * @m: the map
 * @key: a pointer to the key
 * @value: a pointer to where the value is copied (the value's type)
 *
 * Return: as ak_omap_delete.
 */
#define ak_omap_lookup_and_delete(m, key, value) __ak_omap_take(m, key, 0, NULL, value)

/**
 * ak_omap_rekey - move *@key's entry to the key *@to (sleepable programs)
 * @m: the map
 * @key: a pointer to the key
 * @to: a pointer to its new key (the same type)
 *
 * One call under the lock: the entry is linked at *@to before it leaves
 * *@key's place, so no other call finds the map without it, and its value
 * stays at its address. The nodes a split at *@to may need are allocated
 * first, with no lock held.
 *
 * Return: 0 (also when *@to is *@key); -ENOENT if *@key is absent;
 * -EEXIST if *@to is present; -EINVAL; -E2BIG; -EBUSY; -AK_EBUDGET; an
 * allocation's error.
 */
#define ak_omap_rekey(m, key, to) __ak_omap_rekey(m, key, to, sleepable)

/**
 * ak_omap_rekey_nosleep - ak_omap_rekey for any program type
 * @m: the map
 * @key: a pointer to the key
 * @to: a pointer to its new key
 *
 * Nodes come from ak_alloc_nosleep's pool (ak_alloc_reserve).
 *
 * Return: as ak_omap_rekey; -ENOMEM when the pool is empty.
 */
#define ak_omap_rekey_nosleep(m, key, to) __ak_omap_rekey(m, key, to, nosleep)

/**
 * ak_omap_pop_first - take the smallest key out, copying it and its value
 * @m: the map
 * @key_out: where the key is copied (a pointer to the key type)
 * @value: where the value is copied (a pointer to the value type)
 *
 * One descent under the lock: two CPUs popping never take the same key.
 *
 * Return: 0; -ENOENT if @m is empty; -EINVAL; -EBUSY; -AK_EBUDGET.
 */
#define ak_omap_pop_first(m, key_out, value) __ak_omap_take(m, key_out, 1, key_out, value)

/*
 * ak_omap_cursor_init(c, from, end, exact) sets a walk's cursor: in
 * omap_types.h, beside the cursor, so that a loader's walk (omap_user.h)
 * has it too.
 */

/**
 * ak_omap_next - the walk's next key, and its value
 * @m: the map
 * @c: the cursor (struct ak_omap_cursor *), from ak_omap_cursor_init
 * @key_out: where the key is copied (a pointer to the key type)
 * @value_out: set to the address of the value (a pointer to a pointer;
 *	not NULL)
 *
 * A walk's step, as ak_htab_next: 0 or an error, what it found through
 * its pointer arguments. Each call reads in a read section, as a lookup
 * does (the lock only after three sections a change cut): while the map
 * is unchanged since the last call, it steps to the next slot of the
 * leaf the cursor kept (no descent); after a change, it descends from the
 * cursor's last key. Nothing is held between calls, and a walk cut by its
 * caller goes on from the cursor in another run.
 *
 * Return: 0 (*@key_out and *@value_out set); -ENOENT at the end (the
 * cursor is spent: init it again); -AK_ESTALE if an exact walk's map
 * changed or @c is another map's; -EINVAL if @m is not initialised or was
 * destroyed, or the key's size is not the map's; -EBUSY or -AK_EBUDGET
 * (the cursor unchanged: call again).
 */
#define ak_omap_next(m, c, key_out, value_out) __ak_omap_next(m, c, key_out, value_out)

/**
 * ak_omap_count - the keys in @m
 * @m: the map
 *
 * Return: the count: exact under the lock, else the count between two
 * changes (a read section, as a lookup's), or, if changes kept running
 * through three of them, the count a change left (a rekey's is one more
 * until it ends).
 */
static inline unsigned long long ak_omap_count(const struct ak_omap __arena *m);

/**
 * ak_omap_check - verify @m's order, links, entries, counts and depth
 * @m: the map
 *
 * For tests and loaders (it walks every node).
 *
 * Return: 0; -EINVAL at the first fault; -EBUSY; -AK_EBUDGET if cut.
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

/**
 * ak_omap_key_bytes - the key words of a byte string, in memcmp order
 * @words: the key: @nwords words
 * @nwords: words per key, 1 to 4
 * @s: the bytes
 * @len: how many; those past 8 x @nwords are left out
 *
 * Packed big-endian and zero-padded, so keys compare as memcmp of the
 * strings zero-padded to the key's size: NUL-terminated strings sort as
 * strcmp sorts them, and two that differ only past the key's size are
 * the same key.
 */
static inline void ak_omap_key_bytes(unsigned long long *words, unsigned int nwords,
				     const unsigned char *s, unsigned int len)
{
	unsigned int i;

	for (i = 0; i < AK_OMAP_MAX_KEY / 8; i++)
		if (i < nwords)
			words[i] = 0;
	for (i = 0; i < AK_OMAP_MAX_KEY; i++) {
		if (i >= len || i >= nwords * 8)
			break;
		words[i / 8] |= (unsigned long long)s[i] << (56 - i % 8 * 8);
	}
}

#include <arenakit/omap_impl.h>

#endif /* __ARENAKIT_OMAP_H */
