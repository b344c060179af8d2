// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* glob.h built for user space: the kernel's vectors, and fnmatch(3) as a second opinion. */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>
#include <arenakit/glob.h>

#include "glob_pairs.h"

#define VECTORS "tests/data/globtest.tsv"

Test(glob_host, kernel_globtest_vectors)
{
	FILE *f = fopen(VECTORS, "r");
	char line[512];
	int n = 0;

	cr_assert(f, "cannot open %s (run from the checkout)", VECTORS);
	while (fgets(line, sizeof(line), f)) {
		char *want, *pat, *str;

		if (line[0] == '#')
			continue;
		line[strcspn(line, "\n")] = '\0';
		want = strtok(line, "\t");
		pat = want + strlen(want) + 1;
		str = pat + strcspn(pat, "\t");
		*str++ = '\0';
		cr_expect_eq(ak_glob_match(pat, str), atoi(want), "\"%s\" vs \"%s\"", pat, str);
		n++;
	}
	fclose(f);
	cr_expect_eq(n, 64, "%d vectors read, lib/globtest.c has 64", n);
}

Test(glob_host, length_bound_ends_the_string)
{
	const char buf[] = "abcXYZ";

	cr_expect_eq(ak_glob_match_len("abc", buf, 3), 1);
	cr_expect_eq(ak_glob_match_len("abc*", buf, 3), 1);
	cr_expect_eq(ak_glob_match_len("abc?", buf, 3), 0);
	cr_expect_eq(ak_glob_match_len("*Y*", buf, 4), 0);
	cr_expect_eq(ak_glob_match_len("*Y*", buf, 5), 1);
	cr_expect_eq(ak_glob_match_len("", buf, 0), 1);
}

Test(glob_host, kernel_specific_corners)
{
	cr_expect_eq(ak_glob_match("[", "["), 1, "an unclosed class is a literal '['");
	cr_expect_eq(ak_glob_match("[a-", "[a-"), 1);
	cr_expect_eq(ak_glob_match("\\*", "*"), 1);
	cr_expect_eq(ak_glob_match("\\*", "a"), 0);
	cr_expect_eq(ak_glob_match("*", "a/b/.c"), 1, "no special '/' or leading '.'");
	cr_expect_eq(ak_glob_match("[^a]", "^"), 1, "'^' does not negate");
	cr_expect_eq(ak_glob_match("[z-a]", "m"), 0, "a reversed range matches nothing");
}

Test(glob_host, bytes_above_0x7f_are_bytes)
{
	/* lib/glob.c reads both sides as unsigned char: UTF-8 matches bytewise. */
	cr_expect_eq(ak_glob_match("caf\xc3\xa9", "caf\xc3\xa9"), 1);
	cr_expect_eq(ak_glob_match("*\xc3\xa9", "caf\xc3\xa9"), 1);
	cr_expect_eq(ak_glob_match("caf\xc3\xa9", "caf\xc3\xa8"), 0);
	cr_expect_eq(ak_glob_match("caf??", "caf\xc3\xa9"), 1);
	cr_expect_eq(ak_glob_match("[\x80-\xff]", "\xc3"), 1, "a range of high bytes");
	cr_expect_eq(ak_glob_match("[a-z]", "\xc3"), 0);
	cr_expect_eq(ak_glob_match("[!a-z]", "\xc3"), 1);
	cr_expect_eq(ak_glob_match("\\\xc3", "\xc3"), 1, "an escaped high byte");
	cr_expect_eq(ak_glob_match_len("\xff*", "\xff\0\xff", 3), 1);
}

static struct ak_glob_subject subject(const char *s, size_t len)
{
	struct ak_glob_subject subj = { .len = len };

	memcpy(subj.s, s, len);
	return subj;
}

