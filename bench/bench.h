/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The benchmark harness behind `arenakit bench`: every figure is a row of
 * samples (one per run, runs interleaved across the cases of a section so
 * that drift hits them alike), reported as median and spread; a ratio is
 * the median of the per-run ratios of one run of the tool (bench_ratio()),
 * checked against the project's target where it has one.
 */
#ifndef ARENAKIT_BENCH_H
#define ARENAKIT_BENCH_H

#include <stdio.h>
#include <bpf/libbpf.h>

#define BENCH_MAX_RUNS 64
/*
 * Every section first runs each case once unrecorded: the first run of a
 * program pays for cold caches and, under TCG, for translating its code.
 */
#define BENCH_WARMUP -1

struct bench_row {
	char section[16];
	char name[40];		/* the case: mechanism or operation */
	long long size;		/* what it ran on: nodes, entries, bytes (0: none) */
	char variant[32];	/* and how: "in order", "4-byte keys"... ("" none) */
	const char *unit;	/* e.g. "ns/node" */
	const char *clock;	/* how it was timed */
	double samples[BENCH_MAX_RUNS];
	int n;
	double median, min, max;
};

/* A target: the ratio must be at most (or at least) limit. */
enum bench_goal { BENCH_NO_GOAL, BENCH_AT_MOST, BENCH_AT_LEAST };

struct bench_ratio {
	char what[96];
	double value;
	double lo, hi;		/* the spread of the per-run ratios (= value: none) */
	enum bench_goal goal;
	double limit;
	int timed;		/* of times, not counts: --quick sizes judge nothing */
};

struct bench {
	int runs;		/* samples per case */
	int quick;		/* small sizes only (the smoke test) */
	const char *out_dir;	/* JSON and plot data; NULL: none */
	const char *glob_input;	/* the glob section's lines; NULL: the default */
	const char *objects_dir;	/* more BPF objects for the verifier section */
	struct bench_row **rows;	/* each row stays where it is: sections keep pointers */
	int n_rows, cap_rows;
	struct bench_ratio *ratios;
	int n_ratios, cap_ratios;
	int wrong;		/* cases that gave a wrong answer */
};

/* The BPF clock around the measured loop, or CLOCK_MONOTONIC in user space. */
#define BENCH_CLOCK_BPF "bpf_ktime_get_ns in BPF"
#define BENCH_CLOCK_USER "clock_gettime in user space"
#define BENCH_CLOCK_VERIFIER "the verifier's own count"

/* bench_rows.c: what a section records; bench.c prints and writes it. */
struct bench_row *bench_row(struct bench *b, const char *section, const char *name,
			    long long size, const char *variant, const char *unit,
			    const char *clock);
void bench_sample(struct bench_row *row, double value);
/* The row's median so far (0 without samples). */
double bench_median(struct bench_row *row);
/*
 * Record num over den: the median of the per-run ratios when both rows have
 * a sample from each run (sections interleave their cases, so a run's
 * samples share the machine's state of the moment), else num's median over
 * den's. Returns the ratio (0 if either row is missing).
 */
double bench_ratio(struct bench *b, const char *what, struct bench_row *num,
		   struct bench_row *den, enum bench_goal goal, double limit);
/* Record a figure that is not a ratio of two rows, against a target. */
void bench_figure(struct bench *b, const char *what, double value, enum bench_goal goal,
		  double limit);
/* A wrong answer: printed, counted, and the exit status says so. */
void bench_wrong(struct bench *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The sections, which bench.c runs; each returns 0, or a negative errno if it could not run. */
int bench_loops_and_walks(struct bench *b);
int bench_frames(struct bench *b);
int bench_htab(struct bench *b);
int bench_alloc(struct bench *b);
int bench_glob(struct bench *b);
int bench_verifier(struct bench *b);

#endif
