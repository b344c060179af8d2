/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/alloc.h - a slab allocator for arena memory that survives misuse.
 *
 * Small objects (up to AK_ALLOC_MAX_SMALL bytes) come from eight size
 * classes. Each class cuts whole pages into equal blocks: a 64-byte page
 * header, then 4032 bytes of blocks (16, 32, 64, 112, 224, 448, 1008 or 2016
 * bytes: each divides 4032, so no page loses a byte). Every block starts
 * with an 8-byte block header, then the object. Larger objects take whole
 * pages, with the same page header and block header before them.
 *
 *  - A free block is linked into its own page's free list through the
 *    object's bytes, never through a header: what identifies a live block
 *    is never overwritten, so a double free, a pointer the allocator never
 *    handed out, or one into the middle of an object is recognised
 *    (-EINVAL, counted in stats.double_frees / stats.bad_frees) and changes
 *    nothing.
 *  - A page is cut lazily (a bump offset): taking a page never loops, so no
 *    refill can be cut half way and leak the rest of a page.
 *  - A page whose blocks are all free again goes back to the kernel on the
 *    next sleepable ak_free that empties it, unless the pool that
 *    ak_alloc_reserve asked for needs it; pages emptied from non-sleepable
 *    programs wait for ak_alloc_trim (or are reused first).
 *  - No object lies at a page's first bytes, so none has an address whose
 *    low 32 bits are 0 (page 0 at a 4 GiB-aligned arena base, like NULL).
 *    Objects are 8-byte aligned (large ones 64-byte).
 *
 * One ak_lock (lock.h) guards the page lists; an allocation waits for it a
 * bounded time (-EBUSY), and no page kfunc is called with it held. A free
 * never waits: it claims the block with a compare-and-swap on its header
 * (so of two racing frees of one block exactly one wins), and if the lock
 * is busy it queues the block, lock-free, for the lock's next holder, who
 * puts up to 64 queued blocks back per visit. Statistics are
 * updated with arena atomics and readable at any time, from BPF or through
 * the mmap (ak_allocator.stats): pages == slab_pages + large_pages always.
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
 */
#ifndef __ARENAKIT_ALLOC_H
#define __ARENAKIT_ALLOC_H

#include <arenakit/arena.h>
#include <arenakit/lock.h>

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

#define AK_ALLOC_CLASSES 8
/* Bytes before each block's object, and before a page's first block. */
#define __AK_BLOCK_HDR 8
#define __AK_PAGE_HDR 64
#define __AK_PAGE_DATA (AK_PAGE_SIZE - __AK_PAGE_HDR)
#define __AK_MAX_BLOCK (__AK_PAGE_DATA / 2)
/* The largest object that comes from a size class: 2008 bytes. */
#define AK_ALLOC_MAX_SMALL (__AK_MAX_BLOCK - __AK_BLOCK_HDR)
/* The largest object at all: 1 GiB (no 6.12 arena is larger than 4 GiB). */
#define AK_ALLOC_MAX (1ULL << 30)

/*
 * The most objects ak_alloc_reserve keeps for a class: more 16-byte blocks
 * than a 4 GiB arena (the largest) holds is a mistake, and a count this
 * small never wraps the sums it goes into.
 */
#define AK_ALLOC_MAX_RESERVE (1ULL << 28)

/* Blocks a lock holder takes off the queue of frees that found it busy. */
#define __AK_DRAIN_BATCH 64

#define __AK_PAGE_MAGIC 0x61a6e5edU	/* a page of ours */
#define __AK_BLOCK_MAGIC 0xb10cU	/* a block header */
#define __AK_CLASS_LARGE 0xffU

enum {
	__AK_BLOCK_LIVE = 1,		/* handed out */
	__AK_BLOCK_FREE = 2,		/* on its page's free list */
	__AK_BLOCK_DEFERRED = 3,	/* large, freed, pages not yet returned */
	__AK_BLOCK_QUEUED = 4,		/* freed while the lock was busy */
};

enum {
	__AK_ON_NO_LIST,		/* full (or large) */
	__AK_ON_PARTIAL,		/* some blocks free, some live */
	__AK_ON_EMPTY,			/* every block free */
};

struct __ak_block {
	unsigned short magic;
	unsigned char state;
	unsigned char class;
	unsigned int offset;		/* from its page's start: a check */
};

struct __ak_page {
	unsigned int magic;
	unsigned char class;		/* or __AK_CLASS_LARGE */
	unsigned char list;		/* __AK_ON_* */
	unsigned short unused;
	unsigned int pages;		/* large: pages in the object */
	unsigned int live;		/* blocks handed out */
	unsigned int bump;		/* offset of the first block never used */
	unsigned int free;		/* offset of the first free block, 0: none */
	struct __ak_page __arena *next;	/* on the class's partial or empty list */
	struct __ak_page __arena *prev;
};

