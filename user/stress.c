// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * arenakit stress: drive the structures to their edges and check that
 * nothing is silent: every walk either finishes with the right answer or
 * returns an error (the budget's -AK_EBUDGET, -ELOOP for a cycle, -EFAULT
 * for a link to nowhere), never a wrong count without one; misuse is refused
 * and counted; random operations agree with a model.
 *
 * This file is the command line, the scenario table and the summary. The
 * scenarios are the table, run in its order: each lives in
 * user/stress_NAME.c with its lines of --help, which --help prints from the
 * table, so the list cannot miss one (the layout is in stress_tool.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "loader.h"
#include "stress_tool.h"

#define DEFAULT_SEED 20261203u
#define DEFAULT_SIZE 10000000ULL
/* The most items user/stress_list.bpf.c's slabs hold: --size's limit. */
#define MAX_SIZE ((unsigned long long)STRESS_SLAB_ITEMS * STRESS_MAX_SLABS)

static const struct stress_scenario *const scenarios[] = {
	&stress_scenario_long,
	&stress_scenario_cycle,
	&stress_scenario_corrupt,
	&stress_scenario_glob_worst,
	&stress_scenario_misuse,
	&stress_scenario_exhaust,
	&stress_scenario_concurrent,
	&stress_scenario_model,
	&stress_scenario_omap,
};
#define N_SCENARIOS ARRAY_SIZE(scenarios)

#define SYNOPSIS "usage: arenakit stress [--seed N] [--size N] [--quick] SCENARIO...|all"

/* @text's lines, the first after @name in a 12-column margin, the rest under it. */
static void usage_item(const char *name, const char *text)
{
	const char *nl;

	for (;;) {
		nl = strchr(text, '\n');
		printf("  %-12s%.*s\n", name, nl ? (int)(nl - text) : (int)strlen(text), text);
		if (!nl)
			return;
		name = "";
		text = nl + 1;
	}
}

static void usage(void)
{
	size_t k;

	printf(SYNOPSIS "\n"
	       "\n"
	       "Drive arenakit's structures to their edges in BPF and check that nothing\n"
	       "is silent: every walk ends with the right answer or with an error that\n"
	       "says why (-AK_EBUDGET: cut by the loop budget, -ELOOP: a cycle, -EFAULT:\n"
	       "a link to nowhere), never a wrong count; a failed operation changes\n"
	       "nothing; the allocator's accounting comes back. Loads BPF: runs on the\n"
	       "arenakit kernel only (in the VM: make run ARGS='stress ...'; make stress\n"
	       "runs all with lists up to 100M items in a 4-CPU 6 GiB VM).\n"
	       "\n"
	       "Scenarios (all: every one), run in this order; cycle and corrupt break\n"
	       "the list long built, or one of 1M items (at most --size) they build:\n");
	for (k = 0; k < N_SCENARIOS; k++)
		usage_item(scenarios[k]->name, scenarios[k]->help);
	printf("\n"
	       "Options:\n"
	       "  --seed N    the random seed, a positive 32-bit number (default %u);\n"
	       "              printed, and the same seed draws the same operations\n"
	       "  --size N    the longest list, at most %llu items (default %llu);\n"
	       "              100000000 items take 2.4 GB of arena memory\n"
	       "  --quick     small sizes (lists up to 65536 items), as make test runs it\n"
	       "  -h, --help  this text\n"
	       "\n"
	       "Output: a progress line on standard error (rewritten in place on a\n"
	       "terminal); a line of figures from misuse, exhaust, concurrent and model;\n"
	       "each broken invariant on standard error as it breaks; then a table, a\n"
	       "row per case: checks made, ok (held), truncated (held by reporting the\n"
	       "cut), broken.\n"
	       "\n"
	       "Exit status: 0 if every invariant held, 1 if one broke or a scenario\n"
	       "could not run, 2 on bad usage.\n",
	       DEFAULT_SEED, MAX_SIZE, DEFAULT_SIZE);
}

/* After a usage error: the synopsis and the scenarios' names, not the whole text. */
static void usage_short(void)
{
	size_t k;

	fprintf(stderr, SYNOPSIS "\nScenarios:");
	for (k = 0; k < N_SCENARIOS; k++)
		fprintf(stderr, " %s", scenarios[k]->name);
	fprintf(stderr, "\nTry 'arenakit stress --help' for more information.\n");
}

static void summary(struct stress_run *s)
{
	int i;

	printf("\n%-11s %-42s %11s %6s %5s %9s %6s %8s\n", "scenario", "case", "size", "checks",
	       "ok", "truncated", "broken", "seconds");
	for (i = 0; i < s->nrows; i++) {
		struct stress_row *r = &s->rows[i];

		printf("%-11s %-42s %11llu %6d %5d %9d %6d %8.2f\n", r->scenario, r->what, r->size,
		       r->checks, r->ok, r->truncated, r->broken, r->seconds);
	}
}

int cmd_stress(int argc, char **argv)
{
	struct stress_run s = { .seed = DEFAULT_SEED, .max_size = DEFAULT_SIZE };
	int chosen[N_SCENARIOS] = { 0 }, any = 0, broken = 0, i, err;
	size_t k;
	char *end;

	if (wants_help(argc, argv)) {
		usage();
		return 0;
	}
	for (i = 1; i < argc; i++) {
		if ((!strcmp(argv[i], "--seed") || !strcmp(argv[i], "--size")) && i + 1 < argc) {
			unsigned long long v = strtoull(argv[i + 1], &end, 0);

			if (*end || !*argv[i + 1] || !v) {
				fprintf(stderr, "arenakit stress: %s: not a positive number: %s\n",
					argv[i], argv[i + 1]);
				return 2;
			}
			if (!strcmp(argv[i], "--seed"))
				s.seed = v;
			else
				s.max_size = v;
			i++;
		} else if (!strcmp(argv[i], "--quick")) {
			s.quick = 1;
		} else if (!strcmp(argv[i], "all")) {
			for (k = 0; k < N_SCENARIOS; k++)
				chosen[k] = any = 1;
		} else {
			for (k = 0; k < N_SCENARIOS && strcmp(argv[i], scenarios[k]->name); k++)
				;
			if (k == N_SCENARIOS) {
				fprintf(stderr, "arenakit stress: no scenario '%s'\n", argv[i]);
				usage_short();
				return 2;
			}
			chosen[k] = any = 1;
		}
	}
	if (!any) {
		usage_short();
		return 2;
	}
	if (s.quick && s.max_size > 65536)
		s.max_size = 65536;
	if (s.max_size > MAX_SIZE) {
		fprintf(stderr, "arenakit stress: --size: at most %llu items\n", MAX_SIZE);
		return 2;
	}
	s.tty = isatty(STDERR_FILENO);
	printf("arenakit stress: seed %u, lists up to %llu items\n", s.seed, s.max_size);
	fflush(stdout);

	s.skel = stress_list__open();
	if (!s.skel) {
		fprintf(stderr, "arenakit stress: %s\n", strerror(errno));
		return 1;
	}
	err = arenakit_load_skeleton(s.skel->skeleton);
	for (k = 0; !err && k < N_SCENARIOS; k++) {
		if (chosen[k])
			err = scenarios[k]->run(&s);
		if (err)
			fprintf(stderr, "arenakit stress: %s could not run: %s\n",
				scenarios[k]->name, strerror(-err));
	}
	stress_progress(&s, "%s", "");
	summary(&s);
	for (i = 0; i < s.nrows; i++)
		broken += s.rows[i].broken;
	stress_list__destroy(s.skel);
	if (err) {
		fprintf(stderr, "arenakit stress: could not run every scenario\n");
		return 1;
	}
	printf("arenakit stress: %s\n", broken ? "invariants BROKEN (see above)" :
	       "every walk ended right or said why");
	return broken ? 1 : 0;
}
