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
 * What a key may be, and what it costs. A key of up to 64 bytes is any
 * type: the call copies it to its own stack, zero-padded to whole words.
 * A longer one (a command and a path: up to 256 bytes) is taken where it
 * is, so its type must be whole 8-byte words and 8-byte aligned
 * (__attribute__((aligned(8))); the build says so otherwise), and it is
 * best kept in a map value or a global, not on the stack, which a call
 * chain shares at 512 bytes. A call hashes and compares the key's words
 * only: one multiply and one compare a word, the table's functions made
 * once per key width, so a short key's call is the same instructions
 * whether long keys exist or not.
 *
 *	struct ak_htab __arena_global flows;
 *	ak_htab_init(&flows, sizeof(struct flow_key), sizeof(__u64), 1024); (sleepable)
 *	val = ak_htab_lookup(&flows, &key, &err);	NULL: err is -ENOENT, ...
 *	err = ak_htab_update(&flows, &key, &one, AK_HTAB_NOEXIST);
 *
 * Buckets are one word each, like the kernel's hlist_bl: the first node's
 * address with bit 0 as the bucket's lock (lock.h's bit lock), so bucket
 * memory is 8 bytes and writers on different buckets never contend.
 *
 * The hash is Thorup's pair-multiply-shift, a universal family: one
 * multiply per 8 key bytes, with random multipliers of each bucket array
 * (bpf_get_prandom_u32 in BPF, getrandom in user space, drawn when the
 * array is made), the bucket taken from the hash's top bits
 * (htab_impl_key.h). For two keys chosen without knowledge of the seeds,
 * the chance they share a bucket is at most 2 / buckets. And the table
 * reseeds, as the kernel's rhashtable does: an insert that finds its chain
 * longer than AK_HTAB_CHAIN_MAX (and longer than the load explains) has
 * the table rehash its entries under new seeds, through the same
 * migration as growth. h->reseeds counts the reseeds begun.
 *
 * Threat model. BPF_MAP_TYPE_HASH hashes with jhash and a random seed
 * drawn once, and never reseeds; SipHash (which this table used before) is
 * a pseudorandom function: without its key, no one can tell which keys
 * collide, even from many hashes. Pair-multiply-shift is neither: it is
 * universal, so an attacker who chooses keys without seeing anything that
 * depends on the seeds gets chains as short as random keys give (expected
 * length at most 1 + 2 x the load); but it is not a PRF, and one who can
 * time lookups (or otherwise observe collisions) can learn which of its
 * keys collide, and from few such observations, more. Against that one the
 * table does not keep a long chain: past AK_HTAB_CHAIN_MAX nodes, it
 * reseeds, and what was learnt is void. What that costs the table: an
 * array of its size (taken by a sleepable update; a table only
 * non-sleepable programs write reseeds at the next ak_htab_reserve), and
 * every entry moved once, a few buckets per write (as growth), with
 * lookups hashing twice while it runs. What bounds it: one migration at a
 * time, so reseeds come at most once per nbuckets / (AK_HTAB_MIGRATE_STEP
 * + 1) writes; until the next reseed ends, a chain may grow past the bound
 * (every lookup and insert walk stays bounded by may_goto, -AK_EBUDGET);
 * and a chain only the load makes long (a table stopped at
 * AK_HTAB_MAX_BUCKETS and filled on) asks for none. SipHash is not kept as
 * an option: it cost most of a lookup's instructions, and with reseeding,
 * what it adds is only against an attacker who observes timings, whom the
 * reseed already answers (rhashtable reseeds jhash for the same reason).
 *
 * Growth: the bucket count (a power of two) doubles when the entries pass
 * 3/4 of it, incrementally: the new array is allocated by a sleepable
 * update, then every update or delete, in any program, moves
 * AK_HTAB_MIGRATE_STEP old buckets, ak_htab_maintain moves the rest, and
 * the old array is freed once its last bucket is moved and no caller holds
 * it (htab_impl_table.h says how). Chosen over growing in one step because
 * moving a million entries in one call would spend most of a frame's budget
 * and stall every writer, and because non-sleepable programs can do the
 * moving (it needs no allocation). A reseed is the same migration into an
 * array of the same size (or twice, if growth is due too) with new seeds,
 * each node's hash computed again as it moves.
 *
 * Concurrency: writers lock the bucket (bounded wait: -EBUSY). What a
 * reader racing writers may observe:
 *  - ak_htab_lookup (BPF) takes no lock. A key present for the whole lookup
 *    is found, during growth too: a lookup that misses while the table
 *    changed (its generation moved) tries again, and after
 *    AK_HTAB_LOOKUP_TRIES looks under the bucket's lock. A key inserted or
 *    deleted meanwhile may or may not be seen. A lock-free reader trusts
 *    nothing it read until it re-validated: a hit, as a miss, is answered
 *    only if the table's generation did not move during the lookup (every
 *    free of a node or array moves it first), so the address returned was
 *    the key's entry at a moment inside the call, never bytes another
 *    table or object took meanwhile. A node is fully written before it is
 *    linked, so no half-made entry is ever seen; but a value updated in
 *    place can be read half old, half new (as with BPF_MAP_TYPE_HASH
 *    without a spin lock), and the value pointer may outlive its entry (a
 *    concurrent delete frees it, and anyone may take the block): it stays
 *    arena memory, so reading it never faults, but it may read reused
 *    bytes, and a write through it (an increment) racing a delete of the
 *    key may land in another owner's object. The library never writes
 *    through such an address.
 *  - ak_htab_lookup_copy (BPF or user space) copies the value under the
 *    bucket's lock: whole, as one update wrote it.
 *  - User space through the mmap: ak_htab_lookup_copy, and
 *    ak_htab_next_copy (htab_user.h) to walk the table. Neither needs the
 *    allocator, so a loader links without it. The lock-free ak_htab_lookup
 *    is for a table no program writes at the time: racing a delete, it can
 *    follow a freed node's link into reused bytes, which a BPF load
 *    survives (a fault reads 0) and a user-space load need not.
 * The memory order each path relies on is argued in htab_impl.h, in the
 * kernel memory model's terms: a miss from ak_htab_lookup and a complete
 * ak_htab_next walk hold on CPUs whose loads may pass loads (arm64) as on
 * x86-64; the lookup's ordering costs no instruction on x86-64.
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
 * Where things are: htab_types.h, the structures (what a loader or a
 * skeleton includes for the layout); this header, the calls, in this order:
 * ak_htab_init, the calls on one key, count, reserve and maintain, the
 * walk, clear and destroy, the whole-table walks; htab_impl.h, their
 * bodies (internal, included at the end of this one); htab_user.h, the
 * loader's copying walk.
 */
