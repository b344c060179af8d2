/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/omap_impl.h - the bodies of omap.h's calls, in the same order
 * after the tree's own operations. Internal: include <arenakit/omap.h>.
 *
 * Invariants, held whenever the lock is free: keys strictly increase
 * along the leaves' links and within every node; every leaf lies at
 * depth m->depth; an inner node's key i is above every key under its
 * child i and at most the first key under child i + 1; every node but
 * the root holds at least one key; m->count is the leaves' keys.
 */
#ifndef __ARENAKIT_OMAP_H
#error "<arenakit/omap_impl.h> is internal: include <arenakit/omap.h>"
#elif !defined(__ARENAKIT_OMAP_IMPL_H)
#define __ARENAKIT_OMAP_IMPL_H

#define __AK_OMAP_KW_MAX (AK_OMAP_MAX_KEY / 8)
#define __AK_OMAP_VW_MAX ((AK_OMAP_MAX_VALUE + 7) / 8)
/* __ak_omap_insert_locked's "fill the spare stock and come back". */
#define __AK_OMAP_REFILL 1
/* A node this small is merged with a neighbour when both fit in 3/4 of one. */
#define __AK_OMAP_LOW (AK_OMAP_FANOUT / 4)

typedef struct ak_omap_node __arena *__ak_omap_node_t;

static inline unsigned long long __ak_omap_node_size(unsigned int kw, unsigned int vw)
{
	unsigned long long tail = AK_OMAP_FANOUT * (unsigned long long)vw;

	if (tail < AK_OMAP_FANOUT + 1)
		tail = AK_OMAP_FANOUT + 1;	/* an inner node's children */
	return sizeof(struct ak_omap_node) + 8 * (AK_OMAP_FANOUT * (unsigned long long)kw + tail);
}

static inline unsigned long long __arena *__ak_omap_key(const struct ak_omap __arena *m,
						       __ak_omap_node_t n, unsigned int i)
{
	return &n->w[i * m->key_words];
}

static inline unsigned long long __arena *__ak_omap_val(const struct ak_omap __arena *m,
						       __ak_omap_node_t n, unsigned int i)
{
	return &n->w[AK_OMAP_FANOUT * m->key_words + i * m->value_words];
}

/* An inner node's child links, after its keys. */
static inline unsigned long long __arena *__ak_omap_links(const struct ak_omap __arena *m,
							 __ak_omap_node_t n)
{
	return &n->w[AK_OMAP_FANOUT * m->key_words];
}

static inline __ak_omap_node_t __ak_omap_child(const struct ak_omap __arena *m, __ak_omap_node_t n,
					       unsigned int i)
{
	return (__ak_omap_node_t)(unsigned long)__ak_omap_links(m, n)[i];
}

/*
 * The copy loops below read and write the arena through volatile
 * pointers: clang would turn a plain copy loop into a memmove, which it
 * cannot lower for the arena's address space (htab_impl_key.h says more).
 * Each is bounded by a node's size and the loop budget; a map a cut copy
 * left half moved is marked broken (m->broken) by its caller.
 */

/* Move @n words from @src to @dst, which may overlap: 0, or 1 if cut. */
static inline int __ak_omap_move(unsigned long long __arena *dst,
				 unsigned long long __arena *src, unsigned long long n)
{
	volatile unsigned long long __arena *d = dst;
	volatile unsigned long long __arena *s = src;
	unsigned long long i;

	if (n > AK_OMAP_FANOUT * (unsigned long long)(__AK_OMAP_VW_MAX + 1))
		return 1;	/* never: every caller's count is a node's */
	if (d < s) {
		for (i = 0; i < n; i++) {
			ak_cond_break_label(cut);
			d[i] = s[i];
		}
	} else if (d > s) {
		for (i = n; i > 0; i--) {
			ak_cond_break_label(cut);
			d[i - 1] = s[i - 1];
		}
	}
	return 0;
cut:
	return 1;
}

