// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What every section of `arenakit bench` records through (bench.h): rows
 * of samples and their medians, ratios and figures against the targets,
 * and wrong answers. bench.c prints and writes them.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* A figure dropped for want of memory would go unseen: stop instead. */
static void *bench_alloc_or_exit(void *p)
{
	if (!p) {
		fprintf(stderr, "arenakit bench: out of memory\n");
		exit(1);
	}
	return p;
}

struct bench_row *bench_row(struct bench *b, const char *section, const char *name,
			    long long size, const char *variant, const char *unit,
			    const char *clock)
{
	struct bench_row *row;

	if (b->n_rows == b->cap_rows) {
		int cap = b->cap_rows ? 2 * b->cap_rows : 64;

		b->rows = bench_alloc_or_exit(realloc(b->rows, cap * sizeof(*b->rows)));
		b->cap_rows = cap;
	}
	row = bench_alloc_or_exit(calloc(1, sizeof(*row)));
	b->rows[b->n_rows++] = row;
	snprintf(row->section, sizeof(row->section), "%s", section);
	snprintf(row->name, sizeof(row->name), "%s", name);
	snprintf(row->variant, sizeof(row->variant), "%s", variant ? variant : "");
	row->size = size;
	row->unit = unit;
	row->clock = clock;
	return row;
}

void bench_sample(struct bench_row *row, double value)
{
	if (row->n < BENCH_MAX_RUNS)
		row->samples[row->n++] = value;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double bench_median(struct bench_row *row)
{
	double sorted[BENCH_MAX_RUNS];

	if (!row || !row->n)
		return 0;
	memcpy(sorted, row->samples, row->n * sizeof(double));
	qsort(sorted, row->n, sizeof(double), cmp_double);
	row->min = sorted[0];
	row->max = sorted[row->n - 1];
	row->median = row->n % 2 ? sorted[row->n / 2] :
		      (sorted[row->n / 2 - 1] + sorted[row->n / 2]) / 2;
	return row->median;
}

int bench_row_timed(const struct bench_row *row)
{
	return !strcmp(row->clock, BENCH_CLOCK_BPF) || !strcmp(row->clock, BENCH_CLOCK_USER);
}

double bench_ratio(struct bench *b, const char *what, struct bench_row *num,
		   struct bench_row *den, enum bench_goal goal, double limit)
{
	double n = bench_median(num), d = bench_median(den);
	struct bench_row paired = { .n = 0 };
	struct bench_ratio *r;
	int i;

	if (!n || !d)
		return 0;
	if (num->n != den->n) {
		/*
		 * Not sampled run by run side by side: the medians' ratio,
		 * and the widest range the samples allow.
		 */
		bench_figure(b, what, n / d, goal, limit);
		r = &b->ratios[b->n_ratios - 1];
		r->timed = bench_row_timed(num) || bench_row_timed(den);
		if (den->min > 0) {
			r->lo = num->min / den->max;
			r->hi = num->max / den->min;
		}
		return n / d;
	}
	for (i = 0; i < num->n; i++)
		if (den->samples[i] > 0)
			bench_sample(&paired, num->samples[i] / den->samples[i]);
	if (!bench_median(&paired))
		return 0;
	bench_figure(b, what, paired.median, goal, limit);
	r = &b->ratios[b->n_ratios - 1];
	r->timed = bench_row_timed(num) || bench_row_timed(den);
	r->lo = paired.min;
	r->hi = paired.max;
	return paired.median;
}

static struct bench_ratio *bench_new_figure(struct bench *b, const char *what, double value,
					    enum bench_goal goal, double limit)
{
	struct bench_ratio *r;

	if (b->n_ratios == b->cap_ratios) {
		int cap = b->cap_ratios ? 2 * b->cap_ratios : 32;

		b->ratios = bench_alloc_or_exit(realloc(b->ratios, cap * sizeof(*b->ratios)));
		b->cap_ratios = cap;
	}
	r = &b->ratios[b->n_ratios++];
	memset(r, 0, sizeof(*r));
	snprintf(r->what, sizeof(r->what), "%s", what);
	r->value = value;
	r->lo = r->hi = value;
	r->goal = goal;
	r->limit = limit;
	r->timed = 0;	/* bench_ratio says when it is */
	r->insns = -1;
	return r;
}

void bench_figure(struct bench *b, const char *what, double value, enum bench_goal goal,
		  double limit)
{
	struct bench_ratio *r = bench_new_figure(b, what, value, goal, limit);

	/* "a / b" is a ratio; anything else is a count and prints as one. */
	if (!strstr(what, " / "))
		r->unit = "";
}

void bench_count(struct bench *b, const char *what, double value, const char *unit,
		 enum bench_goal goal, double limit)
{
	bench_new_figure(b, what, value, goal, limit)->unit = unit ? unit : "";
}

enum bench_verdict bench_judge(enum bench_goal goal, double limit, double value, double lo,
			       double hi)
{
	double best = goal == BENCH_AT_MOST ? lo : hi, worst = goal == BENCH_AT_MOST ? hi : lo;

	if (goal == BENCH_NO_GOAL)
		return BENCH_NOT_JUDGED;
	/* The median is inside its range; a range that is none is the value. */
	if (value < lo || value > hi)
		best = worst = value;
	if (goal == BENCH_AT_MOST ? worst <= limit : worst >= limit)
		return BENCH_MET;
	if (goal == BENCH_AT_MOST ? best > limit : best < limit)
		return BENCH_MISSED;
	return BENCH_UNDECIDED;
}

const char *bench_verdict_name(enum bench_verdict v)
{
	switch (v) {
	case BENCH_MET:
		return "met";
	case BENCH_MISSED:
		return "missed";
	case BENCH_UNDECIDED:
		return "undecided";
	default:
		return "-";
	}
}

void bench_wrong(struct bench *b, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "arenakit bench: WRONG: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	b->wrong++;
}
