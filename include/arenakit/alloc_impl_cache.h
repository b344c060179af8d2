/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/alloc_impl_cache.h - the CPU caches: each CPU keeps a few free
 * blocks of each class (struct __ak_cpu_cache, alloc_types.h), so that the
 * common allocation and free touch nothing another CPU touches.
 *
 * A cached block is free, its live byte clear, and its page counts it as
 * taken (.live): a page with a block in any cache is never empty, so never
 * given back, and a free of a cached block sees its byte clear and is
 * refused as a double free.
 * Internal: part of <arenakit/alloc.h> (see alloc_impl.h for the order).
 */
#ifndef __ARENAKIT_ALLOC_H
#error "<arenakit/alloc_impl_cache.h> is internal: include <arenakit/alloc.h>"
#elif !defined(__ARENAKIT_ALLOC_IMPL_CACHE_H)
#define __ARENAKIT_ALLOC_IMPL_CACHE_H

/*
 * The number of the CPU this runs on. In user space AK_ALLOC_CPU() if the
 * includer defines it (tests/explore/ does: a CPU per logical thread),
 * else 0: threads then share one cache, whose lock keeps them apart.
 */
#ifdef __BPF__
#define __ak_this_cpu() ((unsigned int)bpf_get_smp_processor_id())
#elif defined(AK_ALLOC_CPU)
#define __ak_this_cpu() ((unsigned int)AK_ALLOC_CPU())
#else
#define __ak_this_cpu() 0U
#endif

/* Where a cached block links to the next: its first word, as on a page. */
#define __ak_cache_link(block) (*(void __arena *__arena *)(block))

/*
 * The most free blocks of @class a CPU keeps: 64 up to 32 bytes, then half
 * as many per doubling of the size (1 to 2 KiB of blocks), 2 from 513 on.
 */
static __ak_always_inline unsigned int __ak_cache_cap(unsigned int class)
{
	return class < 3 ? 64 : class < 7 ? 32 : class < __AK_FINE_CLASSES ? 16 :
	       class < __AK_FINE_CLASSES + 8 ? 8 : class < __AK_FINE_CLASSES + 16 ? 4 : 2;
}

/*
 * This CPU's cache, locked for @who; NULL if it has none or it is held.
 * The one atomic of a cached allocation, and one of a cached free's two:
 * programs nest on a CPU (a tracing program interrupts another; BPF cannot
 * mask interrupts), so taking the cache must be a compare-and-swap even
 * though no other CPU ever takes it but a reclaim.
 */
static __ak_always_inline struct __ak_cpu_cache __arena *__ak_cache_get(unsigned int who)
{
	unsigned int cpu = __ak_this_cpu();
	struct __ak_cpu_cache __arena *cache;

	if (cpu >= AK_ALLOC_CPUS)
		return 0;
	cache = &ak_allocator.cpus[cpu];
	return ak_cmpxchg(&cache->lock.locked, 0, who) ? 0 : cache;
}

/*
 * Release @cache, taken by __ak_cache_get: a release store (atomic.h), so
 * whoever takes it next (a program nested on this CPU, or a reclaim on
 * another, through its compare-and-swap) sees every store made to the
 * cache and to the blocks in it while it was held. On x86-64 a plain
 * store.
 */
static __ak_always_inline void __ak_cache_put(struct __ak_cpu_cache __arena *cache)
{
	ak_store_release(cache->lock.locked, 0);
}

static __ak_always_inline void __ak_cache_push(struct __ak_cpu_cache __arena *cache,
					       unsigned int class, void __arena *block)
{
	__ak_cache_link(block) = cache->head[class];
	cache->head[class] = block;
	cache->count[class]++;
}

static __ak_always_inline char __arena *__ak_cache_pop(struct __ak_cpu_cache __arena *cache,
						       unsigned int class)
{
	char __arena *block = cache->head[class];

	cache->head[class] = __ak_cache_link(block);
	cache->count[class]--;
	return block;
}

/*
 * Move up to @want free blocks of @class from its first page with one into
 * @cache (held). Past the reserve of ak_alloc_reserve only one moves, the
 * caller's, so the pool is never parked in one CPU's cache. Returns how
 * many moved (0: none free, or the lock stayed busy).
 */
static __ak_always_inline unsigned int __ak_cache_refill(struct __ak_cpu_cache __arena *cache,
							 unsigned int class, unsigned int want)
{
	struct __ak_class __arena *cls = __ak_class_of(class);
	unsigned int size = __ak_block_size(class), moved, offset;
	char __arena *first = 0, *last = 0, *block;
	struct __ak_page __arena *page;

	if (ak_lock_acquire(&ak_allocator.lock))
		return 0;
	if (cls->free_blocks < cls->reserved + want)
		want = cls->free_blocks > cls->reserved ? cls->free_blocks - cls->reserved : 1;
	page = cls->partial ? cls->partial : cls->empty;
	/* Chained in the order cut: a run of allocations gets rising addresses. */
	for (moved = (unsigned int)ak_opaque_zero(); page && moved < want && ak_can_loop; moved++) {
		offset = __ak_page_cut(page, size);
		if (!offset)
			break;
		block = (char __arena *)page + offset;
		if (last)
			__ak_cache_link(last) = block;
		else
			first = block;
		last = block;
	}
	if (moved)
		__ak_page_taken(cls, page, size, moved);
	ak_lock_release(&ak_allocator.lock);
	if (last) {
		__ak_cache_link(last) = cache->head[class];
		cache->head[class] = first;
		cache->count[class] += moved;
	}
	return moved;
}

