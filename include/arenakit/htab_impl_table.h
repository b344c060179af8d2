/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/htab_impl_table.h - a table's bucket arrays, and how it grows
 * from one to the next. Internal: part of <arenakit/htab.h> (through
 * htab_impl.h, which says how the inside is split).
 *
 * A table grows, or reseeds, in steps (htab.h says why):
 *  - __ak_htab_resize, from a sleepable update, allocates an array of
 *    twice the buckets with the same seeds (a growth), or of as many or
 *    twice with new seeds (a reseed), and publishes it: h->old, then h->cur.
 *  - While h->old is set, every update and delete first moves the old
 *    bucket of its own key, then up to AK_HTAB_MIGRATE_STEP more, claimed
 *    round and round until the growth ends, so one whose lock was busy is
 *    tried again (__ak_htab_migrate); ak_htab_maintain (htab_impl_walk.h)
 *    moves the rest. A bucket is moved under its lock, node by node, into
 *    the new array's buckets (__ak_htab_move_bucket), each node's hash
 *    computed again under the new array's seeds on the way.
 *  - The mover of the last old bucket retires the old array; the last
 *    caller that may still hold it frees it (__ak_htab_moved_one says why
 *    no one can touch it then).
 *  - A writer locks the bucket its key belongs in, in the current array,
 *    only once that key's old bucket is moved (__ak_htab_lock_home); a
 *    reader looks in the old array's bucket until it is moved
 *    (__ak_htab_where), hashing the key under each array's own seeds.
 */
#ifndef __ARENAKIT_HTAB_H
#error "<arenakit/htab_impl_table.h> is internal: include <arenakit/htab.h>"
#elif !defined(__ARENAKIT_HTAB_IMPL_TABLE_H)
#define __ARENAKIT_HTAB_IMPL_TABLE_H

#include <arenakit/alloc.h>
#include <arenakit/lock.h>
#include <arenakit/keyed_impl.h>

_Static_assert(2 * AK_HTAB_MAX_KEY + sizeof(struct __ak_htab_table) + AK_HTAB_MAX_BUCKETS * 8 <=
	       AK_ALLOC_MAX &&
	       sizeof(struct __ak_htab_table) + AK_HTAB_MAX_BUCKETS * 16 > AK_ALLOC_MAX,
	       "AK_HTAB_MAX_BUCKETS must be the largest array one allocation holds");

/*
 * A random 64-bit seed word: bpf_get_prandom_u32 in BPF, getrandom in user
 * space (the clock, should getrandom fail). Tests that need to know the
 * seeds define AK_HTAB_TEST_SEED() before including htab.h.
 */
#ifdef AK_HTAB_TEST_SEED
#define __ak_htab_random64() ((unsigned long long)AK_HTAB_TEST_SEED())
#elif defined(__BPF__)
#define __ak_htab_random64()						\
	((unsigned long long)bpf_get_prandom_u32() << 32 | bpf_get_prandom_u32())
#else
#include <sys/random.h>
#include <time.h>

static inline unsigned long long __ak_htab_random64(void)
{
	unsigned long long x;
	struct timespec ts;

	if (getrandom(&x, sizeof(x), 0) == sizeof(x))
		return x;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((unsigned long long)ts.tv_sec * 1000000000 + ts.tv_nsec) * 0x9e3779b97f4a7c15ULL;
}
#endif

/* The seed words before an array of @h (its allocation begins there). */
static inline unsigned long long __ak_htab_seed_words(const struct ak_htab __arena *h)
{
	return 2ULL * h->key_words;
}

/*
 * Write the @seeds seed words that end at @t: @from's (a growth), or new
 * ones; 0, or -AK_EBUDGET. Out of line: its loop's values, live across
 * the random helper's calls, would be spilled to the frame of the caller,
 * which goes on to call the allocator, and every frame of that chain
 * counts against the verifier's 512 bytes.
 */
__ak_apart int
__ak_htab_seeds_fill(struct __ak_htab_table __arena *t, unsigned long long seeds,
		     struct __ak_htab_table __arena *from)
{
	unsigned long long __arena *base = (unsigned long long __arena *)t - seeds;
	unsigned long long i;

	for (i = ak_opaque_zero(); i < seeds && ak_can_loop; i++)
		base[seeds - 1 - i] = from ? __AK_HTAB_SEED(from, i) : __ak_htab_random64();
	return i < seeds ? -AK_EBUDGET : 0;
}

/*
 * Make @t an array of @nbuckets empty buckets (zeroed here if @zero: a
 * reused block is not); 0, or -AK_EBUDGET. Out of line for the same
 * reason.
 */
