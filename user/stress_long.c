// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * long: every walk of a sound list gives its length, or -AK_EBUDGET where
 * one frame's budget is all the walk has; ak_list_count with a cursor
 * always gives the length, over as many runs as it takes.
 */
#include "stress_tool.h"

static int scenario_long(struct stress_run *s)
{
	static const unsigned long long sizes[] = { 1000, 65536, 1000000, 10000000,
						    100000000 };
	long long *w = s->skel->bss->walk_result, got;
	unsigned long long n;
	unsigned int runs;
	struct stress_row *r;
	size_t i;
	int k, err;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		n = sizes[i] < s->max_size ? sizes[i] : s->max_size;
		if (i && n <= sizes[i - 1])
			break;
		stress_progress(s, "long: building %llu items", n);
		err = stress_build_to(s, n);
		if (err)
			return err;
		r = stress_row(s, "long", "6 walks of a sound list", n);
		stress_progress(s, "long: walking %llu items", n);
		err = stress_run_walks(s);
		if (err)
			return err;
		for (k = 0; k < STRESS_WALKS; k++) {
			got = w[k];
			if (k == STRESS_FIND_ALL || k == STRESS_CHECK_ALL)
				stress_verdict(r, got == 0, 0, "%s: %lld, want 0",
					       stress_walk_names[k], got);
			else
				stress_verdict(r, got == (long long)n,
					       k != STRESS_COUNT_ALL && got == -AK_EBUDGET,
					       "%s: %lld, want %llu or -AK_EBUDGET",
					       stress_walk_names[k], got, n);
		}
		got = stress_count_resume(s, STRESS_MAX_RUNS, &runs);
		stress_verdict(r, got == (long long)n, 0,
			       "ak_list_count with a cursor: %lld after %u runs", got, runs);
		stress_row_done(r);
		if (n == s->max_size)
			break;
	}
	return 0;
}

const struct stress_scenario stress_scenario_long = {
	.name = "long",
	.help = "lists of 1k, 64k, 1M, 10M and 100M items, up to --size, built in\n"
		"BPF; each walked by ak_list_count in one frame,\n"
		"ak_list_count_all, ak_list_for_each_entry, ak_list_find_all of\n"
		"an absent key, ak_list_check_all, and ak_list_count with a\n"
		"cursor over runs: each must give the length (0 for find and\n"
		"check); only the one-frame count and for_each may stop at\n"
		"-AK_EBUDGET instead",
	.run = scenario_long,
};
