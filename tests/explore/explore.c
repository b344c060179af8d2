// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The schedule explorer's scheduler (explore.h says what it does; the
 * emulated arena is explore_arena.c). Logical threads are coroutines
 * (ucontext) on the test's own thread, of which exactly one runs at a time:
 * at each point the scheduler decides who runs next and switches to it, so
 * a run is a pure function of its decisions, and a switch costs no system
 * call but the signal mask's.
 * The decisions of a run are kept on a stack; the next schedule replays a
 * prefix of it and takes another choice at its last open decision, depth
 * first, until every choice within the preemption bound was taken.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <criterion/criterion.h>
#include <sanitizer/asan_interface.h>

#include "explore/explore.h"
#include "explore/explore_arena.h"

static const struct explore_scenario *scenario;

void explore_object_freed(void *obj, unsigned long long room)
{
	if (room > 8 && !scenario->reads_freed_objects)
		ASAN_POISON_MEMORY_REGION((char *)obj + 8, room - 8);
}

void explore_object_taken(void *obj, unsigned long long room)
{
	ASAN_UNPOISON_MEMORY_REGION(obj, room);
}


/* ---- the scheduler ---- */

struct lthread {
	ucontext_t context;
	void *stack;		/* EXPLORE_STACK bytes, made once */
	void *asan_fake_stack;	/* AddressSanitizer's, while switched away */
	int id;
	int done;
	int started;		/* has run: a thread nested on it holds it off */
	int spinning;		/* its last attempt at a lock failed */
	sigjmp_buf escape;	/* where a wild access ends the thread */
	const char *op, *file;	/* its last point */
	int line;
	unsigned long budget_checks;	/* this run's, for explore_cut */
};

struct decision {
	unsigned char chosen, current, enabled, tried;
	unsigned char fixed;		/* a spinner's switch: no other choice */
	unsigned short preemptions;	/* before this decision */
	const char *op, *file;
	int line;
};

#define MAX_DECISIONS 100000

static struct lthread threads[EXPLORE_MAX_THREADS];
/* A thread's stack; its shadow is cleared at each fresh start. */
#define EXPLORE_STACK (128 << 10)

static ucontext_t scheduler_context;	/* where the run began, and ends */
static struct lthread *self;		/* the thread running; NULL: setup and check */
static int current, starting, bound, preemptions;
static struct decision stack[MAX_DECISIONS];
static size_t depth, prefix, overflowed;
static int nondeterministic;

static unsigned long setup_budget_checks;	/* setup's and check's */
static int run_failed;
static char run_report[2048];
static size_t run_report_len;
static unsigned long long schedule_no;

void explore_fail(const char *fmt, ...)
{
	va_list ap;
	int n;

	run_failed = 1;
	if (run_report_len >= sizeof(run_report) - 2)
		return;
	va_start(ap, fmt);
	n = vsnprintf(run_report + run_report_len, sizeof(run_report) - run_report_len - 1,
		      fmt, ap);
	va_end(ap);
	if (n > 0)
		run_report_len += (size_t)n;
	if (run_report_len > sizeof(run_report) - 2)
		run_report_len = sizeof(run_report) - 2;
	run_report[run_report_len++] = '\n';
	run_report[run_report_len] = 0;
}

int explore_cut(void)
{
	unsigned long *checks = self ? &self->budget_checks : &setup_budget_checks;

	if (++*checks <= EXPLORE_LOOP_BUDGET)
		return 0;
	if (*checks == EXPLORE_LOOP_BUDGET + 1)
		explore_fail("T%d ran out of its loop budget (%d checks): a loop that never ends",
			     self ? self->id : -1, EXPLORE_LOOP_BUDGET);
	return 1;
}

int explore_cpu(void)
{
	if (!self)
		return 0;	/* setup and check */
	return scenario->cpus ? scenario->cpus[self->id] : self->id;
}