#ifndef __ARENAKIT_HTAB_H
#define __ARENAKIT_HTAB_H

#include <arenakit/alloc.h>
#include <arenakit/htab_types.h>

#define AK_HTAB_MAX_KEY 256
_Static_assert(AK_HTAB_MAX_KEY == 8 * __AK_HTAB_MAX_KEY_WORDS, "the live cursor holds a key");
/*
 * AK_HTAB_PROG_MAX_KEY: the largest key this program's calls take, in bytes
 * (1..AK_HTAB_MAX_KEY, a number the preprocessor reads). Define it before
 * including this header when the program's keys are short: the table
 * functions come in one global version per 8 bytes of key, and a global
 * function is compiled whether a call reaches it or not: all 32 versions
 * (the default) are most of the build time of a BPF object that uses a
 * table, where 8-byte keys need one. A call with a longer key fails to
 * compile and names it. Tables themselves know nothing of it: a table made with longer
 * keys elsewhere is only out of this program's reach.
 */
#ifndef AK_HTAB_PROG_MAX_KEY
#define AK_HTAB_PROG_MAX_KEY AK_HTAB_MAX_KEY
#endif
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
/* Old buckets an update or delete moves while the table grows or reseeds. */
#define AK_HTAB_MIGRATE_STEP 4
/*
 * The longest chain an insert accepts before the table reseeds (plus twice
 * the load: __ak_htab_chain_too_long), as rhashtable's elasticity.
 */
#define AK_HTAB_CHAIN_MAX 16
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

/* ak_htab_set_limit's flag: at the limit, evict instead of refusing. */
#define AK_HTAB_LRU 1U
/* Marked entries an eviction clears before it takes any (__ak_htab_evict). */
#define AK_HTAB_EVICT_SCAN 16

/* Update flags, as BPF_ANY, BPF_NOEXIST and BPF_EXIST. */
#define AK_HTAB_ANY 0
#define AK_HTAB_NOEXIST 1
#define AK_HTAB_EXIST 2

