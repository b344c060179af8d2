// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Batches of lines through the BPF matcher (user/glob_cli.bpf.c). Lines are
 * read straight into the arena; a batch is matched against the patterns
 * in groups of AK_GLOB_MAX_PATTERNS, the most one run takes. Patterns live
 * in the arena in a window of up to GLOB_CLI_PATTERNS; more patterns than
 * that are swapped in window by window for each batch. Unless every pair
 * is wanted (--stats, --check), a line that matched leaves the batch, so
 * each further group only matches the lines still undecided. Each group's
 * answers go back to the caller (glob_matcher_next), which hands them on:
 * the matcher prints nothing but its errors.
 */
#include <errno.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "glob_cli_tool.h"
#include <arenakit/user.h>
#include "loader.h"
#include "glob_cli.skel.h"

/* Runs of one group, each from a fresh budget, before giving up on it. */
#define GLOB_MAX_RUNS 10000

/* Copy patterns from @first into the arena, as many as fit. */
static void load_window(struct glob_matcher *m, size_t first)
{
	struct glob_cli_arena *a = m->arena;
	size_t n = 0, used = 0, len;

	while (first + n < m->npatterns && n < GLOB_CLI_PATTERNS) {
		len = strlen(m->patterns[first + n]) + 1;
		if (used + len > sizeof(a->pattern_text))
			break;
		memcpy(a->pattern_text + used, m->patterns[first + n], len);
		a->pattern[n] = a->pattern_text + used;
		used += len;
		n++;
	}
	m->window_first = first;
	m->window_len = n;
}

/**
 * glob_matcher_open - load the matcher and put the patterns in the arena
 * @m: the matcher, zeroed
 * @patterns: the patterns, each at most GLOB_CLI_PATTERN_MAX bytes
 * @npatterns: how many (any number, 0 included)
 * @all_pairs: match every line against every pattern
 *
 * Return: 0, or a negative errno (with a message on stderr).
 */
int glob_matcher_open(struct glob_matcher *m, char **patterns, size_t npatterns,
		      bool all_pairs)
{
	int err;

	m->patterns = patterns;
	m->npatterns = npatterns;
	m->all_pairs = all_pairs;
	m->skel = glob_cli__open();
	if (!m->skel) {
		err = -errno;
		glob_error("cannot open the matcher: %s", strerror(-err));
		return err;
	}
	err = arenakit_load_skeleton(m->skel->skeleton);
	if (err) {
		glob_error("cannot load the matcher: %s", strerror(-err));
		return err;
	}
	m->arena = &m->skel->arena->cli;
	load_window(m, 0);
	glob_matcher_clear(m);
	return 0;
}

void glob_matcher_close(struct glob_matcher *m)
{
	glob_cli__destroy(m->skel);	/* NULL-safe */
	m->skel = NULL;
}

/* Forget the batch's lines. */
void glob_matcher_clear(struct glob_matcher *m)
{
	m->nlines = 0;
	m->text_used = 0;
	m->nlive = 0;
	m->next_first = 0;
}

/* Is there no room left for one more line of the longest length? */
bool glob_matcher_full(const struct glob_matcher *m)
{
	return m->nlines == GLOB_CLI_LINES ||
	       m->text_used + GLOB_CLI_LINE_MAX + 1 > GLOB_CLI_TEXT;
}

/* Where the next line is read to: GLOB_CLI_LINE_MAX bytes, if not full. */
char *glob_matcher_slot(struct glob_matcher *m)
{
	return m->arena->text + m->text_used;
}

/* The line just read into the slot joins the batch, which is not being matched yet. */
void glob_matcher_add(struct glob_matcher *m, unsigned int len, unsigned long long no,
		      bool binary)
{
	struct glob_line *l = &m->line[m->nlines];
	char *text = m->arena->text + m->text_used;

	m->live[m->nlive++] = m->nlines++;
	text[len] = '\0';	/* for fnmatch(3) and for printing */
	l->text = text;
	l->no = no;
	l->len = len;
	l->binary = binary;
	l->nul = memchr(text, '\0', len) != NULL;
	l->matched = false;
	m->text_used += len + 1;
}

unsigned long long glob_matcher_elapsed_ns(const struct glob_matcher *m)
{
	return m->skel ? m->skel->bss->elapsed_ns : 0;
}

/* Match the live lines against patterns [first, first + n) of the window. */
static int run_group(struct glob_matcher *m, size_t first, unsigned int n, unsigned int nlive)
{
	struct glob_cli_arena *a = m->arena;
	unsigned int i, runs;
	int retval, err;

	for (i = 0; i < nlive; i++) {
		const struct glob_line *l = &m->line[m->live[i]];

		a->line[i] = l->text;	/* a user address is an arena pointer */
		a->line_len[i] = l->len;
	}
	m->skel->bss->line_count = nlive;
	m->skel->bss->pattern_first = first - m->window_first;
	m->skel->bss->pattern_count = n;
	m->skel->bss->next_line = 0;
	err = ak_run_until_done(m->skel->progs.glob_lines, NULL, 0, GLOB_MAX_RUNS, &retval, &runs);
	m->runs += runs;
	if (err == -AK_EBUDGET) {
		glob_error("the matcher made no progress in %d runs", GLOB_MAX_RUNS);
		return err;
	}
	if (err || retval) {
		err = err ? err : retval;
		glob_error("running the matcher: %s", strerror(-err));
		return err;
	}
	return 0;
}

/* Drop the lines that matched from the live set; returns how many are left. */
static unsigned int drop_matched(struct glob_matcher *m, unsigned int nlive)
{
	unsigned int i, kept = 0;

	for (i = 0; i < nlive; i++)
		if (!m->line[m->live[i]].matched)
			m->live[kept++] = m->live[i];
	return kept;
}

/**
 * glob_matcher_next - match the batch against the next group of patterns
 * @m: the matcher, with the batch's lines added
 * @ans: the group's answers, for the lines still undecided
 *
 * Call until it returns 0: the groups go through every pattern in order.
 * Unless @m matches all pairs, a line some pattern matched is left out of
 * the later groups. Afterwards each line's @matched says whether some
 * pattern matched it; glob_matcher_clear() starts the next batch.
 *
 * Return: 1 with @ans filled in, 0 when every group is done (or no line is
 * left undecided), or a negative errno if the matcher could not run.
 */
int glob_matcher_next(struct glob_matcher *m, struct glob_answers *ans)
{
	size_t first = m->next_first;
	unsigned int n, i;
	int err;

	if (first && !m->all_pairs)
		m->nlive = drop_matched(m, m->nlive);
	if (first >= m->npatterns || !m->nlive)
		return 0;
	if (first < m->window_first || first >= m->window_first + m->window_len)
		load_window(m, first);
	n = m->window_first + m->window_len - first;
	if (n > AK_GLOB_MAX_PATTERNS)
		n = AK_GLOB_MAX_PATTERNS;
	err = run_group(m, first, n, m->nlive);
	if (err)
		return err;
	for (i = 0; i < m->nlive; i++)
		if (m->arena->matched[i])
			m->line[m->live[i]].matched = true;
	m->next_first = first + n;
	*ans = (struct glob_answers){
		.lines = m->line,
		.index = m->live,
		.nlines = m->nlive,
		.first = first,
		.npatterns = n,
		.matched = m->arena->matched,
		.cut = m->arena->cut,
	};
	return 1;
}