__ak_apart int
__ak_htab_buckets_init(struct __ak_htab_table __arena *t, unsigned long long nbuckets, int zero)
{
	unsigned long long i, n, shift = 64;

	if (zero) {
		for (i = ak_opaque_zero(); i < nbuckets && ak_can_loop; i++)
			t->buckets[i] = 0;
		if (i < nbuckets)
			return -AK_EBUDGET;
	}
	for (n = nbuckets + ak_opaque_zero(); n > 1 && ak_can_loop; n >>= 1)
		shift--;
	t->nbuckets = nbuckets;
	t->shift = shift;
	return 0;
}

/*
 * Make the block at @base an array of @nbuckets empty buckets after the
 * @seeds seed words of @from (a growth) or new ones (@from NULL); its
 * buckets zeroed here if @zero (a block reused, not whole pages fresh from
 * the kernel). 0, or -AK_EBUDGET. Out of line, so that the caller keeps
 * only @base across it, and across the allocator's call before it only
 * these arguments: registers, not slots in a frame under the allocator.
 */
__ak_apart int
__ak_htab_table_fill(unsigned long long __arena *base, unsigned long long seeds,
		     struct __ak_htab_table __arena *from, unsigned long long nbuckets, int zero)
{
	struct __ak_htab_table __arena *t = (struct __ak_htab_table __arena *)(base + seeds);

	return __ak_htab_seeds_fill(t, seeds, from) ?: __ak_htab_buckets_init(t, nbuckets, zero);
}

/*
 * An array of @nbuckets empty buckets, with the seeds of @from (a growth)
 * or new ones (@from NULL: a first array, or a reseed), allocated as
 * @caller may; NULL: see *@err.
 */
static __ak_always_inline struct __ak_htab_table __arena *
__ak_htab_table_new(struct ak_htab __arena *h, unsigned long long nbuckets,
		    struct __ak_htab_table __arena *from, enum __ak_kind caller, int *err)
{
	unsigned long long seeds = __ak_htab_seed_words(h);
	unsigned long long bytes = seeds * 8 + sizeof(struct __ak_htab_table) + nbuckets * 8;
	unsigned long long __arena *base;

	base = caller == __AK_SLEEPABLE ? ak_alloc(bytes, err) :
					       ak_alloc_nosleep(bytes, err);
	if (!base)
		return 0;
	*err = __ak_htab_table_fill(base, seeds, from, nbuckets, bytes <= AK_ALLOC_MAX_SMALL);
	if (!*err)
		return (struct __ak_htab_table __arena *)(base + seeds);
	ak_free_nosleep(base);
	return 0;
}

/* Free array @t of @h (may be NULL) as a @caller may. */
static inline void __ak_htab_table_free(struct ak_htab __arena *h, struct __ak_htab_table __arena *t,
					enum __ak_kind caller)
{
	void __arena *base;

	if (!t)
		return;
	base = (unsigned long long __arena *)t - __ak_htab_seed_words(h);
	if (caller == __AK_SLEEPABLE)
		ak_free(base);
	else
		ak_free_nosleep(base);
}

/* The sizes, the growth state cleared, then the first array and its seeds. */
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
	h->count = 0;
	h->reseeds = 0;
	h->reseed_wanted = 0;
	ak_arena_store_barrier();
	h->max_entries = 0;
	ak_arena_store_barrier();
	h->refused = 0;
	ak_arena_store_barrier();
	h->evicted = 0;
	ak_arena_store_barrier();
	h->evict_hand = 0;
	h->used_word = 0;
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
	h->cur = __ak_htab_table_new(h, n, 0, __AK_SLEEPABLE, &err);
	h->gen++;
	if (h->cur)
		return 0;
	h->key_size = 0;	/* refused by every call until a good init */
	h->value_size = 0;
	return err;
}

/*
 * Where a key lives now: @bucket, in the old array unless the key's old
 * bucket was moved, and for an old bucket @newer, the new array's bucket,
 * where the nodes a move cut part way took already are; each with the
 * key's hash under its own array's seeds (@hash, @nhash): they differ
 * while the table reseeds.
 */
struct __ak_htab_where {
	unsigned long long __arena *bucket;
	unsigned long long __arena *newer;	/* NULL: @bucket is in the current array */
	unsigned long long hash, nhash;
};

static __ak_always_inline void __ak_htab_where(struct ak_htab __arena *h,
					       struct __ak_htab_table __arena *cur,
					       const unsigned long long *w, unsigned int words,
					       struct __ak_htab_where *at)
{
	/* After @cur, by address dependency: a growth publishes h->old first. */
	struct __ak_htab_table __arena *old = ak_read_once_dep(h->old, ak_dep(cur));