struct ak_alloc_stats {
	unsigned long long pages;		/* taken from the kernel, held now */
	unsigned long long slab_pages;		/* of them, cut into blocks */
	unsigned long long large_pages;		/* of them, in large objects */
	unsigned long long objects;		/* handed out, not yet freed */
	unsigned long long bytes;		/* their blocks' bytes, headers in */
	unsigned long long fail_nomem;		/* allocations: arena full */
	unsigned long long fail_size;		/* size 0 or over AK_ALLOC_MAX */
	unsigned long long fail_busy;		/* the lock stayed busy */
	unsigned long long fail_budget;		/* the loop budget ran out */
	unsigned long long double_frees;	/* frees of a block already free */
	unsigned long long bad_frees;		/* foreign or interior pointers */
	unsigned long long pages_returned;	/* given back to the kernel */
};

struct __ak_class {
	struct __ak_page __arena *partial;
	struct __ak_page __arena *empty;
	unsigned long long free_blocks;	/* in partial and empty pages */
	unsigned long long reserved;	/* the pool asked for: keep this many */
};

struct ak_allocator {
	struct ak_lock lock;
	unsigned int unused;
	struct __ak_class classes[AK_ALLOC_CLASSES];
	/*
	 * Stacks of blocks linked through their object bytes (user addresses
	 * as integers, for compare-and-swap): small blocks freed while the lock
	 * was busy, and large objects freed by ak_free_nosleep, whose pages a
	 * sleepable call returns.
	 */
	unsigned long long queued;
	unsigned long long deferred;
	/* Frees between reading a page's header and claiming their block. */
	unsigned long long freeing;
	struct ak_alloc_stats stats;
};

#ifdef __BPF__
/* Weak, in every object, AK_ALLOC_EXTERN or not: see "Several objects" above. */
struct ak_allocator __arena_global ak_allocator __weak;

static __ak_always_inline void __arena *__ak_pages_get(unsigned int pages)
{
	return bpf_arena_alloc_pages(&AK_ALLOC_MAP, 0, pages, -1 /* NUMA_NO_NODE */, 0);
}

static __ak_always_inline void __ak_pages_put(void __arena *ptr, unsigned int pages)
{
	bpf_arena_free_pages(&AK_ALLOC_MAP, ptr, pages);
}
#else
/* User space: the includer defines these (tests/host/alloc_pages.c does). */
extern struct ak_allocator ak_allocator;
void *ak_user_pages_get(unsigned int pages);
void ak_user_pages_put(void *ptr, unsigned int pages);
#define __ak_pages_get(pages) ak_user_pages_get(pages)
#define __ak_pages_put(ptr, pages) ak_user_pages_put(ptr, pages)
#endif

#define __ak_stat_add(field, n) ak_atomic_add(&ak_allocator.stats.field, (n))

/*
 * For host tests that watch objects' lives (tests/explore/ poisons a freed
 * object past its first word, which the allocator's own lists use, so a
 * later write there is caught): called with an object and its room when it
 * is handed out and when a free claims it. Nothing by default, and always
 * nothing in BPF.
 */
#if defined(__BPF__) || !defined(AK_ALLOC_WATCH_FREED)
#undef AK_ALLOC_WATCH_FREED
#undef AK_ALLOC_WATCH_TAKEN
#define AK_ALLOC_WATCH_FREED(obj, room) ((void)0)
#define AK_ALLOC_WATCH_TAKEN(obj, room) ((void)0)
#endif

static __ak_always_inline unsigned int __ak_block_size(unsigned int class)
{
	switch (class) {
	case 0: return 16;
	case 1: return 32;
	case 2: return 64;
	case 3: return 112;
	case 4: return 224;
	case 5: return 448;
	case 6: return 1008;
	default: return __AK_MAX_BLOCK;
	}
}

/*
 * The class of an object of @size bytes; -1 if it needs whole pages. The
 * object is compared with each block's room, not size + header with the
 * block: that sum wraps for sizes near 2^64.
 */
static __ak_always_inline int __ak_alloc_class(unsigned long long size)
{
	int class;

	for (class = 0; class < AK_ALLOC_CLASSES; class++)
		if (size <= __ak_block_size(class) - __AK_BLOCK_HDR)
			return class;
	return -1;
}

static __ak_always_inline unsigned int __ak_blocks_per_page(unsigned int class)
{
	return __AK_PAGE_DATA / __ak_block_size(class);
}

