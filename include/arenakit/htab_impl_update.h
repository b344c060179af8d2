/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/htab_impl_update.h - changing one key: unlink, the LRU's
 * evictions and marks, update (its begin under the bucket's lock and its
 * end, which links a new node), lookup_or_init, delete; then the calls'
 * out-of-line versions, one per key width (htab_impl_key.h's
 * __AK_HTAB_WIDTH), which the macros of htab.h reach; and the table's
 * count, limit and reserve.
 * Internal: part of <arenakit/htab.h> (through htab_impl.h).
 */
#ifndef __ARENAKIT_HTAB_H
#error "<arenakit/htab_impl_update.h> is internal: include <arenakit/htab.h>"
#elif !defined(__ARENAKIT_HTAB_IMPL_UPDATE_H)
#define __ARENAKIT_HTAB_IMPL_UPDATE_H

#include <arenakit/alloc.h>
#include <arenakit/lock.h>
#include <arenakit/keyed_impl.h>

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
 * A limited table's eviction (AK_HTAB_LRU): CLOCK, the second-chance
 * approximation of LRU that page caches use. Each node of an LRU table
 * has a word past its value (h->used_word) that a use sets
 * (__ak_htab_mark_held, __ak_htab_mark_unheld) and an insert starts
 * clear. From the hand (a
 * bucket index; each eviction moves it on by AK_HTAB_EVICT_SCAN) the
 * eviction walks the current array's buckets, clearing the marks it
 * passes (a second chance), and takes the first node it finds unmarked;
 * past AK_HTAB_EVICT_SCAN marked ones, the next node whatever its mark.
 * A bucket locked by someone else, or by the caller (@own), is passed by,
 * not waited for: no lock is waited for while the caller holds its own.
 * Bounded: every bucket once at most, and may_goto; a search the budget
 * cut says so (__AK_HTAB_EVICT_CUT), never "none".
 *
 * The node is unlinked as a delete does (count down, generation up), under
 * its bucket's lock, and given to the caller to reuse for its insert: a
 * lock-free reader standing on it sees the generation move, as after a
 * delete and a free. The array is held while its buckets are looked at.
 * Return: the node's address, 0 if none could be had, or
 * __AK_HTAB_EVICT_CUT if the budget cut the search.
 */
#define __AK_HTAB_EVICT_CUT 1ULL	/* no node's address: nodes are 8-byte aligned */

__ak_global unsigned long long __ak_htab_evict(__arg_arena struct ak_htab __arena *h,
					       __arg_arena unsigned long long __arena *own)
{
	struct __ak_htab_table __arena *t;
	struct ak_htab_node __arena *node, *victim = 0;
	unsigned long long __arena *bucket;
	unsigned long long __arena *link;
	unsigned long long b, i, word;
	unsigned int used = h->used_word, passed = (unsigned int)ak_opaque_zero();

	__ak_htab_hold(h);
	t = ak_read_once(h->cur);
	b = ak_fetch_add(&h->evict_hand, AK_HTAB_EVICT_SCAN);
	for (i = ak_opaque_zero(); i < t->nbuckets && !victim; i++, b++) {
		ak_cond_break_label(cut);
		bucket = &t->buckets[b & (t->nbuckets - 1)];
		word = ak_read_once(*bucket);
		if (bucket == own || !__ak_htab_node_of(word) ||
		    (word & (__AK_HTAB_LOCKED | __AK_HTAB_MOVED)) ||
		    ak_cmpxchg(bucket, word, word | __AK_HTAB_LOCKED) != word)
			continue;
		link = bucket;
		for (node = __ak_htab_node_of(word); node;) {
			ak_cond_break_label(unlock_cut);
			if (passed < AK_HTAB_EVICT_SCAN && node->data[used]) {
				node->data[used] = 0;	/* a second chance */
				passed++;
				link = (unsigned long long __arena *)&node->next;
				node = node->next;
				continue;
			}
			__ak_htab_unlink_at(h, bucket, link, node);
			ak_atomic_add(&h->evicted, 1);
			victim = node;
			break;
		}
		ak_bit_lock_release(bucket);
	}
	__ak_htab_unhold(h);
	return (unsigned long long)victim;
unlock_cut:
	ak_bit_lock_release(bucket);
cut:
	__ak_htab_unhold(h);
	return __AK_HTAB_EVICT_CUT;
}

