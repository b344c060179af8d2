/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/omap_impl_delete.h - keys going out: a node's slot closed,
 * merges and borrows that keep every node but the root holding a key, the
 * unlink under the lock, the head's pop, the rekey (an insert, then an
 * unlink, in one hold), and a take's end.
 * Internal: part of <arenakit/omap.h> (through omap_impl.h).
 */
#ifndef __ARENAKIT_OMAP_H
#error "<arenakit/omap_impl_delete.h> is internal: include <arenakit/omap.h>"
#elif !defined(__ARENAKIT_OMAP_IMPL_DELETE_H)
#define __ARENAKIT_OMAP_IMPL_DELETE_H

#include <arenakit/alloc.h>
#include <arenakit/lock.h>

/* A node this small is merged with a neighbour when both fit in 3/4 of one. */
#define __AK_OMAP_LOW (AK_OMAP_FANOUT / 4)

/*
 * Close key @i of @n, and its link (a leaf's entry @i, an inner node's
 * child @i + 1). A leaf moves the shorter side: the keys before @i up one
 * slot (its start with them), or those after it down; its first key moves
 * nothing.
 */
static inline void __ak_omap_close(const struct ak_omap __arena *m, __ak_omap_node_t n,
				   unsigned int i)
{
	unsigned int rest = n->nkeys - i - 1, link = n->leaf ? i : i + 1;

	if (n->leaf && i < rest) {
		if (i) {
			__ak_omap_move(__ak_omap_key(m, n, 1), __ak_omap_key(m, n, 0),
				       i * m->key_words);
			__ak_omap_move(__ak_omap_links(m, n) + 1, __ak_omap_links(m, n), i);
		}
		n->start++;
		n->nkeys--;
		return;
	}
	if (rest) {
		__ak_omap_move(__ak_omap_key(m, n, i), __ak_omap_key(m, n, i + 1),
			       rest * m->key_words);
		__ak_omap_move(__ak_omap_links(m, n) + link, __ak_omap_links(m, n) + link + 1,
			       rest);
	}
	n->nkeys--;
}

/*
 * Merge child @s + 1 of @parent into child @s, and take key @s and child
 * @s + 1 out of @parent. The caller checked that they fit one node.
 */
static inline void __ak_omap_merge(struct ak_omap __arena *m, __ak_omap_node_t parent,
				   unsigned int s)
{
	__ak_omap_node_t left = __ak_omap_child(m, parent, s), right = __ak_omap_child(m, parent, s + 1);
	unsigned int kw = m->key_words, ln = left->nkeys, rn = right->nkeys;

	if (left->leaf) {
		__ak_omap_compact(m, left);	/* room for @right's keys after its own */
		__ak_omap_move(__ak_omap_key(m, left, ln), __ak_omap_key(m, right, 0), rn * kw);
		__ak_omap_move(__ak_omap_links(m, left) + ln, __ak_omap_links(m, right), rn);
		left->next = right->next;
		left->nkeys = ln + rn;
	} else {
		/* The parent's key between them comes down between their keys. */
		__ak_omap_move(__ak_omap_key(m, left, ln), __ak_omap_key(m, parent, s), kw);
		__ak_omap_move(__ak_omap_key(m, left, ln + 1), __ak_omap_key(m, right, 0), rn * kw);
		__ak_omap_move(__ak_omap_links(m, left) + ln + 1, __ak_omap_links(m, right), rn + 1);
		left->nkeys = ln + 1 + rn;
	}
	__ak_omap_close(m, parent, s);
	__ak_omap_give_back(m, right);
}