/* Copy @bytes from a program's memory into the arena. */
static inline void __ak_omap_put(void __arena *dst, const void *src, unsigned int bytes)
{
	volatile unsigned char __arena *d = dst;
	const unsigned char *s = src;
	unsigned int i;

	for (i = 0; i < bytes && i < AK_OMAP_MAX_VALUE && ak_can_loop; i++)
		d[i] = s[i];
}

/* Copy @bytes from the arena into a program's memory. */
static inline void __ak_omap_get(void *dst, const void __arena *src, unsigned int bytes)
{
	const volatile unsigned char __arena *s = src;
	unsigned char *d = dst;
	unsigned int i;

	for (i = 0; i < bytes && i < AK_OMAP_MAX_VALUE && ak_can_loop; i++)
		d[i] = s[i];
}

/* A key from a program's memory into key @i of @n. */
static inline void __ak_omap_key_put(const struct ak_omap __arena *m, __ak_omap_node_t n,
				     unsigned int i, const unsigned long long *k)
{
	volatile unsigned long long __arena *d = __ak_omap_key(m, n, i);
	unsigned int w;

	for (w = 0; w < m->key_words && w < __AK_OMAP_KW_MAX; w++)
		d[w] = k[w];
}

/* Key @i of @n into a program's memory. */
static inline void __ak_omap_key_get(unsigned long long *k, const struct ak_omap __arena *m,
				     __ak_omap_node_t n, unsigned int i)
{
	const volatile unsigned long long __arena *s = __ak_omap_key(m, n, i);
	unsigned int w;

	for (w = 0; w < m->key_words && w < __AK_OMAP_KW_MAX; w++)
		k[w] = s[w];
}