Test(glob_host, subject_outside_the_arena_matches_as_arena_strings_do)
{
	unsigned int seed = GLOB_PAIRS_SEED;
	char pat[16], str[16];
	struct ak_glob_subject subj;
	int i, differ = 0;

	for (i = 0; i < 100000; i++) {
		glob_random_pair(pat, str, &seed);
		subj = subject(str, strlen(str));
		if (ak_glob_match_subject(pat, &subj) != ak_glob_match(pat, str) && differ++ < 10)
			cr_log_error("\"%s\" vs \"%s\": subject %d, string %d", pat, str,
				     ak_glob_match_subject(pat, &subj), ak_glob_match(pat, str));
	}
	cr_expect_eq(differ, 0, "%d of %d pairs differ", differ, i);
	subj = subject("ab\0c", 4);
	cr_expect_eq(ak_glob_match_subject("ab?c", &subj), 1, "a NUL is a byte");
	cr_expect_eq(ak_glob_match_subject("ab", &subj), 0);
	subj = subject("/usr/bin/caf\xc3\xa9", 14);
	cr_expect_eq(ak_glob_match_subject("*/caf\xc3\xa9", &subj), 1);
	subj.len = AK_GLOB_SUBJECT_MAX;
	memset(subj.s, 'x', sizeof(subj.s));
	cr_expect_eq(ak_glob_match_subject("x*x", &subj), 1, "a full buffer");
	subj.len = AK_GLOB_SUBJECT_MAX + 1;
	cr_expect_eq(ak_glob_match_subject("*", &subj), -E2BIG, "a string cut to fit is no answer");
}

Test(glob_host, agrees_with_fnmatch)
{
	unsigned int seed = GLOB_PAIRS_SEED;
	char pat[16], str[16];
	int pairs = 0, compared = 0, disagree = 0;

	for (pairs = 0; pairs < 200000; pairs++) {
		glob_random_pair(pat, str, &seed);
		if (glob_known_difference(pat))
			continue;
		compared++;
		if (ak_glob_match(pat, str) != !fnmatch(pat, str, 0) && disagree++ < 10)
			cr_log_error("\"%s\" vs \"%s\": ours %d, fnmatch %d", pat, str,
				     ak_glob_match(pat, str), !fnmatch(pat, str, 0));
	}
	cr_expect_eq(disagree, 0, "%d of %d pairs disagree", disagree, compared);
	cr_expect_gt(compared, 100000, "only %d pairs compared", compared);
}

Test(glob_host, batch_matches_every_pair)
{
	const char *patterns[] = { "*.c", "*/*", "[!a-z]*" };
	const char *strings[] = { "a.c", "dir/b.h", "Makefile", "x.cc" };
	unsigned int lengths[] = { 3, 7, 8, 4 }, matched[4], cut[4], next = 0;

	cr_assert_eq(ak_glob_match_batch(patterns, 3, strings, lengths, 4, matched, cut, &next), 0);
	cr_expect_eq(next, 4);
	cr_expect_eq(matched[0], 1u << 0);
	cr_expect_eq(matched[1], 1u << 1);
	cr_expect_eq(matched[2], 1u << 2);
	cr_expect_eq(matched[3], 0);
	cr_expect_eq(cut[0] | cut[1] | cut[2] | cut[3], 0);
	next = 0;
	cr_expect_eq(ak_glob_match_batch(patterns, 33, strings, lengths, 4, matched, cut, &next),
		     -EINVAL);
}

Test(glob_host, nul_is_an_ordinary_byte_within_len)
{
	const char s[] = "a\0c";	/* 3 bytes, the middle one NUL */

	cr_expect_eq(ak_glob_match_len("a?c", s, 3), 1, "'?' matches a NUL");
	cr_expect_eq(ak_glob_match_len("a*c", s, 3), 1, "'*' eats a NUL");
	cr_expect_eq(ak_glob_match_len("*", s, 3), 1);
	cr_expect_eq(ak_glob_match_len("a[!x]c", s, 3), 1, "a negated class matches a NUL");
	cr_expect_eq(ak_glob_match_len("a[a-z]c", s, 3), 0, "a class does not");
	cr_expect_eq(ak_glob_match_len("a", s, 3), 0, "the NUL does not end the string");
	cr_expect_eq(ak_glob_match_len("a?", s, 3), 0);
	cr_expect_eq(ak_glob_match_len("a??", s, 3), 1);
	cr_expect_eq(ak_glob_match_len("*c", s, 3), 1);
	cr_expect_eq(ak_glob_match_len("a\\", s, 3), 0, "a trailing '\\' is the pattern's end");
	cr_expect_eq(ak_glob_match_len("a?", "a\0", 2), 1, "a trailing NUL is a byte too");
	cr_expect_eq(ak_glob_match_len("a", "a\0", 2), 0);
	cr_expect_eq(ak_glob_match_len("?", "", 1), 1, "a lone NUL byte");
	cr_expect_eq(ak_glob_match_len("", "", 1), 0);
}

