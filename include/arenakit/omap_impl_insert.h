/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/omap_impl_insert.h - keys going in: the spare nodes and idle
 * entries a holder takes (allocated before the lock, never under it), a
 * node's slots opened and its split, the insert under the lock, the
 * stocks' refills and reserve, and an update's begin and end.
 * Internal: part of <arenakit/omap.h> (through omap_impl.h).
 */
#ifndef __ARENAKIT_OMAP_H
#error "<arenakit/omap_impl_insert.h> is internal: include <arenakit/omap.h>"
#elif !defined(__ARENAKIT_OMAP_IMPL_INSERT_H)
#define __ARENAKIT_OMAP_IMPL_INSERT_H

#include <arenakit/alloc.h>
#include <arenakit/lock.h>
#include <arenakit/keyed_impl.h>

/* __ak_omap_insert_body's answers besides 0 (inserted) and an error. */
enum {
	__AK_OMAP_PRESENT = 1,	/* the key was there: its entry is returned */
	__AK_OMAP_REFILL = 2,	/* fill the spare stock and come back */
};

static inline __ak_omap_node_t __ak_omap_take_spare(struct ak_omap __arena *m)
{
	__ak_omap_node_t n = m->spare;

	m->spare = n->next;
	m->nspare--;
	return n;
}

/* A node out of the tree: kept for the next split (ak_omap_trim frees it). */
static inline void __ak_omap_give_back(struct ak_omap __arena *m, __ak_omap_node_t n)
{
	n->next = m->spare;
	m->spare = n;
	m->nspare++;
}

/* An entry out of the tree, or not used: kept for the next insert, linked by its first word. */
static inline void __ak_omap_keep_entry(struct ak_omap __arena *m,
					unsigned long long __arena *entry)
{
	entry[0] = (unsigned long)m->idle;
	m->idle = entry;
	m->nidle++;
}

/* A leaf's keys and entries moved down to slot 0, where a split or merge expects them. */
static inline void __ak_omap_compact(const struct ak_omap __arena *m, __ak_omap_node_t n)
{
	unsigned int start = n->start;

	if (!start)
		return;
	n->start = 0;
	__ak_omap_move(__ak_omap_key(m, n, 0), &n->w[start * m->key_words],
		       n->nkeys * m->key_words);
	__ak_omap_move(__ak_omap_links(m, n), __ak_omap_links(m, n) + start, n->nkeys);
}

/*
 * Open a gap at key @i of @n, @n not full: the keys from @i on move up
 * one, and the links beside them (a leaf's entry @i on, an inner node's
 * children from @i + 1 on); a leaf with no slot above its last key is
 * compacted first. @inline_move (a constant): the moves inline, not calls.
 */
static __ak_always_inline void __ak_omap_open_as(const struct ak_omap __arena *m,
						  __ak_omap_node_t n, unsigned int i, int inline_move)
{
	unsigned int rest = n->nkeys - i, link = n->leaf ? i : i + 1;

	if (n->start + n->nkeys >= AK_OMAP_FANOUT)
		__ak_omap_compact(m, n);
	if (rest && inline_move) {
		__ak_omap_move_impl(__ak_omap_key(m, n, i + 1), __ak_omap_key(m, n, i),
				    rest * m->key_words);
		__ak_omap_move_impl(__ak_omap_links(m, n) + link + 1,
				    __ak_omap_links(m, n) + link, rest);
	} else if (rest) {	/* a call saved at the end of a node */
		__ak_omap_move(__ak_omap_key(m, n, i + 1), __ak_omap_key(m, n, i),
			       rest * m->key_words);
		__ak_omap_move(__ak_omap_links(m, n) + link + 1, __ak_omap_links(m, n) + link, rest);
	}
	n->nkeys++;
}

#define __ak_omap_open(m, n, i) __ak_omap_open_as(m, n, i, 0)

/*
 * Split full @n: its upper half goes to @right (keys from @mid on, for a
 * leaf; after @mid, for an inner node, whose key @mid goes up), and the
 * key that goes up to the parent is copied to @up.
 */