/*
 * Make room for a new entry in a limited table, with @own, the new entry's
 * bucket, locked: count it in, or past the limit evict one (an LRU table:
 * its node, out of the table, in *@spare for the new entry) or refuse.
 * The count is taken before the check, so racing inserts cannot pass the
 * limit together: h->count may show one more per inserting CPU for an
 * instant, never more entries than the limit.
 * Return: 0; -E2BIG (counted in h->refused); -AK_EBUDGET if the budget
 * cut an LRU table's search for a node to evict (not a refusal: call again).
 */
static __ak_always_inline int __ak_htab_claim(struct ak_htab __arena *h,
					      unsigned long long __arena *own,
					      struct ak_htab_node __arena **spare)
{
	unsigned long long victim = 0;

	if (ak_fetch_add(&h->count, 1) < ak_read_once(h->max_entries))
		return 0;
	/* An evicted node was counted out: this entry's count takes its place. */
	if (ak_read_once(h->used_word)) {
		victim = __ak_htab_evict(h, own);
		if (victim && victim != __AK_HTAB_EVICT_CUT) {
			*spare = (struct ak_htab_node __arena *)victim;
			return 0;
		}
	}
	ak_atomic_add(&h->count, -1ULL);
	if (victim == __AK_HTAB_EVICT_CUT)
		return -AK_EBUDGET;
	ak_atomic_add(&h->refused, 1);
	return -E2BIG;
}

/*
 * Mark the entry whose value is at @value used (an LRU table; no store if
 * it is), its bucket held by the caller: nothing can free the node.
 */
static __ak_always_inline void __ak_htab_mark_held(struct ak_htab __arena *h, void __arena *value)
{
	unsigned int used = ak_read_once(h->used_word);
	unsigned long long __arena *mark;

	if (!used || !value)
		return;
	mark = (unsigned long long __arena *)value + (used - h->key_words);
	if (!ak_read_once(*mark))
		ak_write_once(*mark, 1);
}

/*
 * Set the mark of the node whose value is at @value, if it is still an
 * entry of @h: found by its address in the chain of the bucket its hash
 * names in each array (the old one first, during a migration), under
 * that bucket's lock, and the array held. A lock-free caller's address
 * may be a node a delete freed and any owner took since: what is read
 * through it only picks the buckets to look in, and the one write goes to
 * a node linked in one of them, which no one can free while it is locked.
 * A node that moves between the two looks is not marked (a lost hint).
 * Return: 1 if marked, else 0.
 */
__ak_global int __ak_htab_mark_locked(__arg_arena struct ak_htab __arena *h,
				      __arg_arena unsigned long long __arena *value)
{
	struct ak_htab_node __arena *node, *n;
	struct __ak_htab_table __arena *t;
	unsigned long long __arena *bucket;
	unsigned int used = h->used_word, i;
	int marked = 0;

	node = (struct ak_htab_node __arena *)(value - h->key_words) - 1;
	__ak_htab_hold(h);
	for (i = (unsigned int)ak_opaque_zero(); i < 2 && !marked; i++) {
		t = i ? ak_read_once(h->cur) : ak_read_once(h->old);
		if (!t)
			continue;
		bucket = __ak_htab_bucket_of(t, ak_read_once(node->hash));
		if (ak_bit_lock_acquire(bucket))
			continue;
		for (n = __ak_htab_node_of(ak_read_once(*bucket)); n; n = n->next) {
			ak_cond_break_label(unlock);
			if (n == node) {
				ak_write_once(n->data[used], 1);
				marked = 1;
				break;
			}
		}
unlock:
		ak_bit_lock_release(bucket);
	}
	__ak_htab_unhold(h);
	return marked;
}

/*
 * A use counted through an address a lock-free lookup returned (touch,
 * lookup_or_init of a key present): the mark read with no lock, and set
 * only under the bucket's lock (__ak_htab_mark_locked). A stale read costs
 * a lost hint or one needless locked look.
 */
static __ak_always_inline void __ak_htab_mark_unheld(struct ak_htab __arena *h, void __arena *value)
{
	unsigned int used = ak_read_once(h->used_word);

	if (used && value &&
	    !ak_read_once(*((unsigned long long __arena *)value + (used - h->key_words))))
		__ak_htab_mark_locked(h, (unsigned long long __arena *)value);
}

