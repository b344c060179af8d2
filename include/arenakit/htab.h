/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/htab.h - a hash table with chains in the arena.
 *
 * Keys and values are fixed-size byte strings chosen at creation (keys up
 * to AK_HTAB_MAX_KEY bytes, values up to AK_HTAB_MAX_VALUE); any number of
 * tables per arena. The calls are macros that take typed pointers, so the
 * sizes are compile-time constants at every call (the verifier cannot
 * follow a key of run-time length on the stack) and are checked against the
 * table's: a mismatch is -EINVAL.
 *
 *	struct ak_htab __arena_global flows;
 *	ak_htab_init(&flows, sizeof(struct flow_key), sizeof(__u64), 1024); (sleepable)
 *	val = ak_htab_lookup(&flows, &key, &err);	NULL: err is -ENOENT, ...
 *	err = ak_htab_update(&flows, &key, &one, AK_HTAB_NOEXIST);
 *
 * Buckets are one word each, like the kernel's hlist_bl: the first node's
 * address with bit 0 as the bucket's lock (lock.h's bit lock), so bucket
 * memory is 8 bytes and writers on different buckets never contend. The
 * hash is SipHash-1-3 (siphash.h) of the key bytes with a 128-bit
 * per-table seed (bpf_get_prandom_u32 at init): a keyed hash, so whoever
 * chooses the keys cannot force them into one chain without the seed,
 * which never leaves the arena's owner; 1-3 rounds as in Rust's HashMap,
 * cheap enough for 16-byte keys.
 *
 * Growth: the bucket count (a power of two) doubles when the entries pass
 * 3/4 of it, incrementally: the new array is allocated by a sleepable
 * update (ak_htab_update), then every update or delete, in any program,
 * moves AK_HTAB_MIGRATE_STEP old buckets (and first the one its own key
 * hashes to; the buckets are handed out round and round, so one a busy
 * lock kept from moving is tried again while anyone writes),
 * ak_htab_maintain moves the rest, and the old array is freed
 * once its last bucket is moved and no caller holds it. A lookup
 * during growth reads the old bucket unless it is marked moved, and the
 * new one too where a move was cut part way (a busy lock). Chosen
 * over growing in one step because moving a million entries in one call
 * would spend most of a frame's budget and stall every writer, and because
 * non-sleepable programs can do the moving (it needs no allocation). The
 * bucket arrays, their growth and the helpers of the calls below are
 * htab_impl.h (internal), which this includes.
 *
 * Concurrency: writers lock the bucket (bounded wait: -EBUSY). What a
 * reader racing writers may observe:
 *  - ak_htab_lookup (BPF) takes no lock. A key present for the whole lookup
 *    is found, during growth too: a lookup that misses while the table
 *    changed (its generation moved) tries again, and after
 *    AK_HTAB_LOOKUP_TRIES looks under the bucket's lock. A key inserted or
 *    deleted meanwhile may or may not be seen. A node is fully written
 *    before it is linked, so no half-made entry is ever seen; but a value
 *    updated in place can be read half old, half new (as with
 *    BPF_MAP_TYPE_HASH without a spin lock), and the value pointer may
 *    outlive its entry (a concurrent delete frees it): it stays arena
 *    memory, so reading it never faults, but it may read reused bytes.
 *  - ak_htab_lookup_copy (BPF or user space) copies the value under the
 *    bucket's lock: whole, as one update wrote it.
 *  - User space through the mmap: ak_htab_lookup_copy, and
 *    ak_htab_next_copy to walk the table (each entry copied under its
 *    bucket's lock; complete, or -AK_ESTALE). Neither needs the allocator,
 *    so a loader links without it. The lock-free
 *    ak_htab_lookup is for a table no program writes at the time: racing a
 *    delete, it can follow a freed node's link into reused bytes, which a
 *    BPF load survives (a fault reads 0) and a user-space load need not.
 *
 * Memory order (atomic.h's terms), path by path:
 *  - Bucket locks: taken by compare-and-swap, released by exchange, both
 *    fully ordered: what a holder wrote is seen by the next, on any CPU.
 *  - A new node is linked by an exchange, fully ordered, so a lock-free
 *    reader that loads the link (ak_read_once, then loads through it:
 *    address dependency) sees the node whole. A growth publishes the old
 *    array, then the new one, each by an exchange.
 *  - The old array's lifetime (h->movers): a holder's fetch-and-add comes
 *    before its load of h->old, and the retirer's exchanges before its
 *    fetch-and-add; all fully ordered, so the argument at
 *    __ak_htab_moved_one (htab_impl.h) holds on every architecture.
 *  - The lock-free lookup's miss and ak_htab_next's empty buckets read the
 *    generation, then the bucket and chain, then both again: a seqlock
 *    read. It needs those loads kept in program order, which x86-64 (TSO)
 *    does; a weakly ordered CPU needs a read barrier at both ends, which
 *    6.12's BPF has only as a fully ordered atomic (a store, on a line every
 *    writer bumps). It is not paid: arenakit's arena atomics are tested on
 *    x86-64, and where loads may pass loads, a miss from ak_htab_lookup can
 *    be wrong in the moment a writer moves its bucket; ak_htab_lookup_copy,
 *    under the lock, is the answer that holds everywhere.
 *
 * Program types: lookup and the _nosleep update/delete work anywhere (nodes
 * come from the allocator's pool: ak_htab_reserve fills it); ak_htab_init,
 * ak_htab_update/delete (which may take and give back pages), maintain,
 * clear and destroy are for sleepable programs.
 *
 * Every chain walk is bounded by may_goto and says so (-AK_EBUDGET), never
 * "not found". Iteration (ak_htab_next) resumes under the cursor contract
 * of loop.h: -AK_ESTALE if the table changed since the cursor was saved.
 *
 * The calls, in this order below: ak_htab_init; ak_htab_lookup,
 * ak_htab_update[_nosleep], ak_htab_lookup_or_init, ak_htab_delete[_nosleep],
 * ak_htab_lookup_and_delete, ak_htab_lookup_copy; ak_htab_count,
 * ak_htab_reserve, ak_htab_maintain; ak_htab_next, ak_htab_delete_current,
 * ak_htab_next_copy (user space);
 * ak_htab_clear, ak_htab_destroy; the whole-table walks ak_htab_check_all
 * and AK_HTAB_DEFINE_EACH_ALL.
 */
#ifndef __ARENAKIT_HTAB_H
#define __ARENAKIT_HTAB_H

#include <arenakit/alloc.h>
#include <arenakit/lock.h>
#include <arenakit/siphash.h>

#define AK_HTAB_MAX_KEY 64
#define AK_HTAB_MAX_VALUE 256
#define AK_HTAB_MIN_BUCKETS 16
/*
 * The most buckets a table has: the largest power of two whose bucket
 * array is one allocation (AK_ALLOC_MAX); growth stops there, and chains
 * grow longer instead.
 */
#define AK_HTAB_MAX_BUCKETS (1ULL << 26)
/* Grow when entries > buckets * 3 / 4. */
#define AK_HTAB_LOAD_NUM 3
#define AK_HTAB_LOAD_DEN 4
/* Old buckets an update or delete moves while the table grows. */
#define AK_HTAB_MIGRATE_STEP 4
/*
 * Lock-free looks a lookup makes before it takes the bucket's lock; and
 * tries at a bucket that growth moved meanwhile, before -EBUSY.
 */
#define AK_HTAB_LOOKUP_TRIES 4
/*
 * The most steps a whole-table walk (ak_htab_check_all,
 * AK_HTAB_DEFINE_EACH_ALL) takes: as many as the largest arena holds nodes
 * (4 GiB of 32-byte nodes).
 */
#define AK_HTAB_MAX_NODES (1ULL << 27)

/* Update flags, as BPF_ANY, BPF_NOEXIST and BPF_EXIST. */
#define AK_HTAB_ANY 0
#define AK_HTAB_NOEXIST 1
#define AK_HTAB_EXIST 2

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

/**
 * struct ak_htab - a hash table in the arena
 * @key_size: bytes per key (0 before ak_htab_init and after ak_htab_destroy)
 * @value_size: bytes per value (0 likewise)
 * @count: the entries stored (ak_htab_count)
 * @gen: the generation, bumped by every change and every bucket moved
 *
 * Place it in the arena (an __arena_global, or from ak_alloc) and make it
 * with ak_htab_init; user space reads it through the mmap. The other
 * members are the table's own: its bucket arrays and their growth
 * (htab_impl.h).
 */
struct ak_htab {
	unsigned int key_size, value_size;
	/* private: */
	unsigned int key_words, node_size;	/* the key in words; a node's bytes */
	unsigned long long seed[2];		/* the SipHash key, random at init */
	/* public: */
	unsigned long long count;
	unsigned long long gen;
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

/* The bucket arrays, their growth and the calls' helpers: internal. */
#include <arenakit/htab_impl.h>

/**
 * ak_htab_init - make @h an empty table (sleepable programs, or user space)
 * @h: the table, in the arena (an __arena_global, or from ak_alloc)
 * @key_size: bytes per key, 1..AK_HTAB_MAX_KEY
 * @value_size: bytes per value, 1..AK_HTAB_MAX_VALUE (a set stores a
 *	value too: a byte will do)
 * @buckets: the initial bucket count (rounded up to a power of two, at
 *	least AK_HTAB_MIN_BUCKETS, at most AK_HTAB_MAX_BUCKETS); size it
 *	for the expected entries / 0.75 and the table never has to grow
 *
 * Return: 0, -EINVAL for sizes out of range, -ENOMEM, -EBUSY.
 */
static inline int ak_htab_init(struct ak_htab __arena *h, unsigned int key_size,
			       unsigned int value_size, unsigned long long buckets)
{
	unsigned long long n = AK_HTAB_MIN_BUCKETS;
	int err = 0;

	if (!key_size || key_size > AK_HTAB_MAX_KEY || !value_size ||
	    value_size > AK_HTAB_MAX_VALUE || buckets > AK_HTAB_MAX_BUCKETS)
		return -EINVAL;
	while (n < buckets && ak_can_loop)
		n <<= 1;
	h->key_size = key_size;
	h->value_size = value_size;
	h->key_words = (key_size + 7) / 8;
	h->node_size = sizeof(struct ak_htab_node) + h->key_words * 8 + (value_size + 7) / 8 * 8;
#ifdef __BPF__
	h->seed[0] = (unsigned long long)bpf_get_prandom_u32() << 32 | bpf_get_prandom_u32();
	h->seed[1] = (unsigned long long)bpf_get_prandom_u32() << 32 | bpf_get_prandom_u32();
#endif
	h->count = 0;
	ak_arena_store_barrier();
	h->old = 0;
	ak_arena_store_barrier();
	h->claimed = 0;
	ak_arena_store_barrier();
	h->moved = 0;
	ak_arena_store_barrier();
	h->movers = 0;
	ak_arena_store_barrier();
	h->retired = 0;
	h->cur = __ak_htab_table_new(n, __AK_HTAB_SLEEPABLE, &err);
	h->gen++;
	if (h->cur)
		return 0;
	h->key_size = 0;	/* refused by every call until a good init */
	h->value_size = 0;
	return err;
}

/**
 * ak_htab_lookup - the value stored under *@key, or NULL (any program)
 * @h: the table
 * @key: a pointer to the key (its type's size must be the table's key size)
 * @err: on NULL, set to -ENOENT (absent), -EINVAL (wrong key size),
 *	-AK_EBUDGET or -EBUSY (may be NULL)
 */
#define ak_htab_lookup(h, key, err)					\
	({								\
		struct ak_htab __arena *___ak_h = (h);			\
		typeof(key) ___ak_key = (key);				\
		unsigned long long ___ak_k[__AK_HTAB_WORDS(sizeof(*___ak_key))]; \
		void __arena *___ak_v = 0;				\
		int *___ak_e = (err), ___ak_err = -EINVAL;		\
									\
		if (sizeof(*___ak_key) == ___ak_h->key_size) {		\
			__ak_htab_key_load(___ak_k, ___ak_key, sizeof(*___ak_key)); \
			___ak_v = (void __arena *)__AK_HTAB_BY_WIDTH(__ak_htab_lookup, \
				__AK_HTAB_WORDS(sizeof(*___ak_key)),	\
				___ak_h, (const void *)___ak_k, &___ak_err); \
		}							\
		if (!___ak_v && ___ak_e)				\
			*___ak_e = ___ak_err;				\
		___ak_v;						\
	})

/**
 * ak_htab_update - store *@value under *@key (sleepable programs)
 * @h: the table
 * @key: a pointer to the key
 * @value: a pointer to the value (its type's size must be the table's)
 * @flags: AK_HTAB_ANY, AK_HTAB_NOEXIST or AK_HTAB_EXIST
 *
 * May take pages: for a new node, and to grow the table (a growth that
 * cannot have its pages is tried again by a later update; the entry still
 * goes in if its node can be had).
 * Return: 0; -EEXIST (NOEXIST, present); -ENOENT (EXIST, absent); -EINVAL
 * (sizes, flags); -ENOMEM; -EBUSY (a bucket lock stayed busy);
 * -AK_EBUDGET.
 */
#define ak_htab_update(h, key, value, flags)			\
	__ak_htab_update(h, key, value, flags, __AK_HTAB_SLEEPABLE)

/**
 * ak_htab_update_nosleep - ak_htab_update from any program type
 * @h: the table
 * @key: a pointer to the key
 * @value: a pointer to the value
 * @flags: as for ak_htab_update
 *
 * New nodes come from the allocator's pool (ak_htab_reserve fills it), so
 * -ENOMEM means the pool is empty. The table never starts growing here,
 * but moves buckets of a growth already started.
 */
#define ak_htab_update_nosleep(h, key, value, flags)		\
	__ak_htab_update(h, key, value, flags, __AK_HTAB_NOSLEEP)

/**
 * ak_htab_lookup_or_init - the value stored under *@key, or a new entry's
 * holding *@init (any program)
 * @h: the table
 * @key: a pointer to the key (its type's size must be the table's key size)
 * @init: a pointer to the value a new entry starts with (the table's size)
 * @err: on NULL, set to -EINVAL (sizes), -ENOMEM (the pool is empty: see
 *	ak_htab_reserve), -EBUSY or -AK_EBUDGET (may be NULL)
 *
 * The counting call: look @key up, and if it is absent insert it with
 * *@init, in one step under its bucket's lock, so that of several CPUs
 * racing on a new key exactly one inserts and all get the same entry
 * (BPF_MAP_TYPE_HASH needs lookup, insert with BPF_NOEXIST, and on -EEXIST
 * lookup again for that). An entry already there keeps its value. The
 * value pointer is as ak_htab_lookup's: update it with atomics, as
 *
 *	count = ak_htab_lookup_or_init(&counts, &key, &zero, &err);
 *	if (count)
 *		__sync_fetch_and_add(count, 1);
 *
 * A present key costs a lock-free lookup; an absent one, a node from the
 * allocator's pool (ak_alloc_nosleep), as ak_htab_update_nosleep.
 */
#define ak_htab_lookup_or_init(h, key, init, err)			\
	({								\
		struct ak_htab __arena *___ak_oh = (h);			\
		typeof(key) ___ak_okey = (key);				\
		typeof(init) ___ak_oinit = (init);			\
		int *___ak_oe = (err), ___ak_oerr = -EINVAL;		\
		void __arena *___ak_ov = 0;				\
									\
		if (sizeof(*___ak_oinit) == ___ak_oh->value_size) {	\
			___ak_ov = ak_htab_lookup(___ak_oh, ___ak_okey, &___ak_oerr); \
			if (!___ak_ov && ___ak_oerr == -ENOENT)		\
				___ak_ov = __ak_htab_update_value(___ak_oh, ___ak_okey, \
					___ak_oinit, __AK_HTAB_INIT,	\
					__AK_HTAB_NOSLEEP, &___ak_oerr); \
		}							\
		if (!___ak_ov && ___ak_oe)				\
			*___ak_oe = ___ak_oerr;				\
		___ak_ov;						\
	})

/**
 * ak_htab_delete - remove *@key (sleepable programs: the node's memory may
 * go back to the kernel)
 * @h: the table
 * @key: a pointer to the key
 *
 * Return: 0, -ENOENT, -EINVAL, -EBUSY, -AK_EBUDGET.
 */
#define ak_htab_delete(h, key) __ak_htab_delete_key(h, key, __AK_HTAB_SLEEPABLE)
/* ak_htab_delete from any program type. */
#define ak_htab_delete_nosleep(h, key) __ak_htab_delete_key(h, key, __AK_HTAB_NOSLEEP)

/**
 * ak_htab_lookup_and_delete - copy the value of *@key to *@value and
 * remove the entry, in one locked step (any program type)
 * @h: the table
 * @key: a pointer to the key
 * @value: where the value goes (its type's size must be the table's)
 *
 * Return: as ak_htab_delete.
 */
#define ak_htab_lookup_and_delete(h, key, value)			\
	({								\
		struct ak_htab __arena *___ak_h = (h);			\
		typeof(key) ___ak_key = (key);				\
		typeof(value) ___ak_val = (value);			\
		unsigned long long ___ak_k[__AK_HTAB_WORDS(sizeof(*___ak_key))]; \
		unsigned long long ___ak_n = 0;				\
		int ___ak_err = -EINVAL;				\
									\
		if (sizeof(*___ak_key) == ___ak_h->key_size &&		\
		    sizeof(*___ak_val) == ___ak_h->value_size) {	\
			__ak_htab_key_load(___ak_k, ___ak_key, sizeof(*___ak_key)); \
			___ak_err = __AK_HTAB_BY_WIDTH(__ak_htab_unlink_nosleep, \
				__AK_HTAB_WORDS(sizeof(*___ak_key)),	\
				___ak_h, (const void *)___ak_k, &___ak_n); \
			if (!___ak_err) {				\
				__ak_htab_value_fetch(___ak_val,	\
					__ak_htab_value(___ak_h, (struct ak_htab_node __arena *)___ak_n), \
					sizeof(*___ak_val));		\
				___ak_err = __ak_htab_free_nosleep((void __arena *)___ak_n); \
			}						\
		}							\
		___ak_err;						\
	})

/**
 * ak_htab_lookup_copy - copy the value stored under *@key to *@value
 * (any program, and user space while BPF programs write the table)
 * @h: the table
 * @key: a pointer to the key
 * @value: where the value goes (its type's size must be the table's)
 *
 * The copy is made under the bucket's lock, which every update holds while
 * it writes a value, so it is one update's value whole, never half of two
 * (writes made through a pointer from ak_htab_lookup take no lock).
 * This is the lookup for user space reading through the mmap while BPF
 * writes: it only follows links that are current under the lock, and it
 * keeps the bucket array alive while it reads it. A reader holds the lock
 * for one chain walk; a user-space thread preempted in that window makes
 * writers of that bucket wait, and after AK_LOCK_SPINS fail with -EBUSY.
 *
 * Return: 0; -ENOENT (absent); -EINVAL (sizes); -EBUSY; -AK_EBUDGET.
 */
#define ak_htab_lookup_copy(h, key, value)				\
	({								\
		struct ak_htab __arena *___ak_h = (h);			\
		typeof(key) ___ak_key = (key);				\
		typeof(value) ___ak_val = (value);			\
		unsigned long long ___ak_k[__AK_HTAB_WORDS(sizeof(*___ak_key))]; \
		struct __ak_htab_locked ___ak_l = { .err = -EINVAL };	\
		void __arena *___ak_v;					\
									\
		if (sizeof(*___ak_key) == ___ak_h->key_size &&		\
		    sizeof(*___ak_val) == ___ak_h->value_size) {	\
			__ak_htab_key_load(___ak_k, ___ak_key, sizeof(*___ak_key)); \
			___ak_v = (void __arena *)__AK_HTAB_BY_WIDTH(__ak_htab_lookup_lock, \
				__AK_HTAB_WORDS(sizeof(*___ak_key)),	\
				___ak_h, (const void *)___ak_k, &___ak_l); \
			if (___ak_v) {					\
				__ak_htab_value_fetch(___ak_val, ___ak_v, sizeof(*___ak_val)); \
				__ak_htab_unlock(___ak_h, &___ak_l);	\
				___ak_l.err = 0;			\
			}						\
		}							\
		___ak_l.err;						\
	})

/**
 * ak_htab_count - the number of entries, in O(1)
 * @h: the table
 *
 * Return: the entries stored (a snapshot while writers run).
 */
static inline unsigned long long ak_htab_count(const struct ak_htab __arena *h)
{
	return h->count;
}

/**
 * ak_htab_reserve - keep nodes for @n more entries ready for the _nosleep
 * calls (sleepable programs)
 * @h: the table
 * @n: entries the pool should hold nodes for
 *
 * Return: as ak_alloc_reserve; -EINVAL if @h is not initialised.
 */
static inline int ak_htab_reserve(struct ak_htab __arena *h, unsigned long long n)
{
	if (!ak_read_once(h->cur))
		return -EINVAL;
	return ak_alloc_reserve(h->node_size, n);
}

/**
 * ak_htab_maintain - finish a growth in progress (any program type)
 * @h: the table
 *
 * Updates and deletes move the old buckets a few at a time; this moves the
 * rest, so lookups stop reading two arrays and the old one is freed.
 * Return: 0; -EBUSY; -AK_EBUDGET (call again: moved buckets stay moved);
 * -EINVAL if @h is not initialised (or destroyed).
 */
__ak_global int ak_htab_maintain(__arg_arena struct ak_htab __arena *h)
{
	struct __ak_htab_table __arena *old, *cur;
	unsigned long long i;
	int ret = 0;

	if (!ak_read_once(h->cur))
		return -EINVAL;
	if (!__ak_htab_mover_enter(h, &old, &cur))
		goto out;
	for (i = ak_opaque_zero(); i < old->nbuckets; i++) {
		ak_cond_break_label(cut);
		if (ak_read_once(h->old) != old)
			break;
		if (ak_read_once(old->buckets[i]) == __AK_HTAB_MOVED)
			continue;
		ret = __ak_htab_move_counted(h, old, cur, i);
		if (ret)
			goto out;
	}
	goto out;
cut:
	ret = -AK_EBUDGET;
out:
	__ak_htab_mover_leave(h, __AK_HTAB_NOSLEEP);
	return ret;
}

/**
 * ak_htab_next - the next entry of a walk over the whole table (any program)
 * @h: the table
 * @c: the walk's cursor, zeroed before the first call
 * @key: set to the entry's key (in the arena)
 * @value: set to its value
 *
 * A growth in progress is finished first. Entries come bucket by bucket;
 * a chain is walked under its bucket's lock, so the walk only follows live
 * links, in BPF and through the mmap alike. The table's generation, checked
 * after each step as well as before, says whether anything changed since
 * the walk began: a walk is complete, or says it is stale, never short.
 * Return: 0 (an entry); -ENOENT at the end (the cursor is reset);
 * -AK_EBUDGET (call again with @c); -AK_ESTALE if the table changed since
 * the walk began (the cursor is reset; ak_htab_delete_current is the one
 * change a walk may make itself); -EBUSY; -EINVAL if @h is not initialised.
 */
__ak_global int ak_htab_next(__arg_arena struct ak_htab __arena *h,
			     __ak_nonnull struct ak_htab_cursor *c,
			     __ak_nonnull void __arena **key,
			     __ak_nonnull void __arena **value)
{
	struct __ak_htab_table __arena *t;
	struct ak_htab_node __arena *node;
	unsigned long long __arena *bucket;
	unsigned long long b, k;
	int err, fresh;

	err = ak_htab_maintain(h);
	if (err)
		return err;
	/*
	 * Held before h->cur is read: a growth that begins and ends during
	 * the walk moves the generation (the walk is stale), but cannot free
	 * the array this step reads and locks buckets of.
	 */
	__ak_htab_hold(h);
	fresh = !c->htab;
	/* The generation before the array: a growth after it makes the walk stale. */
	if (__ak_htab_cursor_begin(h, c))
		goto stale;
	t = ak_read_once(h->cur);
	if (ak_read_once(h->old)) {
		if (fresh)
			__ak_htab_cursor_reset(c);	/* not begun: the next call begins */
		err = -EBUSY;
		goto out;
	}
	for (b = c->bucket + ak_opaque_zero(); b < t->nbuckets; b++) {
		ak_cond_break_label(cut);
		bucket = &t->buckets[b];
		/* An empty bucket that fills meanwhile moves the generation. */
		if (!ak_read_once(*bucket)) {
			c->skip = 0;
			continue;
		}
		err = ak_bit_lock_acquire(bucket);
		if (err) {
			c->bucket = b;
			goto out;
		}
		node = __ak_htab_node_of(*bucket);
		for (k = ak_opaque_zero(); node && k < c->skip; k++) {
			ak_cond_break_label(cut_locked);
			node = node->next;
		}
		ak_bit_lock_release(bucket);
		if (node) {
			/*
			 * The generation is read last: an entry returned was in
			 * the table, unchanged, after every other step of the call.
			 */
			__ak_htab_mover_leave(h, __AK_HTAB_NOSLEEP);
			if (c->gen != ak_read_once(h->gen))
				goto stale_left;
			c->bucket = b;
			c->skip = k + 1;
			*key = (void __arena *)node->data;
			*value = __ak_htab_value(h, node);
			return 0;
		}
		if (c->gen != ak_read_once(h->gen))
			goto stale;
		c->skip = 0;
	}
	if (c->gen != ak_read_once(h->gen))
		goto stale;
	__ak_htab_cursor_reset(c);
	err = -ENOENT;
	goto out;
cut_locked:
	ak_bit_lock_release(bucket);
cut:
	c->bucket = b;
	err = -AK_EBUDGET;
	goto out;
stale:
	__ak_htab_mover_leave(h, __AK_HTAB_NOSLEEP);
stale_left:
	__ak_htab_cursor_reset(c);
	return -AK_ESTALE;
out:
	__ak_htab_mover_leave(h, __AK_HTAB_NOSLEEP);
	return err;
}

/**
 * ak_htab_delete_current - remove the entry ak_htab_next returned last, and
 * keep the walk going (any program type)
 * @h: the table
 * @c: the walk's cursor
 *
 * The entry is found again under its bucket's lock, and the walk goes on
 * only if this delete was the table's one change since the walk's last
 * step: a change another CPU made meanwhile makes the next ak_htab_next
 * -AK_ESTALE, never a skipped or repeated entry.
 * Return: 0; -AK_ESTALE (the table changed: nothing deleted, the cursor is
 * reset); -EBUSY; -AK_EBUDGET; -EINVAL if @h is not initialised.
 */
__ak_global int ak_htab_delete_current(__arg_arena struct ak_htab __arena *h,
				       __ak_nonnull struct ak_htab_cursor *c)
{
	struct __ak_htab_table __arena *t;
	struct ak_htab_node __arena *node;
	unsigned long long __arena *bucket;
	unsigned long long __arena *link;
	unsigned long long k, gen;
	int err;

	if (!ak_read_once(h->cur))
		return -EINVAL;
	if (c->htab != h || !c->skip)
		goto stale;
	/* Held before h->cur is read, as in ak_htab_next: the array outlives the lock. */
	__ak_htab_hold(h);
	t = ak_read_once(h->cur);
	bucket = &t->buckets[c->bucket & (t->nbuckets - 1)];
	err = ak_bit_lock_acquire(bucket);
	if (err)
		goto out;
	/* Under the lock this chain holds still; the generation says the rest did. */
	if (c->gen != ak_read_once(h->gen) || ak_read_once(h->cur) != t) {
		ak_bit_lock_release(bucket);
		goto stale_held;
	}
	link = bucket;
	node = __ak_htab_node_of(*bucket);
	for (k = ak_opaque_zero(); node && k + 1 < c->skip; k++) {
		ak_cond_break_label(cut);
		link = (unsigned long long __arena *)&node->next;
		node = node->next;
	}
	if (!node) {
		ak_bit_lock_release(bucket);
		goto stale_held;
	}
	gen = __ak_htab_unlink_at(h, bucket, link, node);
	ak_bit_lock_release(bucket);
	__ak_htab_mover_leave(h, __AK_HTAB_NOSLEEP);
	c->skip--;
	/* Only this delete since the walk's last step: the walk goes on. */
	if (gen == c->gen)
		c->gen = gen + 1;
	return ak_free_nosleep(node);
cut:
	ak_bit_lock_release(bucket);
	err = -AK_EBUDGET;
out:
	__ak_htab_mover_leave(h, __AK_HTAB_NOSLEEP);
	return err;
stale_held:
	__ak_htab_mover_leave(h, __AK_HTAB_NOSLEEP);
stale:
	__ak_htab_cursor_reset(c);
	return -AK_ESTALE;
}

#ifndef __BPF__
/* ak_htab_next_copy's body: @ks and @vs are the table's sizes, checked. */
static inline int __ak_htab_next_copy(struct ak_htab *h, struct ak_htab_cursor *c, void *key,
				      unsigned long long ks, void *value,
				      unsigned long long vs)
{
	struct __ak_htab_table *t;
	struct ak_htab_node *node = 0;
	unsigned long long *bucket, b, k;
	int err = 0;

	if (__ak_htab_cursor_begin(h, c))
		goto stale;
	/* Held before h->old is read: the array read below is not freed under us. */
	__ak_htab_hold(h);
	t = ak_read_once(h->cur);
	if (ak_read_once(h->old)) {
		err = -EBUSY;	/* a growth: BPF's next update or maintain moves it on */
		goto out;
	}
	for (b = c->bucket; b < t->nbuckets; b++, c->skip = 0) {
		bucket = &t->buckets[b];
		if (!ak_read_once(*bucket))
			continue;	/* one that fills meanwhile moves the generation */
		err = ak_bit_lock_acquire(bucket);
		if (err) {
			c->bucket = b;
			goto out;
		}
		node = __ak_htab_node_of(*bucket);
		for (k = 0; node && k < c->skip; k++)
			node = node->next;
		if (node) {
			__builtin_memcpy(key, node->data, ks);
			__builtin_memcpy(value, __ak_htab_value(h, node), vs);
		}
		ak_bit_lock_release(bucket);
		if (c->gen != ak_read_once(h->gen))
			break;
		if (node) {
			c->bucket = b;
			c->skip = k + 1;
			goto out;
		}
	}
	__ak_htab_unhold(h);
	if (c->gen != ak_read_once(h->gen))
		goto stale;
	__ak_htab_cursor_reset(c);
	return -ENOENT;
out:
	__ak_htab_unhold(h);
	return err;
stale:
	__ak_htab_cursor_reset(c);
	return -AK_ESTALE;
}

/**
 * ak_htab_next_copy - the next entry of a walk, copied (user space, through
 * the arena's mmap, while BPF programs write the table)
 * @h: the table
 * @c: the walk's cursor, zeroed before the first call
 * @key: where the entry's key is copied (its type's size: the table's)
 * @value: where its value is copied (its type's size: the table's)
 *
 * The loader's walk, as bpf_map_get_next_key is for a map. Each call holds
 * the table's bucket array (as ak_htab_lookup_copy does) and copies one
 * entry under its bucket's lock, so it never follows a link a writer has
 * changed nor reads memory given back; nothing is held between calls. It
 * needs no allocator and moves nothing: while a growth is in progress it
 * answers -EBUSY (a BPF program's next update, or ak_htab_maintain, moves
 * the growth on). The generation, checked after each step, says whether
 * the table changed since the walk began: a walk is complete, or says it
 * is stale, never short or doubled.
 *
 * Return: 0 (an entry copied); -ENOENT at the end (the cursor is reset);
 * -AK_ESTALE if the table changed since the walk began (the cursor is
 * reset: begin again); -EBUSY (a lock stayed busy, or a growth is in
 * progress: call again); -EINVAL (sizes, or a table not initialised).
 */
#define ak_htab_next_copy(h, c, key, value)				\
	({								\
		struct ak_htab *___ak_nh = (h);				\
		struct ak_htab_cursor *___ak_nc = (c);			\
		typeof(key) ___ak_nkey = (key);				\
		typeof(value) ___ak_nval = (value);			\
		int ___ak_nerr = -EINVAL;				\
									\
		if (sizeof(*___ak_nkey) == ___ak_nh->key_size &&	\
		    sizeof(*___ak_nval) == ___ak_nh->value_size &&	\
		    ak_read_once(___ak_nh->cur))			\
			___ak_nerr = __ak_htab_next_copy(___ak_nh, ___ak_nc, ___ak_nkey, \
				sizeof(*___ak_nkey), ___ak_nval, sizeof(*___ak_nval)); \
		___ak_nerr;						\
	})
#endif /* !__BPF__ */

/**
 * ak_htab_clear - remove every entry and give every node back (sleepable)
 * @h: the table
 *
 * Entries go one at a time, bucket by bucket: a reader meanwhile may see
 * any part of them gone, and an entry added meanwhile may stay. The table
 * does not grow while this runs (a growth in progress is finished first).
 * Return: 0; -EBUSY; -AK_EBUDGET (call again: what was removed stays so);
 * -EINVAL if @h is not initialised (or destroyed).
 */
__ak_global int ak_htab_clear(__arg_arena struct ak_htab __arena *h)
{
	struct __ak_htab_table __arena *t;
	struct ak_htab_node __arena *node;
	unsigned long long __arena *bucket;
	unsigned long long b;
	int err;

	if (!ak_read_once(h->cur))
		return -EINVAL;
	/*
	 * The grow lock keeps h->cur the array walked here: no growth can
	 * begin, so none can move its buckets or free it under this walk.
	 */
	err = ak_lock_acquire(&h->grow_lock);
	if (err)
		return err;
	err = ak_htab_maintain(h);
	if (err)
		goto out;
	t = ak_read_once(h->cur);
	for (b = ak_opaque_zero(); b < t->nbuckets; b++) {
		bucket = &t->buckets[b];
		while (ak_read_once(*bucket)) {
			ak_cond_break_label(cut);
			err = ak_bit_lock_acquire(bucket);
			if (err)
				goto out;
			node = __ak_htab_node_of(*bucket);
			if (node)
				__ak_htab_unlink_at(h, bucket, bucket, node);
			ak_bit_lock_release(bucket);
			if (node)
				ak_free(node);
		}
		ak_cond_break_label(cut);
	}
	goto out;
cut:
	err = -AK_EBUDGET;
out:
	ak_lock_release(&h->grow_lock);
	return err;
}

/**
 * ak_htab_destroy - clear @h and free its buckets (sleepable)
 * @h: the table, which no other program or thread uses any more;
 *	ak_htab_init makes it usable again
 *
 * Its sizes are cleared too, so every later call on it fails with -EINVAL
 * and writes nothing, until ak_htab_init.
 * Return: as ak_htab_clear.
 */
__ak_global int ak_htab_destroy(__arg_arena struct ak_htab __arena *h)
{
	struct __ak_htab_table __arena *cur;
	int err = ak_htab_clear(h);

	if (err)
		return err;
	cur = ak_xchg(&h->cur, 0);
	ak_free(cur);
	ak_free(ak_xchg(&h->retired, 0));
	h->key_size = 0;
	h->value_size = 0;
	ak_arena_store_barrier();
	h->movers = 0;
	h->gen++;
	return 0;
}

/*
 * Whole-table walks in one program run, in chunks as list.h's _all walks:
 * each chunk a global function call with a loop budget of its own. A walk
 * that found more nodes than the table counts (checked between chunks) is
 * going round a cycle, or the count is wrong: -ELOOP. None takes more than
 * AK_HTAB_MAX_NODES steps. As there, a run holds its CPU for the whole
 * walk: see list.h.
 */
/**
 * ak_htab_check_all - check every chain of @h, in one call (any program)
 * @h: the table, which no program changes meanwhile
 * @bad: set to the first node found in a chain its hash does not lead to,
 *	or NULL (may be NULL)
 *
 * Every node must be in the bucket its hash selects, and the nodes must
 * number ak_htab_count(@h).
 *
 * A growth in progress is finished first (ak_htab_maintain).
 *
 * Return: 0 if the table is sound; -EINVAL if not (*@bad names the node,
 * or is NULL when the count is wrong); -ELOOP if the chains held more
 * nodes than the count past a chunk's end (a cycle, or a count too small);
 * -AK_ESTALE if the table changed
 * meanwhile; -EBUSY or -AK_EBUDGET as ak_htab_maintain, or if the
 * caller's own budget ran out between chunks.
 */
static inline int ak_htab_check_all(struct ak_htab __arena *h, struct ak_htab_node __arena **bad)
{
	struct __ak_htab_check c = {};
	int err = ak_htab_maintain(h);	/* a growth in progress is finished first */

	if (bad)
		*bad = 0;
	if (err)
		return err;
	c.gen = h->gen;
	/* Past the count, a chain goes round (or the count is wrong). */
	err = __ak_walk_all(__ak_htab_check_chunk(h, &c), c.steps, __ak_htab_max_steps(h));
	if (bad)
		*bad = (struct ak_htab_node __arena *)c.bad;
	return err;
}

/**
 * AK_HTAB_DEFINE_EACH_ALL - define a whole walk that calls @fn for every entry
 * @name: the walk: long long name(struct ak_htab __arena *h, void __arena *ctx)
 * @fn: long long fn(void __arena *key, void __arena *value, void __arena *ctx),
 *	called for each entry, bucket by bucket: 0 goes on; anything else (a
 *	positive value, told from the walk's errors) stops the walk and is
 *	returned
 *
 * As list.h's AK_LIST_DEFINE_EACH_ALL: name##_chunk, a global function with
 * a loop budget of its own, walks with ak_htab_next until its budget ends;
 * name() calls it until the table ends, in one program run. @ctx is arena
 * memory (may be NULL). @fn must not change the table. A walk that visited
 * more entries than the table counts is going round a cycle: -ELOOP.
 *
 * Return (name): 0 when @fn saw every entry; @fn's value if it stopped the
 * walk; -ELOOP; -AK_ESTALE (the table changed meanwhile); -EBUSY; or
 * -AK_EBUDGET if the caller's own budget ran out between chunks.
 */
#define AK_HTAB_DEFINE_EACH_ALL(name, fn)					\
__ak_global long long name##_chunk(__arg_arena struct ak_htab __arena *h,	\
				   __ak_nonnull struct ak_htab_cursor *cursor,	\
				   __ak_nonnull unsigned long long *seen,	\
				   __arg_arena void __arena *ctx)		\
{									\
	void __arena *key;						\
	void __arena *value;						\
	long long ret;							\
	int err;							\
									\
	for (;;) {							\
		err = ak_htab_next(h, cursor, &key, &value);		\
		if (err)						\
			return err == -ENOENT ? 0 : err;		\
		++*seen;						\
		ret = fn(key, value, ctx);				\
		if (ret) {						\
			__ak_htab_cursor_reset(cursor);			\
			return ret;					\
		}							\
		if (!ak_can_loop)					\
			return -AK_EBUDGET;				\
	}								\
}									\
									\
static inline long long name(struct ak_htab __arena *h, void __arena *ctx)	\
{									\
	struct ak_htab_cursor cursor = {};				\
	unsigned long long seen = 0;					\
									\
	return __ak_walk_all(name##_chunk(h, &cursor, &seen, ctx), seen,	\
			     __ak_htab_max_steps(h));			\
}

#endif /* __ARENAKIT_HTAB_H */
