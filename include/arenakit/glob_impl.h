/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/glob_impl.h - the inside of glob.h: the one matcher, its class
 * and skip-ahead helpers, and the bodies of the calls glob.h declares.
 * Internal: include <arenakit/glob.h>, which includes this header at its
 * end. Nothing here is API.
 *
 * The matcher, __ak_glob_match(), is one always-inlined function, called
 * with constants for where the string is (__AK_GLOB_IN_ARENA or
 * __AK_GLOB_IN_SUBJECT) and whether it skips ahead after a '*', so each
 * caller gets only the code of its own case. Its two callers are the global
 * functions ak_glob_match_len() (arena, skipping ahead) and
 * ak_glob_match_subject() (a subject, not skipping: there every one of the
 * skip's unrolled loads is a masked index, which makes the function larger
 * and its stack deeper, for a string of at most AK_GLOB_SUBJECT_MAX - 1
 * bytes).
 */
#ifndef __ARENAKIT_GLOB_H
#error "<arenakit/glob_impl.h> is internal: include <arenakit/glob.h>"
#elif !defined(__ARENAKIT_GLOB_IMPL_H)
#define __ARENAKIT_GLOB_IMPL_H

/*
 * Match one class, pat pointing just past its '['. Returns 1 or 0 with
 * *@after set past the closing ']', -1 if the class is malformed (the '['
 * is then an ordinary character), or -AK_EBUDGET.
 */
static inline int __ak_glob_class(const char __arena *pat, unsigned char c,
				  const char __arena **after)
{
	int negate = *pat == '!', found = 0;
	const char __arena *span = pat + negate;
	unsigned char lo = *span++, hi;

	for (;;) {
		ak_cond_break_label(cut);
		if (!lo)
			return -1;
		hi = lo;
		if (span[0] == '-' && span[1] != ']') {
			hi = span[1];
			if (!hi)
				return -1;
			span += 2;
		}
		if (lo <= c && c <= hi)
			found = 1;
		lo = *span++;
		if (lo == ']')
			break;
	}
	*after = span;
	return found != negate;
cut:
	return -AK_EBUDGET;
}

/* Where the string is: what a position in it is, and how its bytes are read. */
enum __ak_glob_where {
	__AK_GLOB_IN_ARENA,	/* positions are arena addresses: pos.at */
	__AK_GLOB_IN_SUBJECT,	/* positions are indexes into subj->s: pos.i */
};

/*
 * A position in the string: an address in the arena, an index in a
 * subject. The matcher is one function for both, so a position carries
 * both, and the compiler drops the one its caller's where does not use. A
 * string in the arena is walked with pointers, one register fewer than the
 * string and an index, so the loop's values fit in registers.
 */
struct __ak_glob_pos {
	const char __arena *at;
	unsigned long long i;
};

/* @pos moved by @n bytes. */
static __ak_always_inline struct __ak_glob_pos
__ak_glob_move(const enum __ak_glob_where where, struct __ak_glob_pos pos, long long n)
{
	if (where == __AK_GLOB_IN_ARENA)
		pos.at += n;
	else
		pos.i += n;
	return pos;
}

/*
 * @pos, as a value of its own: for a subject's index, an operation the
 * verifier cannot see through ("|= 0", one instruction) ends the link a
 * register copy makes between the index and its copy. Linked, the two
 * share their range refinements and a "+1" offset, and each way they are
 * linked is a state of its own at the loop's head, which no other state
 * prunes: the matcher over a subject then took over ten times as long to
 * verify as over the arena, whose positions are pointers the verifier does
 * not track.
 */
static __ak_always_inline struct __ak_glob_pos __ak_glob_own(const enum __ak_glob_where where,
							     struct __ak_glob_pos pos)
{
#ifdef __BPF__
	if (where == __AK_GLOB_IN_SUBJECT)
		asm volatile("%0 |= 0" : "+r"(pos.i));
#else
	(void)where;
#endif
	return pos;
}

/* Whether @pos is before @end. */
static __ak_always_inline _Bool __ak_glob_before(const enum __ak_glob_where where,
						 struct __ak_glob_pos pos, struct __ak_glob_pos end)
{
	return where == __AK_GLOB_IN_ARENA ? pos.at < end.at : pos.i < end.i;
}

