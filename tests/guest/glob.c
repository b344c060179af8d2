// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* glob.h under the real verifier: the kernel's vectors, fnmatch(3), the worst case. */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest/guest.h"
#include "glob_pairs.h"
#include "glob_shared.h"
#include <arenakit/glob.h>
#include "glob.skel.h"

#define MAX_PAIRS 16384
#define TEXT_BYTES (512 * 1024)

struct batch {
	struct glob *skel;
	unsigned int pairs, text_used;
};

static void batch_start(struct batch *b)
{
	b->pairs = 0;
	b->text_used = 0;
	b->skel->bss->next_pair = 0;
}

static unsigned int put_text(struct batch *b, const char *s)
{
	unsigned int at = b->text_used, len = strlen(s) + 1;

	cr_assert_leq(at + len, TEXT_BYTES);
	memcpy(b->skel->arena->glob_text + at, s, len);
	b->text_used += len;
	return at;
}

/* Room for one more pair of at most @len bytes each? */
static int batch_has_room(struct batch *b, size_t len)
{
	return b->pairs < MAX_PAIRS && b->text_used + 2 * (len + 1) <= TEXT_BYTES;
}

static void batch_add(struct batch *b, const char *pat, const char *str)
{
	b->skel->arena->glob_pattern_at[b->pairs] = put_text(b, pat);
	b->skel->arena->glob_string_at[b->pairs] = put_text(b, str);
	b->skel->arena->glob_result[b->pairs] = -1000;
	b->pairs++;
}

/* Run until every pair has a result; returns the number of runs. */
static int batch_run(struct batch *b)
{
	unsigned int runs = 0;
	int retval, err;

	b->skel->bss->pair_count = b->pairs;
	err = ak_run_until_done(b->skel->progs.match_pairs, NULL, 0, 1000, &retval, &runs);
	cr_assert_eq(err, 0, "match_pairs: %s", strerror(-err));
	cr_assert_eq(retval, 0);
	cr_assert_eq(b->skel->bss->next_pair, b->pairs);
	return runs;
}

static void load(struct batch *b)
{
	b->skel = glob__open();
	cr_assert(b->skel);
	cr_assert_eq(arenakit_load_skeleton(b->skel->skeleton), 0);
	batch_start(b);
}

Test(glob, kernel_globtest_vectors, .timeout = 120)
{
	FILE *f = fopen("tests/data/globtest.tsv", "r");
	char line[512], pats[64][64], strs[64][64];
	int want[64], n = 0, i;
	struct batch b;

	cr_assert(f);
	load(&b);
	while (fgets(line, sizeof(line), f) && n < 64) {
		char *pat, *str;

		if (line[0] == '#')
			continue;
		line[strcspn(line, "\n")] = '\0';
		want[n] = line[0] - '0';
		pat = line + 2;
		str = pat + strcspn(pat, "\t");
		*str++ = '\0';
		cr_assert_lt(strlen(pat), sizeof(pats[n]));
		cr_assert_lt(strlen(str), sizeof(strs[n]));
		strcpy(pats[n], pat);
		strcpy(strs[n], str);
		batch_add(&b, pats[n], strs[n]);
		n++;
	}
	fclose(f);
	cr_assert_eq(n, 64);
	batch_run(&b);
	for (i = 0; i < n; i++)
		cr_expect_eq(b.skel->arena->glob_result[i], want[i], "\"%s\" vs \"%s\"", pats[i],
			     strs[i]);
	glob__destroy(b.skel);
}

Test(glob, bytes_above_0x7f_are_bytes, .timeout = 120)
{
	static const struct { const char *pat, *str; int want; } cases[] = {
		{ "caf\xc3\xa9", "caf\xc3\xa9", 1 },
		{ "*\xc3\xa9", "caf\xc3\xa9", 1 },
		{ "caf\xc3\xa9", "caf\xc3\xa8", 0 },
		{ "[\x80-\xff]", "\xc3", 1 },
		{ "[!a-z]", "\xc3", 1 },
		{ "\\\xc3", "\xc3", 1 },
	};
	struct batch b;
	size_t i;

	load(&b);
	for (i = 0; i < ARRAY_SIZE(cases); i++)
		batch_add(&b, cases[i].pat, cases[i].str);
	batch_run(&b);
	for (i = 0; i < ARRAY_SIZE(cases); i++)
		cr_expect_eq(b.skel->arena->glob_result[i], cases[i].want, "\"%s\" vs \"%s\"",
			     cases[i].pat, cases[i].str);
	glob__destroy(b.skel);
}

