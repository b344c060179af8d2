// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What `arenakit bench` reports (bench_report.h): the table of medians,
 * spreads and ratios with their verdicts, the JSON of every figure with
 * the environment, the plots' data, and the instruction counts of an
 * ICOUNT=1 run that a ratio may stand on.
 */
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>
#include <arenakit/arena.h>
#include "bench.h"
#include "clock.h"
#include "commands.h"
#include "kernel_features.h"
#include "loader.h"
#include "bench_report.h"

/* "8M", "64k", "1000": sizes as people say them. */
static const char *size_text(long long size, char *buf, size_t len)
{
	if (size >= 1 << 20 && size % (1 << 20) == 0)
		snprintf(buf, len, "%lldM", size >> 20);
	else if (size >= 1 << 10 && size % (1 << 10) == 0)
		snprintf(buf, len, "%lldk", size >> 10);
	else if (size)
		snprintf(buf, len, "%lld", size);
	else
		snprintf(buf, len, "-");
	return buf;
}

/* Has a row before @i the same section? */
static int section_seen(const struct bench *b, int i)
{
	int j;

	for (j = 0; j < i; j++)
		if (!strcmp(b->rows[j]->section, b->rows[i]->section))
			return 1;
	return 0;
}

/*
 * The run with ICOUNT=1 that --icount-results names: its rows' medians and
 * its ratios, from the results.json it wrote (write_json()'s lines, one
 * row or ratio a line).
 */
struct icount_entry {
	char key[320];		/* a ratio's "what", or a row's section|case|size|variant */
	double value;
};

struct icount_entry *icount_entries;
static int n_icount_entries;

/* The string after "@name": " on @line, into @buf; 0 if there is none. */
static int json_str(const char *line, const char *name, char *buf, size_t len)
{
	char pat[32];
	const char *at, *end;

	snprintf(pat, sizeof(pat), "\"%s\": \"", name);
	at = strstr(line, pat);
	if (!at)
		return 0;
	at += strlen(pat);
	end = strchr(at, '"');
	if (!end)
		return 0;
	snprintf(buf, len, "%.*s", (int)(end - at), at);
	return 1;
}

static int json_num(const char *line, const char *name, double *v)
{
	char pat[32];
	const char *at;

	snprintf(pat, sizeof(pat), "\"%s\": ", name);
	at = strstr(line, pat);
	return at && sscanf(at + strlen(pat), "%lf", v) == 1;
}

static void row_key(char *buf, size_t len, const char *section, const char *name,
		    long long size, const char *variant)
{
	snprintf(buf, len, "%s|%s|%lld|%s", section, name, size, variant);
}

int icount_load(const char *path)
{
	char line[8192], a[96], c[96], v[96], sec[32];
	FILE *f = fopen(path, "r");
	int said = 0, cap = 0;
	double size, value;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		struct icount_entry e;

		if (strstr(line, "\"icount\": true"))
			said = 1;
		if (json_str(line, "what", a, sizeof(a)) && json_num(line, "ratio", &value)) {
			snprintf(e.key, sizeof(e.key), "%s", a);
		} else if (json_str(line, "section", sec, sizeof(sec)) &&
			   json_str(line, "case", c, sizeof(c)) &&
			   json_str(line, "variant", v, sizeof(v)) &&
			   json_num(line, "size", &size) && json_num(line, "median", &value)) {
			row_key(e.key, sizeof(e.key), sec, c, (long long)size, v);
		} else {
			continue;
		}
		e.value = value;
		if (n_icount_entries == cap) {
			cap = cap ? 2 * cap : 256;
			icount_entries = realloc(icount_entries, cap * sizeof(e));
			if (!icount_entries) {
				fclose(f);
				return -ENOMEM;
			}
		}
		icount_entries[n_icount_entries++] = e;
	}
	fclose(f);
	if (!said) {
		fprintf(stderr, "arenakit bench: %s is not from a run with ICOUNT=1\n", path);
		return -EINVAL;
	}
	return 0;
}

double icount_find(const char *key)
{
	int i;

	for (i = 0; i < n_icount_entries; i++)
		if (!strcmp(icount_entries[i].key, key))
			return icount_entries[i].value;
	return -1;
}