/* An update's flags past the public ones: ak_htab_lookup_or_init's insert. */
#define __AK_HTAB_INIT 3

/* An update in progress: the bucket it holds locked and the node it fills. */
struct __ak_htab_update {
	unsigned long long __arena *bucket;
	struct ak_htab_node __arena *node;
	int fresh;			/* a new node: linked by __ak_htab_update_end; 2: counted */
	int err;
};

/*
 * Lock the home bucket of @key and find its node there: 0 with the bucket
 * locked (*@node NULL if absent and the flags allow adding it; *@hash the
 * key's hash in the bucket's array, *@len the chain's length), or an
 * error with nothing held.
 */
static __ak_always_inline int __ak_htab_lock_find_for(struct ak_htab __arena *h,
						      const unsigned long long *w,
						      unsigned int words,
						      unsigned long long flags,
						      enum __ak_kind caller,
						      unsigned long long __arena **bucket,
						      struct ak_htab_node __arena **node,
						      unsigned long long *hash,
						      unsigned int *len)
{
	int err = __ak_htab_lock_home(h, w, words, caller, bucket, hash);

	if (err)
		return err;
	err = __ak_htab_chain_find(*bucket, *hash, w, words, node, 0, len, 0);
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
 *
 * An insert into a chain too long (__ak_htab_chain_too_long) asks for a
 * reseed, which the next sleepable update (this one's too late: it holds
 * a lock) or ak_htab_reserve starts.
 */
static __ak_always_inline void __arena *
__ak_htab_update_begin(struct ak_htab __arena *h, const unsigned long long *w, unsigned int words,
		       unsigned long long flags, enum __ak_kind caller,
		       struct __ak_htab_update *u)
{
	struct ak_htab_node __arena *node, *spare;
	unsigned long long __arena *bucket;
	unsigned long long hash;
	unsigned int i, len;
	int err;

	/*
	 * u->fresh is 2 from a limited table's count taken (__ak_htab_claim)
	 * until the node is linked: kept there, not in a local, as this
	 * function's frame is on the deepest call chain of the library.
	 */
	u->fresh = 0;
	if (flags > __AK_HTAB_INIT || !ak_read_once(h->cur)) {
		err = -EINVAL;
		goto fail;
	}
	if (caller == __AK_SLEEPABLE)
		__ak_htab_resize(h, 1);	/* may not find memory: this entry needs a node only */
	err = __ak_htab_lock_find_for(h, w, words, flags, caller, &bucket, &node, &hash, &len);
	if (err)
		goto fail;
	if (node) {
		__ak_htab_mark_held(h, __ak_htab_value_at(node, words));	/* an update is a use */
	} else {
		spare = 0;
		if (ak_read_once(h->max_entries)) {
			err = __ak_htab_claim(h, bucket, &spare);
			if (err) {
				ak_bit_lock_release(bucket);
				goto fail;
			}
			u->fresh = 2;
		}
		if (!spare)
			spare = __ak_alloc_from_cache(h->node_size);
		if (!spare) {
			ak_bit_lock_release(bucket);
			spare = caller == __AK_SLEEPABLE ?
				ak_alloc(h->node_size, &err) :
				ak_alloc_nosleep(h->node_size, &err);
			if (!spare)
				goto uncount;
			err = __ak_htab_lock_find_for(h, w, words, flags, caller, &bucket,
						      &node, &hash, &len);
			if (err || node) {
				/* Added by someone else meanwhile; this free never waits. */
				ak_free_nosleep(spare);
				if (err)
					goto uncount;
				if (u->fresh)
					ak_atomic_add(&h->count, -1ULL);
				u->fresh = 0;
			}
		}
		if (!node) {
			if (len > AK_HTAB_CHAIN_MAX && !ak_read_once(h->reseed_wanted) &&
			    __ak_htab_chain_too_long(h, len))
				ak_write_once(h->reseed_wanted, 1);
			spare->hash = hash;
			__AK_UNROLL
			for (i = 0; i < words; i++)
				spare->data[i] = w[i];
			node = spare;
			/*
			 * Unmarked until used, as the kernel's LRU lists a new
			 * entry inactive. Only a limited table (fresh 2) can be
			 * an LRU one: a table without a limit reads no more.
			 */
			if (u->fresh == 2) {
				i = ak_read_once(h->used_word);
				if (i)
					node->data[i] = 0;
			}
			u->fresh = u->fresh ?: 1;
		}
	}
	u->node = node;
	u->bucket = bucket;
	return __ak_htab_value_at(node, words);
uncount:
	if (u->fresh)
		ak_atomic_add(&h->count, -1ULL);
	u->fresh = 0;
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
		if (u->fresh == 1)	/* 2: counted in by __ak_htab_claim */
			ak_atomic_add(&h->count, 1);
		ak_fetch_add(&h->gen, 1);
	}
	ak_bit_lock_release(u->bucket);
}

