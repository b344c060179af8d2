/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/htab_impl.h - the inside of htab.h: its bucket arrays and how a
 * table grows from one to the next, then the helpers of its calls (keys and
 * the hash, chain walks, the global functions the calls' macros call).
 * Internal: include <arenakit/htab.h>, which includes this header once the
 * table's types are defined. Nothing here is API.
 *
 * A bucket is one word: the address of its chain's first node, with bit 0
 * as the bucket's lock (__AK_HTAB_LOCKED); an old bucket whose nodes were
 * moved into the new array holds __AK_HTAB_MOVED, and one whose move was
 * cut part way (a busy lock, the loop budget) holds the rest of its chain
 * with __AK_HTAB_MOVED set: its keys are in that chain or in the new
 * array's bucket, and readers look in both. A table grows in steps
 * (htab.h says why):
 *  - __ak_htab_grow, from a sleepable update, allocates an array of twice
 *    the buckets and publishes it: h->old, then h->cur.
 *  - While h->old is set, every update and delete first moves the old
 *    bucket of its own key, then up to AK_HTAB_MIGRATE_STEP more, claimed
 *    round and round until the growth ends, so one whose lock was busy is
 *    tried again (__ak_htab_migrate); ak_htab_maintain moves the rest. A
 *    bucket is moved under its lock, node by node, into the new array's
 *    buckets (__ak_htab_move_bucket).
 *  - The mover of the last old bucket retires the old array; the last
 *    caller that may still hold it frees it (__ak_htab_moved_one says why
 *    no one can touch it then).
 *  - A writer locks the bucket its key belongs in, in the current array,
 *    only once that key's old bucket is moved (__ak_htab_lock_home); a
 *    reader looks in the old array's bucket until it is moved
 *    (__ak_htab_bucket).
 */
#ifndef __ARENAKIT_HTAB_H
#error "<arenakit/htab_impl.h> is internal: include <arenakit/htab.h>"
#elif !defined(__ARENAKIT_HTAB_IMPL_H)
#define __ARENAKIT_HTAB_IMPL_H

#define __AK_HTAB_LOCKED AK_BIT_LOCK	/* the bucket's lock bit */
/* Alone: an old bucket whose nodes are in the new array; with a chain: some are. */
#define __AK_HTAB_MOVED 2ULL

/* A bucket array: h->cur, and h->old while the table grows. */
struct __ak_htab_table {
	unsigned long long nbuckets;	/* a power of two */
	unsigned long long buckets[];	/* node address | __AK_HTAB_LOCKED, or MOVED */
};

_Static_assert(sizeof(struct __ak_htab_table) + AK_HTAB_MAX_BUCKETS * 8 <= AK_ALLOC_MAX &&
	       sizeof(struct __ak_htab_table) + AK_HTAB_MAX_BUCKETS * 16 > AK_ALLOC_MAX,
	       "AK_HTAB_MAX_BUCKETS must be the largest array one allocation holds");

/* The units of h->movers (struct ak_htab, and __ak_htab_moved_one). */
#define __AK_HTAB_RETIRED 1ULL
#define __AK_HTAB_MOVER 2ULL

/*
 * What a caller may do with memory, passed down to every helper that
 * allocates or frees: a sleepable program takes pages from the kernel and
 * gives them back (ak_alloc, ak_free); any other program uses the pool
 * only (ak_alloc_nosleep, ak_free_nosleep). Readers never free at all
 * (__ak_htab_unhold).
 */
enum __ak_htab_caller {
	__AK_HTAB_NOSLEEP,
	__AK_HTAB_SLEEPABLE,
};

/* The first node of the chain a bucket word holds, its flag bits masked off. */
static inline struct ak_htab_node __arena *__ak_htab_node_of(unsigned long long word)
{
	return (struct ak_htab_node __arena *)(word & ~(__AK_HTAB_LOCKED | __AK_HTAB_MOVED));
}

/* An array of @nbuckets empty buckets, allocated as @caller may; NULL: see *@err. */
static __ak_always_inline struct __ak_htab_table __arena *
__ak_htab_table_new(unsigned long long nbuckets, enum __ak_htab_caller caller, int *err)
{
	unsigned long long bytes = sizeof(struct __ak_htab_table) + nbuckets * 8, i;
	struct __ak_htab_table __arena *t;

	t = caller == __AK_HTAB_SLEEPABLE ? ak_alloc_err(bytes, err) :
					    ak_alloc_nosleep_err(bytes, err);
	if (!t)
		return 0;
	/* Whole pages come zeroed from the kernel; a reused block does not. */
	if (bytes <= AK_ALLOC_MAX_SMALL) {
		for (i = ak_opaque_zero(); i < nbuckets && ak_can_loop; i++)
			t->buckets[i] = 0;
		if (i < nbuckets) {
			ak_free_nosleep(t);
			*err = -AK_EBUDGET;
			return 0;
		}
	}
	t->nbuckets = nbuckets;
	return t;
}

/*
 * The bucket @hash lives in now: the old array's, unless it was moved.
 * For an old bucket, *@newer is the new array's bucket of @hash, where the
 * nodes of a partly moved one are (__AK_HTAB_MOVED set with a chain);
 * NULL otherwise.
 */
static inline unsigned long long __arena *__ak_htab_bucket(struct ak_htab __arena *h,
							    unsigned long long hash,
							    unsigned long long __arena **newer)
{
	struct __ak_htab_table __arena *cur = ak_read_once(h->cur), *old = ak_read_once(h->old);
	unsigned long long __arena *bucket;

	*newer = 0;
	if (old && old != cur) {
		bucket = &old->buckets[hash & (old->nbuckets - 1)];
		if (ak_read_once(*bucket) != __AK_HTAB_MOVED) {
			*newer = &cur->buckets[hash & (cur->nbuckets - 1)];
			return bucket;
		}
	}
	return &cur->buckets[hash & (cur->nbuckets - 1)];
}

/*
 * Move old bucket @i into the new array. Returns 1 if this call moved it,
 * 0 if it was moved already, or an error (-EBUSY, -AK_EBUDGET). A move cut
 * part way leaves __AK_HTAB_MOVED set beside the rest of the chain, so
 * readers look in the new bucket too; the next move of @i goes on from
 * there.
 */
__ak_global int __ak_htab_move_bucket(__arg_arena struct ak_htab __arena *h,
					    __arg_arena struct __ak_htab_table __arena *old,
					    __arg_arena struct __ak_htab_table __arena *cur,
					    unsigned long long i)
{
	unsigned long long __arena *from = &old->buckets[i & (old->nbuckets - 1)];
	unsigned long long __arena *to;
	struct ak_htab_node __arena *node, *next;
	int err = ak_bit_lock_acquire(from);

	if (err)
		return err;
	if (*from == (__AK_HTAB_MOVED | __AK_HTAB_LOCKED)) {
		ak_bit_lock_release(from);
		return 0;
	}
	node = __ak_htab_node_of(*from);
	/* Readers that miss while this runs see the generation move and retry. */
	ak_fetch_add(&h->gen, 1);
	while (node) {
		ak_cond_break_label(cut);
		next = node->next;
		to = &cur->buckets[node->hash & (cur->nbuckets - 1)];
		err = ak_bit_lock_acquire(to);
		if (err)
			goto stop;
		ak_write_once(node->next, __ak_htab_node_of(*to));
		ak_write_once(*to, (unsigned long long)node | __AK_HTAB_LOCKED);
		ak_bit_lock_release(to);
		node = next;
		/* What is left stays here; MOVED says the rest is in the new array. */
		ak_write_once(*from, (unsigned long long)node | __AK_HTAB_MOVED | __AK_HTAB_LOCKED);
	}
	ak_write_once(*from, __AK_HTAB_MOVED | __AK_HTAB_LOCKED);
	ak_bit_lock_release(from);
	ak_fetch_add(&h->gen, 1);
	return 1;
cut:
	err = -AK_EBUDGET;
stop:
	ak_bit_lock_release(from);
	return err;
}

/*
 * The old array's lifetime. Whoever may touch it (movers, and readers that
 * look under a bucket lock) counts itself into h->movers before it reads
 * h->old, and out when done. The mover that moves the last old bucket
 * publishes h->retired, clears h->old and only then adds
 * __AK_HTAB_RETIRED, while still counted in itself. From then on h->movers
 * holds RETIRED plus one MOVER per caller that read h->old before it was
 * cleared (a caller counted in later reads NULL and never touches the old
 * array), so the array is unheld exactly when h->movers is RETIRED: the
 * one compare-and-swap of RETIRED to 0 that succeeds owns it, and takes it
 * out of h->retired before anyone may grow again (__ak_htab_grow waits for
 * h->retired to be NULL), so it can never take a later growth's array.
 */
static inline void __ak_htab_moved_one(struct ak_htab __arena *h,
				       struct __ak_htab_table __arena *old)
{
	if (ak_fetch_add(&h->moved, 1) + 1 != old->nbuckets)
		return;
	ak_xchg(&h->retired, old);
	ak_xchg(&h->old, 0);
	ak_fetch_add(&h->gen, 1);
	ak_fetch_add(&h->movers, __AK_HTAB_RETIRED);
}

/* The retired array, if no one holds it and this caller won it; or NULL. */
static inline struct __ak_htab_table __arena *__ak_htab_take_retired(struct ak_htab __arena *h)
{
	if (ak_cmpxchg(&h->movers, __AK_HTAB_RETIRED, 0) != __AK_HTAB_RETIRED)
		return 0;
	return ak_xchg(&h->retired, 0);
}

/* Count in as a caller that may hold the old array. */
static inline void __ak_htab_hold(struct ak_htab __arena *h)
{
	ak_fetch_add(&h->movers, __AK_HTAB_MOVER);
}

/*
 * Count out; the retired array if this caller was the last holder and
 * must free it. Readers (which never free: they may have no allocator, as
 * user space reading through the mmap) call __ak_htab_unhold and leave it
 * to the next writer, maintain or growth.
 */
static inline struct __ak_htab_table __arena *__ak_htab_unhold_last(struct ak_htab __arena *h)
{
	if (ak_fetch_add(&h->movers, -__AK_HTAB_MOVER) != __AK_HTAB_MOVER + __AK_HTAB_RETIRED)
		return 0;
	return __ak_htab_take_retired(h);
}

static inline void __ak_htab_unhold(struct ak_htab __arena *h)
{
	ak_fetch_add(&h->movers, -__AK_HTAB_MOVER);
}

/* Free @retired (may be NULL) as a @caller may. */
static inline void __ak_htab_free_retired(struct __ak_htab_table __arena *retired,
					  enum __ak_htab_caller caller)
{
	if (!retired)
		return;
	if (caller == __AK_HTAB_SLEEPABLE)
		ak_free(retired);
	else
		ak_free_nosleep(retired);
}

static inline void __ak_htab_mover_leave(struct ak_htab __arena *h, enum __ak_htab_caller caller)
{
	__ak_htab_free_retired(__ak_htab_unhold_last(h), caller);
}

/* Count in as a mover; true, with the two arrays, if the table is growing. */
static inline int __ak_htab_mover_enter(struct ak_htab __arena *h,
					struct __ak_htab_table __arena **old,
					struct __ak_htab_table __arena **cur)
{
	__ak_htab_hold(h);
	*old = ak_read_once(h->old);
	*cur = ak_read_once(h->cur);
	return *old && *old != *cur;
}

/* Move old bucket @i, counting it if this call moved it: 0 or an error. */
static inline int __ak_htab_move_counted(struct ak_htab __arena *h,
					 struct __ak_htab_table __arena *old,
					 struct __ak_htab_table __arena *cur, unsigned long long i)
{
	int ret = __ak_htab_move_bucket(h, old, cur, i);

	if (ret > 0)
		__ak_htab_moved_one(h, old);
	return ret < 0 ? ret : 0;
}

/*
 * While growing: move the old bucket of @hash (so the caller works on the
 * new array only), then up to @step more. 0 or an error.
 */
static __ak_always_inline int __ak_htab_migrate_impl(struct ak_htab __arena *h,
						     unsigned long long hash, unsigned int step,
						     enum __ak_htab_caller caller)
{
	struct __ak_htab_table __arena *old, *cur;
	unsigned long long i;
	unsigned int done;
	int ret = 0;

	if (!__ak_htab_mover_enter(h, &old, &cur))
		goto out;
	ret = __ak_htab_move_counted(h, old, cur, hash);
	for (done = (unsigned int)ak_opaque_zero(); !ret && done < step && ak_can_loop; done++) {
		if (ak_read_once(h->old) != old)
			break;
		/*
		 * Claims go round: a bucket whose move failed (its lock was
		 * busy) is tried again on a later pass, so the growth ends
		 * while anyone writes, whatever keys they touch. A second
		 * pass costs a load per bucket moved already.
		 */
		i = ak_fetch_add(&h->claimed, 1) & (old->nbuckets - 1);
		if (ak_read_once(old->buckets[i]) != __AK_HTAB_MOVED)
			ret = __ak_htab_move_counted(h, old, cur, i);
	}
out:
	__ak_htab_mover_leave(h, caller);
	return ret;
}

__ak_global int __ak_htab_migrate_sleepable(__arg_arena struct ak_htab __arena *h,
						 unsigned long long hash)
{
	return __ak_htab_migrate_impl(h, hash, AK_HTAB_MIGRATE_STEP, __AK_HTAB_SLEEPABLE);
}

__ak_global int __ak_htab_migrate_nosleep(__arg_arena struct ak_htab __arena *h,
					       unsigned long long hash)
{
	return __ak_htab_migrate_impl(h, hash, AK_HTAB_MIGRATE_STEP, __AK_HTAB_NOSLEEP);
}

/*
 * Nothing to move unless growing: the common case costs three loads (the
 * old array, the current one, the holders' word). A retired array that its
 * last holder could not free (a reader) is freed here, by the next writer.
 */
static __ak_always_inline int __ak_htab_migrate(struct ak_htab __arena *h, unsigned long long hash,
						enum __ak_htab_caller caller)
{
	struct __ak_htab_table __arena *old = ak_read_once(h->old);

	if (!old || old == ak_read_once(h->cur)) {
		if (ak_read_once(h->movers) == __AK_HTAB_RETIRED)
			__ak_htab_free_retired(__ak_htab_take_retired(h), caller);
		return 0;
	}
	return caller == __AK_HTAB_SLEEPABLE ? __ak_htab_migrate_sleepable(h, hash) :
					       __ak_htab_migrate_nosleep(h, hash);
}

/*
 * Lock the bucket @hash belongs in, in the current array, after moving its
 * old bucket if the table is growing. Checked again under the lock: growth
 * may have started in between, and the key may still sit in the old array.
 */
static __ak_always_inline int __ak_htab_lock_home(struct ak_htab __arena *h,
						  unsigned long long hash,
						  enum __ak_htab_caller caller,
						  unsigned long long __arena **bucketp)
{
	struct __ak_htab_table __arena *table, *old;
	unsigned long long __arena *bucket;
	unsigned int tries;
	int err, home;

	for (tries = (unsigned int)ak_opaque_zero(); tries < AK_HTAB_LOOKUP_TRIES && ak_can_loop;
	     tries++) {
		err = __ak_htab_migrate(h, hash, caller);
		if (err)
			return err;
		/*
		 * Held from before h->cur is read until its bucket is locked:
		 * a growth that starts and ends meanwhile cannot free the
		 * array under the lock's compare-and-swap. Once locked, the
		 * array cannot be retired (its bucket cannot be moved).
		 */
		__ak_htab_hold(h);
		table = ak_read_once(h->cur);
		bucket = &table->buckets[hash & (table->nbuckets - 1)];
		err = ak_bit_lock_acquire(bucket);
		if (err) {
			__ak_htab_unhold(h);
			return err;
		}
		old = ak_read_once(h->old);
		home = ak_read_once(h->cur) == table &&
		       (!old || old == table ||
			ak_read_once(old->buckets[hash & (old->nbuckets - 1)]) == __AK_HTAB_MOVED);
		__ak_htab_unhold(h);
		if (home) {
			*bucketp = bucket;
			return 0;
		}
		ak_bit_lock_release(bucket);
	}
	return -EBUSY;
}

/*
 * Start growing if the table is loaded past 3/4 (sleepable callers). A
 * growth that finds no memory is left to a later update: the table works
 * with longer chains meanwhile.
 */
static inline void __ak_htab_grow(struct ak_htab __arena *h)
{
	struct __ak_htab_table __arena *cur = ak_read_once(h->cur), *next;
	int err;

	if (ak_read_once(h->old) ||
	    ak_read_once(h->count) * AK_HTAB_LOAD_DEN <= cur->nbuckets * AK_HTAB_LOAD_NUM ||
	    cur->nbuckets >= AK_HTAB_MAX_BUCKETS)
		return;
	if (ak_lock_try(&h->grow_lock))
		return;		/* someone else is starting it */
	/* The last growth's array, if its last holder could not free it. */
	__ak_htab_free_retired(__ak_htab_take_retired(h), __AK_HTAB_SLEEPABLE);
	if (!ak_read_once(h->old) && !ak_read_once(h->retired) && ak_read_once(h->cur) == cur) {
		next = __ak_htab_table_new(cur->nbuckets * 2, __AK_HTAB_SLEEPABLE, &err);
		if (next) {
			ak_write_once(h->claimed, 0);
			ak_write_once(h->moved, 0);
			/*
			 * old before cur, each fully ordered: a reader that
			 * sees the new cur sees old, and the new array's zeroed
			 * buckets (loads in order, as on x86-64: see htab.h's
			 * overview on memory order).
			 */
			ak_xchg(&h->old, cur);
			ak_xchg(&h->cur, next);
			ak_fetch_add(&h->gen, 1);
		}
	}
	ak_lock_release(&h->grow_lock);
}

/*
 * The calls' helpers, in the order of the calls in htab.h: keys and the
 * hash, chain walks, and the global functions the calls' macros call.
 */

/*
 * A key as the calls hand it to the table's functions: its n =
 * __AK_HTAB_WORDS(size) words, zero past its size. The macros know the
 * key's size at compile time, and the out-of-line functions come in one
 * version per word count (__AK_HTAB_BY_WIDTH), so the hash, the copies and
 * the compares run over exactly those words, unrolled; and each version
 * takes exactly n words: the verifier checks a global function's pointer
 * argument against its type's size, so the caller writes one stack word
 * for a 4-byte key, not eight. The hash is computed there, out of line,
 * not in the caller: inline, its rounds would be verified again at every
 * call site and every pass of a caller's loop (the bench's htab16 program,
 * which inserts, updates, looks up and deletes in one loop: 125,234
 * instructions with the hash inline, 60,334 without).
 */
#define __AK_HTAB_WORDS(size) (((size) + 7) / 8)

_Static_assert(AK_HTAB_MAX_KEY == 8 * __AK_SIPHASH_WORDS, "a key is at most the words SipHash reads");

/* The hash of a key of @words words @w (zero past the table's key size). */
static __ak_always_inline unsigned long long __ak_htab_hash(const struct ak_htab __arena *h,
							    const unsigned long long *w,
							    unsigned int words)
{
	unsigned int size = h->key_size;	/* the caller checked it is @words' */

#ifdef AK_HTAB_TEST_HASH
	/* Tests force collisions with their own hash. */
	return AK_HTAB_TEST_HASH(h, w, words, size);
#else
	return __ak_siphash(w, words, size, h->seed[0], h->seed[1], 1, 3);
#endif
}

/*
 * Fill @k (__AK_HTAB_WORDS(@size) words) with a caller's key of constant
 * @size, a word at a time through one 8-byte local. One memcpy from a key
 * of byte alignment (a struct of chars) is lowered by clang to all the byte
 * loads first, then the stores: for a 64-byte key, dozens of spill slots,
 * over a hundred bytes of the caller's 512-byte stack. The volatile store
 * keeps clang from merging the words back into that memcpy.
 */
#define __ak_htab_key_load(k, src, size)				\
	do {								\
		const void *___ak_ks = (src);				\
		unsigned long long ___ak_kx;				\
		unsigned int ___ak_ki;					\
									\
		_Static_assert((size) >= 1 && (size) <= AK_HTAB_MAX_KEY, \
			       "an arena hash table key is 1 to AK_HTAB_MAX_KEY bytes"); \
		__AK_UNROLL						\
		for (___ak_ki = 0; ___ak_ki < __AK_HTAB_WORDS(size); ___ak_ki++) { \
			___ak_kx = 0;					\
			if (___ak_ki * 8 + 8 <= (size))			\
				__builtin_memcpy(&___ak_kx,		\
						 (const char *)___ak_ks + ___ak_ki * 8, 8); \
			else						\
				__builtin_memcpy(&___ak_kx,		\
						 (const char *)___ak_ks + ___ak_ki * 8, \
						 (size) % 8);		\
			((volatile unsigned long long *)(k))[___ak_ki] = ___ak_kx; \
		}							\
	} while (0)

/*
 * Call the version of table function @fn for keys of @words words (a
 * compile-time constant: the others are folded away, and a program links
 * only the versions it calls).
 */
#define __AK_HTAB_BY_WIDTH(fn, words, ...)				\
	((words) == 1 ? fn##1(__VA_ARGS__) : (words) == 2 ? fn##2(__VA_ARGS__) : \
	 (words) == 3 ? fn##3(__VA_ARGS__) : (words) == 4 ? fn##4(__VA_ARGS__) : \
	 (words) == 5 ? fn##5(__VA_ARGS__) : (words) == 6 ? fn##6(__VA_ARGS__) : \
	 (words) == 7 ? fn##7(__VA_ARGS__) : fn##8(__VA_ARGS__))

static __ak_always_inline int __ak_htab_key_equal(const struct ak_htab_node __arena *node,
						  const unsigned long long *w, unsigned int words)
{
	unsigned int i;

	__AK_UNROLL
	for (i = 0; i < AK_HTAB_MAX_KEY / 8; i++) {
		if (i == words)
			return 1;
		if (node->data[i] != w[i])
			return 0;
	}
	return 1;
}

static inline void __arena *__ak_htab_value(const struct ak_htab __arena *h,
					    struct ak_htab_node __arena *node)
{
	return (void __arena *)&node->data[h->key_words];
}

/* The same, for a key of @words words known at compile time: no load. */
static __ak_always_inline void __arena *__ak_htab_value_at(struct ak_htab_node __arena *node,
							   unsigned int words)
{
	return (void __arena *)&node->data[words];
}

/*
 * Find the key @w of @words words and hash @hash in the chain of @bucket.
 * Returns 0 with *@found set (or NULL), or -AK_EBUDGET. *@link gets the
 * word that points at the node found (for unlinking), when @link is given.
 */
static __ak_always_inline int __ak_htab_chain_find(unsigned long long __arena *bucket,
						   unsigned long long hash,
						   const unsigned long long *w,
						   unsigned int words,
						   struct ak_htab_node __arena **found,
						   unsigned long long __arena **link)
{
	struct ak_htab_node __arena *node = __ak_htab_node_of(ak_read_once(*bucket));
	unsigned long long __arena *at = bucket;

	*found = 0;
	while (node) {
		ak_cond_break_label(cut);
		if (node->hash == hash && __ak_htab_key_equal(node, w, words)) {
			*found = node;
			break;
		}
		at = (unsigned long long __arena *)&node->next;
		node = ak_read_once(node->next);
	}
	if (link)
		*link = at;
	return 0;
cut:
	return -AK_EBUDGET;
}

/*
 * Find @key with its bucket locked; the caller is counted in as a mover,
 * so the bucket's array outlives the lock. Returns 0 with *@bucketp locked
 * and *@nodep the entry, or an error (-ENOENT: absent) with nothing held.
 */
static __ak_always_inline int __ak_htab_lock_find(struct ak_htab __arena *h,
						  unsigned long long hash,
						  const unsigned long long *w,
						  unsigned int words,
						  unsigned long long __arena **bucketp,
						  struct ak_htab_node __arena **nodep)
{
	unsigned long long __arena *bucket, *newer;
	unsigned int tries;
	int err = -EBUSY;

	for (tries = (unsigned int)ak_opaque_zero(); tries < AK_HTAB_LOOKUP_TRIES && ak_can_loop;
	     tries++) {
		bucket = __ak_htab_bucket(h, hash, &newer);
		err = ak_bit_lock_acquire(bucket);
		if (err)
			return err;
		if (ak_read_once(*bucket) == (__AK_HTAB_MOVED | __AK_HTAB_LOCKED)) {
			/* Moved since __ak_htab_bucket looked: look again. */
			ak_bit_lock_release(bucket);
			err = -EBUSY;
			continue;
		}
		err = __ak_htab_chain_find(bucket, hash, w, words, nodep, 0);
		if (!err && !*nodep && newer && (ak_read_once(*bucket) & __AK_HTAB_MOVED)) {
			/*
			 * Partly moved, and held still by its lock: the rest is in
			 * the new bucket (locked second, as a mover does).
			 */
			err = ak_bit_lock_acquire(newer);
			ak_bit_lock_release(bucket);
			if (err)
				return err;
			bucket = newer;
			err = __ak_htab_chain_find(bucket, hash, w, words, nodep, 0);
		}
		if (!err && !*nodep)
			err = -ENOENT;
		if (err) {
			ak_bit_lock_release(bucket);
			return err;
		}
		*bucketp = bucket;
		return 0;
	}
	return err;
}

/* Look the key @w of @words words up. */
static __ak_always_inline void __arena *__ak_htab_lookup_impl(struct ak_htab __arena *h,
							      const unsigned long long *w,
							      unsigned int words, int *errp)
{
	unsigned long long hash = __ak_htab_hash(h, w, words), gen, head;
	unsigned long long __arena *bucket, *newer;
	/* Its own variable: a may_goto exit must not store an unset bucket. */
	unsigned long long __arena *locked = 0;
	struct ak_htab_node __arena *node;
	unsigned int tries;
	int err = 0;

	if (!ak_read_once(h->cur)) {
		err = -EINVAL;
		goto fail;
	}
	/*
	 * Lock-free first. A miss is the answer only if nothing could have
	 * led the walk astray: the generation did not move (no node it passed
	 * was freed) and the bucket was unlocked and is unchanged (a mover
	 * relinks the nodes of the locked bucket it moves, and a reader that
	 * follows a moved node ends in another chain).
	 */
	for (tries = (unsigned int)ak_opaque_zero(); tries < AK_HTAB_LOOKUP_TRIES && ak_can_loop;
	     tries++) {
		gen = ak_read_once(h->gen);
		bucket = __ak_htab_bucket(h, hash, &newer);
		head = ak_read_once(*bucket);
		err = __ak_htab_chain_find(bucket, hash, w, words, &node, 0);
		/* A partly moved old bucket: the rest is in the new one. */
		if (!err && !node && newer && (head & __AK_HTAB_MOVED))
			err = __ak_htab_chain_find(newer, hash, w, words, &node, 0);
		if (err)
			goto fail;
		if (node)
			return __ak_htab_value_at(node, words);
		if (!(head & (__AK_HTAB_LOCKED | __AK_HTAB_MOVED)) &&
		    ak_read_once(*bucket) == head && ak_read_once(h->gen) == gen)
			goto fail_noent;
	}
	/*
	 * The table kept changing: look under the bucket's lock, held so that
	 * an old array is not freed while its bucket is locked.
	 */
	__ak_htab_hold(h);
	err = __ak_htab_lock_find(h, hash, w, words, &locked, &node);
	if (!err)
		ak_bit_lock_release(locked);
	__ak_htab_unhold(h);
	if (err)
		goto fail;
	return __ak_htab_value_at(node, words);
fail_noent:
	err = -ENOENT;
fail:
	if (errp)
		*errp = err;
	return 0;
}

/*
 * Copy a value of constant @size from the caller's @src (stack or global,
 * any alignment) into arena @dst (whole words: the last one's bytes past
 * @size are stored as zero), a word at a time through one 8-byte local.
 *
 * Every arena access of the value copies (this and __ak_htab_value_fetch)
 * is volatile. clang turns a plain copy loop into a memcpy, which clang-19
 * lowers without the arena address cast, and the verifier refuses the
 * program ("R0 invalid mem access 'scalar'"; values over 8 bytes).
 * Volatile forbids only merging or dropping that one access; a compiler
 * barrier per word would also make clang reload from memory everything
 * else it holds. So the copy stays a load and a store per word (from an
 * aligned source; bytes are gathered from an unaligned one), unrolled, and
 * no copy of the value is made on the caller's stack.
 */
#define __ak_htab_value_store(dst, src, size)				\
	do {								\
		volatile unsigned long long __arena *___ak_d =		\
			(volatile unsigned long long __arena *)(dst);	\
		const void *___ak_s = (src);				\
		unsigned long long ___ak_x;				\
		unsigned int ___ak_i;					\
									\
		__AK_UNROLL						\
		for (___ak_i = 0; ___ak_i * 8 + 8 <= (size); ___ak_i++) {	\
			__builtin_memcpy(&___ak_x, (const char *)___ak_s + ___ak_i * 8, 8); \
			___ak_d[___ak_i] = ___ak_x;			\
		}							\
		if ((size) % 8) {					\
			___ak_x = 0;					\
			__builtin_memcpy(&___ak_x, (const char *)___ak_s + (size) / 8 * 8, \
					 (size) % 8);			\
			___ak_d[(size) / 8] = ___ak_x;			\
		}							\
	} while (0)

/* An update's flags past the public ones: ak_htab_lookup_or_init's insert. */
#define __AK_HTAB_INIT 3

/* An update in progress: the bucket it holds locked and the node it fills. */
struct __ak_htab_update {
	unsigned long long __arena *bucket;
	struct ak_htab_node __arena *node;
	int fresh;			/* a new node: linked by __ak_htab_update_end */
	int err;
};

/*
 * Lock the home bucket of @key and find its node there: 0 with the bucket
 * locked (*@node NULL if absent and the flags allow adding it), or an error
 * with nothing held.
 */
static __ak_always_inline int __ak_htab_lock_find_for(struct ak_htab __arena *h,
						      unsigned long long hash,
						      const unsigned long long *w,
						      unsigned int words,
						      unsigned long long flags,
						      enum __ak_htab_caller caller,
						      unsigned long long __arena **bucket,
						      struct ak_htab_node __arena **node)
{
	int err = __ak_htab_lock_home(h, hash, caller, bucket);

	if (err)
		return err;
	err = __ak_htab_chain_find(*bucket, hash, w, words, node, 0);
	if (!err && *node && flags == AK_HTAB_NOEXIST)
		err = -EEXIST;
	if (!err && !*node && flags == AK_HTAB_EXIST)
		err = -ENOENT;
	if (err)
		ak_bit_lock_release(*bucket);
	return err;
}

/*
 * Find or make the node for @key under its bucket's lock. Returns the
 * value to write (the caller writes it before __ak_htab_update_end links a
 * fresh node), or NULL with @u->err set.
 *
 * A new node comes from this CPU's allocator cache with the bucket held,
 * so an insert locks and walks its chain once. When the cache has none, it
 * is allocated with no lock held, then the bucket is looked at again: no
 * bucket lock is held across a call that may sleep (lock.h). A sleepable
 * allocation may sleep in the page kfunc, and a holder that sleeps leaves
 * every writer of the bucket spinning, on CPUs the sleeper may need: with
 * no preemption in the kernel, until the soft-lockup detector fires.
 */
static __ak_always_inline void __arena *
__ak_htab_update_begin(struct ak_htab __arena *h, const unsigned long long *w, unsigned int words,
		       unsigned long long flags, enum __ak_htab_caller caller,
		       struct __ak_htab_update *u)
{
	unsigned long long hash = __ak_htab_hash(h, w, words);
	struct ak_htab_node __arena *node, *spare;
	unsigned long long __arena *bucket;
	unsigned int i;
	int err;

	u->fresh = 0;
	if (flags > __AK_HTAB_INIT || !ak_read_once(h->cur)) {
		err = -EINVAL;
		goto fail;
	}
	if (caller == __AK_HTAB_SLEEPABLE)
		__ak_htab_grow(h);	/* may not find memory: this entry needs a node only */
	err = __ak_htab_lock_find_for(h, hash, w, words, flags, caller, &bucket, &node);
	if (err)
		goto fail;
	if (!node) {
		spare = __ak_alloc_from_cache(h->node_size);
		if (!spare) {
			ak_bit_lock_release(bucket);
			spare = caller == __AK_HTAB_SLEEPABLE ?
				ak_alloc_err(h->node_size, &err) :
				ak_alloc_nosleep_err(h->node_size, &err);
			if (!spare)
				goto fail;
			err = __ak_htab_lock_find_for(h, hash, w, words, flags, caller, &bucket,
						      &node);
			if (err || node) {
				/* Added by someone else meanwhile; this free never waits. */
				ak_free_nosleep(spare);
				if (err)
					goto fail;
			}
		}
		if (!node) {
			spare->hash = hash;
			__AK_UNROLL
			for (i = 0; i < words; i++)
				spare->data[i] = w[i];
			node = spare;
			u->fresh = 1;
		}
	}
	u->node = node;
	u->bucket = bucket;
	return __ak_htab_value_at(node, words);
fail:
	u->err = err;
	return 0;
}

/*
 * Link a fresh node (its value written) and release the bucket. The link
 * is an exchange, fully ordered: a lock-free reader that sees the node sees
 * it whole. The generation moves before the bucket is released, so a
 * lock-free miss that saw the bucket unlocked at both ends sees it move.
 */
static inline void __ak_htab_update_end(struct ak_htab __arena *h, struct __ak_htab_update *u)
{
	if (u->fresh) {
		u->node->next = __ak_htab_node_of(*u->bucket);
		ak_xchg(u->bucket, (unsigned long long)u->node | __AK_HTAB_LOCKED);
		ak_atomic_add(&h->count, 1);
		ak_fetch_add(&h->gen, 1);
	}
	ak_bit_lock_release(u->bucket);
}

/*
 * Store *@value under *@key as @flags say, allocating as @caller may: the
 * value's address, or NULL with *@errp set. With __AK_HTAB_INIT (internal:
 * ak_htab_lookup_or_init), an entry already there keeps its value and its
 * address is returned; only a new one gets *@value.
 */
#define __ak_htab_update_value(h, key, value, flags, caller, errp)	\
	({								\
		struct ak_htab __arena *___ak_h = (h);			\
		typeof(key) ___ak_key = (key);				\
		typeof(value) ___ak_val = (value);			\
		unsigned long long ___ak_flags = (flags);		\
		unsigned long long ___ak_k[__AK_HTAB_WORDS(sizeof(*___ak_key))]; \
		struct __ak_htab_update ___ak_u = { .err = -EINVAL };	\
		void __arena *___ak_v = 0;				\
									\
		if (sizeof(*___ak_key) == ___ak_h->key_size &&		\
		    sizeof(*___ak_val) == ___ak_h->value_size) {	\
			__ak_htab_key_load(___ak_k, ___ak_key, sizeof(*___ak_key)); \
			___ak_v = (void __arena *)((caller) == __AK_HTAB_SLEEPABLE ? \
				__AK_HTAB_BY_WIDTH(__ak_htab_begin_sleepable, \
						   __AK_HTAB_WORDS(sizeof(*___ak_key)), \
						   ___ak_h, (const void *)___ak_k, \
						   ___ak_flags, &___ak_u) : \
				__AK_HTAB_BY_WIDTH(__ak_htab_begin_nosleep, \
						   __AK_HTAB_WORDS(sizeof(*___ak_key)), \
						   ___ak_h, (const void *)___ak_k, \
						   ___ak_flags, &___ak_u)); \
			if (___ak_v) {					\
				if (___ak_flags != __AK_HTAB_INIT || ___ak_u.fresh) \
					__ak_htab_value_store(___ak_v, ___ak_val, \
							      sizeof(*___ak_val)); \
				__ak_htab_update_end(___ak_h, &___ak_u); \
			}						\
		}							\
		if (!___ak_v)						\
			*(errp) = ___ak_u.err;				\
		___ak_v;						\
	})

/* ak_htab_update[_nosleep]: the flags a caller may give, then the store. */
#define __ak_htab_update(h, key, value, flags, caller)			\
	({								\
		struct ak_htab __arena *___ak_uh = (h);			\
		typeof(key) ___ak_ukey = (key);				\
		typeof(value) ___ak_uval = (value);			\
		unsigned long long ___ak_uflags = (flags);		\
		int ___ak_uerr = -EINVAL;				\
									\
		if (___ak_uflags <= AK_HTAB_EXIST &&			\
		    __ak_htab_update_value(___ak_uh, ___ak_ukey, ___ak_uval, ___ak_uflags, \
					   caller, &___ak_uerr))		\
			___ak_uerr = 0;					\
		___ak_uerr;						\
	})

/*
 * Take @node, found at *@link in the chain of the locked @bucket, out of
 * the table. Returns the generation before this change.
 */
static __ak_always_inline unsigned long long __ak_htab_unlink_at(struct ak_htab __arena *h,
								 unsigned long long __arena *bucket,
								 unsigned long long __arena *link,
								 struct ak_htab_node __arena *node)
{
	struct ak_htab_node __arena *next = node->next;

	if (link == bucket)
		ak_write_once(*bucket, (unsigned long long)next | __AK_HTAB_LOCKED);
	else
		ak_write_once(*link, (unsigned long long)next);
	ak_atomic_add(&h->count, -1ULL);
	return ak_fetch_add(&h->gen, 1);
}

/*
 * Unlink the node of @key under its bucket's lock; the caller owns it then
 * (reads its value, frees it). 0 with *@nodep set, or an error.
 */
static __ak_always_inline int __ak_htab_unlink(struct ak_htab __arena *h,
					       const unsigned long long *w, unsigned int words,
					       enum __ak_htab_caller caller,
					       struct ak_htab_node __arena **nodep)
{
	unsigned long long hash = __ak_htab_hash(h, w, words);
	unsigned long long __arena *bucket;
	unsigned long long __arena *link;
	struct ak_htab_node __arena *node;
	int err;

	if (!ak_read_once(h->cur))
		return -EINVAL;
	err = __ak_htab_lock_home(h, hash, caller, &bucket);
	if (err)
		return err;
	err = __ak_htab_chain_find(bucket, hash, w, words, &node, &link);
	if (!err && !node)
		err = -ENOENT;
	if (!err) {
		__ak_htab_unlink_at(h, bucket, link, node);
		*nodep = node;
	}
	ak_bit_lock_release(bucket);
	return err;
}

/* Unlink the key @w of @words words and free its node as @caller may. */
static __ak_always_inline int __ak_htab_delete_impl(struct ak_htab __arena *h,
						    const unsigned long long *w, unsigned int words,
						    enum __ak_htab_caller caller)
{
	struct ak_htab_node __arena *node;
	int err = __ak_htab_unlink(h, w, words, caller, &node);

	if (err)
		return err;
	return caller == __AK_HTAB_SLEEPABLE ? ak_free(node) : ak_free_nosleep(node);
}

__ak_global int __ak_htab_free_nosleep(__arg_arena void __arena *node)
{
	return ak_free_nosleep(node);
}

#define __ak_htab_delete_key(h, key, caller)				\
	({								\
		struct ak_htab __arena *___ak_h = (h);			\
		typeof(key) ___ak_key = (key);				\
		unsigned long long ___ak_k[__AK_HTAB_WORDS(sizeof(*___ak_key))]; \
		int ___ak_err = -EINVAL;				\
									\
		if (sizeof(*___ak_key) == ___ak_h->key_size) {		\
			__ak_htab_key_load(___ak_k, ___ak_key, sizeof(*___ak_key)); \
			___ak_err = (caller) == __AK_HTAB_SLEEPABLE ?	\
				__AK_HTAB_BY_WIDTH(__ak_htab_delete_sleepable, \
						   __AK_HTAB_WORDS(sizeof(*___ak_key)), \
						   ___ak_h, (const void *)___ak_k) :	\
				__AK_HTAB_BY_WIDTH(__ak_htab_delete_nosleep, \
						   __AK_HTAB_WORDS(sizeof(*___ak_key)), \
						   ___ak_h, (const void *)___ak_k);	\
		}							\
		___ak_err;						\
	})

/*
 * Copy a value of constant @size from arena @src (whole words) to the
 * caller's @dst, a word at a time: volatile loads, as __ak_htab_value_store
 * explains. User space has no address cast to lose, and one memcpy there
 * lets gcc see that all of @dst was written (it warns of "maybe
 * uninitialized" bytes after a loop of them).
 */
#ifndef __BPF__
#define __ak_htab_value_fetch(dst, src, size)				\
	__builtin_memcpy((dst), (const void *)(src), (size))
#else
#define __ak_htab_value_fetch(dst, src, size)				\
	do {								\
		const volatile unsigned long long __arena *___ak_s =	\
			(const volatile unsigned long long __arena *)(src); \
		void *___ak_d = (dst);					\
		unsigned long long ___ak_x;				\
		unsigned int ___ak_i;					\
									\
		__AK_UNROLL						\
		for (___ak_i = 0; ___ak_i * 8 + 8 <= (size); ___ak_i++) {	\
			___ak_x = ___ak_s[___ak_i];			\
			__builtin_memcpy((char *)___ak_d + ___ak_i * 8, &___ak_x, 8); \
		}							\
		if ((size) % 8) {					\
			___ak_x = ___ak_s[(size) / 8];			\
			__builtin_memcpy((char *)___ak_d + (size) / 8 * 8, &___ak_x, \
					 (size) % 8);			\
		}							\
	} while (0)
#endif

/* A lookup that holds its bucket's lock while the caller copies the value. */
struct __ak_htab_locked {
	unsigned long long __arena *bucket;
	int err;
};

/*
 * The value's address with its bucket locked and the caller counted in as
 * a mover (__ak_htab_unlock ends both), or 0 with @l->err set.
 */
static __ak_always_inline void __arena *
__ak_htab_lookup_lock_impl(struct ak_htab __arena *h, const unsigned long long *w,
			   unsigned int words, struct __ak_htab_locked *l)
{
	/* Set by __ak_htab_lock_find on success; gcc -Og cannot tell. */
	struct ak_htab_node __arena *node = 0;
	unsigned long long __arena *bucket = 0;
	int err;

	if (!ak_read_once(h->cur)) {
		l->err = -EINVAL;
		return 0;
	}
	__ak_htab_hold(h);
	err = __ak_htab_lock_find(h, __ak_htab_hash(h, w, words), w, words, &bucket, &node);
	if (err) {
		__ak_htab_unhold(h);
		l->err = err;
		return 0;
	}
	l->bucket = bucket;
	return __ak_htab_value_at(node, words);
}

/*
 * The out-of-line functions the calls' macros reach, one version per key
 * width n (__AK_HTAB_BY_WIDTH picks it), each taking the key as n words
 * (__ak_htab_key_load): struct __ak_htab_key##n tells the verifier how
 * many. Where a sleepable program and any other differ, two versions
 * (__AK_HTAB_WRITERS): a non-sleepable program must not see the page kfuncs.
 *  - lookup: the value's address, or 0 with *@err set;
 *  - begin_sleepable, begin_nosleep: __ak_htab_update_begin;
 *  - delete_sleepable, delete_nosleep: unlink and free the node;
 *  - unlink_nosleep: unlink only, *@node the node, which the caller frees;
 *  - lookup_lock: __ak_htab_lookup_lock_impl.
 */
#define __AK_HTAB_WRITERS(n, kind, caller)				\
__ak_global unsigned long long							\
__ak_htab_begin_##kind##n(__arg_arena struct ak_htab __arena *h,		\
			  __ak_nonnull const struct __ak_htab_key##n *key,	\
			  unsigned long long flags,				\
			  __ak_nonnull struct __ak_htab_update *u)		\
{									\
	return (unsigned long long)__ak_htab_update_begin(h, (const unsigned long long *)key, \
							  n, flags, caller, u);	\
}									\
									\
__ak_global int __ak_htab_delete_##kind##n(__arg_arena struct ak_htab __arena *h, \
					   __ak_nonnull const struct __ak_htab_key##n *key) \
{									\
	return __ak_htab_delete_impl(h, (const unsigned long long *)key, n, caller); \
}

#define __AK_HTAB_WIDTH(n)						\
struct __ak_htab_key##n {						\
	unsigned long long w[n];					\
};									\
									\