Test(glob, agrees_with_fnmatch, .timeout = 300)
{
	char pat[GLOB_PAIRS_MAX_LEN + 1], str[GLOB_PAIRS_MAX_LEN + 1];
	static char pats[MAX_PAIRS][GLOB_PAIRS_MAX_LEN + 1], strs[MAX_PAIRS][GLOB_PAIRS_MAX_LEN + 1];
	unsigned int seed = GLOB_PAIRS_SEED, i;
	int compared = 0, disagree = 0, generated;
	struct batch b;

	load(&b);
	for (generated = 0; generated < 200000;) {
		batch_start(&b);
		while (generated < 200000 && batch_has_room(&b, GLOB_PAIRS_MAX_LEN)) {
			glob_random_pair(pat, str, &seed);
			generated++;
			if (glob_known_difference(pat))
				continue;
			memcpy(pats[b.pairs], pat, sizeof(pat));
			memcpy(strs[b.pairs], str, sizeof(str));
			batch_add(&b, pat, str);
		}
		batch_run(&b);
		for (i = 0; i < b.pairs; i++) {
			int ours = b.skel->arena->glob_result[i];
			int theirs = !fnmatch(pats[i], strs[i], 0);

			compared++;
			if (ours != theirs && disagree++ < 10)
				cr_log_error("\"%s\" vs \"%s\": BPF %d, fnmatch %d", pats[i], strs[i],
					     ours, theirs);
		}
	}
	cr_expect_eq(disagree, 0, "%d of %d pairs disagree", disagree, compared);
	cr_expect_gt(compared, 100000);
	cr_log_info("%d pattern/string pairs matched in BPF agree with fnmatch(3)", compared);
	glob__destroy(b.skel);
}

/*
 * "*a{4500}b" against "a{60000}c": every start after the '*' matches up to
 * 4500 characters before failing, about 250 million steps in all: over one
 * frame's budget whether it is a count (8,388,608 steps on stock 6.12) or
 * time (250 ms on the arenakit kernel, about 70 million loop steps under
 * TCG). There is no 'b' in the string, so the only right answer is "no
 * match", and a cut must say so instead.
 */
Test(glob, worst_case_reports_the_cut, .timeout = 300)
{
	static char pat[4503], str[60002];
	struct batch b;

	pat[0] = '*';
	memset(pat + 1, 'a', 4500);
	pat[4501] = 'b';
	memset(str, 'a', 60000);
	str[60000] = 'c';
	load(&b);
	batch_add(&b, "a*", "abc");	/* an easy pair first, then the hard one */
	batch_add(&b, pat, str);
	batch_add(&b, "*c", str);	/* and a long one that fits */
	batch_run(&b);
	cr_expect_eq(b.skel->arena->glob_result[0], 1);
	cr_expect_eq(b.skel->arena->glob_result[1], -AK_EBUDGET,
		     "the worst case gave %d, not the budget error", b.skel->arena->glob_result[1]);
	cr_expect_eq(b.skel->arena->glob_result[2], 1);
	glob__destroy(b.skel);
}

/* ak_glob_subject_read_user of a string of @len bytes, matched against "*.c". */
static struct subject_args read_and_match(struct glob *skel, size_t len)
{
	static char str[AK_GLOB_SUBJECT_MAX + 64];
	struct subject_args args = { .str = (unsigned long)str };
	int retval;

	memset(str, 'a', len);
	memcpy(str + len - 2, ".c", 3);	/* the name ends ".c", then its NUL */
	/* The run writes the program's answers back into args. */
	cr_assert_eq(ak_run(skel->progs.match_user_string, &args, sizeof(args), &retval), 0);
	cr_assert_eq(retval, 0);
	return args;
}

/*
 * A path longer than a subject holds is not matched on its first bytes
 * (a wrong answer, with no error): the read says -E2BIG and so does the
 * match. The longest that fits, AK_GLOB_SUBJECT_MAX - 1 bytes, matches.
 */
Test(glob, a_subject_too_long_is_an_error_not_an_answer, .timeout = 120)
{
	struct batch b;
	struct subject_args a;

	load(&b);
	put_text(&b, "*.c");
	a = read_and_match(b.skel, AK_GLOB_SUBJECT_MAX - 1);
	cr_expect_eq(a.read_err, 0);
	cr_expect_eq(a.len, AK_GLOB_SUBJECT_MAX - 1);
	cr_expect_eq(a.match, 1, "the longest string that fits: %d", a.match);
	a = read_and_match(b.skel, AK_GLOB_SUBJECT_MAX);
	cr_expect_eq(a.read_err, -E2BIG, "one byte too long: %d", a.read_err);
	cr_expect_eq(a.match, -E2BIG, "matched anyway: %d", a.match);
	a = read_and_match(b.skel, AK_GLOB_SUBJECT_MAX + 40);
	cr_expect_eq(a.read_err, -E2BIG);
	cr_expect_eq(a.match, -E2BIG);
	a = read_and_match(b.skel, 10);
	cr_expect_eq(a.read_err, 0);
	cr_expect_eq(a.len, 10);
	cr_expect_eq(a.match, 1);
	glob__destroy(b.skel);
}

/*
 * What the verifier spends on the matcher over a subject: the program that
 * reads a user string and matches it (ak_glob_match_subject() is all of
 * it, bar the read). Copies of the string's positions the verifier linked
 * to their originals made each way they were linked a state of its own,
 * over ten times this bound; glob_impl.h's __ak_glob_own cuts the links.
 */
Test(glob, the_subject_matcher_verifies_in_under_60000_insns, .timeout = 120)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	struct batch b;

	load(&b);
	cr_assert_eq(bpf_prog_get_info_by_fd(bpf_program__fd(b.skel->progs.match_user_string),
					     &info, &len), 0);
	printf("glob: match_user_string: %u instructions processed\n", info.verified_insns);
	cr_expect_lt(info.verified_insns, 60000, "%u instructions processed",
		     info.verified_insns);
	glob__destroy(b.skel);
}
