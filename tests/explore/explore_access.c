// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The explorer's memory-access runtime: what the compiler's thread-sanitizer
 * instrumentation calls (-fsanitize=thread without its run-time library, as
 * the kernel's KCSAN builds), for every load and store of the scenarios'
 * files (the headers they include: the library). This file is built without
 * the instrumentation. Only the memory the arena holds in BPF is watched: the
 * emulated arena and the variables placed with __arena_global (explore.h:
 * the allocator, the header bitmap, the scenarios' tables).
 *
 * What it does with a watched access (README.md):
 *  - a freed object's bytes past its first word are poisoned: a touch of
 *    them fails the schedule (a read is allowed where the scenario's
 *    lock-free readers may read freed objects);
 *  - a data race fails the schedule: two accesses to one byte from two
 *    threads, one a write, one plain (not through atomic.h), and neither
 *    ordered before the other. Order is happens-before from vector clocks:
 *    a fully ordered atomic acquires and releases its word, a marked load
 *    acquires (the address dependency the library relies on, as if every
 *    later access depended on it: what the weak mode checks instead), a
 *    release (ak_store_release) releases, a marked store and an unordered
 *    add order nothing. A word's clock is joined, never replaced: it may
 *    hide a race, never invent one;
 *  - a plain store of an aligned word is taken as made whole (KCSAN's
 *    default), and a sequence count's read section (AK_ACCESS_ATOMIC_NEXT)
 *    reads as marked;
 *  - with EXPLORE_ACCESSES=all every access is a point where the scheduler
 *    may switch threads (README.md says why the marked ones suffice by
 *    default, with the check clean).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "explore/explore.h"
#include "explore/explore_arena.h"

#define T EXPLORE_MAX_THREADS

/*
 * The history of an 8-byte granule in the current run, or of one byte of
 * it. Clocks: 0 is none. A granule that only whole aligned words touched
 * has one cell; the first smaller access splits it into eight, one a byte,
 * each a copy of it (most of the library's accesses are whole words).
 */
struct cell {
	unsigned int run;
	unsigned int bytes;		/* split: 1 + the index of its 8 byte cells */
	/* Thread u's last, by its clock: any write, plain ones, plain ones not word-sized. */
	unsigned int write[T], plain_write[T], split_write[T];
	unsigned int read[T], plain_read[T];
	/* Where (from the image's base): u's last write, read, plain read. */
	unsigned int write_site[T], read_site[T], plain_read_site[T];
};

/* Byte cells of the granules split in this run. */
#define SPLIT_CELLS (8 << 14)
static struct cell split_cells[SPLIT_CELLS];
static unsigned int split_used;

/*
 * A granule's cell, and per granule (objects are 8-byte aligned, and
 * their sizes multiples of 8) the run it was last poisoned in.
 */
struct region {
	char *start, *end;
	struct cell *cells;
	unsigned int *poisoned;
};

/* The emulated arena (with its guard pages), and the __arena_global section. */
static struct region regions[2];
extern char __start_explore_shared[], __stop_explore_shared[];

/* A word an atomic or a release synchronised through: its clock. */
#define SYNC_SLOTS 4096
static struct sync {
	unsigned int run;
	unsigned long long addr;
	unsigned int clock[T];
} syncs[SYNC_SLOTS];

static unsigned int run = 1;
static unsigned int clock_of[T][T];	/* thread t's vector clock */
static int every_access_a_point = -1;
static unsigned int atomic_next[T];	/* accesses left taken as marked */
static unsigned int at_once[T];		/* ... and not points either */
static int watch_reads_of_freed = 1;
static char *image_base;
static int reported;	/* one report a run: the first is the one to read */

/* The threads' logical id now (-1: setup and check), and its last point. */
extern int explore_self_id;

static void region_init(struct region *r, char *start, char *end)
{
	size_t granules = (size_t)(end - start) / 8 + 1;

	r->start = start;
	r->end = end;
	r->cells = mmap(NULL, granules * sizeof(*r->cells), PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	r->poisoned = mmap(NULL, granules * sizeof(*r->poisoned), PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r->cells == MAP_FAILED || r->poisoned == MAP_FAILED)
		abort();
}

static void init_once(void)
{
	Dl_info info;
	const char *env;

	if (every_access_a_point >= 0)
		return;
	env = getenv("EXPLORE_ACCESSES");
	every_access_a_point = env && !strcmp(env, "all");
	region_init(&regions[0], arena_base, arena_base + (size_t)ARENA_ALL_PAGES * AK_PAGE_SIZE);
	region_init(&regions[1], __start_explore_shared, __stop_explore_shared);
	if (dladdr((void *)init_once, &info))
		image_base = info.dli_fbase;
}

/* After the arena's reset: a new run, every byte's history forgotten. */
void explore_access_reset(int reads_freed_objects)
{
	init_once();
	run++;
	memset(clock_of, 0, sizeof(clock_of));
	for (int t = 0; t < T; t++)
		clock_of[t][t] = 1;
	memset(atomic_next, 0, sizeof(atomic_next));
	memset(at_once, 0, sizeof(at_once));
	watch_reads_of_freed = !reads_freed_objects;
	reported = 0;
	split_used = 0;
}

/* The region that holds [@p, @p + @size), or NULL: not watched. */
static struct region *region_of(const volatile void *p, unsigned int size)
{
	const char *a = (const char *)p;

	for (int i = 0; i < 2; i++)
		if (a >= regions[i].start && a + size <= regions[i].end)
			return &regions[i];
	return NULL;
}

/* The cell of the granule at @a, fresh if its last run was another. */
static struct cell *granule_at(struct region *r, const char *a)
{
	struct cell *c = &r->cells[(size_t)(a - r->start) / 8];

	if (c->run != run)
		memset(c, 0, sizeof(*c)), c->run = run;
	return c;
}

/* The cell of the byte at @a: its granule split first, if it is not yet. */
static struct cell *byte_at(struct region *r, const char *a)
{
	struct cell *g = granule_at(r, a);

	if (!g->bytes) {
		if (split_used + 8 > SPLIT_CELLS) {
			explore_fail("explore_access: more than %d granules split in a run",
				     SPLIT_CELLS / 8);
			return g;
		}
		for (int i = 0; i < 8; i++)
			split_cells[split_used + i] = *g;
		split_used += 8;
		g->bytes = split_used - 7;
	}
	return &split_cells[g->bytes - 1 + (size_t)(a - r->start) % 8];
}

static void set_poison(void *obj, unsigned long long bytes, unsigned int to)
{
	struct region *r = region_of(obj, (unsigned int)bytes);
	size_t first, last;

	if (!r || !bytes)
		return;
	first = (size_t)((char *)obj - r->start) / 8;
	last = (size_t)((char *)obj + bytes - 1 - r->start) / 8;
	for (size_t g = first; g <= last; g++)
		r->poisoned[g] = to;
}

/* The first poisoned granule of [@a, @a + @size) in @r, or NULL. */
static const char *poisoned_in(struct region *r, const char *a, unsigned int size)
{
	size_t first = (size_t)(a - r->start) / 8, last = (size_t)(a + size - 1 - r->start) / 8;

	for (size_t g = first; g <= last; g++)
		if (r->poisoned[g] == run)
			return r->start + g * 8;
	return NULL;
}

/* ---- poison: a freed object past its first word ---- */

void explore_object_freed(void *obj, unsigned long long room)
{
	if (room > 8)
		set_poison((char *)obj + 8, room - 8, run);
}

void explore_access_object_taken(void *obj, unsigned long long room)
{
	set_poison(obj, room, 0);
}

/* ---- where an access was made ---- */

static unsigned int site_of(const void *pc)
{
	return (unsigned int)((const char *)pc - image_base);
}

/* "function file:line" of a site, through addr2line (only for a report). */
void explore_describe_site(unsigned int site, char *out, size_t size)
{
	char cmd[512], func[256] = "?", line[512] = "?";
	FILE *f;

	snprintf(out, size, "+0x%x", site);
	if (!site)
		return;
	/* The return address is the call's end: the access is just before. */
	snprintf(cmd, sizeof(cmd), "addr2line -f -e /proc/%d/exe 0x%x 2>/dev/null", getpid(),
		 site - 1);
	f = popen(cmd, "r");
	if (!f)
		return;
	if (fgets(func, sizeof(func), f) && fgets(line, sizeof(line), f)) {
		func[strcspn(func, "\n")] = 0;
		line[strcspn(line, "\n")] = 0;
		snprintf(out, size, "%s %s", func, strrchr(line, '/') ? strrchr(line, '/') + 1 : line);
	}
	pclose(f);
}

/* ---- happens-before ---- */

/* The clock of the word at @p; NULL if it has none and @add is 0 (nothing released there). */
static struct sync *sync_of(const volatile void *p, int add)
{
	unsigned long long addr = (unsigned long long)p & ~7ULL;
	unsigned int i = (unsigned int)(addr * 0x9e3779b97f4a7c15ULL >> 52) % SYNC_SLOTS;

	for (unsigned int k = 0; k < SYNC_SLOTS; k++, i = (i + 1) % SYNC_SLOTS) {
		struct sync *s = &syncs[i];

		if (s->run != run) {
			if (!add)
				return NULL;
			memset(s, 0, sizeof(*s));
			s->run = run;
			s->addr = addr;
			return s;
		}
		if (s->addr == addr)
			return s;
	}
	explore_fail("explore_access: more than %d words synchronised through", SYNC_SLOTS);
	return NULL;
}

static void acquire(int t, const volatile void *p)
{
	struct sync *s = sync_of(p, 0);

	for (int u = 0; s && u < T; u++)
		if (s->clock[u] > clock_of[t][u])
			clock_of[t][u] = s->clock[u];
}

static void release(int t, const volatile void *p)
{
	struct sync *s = sync_of(p, 1);

	for (int u = 0; s && u < T; u++)
		if (clock_of[t][u] > s->clock[u])
			s->clock[u] = clock_of[t][u];
	clock_of[t][t]++;
}

/* ---- the check of one access ---- */

/*
 * An access's kind. A plain store of an aligned word (up to 8 bytes) is
 * taken as made whole, as KCSAN takes it by default: beside a marked
 * access it is one (a lock-free reader reads memory any owner may write,
 * and re-validates), beside a plain one it is plain.
 */
enum { PLAIN, MARKED, WORD_WRITE };

static __attribute__((noinline, cold)) void report_race(int t, int write, int marked, unsigned int site, const char *addr,
			int u, int other_write, unsigned int other_site)
{
	char mine[320], theirs[320];
	const char *where = addr >= regions[0].start && addr < regions[0].end ? "arena" : "global";
	size_t off = (size_t)(addr - (addr >= regions[0].start && addr < regions[0].end ?
				      regions[0].start : regions[1].start));

	if (reported++)
		return;
	explore_describe_site(site, mine, sizeof(mine));
	explore_describe_site(other_site, theirs, sizeof(theirs));
	explore_fail("data race at %s+0x%zx: T%d's %s %s (%s) and T%d's %s (%s), neither ordered before the other",
		     where, off, t, marked == MARKED ? "marked" : "plain", write ? "write" : "read", mine, u,
		     other_write ? "write" : "read", theirs);
}

static __attribute__((noinline, cold)) void report_poisoned(int t, int write, const char *bad,
								    const void *pc)
{
	char mine[320];

	if (reported++)
		return;
	explore_describe_site(site_of(pc), mine, sizeof(mine));
	explore_fail("%s%d %s a freed object at %p (%s)", t < 0 ? "setup or check, T" : "T", t,
		     write ? "wrote to" : "read", (void *)bad, mine);
}

static void check_watched(const volatile void *p, unsigned int size, int write, int marked,
			  const void *pc)
{
	int t = explore_self_id;
	const char *a = (const char *)p, *bad;
	struct region *reg = region_of(p, size);
	unsigned int site, now;
	struct cell *whole;

	if (!reg)
		return;
	bad = poisoned_in(reg, a, size);
	if (bad && (write || watch_reads_of_freed)) {
		report_poisoned(t, write, bad, pc);
		return;
	}
	if (t < 0)
		return;		/* setup and check: alone, before and after every thread */
	if (at_once[t]) {
		at_once[t]--;		/* explore_read_at_once: part of the call before it */
		marked = MARKED;
	} else if (every_access_a_point && marked != MARKED) {
		explore_point(write ? "store" : "load", NULL, (int)site_of(pc));
	}
	if (atomic_next[t]) {
		atomic_next[t]--;	/* in a read section (explore_access_atomic_next) */
		marked = MARKED;
	}
	if (write && marked == PLAIN && size <= 8 && !((unsigned long)a & (size - 1)))
		marked = WORD_WRITE;
	site = site_of(pc);
	now = clock_of[t][t];
	/* An aligned word in a granule not split: its one cell. */
	whole = size == 8 && !((unsigned long)a & 7) ? granule_at(reg, a) : NULL;
	if (whole && whole->bytes)
		whole = NULL;
	for (unsigned int i = 0; i < (whole ? 1 : size); i++) {
		struct cell *c = whole ?: byte_at(reg, a + i);

		for (int u = 0; u < T; u++) {
			unsigned int w, r;

			if (u == t)
				continue;
			/* u's accesses this one races with, if not ordered before it. */
			w = marked == PLAIN ? c->write[u] : marked == MARKED ? c->split_write[u] :
			    c->plain_write[u];
			r = !write ? 0 : marked == PLAIN ? c->read[u] : c->plain_read[u];
			if (w > clock_of[t][u]) {
				report_race(t, write, marked, site, a + i, u, 1, c->write_site[u]);
				return;
			}
			if (r > clock_of[t][u]) {
				report_race(t, write, marked, site, a + i, u, 0,
					    marked == PLAIN ? c->read_site[u] : c->plain_read_site[u]);
				return;
			}
		}
		if (write) {
			c->write[t] = now;
			if (marked != MARKED)
				c->plain_write[t] = now;
			if (marked == PLAIN)
				c->split_write[t] = now;
			c->write_site[t] = site;
		} else {
			c->read[t] = now;
			if (!marked) {
				c->plain_read[t] = now;
				c->plain_read_site[t] = site;
			}
			c->read_site[t] = site;
		}
	}
}

/*
 * A sequence count's read section: the next @n accesses of the thread are
 * taken as marked (0 ends it), as KCSAN takes a seqlock reader's. Its reads
 * may race with a writer's by design; nothing read is trusted until the
 * count is read again. Bounded, so a section left without its end hides
 * nothing after it for long.
 */
void explore_access_atomic_next(unsigned int n)
{
	if (explore_self_id >= 0)
		atomic_next[explore_self_id] = n;
}

/*
 * A scenario's read through an address a call just returned, made at
 * once, as if by the call: the next @n accesses are marked and, in
 * EXPLORE_ACCESSES=all, no points (what the library promises holds inside
 * the call; a read after it that races a delete is the caller's).
 */
void explore_read_at_once(unsigned int n)
{
	if (explore_self_id >= 0)
		at_once[explore_self_id] = n;
}

/*
 * Most accesses are to the stack and the test's own variables: two
 * compares, and nothing more, for those.
 */
static inline __attribute__((always_inline)) void check(const volatile void *p, unsigned int size,
							 int write, int marked, const void *pc)
{
	unsigned long a = (unsigned long)p;

	if (a - (unsigned long)regions[0].start < (unsigned long)(regions[0].end - regions[0].start) ||
	    a - (unsigned long)regions[1].start < (unsigned long)(regions[1].end - regions[1].start))
		check_watched(p, size, write, marked, pc);
}

/* ---- what the instrumentation calls ---- */

void __tsan_init(void)
{
}

#define PC __builtin_return_address(0)

#define ACCESSES(n)							\
	void __tsan_read##n(void *p) { check(p, n, 0, PLAIN, PC); }	\
	void __tsan_write##n(void *p) { check(p, n, 1, PLAIN, PC); }	\
	void __tsan_unaligned_read##n(void *p) { check(p, n, 0, PLAIN, PC); } \
	void __tsan_unaligned_write##n(void *p) { check(p, n, 1, PLAIN, PC); } \
	void __tsan_volatile_read##n(void *p) { marked_load(p, n, PC); } \
	void __tsan_volatile_write##n(void *p) { marked_store(p, n, PC); } \
	void __tsan_unaligned_volatile_read##n(void *p) { marked_load(p, n, PC); } \
	void __tsan_unaligned_volatile_write##n(void *p) { marked_store(p, n, PC); }

/* Is the running thread's last point @op? (A few bytes: it is asked at every atomic.) */
static int op_is(const char *op)
{
	const char *last = explore_current_op();

	while (*op && *op == *last)
		op++, last++;
	return !*op && !*last;
}

/* ak_read_once: acquires its word; ak_write_once: orders nothing, unless a release. */
static void marked_load(const volatile void *p, unsigned int n, const void *pc)
{
	if (explore_self_id >= 0)
		acquire(explore_self_id, p);
	check(p, n, 0, MARKED, pc);
}

static void marked_store(const volatile void *p, unsigned int n, const void *pc)
{
	check(p, n, 1, MARKED, pc);
	if (explore_self_id >= 0 && op_is("release"))
		release(explore_self_id, p);
}

ACCESSES(1)
ACCESSES(2)
ACCESSES(4)
ACCESSES(8)
ACCESSES(16)

void __tsan_read_range(void *p, unsigned long n)
{
	check(p, (unsigned int)n, 0, PLAIN, PC);
}

void __tsan_write_range(void *p, unsigned long n)
{
	check(p, (unsigned int)n, 1, PLAIN, PC);
}

void *__tsan_memcpy(void *dst, const void *src, unsigned long n)
{
	check(src, (unsigned int)n, 0, PLAIN, PC);
	check(dst, (unsigned int)n, 1, PLAIN, PC);
	return memcpy(dst, src, n);
}

void *__tsan_memmove(void *dst, const void *src, unsigned long n)
{
	check(src, (unsigned int)n, 0, PLAIN, PC);
	check(dst, (unsigned int)n, 1, PLAIN, PC);
	return memmove(dst, src, n);
}

void *__tsan_memset(void *dst, int c, unsigned long n)
{
	check(dst, (unsigned int)n, 1, PLAIN, PC);
	return memset(dst, c, n);
}

void __tsan_func_entry(void *pc)
{
	(void)pc;
}

void __tsan_func_exit(void)
{
}

void __tsan_atomic_thread_fence(int mo)
{
	(void)mo;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

void __tsan_atomic_signal_fence(int mo)
{
	(void)mo;
}

/*
 * An atomic: a marked read and write of its word. Fully ordered unless
 * atomic.h says it is an unordered add; a compare-and-swap that failed
 * wrote nothing and acquires only (memory orders: 2 acquire, 3 release,
 * 4 acq_rel, 5 seq_cst).
 */
static void atomic_access(const volatile void *p, unsigned int n, int mo, int wrote, const void *pc)
{
	int t = explore_self_id;
	int ordered = !op_is("add");

	/* Its read first: what it reads from was made before its write. */
	if (t >= 0 && ordered && (mo == 1 || mo == 2 || mo >= 4))
		acquire(t, p);
	check(p, n, wrote, MARKED, pc);
	if (t >= 0 && ordered && wrote && mo >= 3)
		release(t, p);
}

#define ATOMICS(bits, type)						\
	type __tsan_atomic##bits##_load(const volatile type *a, int mo)	\
	{								\
		atomic_access(a, sizeof(type), mo, 0, PC);		\
		return __atomic_load_n(a, __ATOMIC_SEQ_CST);		\
	}								\
	void __tsan_atomic##bits##_store(volatile type *a, type v, int mo) \
	{								\
		atomic_access(a, sizeof(type), mo, 1, PC);		\
		__atomic_store_n(a, v, __ATOMIC_SEQ_CST);		\
	}								\
	RMW(bits, type, exchange, __atomic_exchange_n)			\
	RMW(bits, type, fetch_add, __atomic_fetch_add)			\
	RMW(bits, type, fetch_sub, __atomic_fetch_sub)			\
	RMW(bits, type, fetch_and, __atomic_fetch_and)			\
	RMW(bits, type, fetch_or, __atomic_fetch_or)			\
	RMW(bits, type, fetch_xor, __atomic_fetch_xor)			\
	RMW(bits, type, fetch_nand, __atomic_fetch_nand)		\
	type __tsan_atomic##bits##_compare_exchange_val(volatile type *a, type c, type v, \
							int mo, int fmo) \
	{								\
		type seen = __atomic_load_n(a, __ATOMIC_SEQ_CST);	\
									\
		atomic_access(a, sizeof(type), seen == c ? mo : fmo, seen == c, PC); \
		__atomic_compare_exchange_n(a, &c, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
		return c;						\
	}								\
	int __tsan_atomic##bits##_compare_exchange_strong(volatile type *a, type *c, type v, \
							  int mo, int fmo) \
	{								\
		type seen = __atomic_load_n(a, __ATOMIC_SEQ_CST);	\
									\
		atomic_access(a, sizeof(type), seen == *c ? mo : fmo, seen == *c, PC); \
		return __atomic_compare_exchange_n(a, c, v, 0, __ATOMIC_SEQ_CST, \
						   __ATOMIC_SEQ_CST);	\
	}								\
	int __tsan_atomic##bits##_compare_exchange_weak(volatile type *a, type *c, type v, \
							int mo, int fmo) \
	{								\
		return __tsan_atomic##bits##_compare_exchange_strong(a, c, v, mo, fmo); \
	}

#define RMW(bits, type, name, builtin)					\
	type __tsan_atomic##bits##_##name(volatile type *a, type v, int mo) \
	{								\
		atomic_access(a, sizeof(type), mo, 1, PC);		\
		return builtin(a, v, __ATOMIC_SEQ_CST);			\
	}

ATOMICS(8, unsigned char)
ATOMICS(16, unsigned short)
ATOMICS(32, unsigned int)
ATOMICS(64, unsigned long long)
