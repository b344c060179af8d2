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

static const struct explore_scenario *scenario;

static void weak_object_taken(void *obj, unsigned long long room);

void explore_object_taken(void *obj, unsigned long long room)
{
	explore_access_object_taken(obj, room);
	weak_object_taken(obj, room);
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

/* ---- the weak mode: loads that may return older values ---- */

/*
 * A promising-lite model of arm64 (tests/explore/README.md): every store
 * the layer makes (atomic.h's hooks) is appended to its location's history
 * with the next timestamp, as memory is one list of stores in the order the
 * schedule makes them; plain stores outside the layer are not seen, so a
 * location's history is dropped whenever memory holds what its newest store
 * did not write, and begins again at the next store. Each thread has views,
 * timestamps: per location the newest store it read or wrote there
 * (coherence: never an older one after it), @barrier, the store every load
 * must be at least as new as the newest of its location up to (raised to
 * @seen by a fully ordered atomic), @seen, the newest store it has read or
 * written anywhere, and @dep, the newest a token (ak_dep) carries. A load
 * may return any store of its location's history from the newest one up to
 * its views, back to the oldest kept; each choice other than the newest is
 * a decision, at most weak_bound of them a schedule. A load of a location
 * with no history read what is in memory, and is taken to have seen
 * everything stored before it (stronger than arm64: it may hide a defect,
 * never invent one).
 */
#define WEAK_SLOTS 4096		/* locations stored to in one run, at most */
#define WEAK_HISTORY 4		/* stores kept per location */
#define WEAK_LOADS 64		/* the loads a token's value is looked for in */

struct weak_store {
	unsigned long long value;
	unsigned long long stamp;
};

struct weak_location {
	unsigned long long run;		/* valid in this run only */
	unsigned long long addr;
	unsigned int size, n;		/* n stores kept, oldest first */
	struct weak_store store[WEAK_HISTORY];
	unsigned long long coherence[EXPLORE_MAX_THREADS];
};

/*
 * The objects the allocator handed out in this run (and setup): where each
 * begins, and its room; the newest first where they overlap.
 */
#define WEAK_OBJECTS 1024
static struct weak_object {
	unsigned long long start, end;
} weak_objects[WEAK_OBJECTS];
static unsigned int weak_nobjects;

struct weak_thread {
	unsigned long long barrier, seen, dep;
	/* Its last loads: the value, the object it points into (0: none), the view. */
	unsigned long long load_value[WEAK_LOADS], load_view[WEAK_LOADS];
	struct weak_object load_object[WEAK_LOADS];
	unsigned int loads;
};


static struct weak_location weak_locations[WEAK_SLOTS];

/*
 * What memory held when the threads began (the arena's live pages, and the
 * scenario's shared variables): a value still equal to it was stored
 * before every thread's first step, so every thread may read it however
 * little it has seen (stamp 0). Any other value the layer did not store is
 * taken as stored just now.
 */
static char *weak_snapshot;		/* the arena's size, mapped once */
static unsigned char weak_snapshot_page[ARENA_PAGES];
static char *weak_shared_snapshot;
static struct weak_thread weak_threads[EXPLORE_MAX_THREADS];
/* Locations of another run than weak_run are free (0: none was yet). */
static unsigned long long weak_run = 1, weak_clock;

static void weak_reset(void)
{
	weak_nobjects = 0;
	weak_run++;
	weak_clock = 1;
	memset(weak_threads, 0, sizeof(weak_threads));
}

/* At the threads' start: what memory holds now is where every thread begins. */
static void weak_begin(void)
{
	unsigned int i;

	if (!scenario->weak)
		return;
	if (!weak_snapshot) {
		weak_snapshot = mmap(NULL, (size_t)ARENA_PAGES * AK_PAGE_SIZE, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (weak_snapshot == MAP_FAILED)
			abort();
	}
	for (i = 0; i < ARENA_PAGES; i++) {
		weak_snapshot_page[i] = page_state[i] == PAGE_LIVE && page_rw[i];
		if (weak_snapshot_page[i])
			memcpy(weak_snapshot + (size_t)i * AK_PAGE_SIZE,
			       arena_base + (size_t)i * AK_PAGE_SIZE, AK_PAGE_SIZE);
	}
	if (scenario->shared) {
		free(weak_shared_snapshot);
		weak_shared_snapshot = malloc(scenario->shared_size);
		if (!weak_shared_snapshot)
			abort();
		memcpy(weak_shared_snapshot, scenario->shared, scenario->shared_size);
	}
}

static unsigned long long weak_value(const volatile void *p, unsigned int size);

/* The stamp of @v, a value at @p no store of the layer is known to have made. */
static unsigned long long weak_unknown_stamp(const volatile void *p, unsigned int size,
					     unsigned long long v)
{
	const char *a = (const char *)p;
	size_t off;

	if (arena_base && a >= arena_base && a + size <= arena_base + (size_t)ARENA_PAGES * AK_PAGE_SIZE) {
		off = (size_t)(a - arena_base);
		if (weak_snapshot_page[off / AK_PAGE_SIZE] &&
		    weak_value(weak_snapshot + off, size) == v)
			return 0;
	} else if (scenario->shared && a >= (const char *)scenario->shared &&
		   a + size <= (const char *)scenario->shared + scenario->shared_size) {
		off = (size_t)(a - (const char *)scenario->shared);
		if (weak_value(weak_shared_snapshot + off, size) == v)
			return 0;
	}
	return weak_clock;
}

static int weak_active(void)
{
	return self && scenario->weak;
}

static struct weak_location *weak_find(unsigned long long addr, int add)
{
	unsigned int i = (unsigned int)((addr >> 3) * 0x9e3779b97f4a7c15ULL >> 52) % WEAK_SLOTS, k;
	struct weak_location *l;

	for (k = 0; k < WEAK_SLOTS; k++, i = (i + 1) % WEAK_SLOTS) {
		l = &weak_locations[i];
		if (l->run != weak_run) {
			if (!add)
				return NULL;
			memset(l, 0, sizeof(*l));
			l->run = weak_run;
			l->addr = addr;
			return l;
		}
		if (l->addr == addr)
			return l;
	}
	explore_fail("weak mode: more than %d locations stored to", WEAK_SLOTS);
	return NULL;
}

static unsigned long long weak_value(const volatile void *p, unsigned int size)
{
	switch (size) {
	case 1: return *(const volatile unsigned char *)p;
	case 2: return *(const volatile unsigned short *)p;
	case 4: return *(const volatile unsigned int *)p;
	default: return *(const volatile unsigned long long *)p;
	}
}

static unsigned long long max_stamp(unsigned long long a, unsigned long long b)
{
	return a > b ? a : b;
}

static void weak_push(struct weak_location *l, unsigned long long value, unsigned long long stamp)
{
	if (l->n == WEAK_HISTORY) {
		memmove(l->store, l->store + 1, sizeof(l->store[0]) * (WEAK_HISTORY - 1));
		l->n--;
	}
	l->store[l->n].value = value;
	l->store[l->n].stamp = stamp;
	l->n++;
}

/* A history that still ends with what memory holds, or NULL (and dropped). */
static struct weak_location *weak_history(unsigned long long addr, unsigned int size,
					  unsigned long long now)
{
	struct weak_location *l = weak_find(addr, 0);

	if (!l || !l->n)
		return NULL;
	if (l->size != size || l->store[l->n - 1].value != now) {
		l->n = 0;	/* a store outside the layer: what came before is unknown */
		return NULL;
	}
	return l;
}

/* The object @v points into (a link's flag bits aside), or NULL. */
static const struct weak_object *weak_object_of(unsigned long long v)
{
	unsigned int i;

	v &= ~7ULL;
	for (i = weak_nobjects; v && i-- > 0;)
		if (v >= weak_objects[i].start && v < weak_objects[i].end)
			return &weak_objects[i];
	return NULL;
}

static void weak_remember_load(struct weak_thread *w, unsigned long long value,
			       unsigned long long view)
{
	const struct weak_object *o = weak_object_of(value);

	w->load_value[w->loads % WEAK_LOADS] = value;
	w->load_object[w->loads % WEAK_LOADS] = o ? *o : (struct weak_object){ 0, 0 };
	w->load_view[w->loads % WEAK_LOADS] = view;
	w->loads++;
	w->seen = max_stamp(w->seen, view);
}

/*
 * An address dependency: a load at @addr, inside the object an earlier
 * load's value pointed at, is ordered after that load (the newest such).
 */
static unsigned long long weak_address_dep(const struct weak_thread *w, unsigned long long addr)
{
	const struct weak_object *o;
	unsigned int i, k;

	for (k = 0; k < WEAK_LOADS && k < w->loads; k++) {
		i = (w->loads - 1 - k) % WEAK_LOADS;
		o = &w->load_object[i];
		if (addr >= o->start && addr < o->end)
			return w->load_view[i];
	}
	return 0;
}

/* Which of @count values a load returns: a decision, 0 the newest. */
static int decide_value(int count)
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

unsigned long long explore_weak_load(const volatile void *p, unsigned int size,
				     unsigned long long v, int dep)
{
	struct weak_thread *w;
	struct weak_location *l;
	unsigned long long pre, view;
	unsigned int lo, i;
	int t, back = 0;

	if (!weak_active())
		return v;
	t = self->id;
	w = &weak_threads[t];
	/* What orders it: fully ordered atomics, a token, an address dependency. */
	pre = max_stamp(max_stamp(w->barrier, dep ? w->dep : 0),
			weak_address_dep(w, (unsigned long long)p));
	l = weak_history((unsigned long long)p, size, v);
	if (!l) {
		weak_remember_load(w, v, max_stamp(pre, weak_unknown_stamp(p, size, v)));
		return v;
	}
	/* The oldest it may read: the newest up to its views, and its own last. */
	for (lo = 0, i = 0; i < l->n; i++)
		if (l->store[i].stamp <= pre || l->store[i].stamp <= l->coherence[t])
			lo = i;
	if (l->n - lo > 1 && stale_reads < weak_bound)
		back = decide_value((int)(l->n - lo));
	i = l->n - 1 - (unsigned int)back;
	l->coherence[t] = l->store[i].stamp;
	view = max_stamp(pre, l->store[i].stamp);
	weak_remember_load(w, l->store[i].value, view);
	return l->store[i].value;
}

void explore_weak_store(const volatile void *p, unsigned int size, unsigned long long old,
			int ordered)
{
	struct weak_thread *w;
	struct weak_location *l;
	unsigned long long now;
	int t;

	if (!weak_active())
		return;
	t = self->id;
	w = &weak_threads[t];
	now = weak_value(p, size);
	l = weak_find((unsigned long long)p, 1);
	if (!l)
		return;
	if (!l->n || l->size != size || l->store[l->n - 1].value != old) {
		/* What memory held, stored outside the layer: now, for all we know. */
		memset(l->coherence, 0, sizeof(l->coherence));
		l->n = 0;
		l->size = size;
		weak_push(l, old, weak_unknown_stamp(p, size, old) ?: ++weak_clock);
	}
	if (ordered >= 0)	/* < 0: a compare-and-swap that failed reads only */
		weak_push(l, now, ++weak_clock);
	l->coherence[t] = l->store[l->n - 1].stamp;
	w->seen = max_stamp(w->seen, l->coherence[t]);
	if (ordered > 0)	/* fully ordered: every later load sees all it saw */
		w->barrier = max_stamp(w->barrier, w->seen);
}

unsigned long long explore_weak_dep(unsigned long long v)
{
	struct weak_thread *w;
	unsigned int i, k;

	if (!weak_active())
		return 0;
	w = &weak_threads[self->id];
	/* The newest load that returned @v (a link's flag bits aside). */
	for (k = 0; k < WEAK_LOADS && k < w->loads; k++) {
		i = (w->loads - 1 - k) % WEAK_LOADS;
		if ((w->load_value[i] & ~7ULL) == (v & ~7ULL)) {
			w->dep = max_stamp(w->dep, w->load_view[i]);
			return 0;
		}
	}
	w->dep = max_stamp(w->dep, weak_clock);	/* not a load the model saw: all */
	return 0;
}

/* An object handed out: loads inside it depend on a load of its address. */
static void weak_object_taken(void *obj, unsigned long long room)
{
	unsigned long long start = (unsigned long long)obj;
	unsigned int i;

	if (!scenario || !scenario->weak)
		return;
	/* One entry an address: a block taken again moves to the newest place. */
	for (i = 0; i < weak_nobjects && weak_objects[i].start != start; i++)
		;
	if (i < weak_nobjects) {
		memmove(weak_objects + i, weak_objects + i + 1,
			(weak_nobjects - i - 1) * sizeof(weak_objects[0]));
		weak_nobjects--;
	}
	if (weak_nobjects == WEAK_OBJECTS) {
		explore_fail("weak mode: more than %d objects", WEAK_OBJECTS);
		return;
	}
	weak_objects[weak_nobjects].start = start;
	weak_objects[weak_nobjects].end = start + room;
	weak_nobjects++;
	explore_weak_forget(obj, room);
}

/* Memory taken by a new owner or given back: its stores are forgotten. */
void explore_weak_forget(const void *p, unsigned long long bytes)
{
	unsigned long long a = (unsigned long long)p & ~7ULL, end = (unsigned long long)p + bytes;
	struct weak_location *l;

	if (!scenario || !scenario->weak)
		return;
	for (; a < end; a += 8) {
		l = weak_find(a, 0);
		if (l)
			l->n = 0;
	}
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
	weak_reset();
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
	weak_begin();
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
