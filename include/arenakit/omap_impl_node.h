/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/omap_impl_node.h - a node as the tree lays it out and reads it:
 * its keys and links, a move of words within or between nodes, key copies
 * and compares, the search within a node, and the descent from the root.
 * Read by every path, the loader's copying walk (omap_user.h) included:
 * nothing here changes the map's counts or allocates.
 * Internal: included by <arenakit/omap_impl.h> and <arenakit/omap_user.h>.
 */
#if !defined(__ARENAKIT_OMAP_H) && !defined(__ARENAKIT_OMAP_USER_H)
#error "<arenakit/omap_impl_node.h> is internal: include <arenakit/omap.h> (or omap_user.h)"
#elif !defined(__ARENAKIT_OMAP_IMPL_NODE_H)
#define __ARENAKIT_OMAP_IMPL_NODE_H

#include <arenakit/arena.h>
#include <arenakit/omap_types.h>

#define __AK_OMAP_KW_MAX (AK_OMAP_MAX_KEY / 8)

typedef struct ak_omap_node __arena *__ak_omap_node_t;

static inline unsigned long long __ak_omap_node_size(unsigned int kw)
{
	return sizeof(struct ak_omap_node) + 8 * (AK_OMAP_FANOUT * (unsigned long long)kw +
						  AK_OMAP_FANOUT + 1);
}

/*
 * A node's first slot and its key count as a reader with no lock reads
 * them (__ak_omap_find_impl): it may meet a node mid-change, or memory
 * that is no longer a node. The count bounds its loops. In user space
 * the start is masked too, so its loads stay near the node (the tree's
 * own starts are at most AK_OMAP_FANOUT, an emptied root leaf's, below
 * the mask); in BPF every arena load stays in the arena whatever its
 * offset, and the mask would cost an instruction a key.
 */
#ifdef __BPF__
#define __ak_omap_start(n) ((n)->start)
#else
#define __ak_omap_start(n) ((n)->start & (2 * AK_OMAP_FANOUT - 1))
#endif

/*
 * The furthest such a reader reads from a node's address in user space:
 * the last word of the widest key in slot 2 * AK_OMAP_FANOUT - 1 +
 * AK_OMAP_FANOUT - 1 (the masked start, the count's last key); its links
 * end before that. 3056 bytes, what AK_ARENA_CLAMP keeps readable
 * (arena.h; tests/host/omap_reach_host.c).
 */
#define __AK_OMAP_READ_REACH						\
	(sizeof(struct ak_omap_node) + 8 * (3 * AK_OMAP_FANOUT - 1) * __AK_OMAP_KW_MAX)

static __ak_always_inline unsigned int __ak_omap_nkeys(__ak_omap_node_t n)
{
	unsigned int nkeys = ak_read_once(n->nkeys);

	return nkeys < AK_OMAP_FANOUT ? nkeys : AK_OMAP_FANOUT;
}

static inline unsigned long long __arena *__ak_omap_key(const struct ak_omap __arena *m,
						       __ak_omap_node_t n, unsigned int i)
{
	return &n->w[(__ak_omap_start(n) + i) * m->key_words];
}

/* A node's links after its keys: an inner node's children, a leaf's entries. */
static inline unsigned long long __arena *__ak_omap_links(const struct ak_omap __arena *m,
							 __ak_omap_node_t n)
{
	return &n->w[AK_OMAP_FANOUT * m->key_words + __ak_omap_start(n)];
}

/* A leaf's entry of key @i: the key's words, then the value. */
static inline unsigned long long __arena *__ak_omap_entry(const struct ak_omap __arena *m,
							 __ak_omap_node_t n, unsigned int i)
{
	return (unsigned long long __arena *)(unsigned long)__ak_omap_links(m, n)[i];
}

static inline __ak_omap_node_t __ak_omap_child(const struct ak_omap __arena *m, __ak_omap_node_t n,
					       unsigned int i)
{
	return (__ak_omap_node_t)(unsigned long)__ak_omap_links(m, n)[i];
}

/*
 * The copy loops below read and write the arena through volatile
 * pointers: clang would turn a plain copy loop into a memmove, which it
 * cannot lower for the arena's address space (arena.h's __ak_arena_store
 * says more).
 */

