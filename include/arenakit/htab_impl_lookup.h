/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/htab_impl_lookup.h - finding one key: in a chain, under its
 * bucket's lock (following a growth's moves), and lock-free (a seqlock
 * read of the generation, for a hit as for a miss); and the locked lookup
 * that copies a value out (ak_htab_lookup_copy).
 * Internal: part of <arenakit/htab.h> (through htab_impl.h).
 */
#ifndef __ARENAKIT_HTAB_H
#error "<arenakit/htab_impl_lookup.h> is internal: include <arenakit/htab.h>"
#elif !defined(__ARENAKIT_HTAB_IMPL_LOOKUP_H)
#define __ARENAKIT_HTAB_IMPL_LOOKUP_H

#include <arenakit/alloc.h>
#include <arenakit/lock.h>

/*
 * Find the key @w of @words words and hash @hash in the chain of @bucket.
 * Returns 0 with *@found set (or NULL), or -AK_EBUDGET. *@link gets the
 * word that points at the node found (for unlinking), when @link is given;
 * *@len the nodes passed (the chain's length, on a miss), when @len is;
 * *@tok an ak_dep() token of the last link read, and on a hit of the key
 * words too, when @tok is (a lock-free reader's re-check is ordered after
 * the walk by it: htab_impl.h).
 */
static __ak_always_inline int __ak_htab_chain_find(unsigned long long __arena *bucket,
						   unsigned long long hash,
						   const unsigned long long *w,
						   unsigned int words,
						   struct ak_htab_node __arena **found,
						   unsigned long long __arena **link,
						   unsigned int *len, unsigned long long *tok)
{
	struct ak_htab_node __arena *node = __ak_htab_node_of(ak_read_once(*bucket));
	unsigned long long __arena *at = bucket;
	/* Opaque: a count from a constant keeps the verifier's walk from converging. */
	unsigned int n = len ? (unsigned int)ak_opaque_zero() : 0;

	if (tok)
		*tok = ak_dep(node);
	*found = 0;
	while (node) {
		ak_cond_break_label(cut);
		if (node->hash == hash && (tok ? __ak_htab_key_equal_dep(node, w, 0, words, tok) :
						 __ak_htab_key_equal(node, w, words))) {
			*found = node;
			break;
		}
		at = (unsigned long long __arena *)&node->next;
		node = ak_read_once(node->next);
		/* Before the loop's test: after it the compiler knows a NULL. */
		if (tok)
			*tok = ak_dep(node);
		n++;
	}
	if (link)
		*link = at;
	if (len)
		*len = n;
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
						  const unsigned long long *w,
						  unsigned int words,
						  unsigned long long __arena **bucketp,
						  struct ak_htab_node __arena **nodep)
{
	unsigned long long __arena *bucket;
	unsigned long long word;
	struct __ak_htab_where at;
	unsigned int tries;
	int err = -EBUSY;