/* An inner child @at of @parent with no key takes one through the parent from a neighbour. */
static inline void __ak_omap_borrow(struct ak_omap __arena *m, __ak_omap_node_t parent,
				    unsigned int at)
{
	__ak_omap_node_t n = __ak_omap_child(m, parent, at), sib;
	unsigned int kw = m->key_words;

	if (at < parent->nkeys) {
		sib = __ak_omap_child(m, parent, at + 1);
		__ak_omap_move(__ak_omap_key(m, n, 0), __ak_omap_key(m, parent, at), kw);
		__ak_omap_links(m, n)[1] = __ak_omap_links(m, sib)[0];
		__ak_omap_move(__ak_omap_key(m, parent, at), __ak_omap_key(m, sib, 0), kw);
		__ak_omap_move(__ak_omap_links(m, sib), __ak_omap_links(m, sib) + 1, sib->nkeys);
		__ak_omap_move(__ak_omap_key(m, sib, 0), __ak_omap_key(m, sib, 1),
			       (sib->nkeys - 1) * kw);
	} else {
		sib = __ak_omap_child(m, parent, at - 1);
		__ak_omap_links(m, n)[1] = __ak_omap_links(m, n)[0];
		__ak_omap_move(__ak_omap_key(m, n, 0), __ak_omap_key(m, parent, at - 1), kw);
		__ak_omap_links(m, n)[0] = __ak_omap_links(m, sib)[sib->nkeys];
		__ak_omap_move(__ak_omap_key(m, parent, at - 1), __ak_omap_key(m, sib, sib->nkeys - 1),
			       kw);
	}
	sib->nkeys--;
	n->nkeys = 1;
}

/*
 * Child @at of @parent, left small by a delete: merge it with a neighbour
 * where both fit 3/4 of a node (any that fit, if it is empty), or let an
 * empty inner one take a key from a full neighbour. 1 if merged (the
 * parent lost a key: look at it next), else 0. Out of line, as
 * __ak_omap_place.
 */
__ak_global int __ak_omap_fix(__arg_arena struct ak_omap __arena *m,
			      __arg_arena struct ak_omap_node __arena *parent, unsigned int at)
{
	__ak_omap_node_t n, sib;
	unsigned int room, extra;

	if (at > parent->nkeys || at > AK_OMAP_FANOUT)
		return 0;	/* never: a descent's answer */
	n = __ak_omap_child(m, parent, at);
	extra = n->leaf ? 0 : 1;	/* an inner merge brings the parent's key down */
	room = n->nkeys ? AK_OMAP_FANOUT * 3 / 4 : AK_OMAP_FANOUT;
	if (at < parent->nkeys &&
	    n->nkeys + __ak_omap_child(m, parent, at + 1)->nkeys + extra <= room) {
		__ak_omap_merge(m, parent, at);
		return 1;
	}
	sib = at > 0 ? __ak_omap_child(m, parent, at - 1) : 0;
	if (sib && sib->nkeys + n->nkeys + extra <= room) {
		__ak_omap_merge(m, parent, at - 1);
		return 1;
	}
	if (!n->nkeys && !n->leaf && parent->nkeys)
		__ak_omap_borrow(m, parent, at);	/* both neighbours full */
	return 0;
}

/*
 * After a key left the node at depth @d of @p: fix the nodes left small,
 * level by level up, and drop a root left with one child.
 */
static inline void __ak_omap_rebalance(struct ak_omap __arena *m, struct __ak_omap_path *p, int d)
{
	__ak_omap_node_t n;
	unsigned int i;
	int from = d;

	for (i = 0; i < AK_OMAP_MAX_DEPTH; i++) {
		d = from - (int)i;
		if (d <= 0)
			break;
		n = __ak_omap_path_node(p, d);
		if (n->nkeys >= __AK_OMAP_LOW ||
		    !__ak_omap_fix(m, __ak_omap_path_node(p, d - 1), p->at[__AK_OMAP_LEVEL(d - 1)]))
			break;
	}
	for (d = 0; d < AK_OMAP_MAX_DEPTH && m->depth > 1 && !m->root->nkeys; d++) {
		n = m->root;
		m->root = __ak_omap_child(m, n, 0);
		m->depth--;
		__ak_omap_give_back(m, n);
	}
}

/*
 * Take the entry of @k (@k NULL: of the first key) out of the tree under
 * the lock: its address, or 0 with *@err -ENOENT. The caller frees it.
 */
static inline unsigned long long __arena *__ak_omap_unlink_locked(struct ak_omap __arena *m,
								 const unsigned long long *k,
								 int *err)
{
	unsigned long long __arena *entry;
	struct __ak_omap_path p;
	__ak_omap_node_t n;
	unsigned int pos = 0;

	n = __ak_omap_descend(m, k ?: __AK_OMAP_LEFTMOST, &p);
	if (k)
		pos = __ak_omap_slot(m, n, k, 0);
	if (pos >= n->nkeys || (k && __ak_omap_cmp(__ak_omap_key(m, n, pos), k, m->key_words))) {
		*err = -ENOENT;
		return 0;
	}
	entry = __ak_omap_entry(m, n, pos);
	__ak_omap_changing(m);
	__ak_omap_close(m, n, pos);
	__ak_omap_rebalance(m, &p, (int)m->depth - 1);
	m->count--;
	return entry;
}

