/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/htab_impl_ops.h - the calls on one key: finding it in a chain,
 * lookup (lock-free, then under the bucket's lock), update, delete, and
 * the locked lookup that copies; then their out-of-line versions, one per
 * key width, which the calls' macros (htab.h) reach. Internal: part of
 * <arenakit/htab.h> (through htab_impl.h).
 */
#ifndef __ARENAKIT_HTAB_H
#error "<arenakit/htab_impl_ops.h> is internal: include <arenakit/htab.h>"
#elif !defined(__ARENAKIT_HTAB_IMPL_OPS_H)
#define __ARENAKIT_HTAB_IMPL_OPS_H

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
		unsigned long long ___ak_k[__AK_HTAB_WORDS(sizeof(*___ak_key))]; \
		const void *___ak_kp;					\
		void __arena *___ak_v = 0;				\
		int *___ak_e = (err), ___ak_err = -EINVAL;		\
									\
		if (sizeof(*___ak_key) == ___ak_h->key_size) {		\
			___ak_kp = __ak_htab_key_words(___ak_k, ___ak_key); \
			___ak_v = (void __arena *)__AK_HTAB_BY_WIDTH(__ak_htab_lookup, \
				__AK_HTAB_WORDS(sizeof(*___ak_key)),	\
				___ak_h, ___ak_kp, &___ak_err); \
		}							\
		if (!___ak_v && ___ak_e)				\
			*___ak_e = ___ak_err;				\
		___ak_v;						\
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
 * Bounded: every bucket once at most, and may_goto.
 *
 * The node is unlinked as a delete does (count down, generation up), under
 * its bucket's lock, and given to the caller to reuse for its insert: a
 * lock-free reader standing on it sees the generation move, as after a
 * delete and a free. The array is held while its buckets are looked at.
 * Return: the node's address, or 0 if none could be had.
 */
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
		ak_cond_break_label(out);
		bucket = &t->buckets[b & (t->nbuckets - 1)];
		word = ak_read_once(*bucket);
		if (bucket == own || !__ak_htab_node_of(word) ||
		    (word & (__AK_HTAB_LOCKED | __AK_HTAB_MOVED)) ||
		    ak_cmpxchg(bucket, word, word | __AK_HTAB_LOCKED) != word)
			continue;
		link = bucket;
		for (node = __ak_htab_node_of(word); node;) {
			ak_cond_break_label(unlock);
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
unlock:
		ak_bit_lock_release(bucket);
	}
out:
	__ak_htab_unhold(h);
	return (unsigned long long)victim;
}

/*
 * Make room for a new entry in a limited table, with @own, the new entry's
 * bucket, locked: count it in, or past the limit evict one (an LRU table:
 * its node, out of the table, in *@spare for the new entry) or refuse.
 * The count is taken before the check, so racing inserts cannot pass the
 * limit together: h->count may show one more per inserting CPU for an
 * instant, never more entries than the limit.
 * Return: 0, or -E2BIG (counted in h->refused).
 */
