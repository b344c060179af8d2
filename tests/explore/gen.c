// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The generator of explorer scenarios (gen.h says what it makes), and the
 * check that every schedule's answers have a sequential explanation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <criterion/criterion.h>

#include "explore/gen.h"

static const struct gen_table *table;
static int state;
static const struct gen_op *ops[GEN_MAX_CALLS];
static int ncalls;
static struct gen_call calls[GEN_MAX_CALLS];
static unsigned int clock_now;
static unsigned char model_start[4096];

unsigned int gen_now(void)
{
	return ++clock_now;
}

static const char *refusal;

int gen_refuse(const char *why)
{
	refusal = why;
	return 0;
}

static void gen_setup(void)
{
	clock_now = 0;
	memset(calls, 0, sizeof(calls));
	table->states[state].setup();
	table->model->begin(state);
	memcpy(model_start, table->model->state, table->model->size);
}

static void gen_thread(int id)
{
	struct gen_call *c = &calls[id];

	c->op = ops[id];
	c->thread = id;
	c->begin = gen_now();
	c->op->run(c);
	c->end = gen_now();
}

static int others_change(int self)
{
	int i;

	for (i = 0; i < ncalls; i++)
		if (i != self && (calls[i].op->flags & GEN_CHANGES))
			return 1;
	return 0;
}

/*
 * An event of a call: the call itself, or for a call that spans
 * (GEN_SPANS) its beginning (phase 0) and its end (phase 1).
 */
struct event {
	int call, phase;
};

static int phases(int call)
{
	return calls[call].op->flags & GEN_SPANS ? 2 : 1;
}

/* May event @e come now, after the events in @done (a bit per call and phase)? */
static int may_come(struct event e, unsigned int done)
{
	int i;

	if (e.phase && !(done & 1U << (e.call * 2)))
		return 0;	/* a call's end after its beginning */
	for (i = 0; i < ncalls; i++)
		/* A call that ended before this one began comes whole before it. */
		if (i != e.call && calls[i].end < calls[e.call].begin &&
		    (phases(i) == 2 ? !(done & 1U << (i * 2 + 1)) : !(done & 1U << (i * 2))))
			return 0;
	return 1;
}

/*
 * Is there an order of the events still to come, from the model as it is
 * now, that explains every answer and the end state? Depth first: a model
 * copy per level.
 */
static int explained_from(unsigned int done, int left)
{
	const struct gen_model *m = table->model;
	unsigned char saved[sizeof(model_start)];
	struct event e;
	int ok;

	if (!left)
		return m->end();
	memcpy(saved, m->state, m->size);
	for (e.call = 0; e.call < ncalls; e.call++) {
		for (e.phase = 0; e.phase < phases(e.call); e.phase++) {
			if (done & 1U << (e.call * 2 + e.phase) || !may_come(e, done))
				continue;
			ok = m->step(&calls[e.call], phases(e.call) == 2 ? e.phase : -1,
				     others_change(e.call)) &&
			     explained_from(done | 1U << (e.call * 2 + e.phase), left - 1);
			if (ok)
				return 1;
			memcpy(m->state, saved, m->size);
		}
	}
	return 0;
}

static void describe_calls(char *out, size_t size)
{
	size_t len = 0;
	int i, n;

	for (i = 0; i < ncalls && len < size; i++) {
		n = snprintf(out + len, size - len, "  T%d %s: %lld, out %llu (%#llx), aux %lld, time %u-%u\n",
			     i, calls[i].op->name, calls[i].ret, calls[i].out, calls[i].out,
			     (long long)calls[i].aux, calls[i].begin, calls[i].end);
		if (n < 0)
			break;
		len += (size_t)n;
	}
}

static void gen_check(void)
{
	char text[1024];
	int i, events = 0;

	for (i = 0; i < ncalls; i++) {
		if (!calls[i].op) {
			explore_fail("T%d never ran", i);
			return;
		}
		events += phases(i);
	}
	if (table->states[state].settle)
		table->states[state].settle();
	memcpy(table->model->state, model_start, table->model->size);
	refusal = "?";
	if (!explained_from(0, events)) {
		describe_calls(text, sizeof(text));
		explore_fail("no sequential order explains the answers (the last order tried: %s):\n%s",
			     refusal, text);
	}
	table->model->check_and_destroy();
}

struct gen_totals {
	unsigned long long scenarios[3];	/* pairs, nested pairs, triples */
	unsigned long long schedules_of[3];	/* their schedules */
	unsigned long long schedules, failed;
};

