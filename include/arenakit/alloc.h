/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/alloc.h - a reusing allocator for arena memory.
 *
 * Small objects (up to ARENA_ALLOC_MAX_SMALL bytes) come from eight size
 * classes of 16..2048-byte blocks, each with a free list: a freed block is
 * reused by the next allocation of its class. Larger objects take whole
 * pages, returned to the kernel when freed. Every object starts 8 bytes into
 * its block, after a header holding the block's size, so no object's
 * address has low 32 bits of 0 (what page 0 at a 4 GiB-aligned arena base
 * would give, indistinguishable from NULL).
 *
 * One lock (a compare-and-swap word in the arena) guards the free lists, so
 * programs on several CPUs may allocate and free at once, and free what
 * another CPU allocated. Waiting for it is bounded by may_goto: an
 * allocation that cannot get the lock fails (NULL) instead of spinning.
 * Statistics are updated with arena atomics and can be read at any time,
 * from BPF or through the mmap (arena_allocator.stats).
 *
 * On 6.12 the arena's page kfuncs are for sleepable programs only:
 *   arena_alloc, arena_free, arena_alloc_reserve  sleepable programs
 *   arena_alloc_nosleep, arena_free_nosleep        any program: they only use
 *       the free lists (the pool that arena_alloc_reserve fills); a large
 *       object freed there is queued and its pages go back to the kernel at
 *       the next arena_free or arena_alloc_reserve.
 *
 * The program's arena map must be declared before this header is included
 * (ARENA_MAP from arena.h) and named `arena`, or ARENA_ALLOC_MAP defined to
 * its name.
 */
#ifndef __ARENAKIT_ALLOC_H
#define __ARENAKIT_ALLOC_H

#include <arenakit/arena.h>

#ifndef ARENA_ALLOC_MAP
#define ARENA_ALLOC_MAP arena
#endif

#define ARENA_PAGE_SIZE 4096
#define ARENA_ALLOC_CLASSES 8
#define __ARENA_ALLOC_HEADER 8
#define __ARENA_ALLOC_MIN_BLOCK 16
#define __ARENA_ALLOC_MAX_BLOCK (__ARENA_ALLOC_MIN_BLOCK << (ARENA_ALLOC_CLASSES - 1))
/* The largest object that comes from a size class. */
#define ARENA_ALLOC_MAX_SMALL (__ARENA_ALLOC_MAX_BLOCK - __ARENA_ALLOC_HEADER)

struct __arena_free_block {
	struct __arena_free_block __arena *next;
};

struct arena_alloc_stats {
	unsigned long long pages;	/* taken from the kernel, not yet returned */
	unsigned long long objects;	/* handed out, not yet freed */
	unsigned long long bytes;	/* their blocks' bytes, headers included */
	unsigned long long failures;	/* allocations that returned NULL */
};

struct arena_allocator {
	unsigned int lock;
	unsigned int unused;
	struct __arena_free_block __arena *free[ARENA_ALLOC_CLASSES];
	unsigned long long free_blocks[ARENA_ALLOC_CLASSES];
	/* Large objects freed by arena_free_nosleep, awaiting a sleepable free. */
	struct __arena_free_block __arena *deferred;
	struct arena_alloc_stats stats;
};

#ifdef __BPF__
struct arena_allocator __arena_global arena_allocator;

static inline void __arena *__arena_pages_get(unsigned int pages)
{
	return bpf_arena_alloc_pages(&ARENA_ALLOC_MAP, 0, pages, -1 /* NUMA_NO_NODE */, 0);
}

static inline void __arena_pages_put(void __arena *ptr, unsigned int pages)
{
	bpf_arena_free_pages(&ARENA_ALLOC_MAP, ptr, pages);
}
#else
#include <stdlib.h>

/* User space (host tests): pages from the C heap, with a settable limit. */
static struct arena_allocator arena_allocator;
static unsigned long long arena_user_pages_left = ~0ULL;

static inline void *__arena_pages_get(unsigned int pages)
{
	void *p;

	if (pages > arena_user_pages_left)
		return NULL;
	p = aligned_alloc(ARENA_PAGE_SIZE, (size_t)pages * ARENA_PAGE_SIZE);
	if (p)
		arena_user_pages_left -= pages;
	return p;
}

static inline void __arena_pages_put(void *ptr, unsigned int pages)
{
	free(ptr);
	arena_user_pages_left += pages;
}
#endif

/* The size class of a block holding @size bytes plus the header; -1: pages. */
static inline int __arena_alloc_class(unsigned long long size)
{
	unsigned long long need = size + __ARENA_ALLOC_HEADER;

	if (need <= 16)
		return 0;
	if (need <= 32)
		return 1;
	if (need <= 64)
		return 2;
	if (need <= 128)
		return 3;
	if (need <= 256)
		return 4;
	if (need <= 512)
		return 5;
	if (need <= 1024)
		return 6;
	if (need <= 2048)
		return 7;
	return -1;
}

