/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/htab_impl_key.h - the table's keys: its widths on the keyed
 * spine (keyed_impl.h: the key's words, the dispatch, the two kinds of
 * caller), the versions of its functions per width, the hash and the key
 * compare. Internal: part of <arenakit/htab.h> (through htab_impl.h).
 */
#ifndef __ARENAKIT_HTAB_H
#error "<arenakit/htab_impl_key.h> is internal: include <arenakit/htab.h>"
#elif !defined(__ARENAKIT_HTAB_IMPL_KEY_H)
#define __ARENAKIT_HTAB_IMPL_KEY_H

#include <arenakit/keyed_impl.h>

/*
 * A key as the calls hand it to the table's functions: its n =
 * __AK_KEY_WORDS(size) words, zero past its size, to the version for
 * width n (keyed_impl.h). The hash is computed there, out of line, not in
 * the caller: inline, its rounds would be verified again at every call
 * site and every pass of a caller's loop.
 *
 * Keys up to __AK_HTAB_COPY_KEY bytes are copied to the caller's stack,
 * zero-padded to whole words, before a table function takes them; longer
 * ones are taken where they are (__ak_htab_key_words).
 */
#define __AK_HTAB_COPY_KEY 64

/*
 * The table's widths: the spine's list up to the program's
 * AK_HTAB_PROG_MAX_KEY (htab.h), rounded up to one of its steps. Each
 * version is global, so compiled whether a call reaches it or not (seven
 * functions per width); __AK_HTAB_WIDTH (below, applied at the end of
 * htab_impl_update.h) makes them.
 */
#if AK_HTAB_PROG_MAX_KEY < 1 || AK_HTAB_PROG_MAX_KEY > AK_HTAB_MAX_KEY
#error "AK_HTAB_PROG_MAX_KEY must be 1..AK_HTAB_MAX_KEY (bytes)"
#elif AK_HTAB_PROG_MAX_KEY <= 8
#define __AK_HTAB_WIDTHS __AK_WIDTHS_TO_1
#elif AK_HTAB_PROG_MAX_KEY <= 16
#define __AK_HTAB_WIDTHS __AK_WIDTHS_TO_2
#elif AK_HTAB_PROG_MAX_KEY <= 24
#define __AK_HTAB_WIDTHS __AK_WIDTHS_TO_3
#elif AK_HTAB_PROG_MAX_KEY <= 32
#define __AK_HTAB_WIDTHS __AK_WIDTHS_TO_4
#elif AK_HTAB_PROG_MAX_KEY <= 48
#define __AK_HTAB_WIDTHS __AK_WIDTHS_TO_6
#elif AK_HTAB_PROG_MAX_KEY <= 64
#define __AK_HTAB_WIDTHS __AK_WIDTHS_TO_8
#elif AK_HTAB_PROG_MAX_KEY <= 96
#define __AK_HTAB_WIDTHS __AK_WIDTHS_TO_12
#elif AK_HTAB_PROG_MAX_KEY <= 128
#define __AK_HTAB_WIDTHS __AK_WIDTHS_TO_16
#elif AK_HTAB_PROG_MAX_KEY <= 192
#define __AK_HTAB_WIDTHS __AK_WIDTHS_TO_24
#else
#define __AK_HTAB_WIDTHS __AK_WIDTHS_TO_32
#endif

#define __AK_HTAB_TOO_WIDE							"a key over AK_HTAB_PROG_MAX_KEY bytes: define it larger before <arenakit/htab.h>"

/* Call the version of table function @fn for keys of @words words. */
#define __AK_HTAB_BY_WIDTH(fn, words, ...)				\
	__AK_BY_WIDTH(__AK_HTAB_WIDTHS, __AK_HTAB_TOO_WIDE, fn, words, __VA_ARGS__)

/*
 * The out-of-line functions the calls' macros reach, for one key width n:
 * the end of htab_impl_update.h makes them for each width of
 * __AK_HTAB_WIDTHS, once the bodies they call are defined, and
 * __AK_HTAB_BY_WIDTH picks one. Each takes the key as n words
 * (__ak_key_load): struct __ak_key##n tells the verifier how
 * many. Where a sleepable program and any other differ, two versions
 * (__AK_HTAB_WRITERS): a non-sleepable program must not see the page
 * kfuncs.
 *  - lookup: the value's address, or 0 with *@err set: the common case
 *    (__ak_htab_lookup_fast), else the whole lookup;
 *  - begin_sleepable, begin_nosleep: __ak_htab_update_begin;
 *  - delete_sleepable, delete_nosleep: unlink and free the node;
 *  - unlink_nosleep: unlink only, *@node the node, which the caller frees;
 *  - lookup_lock: __ak_htab_lookup_lock_impl.
 */
