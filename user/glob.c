// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* arenakit glob: grep-like matching of lines against glob patterns, in BPF. */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arenakit/glob.h>

#include "commands.h"
#include "loader.h"
#include "glob_cli.skel.h"

#define MAX_STRINGS 16384
#define MAX_PATTERNS 32
#define TEXT_BYTES (1024 * 1024)
#define MAX_LINE 65536
#define MAX_RUNS 100000
#define MAX_PATTERN 4096

struct options {
	int invert, count, check, stats;
	const char *file;
	char **patterns;
	int npatterns;
};

struct state {
	struct glob_cli *skel;
	struct options *opt;
	unsigned int pattern_bytes;	/* text before the strings */
	char *lines[MAX_STRINGS];	/* this batch's lines, for printing */
	size_t line_len[MAX_STRINGS];
	unsigned int nlines, text_used;
	unsigned long long line_no;	/* of the batch's first line */
	unsigned long long selected, disagreements, cut_pairs, pairs;
	unsigned long long per_pattern[MAX_PATTERNS];
	double native_s, fnmatch_s;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: arenakit glob [-f FILE] [-v] [-c] [--check] [--stats] PATTERN...\n\n"
		"Print the lines of FILE (default: standard input) that match any PATTERN,\n"
		"matched in BPF over the arena with the kernel's lib/glob.c semantics\n"
		"(?, *, [...], [!...], \\ escapes; '/' and '.' are not special).\n\n"
		"  -f FILE    read lines from FILE\n"
		"  -v         print the lines that match no pattern\n"
		"  -c         print only the number of selected lines\n"
		"  --check    also run fnmatch(3) on every line/pattern pair and report\n"
		"             disagreements on standard error\n"
		"  --stats    print per-pattern counts and throughput (BPF, the same code\n"
		"             built natively, fnmatch) instead of lines\n\n"
		"At most %d patterns. Exit status: 0 if a line was selected, 1 if none,\n"
		"2 on error (a line over %d bytes, a match the loop budget cut, ...).\n",
		MAX_PATTERNS, MAX_LINE);
}

static double seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Compare the batch with the native build and fnmatch; time both. */
static void compare_batch(struct state *s)
{
	unsigned int i, j;
	double start = seconds();
	volatile int sink = 0;

	for (i = 0; i < s->nlines; i++)
		for (j = 0; j < (unsigned int)s->opt->npatterns; j++)
			sink += arena_glob_match_len(s->opt->patterns[j], s->lines[i], s->line_len[i]);
	s->native_s += seconds() - start;
	start = seconds();
	for (i = 0; i < s->nlines; i++)
		for (j = 0; j < (unsigned int)s->opt->npatterns; j++)
			sink += !fnmatch(s->opt->patterns[j], s->lines[i], 0);
	s->fnmatch_s += seconds() - start;
	(void)sink;
}

/* Forget the batch's lines; the next batch starts after the patterns. */
static void release_batch(struct state *s)
{
	unsigned int i;

	for (i = 0; i < s->nlines; i++)
		free(s->lines[i]);
	s->line_no += s->nlines;
	s->nlines = 0;
	s->text_used = s->pattern_bytes;
}

/* Match the batch, report it and release it. -1 only if the matcher could not run. */
static int flush(struct state *s)
{
	struct glob_cli *skel = s->skel;
	unsigned int i, j;
	int runs = 0, retval, err;

	if (!s->nlines)
		return 0;
	skel->bss->string_count = s->nlines;
	skel->bss->next_string = 0;
	do {
		err = arenakit_run(skel->progs.glob_strings, &retval);
		if (err) {
			fprintf(stderr, "arenakit glob: running the matcher: %s\n", strerror(-err));
			release_batch(s);
			return -1;
		}
	} while (retval == ARENA_EBUDGET && ++runs < MAX_RUNS);
	if (retval) {
		fprintf(stderr, "arenakit glob: the matcher made no progress\n");
		release_batch(s);
		return -1;
	}
	for (i = 0; i < s->nlines; i++) {
		unsigned int matched = skel->arena->cli_matched[i], cut = skel->arena->cli_cut[i];
		int selected;

		for (j = 0; j < (unsigned int)s->opt->npatterns; j++) {
			int bpf = matched >> j & 1;

			if (cut >> j & 1) {
				fprintf(stderr, "arenakit glob: line %llu: matching '%s' ran out of "
					"the loop budget: no answer\n", s->line_no + i,
					s->opt->patterns[j]);
				s->cut_pairs++;	/* an error at exit, not a reason to stop */
				continue;
			}
			s->per_pattern[j] += bpf;
			if (s->opt->check && bpf != !fnmatch(s->opt->patterns[j], s->lines[i], 0) &&
			    s->disagreements++ < 10)
				fprintf(stderr, "arenakit glob: fnmatch disagrees on line %llu, "
					"pattern '%s': BPF says %s\n", s->line_no + i,
					s->opt->patterns[j], bpf ? "match" : "no match");
		}
		s->pairs += s->opt->npatterns;
		selected = (matched != 0) != s->opt->invert;
		s->selected += selected;
		if (selected && !s->opt->count && !s->opt->stats)
			printf("%s\n", s->lines[i]);
	}
	if (s->opt->stats)
		compare_batch(s);
	release_batch(s);
	return 0;
}

static int add_line(struct state *s, char *line, size_t len)
{
	struct glob_cli *skel = s->skel;

	if (s->nlines == MAX_STRINGS || s->text_used + len + 1 > TEXT_BYTES)
		if (flush(s))
			return -1;
	memcpy(skel->arena->cli_text + s->text_used, line, len + 1);
	skel->arena->cli_string[s->nlines] = skel->arena->cli_text + s->text_used;
	skel->arena->cli_string_len[s->nlines] = len;
	s->text_used += len + 1;
	s->lines[s->nlines] = line;
	s->line_len[s->nlines] = len;
	s->nlines++;
	return 0;
}