__ak_global unsigned long long							\
__ak_htab_lookup##n(__arg_arena struct ak_htab __arena *h,			\
		    __ak_nonnull const struct __ak_htab_key##n *key,		\
		    __ak_nonnull int *err)					\
{									\
	return (unsigned long long)__ak_htab_lookup_impl(h, (const unsigned long long *)key, \
							 n, err);		\
}									\
									\
__AK_HTAB_WRITERS(n, sleepable, __AK_HTAB_SLEEPABLE)			\
__AK_HTAB_WRITERS(n, nosleep, __AK_HTAB_NOSLEEP)				\
									\
__ak_global int __ak_htab_unlink_nosleep##n(__arg_arena struct ak_htab __arena *h, \
					    __ak_nonnull const struct __ak_htab_key##n *key, \
					    __ak_nonnull unsigned long long *node) \
{									\
	struct ak_htab_node __arena *found;				\
	int err = __ak_htab_unlink(h, (const unsigned long long *)key, n, \
				   __AK_HTAB_NOSLEEP, &found);		\
									\
	*node = err ? 0 : (unsigned long long)found;			\
	return err;							\
}									\
									\
__ak_global unsigned long long							\
__ak_htab_lookup_lock##n(__arg_arena struct ak_htab __arena *h,		\
			 __ak_nonnull const struct __ak_htab_key##n *key,	\
			 __ak_nonnull struct __ak_htab_locked *l)		\
{									\
	return (unsigned long long)__ak_htab_lookup_lock_impl(h,	\
			(const unsigned long long *)key, n, l);		\
}

