// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * cycle: the last item's link back into the middle, and an item linked to
 * itself: every walk must end with an error, never a count.
 */
#include <stdlib.h>

#include "stress_tool.h"

static int scenario_cycle(struct stress_run *s)
{
	unsigned long long n, to;
	struct stress_row *r;
	int err;

	err = stress_list_or_build(s, s->max_size < 1000000 ? s->max_size : 1000000, &n);
	if (err)
		return err;
	to = (unsigned long long)rand_r(&s->seed) % n;
	r = stress_row(s, "cycle", "last item back into the middle", n);
	stress_progress(s, "cycle: item %llu -> item %llu of %llu", n - 1, to, n);
	err = stress_break_link(s, r, n, n - 1, STRESS_LINK_ITEM, to, 0);
	if (err)
		return err;

	to = (unsigned long long)rand_r(&s->seed) % n;
	r = stress_row(s, "cycle", "an item linked to itself", n);
	stress_progress(s, "cycle: item %llu -> itself", to);
	return stress_break_link(s, r, n, to, STRESS_LINK_ITEM, to, 0);
}

const struct stress_scenario stress_scenario_cycle = {
	.name = "cycle",
	.help = "the last item linked back into the middle, then an item linked\n"
		"to itself: every walk must end with an error (the _all walks\n"
		"with -ELOOP), never a count; with the link restored, the walks\n"
		"must find the list whole again. Each walk is a program run of\n"
		"its own",
	.run = scenario_cycle,
};