/* Count a failed allocation by its reason; give the reason to the caller. */
static __ak_always_inline void __arena *__ak_alloc_fail(int err, int *errp)
{
	if (err == -ENOMEM)
		__ak_stat_add(fail_nomem, 1);
	else if (err == -EBUSY)
		__ak_stat_add(fail_busy, 1);
	else if (err == -AK_EBUDGET)
		__ak_stat_add(fail_budget, 1);
	else
		__ak_stat_add(fail_size, 1);
	if (errp)
		*errp = err;
	return 0;
}

static __ak_always_inline void __ak_page_push(struct __ak_page __arena *__arena *head,
				  struct __ak_page __arena *page, unsigned char list)
{
	page->list = list;
	page->next = *head;
	ak_arena_store_barrier();
	page->prev = 0;
	if (*head)
		(*head)->prev = page;
	*head = page;
}

static __ak_always_inline void __ak_page_unlink(struct __ak_class __arena *cls, struct __ak_page __arena *page)
{
	struct __ak_page __arena *__arena *head =
		page->list == __AK_ON_EMPTY ? &cls->empty : &cls->partial;

	if (page->prev)
		page->prev->next = page->next;
	else
		*head = page->next;
	if (page->next)
		page->next->prev = page->prev;
	page->next = 0;
	ak_arena_store_barrier();
	page->prev = 0;
	ak_arena_store_barrier();
	page->list = __AK_ON_NO_LIST;
}

/* The bytes an object of @class has in a block (or pages) of @bytes. */
static __ak_always_inline unsigned long long __ak_object_room(unsigned int class,
							     unsigned long long bytes)
{
	return bytes - (class == __AK_CLASS_LARGE ? __AK_PAGE_HDR : __AK_BLOCK_HDR);
}

/* Write a live block header at @block (@offset into its page), count it. */
static __ak_always_inline void __arena *__ak_hand_out(char __arena *block, unsigned int offset,
					  unsigned int class, unsigned long long bytes)
{
	struct __ak_block __arena *hdr = (struct __ak_block __arena *)block;

	hdr->magic = __AK_BLOCK_MAGIC;
	hdr->state = __AK_BLOCK_LIVE;
	hdr->class = class;
	hdr->offset = offset;
	__ak_stat_add(objects, 1);
	__ak_stat_add(bytes, bytes);
	AK_ALLOC_WATCH_TAKEN(block + __AK_BLOCK_HDR, __ak_object_room(class, bytes));
	return block + __AK_BLOCK_HDR;
}

/* Take a block from @page (on a list, with a free block). Under the lock. */
static __ak_always_inline void __arena *__ak_take_block(struct __ak_class __arena *cls,
					    struct __ak_page __arena *page, unsigned int class)
{
	unsigned int size = __ak_block_size(class), offset;
	char __arena *base = (char __arena *)page;

	if (page->list == __AK_ON_EMPTY) {
		__ak_page_unlink(cls, page);
		__ak_page_push(&cls->partial, page, __AK_ON_PARTIAL);
	}
	if (page->free) {
		offset = page->free;
		/* The link lives in the free block's object bytes. */
		page->free = *(unsigned int __arena *)(base + offset + __AK_BLOCK_HDR);
	} else {
		offset = page->bump;
		page->bump += size;
	}
	page->live++;
	cls->free_blocks--;
	if (!page->free && page->bump + size > AK_PAGE_SIZE)
		__ak_page_unlink(cls, page);	/* full */
	return __ak_hand_out(base + offset, offset, class, size);
}

/* Initialise a fresh page of @class; it is nobody else's yet. */
static __ak_always_inline void __ak_page_init(struct __ak_page __arena *page, unsigned int class)
{
	page->magic = __AK_PAGE_MAGIC;
	page->class = class;
	page->list = __AK_ON_NO_LIST;
	page->pages = 1;
	page->bump = __AK_PAGE_HDR;
	/* The rest is 0 already: the kernel hands out zeroed pages. */
}

/*
 * A fresh page for @class onto its lists; -ENOMEM or -EBUSY. With @obj, the
 * caller's block is cut from it before it is published, so that no other
 * CPU can take every block of the page first and leave the caller a
 * spurious -ENOMEM.
 */
static __ak_always_inline int __ak_add_page(unsigned int class, void __arena **obj)
{
	struct __ak_class __arena *cls = &ak_allocator.classes[class & (AK_ALLOC_CLASSES - 1)];
	struct __ak_page __arena *page = __ak_pages_get(1);
	unsigned int size = __ak_block_size(class), mine = 0;
	int err;

	if (!page)
		return -ENOMEM;
	__ak_page_init(page, class);
	if (obj) {
		mine = __AK_PAGE_HDR;
		page->bump += size;
		page->live = 1;
	}
	err = ak_lock_acquire(&ak_allocator.lock);
	if (err) {
		/* Cannot publish it: give it back rather than leak it. */
		__ak_pages_put(page, 1);
		return err;
	}
	if (mine)
		__ak_page_push(&cls->partial, page, __AK_ON_PARTIAL);
	else
		__ak_page_push(&cls->empty, page, __AK_ON_EMPTY);
	cls->free_blocks += __ak_blocks_per_page(class) - (mine ? 1 : 0);
	ak_lock_release(&ak_allocator.lock);
	__ak_stat_add(pages, 1);
	__ak_stat_add(slab_pages, 1);
	if (mine)
		*obj = __ak_hand_out((char __arena *)page + mine, mine, class, size);
	return 0;
}

