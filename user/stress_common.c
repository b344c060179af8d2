// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What every scenario of `arenakit stress` reports through: a row of the
 * summary per case, a verdict per invariant, a progress line, and one
 * program run at a time.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "loader.h"
#include "stress_tool.h"

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

/* A new row of the summary, its clock started (past 64 rows, the last is reused). */
struct row *stress_row(struct stress_run *s, const char *scenario, const char *what,
		       unsigned long long size)
{
	struct row *r = &s->rows[s->nrows < 63 ? s->nrows++ : 63];

	memset(r, 0, sizeof(*r));
	r->scenario = scenario;
	snprintf(r->what, sizeof(r->what), "%s", what);
	r->size = size;
	r->seconds = monotonic_seconds();
	return r;
}

/* One invariant: held, held by reporting the cut, or broken (printed). */
void stress_verdict(struct row *r, int ok, int truncated, const char *fmt, ...)
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

/* Run @prog once: its return value, or a negative errno if it could not run. */
int stress_prog_run(const struct bpf_program *prog)
{
	int retval, err = arenakit_run(prog, &retval);

	return err ? err : retval;
}