static double icount_row(const struct bench_row *r)
{
	char key[320];

	row_key(key, sizeof(key), r->section, r->name, r->size, r->variant);
	return icount_find(key);
}

/* A timed row's unit; under ICOUNT=1 its nanoseconds are instructions. */
static const char *row_unit(const struct bench *b, const struct bench_row *r, char *buf,
			    size_t len)
{
	if (b->icount && bench_row_timed(r) && !strncmp(r->unit, "ns/", 3)) {
		snprintf(buf, len, "insns/%s", r->unit + 3);
		return buf;
	}
	return r->unit;
}

/*
 * A figure's unit: "x" for a ratio, else its own; a time in ns is a count
 * of instructions in a run with ICOUNT=1 (@insns).
 */
static const char *figure_unit(const struct bench_ratio *r, int insns)
{
	if (!r->unit)
		return "x";
	return insns && !strcmp(r->unit, "ns") ? "insns" : r->unit;
}

/* "1.23x", "6.88 insns/node", "61954 insns": what a figure is, said with it. */
static const char *figure_text(const struct bench_ratio *r, double v, int insns, char *buf,
			       size_t len)
{
	const char *unit = figure_unit(r, insns);
	const char *space = *unit && strcmp(unit, "x") ? " " : "";

	if (v == (long long)v && r->unit)
		snprintf(buf, len, "%lld%s%s", (long long)v, space, unit);
	else
		snprintf(buf, len, "%.2f%s%s", v, space, unit);
	return buf;
}

/* The verdict of this run's figure: not on times at --quick sizes. */
static enum bench_verdict ratio_verdict(const struct bench *b, const struct bench_ratio *r)
{
	if (b->quick && r->timed)
		return BENCH_NOT_JUDGED;
	return bench_judge(r->goal, r->limit, r->value, r->lo, r->hi);
}

static const char *verdict_text(const struct bench *b, const struct bench_ratio *r, char *buf,
				size_t len)
{
	enum bench_verdict v = ratio_verdict(b, r);
	const char *first = b->icount && r->timed ? "insns " : r->insns >= 0 ? "time " : "";

	if (r->goal == BENCH_NO_GOAL)
		return "";
	if (b->quick && r->timed) {
		snprintf(buf, len, "not judged at --quick sizes");
		return buf;
	}
	if (r->insns >= 0)
		snprintf(buf, len, "%s%s, insns %s", first, bench_verdict_name(v),
			 bench_verdict_name(bench_judge(r->goal, r->limit, r->insns, r->insns,
							r->insns)));
	else
		snprintf(buf, len, "%s%s", first, bench_verdict_name(v));
	return buf;
}

