/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The benchmark harness behind `arenakit bench`: every figure is a row of
 * samples (one per run, runs interleaved across the cases of a section so
 * that drift hits them alike, each case in the section's process or in
 * a process of its own),
 * reported as median and spread; a ratio is the median of the per-run
 * ratios of one run of the tool (bench_ratio()), checked against the
 * project's target where it has one: met only if its whole range is on the
 * target's side, missed only if its whole range is off it, else undecided.
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
	/*
	 * NULL: a ratio, printed "1.23x"; else a count or a quantity in this
	 * unit ("insns", "calls", "ns"), printed as a number and the unit.
	 */
	const char *unit;
	/* The same ratio in the run with ICOUNT=1 (--icount-results); < 0: none. */
	double insns;
};

/* A target's verdict over the range of its runs. */
enum bench_verdict { BENCH_NOT_JUDGED, BENCH_MET, BENCH_MISSED, BENCH_UNDECIDED };

struct bench {
	int runs;		/* samples per case */
	int quick;		/* small sizes only (the smoke test) */
	const char *out_dir;	/* JSON and plot data; NULL: none */
	const char *glob_input;	/* the glob section's lines; NULL: the default */
	const char *objects_dir;	/* more BPF objects for the verifier section */
	const char *icount_results;	/* results.json of a run with ICOUNT=1, shown beside */
	int icount;		/* this run's clock counts instructions (ICOUNT=1) */
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
/* Was the row timed (a BPF or user-space clock), not counted? */
int bench_row_timed(const struct bench_row *row);
/* The row's median so far (0 without samples). */
double bench_median(struct bench_row *row);
/*
 * Record num over den: the median of the per-run ratios when both rows have
 * a sample from each run (sections interleave their cases, so a run's
 * samples share the machine's state of the moment), else num's median over
 * den's, its range the extremes' (num's least over den's most, and the
 * reverse). Returns the ratio (0 if either row is missing).
 */
double bench_ratio(struct bench *b, const char *what, struct bench_row *num,
		   struct bench_row *den, enum bench_goal goal, double limit);
/*
 * Record a figure that is not a ratio of two rows, against a target: a
 * ratio if @what names one ("a / b"), else a number printed without an "x"
 * (bench_count() says its unit).
 */
void bench_figure(struct bench *b, const char *what, double value, enum bench_goal goal,
		  double limit);
/* Record a count or a quantity (@unit: "insns", "calls", "ns"...), against a target. */
void bench_count(struct bench *b, const char *what, double value, const char *unit,
		 enum bench_goal goal, double limit);
/* The verdict on @value in [@lo, @hi] against its goal (BENCH_NOT_JUDGED: none). */
enum bench_verdict bench_judge(enum bench_goal goal, double limit, double value, double lo,
			       double hi);
const char *bench_verdict_name(enum bench_verdict v);
/* A wrong answer: printed, counted, and the exit status says so. */
void bench_wrong(struct bench *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The sections, which bench.c runs; each returns 0, or a negative errno if it could not run. */
int bench_loops_and_walks(struct bench *b);
int bench_frames(struct bench *b);
int bench_htab(struct bench *b);
int bench_omap(struct bench *b);
int bench_alloc(struct bench *b);
int bench_glob(struct bench *b);
int bench_verifier(struct bench *b);

#endif