/* Whether at least @n bytes are left from @pos to @end (@pos is not past @end). */
static __ak_always_inline _Bool __ak_glob_left(const enum __ak_glob_where where,
					       struct __ak_glob_pos pos, struct __ak_glob_pos end,
					       unsigned int n)
{
	return where == __AK_GLOB_IN_ARENA ? end.at - pos.at >= n : end.i - pos.i >= n;
}

/*
 * The byte @k bytes past @pos. A subject's index is masked, which bounds
 * it for the verifier whatever subj->len says; either way the byte is a
 * plain char (the matcher says why).
 */
static __ak_always_inline char __ak_glob_byte(const enum __ak_glob_where where,
					      const struct ak_glob_subject *subj,
					      struct __ak_glob_pos pos, long long k)
{
	if (where == __AK_GLOB_IN_ARENA)
		return pos.at[k];
	return subj->s[(pos.i + k) & (AK_GLOB_SUBJECT_MAX - 1)];
}

/*
 * Whether none of the 8 bytes from @pos is @lit: a load and a compare a
 * byte, unrolled (a loop left rolled inside the matcher would be one the
 * verifier walks a byte at a time).
 */
static __ak_always_inline _Bool __ak_glob_none_of_8(const enum __ak_glob_where where,
						   const struct ak_glob_subject *subj,
						   struct __ak_glob_pos pos, char lit)
{
	int k;

	__ak_unroll
	for (k = 0; k < 8; k++)
		if (__ak_glob_byte(where, subj, pos, k) == lit)
			return 0;
	return 1;
}

/*
 * The skip ahead, at a mismatch after a '*' whose retry starts at *@at:
 * when the pattern byte after the '*', @lit, is a literal, the '*' can
 * only stop where the string has that byte, so go there, a load and a
 * compare a byte, instead of a matcher step and a mismatch a byte: 8 bytes
 * between two budget checks while 8 are left, then, within the 8 that hold
 * the byte or the string's end (@stop), a byte at a time.
 *
 * Returns 1 with *@at moved to the byte (or left where it was when @lit is
 * no literal: '?', '*', '[', '\\' or the pattern's end), 0 if the string
 * has no such byte (so the pattern cannot match), or -AK_EBUDGET.
 */
static __ak_always_inline int __ak_glob_skip(const enum __ak_glob_where where,
					     const struct ak_glob_subject *subj, char lit,
					     struct __ak_glob_pos *at, struct __ak_glob_pos stop)
{
	struct __ak_glob_pos pos = *at;
	int k;

	if (!lit || lit == '?' || lit == '*' || lit == '[' || lit == '\\')
		return 1;	/* no literal: no skip */
	for (;;) {
		ak_cond_break_label(cut);
		if (__ak_glob_left(where, pos, stop, 8) &&
		    __ak_glob_none_of_8(where, subj, pos, lit)) {
			pos = __ak_glob_move(where, pos, 8);
			continue;
		}
		/* The byte or the end is among the next 8. */
		__ak_unroll
		for (k = 0; k < 8; k++) {
			if (!__ak_glob_before(where, pos, stop))
				return 0;
			if (__ak_glob_byte(where, subj, pos, 0) == lit)
				goto found;
			pos = __ak_glob_move(where, pos, 1);
		}
	}
found:
	*at = pos;
	return 1;
cut:
	return -AK_EBUDGET;
}

/*
 * The matcher: the string is exactly the bytes from @at to @stop, and a
 * NUL among them is an ordinary byte that only '?', '*' or a negated class
 * matches (no pattern byte is NUL, and a range never starts at NUL). Past
 * the end the "character" is __AK_GLOB_END, which no byte equals: every
 * test of the end is a test of c, as lib/glob.c tests c == '\0', and the
 * verifier sees one more value of c, not one more comparison of positions,
 * which would split its states at every step.
 */
#define __AK_GLOB_END 256

/*
 * The matcher's loop, skipping ahead after a '*' if @skip. As in
 * lib/glob.c, a mismatch backtracks to the last '*' only, retrying it one
 * byte further: since a '*' matches any byte ('/' included), an earlier
 * '*' never needs to be retried, which bounds the steps by (pattern
 * length) x (string length).
 *
 * c, a byte of the string or __AK_GLOB_END past its end, and p are chars
 * converted alike, so they are equal exactly when the bytes are (a class
 * compares them as unsigned, as lib/glob.c does). Neither is converted to
 * unsigned char: the conversion would give the verifier a range to track
 * for each, and more states to visit.
 */
