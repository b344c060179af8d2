/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/keyed_impl.h - the spine of the keyed maps (htab.h, omap.h and
 * pq.h through omap.h): how a typed key and value travel from a call's
 * macro to an out-of-line BPF function of the key's width and back.
 * Internal: included by <arenakit/htab.h> and <arenakit/omap.h> (and
 * their user-space readers); nothing here is API. It defines, once for
 * both maps:
 *  - the key's width in words, and the lists of widths a map makes
 *    versions for (__AK_WIDTHS_TO_n);
 *  - the dispatch to a width's version, which fails the build for a width
 *    the map has none of (__AK_BY_WIDTH);
 *  - the key's words as a version takes them: loaded to the stack and
 *    zero-padded, or taken where they are (__ak_key_words);
 *  - the two kinds of caller, sleepable or not, and the twin functions a
 *    map makes for them (__AK_KINDS);
 *  - a value's copy in or out while the map holds what a begin call took
 *    (__ak_keyed_store_held, __ak_keyed_fetch_held).
 *
 * Why out of line and per width: a call's budget is its own (a global
 * function's), a key's loops unroll to exactly its words, and the
 * verifier checks a global function's pointer argument against its type's
 * size, so a caller writes n words of stack for an n-word key, not the
 * widest key's. A program links only the versions it calls.
 */
#if !defined(__ARENAKIT_HTAB_H) && !defined(__ARENAKIT_OMAP_H) &&	\
	!defined(__ARENAKIT_HTAB_USER_H) && !defined(__ARENAKIT_OMAP_USER_H)
#error "<arenakit/keyed_impl.h> is internal: include <arenakit/htab.h> or <arenakit/omap.h>"
#elif !defined(__ARENAKIT_KEYED_IMPL_H)
#define __ARENAKIT_KEYED_IMPL_H

#include <arenakit/arena.h>

/* A key of @size bytes as whole words, the last zero-padded. */
#define __AK_KEY_WORDS(size) (((size) + 7) / 8)

/*
 * A key of n words, as a width's version takes it: one type per width for
 * every map, so that the verifier knows how many words it may read.
 */
#define __AK_KEY_TYPE(n, ...)						\
struct __ak_key##n {							\
	unsigned long long w[n];					\
};

/*
 * The widths, in words, a map makes versions for: X(n, ...) for each n,
 * with the arguments after X. A map names one of these lists; a width
 * added to it is added to every call of that map.
 */
#define __AK_WIDTHS_TO_1(X, ...) X(1, __VA_ARGS__)
#define __AK_WIDTHS_TO_2(X, ...) __AK_WIDTHS_TO_1(X, __VA_ARGS__) X(2, __VA_ARGS__)
#define __AK_WIDTHS_TO_3(X, ...) __AK_WIDTHS_TO_2(X, __VA_ARGS__) X(3, __VA_ARGS__)
#define __AK_WIDTHS_TO_4(X, ...) __AK_WIDTHS_TO_3(X, __VA_ARGS__) X(4, __VA_ARGS__)
#define __AK_WIDTHS_TO_6(X, ...)					\
	__AK_WIDTHS_TO_4(X, __VA_ARGS__) X(5, __VA_ARGS__) X(6, __VA_ARGS__)
#define __AK_WIDTHS_TO_8(X, ...)					\
	__AK_WIDTHS_TO_6(X, __VA_ARGS__) X(7, __VA_ARGS__) X(8, __VA_ARGS__)
#define __AK_WIDTHS_TO_12(X, ...)					\
	__AK_WIDTHS_TO_8(X, __VA_ARGS__) X(9, __VA_ARGS__) X(10, __VA_ARGS__) \
	X(11, __VA_ARGS__) X(12, __VA_ARGS__)
#define __AK_WIDTHS_TO_16(X, ...)					\
	__AK_WIDTHS_TO_12(X, __VA_ARGS__) X(13, __VA_ARGS__) X(14, __VA_ARGS__) \
	X(15, __VA_ARGS__) X(16, __VA_ARGS__)
#define __AK_WIDTHS_TO_24(X, ...)					\
	__AK_WIDTHS_TO_16(X, __VA_ARGS__) X(17, __VA_ARGS__) X(18, __VA_ARGS__) \
	X(19, __VA_ARGS__) X(20, __VA_ARGS__) X(21, __VA_ARGS__) X(22, __VA_ARGS__) \
	X(23, __VA_ARGS__) X(24, __VA_ARGS__)
#define __AK_WIDTHS_TO_32(X, ...)					\
	__AK_WIDTHS_TO_24(X, __VA_ARGS__) X(25, __VA_ARGS__) X(26, __VA_ARGS__) \
	X(27, __VA_ARGS__) X(28, __VA_ARGS__) X(29, __VA_ARGS__) X(30, __VA_ARGS__) \
	X(31, __VA_ARGS__) X(32, __VA_ARGS__)

__AK_WIDTHS_TO_32(__AK_KEY_TYPE, )	/* every width: a type costs no code */