static inline void __ak_omap_split(const struct ak_omap __arena *m, __ak_omap_node_t n,
				   __ak_omap_node_t right, unsigned long long *up)
{
	unsigned int mid = AK_OMAP_FANOUT / 2, from = n->leaf ? mid : mid + 1;

	__ak_omap_key_get(up, m, n, mid);	/* full: @n's start is 0 */
	right->leaf = n->leaf;
	right->start = 0;
	right->nkeys = AK_OMAP_FANOUT - from;
	__ak_omap_move(__ak_omap_key(m, right, 0), __ak_omap_key(m, n, from),
		       (AK_OMAP_FANOUT - from) * m->key_words);
	/* A leaf's entries beside its keys; an inner node's children, one more. */
	__ak_omap_move(__ak_omap_links(m, right), __ak_omap_links(m, n) + from,
		       AK_OMAP_FANOUT - from + !n->leaf);
	if (n->leaf) {
		right->next = n->next;
		n->next = right;
	} else {
		right->next = 0;
	}
	n->nkeys = mid;
}

/* One level of an insert (__ak_omap_place): what goes in, and what comes out of a split. */
struct __ak_omap_place {
	struct __ak_omap_kbuf key;	/* the key put in, then the separator a split gives up */
	unsigned long long link;	/* its entry (a leaf) or right child (an inner node) */
	unsigned long long spare;	/* the node a split takes, if @n is full */
	unsigned int pos;		/* where in @n */
};

/*
 * Put @a->key at @a->pos of @n with its link (a leaf's entry @pos, an
 * inner node's child @pos + 1), splitting @n into @a->spare first if it
 * is full: the right half then, its separator in @a->key, else 0. Out of
 * line: the verifier checks one level's work once, not once a level.
 */
__ak_global unsigned long long __ak_omap_place(__arg_arena struct ak_omap __arena *m,
					      __arg_arena struct ak_omap_node __arena *n,
					      __ak_nonnull struct __ak_omap_place *a)
{
	__ak_omap_node_t right = 0, at = n;
	unsigned int mid = AK_OMAP_FANOUT / 2, pos = a->pos;
	struct __ak_omap_kbuf up = {};

	if (pos > AK_OMAP_FANOUT)
		return 0;	/* never: a search's answer */
	if (n->nkeys >= AK_OMAP_FANOUT) {
		right = (__ak_omap_node_t)(unsigned long)a->spare;
		__ak_omap_split(m, n, right, up.w);
		/* A leaf keeps keys below @mid; an inner node gives key @mid up. */
		if (pos > mid) {
			at = right;
			pos -= n->leaf ? mid : mid + 1;
		}
	}
	__ak_omap_open(m, at, pos);
	__ak_omap_key_put(m, at, pos, a->key.w);
	__ak_omap_links(m, at)[at->leaf ? pos : pos + 1] = a->link;
	if (right && right->leaf)	/* a leaf's separator: its right half's first key */
		__ak_omap_key_get(up.w, m, right, 0);
	if (right)
		a->key = up;
	return (unsigned long long)right;
}

/* An idle entry off the map's list (the caller checked it holds one). */
static __ak_always_inline unsigned long long __arena *__ak_omap_take_idle(struct ak_omap __arena *m)
{
	unsigned long long __arena *entry = m->idle;

	m->idle = (unsigned long long __arena *)(unsigned long)entry[0];
	m->nidle--;
	return entry;
}

/* A new entry's key: its first words. */
static __ak_always_inline void __ak_omap_key_put_entry(const struct ak_omap __arena *m,
						       unsigned long long __arena *entry,
						       const unsigned long long *k)
{
	unsigned int i;

	for (i = 0; i < m->key_words && i < __AK_OMAP_KW_MAX; i++)
		((volatile unsigned long long __arena *)entry)[i] = k[i];
}

