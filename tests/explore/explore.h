/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The schedule explorer: the arenakit headers built for user space, with
 * every access atomic.h routes (atomics, locks, lock-free reads and the
 * links they follow) made a point where a deterministic scheduler may switch
 * between two or three logical threads. A scenario is run once per
 * schedule, and every schedule with at most a given number of preemptions
 * (a switch away from a thread that could go on) is run, as CHESS and loom
 * do; a switch away from a thread that spins on a lock, or that finished, is
 * free. After each schedule the scenario checks its invariants.
 *
 * The arena is emulated as the kernel keeps one: pages come zeroed from a
 * reserved region, and a page given back becomes inaccessible; a later
 * touch gets a fresh zero page, as a user-space touch of a freed arena page
 * does. A write to a freed page is a failure of the schedule (a write outside
 * any live object); a read of one is a failure too unless the scenario
 * allows it (lock-free readers, which in BPF read 0 there). A pointer
 * outside the arena ends its logical thread with a failure. A freed object
 * is poisoned past its first word (where the allocator links free blocks):
 * a write to it fails the schedule, and so does a read unless the
 * scenario's lock-free readers may read freed objects; a data race fails
 * it too (explore_access.c sees every access of the scenarios' files).
 *
 * Include this first: it hooks atomic.h and then includes the headers.
 */
#ifndef ARENAKIT_TESTS_EXPLORE_H
#define ARENAKIT_TESTS_EXPLORE_H

#include <stddef.h>

#define EXPLORE_MAX_THREADS 3

void explore_point(const char *op, const char *file, int line);
void explore_spin(void);
void explore_object_freed(void *obj, unsigned long long room);
void explore_object_taken(void *obj, unsigned long long room);
/* The op of the running thread's last point ("" in setup and check). */
const char *explore_current_op(void);

/*
 * The memory-access runtime (explore_access.c): every load and store of the
 * scenarios' files calls it (the compiler's thread-sanitizer
 * instrumentation). What the arena holds in BPF is watched: the emulated
 * arena, and the variables placed with __arena_global (the allocator, the
 * header bitmap, the scenarios' tables), which go to one section.
 */
#define __arena_global __attribute__((section("explore_shared")))
void explore_access_reset(int reads_freed_objects);
void explore_access_object_taken(void *obj, unsigned long long room);
void explore_describe_site(unsigned int site, char *out, size_t size);
void explore_access_atomic_next(unsigned int n);
#define AK_ACCESS_ATOMIC_NEXT(n) explore_access_atomic_next(n)
/* A scenario's read of what a call just returned, as if by the call: explore_access.c. */
void explore_read_at_once(unsigned int n);

/*
 * The weak mode (README.md): a file that defines EXPLORE_WEAK_MODE before
 * including this builds the headers as for a weakly ordered CPU (AK_TSO 0:
 * the fully ordered forms of releases and publications) with atomic.h's
 * weak-memory hooks, so its scenarios' loads may return older values.
 * Other files are built as before: the default mode is sequentially
 * consistent, and pays nothing for it.
 */
unsigned long long explore_weak_load(const volatile void *p, unsigned int size,
				     unsigned long long v, int dep);
void explore_weak_store(const volatile void *p, unsigned int size, unsigned long long old,
			int ordered);
unsigned long long explore_weak_dep(unsigned long long v);
void explore_weak_forget(const void *p, unsigned long long bytes);
#ifdef EXPLORE_WEAK_MODE
#define AK_TSO 0
#define AK_WEAK_LOAD(p, size, v, dep) explore_weak_load(p, size, v, dep)
#define AK_WEAK_STORE(p, size, old, ordered) explore_weak_store(p, size, old, ordered)
#define AK_WEAK_DEP(v) explore_weak_dep(v)
#endif

#define AK_SCHED_POINT(op) explore_point(op, __FILE__, __LINE__)
#define AK_SCHED_SPIN() explore_spin()
/* A freed object is poisoned past its first word: a later write is caught. */
#define AK_ALLOC_WATCH_FREED(obj, room) explore_object_freed(obj, room)
#define AK_ALLOC_WATCH_TAKEN(obj, room) explore_object_taken(obj, room)
/*
 * Every emptied page goes back at once, as before hysteresis: the races of
 * a page given back while a free checks it stay within two or three calls.
 */
#define AK_ALLOC_KEEP_EMPTY 0
/*
 * A page at a time, and the spare pages go back as soon as there are two:
 * an emptied page is reused by another class, or given back, within the
 * few calls of a scenario.
 */
#define AK_ALLOC_PAGE_RUN 1
/*
 * A lock-free reader's link kept in the emulated arena, as BPF's JIT keeps
 * every arena pointer in its arena (arena.h's __ak_arena_clamp): its
 * offset from the arena's base, modulo the arena's size. Guard pages
 * after the arena take a node's read that starts near its end; a read of
 * a page not given reads zeros, in scenarios that allow such reads.
 */
void *explore_arena_clamp(const void *p);
#define AK_ARENA_CLAMP(p) explore_arena_clamp((const void *)(p))
/* Spins are free switches here; a holder that never comes back is -EBUSY. */
#define AK_LOCK_SPINS 64
/*
 * A CPU per logical thread (a scenario may put two on one CPU: a preempted
 * sleepable program and the one that runs next there), so the allocator's
 * CPU caches are explored too; setup and check run on CPU 0.
 */
int explore_cpu(void);
#define AK_ALLOC_CPU_SLOTS EXPLORE_MAX_THREADS
#define AK_ALLOC_CPU() explore_cpu()
/*
 * A loop budget, as BPF's may_goto has one: a thread (or setup and check)
 * whose budget checks pass EXPLORE_LOOP_BUDGET in one run is cut there
 * (-AK_EBUDGET), so a loop that would go on forever ends, and fails its
 * schedule, instead of hanging the explorer.
 */
#define EXPLORE_LOOP_BUDGET 1000000
int explore_cut(void);
#define AK_TEST_CUT() explore_cut()
/*
 * Scenarios choose which keys share a bucket: the hash is the key's first
 * word with its bits reversed, so a table of 2^b buckets puts key k in
 * bucket reverse_b(k mod 2^b) (its top b bits are the bucket: htab.h),
 * and keys that agree in their low b bits share a bucket; then XORed with
 * the array's first seed, so an array of new seeds (a reseed) keeps which
 * keys share a bucket but moves them to other buckets. The seeds are
 * drawn in order from a sequence that begins again with each schedule:
 * the first array's first seed is 0 (key k in bucket reverse_b(k)), a
 * reseed's is not.
 */
unsigned long long explore_seed(void);
#define AK_HTAB_TEST_SEED() explore_seed()
/* Bits reversed by swapping ever smaller halves (every hash: no bit loop). */
static inline unsigned long long explore_reverse64(unsigned long long x)
{
	x = __builtin_bswap64(x);
	x = (x & 0x0f0f0f0f0f0f0f0fULL) << 4 | (x >> 4 & 0x0f0f0f0f0f0f0f0fULL);
	x = (x & 0x3333333333333333ULL) << 2 | (x >> 2 & 0x3333333333333333ULL);
	return (x & 0x5555555555555555ULL) << 1 | (x >> 1 & 0x5555555555555555ULL);
}
#define AK_HTAB_TEST_HASH(t, w, words)					\
	((void)(words), explore_reverse64((w)[0]) ^ __AK_HTAB_SEED(t, 0))

#include <arenakit/htab.h>
#include <arenakit/list.h>

/* The bucket of array @t that key @key is in. */
static inline unsigned long long explore_bucket(const struct __ak_htab_table *t,
						unsigned long long key)
{
	return (explore_reverse64(key) ^ __AK_HTAB_SEED(t, 0)) >> t->shift;
}

/*
 * Give @b's array the first seed of @a's: keys then hash alike in both, so
 * a node or array one table frees and the other takes carries a hash a
 * reader of the first still matches (the reuse a lock-free reader must
 * catch, which different seeds would hide).
 */
static inline void explore_htab_same_seeds(struct __ak_htab_table *b,
					   const struct __ak_htab_table *a)
{
	((unsigned long long *)b)[-1] = __AK_HTAB_SEED(a, 0);
}

struct explore_scenario {
	const char *name;
	int threads;
	/* The CPU of each thread (NULL: thread i on CPU i). */
	const int *cpus;
	/*
	 * A program nested on another's CPU (NULL: none): thread i, once it
	 * has run, runs to its end before thread nested_on[i] (-1: none) runs
	 * again, as a tracing program that interrupted it, or the task that
	 * preempted a sleepable program for the rest of the scenario. What the
	 * interrupted thread holds stays held: the nested one's bounded waits
	 * end in -EBUSY.
	 */
	const int *nested_on;
	/* Lock-free readers may read a freed page (BPF reads 0 there). */
	int allow_stale_reads;
	/* ... and freed objects (no poisoning: ASan cannot tell reads apart). */
	int reads_freed_objects;
	/*
	 * Weak mode: the scenario's file defines EXPLORE_WEAK_MODE, and loads
	 * may return older values, up to EXPLORE_WEAK (default 2) a schedule.
	 */
	int weak;
	/*
	 * ... and the variables besides the arena its threads share (the
	 * table), whose values from setup every thread may read as they were.
	 */
	void *shared;
	size_t shared_size;
	void (*setup)(void);
	void (*thread)(int id);
	/* After every thread ended: explore_fail() for each broken invariant. */
	void (*check)(void);
};

struct explore_result {
	unsigned long long schedules;
	unsigned long long failed;		/* schedules with a failure */
	unsigned long long first_failed;	/* the schedule number, from 1 */
	unsigned long long longest;		/* decisions in the longest run */
	char first_report[4096];		/* what failed first, and how */
};

/*
 * Run @s under every schedule with at most @bound preemptions, stopping at
 * the first failing one if @stop_at_failure. Returns 0 if every schedule
 * held, -1 if one failed, -2 if the scenario was not deterministic.
 */
int explore(const struct explore_scenario *s, int bound, int stop_at_failure,
	    struct explore_result *r);

/* From a scenario's threads or check: this schedule failed. */
void explore_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The allocator's statistics, every CPU's part summed. */
static inline struct ak_alloc_stats explore_alloc_stats(void)
{
	struct ak_alloc_stats s;

	ak_alloc_stats_read(&ak_allocator, &s);
	return s;
}

/* Pages of the emulated arena held now. */
unsigned long long explore_pages_held(void);

/*
 * After a scenario freed every object: a trim gives every page back, the
 * allocator's stats agree with the arena and its lock is free; and no free
 * was refused, unless @refused_frees_expected (the scenario's model counts
 * them). explore_fail() for each broken one.
 */
void explore_expect_given_back(int refused_frees_expected);

/*
 * A Criterion test of a scenario: explores with EXPLORE_BOUND preemptions
 * (default 2), prints the schedule count, fails with the first failing
 * schedule's report.
 */
void explore_test(const struct explore_scenario *s);

#endif
