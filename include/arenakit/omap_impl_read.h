/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/omap_impl_read.h - the read side: the map's sequence count
 * (m->gen) and its lock, the read sections of finds and walk steps, and a
 * walk's cursor. Shared by the BPF calls (omap.h) and the loader's copying
 * walk (omap_user.h); nothing here allocates.
 * Internal: included by <arenakit/omap_impl.h> and <arenakit/omap_user.h>.
 */
#if !defined(__ARENAKIT_OMAP_H) && !defined(__ARENAKIT_OMAP_USER_H)
#error "<arenakit/omap_impl_read.h> is internal: include <arenakit/omap.h> (or omap_user.h)"
#elif !defined(__ARENAKIT_OMAP_IMPL_READ_H)
#define __ARENAKIT_OMAP_IMPL_READ_H

#include <arenakit/lock.h>
#include <arenakit/omap_types.h>

/*
 * The read side's sequence count, m->gen: odd while a holder changes the
 * tree, moved on by every change. A holder makes it odd before its first
 * store to a node or to the map's links (__ak_omap_changing, once a hold)
 * and even before it lets the lock go (__ak_omap_unlock), with the stores
 * between ordered inside those two: the odd count is seen before any of
 * them, and all of them before the even one. A reader that saw the same
 * even count before and after its reads read no store of a change.
 */
static __ak_always_inline void __ak_omap_changing(struct ak_omap __arena *m)
{
	unsigned long long gen = m->gen;	/* only holders write it */

	if (AK_TSO) {
		ak_write_once(m->gen, gen | 1);	/* no branch: odd already, it stays */
		ak_compiler_barrier();	/* TSO keeps the stores after it after it */
	} else if (!(gen & 1)) {
		(void)ak_fetch_add(&m->gen, 1);	/* fully ordered: before the stores after it */
	}
}

static __ak_always_inline void __ak_omap_unlock(struct ak_omap __arena *m)
{
	unsigned long long gen = m->gen;

	if (gen & 1)
		ak_store_release(m->gen, gen + 1);
	ak_lock_release(&m->lock);
}

/* Accesses a read section may make (a descent and a leaf, with room). */
#define __AK_OMAP_READ_ACCESSES 4096

/*
 * A read section's start: the count, odd while a holder changes the tree
 * (the caller waits or takes the lock), and a fence: the reads after it
 * are satisfied after the count's.
 */
static __ak_always_inline unsigned long long __ak_omap_read_begin(const struct ak_omap __arena *m)
{
	unsigned long long gen = ak_read_once(m->gen);

	ak_read_fence();
	AK_ACCESS_ATOMIC_NEXT(__AK_OMAP_READ_ACCESSES);
	return gen;
}

/* Its end: 1 if no change ran since the start read @gen (even), so what was read holds. */
static __ak_always_inline int __ak_omap_read_end(const struct ak_omap __arena *m,
						 unsigned long long gen)
{
	AK_ACCESS_ATOMIC_NEXT(0);
	ak_read_fence();
	return ak_read_once(m->gen) == gen;
}

/* Read sections a find (or a count) tries before it takes the lock (or reads as it is). */
#define __AK_OMAP_READ_TRIES 3

/* What __ak_omap_find_at looks for. */
enum {
	__AK_OMAP_EQ,		/* @k itself */
	__AK_OMAP_GE,		/* the first key at or after @k */
	__AK_OMAP_GT,		/* the first key after @k */
	__AK_OMAP_FIRST,
	__AK_OMAP_LAST,
};

/* Where a find ended: the leaf, and the key's slot in it. */
struct __ak_omap_at {
	__ak_omap_node_t leaf;
	unsigned int pos;
};

/*
 * The entry @mode asks for, its key copied to @key_out, its place in *@at;
 * 0 with *@err -ENOENT if none. With the lock held, or in a read section
 * (__ak_omap_find_impl): the counts it reads are read once and bounded,
 * and the next leaf's link kept in the arena, whatever a change left.
 */