	for (tries = (unsigned int)ak_opaque_zero(); tries < AK_HTAB_LOOKUP_TRIES && ak_can_loop;
	     tries++) {
		__ak_htab_where(h, ak_read_once(h->cur), w, words, &at);
		bucket = at.bucket;
		err = ak_bit_lock_acquire(bucket);
		if (err)
			return err;
		word = ak_read_once(*bucket);
		if (word == (__AK_HTAB_MOVED | __AK_HTAB_LOCKED) ||
		    ((word & __AK_HTAB_MOVED) && !at.newer)) {
			/*
			 * Moved, or partly moved by a migration begun after
			 * __ak_htab_where looked (it named no newer bucket, and
			 * the rest is there): look again. The caller holds the
			 * table, so no later migration begins meanwhile.
			 */
			ak_bit_lock_release(bucket);
			err = -EBUSY;
			continue;
		}
		err = __ak_htab_chain_find(bucket, at.hash, w, words, nodep, 0, 0, 0);
		if (!err && !*nodep && at.newer && (ak_read_once(*bucket) & __AK_HTAB_MOVED)) {
			/*
			 * Partly moved, and held still by its lock: the rest is in
			 * the new bucket (locked second, as a mover does).
			 */
			err = ak_bit_lock_acquire(at.newer);
			ak_bit_lock_release(bucket);
			if (err)
				return err;
			bucket = at.newer;
			err = __ak_htab_chain_find(bucket, at.nhash, w, words, nodep, 0, 0, 0);
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

/*
 * A lock-free lookup reads between two reads of the generation, as a
 * sequence count's reader does: what it reads there is checked, never
 * trusted, and may race with writers by design (atomic.h's
 * AK_ACCESS_ATOMIC_NEXT, which bounds it by this many accesses).
 */
#define __AK_HTAB_READ_ACCESSES 4096

/* Look the key @w of @words words up. */
static __ak_always_inline void __arena *__ak_htab_lookup_impl(struct ak_htab __arena *h,
							      const unsigned long long *w,
							      unsigned int words, int *errp)
{
	struct __ak_htab_table __arena *cur;
	unsigned long long gen, head, tok;
	struct __ak_htab_where at;
	/* Its own variable: a may_goto exit must not store an unset bucket. */
	unsigned long long __arena *locked = 0;
	struct ak_htab_node __arena *node;
	unsigned int tries;
	int err = 0;

	/*
	 * Lock-free first. A miss is the answer only if nothing could have
	 * led the walk astray: the generation did not move (no node it passed
	 * was freed, no array was published) and the bucket was unlocked and
	 * is unchanged (a mover relinks the nodes of the locked bucket it
	 * moves, and a reader that follows a moved node ends in another chain).
	 * A hit is the answer only if the generation did not move either: the
	 * node, or the array the walk began in, may have been freed and taken
	 * by anyone (this table, another, any object) between two of the
	 * reads, and the key found in another owner's bytes; every free comes
	 * after a move. A node a mover relinked is still the key's entry.
	 * The reads in between are ordered after the first generation read
	 * and before the re-check by address dependencies (htab_impl.h).
	 */
	for (tries = (unsigned int)ak_opaque_zero(); tries < AK_HTAB_LOOKUP_TRIES && ak_can_loop;
	     tries++) {
		gen = ak_read_once(h->gen);
		AK_ACCESS_ATOMIC_NEXT(__AK_HTAB_READ_ACCESSES);
		cur = ak_read_once_dep(h->cur, ak_dep(gen));
		if (!cur) {
			err = -EINVAL;
			goto fail;
		}
		__ak_htab_where(h, cur, w, words, &at);
		head = ak_read_once(*at.bucket);
		err = __ak_htab_chain_find(at.bucket, at.hash, w, words, &node, 0, 0, &tok);
		/* A partly moved old bucket: the rest is in the new one. */
		if (!err && !node && at.newer && (head & __AK_HTAB_MOVED))
			err = __ak_htab_chain_find(at.newer, at.nhash, w, words, &node, 0, 0, &tok);
		if (err)
			goto fail;
		if (node) {
			if (ak_read_once_dep(h->gen, tok) == gen)
				return __ak_htab_value_at(node, words);
			continue;
		}
		if (!(head & (__AK_HTAB_LOCKED | __AK_HTAB_MOVED)) &&
		    ak_read_once_dep(*at.bucket, tok) == head && ak_read_once_dep(h->gen, tok) == gen)
			goto fail_noent;
	}
	/*
	 * The table kept changing: look under the bucket's lock, held so that
	 * an old array is not freed while its bucket is locked.
	 */
	AK_ACCESS_ATOMIC_NEXT(0);
	__ak_htab_hold(h);
	err = __ak_htab_lock_find(h, w, words, &locked, &node);
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
 * A lookup's common case: no migration in progress, and the table not
 * changed under the walk. Straight-line code in the caller's frame, the
 * key's words held in registers, the bucket's word read once for the walk
 * and once to check a miss, the generation once more for a hit (the checks
 * of __ak_htab_lookup_impl's first try). Returns 1 if it cannot answer (a
 * migration, a table not initialised, a table that changed meanwhile): the
 * full lookup then runs, from the start. Else 0, with *@v the value's
 * address, or NULL and *@errp set (-ENOENT, -AK_EBUDGET).
 */
static __ak_always_inline int __ak_htab_lookup_fast(struct ak_htab __arena *h,
						    const unsigned long long *w, unsigned int words,
						    void __arena **v, int *errp)
{
	/* The key's first words in locals, not a stack copy: the frame stays small. */
	unsigned long long k0 = w[0], k1 = words > 1 ? w[1] : 0, gen, head, hash, tok, ktok, word;
	struct __ak_htab_table __arena *cur;
	unsigned long long __arena *bucket;
	struct ak_htab_node __arena *node;

	/* Each read ordered after the one before, as __ak_htab_lookup_impl's. */
	gen = ak_read_once(h->gen);
	AK_ACCESS_ATOMIC_NEXT(__AK_HTAB_READ_ACCESSES);
	cur = ak_read_once_dep(h->cur, ak_dep(gen));
	if (!cur || ak_read_once_dep(h->old, ak_dep(cur)))
		return 1;
	hash = __ak_htab_hash(cur, w, words);
	bucket = __ak_htab_bucket_of(cur, hash);
	head = ak_read_once(*bucket);
	tok = ak_dep(head);
	for (node = __ak_htab_node_of(head); node;) {
		ak_cond_break_label(cut);
		if (node->hash == hash) {
			word = ak_read_once(node->data[0]);
			ktok = ak_dep(word);	/* each word's token before the branch on it */
			if (word == k0 && (words < 2 || (word = ak_read_once(node->data[1]),
							 ktok |= ak_dep(word), word == k1)) &&
			    __ak_htab_key_equal_dep(node, w, 2, words, &ktok)) {
				/* A hit's check, as __ak_htab_lookup_impl's. */
				if (ak_read_once_dep(h->gen, ktok) != gen)
					return 1;
				*v = __ak_htab_value_at(node, words);
				return 0;
			}
		}
		node = ak_read_once(node->next);
		tok = ak_dep(node);	/* before the loop's test, as in __ak_htab_chain_find */
	}
	if (head & (__AK_HTAB_LOCKED | __AK_HTAB_MOVED) || ak_read_once_dep(*bucket, tok) != head ||
	    ak_read_once_dep(h->gen, tok) != gen)
		return 1;
	*errp = -ENOENT;
	*v = 0;
	return 0;
cut:
	*errp = -AK_EBUDGET;
	*v = 0;
	return 0;
}

/* ak_htab_lookup: the key loaded into words, then the lookup of its width. */
#define __ak_htab_lookup_key(h, key, err)				\
	({								\
		struct ak_htab __arena *___ak_h = (h);			\
		typeof(key) ___ak_key = (key);				\
		unsigned long long ___ak_k[__AK_KEY_WORDS(sizeof(*___ak_key))]; \
		const void *___ak_kp;					\
		void __arena *___ak_v = 0;				\
		int *___ak_e = (err), ___ak_err = -EINVAL;		\
									\
		if (sizeof(*___ak_key) == ___ak_h->key_size) {		\
			___ak_kp = __ak_htab_key_words(___ak_k, ___ak_key); \
			___ak_v = (void __arena *)__AK_HTAB_BY_WIDTH(__ak_htab_lookup, \
				__AK_KEY_WORDS(sizeof(*___ak_key)),	\
				___ak_h, ___ak_kp, &___ak_err); \
		}							\
		if (!___ak_v && ___ak_e)				\
			*___ak_e = ___ak_err;				\
		___ak_v;						\
	})

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
	err = __ak_htab_lock_find(h, w, words, &bucket, &node);
	if (err) {
		__ak_htab_unhold(h);
		l->err = err;
		return 0;
	}
	l->bucket = bucket;
	return __ak_htab_value_at(node, words);
}

static inline void __ak_htab_unlock(struct ak_htab __arena *h, struct __ak_htab_locked *l)
{
	ak_bit_lock_release(l->bucket);
	__ak_htab_unhold(h);
}

/* ak_htab_lookup_copy: the value copied with its bucket locked. */
#define __ak_htab_lookup_copy_key(h, key, value)			\
	({								\
		struct ak_htab __arena *___ak_h = (h);			\
		typeof(key) ___ak_key = (key);				\
		typeof(value) ___ak_val = (value);			\
		unsigned long long ___ak_k[__AK_KEY_WORDS(sizeof(*___ak_key))]; \
		const void *___ak_kp;					\
		struct __ak_htab_locked ___ak_l = { .err = -EINVAL };	\
		void __arena *___ak_v;					\
									\
		if (sizeof(*___ak_key) == ___ak_h->key_size &&		\
		    sizeof(*___ak_val) == ___ak_h->value_size) {	\
			___ak_kp = __ak_htab_key_words(___ak_k, ___ak_key); \
			___ak_v = (void __arena *)__AK_HTAB_BY_WIDTH(__ak_htab_lookup_lock, \
				__AK_KEY_WORDS(sizeof(*___ak_key)),	\
				___ak_h, ___ak_kp, &___ak_l); \
			__ak_keyed_fetch_held(___ak_v, 1, ___ak_val, ___ak_v, \
				(__ak_htab_unlock(___ak_h, &___ak_l), ___ak_l.err = 0)); \
		}							\
		___ak_l.err;						\
	})

#endif /* __ARENAKIT_HTAB_IMPL_LOOKUP_H */
