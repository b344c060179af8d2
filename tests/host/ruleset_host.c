// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * ruleset.h built for user space, over heap pages (alloc_pages.c): a zeroed
 * set is empty and ready; ids are given in order and never again; a match
 * answers what matching each rule would, in the set's order, whatever
 * edits came before (checked against a model over generated edits); a
 * cut walk or compare says so; deleted rules are freed, nothing leaks.
 * The set's concurrency is rculist.h's (tests/explore/rculist_scenarios.c,
 * tests/guest/rculist.c), and its programs' are the examples' guest tests.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <criterion/criterion.h>

#include "test_cut.h"
#include "host/alloc_pages.h"
#include <arenakit/ruleset.h>

static struct ak_ruleset set;

static void setup(void)
{
	memset(&set, 0, sizeof(set));
	checks_left = -1;
}

static int add(const char *pattern, unsigned int *id)
{
	struct ak_rule_edit e = {};

	snprintf(e.pattern, sizeof(e.pattern), "%s", pattern);
	return ak_ruleset_add(&set, &e) ?: (id ? (*id = e.id, 0) : 0);
}

static int del(const char *pattern)
{
	struct ak_rule_edit e = {};

	snprintf(e.pattern, sizeof(e.pattern), "%s", pattern);
	return ak_ruleset_del(&set, &e);
}

static long long reclaim_all(void)
{
	struct ak_rule_edit e;
	long long freed = 0;
	int i;

	for (i = 0; i < 4; i++) {
		cr_assert_eq(ak_ruleset_reclaim(&set, &e), 0);
		cr_assert_geq(e.reclaimed, 0, "reclaim: %d", e.reclaimed);
		freed += e.reclaimed;
	}
	cr_assert_eq(ak_rcu_pending(&set.rcu), 0);
	return freed;
}

static void teardown(void)
{
	struct ak_rule *r, *tmp;

	if (set.rules.head.next)
		ak_list_for_each_entry_safe(r, tmp, &set.rules, node)
			cr_assert_eq(ak_list_del_rcu(&set.rules, &r->node, &set.rcu), 0);
	reclaim_all();
	cr_expect_eq(alloc_stats().objects, 0, "rules leaked: %llu", alloc_stats().objects);
	expect_pages_accounted();
}

TestSuite(ruleset_host, .init = setup, .fini = teardown);

static int match(const char *s, struct ak_ruleset_matches *m)
{
	struct ak_glob_subject subj = { .len = strlen(s) };

	memcpy(subj.s, s, subj.len);
	return ak_ruleset_match(&set, &subj, m);
}

Test(ruleset_host, a_zeroed_set_is_empty_and_ready)
{
	struct ak_ruleset_matches m = { .matched = 99 };
	unsigned int id = 99;

	cr_expect_eq(match("/etc/passwd", &m), 0);
	cr_expect_eq(m.matched, 0);
	cr_expect_eq(del("/etc/*"), -ENOENT);
	cr_assert_eq(add("/etc/*", &id), 0);
	cr_expect_eq(id, 0);
	cr_expect_eq(match("/etc/passwd", &m), 1);
	cr_expect_eq(m.id[0], 0);
}

Test(ruleset_host, ids_are_never_given_again)
{
	struct ak_ruleset_matches m;
	unsigned int a, b, c;

	cr_assert_eq(add("*.c", &a), 0);
	cr_assert_eq(add("*.h", &b), 0);
	cr_assert_eq(del("*.c"), 0);
	cr_assert_eq(add("*.c", &c), 0);
	cr_expect(a == 0 && b == 1 && c == 2, "ids %u %u %u", a, b, c);
	cr_expect_eq(match("x.c", &m), 1);
	cr_expect_eq(m.id[0], 2, "the rule added again is a new rule");
	cr_expect_eq(reclaim_all(), 1);
}

Test(ruleset_host, a_delete_takes_the_first_of_equal_patterns)
{
	struct ak_ruleset_matches m;

	cr_assert_eq(add("/a/*", NULL), 0);	/* 0 */
	cr_assert_eq(add("/b/*", NULL), 0);	/* 1 */
	cr_assert_eq(add("/a/*", NULL), 0);	/* 2 */
	cr_assert_eq(del("/a/*"), 0);
	cr_expect_eq(match("/a/x", &m), 1);
	cr_expect_eq(m.id[0], 2);
	cr_expect_eq(del("/a"), -ENOENT, "a prefix of a pattern is not it");
	cr_expect_eq(del("/a/**"), -ENOENT, "nor a longer one");
	cr_expect_eq(add("", NULL), -EINVAL);
}

