/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/alloc_impl.h - the inside of alloc.h: the allocator's bodies.
 * Internal: include <arenakit/alloc.h>, which includes this header once its
 * types and calls are declared. Nothing here is API.
 *
 * By mechanism, each file using only what the ones before it define:
 *   alloc_types.h       the arena-resident structs (through alloc.h)
 *   alloc_impl_pages.h  size classes, page lists, blocks cut from pages,
 *                       spare pages, pages added to a class
 *   alloc_impl_free.h   the lock-free claim, the queues, blocks put back,
 *                       when an emptied page may go
 *   alloc_impl_cache.h  the CPU caches
 *   alloc_impl.h        large objects, the shared path of an allocation, the entry points
 *                       (each CPU's cache first, then the shared path), and
 *                       the inline calls of alloc.h
 */
#ifndef __ARENAKIT_ALLOC_H
#error "<arenakit/alloc_impl.h> is internal: include <arenakit/alloc.h>"
#elif !defined(__ARENAKIT_ALLOC_IMPL_H)
#define __ARENAKIT_ALLOC_IMPL_H

#include <arenakit/alloc_impl_pages.h>
#include <arenakit/alloc_impl_free.h>
#include <arenakit/alloc_impl_cache.h>

/*
 * A block of @class from @page (on a list, with a free block), live and
 * counted; under the lock. NULL if the live byte's word kept changing (the
 * block goes back).
 */
static __ak_always_inline void __arena *__ak_take_block(struct __ak_class __arena *cls,
							struct __ak_page __arena *page,
							unsigned int class)
{
	unsigned int size = __ak_block_size(class);
	char __arena *block = (char __arena *)page + __ak_page_cut(page, size);

	__ak_page_taken(cls, page, size, 1);

	if (__ak_mark_live(block)) {
		__ak_put_block_kept(block);
		return 0;
	}
	return __ak_hand_out(block, class, size);
}

/* A block of @class from the pages already taken, or NULL; 0 or -EBUSY. */
static __ak_always_inline int __ak_alloc_small(int class, void __arena **obj)
{
	struct __ak_class __arena *cls = __ak_class_of(class);
	struct __ak_page __arena *page;
	int err = ak_lock_acquire(&ak_allocator.lock);

	if (err)
		return err;
	/* Frees that found the lock busy queued their blocks for us. */
	__ak_drain_queued(__AK_DRAIN_BATCH);
	page = cls->partial ? cls->partial : cls->empty;
	*obj = page ? __ak_take_block(cls, page, class) : 0;
	ak_lock_release(&ak_allocator.lock);
	return page && !*obj ? -EBUSY : 0;
}

/* A large object: pages of its own, counted, its header marked under the lock. */
static __ak_always_inline void __arena *__ak_alloc_large(unsigned long long size, int *errp)
{
	unsigned int pages = (size + __AK_PAGE_HDR + AK_PAGE_SIZE - 1) / AK_PAGE_SIZE;
	struct __ak_page __arena *page = __ak_pages_get(pages);
	int err;

	/* The spare pages may be what the arena lacks: give them back, try again. */
	if (!page && ak_read_once(ak_allocator.stats.spare_pages) && !__ak_spare_trim(0))
		page = __ak_pages_get(pages);
	if (!page)
		return __ak_alloc_fail(-ENOMEM, errp);
	__ak_page_init(page, __AK_CLASS_LARGE);
	page->pages = pages;
	page->live = 1;
	page->lives[0] = 1;
	/* Its header bit (__ak_headers) changes under the lock only. */
	err = ak_lock_acquire(&ak_allocator.lock);
	if (err) {
		__ak_pages_put(page, pages);
		return __ak_alloc_fail(err, errp);
	}
	__ak_header_mark(page, 1);
	ak_lock_release(&ak_allocator.lock);
	__ak_count_taken(pages, 1);
	return __ak_hand_out((char __arena *)page + __AK_PAGE_HDR, __AK_CLASS_LARGE,
			     (unsigned long long)pages * AK_PAGE_SIZE);
}

/*
 * The shared path of an allocation: a block from its class's pages (a new
 * page if none is free), or a large object's own pages.
 */
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
	/*
	 * Each way through __ak_alloc_class leaves the verifier a different
	 * range of classes, which the branches below on the class make
	 * precise, and precise ranges never prune: the rest of the allocation
	 * would be verified once per way. A zero it cannot see through makes
	 * the class any value, one state for all ways.
	 */
	class |= (int)ak_opaque_zero();
	err = __ak_alloc_small(class, &obj);
	if (!err && !obj)
		err = __ak_add_page(class, &obj, sleepable);	/* no free block: a new page */
	if (err || !obj)
		return __ak_alloc_fail(err ? err : -ENOMEM, errp);
	return obj;
}

