/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/alloc.h - a slab allocator for arena memory that survives misuse.
 *
 * Small objects (up to AK_ALLOC_MAX_SMALL, 2016 bytes) come from 47 size
 * classes, and an object takes the smallest block that holds it, with no
 * header of its own: 16 to 128 bytes in steps of 8, then eight classes per
 * doubling (144, 160, ... 256; 288, ... 512; 576, ... 1024; 1152, ...
 * 1920) and 2016, half a page's room. So no block is more than 12.5%
 * larger than the object in it (16-byte blocks for objects under 16
 * bytes aside). Each class cuts whole pages into equal blocks after a
 * 64-byte page header. Larger objects take whole pages, with the same
 * header before them.
 *
 *  - What a block is lives in its page's header: the class gives the block
 *    size, a bump offset the blocks ever handed out, and where the page
 *    keeps a byte per block, set while the block is live (in the header
 *    for blocks of 168 bytes and more, else after the last block: a page
 *    holds up to 16 blocks fewer than a bitmap would allow, 236 of 16
 *    bytes rather than 252). A free checks that the page
 *    is one whose header the allocator wrote (a bit a page of the arena, in
 *    a bitmap of its own beside ak_allocator: 1/32768 of the arena's size;
 *    a large object's later pages start with the program's bytes, which may
 *    look like a header), then the page's magic, the class, that the offset
 *    is a block's start below the bump, and claims the block by clearing
 *    its byte (ak_byte_claim, a compare-and-swap): of two frees racing for
 *    one block exactly one sees the byte set. An allocation sets the byte
 *    with a store (on x86-64; atomic.h's ak_byte_publish), being the only
 *    writer of a byte whose block it holds. A double free, a pointer the allocator never handed
 *    out, or one into the middle of an object (of any of a large object's
 *    pages, whatever they hold) is refused (-EINVAL, counted in
 *    stats.double_frees / stats.bad_frees) and changes nothing. A free
 *    block is linked into its page's free list through its own bytes, never
 *    through that state.
 *  - A page is cut lazily (the bump): taking a page never loops, so no
 *    refill can be cut half way and leak the rest of a page.
 *  - A page whose blocks are all free again is kept while its class has
 *    fewer than AK_ALLOC_KEEP_EMPTY other empty pages (2 unless defined
 *    before this header), so a program allocating and freeing around a page
 *    boundary calls no page kfunc; beyond that, at the sleepable ak_free
 *    that empties it, it becomes a spare page of no class, unless the pool
 *    that ak_alloc_reserve asked for needs it. Pages emptied from
 *    non-sleepable programs wait for a reuse or ak_alloc_trim.
 *  - Pages move in runs: a class short of a page takes a spare one, or
 *    else AK_ALLOC_PAGE_RUN pages (16) in one page kfunc call, whose rest
 *    become spare pages; spare pages go back to the kernel when a sleepable
 *    free finds twice that many, down to one run's worth, and in
 *    ak_alloc_trim, all of them. The spare pages are kept as runs of
 *    adjacent pages, and each run goes back in one call: a page returned
 *    alone costs a kernel TLB flush (on our kernel, see kernel/patches,
 *    one flush serves a whole run). Spare pages serve any class, and the
 *    non-sleepable calls too.
 *  - No object lies at a page's first bytes, so none has an address whose
 *    low 32 bits are 0 (page 0 at a 4 GiB-aligned arena base, like NULL).
 *    Objects are 8-byte aligned (large ones 64-byte).
 *
 * Each CPU keeps a few free blocks of each class (64 of up to 32 bytes,
 * half as many per doubling: 1 to 2 KiB a class; 2 over 512), so the common
 * allocation and free touch nothing another CPU touches: take the CPU's
 * cache lock (a compare-and-swap; BPF programs do not migrate, but a
 * tracing program may interrupt another on its CPU and a sleepable one may
 * be preempted, so the cache is still locked), pop or push the block, set
 * or claim its live byte, release (a release store: ak_store_release). On
 * x86-64 an allocation and a free make three locked instructions between
 * them: the two cache locks' compare-and-swaps and the free's claim. A cache that is locked already (its own
 * CPU's interrupted program holds it) is not waited for: the call takes
 * the shared path below. An empty cache is refilled, a full one
 * half-emptied, in one visit to the shared lists, which also keep the
 * blocks of ak_alloc_reserve's pool out of any one CPU's cache. Cached
 * blocks are free memory only their CPU uses until it gives them back; an
 * allocation that finds the arena full first empties every cache and makes
 * every class's empty pages spare (__ak_alloc_reclaim, as ak_alloc_trim
 * does), then tries once more before it says -ENOMEM.
 *
 * One ak_lock (lock.h) guards the page lists; an allocation waits for it a
 * bounded time (-EBUSY), and no page kfunc is called with it held. A free
 * never waits: it claims its block without the lock, and if the lock is
 * busy it queues the block, lock-free, for the lock's next holder, who
 * puts up to 64 queued blocks back per visit. Statistics are updated with
 * arena atomics, but for the live objects and bytes, which each CPU counts
 * under its cache lock: read them with ak_alloc_stats_read(), from BPF or
 * through the mmap; pages == slab_pages + large_pages + spare_pages always.
 *
 * On 6.12 the arena's page kfuncs are for sleepable programs only:
 *   ak_alloc, ak_free, ak_alloc_reserve, ak_alloc_trim   sleepable programs
 *   ak_alloc_nosleep, ak_free_nosleep                     any program: blocks
 *       already taken (the pool ak_alloc_reserve fills) only; a large object
 *       freed there is queued, and its pages go back at the next sleepable
 *       ak_free, ak_alloc_reserve or ak_alloc_trim.
 * Every call is O(1) but for reserve and trim, which loop over pages and
 * keep the budget contract of loop.h (-AK_EBUDGET: call again).
 *
 * BPF: the allocator takes pages from the program's arena map. Either let
 * this header declare it (`arena`, AK_ARENA_PAGES pages), or declare it
 * yourself with AK_ARENA_MAP and #define AK_ALLOC_MAP to its name before
 * including this header. User space (host tests of the logic): the
 * includer defines ak_allocator and the page source declared below.
 *
 * Several objects: a program whose .bpf.c files are compiled apart and
 * linked with `bpftool gen object` (as sched_ext builds its schedulers) has
 * one arena and one allocator. The map `arena` and ak_allocator are weak
 * definitions, as are the library's functions (__ak_global), so the linker
 * keeps one of each and every object uses it; every object must declare
 * the same arena (the same AK_ARENA_PAGES, which the linker checks, or its
 * own `AK_ARENA_MAP(name, pages, 0) __weak;` under the same AK_ALLOC_MAP).
 * One thing more for libbpf 1.5's linker (Linux 6.12's bpftool): it refuses
 * two objects that both call one kfunc ("failed to resolve size of
 * underlying type"; fixed in later libbpf), and the allocator's functions
 * call the page kfuncs. So every object but one #defines AK_ALLOC_EXTERN
 * before its first arenakit include: there the allocator's entry points are
 * declared extern, and calls go to the one object's copy. ak_allocator
 * stays a weak definition there too rather than an extern, so each object
 * stands alone, and extern arena globals have had linker bugs of their own;
 * the losing copy costs its size, unused, among the arena's globals.
 * tests/guest/linked/ is such a program.
 *
 * This header is the interface: the overview above, the settings, the
 * calls. The structs are in <arenakit/alloc_types.h> (for a loader or a
 * test that reads them through the arena's mmap, no code), the bodies in
 * <arenakit/alloc_impl.h> and the files it lists, included last.
 */
#ifndef __ARENAKIT_ALLOC_H
#define __ARENAKIT_ALLOC_H

#include <arenakit/alloc_types.h>

#if defined(__BPF__) && !defined(AK_ALLOC_MAP)
/*
 * No arena named: this header declares the program's one arena, `arena`,
 * AK_ARENA_PAGES pages of address space (pages are taken as they are used).
 */
#ifndef AK_ARENA_PAGES
#define AK_ARENA_PAGES 65536	/* 256 MiB */
#endif
AK_ARENA_MAP(arena, AK_ARENA_PAGES, 0) __weak;	/* weak: see "Several objects" above */
#define AK_ALLOC_MAP arena
#endif

/* The largest object that comes from a size class: 2016 bytes, two a page. */
#define AK_ALLOC_MAX_SMALL ((AK_PAGE_SIZE - 64) / 2)
/* The largest object at all: 1 GiB (no 6.12 arena is larger than 4 GiB). */
#define AK_ALLOC_MAX (1ULL << 30)

/*
 * The most objects ak_alloc_reserve keeps for a class: more 16-byte blocks
 * than a 4 GiB arena (the largest) holds is a mistake, and a count this
 * small never wraps the sums it goes into.
 */
#define AK_ALLOC_MAX_RESERVE (1ULL << 28)

/*
 * Empty pages a class keeps beyond its reserve when a sleepable free
 * empties one more (ak_alloc_trim gives back all of them). Define it
 * before including this header to change it; 0 gives every emptied page
 * back at once.
 */
#ifndef AK_ALLOC_KEEP_EMPTY
#define AK_ALLOC_KEEP_EMPTY 2
#endif

/*
 * Pages a page kfunc call takes (when it can: one, if the arena has no
 * run this long left) and the unit in which spare pages go back; at most
 * twice this many are spare. 1 takes and gives back a page at a time.
 */
#ifndef AK_ALLOC_PAGE_RUN
#define AK_ALLOC_PAGE_RUN 16
#endif
_Static_assert(AK_ALLOC_PAGE_RUN >= 1 && AK_ALLOC_PAGE_RUN <= 1024, "1 to 1024 pages a run");

/*
 * CPUs with a cache of their own: of the AK_ALLOC_CPU_SLOTS caches in the
 * allocator (alloc_types.h), this object's calls use the first
 * AK_ALLOC_CPUS (all, unless defined before this header).
 * CPUs numbered from there on take the shared path every time: correct,
 * slower. The cache path costs a call chain 16 to 32 bytes more stack
 * (include/arenakit/README.md, "Stack"): a program at the 512-byte limit
 * can define AK_ALLOC_CPUS 0 and still share the allocator with objects
 * that use the caches. Such an object's calls also skip what would need a
 * frame more: an allocation that finds the arena full does not first bring
 * back cached blocks and other classes' empty pages, and a free does not
 * give spare pages back (the next free of an object with caches, a large
 * allocation that needs the room, or ak_alloc_trim does).
 */
#ifndef AK_ALLOC_CPUS
#define AK_ALLOC_CPUS AK_ALLOC_CPU_SLOTS
#endif
_Static_assert(AK_ALLOC_CPUS <= AK_ALLOC_CPU_SLOTS, "AK_ALLOC_CPUS caches are in the allocator");

#ifdef __BPF__
/* Weak, in every object, AK_ALLOC_EXTERN or not: see "Several objects" above. */
struct ak_allocator __arena_global ak_allocator __weak;
#else
/* User space: the includer defines these (tests/host/alloc_pages.c does). */
extern struct ak_allocator ak_allocator;
void *ak_user_pages_get(unsigned int pages);
void ak_user_pages_put(void *ptr, unsigned int pages);
#endif

/*
 * The entry points, declared: defined in alloc_impl.h, or under
 * AK_ALLOC_EXTERN in another object of the program (see "Several objects"
 * above).
 */
#if defined(__BPF__) && defined(AK_ALLOC_EXTERN)
#define __AK_ALLOC_DEFINE 0
#define __ak_alloc_entry extern
#else
#define __AK_ALLOC_DEFINE 1
#define __ak_alloc_entry __ak_global
#endif

/**
 * ak_alloc - allocate @size bytes of arena memory (sleepable programs)
 * @size: bytes wanted, 1..AK_ALLOC_MAX; above AK_ALLOC_MAX_SMALL, whole
 *	pages are used
 * @err: set to the reason on failure, or NULL: -EINVAL for size 0, -E2BIG
 *	over AK_ALLOC_MAX, -ENOMEM when the arena is full, -EBUSY when the
 *	lock stayed busy, -AK_EBUDGET when the loop budget ran out
 *
 * Return: the object, or NULL (see *@err; so do the stats).
 */
static __ak_always_inline void __arena *ak_alloc(unsigned long long size, int *err);

/**
 * ak_alloc_nosleep - allocate from blocks already taken (any program)
 * @size: bytes wanted, at most AK_ALLOC_MAX_SMALL
 * @err: as for ak_alloc, or NULL; -ENOMEM means the pool is empty (fill it
 *	with ak_alloc_reserve) and -E2BIG a size above AK_ALLOC_MAX_SMALL
 *
 * Return: the object, or NULL (see *@err).
 */
static __ak_always_inline void __arena *ak_alloc_nosleep(unsigned long long size, int *err);

/**
 * ak_free - free an object from ak_alloc or ak_alloc_nosleep (sleepable)
 * @ptr: the object, or NULL (nothing happens)
 *
 * Pages left without a live object go back to the kernel, beyond what
 * ak_alloc_reserve and AK_ALLOC_KEEP_EMPTY keep, as do the pages of large
 * objects, including those ak_free_nosleep queued.
 *
 * Return: 0; -EINVAL if @ptr is not a live object of this allocator (freed
 * already, never handed out, or inside an object): nothing is changed and
 * the stats count it. A busy lock does not fail a free (the block is
 * queued); only a word another CPU kept changing for AK_LOCK_SPINS (or
 * AK_ATOMIC_TRIES) attempts gives -EBUSY (or -AK_EBUDGET), and the object
 * is then still allocated.
 */
__ak_alloc_entry int ak_free(__arg_arena void __arena *ptr);

/**
 * ak_free_nosleep - free an object from any program type
 * @ptr: the object, or NULL (nothing happens)
 *
 * Return: as ak_free. Emptied pages stay for reuse or ak_alloc_trim.
 */
__ak_alloc_entry int ak_free_nosleep(__arg_arena void __arena *ptr);

/**
 * ak_alloc_reserve - keep @count objects of @size ready for
 * ak_alloc_nosleep (sleepable programs)
 * @size: object size, at most AK_ALLOC_MAX_SMALL
 * @count: free objects of that class wanted, at most AK_ALLOC_MAX_RESERVE;
 *	sleepable frees keep at least this many free blocks of the class from
 *	then on (the largest count asked for, until ak_alloc_trim)
 *
 * Return: 0; -EINVAL or -E2BIG for a size without a class, -E2BIG for a
 * count above AK_ALLOC_MAX_RESERVE (nothing is changed); -ENOMEM if the
 * arena is full; -EBUSY if the lock stayed busy; -AK_EBUDGET if the loop
 * budget ran out first (call again: the pages taken so far stay).
 */
__ak_alloc_entry int ak_alloc_reserve(unsigned long long size, unsigned long long count);

/**
 * ak_alloc_trim - give every page without a live object back to the
 * kernel, the pool's reserve and the kept empty pages included (sleepable
 * programs)
 *
 * Every CPU's cache is emptied first, so that the pages of its blocks can
 * go too.
 *
 * Return: 0; -EBUSY (the lock or a CPU's cache stayed busy, or a free was
 * checking a block on a page to give back: call again); -AK_EBUDGET if the
 * loop budget ran out (call again).
 */
__ak_alloc_entry int ak_alloc_trim(void);

/**
 * ak_alloc_live - the objects and bytes live now, every CPU's part summed
 * @a: the allocator: &ak_allocator in BPF, or its place in the arena's mmap
 * @objects: set to stats.objects's true value (may be NULL)
 * @bytes: set to stats.bytes's (may be NULL)
 *
 * Two words of stack, where ak_alloc_stats_read needs the whole struct.
 * Calls running meanwhile may be counted on one CPU and not yet another.
 *
 * Return: 0; -AK_EBUDGET if the loop budget ran out (the sums are partial).
 */
static __ak_always_inline int ak_alloc_live(const struct ak_allocator __arena *a,
					    unsigned long long *objects,
					    unsigned long long *bytes);

/**
 * ak_alloc_stats_read - the allocator's statistics, every CPU's part summed
 * @a: the allocator: &ak_allocator in BPF, or its place in the arena's mmap
 * @out: filled in
 *
 * Each field is read once; calls running meanwhile may be counted in one
 * field and not yet in another, as with any counters read one by one.
 *
 * Return: 0; -AK_EBUDGET if the loop budget ran out (objects and bytes are
 * then partial).
 */
static __ak_always_inline int ak_alloc_stats_read(const struct ak_allocator __arena *a,
						  struct ak_alloc_stats *out);

/* Internal: the entry points behind ak_alloc and ak_alloc_nosleep. */
__ak_alloc_entry unsigned long long __ak_alloc_sleepable(unsigned long long size,
							 __ak_nonnull int *err);
__ak_alloc_entry unsigned long long __ak_alloc_nosleep(unsigned long long size,
						       __ak_nonnull int *err);
__ak_alloc_entry unsigned long long __ak_alloc_cache_only(unsigned long long size);

/*
 * Internal: an object of @size from this CPU's cache only, or NULL (nothing said or
 * counted: the caller goes on to ak_alloc or ak_alloc_nosleep). It never
 * sleeps, reclaims or calls the page kfuncs, and waits only for the
 * cache's lock and, to refill the cache, the shared lock (both bounded):
 * for a caller that holds a lock of its own (htab.h, a bucket's).
 */
static __ak_always_inline void __arena *__ak_alloc_from_cache(unsigned long long size);

/*
 * Internal: @block, claimed (its live byte clear), back on its page's free
 * list; the lock held (alloc_impl_free.h's __ak_free_block). A page it
 * empties stays with its class. Out of line: every path that puts blocks
 * back calls it or the next, and the verifier checks each once, not once a
 * caller; and it never waits for the page's readers, so its frame has no
 * loop's count: it is the one below an allocation (queued frees drained),
 * where a program at the stack's limit has no bytes to spare. 0.
 */
__ak_alloc_entry int __ak_put_block_kept(__arg_arena void __arena *block);

/*
 * Internal: the same, for a sleepable free (ak_free's shared path, and a
 * CPU cache's flush under it), where a page it empties may become spare. 0.
 */
__ak_alloc_entry int __ak_put_block_spare(__arg_arena void __arena *block);

/*
 * Internal: clear the live bytes of small @page from .lives_at to its end
 * (alloc_impl_pages.h's __ak_page_init). A loop out of line: verified once,
 * not inside each loop that adds pages. 0.
 */
__ak_alloc_entry int __ak_lives_clear(__arg_arena struct __ak_page __arena *page);

/*
 * Internal: every CPU's cache emptied, the queued frees put back, and every
 * class's empty pages past its reserve made spare (any program). What
 * ak_alloc_trim does first, and an allocation before it fails with -ENOMEM.
 * 0, -EBUSY or -AK_EBUDGET.
 */
__ak_alloc_entry int __ak_alloc_reclaim(void);
/* Internal: give spare pages back until @keep are left (sleepable). */
__ak_alloc_entry int __ak_alloc_spare_trim(unsigned long long keep);

#ifdef __BPF__
/**
 * AK_ALLOC_PROGRAM - define a program through which user space allocates
 * @name: the program's name (its skeleton's progs.@name)
 *
 * A sleepable SEC("syscall") program that allocates struct
 * ak_alloc_request's size bytes with ak_alloc and answers with the
 * object's address, for ak_arena_alloc(), ak_arena_memdup() and
 * ak_arena_strdup() (user.h): the way a loader gets a string or a buffer of
 * its own into the arena, as a pattern a program then matches. The object
 * is the program's like any other: ak_free it in BPF when done.
 */
#define AK_ALLOC_PROGRAM(name)						\
	SEC("syscall")							\
	int name(struct ak_alloc_request *req)				\
	{								\
		int err = 0;						\
		void __arena *obj = ak_alloc(req->size, &err);		\
									\
		req->addr = (unsigned long long)obj;			\
		req->err = obj ? 0 : err;				\
		return req->err;					\
	}
#endif

#include <arenakit/alloc_impl.h>

#endif /* __ARENAKIT_ALLOC_H */