/*
 * The insert of @k under the lock, or the entry of the key if present:
 * its address in *@found, and __AK_OMAP_PRESENT then. A new key takes
 * @entry (a rekey's: the entry it moves), or an idle one if that is NULL;
 * its key is written here. Nodes a split needs come from the spare stock,
 * counted first: __AK_OMAP_REFILL if it holds too few, or no entry is at
 * hand, with nothing changed. @inline_leaf (an update's; a constant): a
 * leaf with room (most inserts) takes the key here, its shift inline, and
 * its descent keeps no path (a split descends again for it); a rekey's
 * keeps that out of line, as its frame sits under the unlink's calls (the
 * verifier's 512 bytes across a chain of calls).
 */
static __ak_always_inline int __ak_omap_insert_body(struct ak_omap __arena *m,
						    const unsigned long long *k, unsigned int flags,
						    unsigned long long __arena *entry,
						    unsigned long long __arena **found, int inline_leaf)
{
	struct __ak_omap_place a;	/* zeroed where a split needs it, not before */
	unsigned int need = 0, depth = m->depth, i;
	unsigned long long right = 0;
	struct __ak_omap_path p;
	__ak_omap_node_t n, root;
	int d;

	/* An update's keeps no path unless it splits; @k is a key, never an end of the map. */
	n = (__ak_omap_node_t)__ak_omap_walk_down(m, (const void *)k, 0, inline_leaf ? NULL : &p);
	a.pos = __ak_omap_slot(m, n, k, 0);
	if (a.pos < n->nkeys && !__ak_omap_cmp(__ak_omap_key(m, n, a.pos), k, m->key_words)) {
		if (flags == AK_OMAP_NOEXIST)
			return -EEXIST;
		*found = __ak_omap_entry(m, n, a.pos);
		return __AK_OMAP_PRESENT;
	}
	if (flags == AK_OMAP_EXIST)
		return -ENOENT;
	if (inline_leaf && n->nkeys < AK_OMAP_FANOUT) {
		/* The leaf has room (most inserts): no split to count for, no call to place the key. */
		if (!entry && !m->idle)
			return __AK_OMAP_REFILL;
		__ak_omap_changing(m);
		entry = entry ?: __ak_omap_take_idle(m);
		__ak_omap_key_put_entry(m, entry, k);
		__ak_omap_open_as(m, n, a.pos, 1);
		__ak_omap_key_put(m, n, a.pos, k);
		__ak_omap_links(m, n)[a.pos] = (unsigned long)entry;
		m->count++;
		*found = entry;
		return 0;
	}
	if (inline_leaf)	/* the same leaf again (the lock is held), its path kept this time */
		__ak_omap_walk_down(m, (const void *)k, 0, &p);
	/*
	 * The level loops count up to AK_OMAP_MAX_DEPTH (constant bounds the
	 * verifier follows) and find the level from the depth.
	 */
	for (i = 0; i < AK_OMAP_MAX_DEPTH; i++) {
		d = (int)depth - 1 - (int)i;
		if (d < 0 || __ak_omap_path_node(&p, d)->nkeys != AK_OMAP_FANOUT)
			break;
		need++;
	}
	if (need == depth) {
		if (depth >= AK_OMAP_MAX_DEPTH)
			return -E2BIG;
		need++;		/* a new root */
	}
	if (m->nspare < need || (!entry && !m->idle))
		return __AK_OMAP_REFILL;
	__ak_omap_changing(m);	/* a rekey's entry is in the tree: its key changes below */
	entry = entry ?: __ak_omap_take_idle(m);
	__ak_omap_key_put_entry(m, entry, k);

	/* From the leaf up: each split's right half goes into the parent. */
	i = a.pos;
	__builtin_memset(&a, 0, sizeof(a));
	a.pos = i;
	a.link = (unsigned long)entry;
	__builtin_memcpy(a.key.w, k, sizeof(a.key.w));
	for (i = 0; i < AK_OMAP_MAX_DEPTH; i++) {
		d = (int)depth - 1 - (int)i;
		if (d < 0)
			break;
		n = __ak_omap_path_node(&p, d);
		if (d + 1 < (int)depth)
			a.pos = p.at[__AK_OMAP_LEVEL(d)];
		a.spare = n->nkeys >= AK_OMAP_FANOUT ? (unsigned long long)__ak_omap_take_spare(m) : 0;
		right = __ak_omap_place(m, n, &a);
		if (!right)
			break;
		a.link = right;
	}
	if (right) {
		root = __ak_omap_take_spare(m);
		root->leaf = 0;
		root->start = 0;
		root->nkeys = 1;
		root->next = 0;
		__ak_omap_key_put(m, root, 0, a.key.w);
		__ak_omap_links(m, root)[0] = (unsigned long)m->root;
		__ak_omap_links(m, root)[1] = right;
		m->root = root;
		m->depth = depth + 1;
	}
	m->count++;
	*found = entry;
	return 0;
}

