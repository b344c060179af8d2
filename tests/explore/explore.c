// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The schedule explorer's scheduler (explore.h says what it does; the
 * emulated arena is explore_arena.c). Logical threads are coroutines on
 * the test's own thread, of which exactly one runs at a time: at each point
 * the scheduler decides who runs next and switches to it, so a run is a
 * pure function of its decisions, and a switch costs no system call.
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

#include "explore/explore.h"
#include "explore/explore_arena.h"
#include "explore/explore_sched.h"

static const struct explore_scenario *scenario;


void explore_object_taken(void *obj, unsigned long long room)
{
	explore_access_object_taken(obj, room);
	explore_weak_object_taken(obj, room);
}


/* ---- coroutines ---- */

/*
 * A switch saves what a function call must keep and nothing else: on
 * x86-64 the callee-saved registers, pushed on the stack left, and the
 * stack pointer. ucontext's getcontext and setcontext also save and set the
 * signal mask, a system call each (rt_sigprocmask), which made two thirds
 * of the explorer's time; no scenario changes the mask or the FPU's control
 * words, so they are not kept. Other architectures keep ucontext.
 */
#if defined(__x86_64__)
struct coroutine {
	void *sp;
};

/* Save the caller's registers on its stack, in @from, and resume @to. */
void coroutine_switch(struct coroutine *from, const struct coroutine *to);
__asm__(".text\n"
	".globl coroutine_switch\n"
	".type coroutine_switch, @function\n"
	"coroutine_switch:\n"
	"	pushq %rbp\n	pushq %rbx\n	pushq %r12\n"
	"	pushq %r13\n	pushq %r14\n	pushq %r15\n"
	"	movq %rsp, (%rdi)\n"
	"	movq (%rsi), %rsp\n"
	"	popq %r15\n	popq %r14\n	popq %r13\n"
	"	popq %r12\n	popq %rbx\n	popq %rbp\n"
	"	ret\n"
	".size coroutine_switch, . - coroutine_switch\n");

/*
 * A coroutine that starts in @fn (which never returns) on @stack: the
 * frame coroutine_switch pops (six registers, then the address it returns
 * to), with @fn entered as a call would enter it (the stack pointer 8 past
 * a 16-byte boundary).
 */
static void coroutine_init(struct coroutine *c, void *stack, size_t size, void (*fn)(void))
{
	void **top = (void **)(((unsigned long)stack + size) & ~15UL);

	top -= 8;
	memset(top, 0, 8 * sizeof(*top));
	top[6] = (void *)fn;
	c->sp = top;
}
#else
struct coroutine {
	ucontext_t context;
};

static void coroutine_switch(struct coroutine *from, const struct coroutine *to)
{
	volatile int resumed = 0;

	getcontext(&from->context);
	if (!resumed) {
		resumed = 1;
		setcontext(&to->context);
	}
}

static void coroutine_init(struct coroutine *c, void *stack, size_t size, void (*fn)(void))
{
	if (getcontext(&c->context))
		abort();
	c->context.uc_stack.ss_sp = stack;
	c->context.uc_stack.ss_size = size;
	c->context.uc_link = NULL;
	makecontext(&c->context, fn, 0);
}
#endif

/* ---- the scheduler ---- */

struct lthread {
	struct coroutine context;
	void *stack;		/* EXPLORE_STACK bytes, made once */
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
	/*
	 * 0: which thread runs next. 1: which value a weak-mode load returns
	 * (explore_weak_load): @enabled the values it may, @chosen how many
	 * stores back from the newest (0: the newest, as in SC).
	 */
	unsigned char value;
	unsigned short preemptions;	/* before this decision */
	unsigned short stale;		/* older values read before it */
	const char *op, *file;
	int line;
};

#define MAX_DECISIONS 100000

static struct lthread threads[EXPLORE_MAX_THREADS];
/* A thread's stack; its shadow is cleared at each fresh start. */
#define EXPLORE_STACK (128 << 10)

static struct coroutine scheduler_context;	/* where the run began, and ends */
static struct lthread *self;		/* the thread running; NULL: setup and check */
int explore_self_id = -1;		/* its id, for explore_access.c */
static int current, starting, bound, preemptions;
static int weak_bound, stale_reads;	/* weak mode: older values per schedule */
static struct decision stack[MAX_DECISIONS];
static size_t depth, prefix, overflowed;
static int nondeterministic;

static unsigned long setup_budget_checks;	/* setup's and check's */
static int run_failed;
static char run_report[2048];
static size_t run_report_len;

const struct explore_scenario *explore_running(void)
{
	return scenario;
}