/* The most words one move takes: a node's keys at the widest, or its links. */
#define __AK_OMAP_MOVE_MAX (AK_OMAP_FANOUT * __AK_OMAP_KW_MAX + 1)

/*
 * Move @n words from @src to @dst, which may overlap. Out of line (a
 * global function in BPF, __ak_omap_move), as is the search below: the
 * verifier checks each once, not at every place a tree operation calls
 * it; an update's insert into a leaf with room has it inline, a call
 * fewer on the most common change. Its loops are bounded by a constant,
 * not by the loop budget: a move is never cut, so a node is never left
 * half moved.
 */
static __ak_always_inline int __ak_omap_move_impl(unsigned long long __arena *dst,
						  unsigned long long __arena *src,
						  unsigned long long n)
{
	volatile unsigned long long __arena *d = dst;
	volatile unsigned long long __arena *s = src;
	unsigned long long i;

	unsigned long long a, b, c, e;

	if (n > __AK_OMAP_MOVE_MAX)
		return -EINVAL;	/* never: every caller's count is a node's */
	/*
	 * Four words a step while four are left, each read before any is
	 * written (a step's words may overlap), then one at a time: one
	 * count and one bound check for four words.
	 */
	if (d < s) {
		for (i = 0; i + 4 <= n && i < __AK_OMAP_MOVE_MAX; i += 4) {
			a = s[i];
			b = s[i + 1];
			c = s[i + 2];
			e = s[i + 3];
			d[i] = a;
			d[i + 1] = b;
			d[i + 2] = c;
			d[i + 3] = e;
		}
		for (; i < n && i < __AK_OMAP_MOVE_MAX; i++)
			d[i] = s[i];
	} else if (d > s) {
		for (i = n; i >= 4 && i <= __AK_OMAP_MOVE_MAX; i -= 4) {
			a = s[i - 1];
			b = s[i - 2];
			c = s[i - 3];
			e = s[i - 4];
			d[i - 1] = a;
			d[i - 2] = b;
			d[i - 3] = c;
			d[i - 4] = e;
		}
		for (; i > 0 && i <= __AK_OMAP_MOVE_MAX; i--)
			d[i - 1] = s[i - 1];
	}
	return 0;
}