static __ak_always_inline void __arena *__ak_alloc_large(unsigned long long size, int *errp)
{
	unsigned int pages = (size + __AK_PAGE_HDR + AK_PAGE_SIZE - 1) / AK_PAGE_SIZE;
	struct __ak_page __arena *page = __ak_pages_get(pages);

	if (!page)
		return __ak_alloc_fail(-ENOMEM, errp);
	__ak_page_init(page, __AK_CLASS_LARGE);
	page->pages = pages;
	page->live = 1;
	__ak_stat_add(pages, pages);
	__ak_stat_add(large_pages, pages);
	return __ak_hand_out((char __arena *)page + __AK_PAGE_HDR - __AK_BLOCK_HDR,
			     __AK_PAGE_HDR - __AK_BLOCK_HDR, __AK_CLASS_LARGE,
			     (unsigned long long)pages * AK_PAGE_SIZE);
}

static __ak_always_inline unsigned int __ak_drain_queued(unsigned int max);

/* A block of @class from the pages already taken, or NULL; 0 or -EBUSY. */
static __ak_always_inline int __ak_alloc_small(int class, void __arena **obj)
{
	struct __ak_class __arena *cls = &ak_allocator.classes[class & (AK_ALLOC_CLASSES - 1)];
	struct __ak_page __arena *page;
	int err = ak_lock_acquire(&ak_allocator.lock);

	if (err)
		return err;
	/* Frees that found the lock busy queued their blocks for us. */
	__ak_drain_queued(__AK_DRAIN_BATCH);
	page = cls->partial ? cls->partial : cls->empty;
	*obj = page ? __ak_take_block(cls, page, class) : 0;
	ak_lock_release(&ak_allocator.lock);
	return 0;
}

static __ak_always_inline void __arena *__ak_alloc(unsigned long long size, int sleepable, int *errp)
{
	void __arena *obj = 0;
	int class, err;

	if (!size || size > AK_ALLOC_MAX)
		return __ak_alloc_fail(size ? -E2BIG : -EINVAL, errp);
	class = __ak_alloc_class(size);
	if (class < 0) {
		if (!sleepable)
			return __ak_alloc_fail(-E2BIG, errp);
		return __ak_alloc_large(size, errp);
	}
	err = __ak_alloc_small(class, &obj);
	if (!err && !obj && sleepable)
		err = __ak_add_page(class, &obj);	/* no free block: a new page */
	if (err || !obj)
		return __ak_alloc_fail(err ? err : -ENOMEM, errp);
	return obj;
}

/*
 * The entry points, declared: defined below, or under AK_ALLOC_EXTERN in
 * another object of the program (see "Several objects" above).
 */
#if defined(__BPF__) && defined(AK_ALLOC_EXTERN)
#define __AK_ALLOC_DEFINE 0
#define __ak_alloc_entry extern
#else
#define __AK_ALLOC_DEFINE 1
#define __ak_alloc_entry __ak_global
#endif
__ak_alloc_entry unsigned long long __ak_alloc_sleepable(unsigned long long size,
							 __ak_nonnull int *err);
__ak_alloc_entry unsigned long long __ak_alloc_nosleep(unsigned long long size,
						       __ak_nonnull int *err);
__ak_alloc_entry int ak_free(__arg_arena void __arena *ptr);
__ak_alloc_entry int ak_free_nosleep(__arg_arena void __arena *ptr);
__ak_alloc_entry int ak_alloc_reserve(unsigned long long size, unsigned long long count);
__ak_alloc_entry int ak_alloc_trim(void);

#if __AK_ALLOC_DEFINE
/*
 * The entry points run out of line in BPF (__ak_global, arena.h), so the
 * verifier checks the allocator once, not again at every call site with
 * every state of the caller. A sleepable and a
 * non-sleepable function each: a global function is verified with no
 * knowledge of its arguments, so one that could reach the page kfuncs
 * would be refused in a non-sleepable program. They return the object as
 * an integer (a global function returns a scalar).
 */
__ak_global unsigned long long __ak_alloc_sleepable(unsigned long long size,
						    __ak_nonnull int *err)
{
	return (unsigned long long)__ak_alloc(size, 1, err);
}