	at->newer = 0;
	at->nhash = 0;	/* unused without @newer; gcc -Og cannot tell */
	if (old && old != cur) {
		at->hash = __ak_htab_hash_reload(old, w, words);
		at->bucket = __ak_htab_bucket_of(old, at->hash);
		if (ak_read_once(*at->bucket) != __AK_HTAB_MOVED) {
			at->nhash = __ak_htab_hash_reload(cur, w, words);
			at->newer = __ak_htab_bucket_of(cur, at->nhash);
			return;
		}
	}
	at->hash = __ak_htab_hash_reload(cur, w, words);
	at->bucket = __ak_htab_bucket_of(cur, at->hash);
}

/*
 * Move old bucket @i into the new array, each node with its hash under the
 * new array's seeds (written before the node is linked there, so a reader
 * of the new bucket compares the hash of its own array; a reader still in
 * the old chain may miss the node, and sees the generation move). Returns
 * 1 if this call moved it,
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
	unsigned long long hash;
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
		hash = __ak_htab_hash(cur, node->data, h->key_words);
		to = __ak_htab_bucket_of(cur, hash);
		err = ak_bit_lock_acquire(to);
		if (err)
			goto stop;
		/* Only now: a node left in the old chain keeps the old array's hash. */
		ak_write_once(node->hash, hash);
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
 * out of h->retired before anyone may grow again (__ak_htab_resize waits for
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

/*
 * Count out; the retired array if this caller was the last holder and
 * must free it. Readers count out with __ak_htab_unhold instead
 * (htab_impl_common.h), and never free.
 */
static inline struct __ak_htab_table __arena *__ak_htab_unhold_last(struct ak_htab __arena *h)
{
	if (ak_fetch_add(&h->movers, -__AK_HTAB_MOVER) != __AK_HTAB_MOVER + __AK_HTAB_RETIRED)
		return 0;
	return __ak_htab_take_retired(h);
}

static inline void __ak_htab_mover_leave(struct ak_htab __arena *h, enum __ak_kind caller)
{
	__ak_htab_table_free(h, __ak_htab_unhold_last(h), caller);
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
 * While growing: move old bucket @home (the caller's key's, so the caller
 * works on the new array only), then up to @step more. 0 or an error.
 */
static __ak_always_inline int __ak_htab_migrate_impl(struct ak_htab __arena *h,
						     unsigned long long home, unsigned int step,
						     enum __ak_kind caller)
{
	struct __ak_htab_table __arena *old, *cur;
	unsigned long long i;
	unsigned int done;
	int ret = 0;

	if (!__ak_htab_mover_enter(h, &old, &cur))
		goto out;
	ret = __ak_htab_move_counted(h, old, cur, home);
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
						 unsigned long long home)
{
	return __ak_htab_migrate_impl(h, home, AK_HTAB_MIGRATE_STEP, __AK_SLEEPABLE);
}

__ak_global int __ak_htab_migrate_nosleep(__arg_arena struct ak_htab __arena *h,
					       unsigned long long home)
{
	return __ak_htab_migrate_impl(h, home, AK_HTAB_MIGRATE_STEP, __AK_NOSLEEP);
}

/*
 * Nothing to move unless growing: the common case costs three loads (the
 * old array, the current one, the holders' word). A retired array that its
 * last holder could not free (a reader) is freed here, by the next writer.
 */
static __ak_always_inline int __ak_htab_migrate(struct ak_htab __arena *h,
						const unsigned long long *w, unsigned int words,
						enum __ak_kind caller)
{
	struct __ak_htab_table __arena *old = ak_read_once(h->old);
	unsigned long long home;

	if (!old || old == ak_read_once(h->cur)) {
		if (ak_read_once(h->movers) == __AK_HTAB_RETIRED)
			__ak_htab_table_free(h, __ak_htab_take_retired(h), caller);
		return 0;
	}
	/*
	 * The index of the key's old bucket, under the old array's seeds,
	 * read held. If that array is retired once let go, the index is of no
	 * use, and moving the bucket it names is harmless (the mover finds its
	 * own arrays; __ak_htab_lock_home checks).
	 */
	__ak_htab_hold(h);
	old = ak_read_once(h->old);
	home = old ? __ak_htab_hash_reload(old, w, words) >> old->shift : 0;
	__ak_htab_unhold(h);
	return caller == __AK_SLEEPABLE ? __ak_htab_migrate_sleepable(h, home) :
					       __ak_htab_migrate_nosleep(h, home);
}

/*
 * Lock the bucket key @w belongs in, in the current array, after moving its
 * old bucket if the table is growing; *@hashp is the key's hash under that
 * array's seeds. Checked again under the lock: growth may have started in
 * between, and the key may still sit in the old array.
 */
static __ak_always_inline int __ak_htab_lock_home(struct ak_htab __arena *h,
						  const unsigned long long *w,
						  unsigned int words,
						  enum __ak_kind caller,
						  unsigned long long __arena **bucketp,
						  unsigned long long *hashp)
{
	struct __ak_htab_table __arena *table, *old;
	unsigned long long __arena *bucket;
	unsigned long long hash;
	unsigned int tries;
	int err, home;

	for (tries = (unsigned int)ak_opaque_zero(); tries < AK_HTAB_LOOKUP_TRIES && ak_can_loop;
	     tries++) {
		err = __ak_htab_migrate(h, w, words, caller);
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
		hash = __ak_htab_hash_reload(table, w, words);
		bucket = __ak_htab_bucket_of(table, hash);
		err = ak_bit_lock_acquire(bucket);
		if (err) {
			__ak_htab_unhold(h);
			return err;
		}
		old = ak_read_once(h->old);
		home = ak_read_once(h->cur) == table &&
		       (!old || old == table ||
			ak_read_once(*__ak_htab_bucket_of(old, __ak_htab_hash_reload(old, w, words))) ==
			__AK_HTAB_MOVED);
		__ak_htab_unhold(h);
		if (home) {
			*bucketp = bucket;
			*hashp = hash;
			return 0;
		}
		ak_bit_lock_release(bucket);
	}
	return -EBUSY;
}

/*
 * A chain of @len nodes is too long: past AK_HTAB_CHAIN_MAX, and past what
 * the load explains (twice the entries a bucket has on average, which
 * bounds a chain's expected length under a universal hash), so a table
 * that stopped growing at AK_HTAB_MAX_BUCKETS and fills on does not reseed
 * for chains that only its load makes long.
 */
static inline int __ak_htab_chain_too_long(struct ak_htab __arena *h, unsigned int len)
{
	struct __ak_htab_table __arena *cur = ak_read_once(h->cur);

	return len > AK_HTAB_CHAIN_MAX &&
	       len > AK_HTAB_CHAIN_MAX + 2 * (ak_read_once(h->count) >> (64 - cur->shift));
}

/*
 * Start a migration (sleepable callers), when none runs: a growth if the
 * table is loaded past 3/4 (and @grow), a reseed if an insert asked for
 * one (h->reseed_wanted), or both at once: twice the buckets under new
 * seeds. One that finds no memory is left to a later update: the table
 * works with longer chains meanwhile. So a table reseeds at most once per
 * migration, and a migration ends only after its every old bucket is
 * moved, a few per update (AK_HTAB_MIGRATE_STEP): reseeds come at most
 * once in nbuckets / (AK_HTAB_MIGRATE_STEP + 1) writes, unless
 * ak_htab_maintain moves the buckets faster.
 */
__ak_apart void __ak_htab_resize(struct ak_htab __arena *h, int grow)
{
	struct __ak_htab_table __arena *cur = ak_read_once(h->cur), *next;
	unsigned int reseed = ak_read_once(h->reseed_wanted);
	int err;

	grow = grow && ak_read_once(h->count) * AK_HTAB_LOAD_DEN > cur->nbuckets * AK_HTAB_LOAD_NUM &&
	       cur->nbuckets < AK_HTAB_MAX_BUCKETS;
	if (ak_read_once(h->old) || (!grow && !reseed))
		return;
	if (ak_lock_try(&h->grow_lock))
		return;		/* someone else is starting one */
	/* The last migration's array, if its last holder could not free it. */
	__ak_htab_table_free(h, __ak_htab_take_retired(h), __AK_SLEEPABLE);
	if (!ak_read_once(h->old) && !ak_read_once(h->retired) && ak_read_once(h->cur) == cur) {
		reseed = ak_read_once(h->reseed_wanted);
		next = __ak_htab_table_new(h, grow ? cur->nbuckets * 2 : cur->nbuckets,
					   reseed ? 0 : cur, __AK_SLEEPABLE, &err);
		if (next) {
			ak_write_once(h->claimed, 0);
			ak_write_once(h->moved, 0);
			if (reseed) {
				ak_write_once(h->reseed_wanted, 0);
				ak_write_once(h->reseeds, h->reseeds + 1);
			}
			/*
			 * old before cur, each fully ordered: a reader that
			 * sees the new cur sees old, and the new array's zeroed
			 * buckets and its seeds (loads in order, as on x86-64:
			 * see htab_impl.h's overview on memory order).
			 */
			ak_xchg(&h->old, cur);
			ak_xchg(&h->cur, next);
			ak_fetch_add(&h->gen, 1);
		}
	}
	ak_lock_release(&h->grow_lock);
}

#endif /* __ARENAKIT_HTAB_IMPL_TABLE_H */