static void print_stats(struct state *s)
{
	double bpf_s = s->skel->bss->elapsed_ns / 1e9;
	int j;

	for (j = 0; j < s->opt->npatterns; j++)
		printf("%10llu  %s\n", s->per_pattern[j], s->opt->patterns[j]);
	printf("%llu lines x %d patterns = %llu matches\n", s->line_no - 1, s->opt->npatterns,
	       s->pairs);
	if (bpf_s > 0)
		printf("BPF:     %.3f s in the matcher, %.2f M matches/s\n", bpf_s,
		       s->pairs / bpf_s / 1e6);
	if (s->native_s > 0 && s->fnmatch_s > 0)
		printf("native:  %.3f s, %.2f M matches/s (BPF takes %.2fx its time)\n"
		       "fnmatch: %.3f s, %.2f M matches/s (BPF takes %.2fx its time)\n",
		       s->native_s, s->pairs / s->native_s / 1e6, bpf_s / s->native_s,
		       s->fnmatch_s, s->pairs / s->fnmatch_s / 1e6, bpf_s / s->fnmatch_s);
	if (s->opt->check)
		printf("fnmatch(3): %s (%llu disagreements)\n",
		       s->disagreements ? "DISAGREES" : "agrees", s->disagreements);
}

/* Does @pat have a '[' that lib/glob.c takes literally (no well-formed class)? */
static int unclosed_class(const char *pat)
{
	const char *p, *c;

	for (p = pat; *p; p++) {
		if (*p == '\\' && p[1]) {
			p++;
			continue;
		}
		if (*p != '[')
			continue;
		c = p + 1 + (p[1] == '!');
		if (*c == ']')
			c++;	/* a leading ']' is a member */
		while (*c && *c != ']')
			c++;
		if (!*c)
			return 1;
		p = c;
	}
	return 0;
}

static int parse(int argc, char **argv, struct options *opt)
{
	static const struct option longopts[] = {
		{ "check", no_argument, NULL, 'C' },
		{ "stats", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "f:vch", longopts, NULL)) != -1) {
		switch (c) {
		case 'f': opt->file = optarg; break;
		case 'v': opt->invert = 1; break;
		case 'c': opt->count = 1; break;
		case 'C': opt->check = 1; break;
		case 'S': opt->stats = 1; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -1;
		}
	}
	opt->patterns = argv + optind;
	opt->npatterns = argc - optind;
	if (opt->npatterns < 1 || opt->npatterns > MAX_PATTERNS) {
		fprintf(stderr, "arenakit glob: give 1 to %d patterns, not %d\n", MAX_PATTERNS,
			opt->npatterns);
		return -1;
	}
	return 0;
}

int cmd_glob(int argc, char **argv)
{
	struct options opt = { 0 };
	static struct state s;
	FILE *in = stdin;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int j, err, status = 0;

	if (parse(argc, argv, &opt))
		return 2;
	if (opt.file && !(in = fopen(opt.file, "r"))) {
		fprintf(stderr, "arenakit glob: %s: %s\n", opt.file, strerror(errno));
		return 2;
	}
	s.opt = &opt;
	s.line_no = 1;
	s.skel = glob_cli__open();
	if (!s.skel || (err = arenakit_load_skeleton(s.skel->skeleton))) {
		fprintf(stderr, "arenakit glob: cannot load the matcher\n");
		status = 2;
		goto out;
	}
	s.skel->bss->pattern_count = opt.npatterns;
	for (j = 0; j < opt.npatterns; j++) {
		size_t plen = strlen(opt.patterns[j]);

		if (plen > MAX_PATTERN) {
			fprintf(stderr, "arenakit glob: pattern %d ('%.40s...') is %zu bytes, over %d\n",
				j + 1, opt.patterns[j], plen, MAX_PATTERN);
			status = 2;
			goto out;
		}
		if (unclosed_class(opt.patterns[j]))
			fprintf(stderr, "arenakit glob: note: pattern '%s' has a '[' that opens no "
				"class; it matches a literal '[' (as lib/glob.c does)\n",
				opt.patterns[j]);
		memcpy(s.skel->arena->cli_text + s.text_used, opt.patterns[j], plen + 1);
		s.skel->arena->cli_pattern[j] = s.skel->arena->cli_text + s.text_used;
		s.text_used += plen + 1;
	}
	s.pattern_bytes = s.text_used;
	while ((len = getline(&line, &cap, in)) >= 0) {
		if (len && line[len - 1] == '\n')
			line[--len] = '\0';
		if (len > MAX_LINE) {
			fprintf(stderr, "arenakit glob: %s: line %llu is %zd bytes, over %d\n",
				opt.file ? opt.file : "stdin", s.line_no + s.nlines, len, MAX_LINE);
			status = 2;
			break;
		}
		if (add_line(&s, line, len)) {
			status = 2;
			break;
		}
		line = NULL;	/* the batch owns it now */
		cap = 0;
	}
	free(line);
	if (flush(&s))
		status = 2;
	if (opt.stats)
		print_stats(&s);
	else if (opt.count)
		printf("%llu\n", s.selected);
	if ((opt.check && s.disagreements) || s.cut_pairs)
		status = 2;
	else if (!status)
		status = s.selected ? 0 : 1;
out:
	glob_cli__destroy(s.skel);	/* NULL-safe */
	if (in != stdin)
		fclose(in);
	return status;
}