static inline int __ak_omap_insert_locked(struct ak_omap __arena *m, const unsigned long long *k,
					  unsigned int flags, unsigned long long __arena *entry,
					  unsigned long long __arena **found)
{
	return __ak_omap_insert_body(m, k, flags, entry, found, 0);
}

/*
 * A chunk's entries onto m->idle: allocated and chained with no lock held
 * (no one sees them yet), then given to the map under it. 0, or an
 * allocation's or the lock's error. Out of line (__AK_OMAP_KINDS): its
 * loop is checked once.
 */
static __ak_always_inline int __ak_omap_add_chunk(struct ak_omap __arena *m, enum __ak_kind kind)
{
	unsigned long long size = m->entry_size, per, i;
	unsigned long long __arena *chunk, *first, *last;
	int err = 0;

	if (!size || size > AK_OMAP_CHUNK - 8)
		return -EINVAL;	/* never: ak_omap_init's sizes */
	chunk = kind == __AK_SLEEPABLE ? ak_alloc(AK_OMAP_CHUNK, &err) :
					 ak_alloc_nosleep(AK_OMAP_CHUNK, &err);
	if (!chunk)
		return err;
	per = (AK_OMAP_CHUNK - 8) / size;
	first = chunk + 1;
	last = first;
	/* Entry i links to entry i + 1; the budget may cut the chain short (the rest unused). */
	for (i = 1; i < per && i < AK_OMAP_CHUNK / 8 && ak_can_loop; i++) {
		last[0] = (unsigned long)last + size;
		last = (unsigned long long __arena *)((char __arena *)last + size);
	}
	err = ak_lock_acquire(&m->lock);
	if (err) {
		ak_free_nosleep(chunk);
		return err;
	}
	last[0] = (unsigned long)m->idle;
	m->idle = first;
	m->nidle += i;	/* the entries chained: all of the chunk's, unless the budget cut it */
	chunk[0] = (unsigned long)m->chunks;
	m->chunks = chunk;
	__ak_omap_unlock(m);
	return 0;
}

/* @fn(m, kind) as a global function of each kind (keyed_impl.h's __AK_KINDS). */
#define __AK_OMAP_BY_KIND(kind, fn)					\
__ak_global int fn##_##kind(__arg_arena struct ak_omap __arena *m)	\
{									\
	return fn(m, __AK_KIND(kind));					\
}

__AK_KINDS(__AK_OMAP_BY_KIND, __ak_omap_add_chunk)

/* Fill the spare stock to a split per level and a new root, allocating with no lock held. */
/* A node allocated with no lock held, then given to the spare stock under it. */
static __ak_always_inline int __ak_omap_add_node(struct ak_omap __arena *m, enum __ak_kind kind)
{
	unsigned long long size = __ak_omap_node_size(m->key_words);
	__ak_omap_node_t n;
	int err = 0;

	n = kind == __AK_SLEEPABLE ? ak_alloc(size, &err) : ak_alloc_nosleep(size, &err);
	if (!n)
		return err;
	err = ak_lock_acquire(&m->lock);
	if (err) {
		ak_free_nosleep(n);
		return err;
	}
	__ak_omap_give_back(m, n);
	__ak_omap_unlock(m);
	return 0;
}

