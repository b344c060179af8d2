// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * glob-worst: lib/glob.c backtracks to the last '*' only, so "*a..ab"
 * against "a..ac" costs (pattern) x (string) steps. In BPF the answer must
 * be the native header's, or -AK_EBUDGET.
 */
#include <stdio.h>
#include <string.h>

#include <arenakit/glob.h>
#include <arenakit/user.h>
#include "stress_tool.h"
#include "stress_glob_worst.skel.h"

static int scenario_glob_worst(struct stress_run *s)
{
	static const unsigned int sizes[] = { 64, 256, 1024, 4096, 8000 };
	struct stress_glob_worst *skel = stress_glob_worst__open();
	unsigned int n, i, m;
	int want, got, ending, retval, err;
	struct stress_row *r;
	char what[48], *pat, *str;

	err = stress_load("glob-worst", skel ? skel->skeleton : NULL);
	if (err)
		goto out;
	pat = skel->arena->glob_pattern;
	str = skel->arena->glob_string;
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		n = sizes[i];
		if (s->quick && n > 256)
			break;
		m = n / 2;
		snprintf(what, sizeof(what), "*a{%u}b against a{%u}c and a{%u}b", m, n, n);
		r = stress_row(s, "glob-worst", what, n);
		for (ending = 0; ending < 2; ending++) {
			pat[0] = '*';
			memset(pat + 1, 'a', m);
			pat[m + 1] = 'b';
			pat[m + 2] = '\0';
			memset(str, 'a', n);
			str[n] = ending ? 'b' : 'c';
			str[n + 1] = '\0';
			skel->bss->glob_len = n + 1;
			stress_progress(s, "glob-worst: %u x %u", m + 2, n + 1);
			err = ak_run(skel->progs.glob_one, NULL, 0, &retval) ?: retval;
			if (err)
				goto out;
			got = skel->bss->glob_result;
			want = ak_glob_match_len(pat, str, n + 1);
			stress_verdict(r, got == want, got == -AK_EBUDGET, "BPF %d, native %d", got,
				       want);
		}
		stress_row_done(r);
	}
	err = 0;
out:
	stress_glob_worst__destroy(skel);
	return err;
}

const struct stress_scenario stress_scenario_glob_worst = {
	.name = "glob-worst",
	.help = "lib/glob.c's quadratic case: *a{m}b against a{n}c and a{n}b,\n"
		"m = n/2, n from 64 to 8000 bytes (--quick: to 256); BPF must\n"
		"give the natively built header's answer, or -AK_EBUDGET",
	.run = scenario_glob_worst,
};