int explore_stale_allowed(void)
{
	return stale_reads < weak_bound;
}

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
		if (d->value || d->enabled != enabled || d->current != cur ||
		    !(enabled & (1U << next))) {
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
		d->value = 0;
		d->preemptions = preemptions;
		d->stale = stale_reads;
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

static void set_self(struct lthread *t)
{
	self = t;
	explore_self_id = t ? t->id : -1;
}

const char *explore_current_op(void)
{
	return self && self->op ? self->op : "";
}

/* Switch from @from (NULL: the scheduler) to @to (NULL: the scheduler). */
static void switch_to(struct lthread *from, struct lthread *to)
{
	struct coroutine *from_context = from ? &from->context : &scheduler_context;

	set_self(to);
	coroutine_switch(from_context, to ? &to->context : &scheduler_context);
	/* Back in @from. */
	set_self(from);
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

/* Which of @count values a load returns: a decision, 0 the newest. */
int explore_decide_value(int count)
{
	struct decision *d;
	int chosen;

	if (depth >= MAX_DECISIONS) {
		overflowed = 1;
		return 0;
	}
	d = &stack[depth];
	if (depth < prefix) {
		chosen = d->chosen;
		if (!d->value || d->enabled != count || d->current != self->id) {
			nondeterministic = 1;
			chosen = 0;
		}
	} else {
		chosen = 0;
		d->chosen = 0;
		d->current = (unsigned char)self->id;
		d->enabled = (unsigned char)count;
		d->tried = 1;
		d->fixed = 0;
		d->value = 1;
		d->preemptions = preemptions;
		d->stale = stale_reads;
	}
	d->op = self->op;
	d->file = self->file;
	d->line = self->line;
	depth++;
	if (chosen)
		stale_reads++;
	return chosen;
}

/* A logical thread, from its first switch in to its exit. */
static void thread_main(void)
{
	struct lthread *me = self;
	struct coroutine left;	/* never resumed */
	int next;

	if (!sigsetjmp(me->escape, 0))
		scenario->thread(me->id);
	me->done = 1;
	next = decide("exit", NULL, 0);
	if (next >= 0)
		current = next;
	set_self(next >= 0 ? &threads[next] : NULL);
	coroutine_switch(&left, self ? &self->context : &scheduler_context);
	abort();
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
	coroutine_init(&t->context, t->stack, EXPLORE_STACK, thread_main);
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
	if (arena_base && addr >= arena_base && addr < arena_base + (size_t)ARENA_ALL_PAGES * AK_PAGE_SIZE) {
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
	explore_access_reset(scenario->reads_freed_objects);
	seed_draws = 0;
	run_failed = 0;
	run_report_len = 0;
	run_report[0] = 0;
	setup_budget_checks = 0;
	explore_weak_reset();
	scenario->setup();
	preemptions = 0;
	stale_reads = 0;
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
	explore_weak_begin();
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
		if (d->value) {
			/* Another value for a weak load, if one more is allowed. */
			for (t = 1; t < d->enabled && d->stale + 1 <= weak_bound; t++) {
				if (d->tried & (1U << t))
					continue;
				d->tried |= 1U << t;
				d->chosen = t;
				prefix = depth;
				return 1;
			}
			depth--;
			continue;
		}
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
	char where[320];
	int n;

	for (i = 0; i < depth && len < size; i++) {
		const struct decision *d = &stack[i];

		if (d->value) {
			if (!d->chosen)
				continue;
			n = snprintf(out + len, size - len,
				     "  T%d's %s at %s:%d returns the value %d store%s older\n",
				     d->current, d->op, base_name(d->file), d->line, d->chosen,
				     d->chosen > 1 ? "s" : "");
			if (n < 0)
				break;
			len += (size_t)n;
			continue;
		}
		if (d->chosen == d->current && strcmp(d->op, "start"))
			continue;
		if (!d->file && d->line)	/* a plain access: its site */
			explore_describe_site((unsigned int)d->line, where, sizeof(where));
		else
			snprintf(where, sizeof(where), "%s:%d", base_name(d->file), d->line);
		n = snprintf(out + len, size - len, "  %s T%d at %s %s\n",
			     !strcmp(d->op, "start") ? "start" :
			     !strcmp(d->op, "exit") ? "then" : d->fixed ? "spin, to" : "switch to",
			     d->chosen, d->op, where);
		if (n < 0)
			break;
		len += (size_t)n;
	}
}

int explore(const struct explore_scenario *s, int preemption_bound, int stop_at_failure,
	    struct explore_result *r)
{
	memset(r, 0, sizeof(*r));
	scenario = s;
	bound = preemption_bound;
	weak_bound = 0;
	if (s->weak) {
		const char *env = getenv("EXPLORE_WEAK");

		weak_bound = env ? atoi(env) : 2;
	}
	prefix = 0;
	depth = 0;
	overflowed = 0;
	nondeterministic = 0;
	install_fault_handler();
	threads_start();
	do {
		++r->schedules;
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
	if (s->weak)
		printf("explore: %s: weak mode, up to %d older values read\n", s->name, weak_bound);
	printf("explore: %s: %llu schedules, up to %d preemptions, %d threads, longest run %llu decisions: %s\n",
	       s->name, r.schedules, bound_wanted, s->threads, r.longest,
	       err ? "FAILED" : "every invariant held");
	if (err == -1)
		printf("explore: %s: schedule %llu failed:\n%s", s->name, r.first_failed,
		       r.first_report);
	fflush(stdout);
	cr_assert_eq(err, 0, "%s: %s", s->name, r.first_report);
}
