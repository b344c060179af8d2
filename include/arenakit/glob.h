/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/glob.h - glob(7) matching of arena strings, with the semantics of
 * the kernel's lib/glob.c (6.12):
 *
 *   ?        any one character
 *   *        any run of characters, '/' and a leading '.' included
 *   [...]    a class of characters and ranges a-b; [!...] negates; ']' may
 *            come first in the class; a '[' without a well-formed class
 *            after it is an ordinary character
 *   \c       the character c itself
 *
 * The whole string must match: up to its NUL (ak_glob_match), or exactly
 * its length in bytes, NULs included (ak_glob_match_len). Matching
 * backtracks to the last '*' only, so its cost is at most (pattern length)
 * x (string length) steps, each bounded by may_goto (plus the string's
 * length, to find the NUL of a C string). The result has three values:
 *
 *   1  match      0  no match      -AK_EBUDGET  the loop budget ran out
 *
 * never a guess: a cut match says so.
 */
#ifndef __ARENAKIT_GLOB_H
#define __ARENAKIT_GLOB_H

#include <arenakit/arena.h>

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

/*
 * A length that means "up to the first NUL": what ak_glob_match() passes,
 * and what a caller of ak_glob_match_call() passes for a C string. No real
 * string is this long.
 */
#define AK_GLOB_NUL_TERMINATED (~0ULL >> 1)

/*
 * The matcher: the string is exactly @len bytes, and a NUL among them is
 * an ordinary byte that only '?', '*' or a negated class matches (no
 * pattern byte is NUL, and a range never starts at NUL). Past the end the
 * "character" is __AK_GLOB_END, which no byte equals: every test of the
 * end is a test of c, as lib/glob.c tests c == '\0', and the verifier
 * sees one more value of c, not one more comparison of indexes, which
 * would split its states at every step.
 */
#define __AK_GLOB_END 256

/*
 * A skip ahead after a '*' (in the matcher below) tests 8 bytes between
 * two budget checks, written out (a loop clang may not unroll inside the
 * matcher would be one the verifier walks a byte at a time): while 8 bytes
 * are left, a load and a compare a byte; then, within the 8 that hold the
 * byte or the string's end, a byte at a time.
 */
#define __AK_GLOB_NONE_OF_8(byte_at)					\
	(byte_at(at) != lit && byte_at(at + 1) != lit &&		\
	 byte_at(at + 2) != lit && byte_at(at + 3) != lit &&		\
	 byte_at(at + 4) != lit && byte_at(at + 5) != lit &&		\
	 byte_at(at + 6) != lit && byte_at(at + 7) != lit)
#define __AK_GLOB_SKIP_1(byte_at)					\
	do {								\
		if (at >= stop)						\
			return 0;					\
		if (byte_at(at) == lit)					\
			goto resume;					\
		at++;							\
	} while (0)
#define __AK_GLOB_SKIP_4(byte_at)					\
	do {								\
		__AK_GLOB_SKIP_1(byte_at);				\
		__AK_GLOB_SKIP_1(byte_at);				\
		__AK_GLOB_SKIP_1(byte_at);				\
		__AK_GLOB_SKIP_1(byte_at);				\
	} while (0)

/*
 * The skip ahead, at a mismatch after a '*' (the matcher's position reset
 * to the byte after the star's): when a literal follows the '*', the '*'
 * can only stop where the string has that byte, so go there, a load and a
 * compare a byte, instead of a matcher step and a mismatch a byte. Only
 * ak_glob_match_call() has it: a global function, verified once. Inlined
 * (ak_glob_match() in a walk, say), the skip's branches would multiply the
 * verifier's states at every call site.
 */
#define __AK_GLOB_SKIP_AHEAD(byte_at)					\
	do {								\
		char lit = *star_pat;					\
									\
		if (!lit || lit == '?' || lit == '*' || lit == '[' || lit == '\\') \
			break;		/* no literal: no skip */	\
		for (;;) {						\
			ak_cond_break_label(cut);			\
			if (stop - at >= 8 && __AK_GLOB_NONE_OF_8(byte_at)) { \
				at += 8;				\
				continue;				\
			}						\
			/* The byte or the end is among the next 8. */	\
			__AK_GLOB_SKIP_4(byte_at);			\
			__AK_GLOB_SKIP_4(byte_at);			\
		}							\
resume:									\
		star_at = at;						\
	} while (0)
#define __AK_GLOB_NO_SKIP(byte_at)