/*
 * The first key's entry out of the head leaf under the lock, if the leaf
 * keeps a key after it (or is the root): its first slot, so nothing moves
 * (see __ak_omap_close). 0 if not: the descent's unlink takes the last
 * key, and the fix merges the emptied leaf with its neighbour. The head
 * alone may stay below __AK_OMAP_LOW, which no bound rests on (every node
 * but the root keeps a key): a queue's pops then merge once a leaf, not
 * once a key after the leaf ran low.
 */
static __ak_always_inline unsigned long long __arena *__ak_omap_pop_head(struct ak_omap __arena *m)
{
	__ak_omap_node_t n = m->head;
	unsigned long long __arena *entry;

	if (!n->nkeys || (n->nkeys == 1 && m->depth > 1))
		return 0;
	entry = __ak_omap_entry(m, n, 0);
	__ak_omap_changing(m);
	n->start++;
	n->nkeys--;
	m->count--;
	return entry;
}

/*
 * Move the entry of @k to the key @to under the lock: linked at @to first
 * (the spare stock counted first: nothing changed if it is short), then
 * taken out of @k's place, so the entry, and its value's address, stay
 * the same, and no call sees the map without it. Between the two it is
 * linked twice, with @to's words: only the tree's keys are searched. 0
 * (also when @to is @k); -ENOENT (@k absent); -EEXIST (@to present);
 * __AK_OMAP_REFILL; -E2BIG.
 */
static __ak_always_inline int __ak_omap_rekey_locked(struct ak_omap __arena *m,
						     const unsigned long long *k,
						     const unsigned long long *to)
{
	unsigned long long __arena *entry, *found = 0;
	__ak_omap_node_t n = __ak_omap_descend(m, k, NULL);
	unsigned int pos = __ak_omap_slot(m, n, k, 0);
	int err = 0;

	if (pos >= n->nkeys || __ak_omap_cmp(__ak_omap_key(m, n, pos), k, m->key_words))
		return -ENOENT;
	entry = __ak_omap_entry(m, n, pos);
	if (!__ak_omap_cmp(entry, to, m->key_words))
		return 0;
	err = __ak_omap_insert_locked(m, to, AK_OMAP_NOEXIST, entry, &found);
	if (err)
		return err;
	__ak_omap_unlink_locked(m, k, &err);	/* @k's place: @entry, now also at @to */
	return err;
}

/*
 * The entry of @k (@first: of the first key) out of the tree, its key in
 * @key_out, returned with the lock held: the caller copies the value out
 * while no insert can take the entry, then __ak_omap_take_end. 0 with
 * *@err and the lock free if none.
 */
static __ak_always_inline unsigned long long
__ak_omap_unlink_impl(struct ak_omap __arena *m, const unsigned long long *k, int first,
		      unsigned long long *key_out, int *err)
{
	unsigned long long __arena *entry;
	unsigned int w;

	*err = __ak_omap_lock(m);
	if (*err)
		return 0;
	entry = first ? __ak_omap_pop_head(m) : 0;
	if (!entry)
		entry = __ak_omap_unlink_locked(m, first ? 0 : k, err);
	if (!entry) {
		__ak_omap_unlock(m);
		return 0;
	}
	for (w = 0; w < m->key_words && w < __AK_OMAP_KW_MAX; w++)
		key_out[w] = ((volatile unsigned long long __arena *)entry)[w];
	return (unsigned long long)entry;
}

/* After an unlink, its value copied: the entry kept for the next insert, the lock released. */
static __ak_always_inline void __ak_omap_take_end(struct ak_omap __arena *m,
						  unsigned long long __arena *entry)
{
	__ak_omap_keep_entry(m, entry);
	__ak_omap_unlock(m);
}

#endif /* __ARENAKIT_OMAP_IMPL_DELETE_H */