static inline int __ak_omap_cmp(const unsigned long long __arena *a, const unsigned long long *b,
				unsigned int kw)
{
	unsigned int i;

	for (i = 0; i < kw && i < __AK_OMAP_KW_MAX; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

/* The first key of @n at or after @k (after, if @strict): a binary search. */
static inline unsigned int __ak_omap_search(const struct ak_omap __arena *m, __ak_omap_node_t n,
					    const unsigned long long *k, int strict)
{
	unsigned int lo = 0, hi = n->nkeys, mid, step;
	int c;

	if (hi > AK_OMAP_FANOUT)
		hi = AK_OMAP_FANOUT;
	for (step = 0; step < 7 && lo < hi; step++) {	/* log2(AK_OMAP_FANOUT) + 1 */
		mid = (lo + hi) / 2;
		c = __ak_omap_cmp(__ak_omap_key(m, n, mid), k, m->key_words);
		if (c < 0 || (strict && c == 0))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * A level as an index into a path: masked, so the verifier sees it in
 * bounds whatever it knows of the level (callers keep it below
 * AK_OMAP_MAX_DEPTH, a power of two).
 */
#define __AK_OMAP_LEVEL(d)						\
	({								\
		unsigned int ___ak_level = (unsigned int)(d);		\
									\
		ak_barrier_var(___ak_level);	/* or clang drops the mask the loop implies */ \
		___ak_level & (AK_OMAP_MAX_DEPTH - 1);			\
	})

/* A descent's nodes from the root, and the child taken at each inner one. */
struct __ak_omap_path {
	__ak_omap_node_t node[AK_OMAP_MAX_DEPTH];
	unsigned int at[AK_OMAP_MAX_DEPTH];
};

#define __AK_OMAP_LEFTMOST ((const unsigned long long *)0)
#define __AK_OMAP_RIGHTMOST ((const unsigned long long *)1)

/* The leaf that holds @k (or would), the leftmost or the rightmost; its path in @p. */
static inline __ak_omap_node_t __ak_omap_descend(const struct ak_omap __arena *m,
						 const unsigned long long *k,
						 struct __ak_omap_path *p)
{
	__ak_omap_node_t n = m->root;
	unsigned int d, at;

	for (d = 0; d + 1 < m->depth && d < AK_OMAP_MAX_DEPTH - 1; d++) {
		if (k == __AK_OMAP_LEFTMOST)
			at = 0;
		else if (k == __AK_OMAP_RIGHTMOST)
			at = n->nkeys;
		else
			at = __ak_omap_search(m, n, k, 1);	/* keys at or below @k go left */
		p->node[__AK_OMAP_LEVEL(d)] = n;
		p->at[__AK_OMAP_LEVEL(d)] = at;
		n = __ak_omap_child(m, n, at);
	}
	p->node[__AK_OMAP_LEVEL(d)] = n;
	p->at[__AK_OMAP_LEVEL(d)] = 0;
	return n;
}

static inline __ak_omap_node_t __ak_omap_take_spare(struct ak_omap __arena *m)
{
	return m->spare[--m->nspare];
}

/* A node out of the tree: kept for the next split, or freed. */
static inline void __ak_omap_give_back(struct ak_omap __arena *m, __ak_omap_node_t n)
{
	if (m->nspare < AK_OMAP_MAX_DEPTH + 1)
		m->spare[m->nspare++] = n;
	else
		ak_free_nosleep(n);
}

/* Open a gap at key @i of @n (and value @i, or child @i + 1), @n not full. */
static inline void __ak_omap_open(const struct ak_omap __arena *m, __ak_omap_node_t n,
				  unsigned int i)
{
	unsigned int kw = m->key_words, vw = m->value_words, rest = n->nkeys - i;

	__ak_omap_move(__ak_omap_key(m, n, i + 1), __ak_omap_key(m, n, i), rest * kw);
	if (n->leaf)
		__ak_omap_move(__ak_omap_val(m, n, i + 1), __ak_omap_val(m, n, i), rest * vw);
	else
		__ak_omap_move(__ak_omap_links(m, n) + i + 2, __ak_omap_links(m, n) + i + 1, rest);
	n->nkeys++;
}

/* Close key @i of @n (and value @i, or child @i + 1). */
static inline void __ak_omap_close(const struct ak_omap __arena *m, __ak_omap_node_t n,
				   unsigned int i)
{
	unsigned int kw = m->key_words, vw = m->value_words, rest = n->nkeys - i - 1;

	__ak_omap_move(__ak_omap_key(m, n, i), __ak_omap_key(m, n, i + 1), rest * kw);
	if (n->leaf)
		__ak_omap_move(__ak_omap_val(m, n, i), __ak_omap_val(m, n, i + 1), rest * vw);
	else
		__ak_omap_move(__ak_omap_links(m, n) + i + 1, __ak_omap_links(m, n) + i + 2, rest);
	n->nkeys--;
}

/*
 * Split full @n: its upper half goes to @right (keys from @mid on, for a
 * leaf; after @mid, for an inner node, whose key @mid goes up), and the
 * key that goes up to the parent is copied to @up.
 */
static inline void __ak_omap_split(const struct ak_omap __arena *m, __ak_omap_node_t n,
				   __ak_omap_node_t right, unsigned long long *up)
{
	unsigned int kw = m->key_words, vw = m->value_words, mid = AK_OMAP_FANOUT / 2;
	unsigned int from = n->leaf ? mid : mid + 1;

	__ak_omap_key_get(up, m, n, mid);
	right->leaf = n->leaf;
	right->nkeys = AK_OMAP_FANOUT - from;
	__ak_omap_move(__ak_omap_key(m, right, 0), __ak_omap_key(m, n, from),
		       (AK_OMAP_FANOUT - from) * kw);
	if (n->leaf) {
		__ak_omap_move(__ak_omap_val(m, right, 0), __ak_omap_val(m, n, from),
			       (AK_OMAP_FANOUT - from) * vw);
		right->next = n->next;
		n->next = right;
	} else {
		__ak_omap_move(__ak_omap_links(m, right), __ak_omap_links(m, n) + from,
			       AK_OMAP_FANOUT + 1 - from);
		right->next = 0;
	}
	n->nkeys = mid;
}

/*
 * The insert under the lock. Nodes a split needs come from the spare
 * stock, counted first: __AK_OMAP_REFILL if it holds too few, with
 * nothing changed.
 */
static inline int __ak_omap_insert_locked(struct ak_omap __arena *m, const unsigned long long *k,
					  const void *value, unsigned int flags)
{
	unsigned long long sep[__AK_OMAP_KW_MAX], up[__AK_OMAP_KW_MAX];
	unsigned int kw = m->key_words, need = 0, pos;
	struct __ak_omap_path p;
	__ak_omap_node_t n, right, carry = 0, root;
	int d;

	n = __ak_omap_descend(m, k, &p);
	pos = __ak_omap_search(m, n, k, 0);
	if (pos < n->nkeys && !__ak_omap_cmp(__ak_omap_key(m, n, pos), k, kw)) {
		if (flags == AK_OMAP_NOEXIST)
			return -EEXIST;
		__ak_omap_put(__ak_omap_val(m, n, pos), value, m->value_size);
		m->gen++;
		return 0;
	}
	if (flags == AK_OMAP_EXIST)
		return -ENOENT;
	for (d = (int)m->depth - 1; d >= 0 && d < AK_OMAP_MAX_DEPTH &&
	     p.node[__AK_OMAP_LEVEL(d)]->nkeys == AK_OMAP_FANOUT; d--)
		need++;
	if (d < 0) {
		if (m->depth == AK_OMAP_MAX_DEPTH)
			return -E2BIG;
		need++;		/* a new root */
	}
	if (m->nspare < need)
		return __AK_OMAP_REFILL;

	/* The leaf: split first if full, then the key goes into its half. */
	if (n->nkeys == AK_OMAP_FANOUT) {
		right = __ak_omap_take_spare(m);
		__ak_omap_split(m, n, right, sep);
		carry = right;
		if (pos > AK_OMAP_FANOUT / 2) {
			n = right;
			pos -= AK_OMAP_FANOUT / 2;
		}
	}
	__ak_omap_open(m, n, pos);
	__ak_omap_key_put(m, n, pos, k);
	__ak_omap_put(__ak_omap_val(m, n, pos), value, m->value_size);
	if (carry)	/* the right half's first key, after the insert */
		__ak_omap_key_get(sep, m, carry, 0);

	/* Each split's right half goes into the parent, which may split in turn. */
	for (d = (int)m->depth - 2; carry && d >= 0 && d < AK_OMAP_MAX_DEPTH; d--) {
		n = p.node[__AK_OMAP_LEVEL(d)];
		pos = p.at[__AK_OMAP_LEVEL(d)];
		right = 0;
		if (n->nkeys == AK_OMAP_FANOUT) {
			right = __ak_omap_take_spare(m);
			__ak_omap_split(m, n, right, up);
			if (pos > AK_OMAP_FANOUT / 2) {
				n = right;
				pos -= AK_OMAP_FANOUT / 2 + 1;
			}
		}
		__ak_omap_open(m, n, pos);
		__ak_omap_key_put(m, n, pos, sep);
		__ak_omap_links(m, n)[pos + 1] = (unsigned long)carry;
		carry = right;
		if (right)
			__builtin_memcpy(sep, up, sizeof(sep));
	}
	if (carry) {
		root = __ak_omap_take_spare(m);
		root->leaf = 0;
		root->nkeys = 1;
		root->next = 0;
		__ak_omap_key_put(m, root, 0, sep);
		__ak_omap_links(m, root)[0] = (unsigned long)m->root;
		__ak_omap_links(m, root)[1] = (unsigned long)carry;
		m->root = root;
		m->depth++;
	}
	m->count++;
	m->gen++;
	return 0;
}

/*
 * Merge child @s + 1 of @parent into child @s, and take key @s and child
 * @s + 1 out of @parent. The caller checked that they fit one node.
 */
static inline void __ak_omap_merge(struct ak_omap __arena *m, __ak_omap_node_t parent,
				   unsigned int s)
{
	__ak_omap_node_t left = __ak_omap_child(m, parent, s), right = __ak_omap_child(m, parent, s + 1);
	unsigned int kw = m->key_words, vw = m->value_words, ln = left->nkeys, rn = right->nkeys;

	if (left->leaf) {
		__ak_omap_move(__ak_omap_key(m, left, ln), __ak_omap_key(m, right, 0), rn * kw);
		__ak_omap_move(__ak_omap_val(m, left, ln), __ak_omap_val(m, right, 0), rn * vw);
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
 * After a key left the node at depth @d of @p: merge a node left small
 * with a neighbour where both fit 3/4 of a node (any that fit, if it is
 * empty), level by level up, and drop a root left with one child.
 */
static inline void __ak_omap_rebalance(struct ak_omap __arena *m, struct __ak_omap_path *p, int d)
{
	__ak_omap_node_t n, parent, sib;
	unsigned int at, room, extra;

	for (; d > 0 && d < AK_OMAP_MAX_DEPTH; d--) {
		n = p->node[__AK_OMAP_LEVEL(d)];
		if (n->nkeys >= __AK_OMAP_LOW)
			break;
		parent = p->node[__AK_OMAP_LEVEL(d - 1)];
		at = p->at[__AK_OMAP_LEVEL(d - 1)];
		extra = n->leaf ? 0 : 1;	/* an inner merge brings the parent's key down */
		room = n->nkeys ? AK_OMAP_FANOUT * 3 / 4 : AK_OMAP_FANOUT;
		if (at < parent->nkeys &&
		    n->nkeys + __ak_omap_child(m, parent, at + 1)->nkeys + extra <= room) {
			__ak_omap_merge(m, parent, at);
		} else if (at > 0 && (sib = __ak_omap_child(m, parent, at - 1)) &&
			   sib->nkeys + n->nkeys + extra <= room) {
			__ak_omap_merge(m, parent, at - 1);
		} else if (!n->nkeys && !n->leaf && parent->nkeys) {
			__ak_omap_borrow(m, parent, at);	/* both neighbours full */
			break;
		} else {
			break;
		}
	}
	for (d = 0; d < AK_OMAP_MAX_DEPTH && m->depth > 1 && !m->root->nkeys; d++) {
		n = m->root;
		m->root = __ak_omap_child(m, n, 0);
		m->depth--;
		__ak_omap_give_back(m, n);
	}
}

/* The delete under the lock; @k NULL: the first key, copied to @key_out. */
static inline int __ak_omap_delete_locked(struct ak_omap __arena *m, const unsigned long long *k,
					  void *key_out, void *value)
{
	struct __ak_omap_path p;
	__ak_omap_node_t n;
	unsigned int pos = 0;

	n = __ak_omap_descend(m, k ?: __AK_OMAP_LEFTMOST, &p);
	if (k)
		pos = __ak_omap_search(m, n, k, 0);
	if (pos >= n->nkeys || (k && __ak_omap_cmp(__ak_omap_key(m, n, pos), k, m->key_words)))
		return -ENOENT;
	if (key_out)
		__ak_omap_get(key_out, __ak_omap_key(m, n, pos), m->key_words * 8);
	if (value)
		__ak_omap_get(value, __ak_omap_val(m, n, pos), m->value_size);
	__ak_omap_close(m, n, pos);
	__ak_omap_rebalance(m, &p, (int)m->depth - 1);
	m->count--;
	m->gen++;
	return 0;
}

/*
 * The first key at or after @k (after, if @strict), @k NULL: the first,
 * __AK_OMAP_RIGHTMOST: the last. Copied out, unless it is at or past
 * @end (if not NULL); 0 or -ENOENT.
 */
static inline int __ak_omap_find_locked(struct ak_omap __arena *m, const unsigned long long *k,
					int strict, const unsigned long long *end, void *key_out,
					void *value)
{
	struct __ak_omap_path p;
	__ak_omap_node_t n;
	unsigned int pos = 0;

	n = __ak_omap_descend(m, k ?: __AK_OMAP_LEFTMOST, &p);
	if (k == __AK_OMAP_RIGHTMOST)
		pos = n->nkeys ? n->nkeys - 1 : 0;
	else if (k)
		pos = __ak_omap_search(m, n, k, strict);
	if (pos >= n->nkeys) {
		/* Past this leaf's keys: the next leaf's first (no leaf but the root is empty). */
		n = k == __AK_OMAP_RIGHTMOST ? 0 : n->next;
		pos = 0;
		if (!n || !n->nkeys)
			return -ENOENT;
	}
	if (end && __ak_omap_cmp(__ak_omap_key(m, n, pos), end, m->key_words) >= 0)
		return -ENOENT;
	if (key_out)
		__ak_omap_get(key_out, __ak_omap_key(m, n, pos), m->key_words * 8);
	if (value)
		__ak_omap_get(value, __ak_omap_val(m, n, pos), m->value_size);
	return 0;
}

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

/* Fill the spare stock to a split per level and a new root, allocating with no lock held. */
static inline int __ak_omap_refill(struct ak_omap __arena *m, int sleepable)
{
	unsigned long long size = __ak_omap_node_size(m->key_words, m->value_words);
	__ak_omap_node_t n;
	unsigned int i;
	int err = 0;

	for (i = 0; i <= AK_OMAP_MAX_DEPTH; i++) {
		if (ak_read_once(m->nspare) >= ak_read_once(m->depth) + 1)
			return 0;
		n = sleepable ? ak_alloc(size, &err) : ak_alloc_nosleep(size, &err);
		if (!n)
			return err;
		err = ak_lock_acquire(&m->lock);
		if (err) {
			ak_free_nosleep(n);
			return err;
		}
		if (m->nspare < AK_OMAP_MAX_DEPTH + 1) {
			m->spare[m->nspare++] = n;
			n = 0;
		}
		ak_lock_release(&m->lock);
		if (n)
			ak_free_nosleep(n);
	}
	return 0;
}

/* The calls (omap.h). */

static inline int ak_omap_init(struct ak_omap __arena *m, unsigned int key_size,
			       unsigned int value_size)
{
	__ak_omap_node_t root;
	int err = 0;

	if (!key_size || key_size % 8 || key_size > AK_OMAP_MAX_KEY || !value_size ||
	    value_size > AK_OMAP_MAX_VALUE || m->depth)
		return -EINVAL;
	root = ak_alloc(__ak_omap_node_size(key_size / 8, (value_size + 7) / 8), &err);
	if (!root)
		return err;
	root->nkeys = 0;
	root->leaf = 1;
	root->next = 0;
	m->key_words = key_size / 8;
	m->value_words = (value_size + 7) / 8;
	m->value_size = value_size;
	m->count = 0;
	m->nspare = 0;
	m->root = root;
	m->depth = 1;
	return 0;
}

static inline int __ak_omap_insert(struct ak_omap __arena *m, const void *key, const void *value,
				   unsigned int flags, int sleepable)
{
	unsigned int tries;
	int err;

	if (flags > AK_OMAP_EXIST)
		return -EINVAL;
	for (tries = 0; tries < 4; tries++) {
		err = __ak_omap_lock(m);
		if (err)
			return err;
		err = __ak_omap_insert_locked(m, key, value, flags);
		ak_lock_release(&m->lock);
		if (err != __AK_OMAP_REFILL)
			return err;
		err = __ak_omap_refill(m, sleepable);
		if (err)
			return err;
	}
	return -EBUSY;	/* other CPUs took the spare nodes each time */
}

static inline int ak_omap_insert(struct ak_omap __arena *m, const void *key, const void *value,
				 unsigned int flags)
{
	return __ak_omap_insert(m, key, value, flags, 1);
}

static inline int ak_omap_insert_nosleep(struct ak_omap __arena *m, const void *key,
					 const void *value, unsigned int flags)
{
	return __ak_omap_insert(m, key, value, flags, 0);
}

static inline int ak_omap_lookup(struct ak_omap __arena *m, const void *key, void *value)
{
	const unsigned long long *k = key;
	struct __ak_omap_path p;
	__ak_omap_node_t n;
	unsigned int pos;
	int err = __ak_omap_lock(m);

	if (err)
		return err;
	n = __ak_omap_descend(m, k, &p);
	pos = __ak_omap_search(m, n, k, 0);
	if (pos < n->nkeys && !__ak_omap_cmp(__ak_omap_key(m, n, pos), k, m->key_words)) {
		if (value)
			__ak_omap_get(value, __ak_omap_val(m, n, pos), m->value_size);
	} else {
		err = -ENOENT;
	}
	ak_lock_release(&m->lock);
	return err;
}

static inline int ak_omap_delete(struct ak_omap __arena *m, const void *key, void *value)
{
	int err = __ak_omap_lock(m);

	if (err)
		return err;
	err = __ak_omap_delete_locked(m, key, 0, value);
	ak_lock_release(&m->lock);
	return err;
}

static inline int ak_omap_pop_first(struct ak_omap __arena *m, void *key_out, void *value)
{
	int err = __ak_omap_lock(m);

	if (err)
		return err;
	err = __ak_omap_delete_locked(m, 0, key_out, value);
	ak_lock_release(&m->lock);
	return err;
}

static inline int __ak_omap_find(struct ak_omap __arena *m, const unsigned long long *k,
				 int strict, void *key_out, void *value)
{
	int err = __ak_omap_lock(m);

	if (err)
		return err;
	err = __ak_omap_find_locked(m, k, strict, 0, key_out, value);
	ak_lock_release(&m->lock);
	return err;
}

static inline int ak_omap_bound(struct ak_omap __arena *m, const void *key, int strict,
				void *key_out, void *value)
{
	return __ak_omap_find(m, key, strict, key_out, value);
}

static inline int ak_omap_first(struct ak_omap __arena *m, void *key_out, void *value)
{
	return __ak_omap_find(m, 0, 0, key_out, value);
}

static inline int ak_omap_last(struct ak_omap __arena *m, void *key_out, void *value)
{
	return __ak_omap_find(m, __AK_OMAP_RIGHTMOST, 0, key_out, value);
}

static inline void ak_omap_cursor_init(struct ak_omap_cursor *c, const void *from,
				       const void *end, int exact, unsigned int key_words)
{
	const unsigned long long *f = from, *e = end;
	unsigned int i;

	*c = (struct ak_omap_cursor){ .exact = exact, .bounded = !!end };
	for (i = 0; i < key_words && i < __AK_OMAP_KW_MAX; i++) {
		c->key[i] = f ? f[i] : 0;
		c->end[i] = e ? e[i] : 0;
	}
}

static inline int ak_omap_next(struct ak_omap __arena *m, struct ak_omap_cursor *c,
			       void *key_out, void *value)
{
	unsigned long long found[__AK_OMAP_KW_MAX];
	unsigned int i, kw;
	int err = __ak_omap_lock(m);

	if (err)
		return err;
	kw = m->key_words;
	if (c->map && (c->map != m || (c->exact && c->gen != m->gen))) {
		err = -AK_ESTALE;
		goto out;
	}
	err = __ak_omap_find_locked(m, c->key, c->started, c->bounded ? c->end : 0, found, value);
	if (!err) {
		__builtin_memcpy(c->key, found, sizeof(found));
		c->map = m;
		c->gen = m->gen;
		c->started = 1;
	}
out:
	ak_lock_release(&m->lock);
	/* The key's words, as many as the map has (a constant-size copy, then the rest). */
	if (!err && key_out) {
		__builtin_memcpy(key_out, found, 8);
		for (i = 1; i < kw && i < __AK_OMAP_KW_MAX; i++)
			__builtin_memcpy((char *)key_out + 8 * i, &found[i], 8);
	}
	if (err && err != -EBUSY && err != -AK_EBUDGET)
		c->map = 0;	/* spent: only ak_omap_cursor_init makes it walk again */
	return err;
}

static inline unsigned long long ak_omap_count(const struct ak_omap __arena *m)
{
	return m->count;
}

static inline int ak_omap_destroy(struct ak_omap __arena *m)
{
	unsigned long long spins;
	int err = __ak_omap_lock(m);

	if (err)
		return err;
	/* Each pop leaves a whole tree; the map holds at most this many keys. */
	for (spins = 0; m->count && spins < (1ULL << 40) && ak_can_loop; spins++)
		if (__ak_omap_delete_locked(m, 0, 0, 0))
			break;
	if (m->count) {
		ak_lock_release(&m->lock);
		return -AK_EBUDGET;	/* call again: it goes on */
	}
	ak_free_nosleep(m->root);
	while (m->nspare)
		ak_free_nosleep(m->spare[--m->nspare]);
	m->root = 0;
	m->depth = 0;
	ak_lock_release(&m->lock);
	return 0;
}

/*
 * Depth first, in order: every leaf at the bottom and met in the order of
 * the leaves' links, the keys strictly increasing across them, each
 * separator above every key before it and at most the first key after it.
 */
static inline int ak_omap_check(struct ak_omap __arena *m)
{
	__ak_omap_node_t node[AK_OMAP_MAX_DEPTH], next_leaf, n;
	unsigned long long keys = 0, last[__AK_OMAP_KW_MAX] = {}, lower[__AK_OMAP_KW_MAX] = {};
	unsigned int at[AK_OMAP_MAX_DEPTH], kw, i;
	int d = 0, have_last = 0, have_lower = 0, err = __ak_omap_lock(m);
	struct __ak_omap_path p;

	if (err)
		return err;
	kw = m->key_words;
	node[0] = m->root;
	at[0] = 0;
	next_leaf = __ak_omap_descend(m, __AK_OMAP_LEFTMOST, &p);
	while (d >= 0 && !err && ak_can_loop) {
		n = node[d];
		if (n->nkeys > AK_OMAP_FANOUT || (d && !n->nkeys) ||
		    n->leaf != (d + 1 == (int)m->depth)) {
			err = -EINVAL;	/* a count out of range, an empty node, a leaf not at the bottom */
			break;
		}
		if (n->leaf) {
			if (n != next_leaf)
				err = -EINVAL;
			if (!err && have_lower && n->nkeys &&
			    __ak_omap_cmp(__ak_omap_key(m, n, 0), lower, kw) < 0)
				err = -EINVAL;
			have_lower = 0;
			for (i = 0; !err && i < n->nkeys; i++) {
				if (have_last && __ak_omap_cmp(__ak_omap_key(m, n, i), last, kw) <= 0)
					err = -EINVAL;
				__ak_omap_get(last, __ak_omap_key(m, n, i), kw * 8);
				have_last = 1;
			}
			keys += n->nkeys;
			next_leaf = n->next;
			d--;
			continue;
		}
		if (at[d] > n->nkeys) {
			d--;
			continue;
		}
		if (at[d] > 0) {
			/* Key at[d] - 1 lies between child at[d] - 1's keys and child at[d]'s. */
			if (have_last && __ak_omap_cmp(__ak_omap_key(m, n, at[d] - 1), last, kw) <= 0)
				err = -EINVAL;
			__ak_omap_get(lower, __ak_omap_key(m, n, at[d] - 1), kw * 8);
			have_lower = 1;
		}
		if (d + 1 >= AK_OMAP_MAX_DEPTH) {
			err = -EINVAL;
			break;
		}
		node[d + 1] = __ak_omap_child(m, n, at[d]);
		at[d + 1] = 0;
		at[d]++;
		d++;
	}
	if (!err && d >= 0)
		err = -AK_EBUDGET;	/* the budget cut the walk: nothing found wrong so far */
	if (!err && (next_leaf || keys != m->count))
		err = -EINVAL;
	ak_lock_release(&m->lock);
	return err;
}

#endif /* __ARENAKIT_OMAP_IMPL_H */