/*
 * Store *@value under *@key as @flags say, allocating as a caller of @kind
 * (sleepable or nosleep) may: the value's address, or NULL with *@errp
 * set. With __AK_HTAB_INIT (internal: ak_htab_lookup_or_init), an entry
 * already there keeps its value and its address is returned; only a new
 * one gets *@value.
 */
#define __ak_htab_update_value(h, key, value, flags, kind, errp)	\
	({								\
		struct ak_htab __arena *___ak_h = (h);			\
		typeof(key) ___ak_key = (key);				\
		typeof(value) ___ak_val = (value);			\
		unsigned long long ___ak_flags = (flags);		\
		unsigned long long ___ak_k[__AK_KEY_WORDS(sizeof(*___ak_key))]; \
		const void *___ak_kp;					\
		struct __ak_htab_update ___ak_u = { .err = -EINVAL };	\
		void __arena *___ak_v = 0;				\
									\
		if (sizeof(*___ak_key) == ___ak_h->key_size &&		\
		    sizeof(*___ak_val) == ___ak_h->value_size) {	\
			___ak_kp = __ak_htab_key_words(___ak_k, ___ak_key); \
			___ak_v = (void __arena *)__AK_HTAB_BY_WIDTH(__ak_htab_begin_##kind, \
				__AK_KEY_WORDS(sizeof(*___ak_key)),	\
				___ak_h, ___ak_kp, ___ak_flags, &___ak_u); \
			__ak_keyed_store_held(___ak_v,			\
				___ak_flags != __AK_HTAB_INIT || ___ak_u.fresh, \
				___ak_v, ___ak_val, __ak_htab_update_end(___ak_h, &___ak_u)); \
		}							\
		if (!___ak_v)						\
			*(errp) = ___ak_u.err;				\
		___ak_v;						\
	})

/* ak_htab_update[_nosleep]: the flags a caller may give, then the store. */
#define __ak_htab_update(h, key, value, flags, kind)			\
	({								\
		struct ak_htab __arena *___ak_uh = (h);			\
		typeof(key) ___ak_ukey = (key);				\
		typeof(value) ___ak_uval = (value);			\
		unsigned long long ___ak_uflags = (flags);		\
		int ___ak_uerr = -EINVAL;				\
									\
		if (___ak_uflags <= AK_HTAB_EXIST &&			\
		    __ak_htab_update_value(___ak_uh, ___ak_ukey, ___ak_uval, ___ak_uflags, \
					   kind, &___ak_uerr))		\
			___ak_uerr = 0;					\
		___ak_uerr;						\
	})

/* ak_htab_lookup_or_init: a lock-free lookup, then an insert that keeps an entry found. */
#define __ak_htab_lookup_or_init_key(h, key, init, err)			\
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
					nosleep, &___ak_oerr); \
			else						\
				__ak_htab_mark_unheld(___ak_oh, ___ak_ov); \
		}							\
		if (!___ak_ov && ___ak_oe)				\
			*___ak_oe = ___ak_oerr;				\
		___ak_ov;						\
	})

/*
 * Unlink the node of @key under its bucket's lock; the caller owns it then
 * (reads its value, frees it). 0 with *@nodep set, or an error.
 */
static __ak_always_inline int __ak_htab_unlink(struct ak_htab __arena *h,
					       const unsigned long long *w, unsigned int words,
					       enum __ak_kind caller,
					       struct ak_htab_node __arena **nodep)
{
	unsigned long long __arena *bucket;
	unsigned long long __arena *link;
	struct ak_htab_node __arena *node;
	unsigned long long hash;
	int err;