static inline unsigned long long __arena_block_size(int class)
{
	return (unsigned long long)__ARENA_ALLOC_MIN_BLOCK << class;
}

static inline int __arena_alloc_lock(void)
{
	for (;;) {
		if (__sync_val_compare_and_swap(&arena_allocator.lock, 0, 1) == 0)
			return 0;
		cond_break_label(busy);
	}
busy:
	return -1;
}

static inline void __arena_alloc_unlock(void)
{
	__sync_lock_test_and_set(&arena_allocator.lock, 0);
}

/* Hand out @block of @bytes: write its header, count it. */
static inline void __arena *__arena_alloc_hand_out(char __arena *block, unsigned long long bytes)
{
	*(unsigned long long __arena *)block = bytes;
	__sync_fetch_and_add(&arena_allocator.stats.objects, 1);
	__sync_fetch_and_add(&arena_allocator.stats.bytes, bytes);
	return block + __ARENA_ALLOC_HEADER;
}

static inline void __arena *__arena_alloc_failed(void)
{
	__sync_fetch_and_add(&arena_allocator.stats.failures, 1);
	return 0;
}

/* Take a block of @class off its free list; NULL if empty or locked out. */
static inline void __arena *__arena_alloc_pop(int class)
{
	struct __arena_free_block __arena *block;

	if (class < 0 || class >= ARENA_ALLOC_CLASSES || __arena_alloc_lock())
		return 0;
	block = arena_allocator.free[class];
	if (block) {
		arena_allocator.free[class] = block->next;
		arena_allocator.free_blocks[class]--;
	}
	__arena_alloc_unlock();
	return block;
}

/* Cut a fresh page into blocks of @class and put them on its free list. */
static inline int __arena_alloc_refill(int class)
{
	unsigned long long size = __arena_block_size(class);
	unsigned long long n = ARENA_PAGE_SIZE / size, i;
	char __arena *page = __arena_pages_get(1);
	struct __arena_free_block __arena *last;

	if (!page)
		return -1;
	__sync_fetch_and_add(&arena_allocator.stats.pages, 1);
	/* Chain the blocks outside the lock; a cut chain is just shorter. */
	for (i = arena_opaque_zero(); i + 1 < n && can_loop; i++)
		((struct __arena_free_block __arena *)(page + i * size))->next =
			(struct __arena_free_block __arena *)(page + (i + 1) * size);
	last = (struct __arena_free_block __arena *)(page + i * size);
	if (__arena_alloc_lock()) {
		/* Cannot publish the blocks: give the page back. */
		__arena_pages_put(page, 1);
		__sync_fetch_and_add(&arena_allocator.stats.pages, -1);
		return -1;
	}
	last->next = arena_allocator.free[class];
	arena_allocator.free[class] = (struct __arena_free_block __arena *)page;
	arena_allocator.free_blocks[class] += i + 1;
	__arena_alloc_unlock();
	return 0;
}

/* Return the pages of large objects that arena_free_nosleep queued. */
static inline void __arena_alloc_drain_deferred(void)
{
	struct __arena_free_block __arena *block;
	unsigned long long pages;

	for (;;) {
		cond_break_label(out);
		if (!arena_allocator.deferred || __arena_alloc_lock())
			break;
		block = arena_allocator.deferred;
		if (block)
			arena_allocator.deferred = block->next;
		__arena_alloc_unlock();
		if (!block)
			break;
		pages = *(unsigned long long __arena *)((char __arena *)block + 8) / ARENA_PAGE_SIZE;
		__arena_pages_put(block, pages);
		__sync_fetch_and_add(&arena_allocator.stats.pages, -pages);
	}
out:
	return;
}

/**
 * arena_alloc_nosleep - allocate from the free lists only (any program type)
 * @size: bytes wanted, at most ARENA_ALLOC_MAX_SMALL
 *
 * Return: the object, or NULL if @size is 0 or too large, the class's free
 * list is empty (fill it with arena_alloc_reserve), or the lock was busy.
 */
static inline void __arena *arena_alloc_nosleep(unsigned long long size)
{
	int class = __arena_alloc_class(size);
	char __arena *block;

	if (!size || class < 0)
		return __arena_alloc_failed();
	block = __arena_alloc_pop(class);
	if (!block)
		return __arena_alloc_failed();
	return __arena_alloc_hand_out(block, __arena_block_size(class));
}