__ak_global int __ak_omap_move(__arg_arena unsigned long long __arena *dst,
			       __arg_arena unsigned long long __arena *src, unsigned long long n)
{
	return __ak_omap_move_impl(dst, src, n);
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

/* A key as the tree's calls hold it: AK_OMAP_MAX_KEY bytes, the map's words first. */
struct __ak_omap_kbuf {
	unsigned long long w[__AK_OMAP_KW_MAX];
};

/*
 * The first of @n's @hi keys at or after the one-word key @key (the
 * common key): steps of 16, 8, 4, 2 and 1 keys, each taken if the last key
 * it passes is below @key, then one more. No loop, a load and two
 * compares a step: inline, where a call would cost as much as the search.
 */
static __ak_always_inline unsigned int __ak_omap_search_word(__ak_omap_node_t n,
							     unsigned long long key,
							     unsigned int hi)
{
	const unsigned long long __arena *w = &n->w[__ak_omap_start(n)];
	unsigned int lo = 0, step;

	for (step = AK_OMAP_FANOUT / 2; step; step /= 2)
		if (lo + step <= hi && w[lo + step - 1] < key)
			lo += step;
	if (lo < hi && w[lo] < key)
		lo++;
	return lo;
}

/* The first key of @n at or after @k (after, if @strict), for keys of 2 to 4 words. */
__ak_global int __ak_omap_search(__arg_arena const struct ak_omap __arena *m,
				 __arg_arena struct ak_omap_node __arena *n,
				 __ak_nonnull const struct __ak_omap_kbuf *k, int strict)
{
	unsigned int lo = 0, hi = __ak_omap_nkeys(n), mid, step;
	int c;

	for (step = 0; step < 7 && lo < hi; step++) {	/* log2(AK_OMAP_FANOUT) + 1 */
		mid = (lo + hi) / 2;
		c = __ak_omap_cmp(__ak_omap_key(m, n, mid), k->w, m->key_words);
		if (c < 0 || (strict && c == 0))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The first key of @n at or after @k (after, if @strict): a binary search. */
static __ak_always_inline unsigned int __ak_omap_slot(const struct ak_omap __arena *m,
						      __ak_omap_node_t n,
						      const unsigned long long *k, int strict)
{
	unsigned int hi;

	if (m->key_words != 1)
		return __ak_omap_search(m, n, (const void *)k, strict);
	hi = __ak_omap_nkeys(n);
	/* After @key is at or after @key + 1, unless @key is the largest word. */
	if (strict && k[0] == ~0ULL)
		return hi;
	return __ak_omap_search_word(n, k[0] + !!strict, hi);
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

/*
 * A descent's nodes from the root, and the child taken at each inner one.
 * The nodes' addresses are numbers: a global function fills it (the
 * verifier takes only scalars in a struct it passes).
 */
struct __ak_omap_path {
	unsigned long long node[AK_OMAP_MAX_DEPTH];
	unsigned char at[AK_OMAP_MAX_DEPTH];	/* at most AK_OMAP_FANOUT: a byte keeps the frames small */
};

/* The node at depth @d of path @p. */
#define __ak_omap_path_node(p, d) ((__ak_omap_node_t)(p)->node[__AK_OMAP_LEVEL(d)])

#define __AK_OMAP_LEFTMOST ((const unsigned long long *)0)
#define __AK_OMAP_RIGHTMOST ((const unsigned long long *)1)

/*
 * The descent, out of line: the verifier checks its level loop and the
 * search in it once, for every operation. To @k's leaf, or with @k NULL
 * to the rightmost leaf if @right, else the leftmost. The leaf's
 * address; its path in @p, if a change needs it (a find passes NULL).
 * A find may descend with no lock: what it reads is read once, and the
 * links it follows are kept in the arena (__ak_arena_clamp).
 */
__ak_global unsigned long long __ak_omap_walk_down(__arg_arena const struct ak_omap __arena *m,
						   const struct __ak_omap_kbuf *k, int right,
						   struct __ak_omap_path *p)
{
	/* An inner node's children, after its keys: its start is 0. */
	unsigned long long children = AK_OMAP_FANOUT * (unsigned long long)m->key_words;
	__ak_omap_node_t n = ak_read_once(m->root);
	unsigned int d, at, depth = ak_read_once(m->depth);

	for (d = 0; d + 1 < depth && d < AK_OMAP_MAX_DEPTH - 1; d++) {
		if (k)
			at = __ak_omap_slot(m, n, k->w, 1);	/* keys at or below @k go left */
		else
			at = right ? __ak_omap_nkeys(n) : 0;
		if (p) {
			ak_barrier_var(p);	/* or clang takes &p->at before the check */
			p->node[__AK_OMAP_LEVEL(d)] = (unsigned long long)n;
			p->at[__AK_OMAP_LEVEL(d)] = at;
		}
		n = __ak_arena_clamp((__ak_omap_node_t)(unsigned long)ak_read_once(n->w[children + at]));
	}
	if (p) {
		ak_barrier_var(p);
		p->node[__AK_OMAP_LEVEL(d)] = (unsigned long long)n;
		p->at[__AK_OMAP_LEVEL(d)] = 0;
	}
	return (unsigned long long)n;
}

/* The leaf that holds @k (or would), the leftmost or the rightmost; its path in @p (or NULL). */
static __ak_always_inline __ak_omap_node_t __ak_omap_descend(const struct ak_omap __arena *m,
							     const unsigned long long *k,
							     struct __ak_omap_path *p)
{
	if (k == __AK_OMAP_LEFTMOST || k == __AK_OMAP_RIGHTMOST)
		return (__ak_omap_node_t)__ak_omap_walk_down(m, NULL, k == __AK_OMAP_RIGHTMOST, p);
	return (__ak_omap_node_t)__ak_omap_walk_down(m, (const void *)k, 0, p);
}

#endif /* __ARENAKIT_OMAP_IMPL_NODE_H */