static __ak_always_inline unsigned long long __arena *
__ak_omap_find_at(struct ak_omap __arena *m, const unsigned long long *k, int mode,
		      unsigned long long *key_out, int *err, struct __ak_omap_at *at)
{
	const unsigned long long *where = k;
	__ak_omap_node_t n;
	unsigned int pos = 0, nkeys;

	if (mode == __AK_OMAP_FIRST)
		where = __AK_OMAP_LEFTMOST;
	else if (mode == __AK_OMAP_LAST)
		where = __AK_OMAP_RIGHTMOST;
	n = 0;
	nkeys = 0;
	if (mode == __AK_OMAP_FIRST) {	/* the head's first key is the first */
		n = ak_read_once(m->head);
		nkeys = __ak_omap_nkeys(n);
	}
	if (!nkeys) {
		n = __ak_omap_descend(m, where, NULL);	/* no change: no path */
		nkeys = __ak_omap_nkeys(n);
	}
	if (mode == __AK_OMAP_LAST)
		pos = nkeys ? nkeys - 1 : 0;
	else if (mode != __AK_OMAP_FIRST)
		pos = __ak_omap_slot(m, n, k, mode == __AK_OMAP_GT);
	if (pos >= nkeys && (mode == __AK_OMAP_GE || mode == __AK_OMAP_GT)) {
		/* Past this leaf's keys: the next leaf's first (no leaf but the root is empty). */
		n = ak_read_once(n->next);
		n = n ? __ak_arena_clamp(n) : 0;
		pos = 0;
		nkeys = n ? __ak_omap_nkeys(n) : 0;
	}
	if (!n || pos >= nkeys ||
	    (mode == __AK_OMAP_EQ && __ak_omap_cmp(__ak_omap_key(m, n, pos), k, m->key_words))) {
		*err = -ENOENT;
		return 0;
	}
	__ak_omap_key_get(key_out, m, n, pos);
	at->leaf = n;
	at->pos = pos;
	return __ak_omap_entry(m, n, pos);
}

/* Take @m's lock: 0, -EBUSY or -AK_EBUDGET, or -EINVAL (not initialised) with nothing held. */
static inline int __ak_omap_lock(struct ak_omap __arena *m)
{
	int err = ak_lock_acquire(&m->lock);

	if (err)
		return err;
	if (!m->depth) {
		ak_lock_release(&m->lock);
		return -EINVAL;
	}
	return 0;
}

/*
 * The bodies of the global functions below, for a key of @kw words.
 *
 * A find that does not hold the lock reads in a read section: the count
 * (m->gen) read, even, then the descent and the leaf as with the lock,
 * then the count again. The same count: no change ran during the reads,
 * so they are one state of the map and the answer is as a holder's; the
 * entry's address is returned, as with the lock, and stays the key's
 * until a delete (ak_omap_lookup). Another count: a change ran, and the
 * reads may mix two states; the answer is dropped and the section run
 * again, at most __AK_OMAP_READ_TRIES times, then the lock is taken, so
 * a reader is never starved by writers. Mid-change the words read may be
 * anything the change left: the loops are bounded by constants, the
 * counts read once and bounded, the links kept in the arena; nothing
 * read is written, and nothing read is trusted before the second count.
 * A read fence (atomic.h) orders the first count before the reads and the
 * reads before the second, on arm64 as on x86-64.
 */
static __ak_always_inline unsigned long long
__ak_omap_find_impl(struct ak_omap __arena *m, const unsigned long long *k, int mode,
		    unsigned long long *key_out, int *err)
{
	unsigned long long __arena *entry;
	struct __ak_omap_at at;
	unsigned long long gen;
	unsigned int tries;

	for (tries = 0; __AK_ARENA_CLAMPED && tries < __AK_OMAP_READ_TRIES; tries++) {
		gen = __ak_omap_read_begin(m);
		if (gen & 1) {
			ak_spin_wait();	/* a holder is changing the tree */
			continue;
		}
		if (!ak_read_once(m->depth)) {
			*err = -EINVAL;	/* not initialised */
			return 0;
		}
		entry = __ak_omap_find_at(m, k, mode, key_out, err, &at);
		if (__ak_omap_read_end(m, gen))
			return entry ? (unsigned long long)(entry + m->key_words) : 0;
	}
	*err = __ak_omap_lock(m);
	if (*err)
		return 0;
	entry = __ak_omap_find_at(m, k, mode, key_out, err, &at);
	__ak_omap_unlock(m);
	return entry ? (unsigned long long)(entry + m->key_words) : 0;
}