__AK_HTAB_WIDTH(1)
__AK_HTAB_WIDTH(2)
__AK_HTAB_WIDTH(3)
__AK_HTAB_WIDTH(4)
__AK_HTAB_WIDTH(5)
__AK_HTAB_WIDTH(6)
__AK_HTAB_WIDTH(7)
__AK_HTAB_WIDTH(8)

static inline void __ak_htab_unlock(struct ak_htab __arena *h, struct __ak_htab_locked *l)
{
	ak_bit_lock_release(l->bucket);
	__ak_htab_unhold(h);
}

static inline void __ak_htab_cursor_reset(struct ak_htab_cursor *c)
{
	c->htab = 0;
	c->gen = 0;
	c->bucket = 0;
	c->skip = 0;
}

/*
 * A walk's first step with @c starts it on @h; a later one resumes only if
 * @h did not change since: 0, or -AK_ESTALE.
 */
static inline int __ak_htab_cursor_begin(struct ak_htab __arena *h, struct ak_htab_cursor *c)
{
	if (!c->htab) {
		__ak_htab_cursor_reset(c);
		c->htab = h;
		c->gen = ak_read_once(h->gen);
		return 0;
	}
	return c->htab != h || c->gen != ak_read_once(h->gen) ? -AK_ESTALE : 0;
}