__ak_global unsigned long long __ak_alloc_nosleep(unsigned long long size,
						  __ak_nonnull int *err)
{
	return (unsigned long long)__ak_alloc(size, 0, err);
}
#endif /* __AK_ALLOC_DEFINE */

/**
 * ak_alloc_err - allocate @size bytes, saying why when it cannot (sleepable)
 * @size: bytes wanted, 1..AK_ALLOC_MAX
 * @err: set to the reason on failure (may be NULL): -EINVAL for size 0,
 *	-E2BIG over AK_ALLOC_MAX, -ENOMEM when the arena is full, -EBUSY when
 *	the lock stayed busy, -AK_EBUDGET when the loop budget ran out
 *
 * Return: the object, or NULL (see *@err).
 */
static __ak_always_inline void __arena *ak_alloc_err(unsigned long long size, int *err)
{
	int e = 0;
	void __arena *obj = (void __arena *)__ak_alloc_sleepable(size, &e);

	if (!obj && err)
		*err = e;
	return obj;
}

/**
 * ak_alloc - allocate @size bytes of arena memory (sleepable programs)
 * @size: bytes wanted; above AK_ALLOC_MAX_SMALL, whole pages are used
 *
 * Return: the object, or NULL (ak_alloc_err says why; so do the stats).
 */
static __ak_always_inline void __arena *ak_alloc(unsigned long long size)
{
	return ak_alloc_err(size, 0);
}

/**
 * ak_alloc_nosleep_err - allocate from blocks already taken (any program)
 * @size: bytes wanted, at most AK_ALLOC_MAX_SMALL
 * @err: as for ak_alloc_err; -ENOMEM means the pool is empty (fill it with
 *	ak_alloc_reserve) and -E2BIG a size above AK_ALLOC_MAX_SMALL
 *
 * Return: the object, or NULL (see *@err).
 */
static __ak_always_inline void __arena *ak_alloc_nosleep_err(unsigned long long size, int *err)
{
	int e = 0;
	void __arena *obj = (void __arena *)__ak_alloc_nosleep(size, &e);

	if (!obj && err)
		*err = e;
	return obj;
}

/**
 * ak_alloc_nosleep - allocate from blocks already taken (any program)
 * @size: bytes wanted, at most AK_ALLOC_MAX_SMALL
 *
 * Return: the object, or NULL.
 */
static __ak_always_inline void __arena *ak_alloc_nosleep(unsigned long long size)
{
	return ak_alloc_nosleep_err(size, 0);
}

/* The block header as one word, as it reads in memory (little-endian). */
static __ak_always_inline unsigned long long __ak_block_word(unsigned int state, unsigned int class,
						 unsigned int offset)
{
	return __AK_BLOCK_MAGIC | (unsigned long long)state << 16 |
	       (unsigned long long)class << 24 | (unsigned long long)offset << 32;
}

/* Where a queued block links to the next: its object bytes, never its header. */
#define __ak_queue_link(block)						\
	(*(unsigned long long __arena *)((char __arena *)(block) + __AK_BLOCK_HDR))

/*
 * Check that @ptr is a live object of ours, without the lock: only pages
 * with a live block of their own can be freed, and this one has one.
 * Returns its page, header, class and offset, or -EINVAL, counted as a
 * double or a bad free.
 */
static __ak_always_inline int __ak_free_check(void __arena *ptr, struct __ak_page __arena **pagep,
				  struct __ak_block __arena **blockp, unsigned int *classp,
				  unsigned int *offsetp)
{
	unsigned long long at = (unsigned long long)ptr, word;
	unsigned int offset = (at - __AK_BLOCK_HDR) & (AK_PAGE_SIZE - 1);
	char __arena *block = (char __arena *)ptr - __AK_BLOCK_HDR;
	struct __ak_page __arena *page = (struct __ak_page __arena *)(block - offset);
	unsigned int class;

	if (at & 7 || ak_read_once(page->magic) != __AK_PAGE_MAGIC)
		goto bad;
	class = page->class;
	if (class == __AK_CLASS_LARGE) {
		if (offset != __AK_PAGE_HDR - __AK_BLOCK_HDR)
			goto bad;
	} else if (class >= AK_ALLOC_CLASSES || offset < __AK_PAGE_HDR ||
		   offset >= page->bump ||
		   (offset - __AK_PAGE_HDR) % __ak_block_size(class)) {
		goto bad;
	}
	word = ak_read_once(*(unsigned long long __arena *)block);
	if (word != __ak_block_word(__AK_BLOCK_LIVE, class, offset)) {
		/* A header of ours in another state: freed already. */
		if ((word & ~(0xffULL << 16)) ==
		    (__ak_block_word(__AK_BLOCK_LIVE, class, offset) & ~(0xffULL << 16))) {
			__ak_stat_add(double_frees, 1);
			return -EINVAL;
		}
		goto bad;
	}
	*pagep = page;
	*blockp = (struct __ak_block __arena *)block;
	*classp = class;
	*offsetp = offset;
	return 0;
bad:
	__ak_stat_add(bad_frees, 1);
	return -EINVAL;
}