/* Keys in a program's memory, compared as the tree compares them. */
static __ak_always_inline int __ak_omap_cmp_words(const unsigned long long *a,
						  const unsigned long long *b, unsigned int kw)
{
	unsigned int i;

	for (i = 0; i < kw && i < __AK_OMAP_KW_MAX; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

/*
 * A walk's next entry and its place in *@at, its key in @found, as the
 * map is in the state read (with the lock held, or in a read section
 * that read count @gen); 0 with *@err if none. The cursor is not
 * changed: the caller moves it once the state read is known to hold.
 * While the count is the one the cursor saw, nothing has changed since
 * its last step, so the leaf and slot it kept still hold its last key and
 * the next key is the slot after, or the next leaf's first: no descent.
 * After a change, a descent from its last key; an exact walk is stale
 * then.
 */
static __ak_always_inline unsigned long long __arena *
__ak_omap_step_at(struct ak_omap __arena *m, const struct ak_omap_cursor *c, unsigned long long gen,
		  unsigned long long *found, int *err, struct __ak_omap_at *at)
{
	unsigned long long __arena *entry = 0;
	int same = c->map == (unsigned long long)m;
	unsigned int nkeys;

	at->leaf = (__ak_omap_node_t)c->leaf;
	at->pos = c->pos + 1;
	if (c->started && at->leaf && same && c->gen == gen) {
		nkeys = __ak_omap_nkeys(at->leaf);
		if (at->pos >= nkeys) {
			at->leaf = ak_read_once(at->leaf->next);
			at->leaf = at->leaf ? __ak_arena_clamp(at->leaf) : 0;
			at->pos = 0;
			nkeys = at->leaf ? __ak_omap_nkeys(at->leaf) : 0;
		}
		/* A leaf linked to is never empty: only the root leaf may be. */
		if (at->leaf && at->pos < nkeys) {
			__ak_omap_key_get(found, m, at->leaf, at->pos);
			entry = __ak_omap_entry(m, at->leaf, at->pos);
		} else {
			*err = -ENOENT;
		}
	} else if (c->map && (!same || c->exact)) {
		*err = -AK_ESTALE;	/* another map's cursor, or an exact walk's map changed */
	} else {
		entry = __ak_omap_find_at(m, c->key, c->started ? __AK_OMAP_GT : __AK_OMAP_GE,
					      found, err, at);
	}
	if (entry && c->bounded && __ak_omap_cmp_words(found, c->end, m->key_words) >= 0) {
		entry = 0;
		*err = -ENOENT;
	}
	return entry;
}

/* After a step found @entry (or not) in the state of count @gen: the cursor moved to it, or spent. */
static __ak_always_inline unsigned long long __ak_omap_step_to(const struct ak_omap __arena *m,
							      struct ak_omap_cursor *c,
							      unsigned long long __arena *entry,
							      unsigned long long gen,
							      const unsigned long long *found,
							      const struct __ak_omap_at *at)
{
	if (!entry) {
		c->map = 0;	/* spent: only ak_omap_cursor_init makes it walk again */
		return 0;
	}
	__builtin_memcpy(c->key, found, sizeof(c->key));
	c->map = (unsigned long long)m;
	c->gen = gen;
	c->leaf = (unsigned long long)at->leaf;
	c->pos = at->pos;
	c->started = 1;
	return (unsigned long long)(entry + m->key_words);
}

/*
 * A walk's step: in a read section as a find's (__ak_omap_find_impl), or
 * with the lock if @hold, and then returned with it held when found (the
 * loader copies the value under it). The cursor moved to the entry found;
 * 0 with *@err, the cursor spent, unless the error was -EBUSY or
 * -AK_EBUDGET (unchanged: call again).
 */
static inline unsigned long long __ak_omap_step_impl(struct ak_omap __arena *m,
						     struct ak_omap_cursor *c,
						     unsigned long long *found, int *err, int hold)
{
	unsigned long long __arena *entry;
	struct __ak_omap_at at;
	unsigned long long gen;
	unsigned int tries;

	for (tries = 0; __AK_ARENA_CLAMPED && !hold && tries < __AK_OMAP_READ_TRIES; tries++) {
		gen = __ak_omap_read_begin(m);
		if (gen & 1) {
			ak_spin_wait();	/* a holder is changing the tree */
			continue;
		}
		if (!ak_read_once(m->depth)) {
			*err = -EINVAL;	/* not initialised, or destroyed: no root */
			return 0;
		}
		entry = __ak_omap_step_at(m, c, gen, found, err, &at);
		if (__ak_omap_read_end(m, gen))
			return __ak_omap_step_to(m, c, entry, gen, found, &at);
	}
	*err = __ak_omap_lock(m);
	if (*err)
		return 0;
	gen = m->gen;
	entry = __ak_omap_step_at(m, c, gen, found, err, &at);
	if (!entry || !hold)
		__ak_omap_unlock(m);
	return __ak_omap_step_to(m, c, entry, gen, found, &at);
}

#endif /* __ARENAKIT_OMAP_IMPL_READ_H */