Test(ruleset_host, more_matches_than_ids_are_counted_all)
{
	struct ak_ruleset_matches m;
	char p[16];
	int i;

	for (i = 0; i < AK_RULESET_MATCH_IDS + 3; i++) {
		snprintf(p, sizeof(p), "*%d*", i % 2);
		cr_assert_eq(add(p, NULL), 0);
	}
	cr_expect_eq(match("x0", &m), (AK_RULESET_MATCH_IDS + 4) / 2);
	cr_expect_eq(match("10", &m), AK_RULESET_MATCH_IDS + 3);
	cr_expect_eq(m.matched, AK_RULESET_MATCH_IDS + 3);
	for (i = 0; i < AK_RULESET_MATCH_IDS; i++)
		cr_expect_eq(m.id[i], i, "the first ids, in order");
}

Test(ruleset_host, a_cut_walk_and_a_long_subject_say_so)
{
	struct ak_ruleset_matches m;
	struct ak_glob_subject cut = { .len = AK_GLOB_SUBJECT_MAX + 1 };
	int i;

	for (i = 0; i < 10; i++)
		cr_assert_eq(add("*", NULL), 0);
	checks_left = 3;
	cr_expect_eq(match("x", &m), -AK_EBUDGET, "never a short count");
	checks_left = 3;
	i = del("nothing like it");
	cr_expect_eq(i, -AK_EBUDGET, "not -ENOENT: a compare was cut (%d)", i);
	checks_left = -1;
	cr_expect_eq(ak_ruleset_match(&set, &cut, &m), -E2BIG);
	cr_expect_eq(match("x", &m), 10);
}

/* The model: the rules' patterns and ids in order, as an array. */
struct model_rule {
	char pattern[8];
	unsigned int id;
};

Test(ruleset_host, matches_equal_the_model_over_generated_edits)
{
	static const char *patterns[] = { "a*", "*b", "a?", "[ab]*", "*", "ab", "?", "[!a]*" };
	static const char *subjects[] = { "a", "b", "ab", "ba", "abc", "", "bb", "aab" };
	struct model_rule model[64];
	struct ak_ruleset_matches m;
	unsigned int n = 0, next_id = 0, i, j, k, ops, expect, checks = 0;
	const char *p;
	int err;

	srand(39);
	for (ops = 0; ops < 4000; ops++) {
		p = patterns[rand() % 8];
		if (rand() % 3 || !n) {
			if (n == 64)
				continue;
			cr_assert_eq(add(p, NULL), 0);
			snprintf(model[n].pattern, sizeof(model[n].pattern), "%s", p);
			model[n++].id = next_id++;
		} else {
			for (i = 0; i < n && strcmp(model[i].pattern, p); i++)
				;
			err = del(p);
			cr_assert_eq(err, i < n ? 0 : -ENOENT, "delete %s: %d", p, err);
			if (i < n)
				memmove(&model[i], &model[i + 1], (--n - i) * sizeof(model[0]));
		}
		for (j = 0; j < 8; j++) {
			expect = 0;
			cr_assert_geq(match(subjects[j], &m), 0);
			for (i = 0; i < n; i++) {
				if (ak_glob_match(model[i].pattern, subjects[j]) != 1)
					continue;
				if (expect < AK_RULESET_MATCH_IDS)
					cr_assert_eq(m.id[expect], model[i].id, "op %u: %s", ops,
						     subjects[j]);
				expect++;
			}
			cr_assert_eq(m.matched, expect, "op %u: \"%s\"", ops, subjects[j]);
			checks++;
		}
		if (ops % 50 == 0) {
			struct ak_rule_edit e;

			cr_assert_eq(ak_ruleset_reclaim(&set, &e), 0);
		}
	}
	k = ak_list_len(&set.rules);
	cr_expect_eq(k, n);
	printf("ruleset_host: 4000 generated edits, %u matches checked against the model, "
	       "0 disagreements\n", checks);
}