/*
 * Move a live block to @state with a compare-and-swap, so that of two
 * frees racing for it exactly one wins; the other is a double free.
 */
static __ak_always_inline int __ak_claim(struct __ak_block __arena *block, unsigned int class,
			     unsigned int offset, unsigned int state)
{
	unsigned long long live = __ak_block_word(__AK_BLOCK_LIVE, class, offset);

	if (ak_cmpxchg((unsigned long long __arena *)block, live,
		       __ak_block_word(state, class, offset)) == live)
		return 0;
	__ak_stat_add(double_frees, 1);
	return -EINVAL;
}

/*
 * Push @block onto a queue (a stack of blocks linked through their object
 * bytes) without the lock. Only lock holders pop, one at a time, so a pop
 * never meets a block that left and came back (no ABA). -EBUSY if the top
 * kept changing for AK_LOCK_SPINS attempts.
 */
static __ak_always_inline int __ak_queue_push(unsigned long long __arena *top,
				  struct __ak_block __arena *block)
{
	unsigned long long old;
	unsigned int spins;

	for (spins = (unsigned int)ak_opaque_zero(); spins < AK_LOCK_SPINS; spins++) {
		old = ak_read_once(*top);
		__ak_queue_link(block) = old;
		if (ak_cmpxchg(top, old, (unsigned long long)block) == old)
			return 0;
		ak_spin_wait();
		ak_cond_break_label(spent);
	}
	return -EBUSY;
spent:
	return -AK_EBUDGET;
}

/* Pop one block off a queue; the lock must be held. NULL if it is empty. */
static __ak_always_inline struct __ak_block __arena *__ak_queue_pop(unsigned long long __arena *top)
{
	unsigned long long old;
	unsigned int spins;

	for (spins = (unsigned int)ak_opaque_zero(); spins < AK_LOCK_SPINS; spins++) {
		old = ak_read_once(*top);
		if (!old)
			return 0;
		if (ak_cmpxchg(top, old, __ak_queue_link((struct __ak_block __arena *)old)) == old)
			return (struct __ak_block __arena *)old;
		ak_spin_wait();
		ak_cond_break_label(spent);
	}
spent:
	return 0;
}

/*
 * May @page go back to the kernel? Not while a free may still be checking
 * a block on it: a free that passed the check and then claims its block
 * with a compare-and-swap would write into a page the kernel may have
 * handed out again, where a block at the same offset of a page of the same
 * class has exactly the live header it compares with (a double free that
 * loses its race would free another program's object). A free counts itself
 * into ak_allocator.freeing before it reads the page's magic; here the
 * magic is cleared before the count is read, both fully ordered, so either
 * the free sees no magic and refuses (the page has no live block: it was a
 * double or a bad free), or this sees the free and keeps the page.
 */
static __ak_always_inline int __ak_page_unwatched(struct __ak_page __arena *page)
{
	ak_xchg(&page->magic, 0);
	if (!ak_read_once(ak_allocator.freeing))
		return 1;
	ak_write_once(page->magic, __AK_PAGE_MAGIC);
	return 0;
}

/* Give the pages of a large object back; the lock is not held. */
static __ak_always_inline void __ak_put_large(struct __ak_page __arena *page)
{
	unsigned int pages = page->pages;

	__ak_pages_put(page, pages);
	__ak_stat_add(large_pages, -(unsigned long long)pages);
	__ak_stat_add(pages, -(unsigned long long)pages);
	__ak_stat_add(pages_returned, pages);
}

static __ak_always_inline void __ak_put_slab(struct __ak_page __arena *page)
{
	__ak_pages_put(page, 1);
	__ak_stat_add(slab_pages, -1ULL);
	__ak_stat_add(pages, -1ULL);
	__ak_stat_add(pages_returned, 1);
}

/*
 * Put @block back on its page's free list; under the lock. Returns the
 * page if it is now empty and may go back to the kernel (the caller does
 * that once the lock is released), NULL otherwise.
 */
