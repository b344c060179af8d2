/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/siphash.h - SipHash, the keyed hash of htab.h.
 *
 * SipHash (Aumasson and Bernstein, 2012) is a pseudorandom function of a
 * message and a 128-bit key: whoever chooses the messages but not the key
 * cannot tell which of them collide, so cannot force a table's keys into
 * one chain. SipHash-c-d takes c compression rounds per word and d
 * finalisation rounds: the reference is SipHash-2-4; htab.h uses 1-3, as
 * Rust's HashMap does, cheap enough for keys of a few words.
 *
 * The kernel's include/linux/siphash.h hashes bytes. This one takes the
 * message as whole 64-bit words, zero past its length, as htab.h keeps its
 * keys: each word is one load, and the loop over the words has a constant
 * bound (the key's words, which htab.h's macros know at compile time),
 * unrolled, so the verifier sees no loop and every stack access has a
 * constant offset. The round counts must be compile-time constants too
 * (__ak_siphash refuses others at build time): the round loops are bounded
 * by them alone, and only constant counts unroll them. On a little-endian
 * CPU (x86-64, and BPF there) the words are the message's bytes as SipHash
 * reads them, so the result is the reference SipHash of those bytes.
 *
 * A library helper, used by htab.h and its tests (hence the __ prefix):
 * any program type, BPF or user space; no loop budget.
 */
#ifndef __ARENAKIT_SIPHASH_H
#define __ARENAKIT_SIPHASH_H

#include <arenakit/arena.h>

/* The words a message is given in: 64 bytes, the longest htab.h key. */
#define __AK_SIPHASH_WORDS 8

static inline unsigned long long __ak_rotl(unsigned long long x, int b)
{
	return (x << b) | (x >> (64 - b));
}

#define __AK_SIPROUND(v0, v1, v2, v3)					\
	do {								\
		v0 += v1; v1 = __ak_rotl(v1, 13); v1 ^= v0; v0 = __ak_rotl(v0, 32); \
		v2 += v3; v3 = __ak_rotl(v3, 16); v3 ^= v2;		\
		v0 += v3; v3 = __ak_rotl(v3, 21); v3 ^= v0;		\
		v2 += v1; v1 = __ak_rotl(v1, 17); v1 ^= v2; v2 = __ak_rotl(v2, 32); \
	} while (0)

/**
 * __ak_siphash - SipHash-@c-@d of a message given in whole words
 * @words: the message: @n words, zero past @len bytes
 * @n: how many words @words holds, 0 to __AK_SIPHASH_WORDS (a constant,
 *	as htab.h's is, unrolls the loop to exactly @n words)
 * @len: the message's length in bytes: 0 if @n is 0, else more than
 *	8 * (@n - 1) and at most 8 * @n (it may be known only at run time)
 * @k0: the key's first 64 bits
 * @k1: the key's last 64 bits
 * @c: compression rounds per word (2 in SipHash-2-4): a compile-time constant
 * @d: finalisation rounds (4 in SipHash-2-4): a compile-time constant
 *
 * The words wholly inside @len are compressed one by one; the last, partial
 * word (zero past @len, as required) goes in with the length in its top
 * byte, as the algorithm specifies. Which words are whole is known from
 * @n but for the last, so with @n constant the loop unrolls to exactly @n
 * words and one test of @len; no word past @n is read.
 *
 * The round loops have no bound but @c and @d, and no may_goto: constant
 * counts unroll them, so the verifier sees straight-line code; a count
 * known only at run time would leave loops the verifier must bound by
 * itself. So every call goes through the macro of the same name below,
 * which fails the build unless both counts are constants.
 *
 * Return: the 64-bit hash.
 */
static __ak_always_inline unsigned long long __ak_siphash(const unsigned long long *words,
							  unsigned int n, unsigned int len,
							  unsigned long long k0,
							  unsigned long long k1, int c, int d)
{
	unsigned long long v0 = k0 ^ 0x736f6d6570736575ULL, v1 = k1 ^ 0x646f72616e646f6dULL;
	unsigned long long v2 = k0 ^ 0x6c7967656e657261ULL, v3 = k1 ^ 0x7465646279746573ULL;
	unsigned long long m, tail = 0;
	unsigned int i;
	int r;

	__AK_UNROLL
	for (i = 0; i < __AK_SIPHASH_WORDS && i < n; i++) {
		m = words[i];
		if (i + 1 == n && len < 8 * n) {
			tail = m;	/* the partial last word */
			break;
		}
		v3 ^= m;
		for (r = 0; r < c; r++)
			__AK_SIPROUND(v0, v1, v2, v3);
		v0 ^= m;
	}
	m = tail | (unsigned long long)len << 56;
	v3 ^= m;
	for (r = 0; r < c; r++)
		__AK_SIPROUND(v0, v1, v2, v3);
	v0 ^= m;
	v2 ^= 0xff;
	for (r = 0; r < d; r++)
		__AK_SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

/* The call: the function above, with its round counts checked constant. */
#define __ak_siphash(words, n, len, k0, k1, c, d)				\
	({									\
		_Static_assert(__builtin_constant_p(c) && __builtin_constant_p(d), \
			       "__ak_siphash: the round counts must be constants"); \
		(__ak_siphash)(words, n, len, k0, k1, c, d);			\
	})

#endif /* __ARENAKIT_SIPHASH_H */