/**
 * ak_htab_init - make @h an empty table (sleepable programs, or user space)
 * @h: the table, in the arena (an __arena_global, or from ak_alloc)
 * @key_size: bytes per key, 1..AK_HTAB_MAX_KEY (over 64: whole words, and
 *	the key type 8-byte aligned)
 * @value_size: bytes per value, 1..AK_HTAB_MAX_VALUE (a set stores a
 *	value too: a byte will do)
 * @buckets: the initial bucket count (rounded up to a power of two, at
 *	least AK_HTAB_MIN_BUCKETS, at most AK_HTAB_MAX_BUCKETS); size it
 *	for the expected entries / 0.75 and the table never has to grow
 *
 * Return: 0, -EINVAL for sizes out of range, -ENOMEM, -EBUSY.
 */
static inline int ak_htab_init(struct ak_htab __arena *h, unsigned int key_size,
			       unsigned int value_size, unsigned long long buckets);

/**
 * ak_htab_set_limit - hold @h to @max_entries entries, as BPF maps'
 * max_entries (any program, or user space; before the table is used)
 * @h: the table, initialised and empty
 * @max_entries: the most entries; 0: no limit (the default)
 * @flags: 0: an insert past the limit fails with -E2BIG, as in a
 *	BPF_MAP_TYPE_HASH, and h->refused counts it; AK_HTAB_LRU: it evicts
 *	an entry not used lately instead, as a BPF_MAP_TYPE_LRU_HASH, and
 *	h->evicted counts it (-E2BIG only if no entry could be had;
 *	-AK_EBUDGET if the budget cut the search for one: call again)
 *
 * The limit is exact however many CPUs insert at once: an insert counts
 * itself in before it checks. An LRU table's eviction is CLOCK, the
 * second-chance approximation of LRU: each entry has a mark, set by a use
 * (an update, ak_htab_lookup_or_init of a key present, ak_htab_touch; not
 * a plain ak_htab_lookup, which stays a read) and cleared as the
 * eviction's hand passes it; a new entry starts unmarked, as the kernel's
 * LRU map lists it inactive. The hand takes the first unmarked entry
 * (past AK_HTAB_EVICT_SCAN marked ones, the next one), passing by buckets
 * others hold, and the new entry takes the evicted one's node (no
 * allocation).
 * An LRU table's nodes are a word longer (the mark), so set AK_HTAB_LRU
 * on an empty table, before ak_htab_reserve; size its buckets for
 * @max_entries at ak_htab_init, so that it never grows.
 *
 * Return: 0; -EINVAL if @h is not initialised, for unknown @flags, for
 * AK_HTAB_LRU with no limit, or to take AK_HTAB_LRU back; -EBUSY for
 * AK_HTAB_LRU on a table that is not empty.
 */
static inline int ak_htab_set_limit(struct ak_htab __arena *h, unsigned long long max_entries,
				    unsigned int flags);

/**
 * ak_htab_touch - count a use of the entry whose value is at @value (an
 * LRU table: its entries used lately are the last to be evicted)
 * @h: the table
 * @value: what ak_htab_lookup returned (NULL: nothing to do)
 *
 * No store if the mark is set already, nothing in a table without
 * AK_HTAB_LRU. The mark is set under the entry's bucket lock, and only if
 * @value is still an entry of @h (a delete may have freed it since the
 * lookup): a use that meets a held bucket is not counted. Any program.
 */
#define ak_htab_touch(h, value) __ak_htab_mark_unheld(h, (void __arena *)(value))

/**
 * ak_htab_lookup - the value stored under *@key, or NULL (any program)
 * @h: the table
 * @key: a pointer to the key (its type's size must be the table's key size)
 * @err: on NULL, set to -ENOENT (absent), -EINVAL (wrong key size),
 *	-AK_EBUDGET or -EBUSY (may be NULL)
 *
 * Return: the address of the value in the arena, or NULL.
 */