/*
 * The matcher's body, for a string in the arena (positions are pointers)
 * or in a subject buffer (indexes): from @start to @end, @byte_at(at)
 * reads the byte at position at. The rest is the same code for both.
 *
 * c, a byte of the string or __AK_GLOB_END past its end, and p are chars
 * converted alike, so they are equal exactly when the bytes are (a class
 * compares them as unsigned, as lib/glob.c does). Neither is converted to
 * unsigned char: the conversion would give the verifier a range to track
 * for each, and more states to visit.
 */
#define __AK_GLOB_MATCH_BODY(pos_type, start, end, byte_at, skip_ahead) \
	const char __arena *star_pat = 0, *next;			\
	pos_type at = (start);						\
	pos_type star_at = at;						\
	pos_type stop = (end);						\
	int c, in_class;						\
	char p;								\
									\
	for (;;) {							\
		ak_cond_break_label(cut);				\
		c = at < stop ? byte_at(at) : __AK_GLOB_END;		\
		p = *pat++;						\
		at++;							\
		switch (p) {						\
		case '?':						\
			if (c == __AK_GLOB_END)				\
				return 0;				\
			continue;					\
		case '*':						\
			if (!*pat)					\
				return 1;	/* a trailing '*' takes the rest */ \
			/* Retry here: the '*' may eat one more character. */ \
			star_pat = pat;					\
			star_at = --at;					\
			continue;					\
		case '[':						\
			if (c == __AK_GLOB_END)				\
				return 0;				\
			in_class = __ak_glob_class(pat, c, &next);	\
			if (in_class == -AK_EBUDGET)			\
				return -AK_EBUDGET;			\
			if (in_class == 1) {				\
				pat = next;				\
				continue;				\
			}						\
			if (in_class == 0)				\
				goto mismatch;				\
			break;	/* malformed: '[' is a literal */	\
		case '\\':						\
			p = *pat++;					\
			break;						\
		}							\
		/* A literal; or the pattern's end, which only the string's end matches. */ \
		if (!p) {						\
			if (c == __AK_GLOB_END)				\
				return 1;				\
		} else if (c == p) {					\
			continue;					\
		}							\
mismatch:								\
		if (c == __AK_GLOB_END || !star_pat)			\
			return 0;					\
		pat = star_pat;						\
		at = ++star_at;						\
		skip_ahead(byte_at);					\
	}								\
cut:									\
	return -AK_EBUDGET

#define __ak_glob_arena_byte(at) (*(at))

/*
 * A string in the arena, walked with pointers (one register fewer than the
 * string and an index, so the loop's values fit in registers); the end is
 * opaque so the verifier does not track the comparisons.
 */
static inline int __ak_glob_match(const char __arena *pat, const char __arena *str,
				  unsigned long long len)
{
	__AK_GLOB_MATCH_BODY(const char __arena *, str, str + len + ak_opaque_zero(),
			     __ak_glob_arena_byte, __AK_GLOB_NO_SKIP);
}