#if __AK_ALLOC_DEFINE
/*
 * In BPF, the CPU-cache path and the shared path of each call are functions
 * of their own (static, out of line), and the entry point calls one, then
 * maybe the other, keeping nothing on its stack: a program's 512 bytes of
 * stack (over every frame of a call chain) pay for the larger of the two
 * paths' spills, not for both inlined into one frame.
 */
#define __ak_alloc_path __ak_apart

/*
 * Each call's two paths: the CPU's cache, and the shared path. An object
 * without CPU caches (AK_ALLOC_CPUS 0) has the functions of the #else
 * below: its cache path never serves, and its shared path is inlined into
 * the entry point. Its short stack has no frame to spare either, so it also
 * skips the reclaim before -ENOMEM (__ak_alloc_either) and the spare pages'
 * trim after a sleepable free (__ak_spare_overflow): the only two other
 * places where it differs.
 */
#if AK_ALLOC_CPUS
/* An object of @size from this CPU's cache, as an integer; 0: take the shared path. */
__ak_alloc_path unsigned long long __ak_alloc_cached(unsigned long long size)
{
	int class = __ak_alloc_class(size);

	if (!size || class < 0)
		return 0;
	class |= (int)ak_opaque_zero();	/* one verifier state: see __ak_alloc */
	return (unsigned long long)__ak_cache_alloc(class);
}

/*
 * The shared path is called twice (again after a reclaim): a global
 * function for each kind of call, so the verifier checks it once, not once
 * per call site (a static function is checked again at every call).
 */
__ak_global unsigned long long __ak_alloc_shared_sleepable(unsigned long long size,
							   __ak_nonnull int *err)
{
	return (unsigned long long)__ak_alloc(size, 1, err);
}

__ak_global unsigned long long __ak_alloc_shared_nosleep(unsigned long long size,
							 __ak_nonnull int *err)
{
	return (unsigned long long)__ak_alloc(size, 0, err);
}

#define __ak_alloc_shared(size, sleepable, err)				\
	((sleepable) ? __ak_alloc_shared_sleepable(size, err) :		\
		       __ak_alloc_shared_nosleep(size, err))

__ak_alloc_path int __ak_free_cached(void __arena *ptr, int sleepable)
{
	return ptr ? __ak_cache_free(ptr, sleepable) : 0;
}

__ak_alloc_path int __ak_free_shared(void __arena *ptr, int sleepable)
{
	return __ak_free(ptr, sleepable);
}
#else
static __ak_always_inline unsigned long long __ak_alloc_cached(unsigned long long size)
{
	return (void)size, 0;
}

static __ak_always_inline unsigned long long __ak_alloc_shared(unsigned long long size,
								int sleepable, int *err)
{
	return (unsigned long long)__ak_alloc(size, sleepable, err);
}

/* 1: the shared path must do it (as the cache path says when it cannot). */
static __ak_always_inline int __ak_free_cached(void __arena *ptr, int sleepable)
{
	return (void)ptr, (void)sleepable, 1;
}

