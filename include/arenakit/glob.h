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
 *
 *   ak_glob_match(pat, str)              a C string in the arena
 *   ak_glob_match_len(pat, str, len)     @len bytes in the arena
 *   ak_glob_match_subject(pat, &subj)    a string outside the arena, copied
 *                                        by ak_glob_subject_read_kernel/user
 *   ak_glob_match_batch(...)             N strings x M patterns, resumable
 *   ak_glob_valid(pat, max, &at)         whether a pattern is worth storing
 *
 * One matcher serves every call (glob_impl.h). In BPF it runs in two global
 * functions, ak_glob_match_len() for arena strings and
 * ak_glob_match_subject(): the verifier checks each once, on its own,
 * instead of at every call site with every state of the caller's loop (a
 * few inlined calls in a walk would pass its limit), and each call starts
 * with a fresh loop budget. So a program of any type may call them in a
 * loop over patterns or strings; not while it holds a bpf_spin_lock or has
 * preemption disabled, where the verifier refuses global calls.
 */
#ifndef __ARENAKIT_GLOB_H
#define __ARENAKIT_GLOB_H

#include <arenakit/arena.h>

/*
 * A length that means "up to the first NUL": what ak_glob_match() passes,
 * and what a caller of ak_glob_match_len() passes for a C string. No real
 * string is this long.
 */
#define AK_GLOB_NUL_TERMINATED (~0ULL >> 1)

/* The most patterns ak_glob_match_batch() takes (a bit each in a word). */
#define AK_GLOB_MAX_PATTERNS 32

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

/* Why ak_glob_valid() refuses a pattern (0: it does not). */
enum ak_glob_invalid {
	AK_GLOB_EMPTY = 1,		/* "": matches only the empty string */
	AK_GLOB_TOO_LONG,		/* longer than the caller's limit */
	AK_GLOB_UNCLOSED_CLASS,		/* a '[' with no class after it */
};

/**
 * ak_glob_match_len - match exactly @len bytes of @str against @pat
 * @pat: NUL-terminated pattern
 * @str: the string; @len bytes are read, and a NUL among them is an
 *       ordinary byte (only '?', '*' or a negated class matches it)
 * @len: the string's length; AK_GLOB_NUL_TERMINATED means it ends at its
 *       first NUL instead, as for ak_glob_match()
 *
 * Lines read from a file may hold NUL bytes: give their length, and the
 * match sees the whole line. After a '*' followed by a literal byte the
 * matcher skips ahead to where the string has that byte, 8 bytes a budget
 * check, instead of a matcher step a byte. A global function in BPF.
 *
 * Return: 1 on a match, 0 on none, -AK_EBUDGET if the budget ran out.
 */
__ak_global int ak_glob_match_len(__arg_arena const char __arena *pat,
				  __arg_arena const char __arena *str, unsigned long long len);

/**
 * ak_glob_match - match the NUL-terminated @str against @pat
 * @pat: NUL-terminated pattern
 * @str: NUL-terminated string
 *
 * ak_glob_match_len() with AK_GLOB_NUL_TERMINATED: the same matcher, the
 * same global function in BPF.
 *
 * Return: 1 on a match, 0 on none, -AK_EBUDGET if the budget ran out.
 */
static inline int ak_glob_match(const char __arena *pat, const char __arena *str)
{
	return ak_glob_match_len(pat, str, AK_GLOB_NUL_TERMINATED);
}

/**
 * ak_glob_match_subject - match a string outside the arena against @pat
 * @pat: NUL-terminated pattern, in the arena
 * @subj: the string: @subj->len bytes of @subj->s (a NUL among them is an
 *	ordinary byte, as for ak_glob_match_len())
 *
 * The same matcher as ak_glob_match_len() (without its skip ahead), over
 * the subject's buffer; a global function in BPF.
 *
 * Return: 1 on a match, 0 on none, -AK_EBUDGET if the budget ran out,
 * -E2BIG if @subj->len is over AK_GLOB_SUBJECT_MAX: the string did not fit
 * (ak_glob_subject_read_kernel() and _user() mark it so), and its first
 * bytes alone are no answer.
 */
__ak_global int ak_glob_match_subject(__arg_arena const char __arena *pat,
				      __ak_nonnull const struct ak_glob_subject *subj);

#ifdef __BPF__
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
						       const void *src);

/**
 * ak_glob_subject_read_user - copy the user-space string at @src into @subj
 * (bpf_probe_read_user_str(): a path a system call was given)
 * @subj: the subject, outside the arena
 * @src: the NUL-terminated string, in the current task's memory
 *
 * Return: as ak_glob_subject_read_kernel().
 */
static __always_inline int ak_glob_subject_read_user(struct ak_glob_subject *subj,
						     const void *src);
#endif /* __BPF__ */

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
 * Each pair is a call of ak_glob_match_len(), the global function: the
 * verifier checks the matcher once, not in this loop's every state.
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
				      unsigned int *next);

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
				unsigned long long *at);

#ifndef __BPF__
/**
 * ak_glob_invalid_reason - the words for an ak_glob_valid() answer
 * @err: what ak_glob_valid() returned
 *
 * Return: a phrase for a loader's message ("an empty pattern ...").
 */
static inline const char *ak_glob_invalid_reason(int err);
#endif

/* The matcher and the bodies of the calls above: internal. */
#include <arenakit/glob_impl.h>

#endif /* __ARENAKIT_GLOB_H */
