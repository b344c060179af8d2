/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * `arenakit stress`, one file per scenario around a driver:
 *
 *   stress.c             the command line, the scenario table, the summary
 *   stress_common.c      what every scenario uses: rows, verdicts, progress
 *   stress_list.c        the list long, cycle and corrupt share: build it,
 *                        walk it, break a link and restore it
 *   stress_NAME.c        scenario NAME ('-' written '_'), its own checks
 *
 * The BPF side: user/stress_NAME.bpf.c beside each, in an arena of its own
 * (user/stress_list.bpf.c for the list long, cycle and corrupt share), and
 * user/stress.h between them and user space. A scenario loads its own
 * program (stress_load) and destroys it when it is done; the list's stays
 * loaded from the first scenario to the last.
 */
#ifndef ARENAKIT_USER_STRESS_TOOL_H
#define ARENAKIT_USER_STRESS_TOOL_H

#include <bpf/libbpf.h>

#include "clock.h"
#include "loader.h"
#include <arenakit/alloc.h>
#include <arenakit/htab.h>
#include <arenakit/lock.h>
#include "stress.h"
/* After the headers of the types its arena holds. */
#include "stress_list.skel.h"

#define STRESS_NAME "arenakit stress"
/* Runs of a program that resumes from where the loop budget cut it. */
#define STRESS_MAX_RUNS 1000

/* One line of the summary: a case and how its invariants fared. */
struct stress_row {
	const char *scenario;
	char what[48];
	unsigned long long size;
	int checks, ok, truncated, broken;
	double start;		/* monotonic_seconds() when the row was made */
	double seconds;		/* the time taken, once stress_row_done() */
};

struct stress_run {
	struct stress_list *skel;	/* the list's (stress_list.c), shared by the scenarios */
	unsigned int seed;
	unsigned long long max_size;
	int quick, tty;
	struct stress_row rows[64];
	int nrows;
};

/* A scenario: its name on the command line, its lines of --help, its run. */
struct stress_scenario {
	const char *name;
	const char *help;	/* lines separated by '\n', no newline at the end */
	int (*run)(struct stress_run *s);	/* 0, or -errno if it could not run */
};

/* Each in its file: user/stress_long.c has stress_scenario_long. */
extern const struct stress_scenario stress_scenario_long, stress_scenario_cycle,
	stress_scenario_corrupt, stress_scenario_glob_worst, stress_scenario_misuse,
	stress_scenario_exhaust, stress_scenario_concurrent, stress_scenario_model,
	stress_scenario_omap;

/*
 * The first state of a scenario's xorshift64 generator from the seed: odd
 * times 2^64 / phi, so never 0 (where xorshift stays) and well mixed.
 */
static inline unsigned long long stress_seed_state(unsigned int seed)
{
	return (seed | 1ULL) * 0x9e3779b97f4a7c15ULL;
}

/* stress_common.c */
int stress_load(const char *scenario, struct bpf_object_skeleton *skeleton);
void stress_progress(struct stress_run *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void stress_progress_clear(struct stress_run *s);
struct stress_row *stress_row(struct stress_run *s, const char *scenario, const char *what,
		       unsigned long long size);
void stress_row_done(struct stress_row *r);
void stress_verdict(struct stress_row *r, int ok, int truncated, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* stress_list.c */
extern const char *const stress_walk_names[STRESS_WALKS];
int stress_run_walks(struct stress_run *s);
int stress_build_to(struct stress_run *s, unsigned long long n);
unsigned long long stress_list_size(struct stress_run *s);
int stress_list_or_build(struct stress_run *s, unsigned long long n, unsigned long long *len);
long long stress_count_resume(struct stress_run *s, unsigned int max_runs, unsigned int *runs);
int stress_break_link(struct stress_run *s, struct stress_row *r, unsigned long long n,
		      unsigned long long index, int kind, unsigned long long target,
		      int name_culprit);

#endif /* ARENAKIT_USER_STRESS_TOOL_H */