static __ak_always_inline struct __ak_page __arena *__ak_free_block(struct __ak_block __arena *block,
							int may_return_page)
{
	unsigned int offset = block->offset;
	struct __ak_page __arena *page =
		(struct __ak_page __arena *)((char __arena *)block - offset);
	unsigned int class = page->class & (AK_ALLOC_CLASSES - 1);
	struct __ak_class __arena *cls = &ak_allocator.classes[class];
	unsigned int per_page = __ak_blocks_per_page(class);

	block->state = __AK_BLOCK_FREE;
	*(unsigned int __arena *)((char __arena *)block + __AK_BLOCK_HDR) = page->free;
	page->free = offset;
	cls->free_blocks++;
	if (page->list == __AK_ON_NO_LIST)
		__ak_page_push(&cls->partial, page, __AK_ON_PARTIAL);
	if (--page->live)
		return 0;
	__ak_page_unlink(cls, page);
	/* reserved <= AK_ALLOC_MAX_RESERVE: the sum cannot wrap. */
	if (may_return_page && cls->free_blocks >= cls->reserved + per_page &&
	    __ak_page_unwatched(page)) {
		cls->free_blocks -= per_page;
		return page;
	}
	__ak_page_push(&cls->empty, page, __AK_ON_EMPTY);
	return 0;
}

/*
 * Under the lock: put up to @max blocks that frees queued (the lock was
 * busy) on their free lists. Pages they empty stay for reuse or trim.
 * Returns how many were done.
 */
static __ak_always_inline unsigned int __ak_drain_queued(unsigned int max)
{
	struct __ak_block __arena *block;
	unsigned int done;

	for (done = (unsigned int)ak_opaque_zero(); done < max && ak_can_loop; done++) {
		block = __ak_queue_pop(&ak_allocator.queued);
		if (!block)
			break;
		__ak_free_block(block, 0);
	}
	return done;
}

/*
 * Return the pages of freed large objects (every free of one queues it
 * here). One that a free may still be checking stays queued for a later
 * call: -EBUSY.
 */
static __ak_always_inline int __ak_drain_deferred(void)
{
	struct __ak_block __arena *block;
	struct __ak_page __arena *page;
	int err;

	for (;;) {
		ak_cond_break_label(cut);
		if (!ak_read_once(ak_allocator.deferred))
			return 0;
		err = ak_lock_acquire(&ak_allocator.lock);
		if (err)
			return err;
		block = __ak_queue_pop(&ak_allocator.deferred);
		ak_lock_release(&ak_allocator.lock);
		if (!block)
			continue;
		page = (struct __ak_page __arena *)((char __arena *)block - block->offset);
		if (__ak_page_unwatched(page)) {
			__ak_put_large(page);
			continue;
		}
		err = __ak_queue_push(&ak_allocator.deferred, block);
		return err ? err : -EBUSY;
	}
cut:
	return -AK_EBUDGET;
}

static __ak_always_inline int __ak_free(void __arena *ptr, int sleepable)
{
	struct __ak_page __arena *page, *empty = 0;
	struct __ak_block __arena *block;
	unsigned long long bytes;
	unsigned int class, offset;
	int err;

	if (!ptr)
		return 0;
	/* Counted in while it reads the page: see __ak_page_unwatched. */
	ak_fetch_add(&ak_allocator.freeing, 1);
	err = __ak_free_check(ptr, &page, &block, &class, &offset);
	if (!err)
		err = __ak_claim(block, class, offset, class == __AK_CLASS_LARGE ?
				 __AK_BLOCK_DEFERRED : __AK_BLOCK_QUEUED);
	ak_fetch_add(&ak_allocator.freeing, -1ULL);
	if (err)
		return err;
	bytes = class == __AK_CLASS_LARGE ? (unsigned long long)page->pages * AK_PAGE_SIZE :
					    __ak_block_size(class);
	AK_ALLOC_WATCH_FREED(ptr, __ak_object_room(class, bytes));
	if (class == __AK_CLASS_LARGE) {
		/* Its pages go back in __ak_drain_deferred (ak_free calls it). */
		err = __ak_queue_push(&ak_allocator.deferred, block);
	} else {
		/* Never wait for the lock: queue the block for its next holder. */
		if (ak_lock_try(&ak_allocator.lock)) {
			err = __ak_queue_push(&ak_allocator.queued, block);
		} else {
			empty = __ak_free_block(block, sleepable);
			__ak_drain_queued(__AK_DRAIN_BATCH);
			ak_lock_release(&ak_allocator.lock);
		}
	}
	if (err) {
		/* Not queued: the object stays the caller's. */
		AK_ALLOC_WATCH_TAKEN(ptr, __ak_object_room(class, bytes));
		ak_write_once(*(unsigned long long __arena *)block,
			      __ak_block_word(__AK_BLOCK_LIVE, class, offset));
		return err;
	}
	__ak_stat_add(objects, -1ULL);
	__ak_stat_add(bytes, -bytes);
	if (empty)
		__ak_put_slab(empty);
	return 0;
}

