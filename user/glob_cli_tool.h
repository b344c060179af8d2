/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * `arenakit glob`, in four parts:
 *
 *   glob_cli.c         options, patterns, the walk over the files, exit
 *                      status: it drives the other three
 *   glob_cli_input.c   bounded line reading: memory stays within the line
 *                      limit
 *   glob_cli_match.c   batches of lines through the BPF matcher, patterns
 *                      in groups of AK_GLOB_MAX_PATTERNS; each group's
 *                      answers are returned (struct glob_answers)
 *   glob_cli_report.c  what is printed from the answers and the lines:
 *                      lines, counts, --check and --stats
 *
 * The matcher and the report know nothing of each other: the caller hands
 * the matcher's answers to the report (bench/glob_vs_native.c drives them
 * the same way). Limits and the arena layout are shared with the BPF side
 * in user/glob_cli.h.
 */
#ifndef ARENAKIT_USER_GLOB_TOOL_H
#define ARENAKIT_USER_GLOB_TOOL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "glob_cli.h"

#define GLOB_NAME "arenakit glob"
#define GLOB_STDIN_NAME "(standard input)"

/* A message on standard error, after the command's name. */
static inline __attribute__((format(printf, 1, 2))) void glob_error(const char *fmt, ...)
{
	va_list ap;

	fputs(GLOB_NAME ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

struct glob_opts {
	bool count;		/* -c */
	bool invert;		/* -v */
	bool quiet;		/* -q */
	bool line_numbers;	/* -n */
	bool no_messages;	/* -s */
	bool text;		/* -a */
	bool check;		/* --check */
	bool stats;		/* --stats */
	int with_filename;	/* -H 1, -h 0, -1: only with several files */
	char **patterns;
	size_t npatterns;
};

/* glob_cli_input.c: one open input, read through a fixed buffer. */
#define GLOB_INPUT_BUF 65536

struct glob_input {
	const char *name;		/* for messages and prefixes */
	int fd;
	bool slow;			/* a pipe or terminal: a read may wait */
	bool eof;
	bool binary;			/* a NUL was seen in what was read */
	unsigned long long line_no;	/* of the last line returned */
	size_t pos, end;		/* unread bytes are buf[pos..end) */
	char buf[GLOB_INPUT_BUF];
};

int glob_input_open(struct glob_input *in, const char *path);
int glob_input_line(struct glob_input *in, char *dst, size_t cap, size_t *len);
bool glob_input_has_line(const struct glob_input *in);
void glob_input_close(struct glob_input *in);

/* glob_cli_match.c: one line of the batch in the arena. */
struct glob_line {
	const char *text;	/* in the arena: @len bytes and a NUL after them */
	unsigned long long no;	/* line number in its file */
	unsigned int len;
	bool binary;		/* read after its file showed a NUL */
	bool nul;		/* holds a NUL itself */
	bool matched;		/* by some pattern (once the batch is matched) */
};

/*
 * One group's answers: the lines still undecided against patterns
 * [first, first + npatterns). Answer i is for lines[index[i]]; bit j of
 * matched[i] says pattern first + j matched it, bit j of cut[i] that the
 * loop budget cut that pair (no answer). Valid until the next call.
 */
struct glob_answers {
	const struct glob_line *lines;
	const unsigned int *index;
	unsigned int nlines;
	size_t first;
	unsigned int npatterns;
	const unsigned int *matched;
	const unsigned int *cut;
};

struct glob_cli;

struct glob_matcher {
	struct glob_cli *skel;
	struct glob_cli_arena *arena;
	char **patterns;
	size_t npatterns;
	size_t window_first, window_len;	/* the window of patterns in the arena */
	bool all_pairs;		/* match every pair, not each line until it matches */
	unsigned int nlines, text_used;
	unsigned long long runs;
	size_t next_first;	/* the next group's first pattern */
	unsigned int nlive;
	struct glob_line line[GLOB_CLI_LINES];
	unsigned int live[GLOB_CLI_LINES];	/* the lines the next group matches */
};

int glob_matcher_open(struct glob_matcher *m, char **patterns, size_t npatterns,
		      bool all_pairs);
void glob_matcher_close(struct glob_matcher *m);
char *glob_matcher_slot(struct glob_matcher *m);
bool glob_matcher_full(const struct glob_matcher *m);
void glob_matcher_add(struct glob_matcher *m, unsigned int len, unsigned long long no,
		      bool binary);
int glob_matcher_next(struct glob_matcher *m, struct glob_answers *ans);
void glob_matcher_clear(struct glob_matcher *m);
unsigned long long glob_matcher_elapsed_ns(const struct glob_matcher *m);

/* glob_cli_report.c: output and tallies, over every file. */
struct glob_report {
	const struct glob_opts *opt;
	const char *file;		/* the file being read */
	bool prefix;			/* print file names */
	bool binary_said;		/* "binary file matches", for this file */
	unsigned long long file_selected;
	unsigned long long selected, lines, pairs;
	unsigned long long cut_pairs, disagreements, checked, unchecked;
	unsigned long long *per_pattern;	/* --stats */
	double native_s, fnmatch_s;
};

int glob_report_init(struct glob_report *r, const struct glob_opts *opt);
void glob_report_free(struct glob_report *r);
void glob_report_answers(struct glob_report *r, const struct glob_answers *a);
int glob_report_batch(struct glob_report *r, const struct glob_line *lines, unsigned int n);
int glob_report_file_done(struct glob_report *r);
void glob_report_summary(struct glob_report *r, unsigned long long bpf_ns,
			 unsigned long long runs);

#endif /* ARENAKIT_USER_GLOB_TOOL_H */
