// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A deadline queue drained in order by a tracing program: jobs pushed with
 * deadlines from a few values (so many tie), a third moved to new ones by
 * their handles, then taken one a getppid(2), must come out by deadline
 * and, among equal deadlines, in push order.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guest/guest.h"
#include <arenakit/pq.h>
#include "guest/pq_shared.h"
#include "pq.skel.h"

Test(pq, a_tracing_program_drains_deadlines_in_order, .timeout = 120)
{
	enum { JOBS = 2000, EXTRA = 5 };
	struct pq *skel = pq__open();
	unsigned int seed = 11, runs, i, ties = 0;
	const struct pq_job *out;
	int retval;

	cr_assert(skel);
	cr_assert_eq(arenakit_load_skeleton(skel->skeleton), 0);
	cr_assert_eq(ak_run(skel->progs.init_queue, NULL, 0, &retval), 0);
	cr_assert_eq(retval, 0, "init_queue: %d", retval);
	for (i = 0; i < JOBS; i++)
		skel->arena->jobs_in[i] = (struct pq_job){ .id = i, .deadline = rand_r(&seed) % 50 };
	skel->bss->njobs = JOBS;
	cr_assert_eq(ak_run_until_done(skel->progs.push_jobs, NULL, 0, 1000, &retval, &runs), 0);
	cr_assert_eq(retval, 0, "push_jobs: %d", retval);
	cr_assert_eq(ak_pq_count((struct ak_pq *)&skel->arena->queue), JOBS);
	/* A third of the jobs to new deadlines: the order checked below is by the new ones. */
	for (i = 0; i < JOBS; i += 3)
		skel->arena->jobs_in[i].deadline = rand_r(&seed) % 50;
	cr_assert_eq(ak_run_until_done(skel->progs.move_jobs, NULL, 0, 1000, &retval, &runs), 0);
	cr_assert_eq(retval, 0, "move_jobs: %d", retval);
	cr_assert_eq(ak_pq_count((struct ak_pq *)&skel->arena->queue), JOBS);
	cr_assert_eq(ak_omap_check((struct ak_omap *)&skel->arena->queue.map), 0);

	skel->bss->target_tgid = getpid();
	cr_assert_eq(pq__attach(skel), 0);
	for (i = 0; i < JOBS + EXTRA; i++)
		getppid();
	pq__detach(skel);

	cr_assert_eq(skel->bss->pop_errors, 0, "pop errors: %u, the last %d", skel->bss->pop_errors,
		     skel->bss->last_error);
	cr_assert_eq(skel->bss->nout, JOBS, "%u jobs out", skel->bss->nout);
	cr_assert_eq(skel->bss->empty_pops, EXTRA, "%u pops of an empty queue",
		     skel->bss->empty_pops);
	out = (const struct pq_job *)skel->arena->jobs_out;
	for (i = 0; i < JOBS; i++)
		cr_assert_eq(out[i].deadline, skel->arena->jobs_in[out[i].id].deadline,
			     "job %llu: deadline %llu, not its new one", out[i].id, out[i].deadline);
	for (i = 1; i < JOBS; i++) {
		cr_assert(out[i - 1].deadline < out[i].deadline ||
			  (out[i - 1].deadline == out[i].deadline && out[i - 1].id < out[i].id),
			  "job %u: (deadline %llu, id %llu) after (%llu, %llu)", i, out[i].deadline,
			  out[i].id, out[i - 1].deadline, out[i - 1].id);
		ties += out[i - 1].deadline == out[i].deadline;
	}
	printf("pq: %u jobs drained by a tracing program in deadline order, %u ties in push "
	       "order\n", JOBS, ties);
	pq__destroy(skel);
}