static __ak_always_inline int __ak_free_shared(void __arena *ptr, int sleepable)
{
	return __ak_free(ptr, sleepable);
}
#endif /* AK_ALLOC_CPUS */

/*
 * The body of both entry points: the CPU's cache, else the shared path.
 * When the arena is full, free blocks may still wait in CPU caches and
 * empty pages on other classes' lists: they are brought back (a call of
 * its own, beside the shared path's rather than below it on the stack),
 * and the shared path tried once more, before -ENOMEM is said and counted.
 * Not with the caches off (AK_ALLOC_CPUS 0): that object's stack is short.
 */
static __ak_always_inline unsigned long long __ak_alloc_either(unsigned long long size,
							      int sleepable, int *err)
{
	unsigned long long obj = __ak_alloc_cached(size);

	if (obj)
		return obj;
	obj = __ak_alloc_shared(size, sleepable, err);
	if (AK_ALLOC_CPUS && !obj && *err == -ENOMEM && !__ak_alloc_reclaim())
		obj = __ak_alloc_shared(size, sleepable, err);
	if (!obj && *err == -ENOMEM)
		__ak_stat_add(fail_nomem, 1);
	return obj;
}

/*
 * The entry points run out of line in BPF (__ak_global, arena.h), so the
 * verifier checks the allocator once, not again at every call site with
 * every state of the caller. A sleepable and a non-sleepable function
 * each: a global function is verified with no knowledge of its arguments,
 * so one that could reach the page kfuncs would be refused in a
 * non-sleepable program. They return the object as an integer (a global
 * function returns a scalar).
 */
__ak_global unsigned long long __ak_alloc_sleepable(unsigned long long size,
						    __ak_nonnull int *err)
{
	return __ak_alloc_either(size, 1, err);
}

__ak_global unsigned long long __ak_alloc_nosleep(unsigned long long size,
						  __ak_nonnull int *err)
{
	return __ak_alloc_either(size, 0, err);
}

__ak_global unsigned long long __ak_alloc_cache_only(unsigned long long size)
{
	return __ak_alloc_cached(size);
}

/* ak_free: documented in alloc.h. */
__ak_global int ak_free(__arg_arena void __arena *ptr)
{
	int err = __ak_free_cached(ptr, 1);

	if (err == 1)
		err = __ak_free_shared(ptr, 1);
	__ak_spare_overflow();
	__ak_drain_deferred();	/* best effort: a later call finishes it */
	return err;
}

__ak_global int ak_free_nosleep(__arg_arena void __arena *ptr)
{
	int err = __ak_free_cached(ptr, 0);

	return err == 1 ? __ak_free_shared(ptr, 0) : err;
}

/*
 * Raise @cls's reserve to @count, never lower it; under the lock, where
 * every reader of it reads it (refills, the frees that empty a page, the
 * reclaim) and ak_alloc_trim zeroes it: two reserves racing leave the
 * larger, where a read and a store of each could leave the smaller.
 * 0, or -EBUSY / -AK_EBUDGET (nothing changed).
 */
static __ak_always_inline int __ak_reserve_raise(struct __ak_class __arena *cls,
						 unsigned long long count)
{
	int err = ak_lock_acquire(&ak_allocator.lock);

	if (err)
		return err;
	if (cls->reserved < count)
		cls->reserved = count;
	ak_lock_release(&ak_allocator.lock);
	return 0;
}

__ak_global int ak_alloc_reserve(unsigned long long size, unsigned long long count)
{
	int class = __ak_alloc_class(size), err;
	struct __ak_class __arena *cls;

	if (!size || class < 0)
		return size ? -E2BIG : -EINVAL;
	if (count > AK_ALLOC_MAX_RESERVE)
		return -E2BIG;
	cls = __ak_class_of(class);
	err = __ak_drain_deferred();
	if (err)
		return err;
	while (ak_read_once(cls->free_blocks) < count) {
		ak_cond_break_label(cut);
		err = __ak_add_page(class, 0, 1);
		if (err)
			return err;
	}
	return __ak_reserve_raise(cls, count);
cut:
	/* Keep what was taken for the call that finishes the job (if the lock lets us). */
	__ak_reserve_raise(cls, count);
	return -AK_EBUDGET;
}