static __ak_always_inline int __ak_glob_match(const enum __ak_glob_where where, const _Bool skip,
					      const char __arena *pat,
					      const struct ak_glob_subject *subj,
					      struct __ak_glob_pos at, struct __ak_glob_pos stop)
{
	const char __arena *star_pat = 0, *next;
	struct __ak_glob_pos star_at = at;
	int c, in_class, skipped;
	char p;

	for (;;) {
		ak_cond_break_label(cut);
		c = __ak_glob_before(where, at, stop) ? __ak_glob_byte(where, subj, at, 0) :
							__AK_GLOB_END;
		p = *pat++;
		at = __ak_glob_move(where, at, 1);
		switch (p) {
		case '?':
			if (c == __AK_GLOB_END)
				return 0;
			continue;
		case '*':
			if (!*pat)
				return 1;	/* a trailing '*' takes the rest */
			/* Retry here: the '*' may eat one more character. */
			at = __ak_glob_move(where, at, -1);
			star_pat = pat;
			star_at = __ak_glob_own(where, at);
			continue;
		case '[':
			if (c == __AK_GLOB_END)
				return 0;
			in_class = __ak_glob_class(pat, c, &next);
			if (in_class == -AK_EBUDGET)
				return -AK_EBUDGET;
			if (in_class == 1) {
				pat = next;
				continue;
			}
			if (in_class == 0)
				goto mismatch;
			break;	/* malformed: '[' is a literal */
		case '\\':
			p = *pat++;
			break;
		}
		/* A literal; or the pattern's end, which only the string's end matches. */
		if (!p) {
			if (c == __AK_GLOB_END)
				return 1;
		} else if (c == p) {
			continue;
		}
mismatch:
		if (c == __AK_GLOB_END || !star_pat)
			return 0;
		/* The last '*' eats one more byte; the rest of the pattern goes on after it. */
		pat = star_pat;
		star_at = __ak_glob_move(where, star_at, 1);
		if (skip) {
			skipped = __ak_glob_skip(where, subj, *star_pat, &star_at, stop);
			if (skipped <= 0)
				return skipped;
		}
		at = __ak_glob_own(where, star_at);
	}
cut:
	return -AK_EBUDGET;
}

/*
 * The length of the NUL-terminated @str, or -AK_EBUDGET. Matching a C
 * string is matching its strlen() bytes: one matcher serves both forms, so
 * the verifier checks it once.
 */
static inline long long __ak_glob_strlen(const char __arena *str)
{
	unsigned long long n = ak_opaque_zero();

	for (;;) {
		ak_cond_break_label(cut);
		if (!str[n])
			return n;
		n++;
	}
cut:
	return -AK_EBUDGET;
}

/* @len, or @str's strlen() for AK_GLOB_NUL_TERMINATED; -AK_EBUDGET if cut. */
static __ak_always_inline long long __ak_glob_length(const char __arena *str,
						     unsigned long long len)
{
	return len == AK_GLOB_NUL_TERMINATED ? __ak_glob_strlen(str) : (long long)len;
}

/* The end opaque, so the verifier does not track the comparisons with it. */
__ak_global int ak_glob_match_len(__arg_arena const char __arena *pat,
				  __arg_arena const char __arena *str, unsigned long long len)
{
	long long n = __ak_glob_length(str, len);

	if (n < 0)
		return -AK_EBUDGET;
	return __ak_glob_match(__AK_GLOB_IN_ARENA, 1, pat, 0, (struct __ak_glob_pos){ .at = str },
			       (struct __ak_glob_pos){ .at = str + n + ak_opaque_zero() });
}

/* Both ends opaque: a bounded index would give each step its own state. */
__ak_global int ak_glob_match_subject(__arg_arena const char __arena *pat,
				      __ak_nonnull const struct ak_glob_subject *subj)
{
	if (subj->len > AK_GLOB_SUBJECT_MAX)
		return -E2BIG;
	return __ak_glob_match(__AK_GLOB_IN_SUBJECT, 0, pat, subj,
			       (struct __ak_glob_pos){ .i = ak_opaque_zero() },
			       (struct __ak_glob_pos){ .i = subj->len + ak_opaque_zero() });
}

#ifdef __BPF__
/*
 * After bpf_probe_read_{kernel,user}_str() of @src into @subj->s returned
 * @n: the subject's length, or -E2BIG with the subject marked cut when the
 * helper filled all of s and the string goes on past it (the byte the
 * helper replaced with its NUL is not one). @user says which helper.
 */