static inline int __ak_omap_refill(struct ak_omap __arena *m, enum __ak_kind kind)
{
	unsigned int i;
	int err = 0;

	for (i = 0; i <= AK_OMAP_MAX_DEPTH && !err; i++) {
		if (ak_read_once(m->nspare) >= ak_read_once(m->depth) + 1)
			return 0;
		err = __ak_omap_add_node(m, kind);
	}
	return err;
}

__AK_KINDS(__AK_OMAP_BY_KIND, __ak_omap_refill)

/*
 * Chunks until @entries entries are idle, then nodes until @nodes are
 * spare, allocating with no lock held (the counts read unlocked: others'
 * inserts may take some meanwhile, which a call again makes up).
 */
__ak_global int __ak_omap_reserve(__arg_arena struct ak_omap __arena *m,
				  unsigned long long entries, unsigned long long nodes)
{
	int err = 0;

	if (!ak_read_once(m->depth))
		return -EINVAL;
	while (!err && ak_can_loop) {
		if (ak_read_once(m->nidle) < entries)
			err = __ak_omap_add_chunk(m, __AK_SLEEPABLE);
		else if (ak_read_once(m->nspare) < nodes)
			err = __ak_omap_add_node(m, __AK_SLEEPABLE);
		else
			return 0;
	}
	return err ?: -AK_EBUDGET;
}

static inline int ak_omap_reserve(struct ak_omap __arena *m, unsigned long long entries,
				  unsigned long long nodes)
{
	return __ak_omap_reserve(m, entries, nodes);
}

/* An update in progress: 0 in @err with the lock held and the value's address returned. */
struct __ak_omap_update {
	int err;
};

/*
 * Find or add the entry of @k, as @flags say, and return its value's
 * address with the lock held (the caller writes the value, then
 * __ak_omap_update_end), or 0 with @u->err set and nothing held. A new
 * key takes an idle entry; a chunk of them, and the nodes a split may
 * need, are allocated first, with no lock held: a holder never allocates.
 */
static __ak_always_inline void __arena *
__ak_omap_update_begin(struct ak_omap __arena *m, const unsigned long long *k, unsigned int flags,
		       enum __ak_kind kind, struct __ak_omap_update *u)
{
	unsigned long long __arena *found = 0;
	unsigned int tries;
	int err = -EINVAL;

	if (flags > AK_OMAP_EXIST || !ak_read_once(m->depth))
		goto out;
	for (tries = 0; tries < 4; tries++) {
		/* A hint, read unlocked: the insert says so if none is left. */
		if (flags != AK_OMAP_EXIST && !ak_read_once(m->idle)) {
			err = kind == __AK_SLEEPABLE ? __ak_omap_add_chunk_sleepable(m) :
						       __ak_omap_add_chunk_nosleep(m);
			if (err)
				goto out;
		}
		err = __ak_omap_lock(m);
		if (err)
			goto out;
		err = __ak_omap_insert_body(m, k, flags, 0, &found, 1);
		if (err == 0 || err == __AK_OMAP_PRESENT) {
			__ak_omap_changing(m);	/* the value's store: an exact walk is stale */
			u->err = 0;
			return found + m->key_words;
		}
		__ak_omap_unlock(m);
		if (err != __AK_OMAP_REFILL)
			goto out;
		err = __ak_omap_refill(m, kind);
		if (err)
			goto out;
		err = -EBUSY;	/* other CPUs took the spare nodes or the idle entries each time */
	}
out:
	u->err = err;
	return 0;
}

static inline void __ak_omap_update_end(struct ak_omap __arena *m, struct __ak_omap_update *u)
{
	if (!u->err)
		__ak_omap_unlock(m);
}

#endif /* __ARENAKIT_OMAP_IMPL_INSERT_H */