/*
 * The reclaim (__ak_alloc_reclaim, alloc.h), in pieces that are global
 * functions each: the verifier checks each once, for any CPU or class,
 * instead of once for every value its loop's counter takes.
 */

/*
 * Every block in @cpu's cache back on its page, the cache held a moment as
 * its own CPU would hold it.
 */
__ak_global int __ak_reclaim_cache(unsigned int cpu)
{
	struct __ak_cpu_cache __arena *cache;
	unsigned int class;
	int err;

	if (cpu >= AK_ALLOC_CPU_SLOTS)
		return -EINVAL;
	cache = &ak_allocator.cpus[cpu];
	err = ak_lock_acquire(&cache->lock);
	if (err)
		return err;
	for (class = (unsigned int)ak_opaque_zero(); class < AK_ALLOC_CLASSES; class++) {
		if (!ak_can_loop) {
			err = -AK_EBUDGET;
			break;
		}
		/*
		 * __ak_cache_flush's loop, with the blocks put back here and
		 * not by __ak_put_block_kept: ak_alloc reaches this through its
		 * reclaim, under a sleepable update's migration, and one frame
		 * more would pass the verifier's 8 below a user's program.
		 */
		if (cache->count[class] && !ak_lock_acquire(&ak_allocator.lock)) {
			while (cache->count[class] && ak_can_loop)
				__ak_free_block(__ak_cache_pop(cache, class), 0);
			ak_lock_release(&ak_allocator.lock);
		}
		if (cache->count[class]) {
			err = -EBUSY;	/* the lock stayed busy, or the budget ran out */
			break;
		}
	}
	ak_lock_release(&cache->lock);
	return err;
}

/* @class's empty pages past its reserve become spare. */
__ak_global int __ak_reclaim_class(unsigned int class)
{
	struct __ak_class __arena *cls;
	struct __ak_page __arena *page;
	unsigned int per_page;
	int err;

	if (class >= AK_ALLOC_CLASSES)
		return -EINVAL;
	cls = __ak_class_of(class);
	per_page = __ak_blocks_per_page(class);
	for (;;) {
		ak_cond_break_label(cut);
		if (!ak_read_once(cls->empty))
			return 0;
		err = ak_lock_acquire(&ak_allocator.lock);
		if (err)
			return err;
		page = cls->empty;
		if (!page || cls->free_blocks < cls->reserved + per_page) {
			ak_lock_release(&ak_allocator.lock);
			return 0;	/* none, or the reserve's */
		}
		if (!__ak_page_unwatched(page)) {
			ak_lock_release(&ak_allocator.lock);
			return -EBUSY;	/* a free is checking a block on it */
		}
		__ak_page_unlink(cls, page);
		__ak_slab_to_spare(cls, page, per_page);
		ak_lock_release(&ak_allocator.lock);
	}
cut:
	return -AK_EBUDGET;
}

__ak_global int __ak_alloc_reclaim(void)
{
	unsigned int cpu, class;
	int err = 0;

	for (cpu = (unsigned int)ak_opaque_zero(); cpu < AK_ALLOC_CPU_SLOTS && !err; cpu++) {
		ak_cond_break_label(cut);
		err = __ak_reclaim_cache(cpu);
	}
	while (!err && ak_read_once(ak_allocator.queued)) {
		ak_cond_break_label(cut);
		err = ak_lock_acquire(&ak_allocator.lock);
		if (err)
			return err;
		__ak_drain_queued(__AK_DRAIN_BATCH);
		ak_lock_release(&ak_allocator.lock);
	}
	for (class = (unsigned int)ak_opaque_zero(); class < AK_ALLOC_CLASSES && !err; class++) {
		ak_cond_break_label(cut);
		err = __ak_reclaim_class(class);
	}
	return err;
cut:
	return -AK_EBUDGET;
}