#define ak_htab_lookup(h, key, err)					\
	__ak_htab_lookup_key(h, key, err)

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
 * (sizes, flags); -E2BIG (a new entry past ak_htab_set_limit's limit);
 * -ENOMEM; -EBUSY (a bucket lock stayed busy); -AK_EBUDGET.
 */
#define ak_htab_update(h, key, value, flags)			\
	__ak_htab_update(h, key, value, flags, sleepable)

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
 * Return: as ak_htab_update.
 */
#define ak_htab_update_nosleep(h, key, value, flags)		\
	__ak_htab_update(h, key, value, flags, nosleep)

/**
 * ak_htab_lookup_or_init - the value stored under *@key, or a new entry's
 * holding *@init (any program)
 * @h: the table
 * @key: a pointer to the key (its type's size must be the table's key size)
 * @init: a pointer to the value a new entry starts with (the table's size)
 * @err: on NULL, set to -EINVAL (sizes), -ENOMEM (the pool is empty: see
 *	ak_htab_reserve), -E2BIG (the table is at its limit and takes no new
 *	entry), -EBUSY or -AK_EBUDGET (may be NULL)
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
 * Return: the address of the entry's value in the arena, or NULL.
 */
#define ak_htab_lookup_or_init(h, key, init, err)			\
	__ak_htab_lookup_or_init_key(h, key, init, err)

/**
 * ak_htab_delete - remove *@key (sleepable programs: the node's memory may
 * go back to the kernel)
 * @h: the table
 * @key: a pointer to the key
 *
 * Return: 0, -ENOENT, -EINVAL, -EBUSY, -AK_EBUDGET.
 */
#define ak_htab_delete(h, key) __ak_htab_delete_key(h, key, sleepable)
/* ak_htab_delete from any program type. */
#define ak_htab_delete_nosleep(h, key) __ak_htab_delete_key(h, key, nosleep)

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
	__ak_htab_lookup_and_delete_key(h, key, value)

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
	__ak_htab_lookup_copy_key(h, key, value)

/**
 * ak_htab_count - the number of entries, in O(1)
 * @h: the table
 *
 * Return: the entries stored (a snapshot while writers run).
 */
static inline unsigned long long ak_htab_count(const struct ak_htab __arena *h);

/**
 * ak_htab_reserve - keep nodes for @n more entries ready for the _nosleep
 * calls (sleepable programs)
 * @h: the table
 * @n: entries the pool should hold nodes for
 *
 * Also starts the reseed a non-sleepable insert asked for (htab.h), which
 * only a sleepable call can allocate for.
 * Return: as ak_alloc_reserve; -EINVAL if @h is not initialised.
 */
static inline int ak_htab_reserve(struct ak_htab __arena *h, unsigned long long n);

/**
 * ak_htab_maintain - finish a growth or reseed in progress (any program type)
 * @h: the table
 *
 * Updates and deletes move the old buckets a few at a time; this moves the
 * rest, so lookups stop reading two arrays and the old one is freed. It
 * starts none (it may not allocate an array).
 * Return: 0; -EBUSY; -AK_EBUDGET (call again: moved buckets stay moved);
 * -EINVAL if @h is not initialised (or destroyed).
 */
__ak_global int ak_htab_maintain(__arg_arena struct ak_htab __arena *h);

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
			     __ak_nonnull void __arena **value);

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
				       __ak_nonnull struct ak_htab_cursor *c);

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
__ak_global int ak_htab_clear(__arg_arena struct ak_htab __arena *h);

/**
 * ak_htab_destroy - clear @h and free its buckets (sleepable)
 * @h: the table, which no other program or thread uses any more;
 *	ak_htab_init makes it usable again
 *
 * Its sizes are cleared too, so every later call on it fails with -EINVAL
 * and writes nothing, until ak_htab_init.
 * Return: as ak_htab_clear.
 */
__ak_global int ak_htab_destroy(__arg_arena struct ak_htab __arena *h);

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
 * @bad: set to the first node found whose hash is not its key's, or in a
 *	chain its hash does not lead to, or NULL (may be NULL)
 *
 * Every node must hold its key's hash under the current seeds and be in
 * the bucket that hash selects, and the nodes must number
 * ak_htab_count(@h).
 *
 * A growth in progress is finished first (ak_htab_maintain).
 *
 * Return: 0 if the table is sound; -EINVAL if not (*@bad names the node,
 * or is NULL when the count is wrong); -ELOOP if the chains held more
 * nodes than the count past a chunk's end (a cycle, or a count too small);
 * -AK_ESTALE if the table changed meanwhile; -EBUSY or -AK_EBUDGET as
 * ak_htab_maintain, or if the caller's own budget ran out between chunks.
 */
static inline int ak_htab_check_all(struct ak_htab __arena *h,
				    struct ak_htab_node __arena **bad);

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
#define AK_HTAB_DEFINE_EACH_ALL(name, fn)				\
	__AK_HTAB_DEFINE_EACH_ALL(name, fn)

/* The bodies of the calls above, and their helpers: internal. */
#include <arenakit/htab_impl.h>

#endif /* __ARENAKIT_HTAB_H */
