// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What `arenakit glob` prints: selected lines with grep's prefixes, grep's
 * "binary file matches" for a file with a NUL, per-file counts, the cut
 * pairs and --check's disagreements with fnmatch(3) on standard error, and
 * --stats: per-pattern counts and the throughput of the BPF matcher against
 * the same header built natively and against fnmatch(3). It takes in the
 * matcher's answers (struct glob_answers) and lines from its caller, and
 * the patterns from the options.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "clock.h"
#include "glob_cli_tool.h"

/* Disagreements shown one by one; the rest are only counted. */
#define GLOB_SHOW_DISAGREEMENTS 10
/* Bytes of a pattern quoted in a message. */
#define GLOB_QUOTE 40

int glob_report_init(struct glob_report *r, const struct glob_opts *opt)
{
	memset(r, 0, sizeof(*r));
	r->opt = opt;
	if (opt->stats && opt->npatterns) {
		r->per_pattern = calloc(opt->npatterns, sizeof(*r->per_pattern));
		if (!r->per_pattern)
			return -ENOMEM;
	}
	return 0;
}

void glob_report_free(struct glob_report *r)
{
	free(r->per_pattern);
	r->per_pattern = NULL;
}

/* Push stdout out now, so a write error stops the run early. */
static int flush_stdout(void)
{
	errno = 0;
	if (fflush(stdout) == 0 && !ferror(stdout))
		return 0;
	return errno ? -errno : -EIO;
}

/* What follows a pattern quoted with %.*s: "..." if it was cut short. */
static const char *ellipsis(const char *pat)
{
	return strlen(pat) > GLOB_QUOTE ? "..." : "";
}

/* --check: fnmatch(3) on the same pair. It stops at a NUL, so such lines are skipped. */
static void check_pair(struct glob_report *r, const struct glob_line *l, size_t pattern,
		       bool bpf)
{
	const char *pat = r->opt->patterns[pattern];

	if (l->nul) {
		r->unchecked++;
		return;
	}
	r->checked++;
	if (bpf == !fnmatch(pat, l->text, 0))
		return;
	if (r->disagreements++ < GLOB_SHOW_DISAGREEMENTS)
		glob_error("fnmatch(3) disagrees: %s:%llu, pattern %zu ('%.*s%s'): BPF says %s",
			   r->file, l->no, pattern + 1, GLOB_QUOTE, pat, ellipsis(pat),
			   bpf ? "match" : "no match");
}

/**
 * glob_report_answers - take in one group's answers (glob_matcher_next())
 * @r: the report
 * @a: the answers: per-pattern counts, --check, and the pairs cut
 */
void glob_report_answers(struct glob_report *r, const struct glob_answers *a)
{
	unsigned int i, j, yes, cut;
	size_t first = a->first;
	const char *pat;

	r->pairs += (unsigned long long)a->nlines * a->npatterns;
	for (i = 0; i < a->nlines; i++) {
		const struct glob_line *l = &a->lines[a->index[i]];

		yes = a->matched[i];
		cut = a->cut[i];
		if (!cut && !r->per_pattern && !r->opt->check)
			continue;
		for (j = 0; j < a->npatterns; j++) {
			if (cut >> j & 1) {
				/* No answer is not "no match": say so, and exit 2. */
				r->cut_pairs++;
				pat = r->opt->patterns[first + j];
				glob_error("%s:%llu: matching pattern %zu ('%.*s%s') ran out of "
					   "the loop budget: no answer", r->file, l->no,
					   first + j + 1, GLOB_QUOTE, pat, ellipsis(pat));
				continue;
			}
			if (r->per_pattern)
				r->per_pattern[first + j] += yes >> j & 1;
			if (r->opt->check)
				check_pair(r, l, first + j, yes >> j & 1);
		}
	}
}

static void print_line(const struct glob_report *r, const struct glob_line *l)
{
	if (r->prefix)
		printf("%s:", r->file);
	if (r->opt->line_numbers)
		printf("%llu:", l->no);
	fwrite(l->text, 1, l->len, stdout);
	putchar('\n');
}

/* --stats: the same pairs through the natively built header and fnmatch(3). */
static void time_batch(struct glob_report *r, const struct glob_line *lines, unsigned int n)
{
	char *const *pats = r->opt->patterns;
	size_t j, npats = r->opt->npatterns;
	volatile int sink = 0;
	unsigned int i;
	double start;

	/* The matcher the BPF side runs: ak_glob_match_len(). */
	start = monotonic_seconds();
	for (i = 0; i < n; i++)
		for (j = 0; j < npats; j++)
			sink += ak_glob_match_len(pats[j], lines[i].text, lines[i].len);
	r->native_s += monotonic_seconds() - start;
	start = monotonic_seconds();
	for (i = 0; i < n; i++)
		for (j = 0; j < npats; j++)
			sink += !fnmatch(pats[j], lines[i].text, 0);
	r->fnmatch_s += monotonic_seconds() - start;
	(void)sink;
}