#if __AK_ALLOC_DEFINE
/**
 * ak_free - free an object from ak_alloc or ak_alloc_nosleep (sleepable)
 * @ptr: the object, or NULL (nothing happens)
 *
 * Pages left without a live object go back to the kernel (beyond what
 * ak_alloc_reserve keeps), as do the pages of large objects, including
 * those ak_free_nosleep queued.
 *
 * Return: 0; -EINVAL if @ptr is not a live object of this allocator (freed
 * already, never handed out, or inside an object): nothing is changed and
 * the stats count it. A busy lock does not fail a free (the block is
 * queued); only a queue whose top kept changing for AK_LOCK_SPINS attempts
 * gives -EBUSY (or -AK_EBUDGET), and the object is then still allocated.
 */
__ak_global int ak_free(__arg_arena void __arena *ptr)
{
	int err = __ak_free(ptr, 1);

	__ak_drain_deferred();	/* best effort: a later call finishes it */
	return err;
}

/**
 * ak_free_nosleep - free an object from any program type
 * @ptr: the object, or NULL (nothing happens)
 *
 * Return: as ak_free. Emptied pages stay for reuse or ak_alloc_trim.
 */
__ak_global int ak_free_nosleep(__arg_arena void __arena *ptr)
{
	return __ak_free(ptr, 0);
}

/**
 * ak_alloc_reserve - keep @count objects of @size ready for
 * ak_alloc_nosleep (sleepable programs)
 * @size: object size, at most AK_ALLOC_MAX_SMALL
 * @count: free objects of that class wanted, at most AK_ALLOC_MAX_RESERVE;
 *	sleepable frees keep at least this many free blocks of the class from
 *	then on
 *
 * Return: 0; -EINVAL or -E2BIG for a size without a class, -E2BIG for a
 * count above AK_ALLOC_MAX_RESERVE (nothing is changed); -ENOMEM if the
 * arena is full; -EBUSY if the lock stayed busy; -AK_EBUDGET if the loop
 * budget ran out first (call again: the pages taken so far stay).
 */
__ak_global int ak_alloc_reserve(unsigned long long size, unsigned long long count)
{
	int class = __ak_alloc_class(size), err;
	struct __ak_class __arena *cls;

	if (!size || class < 0)
		return size ? -E2BIG : -EINVAL;
	if (count > AK_ALLOC_MAX_RESERVE)
		return -E2BIG;
	cls = &ak_allocator.classes[class & (AK_ALLOC_CLASSES - 1)];
	err = __ak_drain_deferred();
	if (err)
		return err;
	while (cls->free_blocks < count) {
		ak_cond_break_label(cut);
		err = __ak_add_page(class, 0);
		if (err)
			return err;
	}
	if (cls->reserved < count)
		cls->reserved = count;
	return 0;
cut:
	/* Keep what was taken for the call that finishes the job. */
	if (cls->reserved < count)
		cls->reserved = count;
	return -AK_EBUDGET;
}

/**
 * ak_alloc_trim - give every page without a live object back to the
 * kernel, the pool's reserve included (sleepable programs)
 *
 * Return: 0; -EBUSY (the lock stayed busy, or a free was checking a block
 * on a page to give back: call again); -AK_EBUDGET if the loop budget ran
 * out (call again).
 */
__ak_global int ak_alloc_trim(void)
{
	struct __ak_class __arena *cls;
	struct __ak_page __arena *page;
	unsigned int class;
	int err;

	err = __ak_drain_deferred();
	if (err)
		return err;
	while (ak_read_once(ak_allocator.queued)) {
		ak_cond_break_label(cut);
		err = ak_lock_acquire(&ak_allocator.lock);
		if (err)
			return err;
		__ak_drain_queued(__AK_DRAIN_BATCH);
		ak_lock_release(&ak_allocator.lock);
	}
	for (class = (unsigned int)ak_opaque_zero(); class < AK_ALLOC_CLASSES; class++) {
		cls = &ak_allocator.classes[class & (AK_ALLOC_CLASSES - 1)];
		cls->reserved = 0;
		for (;;) {
			ak_cond_break_label(cut);
			if (!ak_read_once(cls->empty))
				break;
			err = ak_lock_acquire(&ak_allocator.lock);
			if (err)
				return err;
			page = cls->empty;
			if (page && !__ak_page_unwatched(page)) {
				ak_lock_release(&ak_allocator.lock);
				return -EBUSY;	/* a free is checking a block on it */
			}
			if (page) {
				__ak_page_unlink(cls, page);
				cls->free_blocks -= __ak_blocks_per_page(class);
			}
			ak_lock_release(&ak_allocator.lock);
			if (page)
				__ak_put_slab(page);
		}
	}
	return 0;
cut:
	return -AK_EBUDGET;
}
#endif /* __AK_ALLOC_DEFINE */

#endif /* __ARENAKIT_ALLOC_H */
