// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * `arenakit bench`: runs the benchmark sections in this process, prints a
 * table of medians and spreads and the ratios the project has targets for,
 * and writes every figure with the environment as JSON (and the series the
 * plots draw as gnuplot data) to an output directory.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>

#include <arenakit/arena.h>
#include "bench.h"
#include "commands.h"
#include "kernel_features.h"
#include "loader.h"

#ifndef BENCH_BPF_CC
#define BENCH_BPF_CC "unknown"
#endif

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

/* A section's header names the clock of its last row; rows timed otherwise are marked. */
static void print_table(struct bench *b)
{
	const char *clock, *other;
	char size[24];
	int i, j;

	for (i = 0; i < b->n_rows; i++) {
		if (section_seen(b, i))
			continue;
		clock = other = NULL;
		for (j = i; j < b->n_rows; j++)
			if (!strcmp(b->rows[j]->section, b->rows[i]->section))
				clock = b->rows[j]->clock;
		printf("\n== %s (%s)\n", b->rows[i]->section, clock);
		printf("%-36s %6s %-16s %11s %11s %11s  %s\n", "case", "size", "variant",
		       "median", "min", "max", "unit");
		for (j = i; j < b->n_rows; j++) {
			struct bench_row *r = b->rows[j];

			if (strcmp(r->section, b->rows[i]->section))
				continue;
			if (strcmp(r->clock, clock))
				other = r->clock;
			bench_median(r);
			printf("%-36s %6s %-16s %11.2f %11.2f %11.2f  %s%s\n", r->name,
			       size_text(r->size, size, sizeof(size)), r->variant, r->median,
			       r->min, r->max, r->unit, strcmp(r->clock, clock) ? " *" : "");
		}
		if (other)
			printf("* timed by %s\n", other);
	}
	if (!b->n_ratios)
		return;
	printf("\n== ratios (median of the runs' ratios; their range in brackets)\n");
	for (i = 0; i < b->n_ratios; i++) {
		struct bench_ratio *r = &b->ratios[i];
		char range[32] = "";

		if (r->lo != r->hi)
			snprintf(range, sizeof(range), "[%.2f-%.2f]", r->lo, r->hi);
		printf("%-72s %7.2fx %-11s", r->what, r->value, range);
		/* At --quick sizes a ratio of times means nothing; one of counts does. */
		if (r->goal != BENCH_NO_GOAL)
			printf("  target %s %.2fx: %s", r->goal == BENCH_AT_MOST ? "<=" : ">=",
			       r->limit, b->quick && r->timed ? "not judged at --quick sizes" :
			       (r->goal == BENCH_AT_MOST ? r->value <= r->limit :
				r->value >= r->limit) ? "met" : "MISSED");
		putchar('\n');
	}
}

static void cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256], *colon;

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "model name", 10) && (colon = strchr(line, ':'))) {
			snprintf(buf, len, "%s", colon + 2);
			buf[strcspn(buf, "\n")] = 0;
			break;
		}
	fclose(f);
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

