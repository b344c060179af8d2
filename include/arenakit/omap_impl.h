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
/* __ak_omap_insert_body's answers besides 0 (inserted) and an error. */
enum {
	__AK_OMAP_PRESENT = 1,	/* the key was there: its entry is returned */
	__AK_OMAP_REFILL = 2,	/* fill the spare stock and come back */
};
/* A node this small is merged with a neighbour when both fit in 3/4 of one. */
#define __AK_OMAP_LOW (AK_OMAP_FANOUT / 4)

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
 * A chunk's entries onto m->idle: allocated and chained with no lock held
 * (no one sees them yet), then given to the map under it. 0, or an
 * allocation's or the lock's error. Out of line (__AK_OMAP_KINDS): its
 * loop is checked once.
 */
static __ak_always_inline int __ak_omap_add_chunk(struct ak_omap __arena *m, int sleepable)
{
	unsigned long long size = m->entry_size, per, i;
	unsigned long long __arena *chunk, *first, *last;
	int err = 0;

	if (!size || size > AK_OMAP_CHUNK - 8)
		return -EINVAL;	/* never: ak_omap_init's sizes */
	chunk = sleepable ? ak_alloc(AK_OMAP_CHUNK, &err) : ak_alloc_nosleep(AK_OMAP_CHUNK, &err);
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

/*
 * @fn(m, sleepable) as two global functions, one per kind of allocation:
 * a global function is checked knowing nothing of its arguments, so one
 * that could reach the sleepable allocator is refused in other programs.
 */
#define __AK_OMAP_KINDS(fn)						\
__ak_global int fn##_sleepable(__arg_arena struct ak_omap __arena *m)	\
{									\
	return fn(m, 1);						\
}									\
									\
__ak_global int fn##_nosleep(__arg_arena struct ak_omap __arena *m)	\
{									\
	return fn(m, 0);						\
}

__AK_OMAP_KINDS(__ak_omap_add_chunk)

/* Fill the spare stock to a split per level and a new root, allocating with no lock held. */
/* A node allocated with no lock held, then given to the spare stock under it. */
static __ak_always_inline int __ak_omap_add_node(struct ak_omap __arena *m, int sleepable)
{
	unsigned long long size = __ak_omap_node_size(m->key_words);
	__ak_omap_node_t n;
	int err = 0;

	n = sleepable ? ak_alloc(size, &err) : ak_alloc_nosleep(size, &err);
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

static inline int __ak_omap_refill(struct ak_omap __arena *m, int sleepable)
{
	unsigned int i;
	int err = 0;

	for (i = 0; i <= AK_OMAP_MAX_DEPTH && !err; i++) {
		if (ak_read_once(m->nspare) >= ak_read_once(m->depth) + 1)
			return 0;
		err = __ak_omap_add_node(m, sleepable);
	}
	return err;
}

__AK_OMAP_KINDS(__ak_omap_refill)

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
			err = __ak_omap_add_chunk(m, 1);
		else if (ak_read_once(m->nspare) < nodes)
			err = __ak_omap_add_node(m, 1);
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
		       int sleepable, struct __ak_omap_update *u)
{
	unsigned long long __arena *found = 0;
	unsigned int tries;
	int err = -EINVAL;

	if (flags > AK_OMAP_EXIST || !ak_read_once(m->depth))
		goto out;
	for (tries = 0; tries < 4; tries++) {
		/* A hint, read unlocked: the insert says so if none is left. */
		if (flags != AK_OMAP_EXIST && !ak_read_once(m->idle)) {
			err = sleepable ? __ak_omap_add_chunk_sleepable(m) :
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
		err = __ak_omap_refill(m, sleepable);
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

/*
 * The out-of-line calls, one version per key width (a program links those
 * it calls): a call's budget is its own, and a program's frame holds only
 * the caller's part (the value's copy, which has the value's type). Each
 * works on a copy of the key in AK_OMAP_MAX_KEY bytes, which every loop
 * over a key's words stays within, whatever the map says its width is.
 *  - find: the value's address of the entry a mode asks for, its key in
 *    *@key_out (a read section, or the lock);
 *  - unlink: the entry of *@key (first: of the first key) out of the
 *    tree, its key in *@key_out, the lock held; the caller copies the
 *    value, then __ak_omap_take_end; a first key's unlink takes NULL for
 *    both (ak_omap_destroy);
 *  - begin_sleepable, begin_nosleep: __ak_omap_update_begin;
 *  - rekey: __ak_omap_rekey_locked; __AK_OMAP_REFILL when the spare
 *    stock is short (the caller fills it: __ak_omap_refill_sleepable or
 *    _nosleep, out of line, so no allocation runs below a tree's frame).
 */
/* find and unlink: @impl on a copy of the key, its key out copied back (@arg: the mode, first). */
#define __AK_OMAP_KEYED(n, name, impl)					\
__ak_global unsigned long long							\
__ak_omap_##name##n(__arg_arena struct ak_omap __arena *m,		\
		    const struct __ak_omap_key##n *key, int arg,		\
		    struct __ak_omap_key##n *key_out, __ak_nonnull int *err)	\
{									\
	unsigned long long k[__AK_OMAP_KW_MAX] = {}, out[__AK_OMAP_KW_MAX] = {}, r; \
									\
	if (key)							\
		__builtin_memcpy(k, key->w, sizeof(key->w));		\
	r = impl(m, k, arg, out, err);					\
	if (key_out)							\
		__builtin_memcpy(key_out->w, out, sizeof(key_out->w));	\
	return r;							\
}

/* begin_sleepable, begin_nosleep: the allocator's two kinds (a program sees only its own). */
#define __AK_OMAP_BEGIN(n, kind, sleepable)				\
__ak_global unsigned long long							\
__ak_omap_begin_##kind##n(__arg_arena struct ak_omap __arena *m,		\
			  __ak_nonnull const struct __ak_omap_key##n *key,	\
			  unsigned int flags, __ak_nonnull struct __ak_omap_update *u) \
{									\
	unsigned long long k[__AK_OMAP_KW_MAX] = {};			\
									\
	__builtin_memcpy(k, key->w, sizeof(key->w));			\
	return (unsigned long long)__ak_omap_update_begin(m, k, flags, sleepable, u); \
}

/* rekey: __ak_omap_rekey_locked on copies of both keys, under the lock. */
#define __AK_OMAP_REKEY(n)						\
__ak_global int __ak_omap_rekey##n(__arg_arena struct ak_omap __arena *m,		\
				   __ak_nonnull const struct __ak_omap_key##n *key,	\
				   __ak_nonnull const struct __ak_omap_key##n *to)	\
{									\
	unsigned long long k[__AK_OMAP_KW_MAX] = {}, t[__AK_OMAP_KW_MAX] = {}; \
	int err = __ak_omap_lock(m);					\
									\
	if (err)							\
		return err;						\
	__builtin_memcpy(k, key->w, sizeof(key->w));			\
	__builtin_memcpy(t, to->w, sizeof(to->w));			\
	err = __ak_omap_rekey_locked(m, k, t);				\
	__ak_omap_unlock(m);					\
	return err;							\
}

#define __AK_OMAP_WIDTH(n, ...)						\
struct __ak_omap_key##n {						\
	unsigned long long w[n];					\
};									\
									\
__AK_OMAP_KEYED(n, find, __ak_omap_find_impl)				\
__AK_OMAP_KEYED(n, unlink, __ak_omap_unlink_impl)			\
__AK_OMAP_BEGIN(n, sleepable, 1)					\
__AK_OMAP_BEGIN(n, nosleep, 0)						\
__AK_OMAP_REKEY(n)

#define __AK_OMAP_WIDTHS(X) X(1) X(2) X(3) X(4)
__AK_OMAP_WIDTHS(__AK_OMAP_WIDTH)

/* A walk's step works on the cursor's key copy, whatever the width: one version. */
__ak_global unsigned long long __ak_omap_step(__arg_arena struct ak_omap __arena *m,
					      __ak_nonnull struct ak_omap_cursor *c,
					      __ak_nonnull struct __ak_omap_key4 *found,
					      __ak_nonnull int *err)
{
	return __ak_omap_step_impl(m, c, found->w, err, 0);
}

#define __AK_OMAP_WIDTH_CALL(n, fn, words, ...) (words) == n ? fn##n(__VA_ARGS__) :

/* Call @fn's version for keys of @words words (a constant: the rest fold away). */
#define __AK_OMAP_BY_WIDTH(fn, words, ...)				\
	(__AK_OMAP_WIDTH_CALL(1, fn, words, __VA_ARGS__)		\
	 __AK_OMAP_WIDTH_CALL(2, fn, words, __VA_ARGS__)		\
	 __AK_OMAP_WIDTH_CALL(3, fn, words, __VA_ARGS__)		\
	 __AK_OMAP_WIDTH_CALL(4, fn, words, __VA_ARGS__) 0)

/* A key type's check: whole words, at most AK_OMAP_MAX_KEY bytes. */
#define __ak_omap_key_ok(k)						\
	_Static_assert(sizeof(*(k)) % 8 == 0 && sizeof(*(k)) <= AK_OMAP_MAX_KEY, \
		       "an omap key is 1 to 4 whole words")

/*
 * A find of @mode: the value's address, the key copied to @key_out (NULL:
 * not wanted).
 */
#define __ak_omap_find(m, key, mode, key_out, errp)			\
	({								\
		struct ak_omap __arena *___ak_fm = (m);			\
		typeof(key) ___ak_fk = (key);				\
		unsigned long long ___ak_fout[sizeof(*___ak_fk) / 8];	\
		void *___ak_fo = (key_out);				\
		int *___ak_fe = (errp), ___ak_ferr = -EINVAL;		\
		unsigned long long ___ak_fv = 0;			\
									\
		__ak_omap_key_ok(___ak_fk);				\
		if (sizeof(*___ak_fk) == ___ak_fm->key_words * 8)	\
			___ak_fv = __AK_OMAP_BY_WIDTH(__ak_omap_find, sizeof(*___ak_fk) / 8, \
						      ___ak_fm, (const void *)___ak_fk, \
						      (mode), (void *)___ak_fout, &___ak_ferr); \
		if (___ak_fv && ___ak_fo)				\
			__builtin_memcpy(___ak_fo, ___ak_fout, sizeof(___ak_fout)); \
		if (!___ak_fv && ___ak_fe)				\
			*___ak_fe = ___ak_ferr;				\
		(void __arena *)___ak_fv;				\
	})

/* First or last: @key_out is both the key's type and where it goes, bound once. */
#define __ak_omap_find_end(m, key_out, mode, errp)			\
	({								\
		typeof(key_out) ___ak_eo = (key_out);			\
									\
		__ak_omap_find(m, ___ak_eo, mode, ___ak_eo, errp);	\
	})

#define __ak_omap_update(m, key, value, flags, kind)			\
	({								\
		struct ak_omap __arena *___ak_um = (m);			\
		typeof(key) ___ak_uk = (key);				\
		typeof(value) ___ak_uval = (value);			\
		struct __ak_omap_update ___ak_u = { .err = -EINVAL };	\
		void __arena *___ak_uv;					\
									\
		__ak_omap_key_ok(___ak_uk);				\
		if (sizeof(*___ak_uk) == ___ak_um->key_words * 8 &&	\
		    sizeof(*___ak_uval) == ___ak_um->value_size) {	\
			___ak_uv = (void __arena *)__AK_OMAP_BY_WIDTH(__ak_omap_begin_##kind, \
				sizeof(*___ak_uk) / 8, ___ak_um, (const void *)___ak_uk, \
				(flags), &___ak_u);			\
			if (___ak_uv) {					\
				__ak_arena_store(___ak_uv, ___ak_uval, sizeof(*___ak_uval)); \
				__ak_omap_update_end(___ak_um, &___ak_u); \
			}						\
		}							\
		___ak_u.err;						\
	})

/*
 * A rekey of *@key to *@to, keys of one type; the spare stock filled
 * (@kind: the allocator's kind) and the rekey tried again when it fell
 * short, at most 4 times (-EBUSY: other CPUs took the nodes each time).
 */
#define __ak_omap_rekey(m, key, to, kind)				\
	({								\
		struct ak_omap __arena *___ak_rm = (m);			\
		typeof(key) ___ak_rk = (key);				\
		typeof(key) ___ak_rt = (to);				\
		int ___ak_rerr = -EINVAL;				\
		unsigned int ___ak_rtry;				\
									\
		__ak_omap_key_ok(___ak_rk);				\
		for (___ak_rtry = 0; ___ak_rtry < 4 &&			\
		     sizeof(*___ak_rk) == ___ak_rm->key_words * 8; ___ak_rtry++) { \
			___ak_rerr = __AK_OMAP_BY_WIDTH(__ak_omap_rekey,	\
				sizeof(*___ak_rk) / 8, ___ak_rm, (const void *)___ak_rk, \
				(const void *)___ak_rt);		\
			if (___ak_rerr != __AK_OMAP_REFILL)		\
				break;					\
			___ak_rerr = __ak_omap_refill_##kind(___ak_rm) ?: -EBUSY; \
			if (___ak_rerr != -EBUSY)			\
				break;					\
		}							\
		___ak_rerr;						\
	})

/* Unlink (@first: the first key's entry), copy the key and value out, keep the entry. */
#define __ak_omap_take(m, key, first, key_out, value)			\
	({								\
		struct ak_omap __arena *___ak_tm = (m);			\
		typeof(key) ___ak_tk = (key);				\
		unsigned long long ___ak_tout[sizeof(*___ak_tk) / 8];	\
		typeof(value) ___ak_tval = (value);			\
		void *___ak_to = (key_out);				\
		int ___ak_terr = -EINVAL;				\
		unsigned long long ___ak_te = 0;			\
									\
		__ak_omap_key_ok(___ak_tk);				\
		if (sizeof(*___ak_tk) == ___ak_tm->key_words * 8 &&	\
		    (!___ak_tval || sizeof(*___ak_tval) == ___ak_tm->value_size)) \
			___ak_te = __AK_OMAP_BY_WIDTH(__ak_omap_unlink, sizeof(*___ak_tk) / 8, \
						      ___ak_tm, (const void *)___ak_tk, \
						      (first), (void *)___ak_tout, &___ak_terr); \
		if (___ak_te) {						\
			if (___ak_tval)					\
				__ak_arena_fetch(___ak_tval, (unsigned long long __arena *)___ak_te + \
						 sizeof(*___ak_tk) / 8, sizeof(*___ak_tval)); \
			__ak_omap_take_end(___ak_tm, (void __arena *)___ak_te); \
			if (___ak_to)					\
				__builtin_memcpy(___ak_to, ___ak_tout, sizeof(___ak_tout)); \
			___ak_terr = 0;					\
		} else if (___ak_terr >= 0) {				\
			/* Never: said so that a verifier sees 0 only with the copies made. */ \
			___ak_terr = -EFAULT;				\
		}							\
		___ak_terr;						\
	})

/* The calls (omap.h). */

static inline int ak_omap_init(struct ak_omap __arena *m, unsigned int key_size,
			       unsigned int value_size)
{
	__ak_omap_node_t root;
	int err = 0;

	if (!key_size || key_size % 8 || key_size > AK_OMAP_MAX_KEY || !value_size ||
	    value_size > AK_OMAP_MAX_VALUE || m->depth)
		return -EINVAL;
	root = ak_alloc(__ak_omap_node_size(key_size / 8), &err);
	if (!root)
		return err;
	root->nkeys = 0;
	root->leaf = 1;
	root->start = 0;
	root->next = 0;
	m->key_words = key_size / 8;
	m->value_size = value_size;
	m->entry_size = key_size + (value_size + 7) / 8 * 8;	/* the value word-aligned */
	m->count = 0;	/* the spare nodes and kept entries: none in a zeroed or destroyed map */
	m->root = root;
	m->head = root;
	m->depth = 1;
	return 0;
}

static inline unsigned long long ak_omap_count(const struct ak_omap __arena *m)
{
	unsigned long long gen, count;
	unsigned int tries;

	/* Between changes: a rekey's count is one more for a moment, between its link and unlink. */
	for (tries = 0; tries < __AK_OMAP_READ_TRIES; tries++) {
		gen = __ak_omap_read_begin(m);
		if (gen & 1) {
			ak_spin_wait();
			continue;
		}
		count = ak_read_once(m->count);
		if (__ak_omap_read_end(m, gen))
			return count;
	}
	return ak_read_once(m->count);
}

/*
 * The spare nodes, and an empty map's chunks, freed one at a time, each
 * taken out under the lock: a trim the budget cut leaves the rest, and
 * goes on when called again. Under the lock every entry is in the tree or
 * idle, so with no key in the map the chunks hold no entry in use: they
 * move to m->retired at once (the idle list emptied with them), and are
 * freed from there. Out of line, as __ak_omap_destroy.
 */
__ak_global int __ak_omap_trim(__arg_arena struct ak_omap __arena *m)
{
	void __arena *kept;
	int err;

	while (ak_can_loop) {
		err = ak_lock_acquire(&m->lock);
		if (err)
			return err;
		if (!m->count && m->chunks && !m->retired) {
			m->retired = m->chunks;
			/* Plain stores of 0 side by side lose their arena cast (clang 19). */
			ak_write_once(m->chunks, 0);
			ak_write_once(m->idle, 0);
			ak_write_once(m->nidle, 0);
		}
		kept = m->retired;
		if (kept) {
			m->retired = (unsigned long long __arena *)(unsigned long)m->retired[0];
		} else if (m->spare) {
			kept = m->spare;
			m->spare = m->spare->next;
			m->nspare--;
		}
		__ak_omap_unlock(m);
		if (!kept)
			return 0;
		ak_free_nosleep(kept);
	}
	return -AK_EBUDGET;
}

static inline int ak_omap_trim(struct ak_omap __arena *m)
{
	return __ak_omap_trim(m);
}

/* Out of line: its loops are checked once, whatever loops its caller runs it in. */
__ak_global int __ak_omap_destroy(__arg_arena struct ak_omap __arena *m)
{
	unsigned long long entry;
	__ak_omap_node_t root;
	int err = 0;

	/*
	 * The first key's entry at a time, through the out-of-line unlink (any
	 * width's version: it is given no key and copies none out): each take
	 * leaves a whole tree, so a destroy the budget cut goes on where it
	 * stopped. The entries are kept, then freed with the rest the map keeps.
	 */
	while (ak_read_once(m->count) && ak_can_loop) {	/* each take lowers the count */
		entry = __ak_omap_unlink1(m, NULL, 1, NULL, &err);
		if (!entry)
			break;
		__ak_omap_take_end(m, (unsigned long long __arena *)entry);
	}
	if (err && err != -ENOENT)
		return err;
	err = __ak_omap_trim(m);
	if (err)
		return err;
	err = __ak_omap_lock(m);
	if (err)
		return err;
	if (m->count || m->chunks || m->retired || m->spare) {
		__ak_omap_unlock(m);
		return -AK_EBUDGET;	/* call again: it goes on */
	}
	root = m->root;
	m->root = 0;
	ak_write_once(m->head, 0);	/* as in __ak_omap_trim */
	m->depth = 0;
	__ak_omap_unlock(m);
	ak_free_nosleep(root);
	return 0;
}

static inline int ak_omap_destroy(struct ak_omap __arena *m)
{
	return __ak_omap_destroy(m);
}

/* @from and @end: keys of @from_size and @end_size bytes, or NULL. */
static inline void __ak_omap_cursor_init(struct ak_omap_cursor *c, const void *from,
					 unsigned int from_size, const void *end,
					 unsigned int end_size, int exact)
{
	*c = (struct ak_omap_cursor){ .exact = exact, .bounded = !!end };
	if (from)
		__builtin_memcpy(c->key, from, from_size < sizeof(c->key) ? from_size : sizeof(c->key));
	if (end)
		__builtin_memcpy(c->end, end, end_size < sizeof(c->end) ? end_size : sizeof(c->end));
}

/* The walk's next entry: one step from the cursor, in a read section. */
#define __ak_omap_next(m, c, key_out, errp)				\
	({								\
		struct ak_omap __arena *___ak_nm = (m);			\
		typeof(key_out) ___ak_nko = (key_out);			\
		struct __ak_omap_key4 ___ak_nfound = {};		\
		int *___ak_ne = (errp), ___ak_nerr = -EINVAL;		\
		unsigned long long ___ak_nv = 0;			\
									\
		__ak_omap_key_ok(___ak_nko);				\
		if (sizeof(*___ak_nko) == ___ak_nm->key_words * 8)	\
			___ak_nv = __ak_omap_step(___ak_nm, (c), &___ak_nfound, &___ak_nerr); \
		if (___ak_nv) {						\
			__builtin_memcpy(___ak_nko, ___ak_nfound.w, sizeof(*___ak_nko)); \
		} else if (___ak_ne) {					\
			*___ak_ne = ___ak_nerr;				\
		}							\
		(void __arena *)___ak_nv;				\
	})

/*
 * Depth first, in order: every leaf at the bottom and met in the order of
 * the leaves' links, the keys strictly increasing across them, each
 * separator above every key before it and at most the first key after it,
 * and each entry holding its key.
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
	if (next_leaf != m->head)
		err = -EINVAL;
	while (d >= 0 && !err && ak_can_loop) {
		n = node[d];
		if (n->start + n->nkeys > AK_OMAP_FANOUT || (d && !n->nkeys) ||
		    n->leaf != (d + 1 == (int)m->depth) || (!n->leaf && n->start)) {
			/* Keys past the node's end, an empty node, a leaf not at the bottom. */
			err = -EINVAL;
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
				__ak_omap_key_get(last, m, n, i);
				have_last = 1;
				if (!__ak_omap_entry(m, n, i) ||
				    __ak_omap_cmp(__ak_omap_entry(m, n, i), last, kw))
					err = -EINVAL;	/* an entry that is not its key's */
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
			__ak_omap_key_get(lower, m, n, at[d] - 1);
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
	__ak_omap_unlock(m);
	return err;
}

#endif /* __ARENAKIT_OMAP_IMPL_H */
