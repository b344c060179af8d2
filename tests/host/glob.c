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
		cr_expect_eq(arena_glob_match(pat, str), atoi(want), "\"%s\" vs \"%s\"", pat, str);
		n++;
	}
	fclose(f);
	cr_expect_eq(n, 64, "%d vectors read, lib/globtest.c has 64", n);
}

Test(glob_host, length_bound_ends_the_string)
{
	const char buf[] = "abcXYZ";

	cr_expect_eq(arena_glob_match_len("abc", buf, 3), 1);
	cr_expect_eq(arena_glob_match_len("abc*", buf, 3), 1);
	cr_expect_eq(arena_glob_match_len("abc?", buf, 3), 0);
	cr_expect_eq(arena_glob_match_len("*Y*", buf, 4), 0);
	cr_expect_eq(arena_glob_match_len("*Y*", buf, 5), 1);
	cr_expect_eq(arena_glob_match_len("", buf, 0), 1);
}

Test(glob_host, kernel_specific_corners)
{
	cr_expect_eq(arena_glob_match("[", "["), 1, "an unclosed class is a literal '['");
	cr_expect_eq(arena_glob_match("[a-", "[a-"), 1);
	cr_expect_eq(arena_glob_match("\\*", "*"), 1);
	cr_expect_eq(arena_glob_match("\\*", "a"), 0);
	cr_expect_eq(arena_glob_match("*", "a/b/.c"), 1, "no special '/' or leading '.'");
	cr_expect_eq(arena_glob_match("[^a]", "^"), 1, "'^' does not negate");
	cr_expect_eq(arena_glob_match("[z-a]", "m"), 0, "a reversed range matches nothing");
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
		if (arena_glob_match(pat, str) != !fnmatch(pat, str, 0) && disagree++ < 10)
			cr_log_error("\"%s\" vs \"%s\": ours %d, fnmatch %d", pat, str,
				     arena_glob_match(pat, str), !fnmatch(pat, str, 0));
	}
	cr_expect_eq(disagree, 0, "%d of %d pairs disagree", disagree, compared);
	cr_expect_gt(compared, 100000, "only %d pairs compared", compared);
}

Test(glob_host, batch_matches_every_pair)
{
	const char *patterns[] = { "*.c", "*/*", "[!a-z]*" };
	const char *strings[] = { "a.c", "dir/b.h", "Makefile", "x.cc" };
	unsigned int lengths[] = { 3, 7, 8, 4 }, matched[4], cut[4], next = 0;

	cr_assert_eq(arena_glob_match_batch(patterns, 3, strings, lengths, 4, matched, cut, &next), 0);
	cr_expect_eq(next, 4);
	cr_expect_eq(matched[0], 1u << 0);
	cr_expect_eq(matched[1], 1u << 1);
	cr_expect_eq(matched[2], 1u << 2);
	cr_expect_eq(matched[3], 0);
	cr_expect_eq(cut[0] | cut[1] | cut[2] | cut[3], 0);
	next = 0;
	cr_expect_eq(arena_glob_match_batch(patterns, 33, strings, lengths, 4, matched, cut, &next),
		     -EINVAL);
}