static __ak_always_inline int __ak_htab_claim(struct ak_htab __arena *h,
					      unsigned long long __arena *own,
					      struct ak_htab_node __arena **spare)
{
	if (ak_fetch_add(&h->count, 1) < ak_read_once(h->max_entries))
		return 0;
	/* An evicted node was counted out: this entry's count takes its place. */
	if (ak_read_once(h->used_word)) {
		*spare = (struct ak_htab_node __arena *)__ak_htab_evict(h, own);
		if (*spare)
			return 0;
	}
	ak_atomic_add(&h->count, -1ULL);
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
						      enum __ak_htab_caller caller,
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
		       unsigned long long flags, enum __ak_htab_caller caller,
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
	if (caller == __AK_HTAB_SLEEPABLE)
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
			spare = caller == __AK_HTAB_SLEEPABLE ?
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
		const void *___ak_kp;					\
		struct __ak_htab_update ___ak_u = { .err = -EINVAL };	\
		void __arena *___ak_v = 0;				\
									\
		if (sizeof(*___ak_key) == ___ak_h->key_size &&		\
		    sizeof(*___ak_val) == ___ak_h->value_size) {	\
			___ak_kp = __ak_htab_key_words(___ak_k, ___ak_key); \
			___ak_v = (void __arena *)((caller) == __AK_HTAB_SLEEPABLE ? \
				__AK_HTAB_BY_WIDTH(__ak_htab_begin_sleepable, \
						   __AK_HTAB_WORDS(sizeof(*___ak_key)), \
						   ___ak_h, ___ak_kp, \
						   ___ak_flags, &___ak_u) : \
				__AK_HTAB_BY_WIDTH(__ak_htab_begin_nosleep, \
						   __AK_HTAB_WORDS(sizeof(*___ak_key)), \
						   ___ak_h, ___ak_kp, \
						   ___ak_flags, &___ak_u)); \
			if (___ak_v) {					\
				if (___ak_flags != __AK_HTAB_INIT || ___ak_u.fresh) \
					__ak_arena_store(___ak_v, ___ak_val, \
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
					__AK_HTAB_NOSLEEP, &___ak_oerr); \
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
					       enum __ak_htab_caller caller,
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
		const void *___ak_kp;					\
		int ___ak_err = -EINVAL;				\
									\
		if (sizeof(*___ak_key) == ___ak_h->key_size) {		\
			___ak_kp = __ak_htab_key_words(___ak_k, ___ak_key); \
			___ak_err = (caller) == __AK_HTAB_SLEEPABLE ?	\
				__AK_HTAB_BY_WIDTH(__ak_htab_delete_sleepable, \
						   __AK_HTAB_WORDS(sizeof(*___ak_key)), \
						   ___ak_h, ___ak_kp) :	\
				__AK_HTAB_BY_WIDTH(__ak_htab_delete_nosleep, \
						   __AK_HTAB_WORDS(sizeof(*___ak_key)), \
						   ___ak_h, ___ak_kp);	\
		}							\
		___ak_err;						\
	})

/* ak_htab_lookup_and_delete: unlink under the lock, copy the value, free the node. */
#define __ak_htab_lookup_and_delete_key(h, key, value)			\
	({								\
		struct ak_htab __arena *___ak_h = (h);			\
		typeof(key) ___ak_key = (key);				\
		typeof(value) ___ak_val = (value);			\
		unsigned long long ___ak_k[__AK_HTAB_WORDS(sizeof(*___ak_key))]; \
		const void *___ak_kp;					\
		unsigned long long ___ak_n = 0;				\
		int ___ak_err = -EINVAL;				\
									\
		if (sizeof(*___ak_key) == ___ak_h->key_size &&		\
		    sizeof(*___ak_val) == ___ak_h->value_size) {	\
			___ak_kp = __ak_htab_key_words(___ak_k, ___ak_key); \
			___ak_err = __AK_HTAB_BY_WIDTH(__ak_htab_unlink_nosleep, \
				__AK_HTAB_WORDS(sizeof(*___ak_key)),	\
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
		unsigned long long ___ak_k[__AK_HTAB_WORDS(sizeof(*___ak_key))]; \
		const void *___ak_kp;					\
		struct __ak_htab_locked ___ak_l = { .err = -EINVAL };	\
		void __arena *___ak_v;					\
									\
		if (sizeof(*___ak_key) == ___ak_h->key_size &&		\
		    sizeof(*___ak_val) == ___ak_h->value_size) {	\
			___ak_kp = __ak_htab_key_words(___ak_k, ___ak_key); \
			___ak_v = (void __arena *)__AK_HTAB_BY_WIDTH(__ak_htab_lookup_lock, \
				__AK_HTAB_WORDS(sizeof(*___ak_key)),	\
				___ak_h, ___ak_kp, &___ak_l); \
			if (___ak_v) {					\
				__ak_arena_fetch(___ak_val, ___ak_v, sizeof(*___ak_val)); \
				__ak_htab_unlock(___ak_h, &___ak_l);	\
				___ak_l.err = 0;			\
			}						\
		}							\
		___ak_l.err;						\
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

#endif /* __ARENAKIT_HTAB_IMPL_OPS_H */