/**
 * arena_alloc - allocate @size bytes of arena memory (sleepable programs)
 * @size: bytes wanted; above ARENA_ALLOC_MAX_SMALL, whole pages are used
 *
 * Return: the object (8-byte aligned), or NULL if @size is 0, the arena is
 * full, or the lock stayed busy for a whole loop budget.
 */
static inline void __arena *arena_alloc(unsigned long long size)
{
	int class = __arena_alloc_class(size);
	char __arena *block;

	if (!size)
		return __arena_alloc_failed();
	if (class < 0) {
		unsigned long long pages =
			(size + __ARENA_ALLOC_HEADER + ARENA_PAGE_SIZE - 1) / ARENA_PAGE_SIZE;

		if (pages >= (1ULL << 20))	/* beyond any arena: 4 GiB */
			return __arena_alloc_failed();
		block = __arena_pages_get(pages);
		if (!block)
			return __arena_alloc_failed();
		__sync_fetch_and_add(&arena_allocator.stats.pages, pages);
		return __arena_alloc_hand_out(block, pages * ARENA_PAGE_SIZE);
	}
	block = __arena_alloc_pop(class);
	if (!block && !__arena_alloc_refill(class))
		block = __arena_alloc_pop(class);
	if (!block)
		return __arena_alloc_failed();
	return __arena_alloc_hand_out(block, __arena_block_size(class));
}

/**
 * arena_alloc_reserve - fill the pool: make @count objects of @size
 * available to arena_alloc_nosleep (sleepable programs)
 * @size: object size, at most ARENA_ALLOC_MAX_SMALL
 * @count: free objects of that class wanted
 *
 * Return: 0, -EINVAL for a size without a class, -ENOMEM if the arena is
 * full, -ARENA_EBUDGET if the loop budget ran out first (call again).
 */
static inline int arena_alloc_reserve(unsigned long long size, unsigned long long count)
{
	int class = __arena_alloc_class(size);

	if (!size || class < 0)
		return -EINVAL;
	__arena_alloc_drain_deferred();
	while (arena_allocator.free_blocks[class] < count) {
		cond_break_label(cut);
		if (__arena_alloc_refill(class))
			return -ENOMEM;
	}
	return 0;
cut:
	return -ARENA_EBUDGET;
}

/*
 * Give @ptr back: small blocks to their free list, large ones' pages to the
 * kernel (@pages_now) or to the deferred queue. The counters drop only once
 * the block is back; a lock busy for a whole budget leaves it counted as in
 * use, so a leak shows in the statistics instead of hiding.
 */
static inline void __arena_free(void __arena *ptr, int pages_now)
{
	char __arena *block;
	struct __arena_free_block __arena *freed;
	unsigned long long bytes;
	int class;

	if (!ptr)
		return;
	block = (char __arena *)ptr - __ARENA_ALLOC_HEADER;
	freed = (struct __arena_free_block __arena *)block;
	bytes = *(unsigned long long __arena *)block;
	if (bytes > __ARENA_ALLOC_MAX_BLOCK && pages_now) {
		__arena_pages_put(block, bytes / ARENA_PAGE_SIZE);
		__sync_fetch_and_add(&arena_allocator.stats.pages, -(bytes / ARENA_PAGE_SIZE));
	} else if (bytes > __ARENA_ALLOC_MAX_BLOCK) {
		/* The link overwrites the header: keep the size past it. */
		*(unsigned long long __arena *)(block + 8) = bytes;
		if (__arena_alloc_lock())
			return;
		freed->next = arena_allocator.deferred;
		arena_allocator.deferred = freed;
		__arena_alloc_unlock();
	} else {
		class = __arena_alloc_class(bytes - __ARENA_ALLOC_HEADER);
		if (class < 0 || __arena_alloc_lock())
			return;
		freed->next = arena_allocator.free[class];
		arena_allocator.free[class] = freed;
		arena_allocator.free_blocks[class]++;
		__arena_alloc_unlock();
	}
	__sync_fetch_and_add(&arena_allocator.stats.objects, -1);
	__sync_fetch_and_add(&arena_allocator.stats.bytes, -bytes);
}

/**
 * arena_free - free an object from arena_alloc or arena_alloc_nosleep
 * (sleepable programs: large objects' pages go back to the kernel)
 * @ptr: the object, or NULL (nothing happens)
 */
static inline void arena_free(void __arena *ptr)
{
	__arena_free(ptr, 1);
	__arena_alloc_drain_deferred();
}

/**
 * arena_free_nosleep - free an object from any program type
 * @ptr: the object, or NULL (nothing happens)
 */
static inline void arena_free_nosleep(void __arena *ptr)
{
	__arena_free(ptr, 0);
}

#endif /* __ARENAKIT_ALLOC_H */