/* A section's header names the clock of its last row; rows timed otherwise are marked. */
void print_table(struct bench *b)
{
	const char *clock, *other;
	char size[24], unit[48], fig[48], range[40], target[32], verdict[64];
	int i, j, insns, timed;

	for (i = 0; i < b->n_rows; i++) {
		if (section_seen(b, i))
			continue;
		clock = b->rows[i]->clock;
		other = NULL;
		insns = timed = 0;
		for (j = i; j < b->n_rows; j++)
			if (!strcmp(b->rows[j]->section, b->rows[i]->section)) {
				clock = b->rows[j]->clock;
				timed |= bench_row_timed(b->rows[j]);
				insns |= bench_row_timed(b->rows[j]) && icount_row(b->rows[j]) >= 0;
			}
		printf("\n== %s (%s%s)\n", b->rows[i]->section, clock,
		       b->icount && timed ? "; ICOUNT=1: a ns is a guest instruction" : "");
		printf("%-36s %6s %-16s %11s %11s %11s%s  %s\n", "case", "size", "variant",
		       "median", "min", "max", insns ? " insns(ICOUNT)" : "", "unit");
		for (j = i; j < b->n_rows; j++) {
			struct bench_row *r = b->rows[j];
			double n = icount_row(r);

			if (strcmp(r->section, b->rows[i]->section))
				continue;
			if (strcmp(r->clock, clock))
				other = r->clock;
			bench_median(r);
			printf("%-36s %6s %-16s %11.2f %11.2f %11.2f", r->name,
			       size_text(r->size, size, sizeof(size)), r->variant, r->median,
			       r->min, r->max);
			if (insns && n >= 0 && bench_row_timed(r))
				printf(" %13.2f", n);
			else if (insns)
				printf(" %13s", "-");
			printf("  %s%s\n", row_unit(b, r, unit, sizeof(unit)),
			       strcmp(r->clock, clock) ? " *" : "");
		}
		if (other)
			printf("* timed by %s\n", other);
	}
	if (!b->n_ratios)
		return;
	printf("\n== ratios and figures: %s median [range of the runs' ratios]%s; a target is met "
	       "or missed only by the whole range, else undecided\n",
	       b->icount ? "instructions (ICOUNT=1)," : "time,",
	       n_icount_entries ? "; insns: the same ratio with ICOUNT=1 (one run)" : "");
	printf("%-86s %-22s %11s %-20s %s\n", "what", b->icount ? "insns" : "time",
	       n_icount_entries ? "insns" : "", "target", "verdict");
	for (i = 0; i < b->n_ratios; i++) {
		struct bench_ratio *r = &b->ratios[i];
		char lo[24], ins[24] = "";

		range[0] = target[0] = 0;
		/* The range in the figure's own terms, its unit said once. */
		if (r->lo != r->hi)
			snprintf(range, sizeof(range), " [%.2f-%.2f]", r->lo, r->hi);
		snprintf(fig, sizeof(fig), "%s%s", figure_text(r, r->value, b->icount, lo, sizeof(lo)),
			 range);
		if (r->insns >= 0)
			figure_text(r, r->insns, 1, ins, sizeof(ins));
		if (r->goal != BENCH_NO_GOAL)
			snprintf(target, sizeof(target), "%s %s", r->goal == BENCH_AT_MOST ? "<=" : ">=",
				 figure_text(r, r->limit, b->icount, lo, sizeof(lo)));
		printf("%-86s %-22s %11s %-20s %s\n", r->what, fig, ins, target,
		       verdict_text(b, r, verdict, sizeof(verdict)));
	}
}

static FILE *open_out(struct bench *b, const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", b->out_dir, name);
	f = fopen(path, "w");
	if (!f)
		fprintf(stderr, "arenakit bench: cannot write %s: %s\n", path, strerror(errno));
	return f;
}