/**
 * glob_report_batch - count and print the batch's selected lines
 * @r: the report
 * @lines: the batch, matched (each line's @matched set by the matcher)
 * @n: how many lines
 *
 * A file that showed a NUL gets one "binary file matches" line instead of
 * its selected lines, as in grep, unless -a.
 *
 * Return: 0, or a negative errno if writing failed.
 */
int glob_report_batch(struct glob_report *r, const struct glob_line *lines, unsigned int n)
{
	const struct glob_opts *o = r->opt;
	bool print = !o->quiet && !o->count && !o->stats;
	unsigned int i;

	for (i = 0; i < n; i++) {
		const struct glob_line *l = &lines[i];

		if (l->matched == o->invert)
			continue;
		r->selected++;
		r->file_selected++;
		if (!print)
			continue;
		if (l->binary && !o->text) {
			/* On standard error, as grep does since 3.5. */
			if (!r->binary_said)
				fprintf(stderr, "%s: %s: binary file matches\n", GLOB_NAME,
					r->file);
			r->binary_said = true;
			continue;
		}
		print_line(r, l);
	}
	r->lines += n;
	if (o->stats)
		time_batch(r, lines, n);
	return print ? flush_stdout() : 0;
}

/**
 * glob_report_file_done - the current file is read: -c prints its count
 * @r: the report
 *
 * Return: 0, or a negative errno if writing failed.
 */
int glob_report_file_done(struct glob_report *r)
{
	const struct glob_opts *o = r->opt;
	int err = 0;

	if (o->count && !o->quiet && !o->stats) {
		if (r->prefix)
			printf("%s:", r->file);
		printf("%llu\n", r->file_selected);
		err = flush_stdout();
	}
	r->file_selected = 0;
	r->binary_said = false;
	return err;
}

static void print_rate(const char *what, double s, unsigned long long pairs, double bpf_s)
{
	printf("%-8s %.3f s, %.2f M pairs/s", what, s, s > 0 ? pairs / s / 1e6 : 0.0);
	if (bpf_s > 0 && s > 0)
		printf(" (BPF takes %.2fx its time)", bpf_s / s);
	putchar('\n');
}

static void print_check(struct glob_report *r, FILE *out)
{
	if (r->disagreements)
		fprintf(out, "fnmatch(3): DISAGREES on %llu of %llu pairs checked",
			r->disagreements, r->checked);
	else
		fprintf(out, "fnmatch(3): agrees on all %llu pairs checked", r->checked);
	if (r->unchecked)
		fprintf(out, " (%llu unchecked: lines with a NUL)", r->unchecked);
	fputc('\n', out);
}

static void print_stats(struct glob_report *r, unsigned long long bpf_ns,
			unsigned long long runs)
{
	size_t j, npats = r->opt->npatterns;
	double bpf_s = bpf_ns / 1e9;
	struct rusage ru;

	for (j = 0; j < npats; j++)
		printf("%10llu  %s\n", r->per_pattern[j], r->opt->patterns[j]);
	printf("%llu lines x %zu patterns = %llu pairs\n", r->lines, npats, r->lines * npats);
	printf("%-8s %.3f s in the matcher, %.2f M pairs/s (%llu runs)\n", "BPF:", bpf_s,
	       bpf_s > 0 ? r->pairs / bpf_s / 1e6 : 0.0, runs);
	print_rate("native:", r->native_s, r->pairs, bpf_s);
	print_rate("fnmatch:", r->fnmatch_s, r->pairs, bpf_s);
	if (r->opt->check)
		print_check(r, stdout);
	if (!getrusage(RUSAGE_SELF, &ru))
		printf("%-8s %ld KiB peak resident\n", "memory:", ru.ru_maxrss);
}

/**
 * glob_report_summary - at the end: --stats on stdout, or --check's verdict on stderr
 * @r: the report
 * @bpf_ns: the time spent in the BPF matcher (glob_matcher_elapsed_ns())
 * @runs: the matcher's program runs
 */
void glob_report_summary(struct glob_report *r, unsigned long long bpf_ns,
			 unsigned long long runs)
{
	if (r->opt->stats) {
		print_stats(r, bpf_ns, runs);
	} else if (r->opt->check) {
		fputs(GLOB_NAME ": ", stderr);
		print_check(r, stderr);
	}
}
