// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * pq.h built for user space, against a model: elements come out by
 * priority and, among equal priorities, in the order they were pushed;
 * deletes and re-prioritisations by handle take the element they name.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>

/* One thread: nothing races, so a find's read section follows links as they are, as in BPF. */
#define AK_ARENA_CLAMP(p) (p)
#include "host/alloc_pages.h"
#include <arenakit/pq.h>

struct job {
	unsigned long long id;
	unsigned int cpu;
};

enum { MAX = 4096 };

static struct ak_pq q;
/* The model: handles (priority, push number) in no order, with their jobs. */
static struct ak_pq_handle handles[MAX];
static struct job jobs[MAX];
static int n;

static void teardown(void)
{
	expect_pages_accounted();
}

TestSuite(pq_host, .fini = teardown);

/* The model's next out: the smallest (priority, push number). */
static int model_next(void)
{
	int i, best = -1;

	for (i = 0; i < n; i++)
		if (best < 0 || handles[i].prio < handles[best].prio ||
		    (handles[i].prio == handles[best].prio && handles[i].seq < handles[best].seq))
			best = i;
	return best;
}

static void model_drop(int i)
{
	handles[i] = handles[n - 1];
	jobs[i] = jobs[n - 1];
	n--;
}

Test(pq_host, elements_leave_by_priority_then_in_push_order)
{
	unsigned long long ops = 0, pops = 0, set_prios = 0, next_id = 0;
	unsigned int seed = 3, i, what;
	struct ak_pq_handle h;
	struct job job, got, *peek;
	int err, at;

	cr_assert_eq(ak_pq_init(&q, sizeof(struct job)), 0);
	for (i = 0; i < 100000; i++, ops++) {
		what = rand_r(&seed) % 8;
		if (what < 3 && n < MAX) {
			job = (struct job){ .id = next_id++, .cpu = rand_r(&seed) % 4 };
			cr_assert_eq(ak_pq_push(&q, rand_r(&seed) % 8, &job, &h), 0);
			handles[n] = h;
			jobs[n++] = job;
		} else if (what < 5) {
			at = model_next();
			peek = ak_pq_peek(&q, &h, &err);
			err = ak_pq_pop(&q, &h, &got);
			if (at < 0) {
				cr_assert_null(peek);
				cr_assert_eq(err, -ENOENT);
				continue;
			}
			cr_assert_eq(err, 0);
			cr_assert(h.prio == handles[at].prio && h.seq == handles[at].seq,
				  "pop: (%llu, %llu), the model's (%llu, %llu)", h.prio, h.seq,
				  handles[at].prio, handles[at].seq);
			cr_assert_eq(got.id, jobs[at].id);
			pops++;
			model_drop(at);
		} else if (what < 7 && n) {
			at = rand_r(&seed) % n;
			cr_assert_eq(ak_pq_delete(&q, &handles[at], &got), 0);
			cr_assert_eq(got.id, jobs[at].id);
			cr_assert_eq(ak_pq_delete(&q, &handles[at], &got), -ENOENT, "gone already");
			model_drop(at);
		} else if (n) {
			/* The value stays where it was; the old handle finds nothing, unless unchanged. */
			at = rand_r(&seed) % n;
			h = handles[at];
			peek = ak_omap_lookup(&q.map, &h, NULL);
			cr_assert_not_null(peek);
			cr_assert_eq(ak_pq_set_prio(&q, &handles[at], rand_r(&seed) % 8), 0);
			cr_assert_eq(ak_omap_lookup(&q.map, &handles[at], NULL), peek);
			cr_assert_eq(peek->id, jobs[at].id);
			if (h.prio != handles[at].prio)
				cr_assert_null(ak_omap_lookup(&q.map, &h, &err));
			cr_assert_eq(handles[at].seq, h.seq);
			set_prios++;
		}
		if (i % 1024 == 0)
			cr_assert_eq(ak_omap_check(&q.map), 0);
		cr_assert_eq(ak_pq_count(&q), (unsigned long long)n);
	}
	while (n) {
		at = model_next();
		cr_assert_eq(ak_pq_pop(&q, &h, &got), 0);
		cr_assert_eq(got.id, jobs[at].id, "draining: job %llu, the model's %llu", got.id,
			     jobs[at].id);
		model_drop(at);
	}
	cr_assert_eq(ak_pq_pop(&q, NULL, &got), -ENOENT);
	cr_assert_eq(ak_pq_destroy(&q), 0);
	printf("pq_host: %llu calls (%llu pops, %llu priorities changed) in the model's order\n", ops,
	       pops, set_prios);
}

/*
 * set_prio's contract for a shared handle: a copy taken before another
 * move names nothing after it (-ENOENT, nothing changed), and the element
 * is still queued, at the priority the first move gave it.
 */
Test(pq_host, a_handle_copied_before_a_move_names_nothing_after_it)
{
	struct ak_pq_handle h, stale;
	struct job job = { 7, 0 }, got;

	cr_assert_eq(ak_pq_init(&q, sizeof(struct job)), 0);
	cr_assert_eq(ak_pq_push(&q, 5, &job, &h), 0);
	stale = h;
	cr_assert_eq(ak_pq_set_prio(&q, &h, 3), 0);
	cr_expect_eq(ak_pq_set_prio(&q, &stale, 1), -ENOENT, "a move through a stale copy");
	cr_expect_eq(ak_pq_count(&q), 1ULL, "the element left");
	cr_assert_eq(ak_pq_pop(&q, &stale, &got), 0);
	cr_expect_eq(got.id, 7ULL);
	cr_expect_eq(stale.prio, 3ULL, "popped at %llu: the first move's 3", stale.prio);
	cr_assert_eq(ak_pq_destroy(&q), 0);
}