static int write_json(struct bench *b, const char *started)
{
	const char *accel = getenv("ARENAKIT_ACCEL");
	struct utsname u;
	char cpu[128];
	FILE *f = open_out(b, "results.json");
	int i, j, err;

	if (!f)
		return -errno;
	uname(&u);
	cpu_model(cpu, sizeof(cpu));
	fprintf(f, "{\n  \"environment\": {\n");
	fprintf(f, "    \"date\": \"%s\",\n    \"kernel\": \"%s\",\n", started, u.release);
	fprintf(f, "    \"accelerator\": \"%s\",\n    \"cpu\": \"%s\",\n    \"cpus\": %ld,\n",
		accel ? accel : "none", cpu, sysconf(_SC_NPROCESSORS_ONLN));
	fprintf(f, "    \"bpf_compiler\": \"%s\",\n    \"user_compiler\": \"gcc %s\",\n",
		BENCH_BPF_CC, __VERSION__);
	fprintf(f, "    \"runs\": %d,\n    \"features\": {", b->runs);
	for (i = 0; i < ARENAKIT_FEATURES; i++)
		fprintf(f, "%s\"%s\": %s", i ? ", " : "", arenakit_feature_name(i),
			arenakit_feature_probe(i) == 1 ? "true" : "false");
	fprintf(f, "}\n  },\n  \"rows\": [\n");
	for (i = 0; i < b->n_rows; i++) {
		struct bench_row *r = b->rows[i];

		fprintf(f, "    {\"section\": \"%s\", \"case\": \"%s\", \"size\": %lld, "
			"\"variant\": \"%s\", \"unit\": \"%s\", \"clock\": \"%s\", "
			"\"median\": %.4f, \"min\": %.4f, \"max\": %.4f, \"samples\": [",
			r->section, r->name, r->size, r->variant, r->unit, r->clock,
			bench_median(r), r->min, r->max);
		for (j = 0; j < r->n; j++)
			fprintf(f, "%s%.4f", j ? ", " : "", r->samples[j]);
		fprintf(f, "]}%s\n", i + 1 < b->n_rows ? "," : "");
	}
	fprintf(f, "  ],\n  \"ratios\": [\n");
	for (i = 0; i < b->n_ratios; i++) {
		struct bench_ratio *r = &b->ratios[i];

		fprintf(f, "    {\"what\": \"%s\", \"ratio\": %.4f, \"min\": %.4f, \"max\": %.4f",
			r->what, r->value, r->lo, r->hi);
		if (r->goal != BENCH_NO_GOAL)
			fprintf(f, ", \"target\": \"%s %.2f\", \"met\": %s",
				r->goal == BENCH_AT_MOST ? "<=" : ">=", r->limit,
				(r->goal == BENCH_AT_MOST ? r->value <= r->limit :
				 r->value >= r->limit) ? "true" : "false");
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
static int write_plot_data(struct bench *b)
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

static const struct {
	const char *name;
	int (*run)(struct bench *b);
	const char *what;
} sections[] = {
	{ "walk", bench_loops_and_walks,
	  "empty loops and list walks per mechanism; BPF against native" },
	{ "frames", bench_frames,
	  "a call of a frame of 256 to 65,535 steps under the kernel's loop bound" },
	{ "htab", bench_htab, "arena hash table against BPF_MAP_TYPE_HASH" },
	{ "alloc", bench_alloc, "arenakit allocator against the selftests' page_frag one" },
	{ "glob", bench_glob, "glob matching: BPF, the same header native, fnmatch(3)" },
	{ "verifier", bench_verifier, "instructions the verifier processes per program" },
};

#define N_SECTIONS ARRAY_SIZE(sections)

static void usage(FILE *out)
{
	size_t i;

	fprintf(out,
		"usage: arenakit bench [--runs N] [--quick] [--out DIR] [--glob-input FILE]\n"
		"                      [--objects DIR] [SECTION...]\n\n"
		"Measure arenakit in this kernel, side by side, in one process: every case\n"
		"runs once to warm up, then N times (default 5), interleaved with the other\n"
		"cases of its section; the table gives median, min and max, then the ratios\n"
		"the project has targets for. Under TCG absolute times are inflated; ratios\n"
		"hold.\n"
		"Loads BPF: runs only on the arenakit kernel (make bench runs it in the VM).\n\n"
		"  --runs N     samples per case (1..%d)\n"
		"  --quick      small sizes only: checks that every case runs and answers right\n"
		"  --out DIR    write DIR/results.json (every sample, the environment) and\n"
		"               DIR/*.dat (the plotted series)\n"
		"  --glob-input FILE  the glob section's lines (default build/kernel-files.txt,\n"
		"               the kernel tree's file list that make bench writes)\n"
		"  --objects DIR  the verifier section also loads every DIR/*.bpf.o, program\n"
		"               by program (make bench: the guest tests' programs)\n\n"
		"sections (default: all):\n", BENCH_MAX_RUNS);
	for (i = 0; i < N_SECTIONS; i++)
		fprintf(out, "  %-10s %s\n", sections[i].name, sections[i].what);
	fprintf(out, "\nExit status: 0; 1 if a case answered wrongly or a section could not\n"
		"run; 2 on bad usage. A missed target is reported, not an error.\n");
}

int cmd_bench(int argc, char **argv)
{
	struct bench b = { .runs = 5 };
	int want[N_SECTIONS] = {}, any = 0, failed = 0, err, i;
	size_t s;
	char started[32], why[256];
	time_t now = time(NULL);

	if (wants_help(argc, argv)) {
		usage(stdout);
		return 0;
	}
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--runs") && i + 1 < argc) {
			char *end;

			b.runs = strtol(argv[++i], &end, 10);
			if (*end || b.runs < 1 || b.runs > BENCH_MAX_RUNS) {
				fprintf(stderr, "arenakit bench: --runs takes 1..%d, not '%s'\n",
					BENCH_MAX_RUNS, argv[i]);
				return 2;
			}
		} else if (!strcmp(argv[i], "--quick")) {
			b.quick = 1;
		} else if (!strcmp(argv[i], "--out") && i + 1 < argc) {
			b.out_dir = argv[++i];
		} else if (!strcmp(argv[i], "--glob-input") && i + 1 < argc) {
			b.glob_input = argv[++i];
		} else if (!strcmp(argv[i], "--objects") && i + 1 < argc) {
			b.objects_dir = argv[++i];
		} else {
			for (s = 0; s < N_SECTIONS; s++)
				if (!strcmp(argv[i], sections[s].name))
					break;
			if (s == N_SECTIONS) {
				fprintf(stderr, "arenakit bench: unknown %s '%s'\n\n",
					argv[i][0] == '-' ? "option (or missing value)" : "section",
					argv[i]);
				usage(stderr);
				return 2;
			}
			want[s] = any = 1;
		}
	}
	if (arenakit_kernel_check(why, sizeof(why))) {
		fprintf(stderr, "arenakit bench: %s\n", why);
		return 1;
	}
	strftime(started, sizeof(started), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	for (s = 0; s < N_SECTIONS; s++) {
		if (any && !want[s])
			continue;
		fprintf(stderr, "arenakit bench: %s...\n", sections[s].name);
		err = sections[s].run(&b);
		if (err) {
			fprintf(stderr, "arenakit bench: section %s failed: %s\n",
				sections[s].name, strerror(-err));
			failed = 1;
		}
	}
	printf("arenakit bench, %s, %d runs per case, accelerator %s\n", started, b.runs,
	       getenv("ARENAKIT_ACCEL") ?: "none");
	print_table(&b);
	if (b.out_dir) {
		err = write_json(&b, started);
		if (!err)
			err = write_plot_data(&b);
		if (err) {
			fprintf(stderr, "arenakit bench: writing to %s: %s\n", b.out_dir,
				strerror(-err));
			failed = 1;
		}
	}
	if (b.wrong)
		fprintf(stderr, "arenakit bench: %d case(s) answered wrongly\n", b.wrong);
	for (i = 0; i < b.n_rows; i++)
		free(b.rows[i]);
	free(b.rows);
	free(b.ratios);
	return failed || b.wrong ? 1 : 0;
}
