// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The schedule explorer's weak mode (tests/explore/README.md): loads that
 * may return older values, as arm64 lets them. Each value other than the
 * newest is a decision on the scheduler's stack (explore.c's
 * explore_decide_value), so a schedule replays its loads as it replays
 * its switches.
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

void explore_weak_reset(void)
{
	weak_nobjects = 0;
	weak_run++;
	weak_clock = 1;
	memset(weak_threads, 0, sizeof(weak_threads));
}

/* At the threads' start: what memory holds now is where every thread begins. */
void explore_weak_begin(void)
{
	unsigned int i;

	if (!explore_running()->weak)
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
	if (explore_running()->shared) {
		free(weak_shared_snapshot);
		weak_shared_snapshot = malloc(explore_running()->shared_size);
		if (!weak_shared_snapshot)
			abort();
		memcpy(weak_shared_snapshot, explore_running()->shared, explore_running()->shared_size);
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
	} else if (explore_running()->shared && a >= (const char *)explore_running()->shared &&
		   a + size <= (const char *)explore_running()->shared + explore_running()->shared_size) {
		off = (size_t)(a - (const char *)explore_running()->shared);
		if (weak_value(weak_shared_snapshot + off, size) == v)
			return 0;
	}
	return weak_clock;
}

static int weak_active(void)
{
	return explore_self_id >= 0 && explore_running()->weak;
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
	t = explore_self_id;
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
	if (l->n - lo > 1 && explore_stale_allowed())
		back = explore_decide_value((int)(l->n - lo));
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
	t = explore_self_id;
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
	w = &weak_threads[explore_self_id];
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
void explore_weak_object_taken(void *obj, unsigned long long room)
{
	unsigned long long start = (unsigned long long)obj;
	unsigned int i;

	if (!explore_running() || !explore_running()->weak)
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

	if (!explore_running() || !explore_running()->weak)
		return;
	for (; a < end; a += 8) {
		l = weak_find(a, 0);
		if (l)
			l->n = 0;
	}
}