/*
 * Put the blocks of @class in @cache (held, as __AK_CACHE_ALLOC) back on
 * their pages until @keep are left (see __ak_free_block for the pages they
 * empty, which may become spare with @may_spare_page). Blocks
 * stay cached if the lock stayed busy or the budget ran out.
 */
static __ak_always_inline void __ak_cache_flush(struct __ak_cpu_cache __arena *cache,
						unsigned int class, unsigned int keep,
						int may_spare_page)
{
	char __arena *block;

	if (ak_lock_acquire(&ak_allocator.lock))
		return;
	while (cache->count[class] > keep && ak_can_loop) {
		block = __ak_cache_pop(cache, class);
		if (may_spare_page)
			__ak_put_block_spare(block);
		else
			__ak_put_block_kept(block);
	}
	ak_lock_release(&ak_allocator.lock);
}

/*
 * An object of @class from this CPU's cache, refilled if empty; NULL if
 * the cache is held (a program this one interrupted, or a preempted
 * sleepable one) or no block is free: the caller takes the shared path.
 */
static __ak_always_inline void __arena *__ak_cache_alloc(unsigned int class)
{
	struct __ak_cpu_cache __arena *cache = __ak_cache_get(__AK_CACHE_ALLOC);
	unsigned int size = __ak_block_size(class);
	char __arena *block = 0;

	if (!cache)
		return 0;
	/*
	 * Blocks that frees queued (they found the shared lock busy) are put
	 * back by the shared path's next allocation: let this one be it, rather
	 * than verify the queue's code a second time here.
	 */
	if (cache->count[class] ||
	    (!ak_read_once(ak_allocator.queued) &&
	     __ak_cache_refill(cache, class, __ak_cache_cap(class) / 2))) {
		block = __ak_cache_pop(cache, class);
		if (__ak_mark_live(block)) {
			__ak_cache_push(cache, class, block);
			block = 0;
		} else {
			cache->objects++;
			cache->bytes += size;
		}
	}
	__ak_cache_put(cache);
	if (block)
		AK_ALLOC_WATCH_TAKEN(block, size);
	return block;
}

/*
 * A free into this CPU's cache: 0, or -EINVAL (refused, as on the shared
 * path), or 1 if the shared path must do it (no cache, or it is held; a
 * large object; a cache twice past its cap: the lock stayed busy for the
 * flushes before). The cache is held as __AK_CACHE_FREE from before the
 * page is read until the block is claimed (see __ak_page_unwatched).
 */
static __ak_always_inline int __ak_cache_free(void __arena *ptr, int sleepable)
{
	struct __ak_cpu_cache __arena *cache = __ak_cache_get(__AK_CACHE_FREE);
	struct __ak_page __arena *page = __ak_page_of(ptr);
	unsigned long long bytes;
	unsigned int class, index, cap;
	int err, large;

	if (!cache)
		return 1;
	/*
	 * Nothing is read of a page whose header is not the allocator's (a
	 * freed large object's, a page given back): the shared path refuses.
	 */
	if (!__ak_is_header(page)) {
		__ak_cache_put(cache);
		return 1;
	}
	class = ak_read_once(page->class);
	cap = class < AK_ALLOC_CLASSES ? __ak_cache_cap(class) : 0;
	if (!cap || cache->count[class] >= 2 * cap) {
		__ak_cache_put(cache);
		return 1;	/* a large object, not ours at all, or a full cache */
	}
	/* The block goes to the cache of @class: the claim checks it still is. */
	err = __ak_free_claim(ptr, class, &page, &index, &bytes, &large);
	/*
	 * Claimed (or refused): the page is no longer read, and a page return
	 * meanwhile (a flush below, another CPU's) need not wait for this one.
	 * A store, after the claim's fully ordered compare-and-swap.
	 */
	ak_write_once(cache->lock.locked, __AK_CACHE_ALLOC);
	if (!err) {
		AK_ALLOC_WATCH_FREED(ptr, bytes);
		__ak_cache_push(cache, class, ptr);
		cache->objects--;
		cache->bytes -= bytes;
		if (cache->count[class] > cap)
			__ak_cache_flush(cache, class, cap / 2, sleepable);
	}
	__ak_cache_put(cache);
	return err;
}

#endif /* __ARENAKIT_ALLOC_IMPL_CACHE_H */