__ak_global int ak_alloc_trim(void)
{
	unsigned int class;
	int err;

	err = __ak_drain_deferred();
	if (err)
		return err;
	/* Under the lock, as __ak_reserve_raise raises them. */
	err = ak_lock_acquire(&ak_allocator.lock);
	if (err)
		return err;
	for (class = (unsigned int)ak_opaque_zero(); class < AK_ALLOC_CLASSES && ak_can_loop; class++)
		__ak_class_of(class)->reserved = 0;
	ak_lock_release(&ak_allocator.lock);
	if (class < AK_ALLOC_CLASSES)
		return -AK_EBUDGET;
	/* Every empty page becomes spare, and every spare page goes back. */
	return __ak_alloc_reclaim() ?: __ak_spare_trim(0);
}
#endif /* __AK_ALLOC_DEFINE */

/* ---- the inline calls alloc.h declares (documented there) ---- */

static __ak_always_inline int ak_alloc_live(const struct ak_allocator __arena *a,
					    unsigned long long *objects,
					    unsigned long long *bytes)
{
	unsigned long long n = ak_read_once(a->stats.objects), b = ak_read_once(a->stats.bytes);
	unsigned int cpu;
	int err = 0;

	for (cpu = (unsigned int)ak_opaque_zero(); cpu < AK_ALLOC_CPU_SLOTS; cpu++) {
		if (!ak_can_loop) {
			err = -AK_EBUDGET;
			break;
		}
		n += ak_read_once(a->cpus[cpu].objects);
		b += ak_read_once(a->cpus[cpu].bytes);
	}
	if (objects)
		*objects = n;
	if (bytes)
		*bytes = b;
	return err;
}

static __ak_always_inline int ak_alloc_stats_read(const struct ak_allocator __arena *a,
						  struct ak_alloc_stats *out)
{
	const struct ak_alloc_stats __arena *s = &a->stats;

	out->pages = ak_read_once(s->pages);
	out->slab_pages = ak_read_once(s->slab_pages);
	out->large_pages = ak_read_once(s->large_pages);
	out->spare_pages = ak_read_once(s->spare_pages);
	out->fail_nomem = ak_read_once(s->fail_nomem);
	out->fail_size = ak_read_once(s->fail_size);
	out->fail_busy = ak_read_once(s->fail_busy);
	out->fail_budget = ak_read_once(s->fail_budget);
	out->double_frees = ak_read_once(s->double_frees);
	out->bad_frees = ak_read_once(s->bad_frees);
	out->pages_returned = ak_read_once(s->pages_returned);
	out->pages_taken = ak_read_once(s->pages_taken);
	out->page_calls = ak_read_once(s->page_calls);
	return ak_alloc_live(a, &out->objects, &out->bytes);
}

/* The object an entry point answered (an integer), and if NULL its reason *@e into *@err. */
static __ak_always_inline void __arena *__ak_alloc_answer(unsigned long long obj, const int *e,
							  int *err)
{
	if (!obj && err)
		*err = *e;
	return (void __arena *)obj;
}

static __ak_always_inline void __arena *ak_alloc(unsigned long long size, int *err)
{
	int e = 0;

	return __ak_alloc_answer(__ak_alloc_sleepable(size, &e), &e, err);
}

static __ak_always_inline void __arena *ak_alloc_nosleep(unsigned long long size, int *err)
{
	int e = 0;

	return __ak_alloc_answer(__ak_alloc_nosleep(size, &e), &e, err);
}

static __ak_always_inline void __arena *__ak_alloc_from_cache(unsigned long long size)
{
	return (void __arena *)__ak_alloc_cache_only(size);
}

#endif /* __ARENAKIT_ALLOC_IMPL_H */
