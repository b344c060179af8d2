// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * corrupt: a link overwritten with garbage, into page 0, into a freed page:
 * every walk must end with an error, and ak_list_check_all must name the
 * item that holds the bad link.
 */
#include <stdlib.h>

#include "stress_tool.h"

static int scenario_corrupt(struct stress_run *s)
{
	static const struct {
		int kind;
		const char *what;
	} kinds[] = {
		{ STRESS_LINK_VALUE, "a link to garbage" },
		{ STRESS_LINK_PAGE0, "a link into page 0" },
		{ STRESS_LINK_FREED, "a link into a freed page" },
	};
	unsigned long long n, index, value;
	struct stress_row *r;
	size_t i;
	int err;

	err = stress_list_or_build(s, s->max_size < 1000000 ? s->max_size : 1000000, &n);
	if (err)
		return err;
	for (i = 0; i < ARRAY_SIZE(kinds); i++) {
		index = (unsigned long long)rand_r(&s->seed) % n;
		value = (unsigned long long)rand_r(&s->seed) << 33 | (unsigned int)rand_r(&s->seed);
		r = stress_row(s, "corrupt", kinds[i].what, n);
		stress_progress(s, "corrupt: item %llu, %s", index, kinds[i].what);
		err = stress_break_link(s, r, n, index, kinds[i].kind, value, 1);
		if (err)
			return err;
	}
	return 0;
}

const struct stress_scenario stress_scenario_corrupt = {
	.name = "corrupt",
	.help = "a link overwritten with garbage, with an address in page 0, with\n"
		"one in a freed page: every walk must end with an error, and\n"
		"ak_list_check_all must name the item that holds the bad link",
	.run = scenario_corrupt,
};
