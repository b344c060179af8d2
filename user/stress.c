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

static const struct stress_scenario *const scenarios[] = {
	&stress_scenario_long,
	&stress_scenario_cycle,
	&stress_scenario_corrupt,
	&stress_scenario_glob_worst,
	&stress_scenario_misuse,
	&stress_scenario_exhaust,
	&stress_scenario_concurrent,
	&stress_scenario_model,
};
#define N_SCENARIOS (sizeof(scenarios) / sizeof(scenarios[0]))

/* @text's lines, the first after @name in a 12-column margin, the rest under it. */
static void usage_item(FILE *f, const char *name, const char *text)
{
	const char *nl;

	for (;;) {
		nl = strchr(text, '\n');
		fprintf(f, "  %-12s%.*s\n", name, nl ? (int)(nl - text) : (int)strlen(text), text);
		if (!nl)
			return;
		name = "";
		text = nl + 1;
	}
}

static void usage(FILE *f)
{
	size_t k;

	fprintf(f, "usage: arenakit stress [--seed N] [--size N] [--quick] SCENARIO...|all\n"
		"Drive arenakit's structures to their edges in BPF and check that every\n"
		"walk ends with the right answer or an error, never a silent wrong one.\n");
	for (k = 0; k < N_SCENARIOS; k++)
		usage_item(f, scenarios[k]->name, scenarios[k]->help);
	fprintf(f, "  --seed N    the random seed (default %u; printed)\n"
		"  --size N    the longest list (default %llu; 100000000 needs a 4 GiB VM)\n"
		"  --quick     small sizes only\n"
		"Prints a summary table; exits 1 if any invariant broke, 2 on bad usage.\n",
		DEFAULT_SEED, DEFAULT_SIZE);
}

static void summary(struct stress_run *s)
{
	int i;

	printf("\n%-11s %-42s %11s %6s %5s %9s %6s %8s\n", "scenario", "case", "size", "checks",
	       "ok", "truncated", "broken", "seconds");
	for (i = 0; i < s->nrows; i++) {
		struct row *r = &s->rows[i];

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
		usage(stdout);
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
				usage(stderr);
				return 2;
			}
			chosen[k] = any = 1;
		}
	}
	if (!any) {
		usage(stderr);
		return 2;
	}
	if (s.quick && s.max_size > 65536)
		s.max_size = 65536;
	if (s.max_size > (unsigned long long)STRESS_SLAB_ITEMS * STRESS_MAX_SLABS) {
		fprintf(stderr, "arenakit stress: --size: at most %llu items\n",
			(unsigned long long)STRESS_SLAB_ITEMS * STRESS_MAX_SLABS);
		return 2;
	}
	s.tty = isatty(STDERR_FILENO);
	printf("arenakit stress: seed %u, lists up to %llu items\n", s.seed, s.max_size);
	fflush(stdout);

	s.skel = stress__open();
	if (!s.skel) {
		fprintf(stderr, "arenakit stress: %s\n", strerror(errno));
		return 1;
	}
	err = arenakit_load_skeleton(s.skel->skeleton);
	for (k = 0; !err && k < N_SCENARIOS; k++)
		if (chosen[k] && scenarios[k]->run(&s))
			err = -EIO;
	stress_progress(&s, "%s", "");
	summary(&s);
	for (i = 0; i < s.nrows; i++)
		broken += s.rows[i].broken;
	stress__destroy(s.skel);
	if (err) {
		fprintf(stderr, "arenakit stress: could not run every scenario\n");
		return 1;
	}
	printf("arenakit stress: %s\n", broken ? "invariants BROKEN (see above)" :
	       "every walk ended right or said why");
	return broken ? 1 : 0;
}