#define __AK_HTAB_WRITERS(kind, n)					\
__ak_global unsigned long long							\
__ak_htab_begin_##kind##n(__arg_arena struct ak_htab __arena *h,		\
			  __ak_nonnull const struct __ak_key##n *key,	\
			  unsigned long long flags,				\
			  __ak_nonnull struct __ak_htab_update *u)		\
{									\
	return (unsigned long long)__ak_htab_update_begin(h, (const unsigned long long *)key, \
							  n, flags, __AK_KIND(kind), u);	\
}									\
									\
__ak_global int __ak_htab_delete_##kind##n(__arg_arena struct ak_htab __arena *h, \
					   __ak_nonnull const struct __ak_key##n *key) \
{									\
	return __ak_htab_delete_impl(h, (const unsigned long long *)key, n, __AK_KIND(kind)); \
}

#define __AK_HTAB_WIDTH(n, ...)						\
__ak_global unsigned long long							\
__ak_htab_lookup##n(__arg_arena struct ak_htab __arena *h,			\
		    __ak_nonnull const struct __ak_key##n *key,		\
		    __ak_nonnull int *err)					\
{									\
	void __arena *___ak_v;						\
									\
	if (__ak_htab_lookup_fast(h, (const unsigned long long *)key, n, &___ak_v, err)) \
		___ak_v = __ak_htab_lookup_impl(h, (const unsigned long long *)key, n, err); \
	AK_ACCESS_ATOMIC_NEXT(0);					\
	return (unsigned long long)___ak_v;				\
}									\
									\
__AK_KINDS(__AK_HTAB_WRITERS, n)					\
									\
__ak_global int __ak_htab_unlink_nosleep##n(__arg_arena struct ak_htab __arena *h, \
					    __ak_nonnull const struct __ak_key##n *key, \
					    __ak_nonnull unsigned long long *node) \
{									\
	struct ak_htab_node __arena *found;				\
	int err = __ak_htab_unlink(h, (const unsigned long long *)key, n, \
				   __AK_NOSLEEP, &found);		\
									\
	*node = err ? 0 : (unsigned long long)found;			\
	return err;							\
}									\
									\
__ak_global unsigned long long							\
__ak_htab_lookup_lock##n(__arg_arena struct ak_htab __arena *h,		\
			 __ak_nonnull const struct __ak_key##n *key,	\
			 __ak_nonnull struct __ak_htab_locked *l)		\
{									\
	return (unsigned long long)__ak_htab_lookup_lock_impl(h,	\
			(const unsigned long long *)key, n, l);		\
}

/*
 * The hash: Thorup's pair-multiply-shift ("High Speed Hashing for
 * Integers and Strings", 2015, after Dietzfelbinger's multiply-shift). A
 * key word w is two 32-bit halves, and word i has two random 64-bit
 * multipliers a of its own:
 *
 *	hash = sum over i of (a[2i] + (w[i] >> 32)) * (a[2i + 1] + (u32)w[i])
 *
 * modulo 2^64, one multiply a word. For two distinct keys fixed before the
 * seeds are drawn, the top b bits of their hashes (b <= 33) are equal with
 * probability at most 2 / 2^b; so a table takes a hash's bucket from its
 * TOP bits (hash >> shift), and the low bits, which are poorly mixed, only
 * serve the whole hash kept in each node as a filter before the key compare.
 *
 * The multipliers are the bucket array's (struct __ak_htab_table): 2 words
 * per key word, just before the array's header, __AK_HTAB_SEED(t, j) the
 * j-th (htab_types.h). Growth copies them into the new array; a reseed
 * draws new ones.
 */

/*
 * Words @from to @to (constants) of the hash of __ak_htab_pms below, added
 * to @sum: no break or continue, the one form clang unrolls.
 */
#define __ak_htab_pms_words(sum, t, w, n, from, to)			\
	do {								\
		unsigned long long ___ak_px;				\
		unsigned int ___ak_pi;					\
									\
		__AK_UNROLL						\
		for (___ak_pi = (from); ___ak_pi < (to); ___ak_pi++) {	\
			if (___ak_pi < (n)) {				\
				___ak_px = (w)[___ak_pi];		\
				(sum) += (__AK_HTAB_SEED(t, 2 * ___ak_pi) +	\
					  (___ak_px >> 32)) *		\
					 (__AK_HTAB_SEED(t, 2 * ___ak_pi + 1) + \
					  (unsigned int)___ak_px);	\
			}						\
		}							\
	} while (0)

/*
 * The hash of the key @w (an array of @words words, on the stack or in the
 * arena) under the seeds of array @t. A compile-time constant @words
 * unrolls to exactly its words; a run-time one (a node's key, rehashed as
 * it moves) tests each of the short keys' words, and a long key's others
 * behind one more test, so that short keys pay nothing for long ones.
 */
