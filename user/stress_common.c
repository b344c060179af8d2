// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What every scenario of `arenakit stress` reports through: a row of the
 * summary per case, a verdict per invariant, a progress line.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader.h"
#include "stress_tool.h"

/*
 * Load a scenario's own program, opened with its skeleton's __open()
 * (@skeleton is NULL if that failed, errno says why): 0, or -errno, said
 * on stderr.
 */
int stress_load(const char *scenario, struct bpf_object_skeleton *skeleton)
{
	int err = skeleton ? arenakit_load_skeleton(skeleton) : -errno;

	if (err)
		fprintf(stderr, "arenakit stress: %s: cannot load its program: %s\n", scenario,
			strerror(-err));
	return err;
}

/* A progress line: rewritten in place on a terminal, one line each otherwise. */
void stress_progress(struct stress_run *s, const char *fmt, ...)
{
	va_list ap;

	fputs(s->tty ? "\r\033[K" : "", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(s->tty ? "" : "\n", stderr);
}

/* Clear a terminal's progress line before a line of results. */
void stress_progress_clear(struct stress_run *s)
{
	if (s->tty)
		fputs("\r\033[K", stderr);
}

/*
 * A new row of the summary, its clock started. The rows are a fixed array
 * sized for every scenario's cases: one more is a bug, and stops the tool.
 */
struct stress_row *stress_row(struct stress_run *s, const char *scenario, const char *what,
			      unsigned long long size)
{
	struct stress_row *r;

	if (s->nrows == (int)ARRAY_SIZE(s->rows)) {
		fprintf(stderr, "arenakit stress: %s: more than %zu rows in the summary\n",
			scenario, ARRAY_SIZE(s->rows));
		exit(1);
	}
	r = &s->rows[s->nrows++];
	memset(r, 0, sizeof(*r));
	r->scenario = scenario;
	snprintf(r->what, sizeof(r->what), "%s", what);
	r->size = size;
	r->start = monotonic_seconds();
	return r;
}

/* The row's case is over: the time it took. */
void stress_row_done(struct stress_row *r)
{
	r->seconds = monotonic_seconds() - r->start;
}

/* One invariant: held, held by reporting the cut, or broken (printed). */
void stress_verdict(struct stress_row *r, int ok, int truncated, const char *fmt, ...)
{
	va_list ap;

	r->checks++;
	if (ok) {
		r->ok++;
		return;
	}
	if (truncated) {
		r->truncated++;
		return;
	}
	r->broken++;
	fprintf(stderr, "\narenakit stress: BROKEN: %s %s (%llu): ", r->scenario, r->what,
		r->size);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