static __always_inline int __ak_glob_subject_fill(struct ak_glob_subject *subj, long n,
						  const void *src, const _Bool user)
{
	const char *last = (const char *)src + AK_GLOB_SUBJECT_MAX - 1;
	char next = 0;

	if (n == AK_GLOB_SUBJECT_MAX &&
	    ((user ? bpf_probe_read_user(&next, 1, last) : bpf_probe_read_kernel(&next, 1, last)) ||
	     next)) {
		subj->len = AK_GLOB_SUBJECT_MAX + 1;
		return -E2BIG;
	}
	if (n <= 0) {
		subj->len = 0;
		return n < 0 ? (int)n : -EFAULT;
	}
	subj->len = n - 1;	/* without the NUL */
	return 0;
}

static __always_inline int ak_glob_subject_read_kernel(struct ak_glob_subject *subj,
						       const void *src)
{
	long n = bpf_probe_read_kernel_str(subj->s, sizeof(subj->s), src);

	return __ak_glob_subject_fill(subj, n, src, 0);
}

static __always_inline int ak_glob_subject_read_user(struct ak_glob_subject *subj,
						     const void *src)
{
	long n = bpf_probe_read_user_str(subj->s, sizeof(subj->s), src);

	return __ak_glob_subject_fill(subj, n, src, 1);
}
#endif /* __BPF__ */

static inline int ak_glob_match_batch(const char __arena *const __arena *patterns,
				      unsigned int npatterns,
				      const char __arena *const __arena *strings,
				      const unsigned int __arena *lengths, unsigned int nstrings,
				      unsigned int __arena *matched, unsigned int __arena *cut,
				      unsigned int *next)
{
	unsigned int i = *next + (unsigned int)ak_opaque_zero(), j, yes, cut_bits;
	int result;

	if (npatterns > AK_GLOB_MAX_PATTERNS)
		return -EINVAL;
	while (i < nstrings) {
		if (!ak_can_loop)
			goto stop;
		yes = 0;
		cut_bits = 0;
		for (j = (unsigned int)ak_opaque_zero(); j < npatterns; j++) {
			if (!ak_can_loop)
				goto stop;
			result = ak_glob_match_len(patterns[j], strings[i], lengths[i]);
			if (result == 1)
				yes |= 1u << (j & 31);
			else if (result < 0)
				cut_bits |= 1u << (j & 31);
		}
		matched[i] = yes;
		cut[i] = cut_bits;
		i++;
	}
	*next = i;
	return 0;
stop:
	*next = i;
	return -AK_EBUDGET;
}

static inline int ak_glob_valid(const char __arena *pat, unsigned long long max_len,
				unsigned long long *at)
{
	const char __arena *after;
	unsigned long long i = ak_opaque_zero();
	int err = 0;

	if (!pat[0]) {
		err = AK_GLOB_EMPTY;
		goto out;
	}
	for (; pat[i]; i++) {
		ak_cond_break_label(cut);
		if (i >= max_len)
			break;
		if (pat[i] == '\\' && pat[i + 1]) {
			i++;
		} else if (pat[i] == '[') {
			err = __ak_glob_class(pat + i + 1, 0, &after);
			if (err == -AK_EBUDGET)
				return err;
			if (err < 0) {
				err = AK_GLOB_UNCLOSED_CLASS;
				break;
			}
			err = 0;
			i = after - pat - 1;	/* on the ']' */
		}
	}
	if (!err && (i > max_len || pat[i])) {	/* bytes left past the limit */
		err = AK_GLOB_TOO_LONG;
		i = max_len;
	}
out:
	if (at)
		*at = err ? i : 0;
	return err;
cut:
	return -AK_EBUDGET;
}

#ifndef __BPF__
static inline const char *ak_glob_invalid_reason(int err)
{
	switch (err) {
	case 0:
		return "a valid pattern";
	case AK_GLOB_EMPTY:
		return "an empty pattern (it matches only the empty string)";
	case AK_GLOB_TOO_LONG:
		return "a pattern longer than its limit";
	case AK_GLOB_UNCLOSED_CLASS:
		return "a '[' that opens no class (no ']' closes it; write \\[ for a literal '[')";
	case -AK_EBUDGET:
		return "the loop budget ran out";
	default:
		return "an unknown reason";
	}
}
#endif

#endif /* __ARENAKIT_GLOB_IMPL_H */