/*
 * The steps a whole-table walk may take: the table's entries, checked
 * between chunks, so a chain that goes round a cycle ends the walk after
 * one chunk past them instead of AK_HTAB_MAX_NODES steps (seconds of a CPU
 * that a program run holds).
 */
static inline unsigned long long __ak_htab_max_steps(struct ak_htab __arena *h)
{
	unsigned long long count = ak_read_once(h->count);

	return count < AK_HTAB_MAX_NODES ? count + 1 : AK_HTAB_MAX_NODES;
}

/* Where a whole-table check is; zeroed by ak_htab_check_all. */
struct __ak_htab_check {
	unsigned long long gen;		/* the table's when the check began */
	unsigned long long bucket;	/* the next bucket to check */
	unsigned long long entries;	/* nodes in the buckets before it */
	unsigned long long steps;	/* nodes visited, cut chunks' included */
	unsigned long long bad;		/* the first node in the wrong chain */
};

__ak_global int __ak_htab_check_chunk(__arg_arena struct ak_htab __arena *h,
				      __ak_nonnull struct __ak_htab_check *c)
{
	struct __ak_htab_table __arena *t = ak_read_once(h->cur);
	struct ak_htab_node __arena *node;
	unsigned long long b, n, mask;

	if (!t)
		return -EINVAL;
	if (ak_read_once(h->gen) != c->gen)
		return -AK_ESTALE;
	if (ak_read_once(h->old))
		return -EBUSY;	/* a growth began meanwhile */
	mask = t->nbuckets - 1;
	for (b = c->bucket + ak_opaque_zero(); b < t->nbuckets; b++) {
		ak_cond_break_label(cut);
		n = 0;
		/* A bucket is counted whole, or again from its start next chunk. */
		for (node = __ak_htab_node_of(t->buckets[b]); node; node = node->next) {
			ak_cond_break_label(cut);
			if ((node->hash & mask) != b) {
				c->bad = (unsigned long long)node;
				return -EINVAL;
			}
			n++;
			c->steps++;
		}
		c->entries += n;
		c->bucket = b + 1;
	}
	if (c->entries != h->count)
		return -EINVAL;
	return 0;
cut:
	return -AK_EBUDGET;
}

#endif /* __ARENAKIT_HTAB_IMPL_H */