	if (!ak_read_once(h->cur))
		return -EINVAL;
	err = __ak_htab_lock_home(h, w, words, caller, &bucket, &hash);
	if (err)
		return err;
	err = __ak_htab_chain_find(bucket, hash, w, words, &node, &link, 0, 0);
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
						    enum __ak_kind caller)
{
	struct ak_htab_node __arena *node;
	int err = __ak_htab_unlink(h, w, words, caller, &node);

	if (err)
		return err;
	return caller == __AK_SLEEPABLE ? ak_free(node) : ak_free_nosleep(node);
}

__ak_global int __ak_htab_free_nosleep(__arg_arena void __arena *node)
{
	return ak_free_nosleep(node);
}

#define __ak_htab_delete_key(h, key, kind)				\
	({								\
		struct ak_htab __arena *___ak_h = (h);			\
		typeof(key) ___ak_key = (key);				\
		unsigned long long ___ak_k[__AK_KEY_WORDS(sizeof(*___ak_key))]; \
		const void *___ak_kp;					\
		int ___ak_err = -EINVAL;				\
									\
		if (sizeof(*___ak_key) == ___ak_h->key_size) {		\
			___ak_kp = __ak_htab_key_words(___ak_k, ___ak_key); \
			___ak_err = __AK_HTAB_BY_WIDTH(__ak_htab_delete_##kind, \
						       __AK_KEY_WORDS(sizeof(*___ak_key)), \
						       ___ak_h, ___ak_kp); \
		}							\
		___ak_err;						\
	})

/* ak_htab_lookup_and_delete: unlink under the lock, copy the value, free the node. */
#define __ak_htab_lookup_and_delete_key(h, key, value)			\
	({								\
		struct ak_htab __arena *___ak_h = (h);			\
		typeof(key) ___ak_key = (key);				\
		typeof(value) ___ak_val = (value);			\
		unsigned long long ___ak_k[__AK_KEY_WORDS(sizeof(*___ak_key))]; \
		const void *___ak_kp;					\
		unsigned long long ___ak_n = 0;				\
		int ___ak_err = -EINVAL;				\
									\
		if (sizeof(*___ak_key) == ___ak_h->key_size &&		\
		    sizeof(*___ak_val) == ___ak_h->value_size) {	\
			___ak_kp = __ak_htab_key_words(___ak_k, ___ak_key); \
			___ak_err = __AK_HTAB_BY_WIDTH(__ak_htab_unlink_nosleep, \
				__AK_KEY_WORDS(sizeof(*___ak_key)),	\
				___ak_h, ___ak_kp, &___ak_n); \
			if (!___ak_err) {				\
				__ak_arena_fetch(___ak_val,	\
					__ak_htab_value(___ak_h, (struct ak_htab_node __arena *)___ak_n), \
					sizeof(*___ak_val));		\
				___ak_err = __ak_htab_free_nosleep((void __arena *)___ak_n); \
			}						\
		}							\
		___ak_err;						\
	})

/* The out-of-line versions of the calls above, one per key width (htab_impl_key.h). */
__AK_HTAB_WIDTHS(__AK_HTAB_WIDTH, )

static inline unsigned long long ak_htab_count(const struct ak_htab __arena *h)
{
	return ak_read_once(h->count);
}

static inline int ak_htab_set_limit(struct ak_htab __arena *h, unsigned long long max_entries,
				    unsigned int flags)
{
	if (!ak_read_once(h->cur) || (flags & ~AK_HTAB_LRU) ||
	    ((flags & AK_HTAB_LRU) && !max_entries) || (h->used_word && !(flags & AK_HTAB_LRU)))
		return -EINVAL;
	if ((flags & AK_HTAB_LRU) && !h->used_word) {
		if (ak_read_once(h->count))
			return -EBUSY;
		/* The mark is the word after the value's. */
		h->used_word = h->key_words + (h->value_size + 7) / 8;
		h->node_size += 8;
	}
	ak_write_once(h->max_entries, max_entries);
	return 0;
}

static inline int ak_htab_reserve(struct ak_htab __arena *h, unsigned long long n)
{
	if (!ak_read_once(h->cur))
		return -EINVAL;
	__ak_htab_resize(h, 0);		/* a reseed a non-sleepable insert asked for */
	return ak_alloc_reserve(h->node_size, n);
}

#endif /* __ARENAKIT_HTAB_IMPL_UPDATE_H */