static unsigned int enabled_mask(void)
{
	unsigned int mask = 0;
	int i;

	for (i = 0; i < scenario->threads; i++)
		if (!threads[i].done)
			mask |= 1U << i;
	/* The CPU of an interrupted thread runs the nested one until it ends. */
	for (i = 0; scenario->nested_on && i < scenario->threads; i++)
		if (scenario->nested_on[i] >= 0 && threads[i].started && !threads[i].done)
			mask &= ~(1U << scenario->nested_on[i]);
	return mask;
}

/* The first enabled thread after @from, round the ring; @from itself last. */
static int next_after(unsigned int enabled, int from)
{
	int i, t;

	for (i = 1; i <= scenario->threads; i++) {
		t = (from + i) % scenario->threads;
		if (enabled & (1U << t))
			return t;
	}
	return -1;
}

/* Who runs after a point of the current thread (or its exit, or the start). */
static int decide(const char *op, const char *file, int line)
{
	unsigned int enabled = enabled_mask();
	int cur = current, runnable, spin, next;
	struct decision *d;

	if (!enabled)
		return -1;
	runnable = !starting && (enabled & (1U << cur));
	spin = runnable && threads[cur].spinning;
	threads[cur].spinning = 0;
	if (depth >= MAX_DECISIONS) {
		overflowed = 1;
		return runnable ? cur : next_after(enabled, cur);
	}
	d = &stack[depth];
	if (depth < prefix) {
		next = d->chosen;
		if (d->enabled != enabled || d->current != cur || !(enabled & (1U << next))) {
			nondeterministic = 1;
			next = runnable ? cur : next_after(enabled, cur);
		}
	} else {
		next = runnable && !spin ? cur : next_after(enabled, starting ? -1 : cur);
		d->chosen = next;
		d->current = cur;
		d->enabled = enabled;
		d->tried = 1U << next;
		d->fixed = spin;
		d->preemptions = preemptions;
	}
	d->op = op;
	d->file = file;
	d->line = line;
	if (next != cur && runnable && !spin)
		preemptions++;
	threads[next].started = 1;
	depth++;
	return next;
}

static const char *base_name(const char *file);

/*
 * Switch from @from (NULL: the scheduler) to @to (NULL: the scheduler),
 * telling AddressSanitizer which stack is in use from now on.
 */
static void switch_to(struct lthread *from, struct lthread *to)
{
	ucontext_t *from_context = from ? &from->context : &scheduler_context;
	void *fake_stack = NULL;

	volatile int resumed = 0;

	self = to;
	__sanitizer_start_switch_fiber(from ? &from->asan_fake_stack : &fake_stack,
				       to ? to->stack : NULL, to ? EXPLORE_STACK : 0);
	/*
	 * getcontext, then setcontext, not swapcontext: AddressSanitizer's
	 * swapcontext re-maps the shadow of the stack it switches to, a TLB
	 * flush a switch (thread_reset clears a fresh stack's shadow instead).
	 */
	getcontext(from_context);
	if (!resumed) {
		resumed = 1;
		setcontext(to ? &to->context : &scheduler_context);
	}
	/* Back in @from. */
	__sanitizer_finish_switch_fiber(from ? from->asan_fake_stack : fake_stack, NULL, NULL);
	self = from;
}

static void hand_over(struct lthread *me, int next)
{
	current = next;
	switch_to(me, &threads[next]);
}

void explore_point(const char *op, const char *file, int line)
{
	struct lthread *me = self;
	int next;

	if (!me)
		return;		/* setup and checks run alone */
	me->op = op;
	me->file = file;
	me->line = line;
	if (depth >= MAX_DECISIONS) {
		/* A thread that never ends (a spin on a word no one clears). */
		explore_fail("T%d still running after %d decisions, at its %s at %s:%d", me->id,
			     MAX_DECISIONS, op, base_name(file), line);
		siglongjmp(me->escape, 1);
	}
	next = decide(op, file, line);
	if (next != me->id)
		hand_over(me, next);
}

void explore_spin(void)
{
	if (self)
		self->spinning = 1;
}