#define __ak_htab_pms(t, w, words)					\
	({								\
		const struct __ak_htab_table __arena *___ak_ht = (t);	\
		typeof(&(w)[0]) ___ak_hw = (w);				\
		unsigned int ___ak_hn = (words);			\
		unsigned long long ___ak_hs = 0;			\
									\
		__ak_htab_pms_words(___ak_hs, ___ak_ht, ___ak_hw, ___ak_hn, 0, \
				    __AK_HTAB_COPY_KEY / 8);		\
		if (___ak_hn > __AK_HTAB_COPY_KEY / 8)			\
			__ak_htab_pms_words(___ak_hs, ___ak_ht, ___ak_hw, ___ak_hn, \
					    __AK_HTAB_COPY_KEY / 8, AK_HTAB_MAX_KEY / 8); \
		___ak_hs;						\
	})

/*
 * The hash of a key of @words words @w (zero past the table's key size)
 * under array @t's seeds. Tests may force collisions with their own,
 * AK_HTAB_TEST_HASH(t, w, words), defined before htab.h is included (it
 * may fall back to __ak_htab_pms).
 */
#ifdef AK_HTAB_TEST_HASH
#define __ak_htab_hash(t, w, words) AK_HTAB_TEST_HASH(t, w, words)
#else
#define __ak_htab_hash(t, w, words) __ak_htab_pms(t, w, words)
#endif

/*
 * __ak_htab_hash for the writers' paths, which hash a key under one array
 * or two, several times, with calls between: out of line, one copy of the
 * hash's code per program, and the key's words loaded inside it. Inline,
 * clang keeps values of every copy live across the calls, spilled to a
 * frame that grows with the key, past the verifier's 512 bytes over a
 * chain of calls for the widest keys.
 */
__ak_apart unsigned long long
__ak_htab_hash_reload(const struct __ak_htab_table __arena *t, const unsigned long long *w,
		      unsigned int words)
{
	return __ak_htab_hash(t, w, words);
}

/* The bucket of @t a hash leads to. */
static __ak_always_inline unsigned long long __arena *
__ak_htab_bucket_of(struct __ak_htab_table __arena *t, unsigned long long hash)
{
	return &t->buckets[hash >> t->shift];
}

/*
 * The words a table function takes for the caller's *@key (the spine's
 * __ak_key_words): a key over __AK_HTAB_COPY_KEY bytes is also 8-byte
 * aligned, so that its own bytes are the words: no stack copy of up to
 * 256 bytes in a call chain that has 512.
 */
#define __ak_htab_key_words(buf, key)					\
	({								\
		_Static_assert(sizeof(*(key)) >= 1 && sizeof(*(key)) <= AK_HTAB_MAX_KEY, \
			       "an arena hash table key is 1 to AK_HTAB_MAX_KEY bytes"); \
		_Static_assert(sizeof(*(key)) <= __AK_HTAB_COPY_KEY ||	\
			       (sizeof(*(key)) % 8 == 0 && __alignof__(*(key)) >= 8), \
			       "a key over 64 bytes must be whole words, 8-byte aligned"); \
		_Static_assert(sizeof(*(key)) <= AK_HTAB_PROG_MAX_KEY,	\
			       __AK_HTAB_TOO_WIDE);			\
		__ak_key_words(buf, key, __AK_HTAB_COPY_KEY);		\
	})

/* Whether words @from to @words of @node's key are @w's. */
static __ak_always_inline int __ak_htab_key_equal_from(const struct ak_htab_node __arena *node,
						       const unsigned long long *w,
						       unsigned int from, unsigned int words)
{
	unsigned int i;

	__AK_UNROLL
	for (i = 0; i < AK_HTAB_MAX_KEY / 8; i++) {
		if (i == words)
			return 1;
		if (i >= from && node->data[i] != w[i])
			return 0;
	}
	return 1;
}

/*
 * As __ak_htab_key_equal_from, for a lock-free reader: each word is read
 * once and its ak_dep() token ORed into *@tok, so a re-check read with the
 * token comes after every word compared (htab_impl.h).
 */
static __ak_always_inline int __ak_htab_key_equal_dep(const struct ak_htab_node __arena *node,
						      const unsigned long long *w,
						      unsigned int from, unsigned int words,
						      unsigned long long *tok)
{
	unsigned long long word;
	unsigned int i;

	__AK_UNROLL
	for (i = 0; i < AK_HTAB_MAX_KEY / 8; i++) {
		if (i == words)
			return 1;
		if (i >= from) {
			word = ak_read_once(node->data[i]);
			*tok |= ak_dep(word);	/* before the branch on it */
			if (word != w[i])
				return 0;
		}
	}
	return 1;
}

static __ak_always_inline int __ak_htab_key_equal(const struct ak_htab_node __arena *node,
						  const unsigned long long *w, unsigned int words)
{
	return __ak_htab_key_equal_from(node, w, 0, words);
}

/* As __ak_htab_value, for a key of @words words known at compile time: no load. */
static __ak_always_inline void __arena *__ak_htab_value_at(struct ak_htab_node __arena *node,
							   unsigned int words)
{
	return (void __arena *)&node->data[words];
}

#endif /* __ARENAKIT_HTAB_IMPL_KEY_H */