int write_json(struct bench *b, const char *started, const struct bench_env *e)
{
	FILE *f = open_out(b, "results.json");
	char unit[48];
	int i, j, err;

	if (!f)
		return -errno;
	fprintf(f, "{\n  \"environment\": {\n");
	fprintf(f, "    \"date\": \"%s\",\n    \"kernel\": \"%s\",\n    \"arch\": \"%s\",\n", started,
		e->kernel, e->arch);
	fprintf(f, "    \"accelerator\": \"%s\",\n    \"icount\": %s,\n", e->accel,
		e->icount < 0 ? "null" : e->icount ? "true" : "false");
	fprintf(f, "    \"clock_ns_per_spin_insn\": %.4f,\n", e->ns_per_insn);
	fprintf(f, "    \"cpu\": \"%s\",\n    \"host_cpu\": \"%s\",\n    \"cpus\": %ld,\n",
		e->cpu, e->host_cpu ?: "", e->vcpus);
	fprintf(f, "    \"bpf_compiler\": \"%s\",\n    \"user_compiler\": \"gcc %s\",\n",
		BENCH_BPF_CC, __VERSION__);
	fprintf(f, "    \"icount_results\": \"%s\",\n", b->icount_results ?: "");
	fprintf(f, "    \"runs\": %d,\n    \"features\": {", b->runs);
	for (i = 0; i < ARENAKIT_FEATURES; i++)
		fprintf(f, "%s\"%s\": %s", i ? ", " : "", arenakit_feature_name(i),
			arenakit_feature_probe(i) == 1 ? "true" : "false");
	fprintf(f, "}\n  },\n  \"rows\": [\n");
	for (i = 0; i < b->n_rows; i++) {
		struct bench_row *r = b->rows[i];
		double n = icount_row(r);

		fprintf(f, "    {\"section\": \"%s\", \"case\": \"%s\", \"size\": %lld, "
			"\"variant\": \"%s\", \"unit\": \"%s\", \"clock\": \"%s\", "
			"\"median\": %.4f, \"min\": %.4f, \"max\": %.4f, ",
			r->section, r->name, r->size, r->variant, row_unit(b, r, unit, sizeof(unit)),
			r->clock, bench_median(r), r->min, r->max);
		if (n >= 0 && bench_row_timed(r))
			fprintf(f, "\"icount_median\": %.4f, ", n);
		fprintf(f, "\"samples\": [");
		for (j = 0; j < r->n; j++)
			fprintf(f, "%s%.4f", j ? ", " : "", r->samples[j]);
		fprintf(f, "]}%s\n", i + 1 < b->n_rows ? "," : "");
	}
	fprintf(f, "  ],\n  \"ratios\": [\n");
	for (i = 0; i < b->n_ratios; i++) {
		struct bench_ratio *r = &b->ratios[i];

		fprintf(f, "    {\"what\": \"%s\", \"ratio\": %.4f, \"min\": %.4f, \"max\": %.4f",
			r->what, r->value, r->lo, r->hi);
		if (r->unit)
			fprintf(f, ", \"unit\": \"%s\"", r->unit);
		if (r->insns >= 0)
			fprintf(f, ", \"icount_ratio\": %.4f", r->insns);
		if (r->goal != BENCH_NO_GOAL) {
			fprintf(f, ", \"target\": \"%s %.2f\", \"verdict\": \"%s\"",
				r->goal == BENCH_AT_MOST ? "<=" : ">=", r->limit,
				ratio_verdict(b, r) == BENCH_NOT_JUDGED ? "not judged" :
				bench_verdict_name(ratio_verdict(b, r)));
			if (r->insns >= 0)
				fprintf(f, ", \"icount_verdict\": \"%s\"",
					bench_verdict_name(bench_judge(r->goal, r->limit, r->insns,
								       r->insns, r->insns)));
		}
		fprintf(f, "}%s\n", i + 1 < b->n_ratios ? "," : "");
	}
	fprintf(f, "  ]\n}\n");
	err = ferror(f) ? -EIO : 0;
	return fclose(f) ? -errno : err;
}

/*
 * Gnuplot data: one file per section and variant that has sizes, a line
 * per size and a column per case (medians), e.g. walk-in-order.dat.
 */
int write_plot_data(struct bench *b)
{
	int i, j, k;

	for (i = 0; i < b->n_rows; i++) {
		struct bench_row *r = b->rows[i], *c;
		char name[128], *p;
		FILE *f;
		long long size = -1;

		if (!r->size)
			continue;
		for (j = 0; j < i; j++)	/* one file per section and variant */
			if (!strcmp(b->rows[j]->section, r->section) &&
			    !strcmp(b->rows[j]->variant, r->variant) && b->rows[j]->size)
				break;
		if (j < i)
			continue;
		snprintf(name, sizeof(name), "%s%s%s.dat", r->section, *r->variant ? "-" : "",
			 r->variant);
		for (p = name; *p; p++)
			if (*p == ' ')
				*p = '-';
		f = open_out(b, name);
		if (!f)
			return -errno;
		/* A comment, then a head line gnuplot takes the titles from. */
		fprintf(f, "# %s, %s: median %s against size\n\"size\"", r->section, r->variant,
			r->unit);
		for (j = i; j < b->n_rows; j++) {
			c = b->rows[j];
			if (!strcmp(c->section, r->section) && !strcmp(c->variant, r->variant) &&
			    c->size == r->size)
				fprintf(f, " \"%s\"", c->name);
		}
		for (j = i; j < b->n_rows; j++) {
			c = b->rows[j];
			if (strcmp(c->section, r->section) || strcmp(c->variant, r->variant) ||
			    c->size == size)
				continue;
			size = c->size;
			fprintf(f, "\n%lld", size);
			for (k = j; k < b->n_rows; k++) {
				struct bench_row *d = b->rows[k];

				if (!strcmp(d->section, r->section) &&
				    !strcmp(d->variant, r->variant) && d->size == size)
					fprintf(f, " %.4f", bench_median(d));
			}
		}
		fputc('\n', f);
		if (fclose(f))
			return -errno;
	}
	return 0;
}

void bench_report_free(void)
{
	free(icount_entries);
	icount_entries = NULL;
	n_icount_entries = 0;
}