/* A logical thread, from its first switch in to its exit. */
static void thread_main(void)
{
	struct lthread *me = self;
	int next;

	__sanitizer_finish_switch_fiber(NULL, NULL, NULL);
	if (!sigsetjmp(me->escape, 0))
		scenario->thread(me->id);
	me->done = 1;
	next = decide("exit", NULL, 0);
	if (next >= 0)
		current = next;
	self = next >= 0 ? &threads[next] : NULL;
	/* This stack is left for good: no fake stack to keep. */
	__sanitizer_start_switch_fiber(NULL, self ? self->stack : NULL, self ? EXPLORE_STACK : 0);
	setcontext(self ? &self->context : &scheduler_context);
}

static void threads_start(void)
{
	int i;

	for (i = 0; i < scenario->threads; i++) {
		threads[i].id = i;
		if (!threads[i].stack) {
			threads[i].stack = mmap(NULL, EXPLORE_STACK, PROT_READ | PROT_WRITE,
						MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (threads[i].stack == MAP_FAILED)
				abort();
		}
	}
}

/* A fresh start for @t: its stack from the top, thread_main first. */
static void thread_reset(struct lthread *t)
{
	/* No frame of its last run is left: nothing on it is poisoned. */
	ASAN_UNPOISON_MEMORY_REGION(t->stack, EXPLORE_STACK);
	if (getcontext(&t->context))
		abort();
	t->context.uc_stack.ss_sp = t->stack;
	t->context.uc_stack.ss_size = EXPLORE_STACK;
	t->context.uc_link = NULL;
	makecontext(&t->context, thread_main, 0);
}

static void threads_stop(void)
{
}

static const char *base_name(const char *file)
{
	const char *slash = file ? strrchr(file, '/') : NULL;

	return slash ? slash + 1 : file ? file : "?";
}

/* A fault in the arena: a freed or never-given page; elsewhere: wild. */
static void on_fault(int sig, siginfo_t *info, void *context)
{
	ucontext_t *uc = context;
	char *addr = info->si_addr;
	int write = (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0;
	struct lthread *me = self;
	size_t page;

	(void)sig;
	if (arena_base && addr >= arena_base && addr < arena_base + (size_t)ARENA_PAGES * AK_PAGE_SIZE) {
		page = (size_t)(addr - arena_base) / AK_PAGE_SIZE;
		if (write || !scenario->allow_stale_reads)
			explore_fail("T%d %s a %s arena page (%p) after its %s at %s:%d",
				     me ? me->id : -1, write ? "wrote to" : "read",
				     page_state[page] == PAGE_FREED ? "freed" : "never given",
				     (void *)addr, me ? me->op : "?",
				     base_name(me ? me->file : NULL), me ? me->line : 0);
		/* The page's bytes were dropped: it reads as a fresh zero page. */
		mprotect(arena_base + page * AK_PAGE_SIZE, AK_PAGE_SIZE,
			 write ? PROT_READ | PROT_WRITE : PROT_READ);
		page_rw[page] = write;	/* read-only: mapped again when given */
		return;
	}
	if (me) {
		explore_fail("T%d followed a wild pointer (%p) after its %s at %s:%d", me->id,
			     (void *)addr, me->op, base_name(me->file), me->line);
		siglongjmp(me->escape, 1);
	}
	signal(SIGSEGV, SIG_DFL);	/* not ours: crash as usual */
}

static void install_fault_handler(void)
{
	struct sigaction sa = { .sa_sigaction = on_fault, .sa_flags = SA_SIGINFO | SA_NODEFER };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
}

static unsigned long long seed_draws;

unsigned long long explore_seed(void)
{
	return seed_draws++ * 0x5bd1e9955bd1e995ULL;
}

static void run_once(void)
{
	int i, next;

	arena_reset();
	seed_draws = 0;
	run_failed = 0;
	run_report_len = 0;
	run_report[0] = 0;
	setup_budget_checks = 0;
	scenario->setup();
	preemptions = 0;
	depth = 0;
	for (i = 0; i < scenario->threads; i++) {
		thread_reset(&threads[i]);
		threads[i].done = 0;
		threads[i].started = 0;
		threads[i].budget_checks = 0;
		threads[i].spinning = 0;
		threads[i].op = "start";
		threads[i].file = NULL;
		threads[i].line = 0;
	}
	starting = 1;
	current = 0;
	next = decide("start", NULL, 0);
	starting = 0;
	current = next;
	switch_to(NULL, &threads[next]);
	setup_budget_checks = 0;
	checking = 1;
	scenario->check();
	checking = 0;
}

/* The next schedule: another choice at the deepest open decision. */
static int backtrack(void)
{
	struct decision *d;
	int t, runnable, cost;

	while (depth > 0) {
		d = &stack[depth - 1];
		runnable = d->op && strcmp(d->op, "start") && (d->enabled & (1U << d->current));
		for (t = 0; !d->fixed && t < scenario->threads; t++) {
			if (!(d->enabled & (1U << t)) || (d->tried & (1U << t)))
				continue;
			cost = t != d->current && runnable;
			if (d->preemptions + cost > bound)
				continue;
			d->tried |= 1U << t;
			d->chosen = t;
			prefix = depth;
			return 1;
		}
		depth--;
	}
	return 0;
}

/* The switches of the run just made, for the report. */
static void describe_schedule(char *out, size_t size)
{
	size_t i, len = 0;
	int n;

	for (i = 0; i < depth && len < size; i++) {
		const struct decision *d = &stack[i];

		if (d->chosen == d->current && strcmp(d->op, "start"))
			continue;
		n = snprintf(out + len, size - len, "  %s T%d at %s %s:%d\n",
			     !strcmp(d->op, "start") ? "start" :
			     !strcmp(d->op, "exit") ? "then" : d->fixed ? "spin, to" : "switch to",
			     d->chosen, d->op, base_name(d->file), d->line);
		if (n < 0)
			break;
		len += (size_t)n;
	}
}

/* AddressSanitizer is about to stop the process: say which schedule did it. */
static void on_asan_report(const char *report)
{
	static char trace[3072];

	(void)report;
	describe_schedule(trace, sizeof(trace));
	fprintf(stderr, "explore: %s: schedule %llu stopped by AddressSanitizer (below) after:\n%s",
		scenario ? scenario->name : "?", schedule_no, trace);
}

int explore(const struct explore_scenario *s, int preemption_bound, int stop_at_failure,
	    struct explore_result *r)
{
	memset(r, 0, sizeof(*r));
	scenario = s;
	bound = preemption_bound;
	prefix = 0;
	depth = 0;
	overflowed = 0;
	nondeterministic = 0;
	install_fault_handler();
	__asan_set_error_report_callback(on_asan_report);
	threads_start();
	do {
		schedule_no = ++r->schedules;
		run_once();
		if (depth > r->longest)
			r->longest = depth;
		if (overflowed)
			explore_fail("a run took more than %d decisions", MAX_DECISIONS);
		if (nondeterministic) {
			snprintf(r->first_report, sizeof(r->first_report),
				 "schedule %llu did not replay its prefix: the scenario is not deterministic",
				 r->schedules);
			threads_stop();
			return -2;
		}
		if (run_failed && !r->failed++) {
			char trace[3072] = "";

			r->first_failed = r->schedules;
			describe_schedule(trace, sizeof(trace));
			snprintf(r->first_report, sizeof(r->first_report), "%s(schedule %llu:)\n%s",
				 run_report, r->schedules, trace);
			if (stop_at_failure)
				break;
		}
	} while (backtrack());
	threads_stop();
	return r->failed ? -1 : 0;
}

void explore_test(const struct explore_scenario *s)
{
	const char *env = getenv("EXPLORE_BOUND");
	int bound_wanted = env ? atoi(env) : 2, err;
	struct explore_result r;

	err = explore(s, bound_wanted, 1, &r);
	printf("explore: %s: %llu schedules, up to %d preemptions, %d threads, longest run %llu decisions: %s\n",
	       s->name, r.schedules, bound_wanted, s->threads, r.longest,
	       err ? "FAILED" : "every invariant held");
	if (err == -1)
		printf("explore: %s: schedule %llu failed:\n%s", s->name, r.first_failed,
		       r.first_report);
	fflush(stdout);
	cr_assert_eq(err, 0, "%s: %s", s->name, r.first_report);
}
