// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The list long, cycle and corrupt share, in user/stress_list.bpf.c: built to a
 * length, walked by every kind of walk (one program run each), a link
 * broken on purpose and put back.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <arenakit/user.h>
#include "loader.h"
#include "stress_tool.h"

const char *const stress_walk_names[STRESS_WALKS] = {
	[STRESS_COUNT_ONCE] = "ak_list_count (one frame)",
	[STRESS_COUNT_ALL] = "ak_list_count_all",
	[STRESS_FOR_EACH] = "ak_list_for_each_entry",
	[STRESS_FIND_ALL] = "ak_list_find_all (absent)",
	[STRESS_CHECK_ALL] = "ak_list_check_all",
};

/* Every walk of user/stress_list.bpf.c's walks, one program run each. */
int stress_run_walks(struct stress_run *s)
{
	int k, err = 0, retval;

	for (k = 0; k < STRESS_WALKS && !err; k++) {
		s->skel->bss->walk_which = k;
		err = ak_run(s->skel->progs.walks, NULL, 0, &retval) ?: retval;
	}
	return err;
}

/* Grow the list to @n items; 0, or the error (printed). */
int stress_build_to(struct stress_run *s, unsigned long long n)
{
	unsigned int runs;
	int retval, err;

	s->skel->bss->target = n;
	err = ak_run_until_done(s->skel->progs.build, NULL, 0, STRESS_MAX_RUNS, &retval, &runs);
	if (err || retval) {
		fprintf(stderr, "arenakit stress: building %llu items: %s\n", n,
			strerror(-(err ? err : retval)));
		return err ? err : retval;
	}
	return 0;
}

/* ak_list_count with a cursor, rerun until it is not cut (at most @max_runs runs). */
long long stress_count_resume(struct stress_run *s, unsigned int max_runs, unsigned int *runs)
{
	int retval;

	memset(&s->skel->bss->cursor, 0, sizeof(s->skel->bss->cursor));
	for (*runs = 1; ; (*runs)++) {
		if (ak_run(s->skel->progs.count_resume, NULL, 0, &retval) || retval)
			return -EIO;
		if (s->skel->bss->resume_result != -AK_EBUDGET || *runs >= max_runs)
			return s->skel->bss->resume_result;
	}
}

/* Every walk of the broken list must end with an error; a count is a silent lie. */
static void expect_errors(struct stress_run *s, struct stress_row *r, unsigned long long index,
			  int want_bad)
{
	long long *w = s->skel->bss->walk_result;
	unsigned int runs;
	long long got;
	int k;

	if (stress_run_walks(s)) {
		stress_verdict(r, 0, 0, "the walks program failed");
		return;
	}
	for (k = 0; k < STRESS_WALKS; k++) {
		got = w[k];
		stress_verdict(r, got < 0 && got != -AK_EBUDGET,
			       got == -AK_EBUDGET && k != STRESS_COUNT_ALL &&
			       k != STRESS_FIND_ALL && k != STRESS_CHECK_ALL,
			       "%s: %lld, want an error", stress_walk_names[k], got);
	}
	if (want_bad)
		stress_verdict(r, s->skel->bss->bad_index == index, 0,
			       "ak_list_check_all named item %llu, want %llu",
			       (unsigned long long)s->skel->bss->bad_index, index);
	got = stress_count_resume(s, 3, &runs);
	stress_verdict(r, got < 0 && got != -AK_EBUDGET, got == -AK_EBUDGET,
		       "ak_list_count with a cursor: %lld after %u runs", got, runs);
}

/* Break item @index's link as @kind says (STRESS_LINK_*), or restore it. */
static int set_link(struct stress_run *s, unsigned long long index, int kind,
		    unsigned long long target)
{
	int err, retval;

	s->skel->bss->link_index = index;
	s->skel->bss->link_kind = kind;
	s->skel->bss->link_target = target;
	err = ak_run(s->skel->progs.set_link, NULL, 0, &retval) ?: retval;
	if (err)
		fprintf(stderr, "arenakit stress: set_link: %s\n", strerror(-err));
	return err;
}

/* After a restore the list is sound again: the walks say so. */
static void expect_restored(struct stress_run *s, struct stress_row *r, unsigned long long n)
{
	if (set_link(s, s->skel->bss->link_index, STRESS_LINK_RESTORE, 0) ||
	    stress_run_walks(s)) {
		stress_verdict(r, 0, 0, "restoring the link failed");
		return;
	}
	stress_verdict(r, s->skel->bss->walk_result[STRESS_COUNT_ALL] == (long long)n &&
		       s->skel->bss->walk_result[STRESS_CHECK_ALL] == 0, 0,
		       "after the restore: count_all %lld, check_all %lld",
		       s->skel->bss->walk_result[STRESS_COUNT_ALL],
		       s->skel->bss->walk_result[STRESS_CHECK_ALL]);
}

/*
 * Break item @index's link as @kind says (to @target), check that every
 * walk ends with an error (and, with @name_culprit, that ak_list_check_all
 * names @index), restore the link and check the list is whole again; the
 * verdicts go to @r, which is then done. 0, or set_link's error.
 */
int stress_break_link(struct stress_run *s, struct stress_row *r, unsigned long long n,
		      unsigned long long index, int kind, unsigned long long target,
		      int name_culprit)
{
	int err = set_link(s, index, kind, target);

	if (err)
		return err;
	expect_errors(s, r, index, name_culprit);
	expect_restored(s, r, n);
	stress_row_done(r);
	return 0;
}

/*
 * The list as an earlier scenario left it, or built to @n items if there is
 * none; its length in *@len (may be NULL). 0, or the error (printed).
 */
int stress_list_or_build(struct stress_run *s, unsigned long long n, unsigned long long *len)
{
	int err = 0;

	if (!stress_list_size(s))
		err = stress_build_to(s, n);
	if (len)
		*len = stress_list_size(s);
	return err;
}

/* The list's length: 0 until a scenario built it. */
unsigned long long stress_list_size(struct stress_run *s)
{
	return s->skel->bss->built;
}