Test(glob_host, nul_terminated_forms_stop_at_nul)
{
	const char s[] = "a\0c";

	cr_expect_eq(ak_glob_match("a", s), 1, "ak_glob_match ends at the NUL");
	cr_expect_eq(ak_glob_match("a?c", s), 0);
	cr_expect_eq(ak_glob_match_len("a", s, AK_GLOB_NUL_TERMINATED), 1);
	cr_expect_eq(ak_glob_match_len("a*", s, AK_GLOB_NUL_TERMINATED), 1);
	cr_expect_eq(ak_glob_match_len("a*c", s, AK_GLOB_NUL_TERMINATED), 0);
	cr_expect_eq(ak_glob_match_len("a*c", s, 3), 1);
}

/*
 * NUL is below every byte of the random alphabet, so no range covers it:
 * matching a string with NULs must equal fnmatch(3) on the same string with
 * each NUL replaced by another byte no pattern names (0x01).
 */
Test(glob_host, nul_bytes_agree_with_fnmatch_on_a_stand_in)
{
	unsigned int seed = GLOB_PAIRS_SEED + 1;
	char pat[16], str[16], stand_in[16];
	int pairs, compared = 0, with_nul = 0, disagree = 0;

	for (pairs = 0; pairs < 100000; pairs++) {
		size_t len, i;

		glob_random_string(pat, GLOB_PAIRS_MAX_LEN, GLOB_PAIRS_ALPHABET, &seed);
		/* 'Z' stands for NUL while generating: strlen still works. */
		glob_random_string(str, GLOB_PAIRS_MAX_LEN, "abZ*?", &seed);
		if (glob_known_difference(pat))
			continue;
		len = strlen(str);
		for (i = 0; i < len; i++) {
			stand_in[i] = str[i] == 'Z' ? '\x01' : str[i];
			if (str[i] == 'Z')
				str[i] = '\0';
		}
		stand_in[len] = '\0';
		with_nul += memchr(str, '\0', len) != NULL;
		compared++;
		if (ak_glob_match_len(pat, str, len) != !fnmatch(pat, stand_in, 0) && disagree++ < 10)
			cr_log_error("\"%s\" vs a %zu-byte string with NULs: ours %d, fnmatch %d",
				     pat, len, ak_glob_match_len(pat, str, len),
				     !fnmatch(pat, stand_in, 0));
	}
	cr_expect_eq(disagree, 0, "%d of %d pairs disagree", disagree, compared);
	cr_expect_gt(with_nul, 30000, "only %d strings had a NUL", with_nul);
}

/* ak_glob_valid: the three reasons, where each is, and what stays valid. */
Test(glob_host, valid_says_why_a_pattern_is_unusable)
{
	static const struct {
		const char *pat;
		unsigned long long max_len;
		int want;
		unsigned long long at;
	} cases[] = {
		{ "", 64, AK_GLOB_EMPTY, 0 },
		{ "*.c", 64, 0, 0 },
		{ "/tmp/[ab", 64, AK_GLOB_UNCLOSED_CLASS, 5 },
		{ "[a-", 64, AK_GLOB_UNCLOSED_CLASS, 0 },
		{ "x[!", 64, AK_GLOB_UNCLOSED_CLASS, 1 },
		{ "[]]", 64, 0, 0 },		/* a leading ']' is a member */
		{ "[!]x]*", 64, 0, 0 },
		{ "\\[ab", 64, 0, 0 },		/* an escaped '[' opens nothing */
		{ "[ab]c[", 64, AK_GLOB_UNCLOSED_CLASS, 5 },
		{ "ab\\", 64, 0, 0 },		/* a trailing '\' is a pattern lib/glob.c reads */
		{ "abc", 3, 0, 0 },
		{ "abcd", 3, AK_GLOB_TOO_LONG, 3 },
		{ "ab[cd]", 3, AK_GLOB_TOO_LONG, 3 },	/* the limit falls inside a class */
		{ "[abcd]", 3, AK_GLOB_TOO_LONG, 3 },
	};
	unsigned long long at;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		at = 99;
		cr_expect_eq(ak_glob_valid(cases[i].pat, cases[i].max_len, &at), cases[i].want,
			     "\"%s\" (limit %llu): %s", cases[i].pat, cases[i].max_len,
			     ak_glob_invalid_reason(ak_glob_valid(cases[i].pat, cases[i].max_len, 0)));
		cr_expect_eq(at, cases[i].at, "\"%s\": at %llu", cases[i].pat, at);
	}
	/* A pattern it calls unclosed is one the matcher takes literally. */
	cr_expect_eq(ak_glob_match("/tmp/[ab", "/tmp/[ab"), 1);
	cr_expect(strstr(ak_glob_invalid_reason(AK_GLOB_UNCLOSED_CLASS), "'['"));
}