#define __AK_WIDTH_CALL(n, fn, words, ...) (words) == n ? fn##n(__VA_ARGS__) :
#define __AK_WIDTH_IS(n, words) || (words) == n

/*
 * Call the version of @fn for keys of @words words (a compile-time
 * constant: the other versions fold away) among those of the width list
 * @widths. A width missing from the list fails the build with @why (a
 * string literal: what the caller should change).
 */
#define __AK_BY_WIDTH(widths, why, fn, words, ...)			\
	(widths(__AK_WIDTH_CALL, fn, words, __VA_ARGS__)		\
	 ({								\
		_Static_assert(0 widths(__AK_WIDTH_IS, words), why);	\
		(__typeof__(fn##1(__VA_ARGS__)))0;	/* not evaluated */	\
	 }))

/*
 * Fill @k (__AK_KEY_WORDS(@size) words) with a caller's key of constant
 * @size, a word at a time through one 8-byte local. One memcpy from a key
 * of byte alignment (a struct of chars) is lowered by clang to all the byte
 * loads first, then the stores: for a 64-byte key, dozens of spill slots,
 * over a hundred bytes of the caller's 512-byte stack. The volatile store
 * keeps clang from merging the words back into that memcpy.
 */
#define __ak_key_load(k, src, size)					\
	do {								\
		const void *___ak_ks = (src);				\
		unsigned long long ___ak_kx;				\
		unsigned int ___ak_ki;					\
									\
		__AK_UNROLL						\
		for (___ak_ki = 0; ___ak_ki < __AK_KEY_WORDS(size); ___ak_ki++) { \
			___ak_kx = 0;					\
			if (___ak_ki * 8 + 8 <= (size))			\
				__builtin_memcpy(&___ak_kx,		\
						 (const char *)___ak_ks + ___ak_ki * 8, 8); \
			else						\
				__builtin_memcpy(&___ak_kx,		\
						 (const char *)___ak_ks + ___ak_ki * 8, \
						 (size) % 8);		\
			((volatile unsigned long long *)(k))[___ak_ki] = ___ak_kx; \
		}							\
	} while (0)

/*
 * The words a width's version takes for the caller's *@key: a key of at
 * most @copy_max bytes loaded into @buf (__AK_KEY_WORDS(sizeof(*@key))
 * words, which the compiler drops when unused), a longer one where it is,
 * which must then be whole words (its own bytes are the words). A map
 * that copies none (@copy_max 0) takes whole-word keys only.
 */
#define __ak_key_words(buf, key, copy_max)				\
	({								\
		const void *___ak_kw = (const void *)(buf);		\
									\
		_Static_assert(sizeof(*(key)) <= (copy_max) || sizeof(*(key)) % 8 == 0, \
			       "a key this long must be whole words");	\
		if (sizeof(*(key)) <= (copy_max))			\
			__ak_key_load(buf, key, sizeof(*(key)));	\
		else							\
			___ak_kw = (const void *)(key);			\
		___ak_kw;						\
	})

/*
 * The two kinds of caller, passed down to every helper that allocates or
 * frees: a sleepable program takes pages from the kernel and gives them
 * back (ak_alloc, ak_free); any other uses the pool only (ak_alloc_nosleep,
 * ak_free_nosleep). A call's macro names its kind by a token, sleepable or
 * nosleep: __AK_KIND(kind) is the constant, fn##_##kind its version.
 */
enum __ak_kind {
	__AK_NOSLEEP,
	__AK_SLEEPABLE,
};
#define __AK_KIND(kind) __AK_KIND_##kind
#define __AK_KIND_sleepable __AK_SLEEPABLE
#define __AK_KIND_nosleep __AK_NOSLEEP

/*
 * X(kind, ...) for each kind: a map's twin global functions. A global
 * function is checked knowing nothing of its arguments, so one that could
 * reach the sleepable allocator is refused in other programs: each kind
 * has its own, and a program sees only its own kind's.
 */
#define __AK_KINDS(X, ...) X(sleepable, __VA_ARGS__) X(nosleep, __VA_ARGS__)

/*
 * A value's copy while the map holds what a begin call took (@held: the
 * begin's answer, 0 if it holds nothing, and nothing is done then); @end,
 * the statement that lets go. In: *@src stored at @dst if @store (a
 * constant or a flag), then @end. Out: the value at @src fetched to *@dst
 * if @fetch, then @end.
 */
#define __ak_keyed_store_held(held, store, dst, src, end)		\
	do {								\
		if (held) {						\
			if (store)					\
				__ak_arena_store(dst, src, sizeof(*(src))); \
			end;						\
		}							\
	} while (0)

#define __ak_keyed_fetch_held(held, fetch, dst, src, end)		\
	do {								\
		if (held) {						\
			if (fetch)					\
				__ak_arena_fetch(dst, src, sizeof(*(dst))); \
			end;						\
		}							\
	} while (0)

#endif /* __ARENAKIT_KEYED_IMPL_H */