/* The same, skipping ahead after a '*': for ak_glob_match_call() only. */
static inline int __ak_glob_match_skipping(const char __arena *pat, const char __arena *str,
					   unsigned long long len)
{
	__AK_GLOB_MATCH_BODY(const char __arena *, str, str + len + ak_opaque_zero(),
			     __ak_glob_arena_byte, __AK_GLOB_SKIP_AHEAD);
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

/*
 * ak_glob_match_len() is out of line in BPF (a static function, verified
 * at each call site, but entered with only its arguments live): inlined
 * into a caller's loop, the matcher is verified with the caller's states
 * as well, 176k instructions instead of 19k in tests/guest/mistakes.bpf.c's
 * walk.
 */
#ifdef __BPF__
#define __ak_glob_out_of_line static __attribute__((noinline))
#else
#define __ak_glob_out_of_line static inline
#endif

/**
 * ak_glob_match_len - match exactly @len bytes of @str against @pat
 * @pat: NUL-terminated pattern
 * @str: the string; @len bytes are read, and a NUL among them is an
 *       ordinary byte (only '?', '*' or a negated class matches it)
 * @len: the string's length; AK_GLOB_NUL_TERMINATED means it ends at its
 *       first NUL instead, as for ak_glob_match()
 *
 * Lines read from a file may hold NUL bytes: give their length, and the
 * match sees the whole line.
 *
 * Return: 1 on a match, 0 on none, -AK_EBUDGET if the budget ran out.
 */
__ak_glob_out_of_line int ak_glob_match_len(const char __arena *pat, const char __arena *str,
					    unsigned long long len)
{
	long long n = __ak_glob_length(str, len);

	return n < 0 ? -AK_EBUDGET : __ak_glob_match(pat, str, n);
}

/**
 * ak_glob_match - match the NUL-terminated @str against @pat
 * @pat: NUL-terminated pattern
 * @str: NUL-terminated string
 *
 * Return: 1 on a match, 0 on none, -AK_EBUDGET if the budget ran out.
 */
static inline int ak_glob_match(const char __arena *pat, const char __arena *str)
{
	return ak_glob_match_len(pat, str, AK_GLOB_NUL_TERMINATED);
}

/* Why ak_glob_valid() refuses a pattern (0: it does not). */
enum ak_glob_invalid {
	AK_GLOB_EMPTY = 1,		/* "": matches only the empty string */
	AK_GLOB_TOO_LONG,		/* longer than the caller's limit */
	AK_GLOB_UNCLOSED_CLASS,		/* a '[' with no class after it */
};

/**
 * ak_glob_valid - whether @pat is a pattern worth storing, and if not why
 * @pat: NUL-terminated pattern (in the arena in BPF; any string in user
 *	space, where a loader checks a rule before writing it)
 * @max_len: the longest pattern the caller keeps, in bytes without its NUL
 * @at: if not NULL, set to the offset of what is wrong (the '[', or
 *	@max_len for a pattern too long)
 *
 * Every pattern has a meaning in lib/glob.c, so this is about what a user
 * meant: an empty pattern matches only the empty string; one longer than
 * where it is kept would be cut; and a '[' with no well-formed class after
 * it is matched as a literal '[' (write "\[" for that), which a rule such
 * as "/tmp/[ab" almost never means. A loader refuses such a pattern with
 * the reason; ak_glob_invalid_reason() words it in user space.
 *
 * Return: 0 if valid; enum ak_glob_invalid; -AK_EBUDGET if the loop budget
 * ran out (BPF).
 */
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
/* The words for an ak_glob_valid() answer, for a loader's message. */
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

/*
 * A string outside the arena: what a program matches without storing it
 * there first, such as a file name copied into a map value (or onto the
 * stack: 260 bytes of its 512) by ak_glob_subject_read_kernel() or _user().
 * Its bytes are read at a masked index, which the verifier bounds whatever
 * len says. A string longer than AK_GLOB_SUBJECT_MAX - 1 bytes does not
 * fit (a path can be 4096): the readers say so (-E2BIG) and mark the
 * subject, and ak_glob_match_subject() answers -E2BIG for it, never a
 * match or a miss of the string's first bytes alone.
 */
#define AK_GLOB_SUBJECT_MAX 256	/* bytes; a power of two */

struct ak_glob_subject {
	/* bytes of s in the string, NULs included; over AK_GLOB_SUBJECT_MAX: cut */
	unsigned int len;
	char s[AK_GLOB_SUBJECT_MAX];
};

#ifdef __BPF__
/*
 * After bpf_probe_read_{kernel,user}_str() of @src into @subj->s returned
 * @n: the subject's length, or -E2BIG with the subject marked cut when the
 * helper filled all of s and the string goes on past it (the byte the
 * helper replaced with its NUL is not one).
 */
#define __ak_glob_subject_fill(subj, n, read_byte, src)			\
	({								\
		long ___ak_n = (n);					\
		char ___ak_next = 0;					\
		int ___ak_err = 0;					\
									\
		if (___ak_n == AK_GLOB_SUBJECT_MAX &&			\
		    (read_byte(&___ak_next, 1, (const char *)(src) + AK_GLOB_SUBJECT_MAX - 1) || \
		     ___ak_next)) {					\
			(subj)->len = AK_GLOB_SUBJECT_MAX + 1;		\
			___ak_err = -E2BIG;				\
		} else if (___ak_n <= 0) {				\
			(subj)->len = 0;				\
			___ak_err = ___ak_n < 0 ? (int)___ak_n : -EFAULT; \
		} else {						\
			(subj)->len = ___ak_n - 1;	/* without the NUL */ \
		}							\
		___ak_err;						\
	})

/**
 * ak_glob_subject_read_kernel - copy the kernel string at @src into @subj
 * (tracing programs: bpf_probe_read_kernel_str())
 * @subj: the subject, outside the arena (a map value, the stack)
 * @src: the NUL-terminated string, such as a file name in a kernel struct
 *
 * Return: 0; -E2BIG if the string is longer than AK_GLOB_SUBJECT_MAX - 1
 * bytes (@subj keeps its first bytes for a message, marked so that
 * ak_glob_match_subject() answers -E2BIG); or the helper's error (@subj
 * then has length 0).
 */
static __always_inline int ak_glob_subject_read_kernel(struct ak_glob_subject *subj,
						       const void *src)
{
	long n = bpf_probe_read_kernel_str(subj->s, sizeof(subj->s), src);

	return __ak_glob_subject_fill(subj, n, bpf_probe_read_kernel, src);
}

/**
 * ak_glob_subject_read_user - copy the user-space string at @src into @subj
 * (bpf_probe_read_user_str(): a path a system call was given)
 * @subj: the subject, outside the arena
 * @src: the NUL-terminated string, in the current task's memory
 *
 * Return: as ak_glob_subject_read_kernel().
 */
static __always_inline int ak_glob_subject_read_user(struct ak_glob_subject *subj,
						     const void *src)
{
	long n = bpf_probe_read_user_str(subj->s, sizeof(subj->s), src);

	return __ak_glob_subject_fill(subj, n, bpf_probe_read_user, src);
}
#endif /* __BPF__ */

#define __ak_glob_subject_byte(at) (subj->s[(at) & (AK_GLOB_SUBJECT_MAX - 1)])

static inline int __ak_glob_match_subject(const char __arena *pat,
					  const struct ak_glob_subject *subj)
{
	/* Both ends opaque: a bounded index would give each step its own state. */
	__AK_GLOB_MATCH_BODY(unsigned long long, ak_opaque_zero(),
			     subj->len + ak_opaque_zero(), __ak_glob_subject_byte,
			     __AK_GLOB_NO_SKIP);
}

/**
 * ak_glob_match_subject - match a string outside the arena against @pat
 * @pat: NUL-terminated pattern, in the arena
 * @subj: the string: @subj->len bytes of @subj->s (a NUL among them is an
 *	ordinary byte, as for ak_glob_match_len())
 *
 * A global function in BPF (checked once by the verifier, with a loop
 * budget of its own per call), so a program can call it in a loop over
 * patterns; any program type.
 *
 * Return: 1 on a match, 0 on none, -AK_EBUDGET if the budget ran out,
 * -E2BIG if @subj->len is over AK_GLOB_SUBJECT_MAX: the string did not fit
 * (ak_glob_subject_read_kernel() and _user() mark it so), and its first
 * bytes alone are no answer.
 */
__ak_global int ak_glob_match_subject(__arg_arena const char __arena *pat,
				      __ak_nonnull const struct ak_glob_subject *subj)
{
	if (subj->len > AK_GLOB_SUBJECT_MAX)
		return -E2BIG;
	return __ak_glob_match_subject(pat, subj);
}

#define AK_GLOB_MAX_PATTERNS 32

/**
 * ak_glob_match_call - ak_glob_match_len() as a global function (any program)
 * @pat: NUL-terminated pattern
 * @str: the string
 * @len: as for ak_glob_match_len(): a length, or AK_GLOB_NUL_TERMINATED
 *
 * The call to make in a loop over patterns or strings, as
 * ak_glob_match_batch() makes it: the verifier checks it once, on its own
 * (inlined into such a loop, the matcher's states multiply past the
 * verifier's limit), and each call gets a fresh loop budget. It is also
 * the fast form: after a '*' followed by a literal byte it skips ahead to
 * where the string has that byte, 8 bytes a budget check, where the
 * inline forms go a matcher step a byte (the skip's branches would
 * multiply the verifier's work at every inline call site). The same
 * answers either way.
 *
 * Return: as ak_glob_match_len().
 */
__ak_global int ak_glob_match_call(__arg_arena const char __arena *pat,
				   __arg_arena const char __arena *str, unsigned long long len)
{
	long long n = __ak_glob_length(str, len);

	return n < 0 ? -AK_EBUDGET : __ak_glob_match_skipping(pat, str, n);
}

/**
 * ak_glob_match_batch - match N strings against M patterns
 * @patterns: @npatterns pattern pointers (at most AK_GLOB_MAX_PATTERNS)
 * @npatterns: number of patterns
 * @strings: @nstrings string pointers
 * @lengths: each string's length in bytes, NULs included (see ak_glob_match_len)
 * @nstrings: number of strings
 * @matched: per string, bit j set if it matches pattern j
 * @cut: per string, bit j set if the loop budget cut that match (no answer)
 * @next: the first string to do; on return, where the next call goes on
 *
 * Return: 0 when every string is done; -AK_EBUDGET if this call's loop
 * ran out first (call again, in the next program run, with the same @next);
 * -EINVAL for too many patterns.
 */
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
			result = ak_glob_match_call(patterns[j], strings[i], lengths[i]);
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

#endif /* __ARENAKIT_GLOB_H */