static void run_one(const char *name, int n, const int *nested_on, struct gen_totals *tot,
		    int bound)
{
	const char *only = getenv("EXPLORE_ONLY");
	struct explore_scenario s = {
		.name = name,
		.threads = n,
		.nested_on = nested_on,
		.setup = gen_setup,
		.thread = gen_thread,
		.check = gen_check,
	};
	struct explore_result r;
	int i, err;

	if (only && !strstr(name, only))
		return;
	for (i = 0; i < n; i++)
		if (ops[i]->flags & GEN_READS_FREED)
			s.allow_stale_reads = s.reads_freed_objects = 1;
	ncalls = n;
	err = explore(&s, bound, 1, &r);
	tot->scenarios[nested_on ? 1 : n == 2 ? 0 : 2]++;
	tot->schedules_of[nested_on ? 1 : n == 2 ? 0 : 2] += r.schedules;
	tot->schedules += r.schedules;
	if (err) {
		if (tot->failed++ < 4) {
			printf("explore: %s: schedule %llu failed:\n%s", name, r.first_failed,
			       r.first_report);
			fflush(stdout);
		}
	}
}

/* Does op @i run in state @st? (A GEN_BESIDE call needs the structures beside.) */
static int runs_here(const struct gen_table *t, int st, int i)
{
	return !(t->ops[i].flags & GEN_BESIDE) || t->states[st].beside;
}

void gen_explore(const struct gen_table *t, int st)
{
	static const int nested[2] = { -1, 0 };	/* thread 1 nested on thread 0 */
	const char *env = getenv("EXPLORE_GEN_BOUND") ?: getenv("EXPLORE_BOUND");
	int bound = env ? atoi(env) : 2, i, j, nops_here = 0;
	/* Three threads cost as much as all the pairs: one preemption fewer. */
	int triple_bound = bound > 1 ? bound - 1 : bound;
	struct gen_totals tot = {};
	struct timespec t0, t1;
	char name[256];

	cr_assert(t->model->size <= sizeof(model_start), "model too large");
	table = t;
	state = st;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < t->nops; i++) {
		if (!runs_here(t, st, i))
			continue;
		nops_here++;
		for (j = i; j < t->nops; j++) {
			if (!runs_here(t, st, j))
				continue;
			ops[0] = &t->ops[i];
			ops[1] = &t->ops[j];
			snprintf(name, sizeof(name), "%s/%s: %s | %s", t->name,
				 t->states[st].name, ops[0]->name, ops[1]->name);
			run_one(name, 2, NULL, &tot, bound);
		}
		for (j = 0; j < t->nops; j++) {
			if (!runs_here(t, st, j))
				continue;
			ops[0] = &t->ops[i];
			ops[1] = &t->ops[j];
			snprintf(name, sizeof(name), "%s/%s: %s, nested: %s", t->name,
				 t->states[st].name, ops[0]->name, ops[1]->name);
			run_one(name, 2, nested, &tot, bound);
		}
	}
	for (i = 0; t->triples && t->triples[i][0] >= 0; i++) {
		if (!runs_here(t, st, t->triples[i][0]) || !runs_here(t, st, t->triples[i][1]) ||
		    !runs_here(t, st, t->triples[i][2]))
			continue;
		for (j = 0; j < 3; j++)
			ops[j] = &t->ops[t->triples[i][j]];
		snprintf(name, sizeof(name), "%s/%s: %s | %s | %s", t->name, t->states[st].name,
			 ops[0]->name, ops[1]->name, ops[2]->name);
		run_one(name, 3, NULL, &tot, triple_bound);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("explore: generated %s/%s: %d operations; %llu pairs, %llu nested pairs (up to %d preemptions), %llu triples (up to %d); %llu, %llu and %llu schedules, %llu in all, in %.1f s: %s\n",
	       t->name, t->states[st].name, nops_here, tot.scenarios[0], tot.scenarios[1], bound,
	       tot.scenarios[2], triple_bound, tot.schedules_of[0], tot.schedules_of[1],
	       tot.schedules_of[2], tot.schedules,
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
	       tot.failed ? "FAILED" : "every answer explained");
	fflush(stdout);
	cr_assert_eq(tot.failed, 0, "%s/%s: %llu generated scenarios failed (above)", t->name,
		     t->states[st].name, tot.failed);
}
