/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/alloc_impl_free.h - the shared path of a free. A free claims its
 * block without the lock (clears its live byte), then puts it back on its
 * page's free list under the lock or, if the lock is busy, pushes it on a
 * lock-free queue for the lock's next holder; a large object waits on
 * another queue for a sleepable call to give its pages back. Here too is
 * when an emptied page may go while frees may still be checking a block on
 * it without the lock (__ak_page_unwatched).
 *
 * Memory order, in the kernel memory model's terms (atomic.h): a free
 * counts itself in (ak_allocator.freeing, a fully ordered add) before it
 * reads a page's magic and bump without the lock, and a page return clears
 * the magic by an exchange before it reads that count: store buffering
 * with a full barrier on each side, so one of them sees the other (the
 * free a cleared magic, or the return a free in progress, and waits). The
 * claim is one fully ordered compare-and-swap of the live byte's word. A
 * queue push writes the block's link, then publishes the block by a fully
 * ordered compare-and-swap of the top; a pop (under the lock) reads the
 * top, then the link through it (an address dependency), and takes it by
 * a compare-and-swap that fails if the top moved. None of these relies on
 * loads kept in order by the CPU, so they hold on arm64 as on x86-64.
 * Internal: part of <arenakit/alloc.h> (see alloc_impl.h for the order).
 */
#ifndef __ARENAKIT_ALLOC_H
#error "<arenakit/alloc_impl_free.h> is internal: include <arenakit/alloc.h>"
#elif !defined(__ARENAKIT_ALLOC_IMPL_FREE_H)
#define __ARENAKIT_ALLOC_IMPL_FREE_H

/* Reads a page return waits for a free's claim on it to end (see __ak_page_unwatched). */
#define __AK_CLAIM_WAIT 64

/* Blocks a lock holder takes off the queue of frees that found it busy. */
#define __AK_DRAIN_BATCH 64

/* Where a queued block links to the next: its first bytes. */
#define __ak_queue_link(block) (*(unsigned long long __arena *)(block))

/*
 * Check that @ptr is a live object of ours, without the lock, and claim
 * it: clear its live byte, which only one free of it sees set. Only pages
 * with a live block of their own can be given back, and this one has one
 * (see __ak_page_unwatched for the race with one that has none). The page
 * must be one whose header the allocator wrote (__ak_headers) before its
 * bytes are believed. With @want a class (not -1), the page must be of that
 * class when the claim reads it: a cached free chose its cache by the class
 * it read before, and a page whose class changed since had no live block
 * when the free began (a page with one cannot become spare, or go, while a
 * free watches it), so the free is refused, as of a block not live, rather
 * than claim the page's new object into another class's cache. (A guard:
 * no test reaches it since a cached free checks the page's header bit
 * before its class, so a spare page is refused before the class is read.)
 * Returns its page, its block's index and bytes (a large
 * object's: its pages'), and whether it is large; or -EINVAL, counted as a
 * double or a bad free, or -EBUSY / -AK_EBUDGET if the live byte's word kept
 * changing (nothing done). The caller works from these, never from the
 * class again: a class whose range the verifier knows from one way through
 * here would split its verification by the ways through __ak_block_size.
 */
static __ak_always_inline int __ak_free_claim(void __arena *ptr, int want,
					      struct __ak_page __arena **pagep,
					      unsigned int *indexp, unsigned long long *bytesp,
					      int *largep)
{
	unsigned long long at = (unsigned long long)ptr, bytes;
	unsigned int offset = at & (AK_PAGE_SIZE - 1), class, size, index = 0;
	struct __ak_page __arena *page = __ak_page_of(ptr);
	unsigned char was;
	int err;

	/* A cached free (@want a class) read the page's header bit already. */
	if (at & 7 || (want < 0 && !__ak_is_header(page)) ||
	    ak_read_once(page->magic) != __AK_PAGE_MAGIC)
		goto bad;
	/*
	 * Unlocked: a free of a block not live (a double or a stale free) may
	 * read a page another CPU is changing; the claim below settles it.
	 */
	class = ak_read_once(page->class);
	if (want >= 0 && class != (unsigned int)want)
		goto bad;
	if (class == __AK_CLASS_LARGE) {
		if (offset != __AK_PAGE_HDR)
			goto bad;
		bytes = (unsigned long long)ak_read_once(page->pages) * AK_PAGE_SIZE;
	} else {
		if (class >= AK_ALLOC_CLASSES || offset < __AK_PAGE_HDR ||
		    offset >= ak_read_once(page->bump))
			goto bad;
		size = ak_read_once(page->size);
		index = __ak_block_index(ak_read_once(page->recip), offset);
		if (offset - __AK_PAGE_HDR != index * size)
			goto bad;	/* inside a block */
		bytes = size;
	}
	/* The one atomic of a free: a fully ordered compare-and-swap. */
	err = ak_byte_claim(__ak_live_byte(page, index), &was);
	if (err)
		return err;
	if (!was) {
		__ak_stat_add(double_frees, 1);
		return -EINVAL;
	}
	*pagep = page;
	*indexp = index;
	*bytesp = bytes;
	*largep = class == __AK_CLASS_LARGE;
	return 0;
bad:
	__ak_stat_add(bad_frees, 1);
	return -EINVAL;
}

/*
 * Push @block onto a queue (a stack of blocks linked through their object
 * bytes) without the lock. Only lock holders pop, one at a time, so a pop
 * never meets a block that left and came back (no ABA). -EBUSY if the top
 * kept changing for AK_LOCK_SPINS attempts.
 */
static __ak_always_inline int __ak_queue_push(unsigned long long __arena *top,
					      void __arena *block)
{
	return ak_spin_until(({
		unsigned long long old = ak_read_once(*top);

		__ak_queue_link(block) = old;
		ak_cmpxchg(top, old, (unsigned long long)block) == old;
	}));
}

/*
 * Pop one block off a queue; the lock must be held. NULL if it is empty, or
 * if the top kept changing (pushes only) for AK_LOCK_SPINS attempts.
 */
static __ak_always_inline void __arena *__ak_queue_pop(unsigned long long __arena *top)
{
	unsigned long long old;

	if (ak_spin_until(({
		old = ak_read_once(*top);
		if (!old)
			return 0;	/* empty */
		ak_cmpxchg(top, old, __ak_queue_link((void __arena *)old)) == old;
	})))
		return 0;
	return (void __arena *)old;
}

/*
 * May @page go back to the kernel? Not while a free may still be checking
 * a block on it: a free that passed the check and then claims its block
 * with an atomic on its live byte would write into a page the kernel may have
 * handed out again, where the same bit of a page of the same class may be
 * set (a double free that loses its race would free another program's
 * object). A free says it is checking before it reads the page's header
 * bit and magic: on the shared path it counts itself into
 * ak_allocator.freeing, on a CPU's cache it holds the cache's lock as
 * __AK_CACHE_FREE until its claim is made. Here the bit and the magic are
 * cleared before those are read, all fully ordered (the exchange orders
 * the bit's store too), so either the free sees no bit or no magic and
 * refuses (the page has no live block: it was a double or a bad free), or
 * this sees the free, and waits (a claim is a few instructions) until it is
 * over before the page goes; or keeps the page, if the wait is longer than
 * __AK_CLAIM_WAIT reads. So a free that saw the bit set is over before the
 * page can be another object's. A cache held by this very call (a flush,
 * the reclaim) is held as __AK_CACHE_ALLOC, never waited for. Under the
 * lock (the bit's rule).
 */
static __ak_always_inline int __ak_page_unwatched(struct __ak_page __arena *page)
{
	unsigned int cpu, spins;

	__ak_header_mark(page, 0);
	ak_xchg(&page->magic, 0);
	for (spins = (unsigned int)ak_opaque_zero(); ak_read_once(ak_allocator.freeing); spins++) {
		if (spins >= __AK_CLAIM_WAIT)
			goto watched;
		ak_spin_wait();
		ak_cond_break_label(watched);
	}
	for (cpu = (unsigned int)ak_opaque_zero(); cpu < AK_ALLOC_CPU_SLOTS; cpu++) {
		for (spins = (unsigned int)ak_opaque_zero();
		     ak_read_once(ak_allocator.cpus[cpu].lock.locked) == __AK_CACHE_FREE; spins++) {
			if (spins >= __AK_CLAIM_WAIT)
				goto watched;
			ak_spin_wait();
			ak_cond_break_label(watched);
		}
		ak_cond_break_label(watched);
	}
	return 1;
watched:
	/* Recomputed, not kept across the loops: a register, not a frame slot. */
	ak_barrier_var(page);
	__ak_header_mark(page, 1);
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

/*
 * Put @block (claimed: its byte clear) back on its page's free list; under
 * the lock. A page that this empties becomes spare (with @may_spare_page;
 * ak_free sees to __ak_spare_overflow), unless its class has fewer than
 * AK_ALLOC_KEEP_EMPTY other empty pages or its blocks are needed for the
 * reserve: then it stays with its class.
 */
static __ak_always_inline void __ak_free_block(void __arena *block, int may_spare_page)
{
	struct __ak_page __arena *page = __ak_page_of(block);
	unsigned int offset = (unsigned long long)block & (AK_PAGE_SIZE - 1);
	unsigned int class = page->class;
	struct __ak_class __arena *cls = __ak_class_of(class);
	unsigned int per_page = __ak_blocks_per_page(class);

	/*
	 * The link is the whole first word, not 16 bits of it: a stale reader
	 * of the freed object (a bug, or a lock-free walk that will look again)
	 * finds an offset under 4096 there, never most of an old pointer.
	 */
	*(unsigned long long __arena *)block = page->free;
	page->free = offset;
	cls->free_blocks++;
	if (page->list == __AK_ON_NO_LIST)
		__ak_page_push(cls, page, __AK_ON_PARTIAL);
	if (--page->live)
		return;
	__ak_page_unlink(cls, page);
	/* reserved <= AK_ALLOC_MAX_RESERVE: the sum cannot wrap. */
	if (may_spare_page && cls->empty_pages + 1 > AK_ALLOC_KEEP_EMPTY &&
	    cls->free_blocks >= cls->reserved + per_page &&
	    __ak_page_unwatched(page))
		__ak_slab_to_spare(cls, page, per_page);
	else
		__ak_page_push(cls, page, __AK_ON_EMPTY);
}

#if __AK_ALLOC_DEFINE
/* __ak_free_block out of line, as alloc.h says why: with the lock held. */
__ak_global int __ak_put_block_kept(__arg_arena void __arena *block)
{
	__ak_free_block(block, 0);
	return 0;
}

__ak_global int __ak_put_block_spare(__arg_arena void __arena *block)
{
	__ak_free_block(block, 1);
	return 0;
}
#endif

/*
 * Under the lock: put up to @max blocks that frees queued (the lock was
 * busy) on their free lists. Pages they empty stay for reuse or trim.
 * Returns how many were done.
 */
static __ak_always_inline unsigned int __ak_drain_queued(unsigned int max)
{
	void __arena *block;
	unsigned int done;

	for (done = (unsigned int)ak_opaque_zero(); done < max && ak_can_loop; done++) {
		block = __ak_queue_pop(&ak_allocator.queued);
		if (!block)
			break;
		__ak_put_block_kept(block);
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
	struct __ak_page __arena *page = 0;
	void __arena *block;
	int err, gone = 0;

	for (;;) {
		ak_cond_break_label(cut);
		if (!ak_read_once(ak_allocator.deferred))
			return 0;
		err = ak_lock_acquire(&ak_allocator.lock);
		if (err)
			return err;
		block = __ak_queue_pop(&ak_allocator.deferred);
		if (block) {
			page = __ak_page_of(block);
			gone = __ak_page_unwatched(page);
		}
		ak_lock_release(&ak_allocator.lock);
		if (!block)
			continue;
		if (gone) {
			__ak_put_large(page);
			continue;
		}
		err = __ak_queue_push(&ak_allocator.deferred, block);
		return err ? err : -EBUSY;
	}
cut:
	return -AK_EBUDGET;
}

/*
 * The shared path of a free: the block back on its page's free list under
 * the allocator's lock, or queued if the lock is busy.
 */
static __ak_always_inline int __ak_free(void __arena *ptr, int sleepable)
{
	struct __ak_page __arena *page;
	unsigned long long bytes, room;
	unsigned int index;
	int err, large;

	if (!ptr)
		return 0;
	/* Counted in while it reads the page: see __ak_page_unwatched. */
	ak_fetch_add(&ak_allocator.freeing, 1);
	err = __ak_free_claim(ptr, -1, &page, &index, &bytes, &large);
	ak_fetch_add(&ak_allocator.freeing, -1ULL);
	if (err)
		return err;
	room = large ? bytes - __AK_PAGE_HDR : bytes;
	(void)room;	/* for the watch hooks only */
	AK_ALLOC_WATCH_FREED(ptr, room);
	if (large) {
		/* Its pages go back in __ak_drain_deferred (ak_free calls it). */
		err = __ak_queue_push(&ak_allocator.deferred, ptr);
	} else {
		/* Never wait for the lock: queue the block for its next holder. */
		if (ak_lock_try(&ak_allocator.lock)) {
			err = __ak_queue_push(&ak_allocator.queued, ptr);
		} else {
			if (sleepable)
				__ak_put_block_spare(ptr);
			else
				__ak_put_block_kept(ptr);
			__ak_drain_queued(__AK_DRAIN_BATCH);
			ak_lock_release(&ak_allocator.lock);
		}
	}
	if (err) {
		/*
		 * Not queued: the object stays the caller's, live again (its
		 * page cannot have gone: it had this live block all along).
		 * Its byte is set by a store and a store fence, which cannot
		 * fail, where ak_byte_publish's compare-and-swap loop (weakly
		 * ordered CPUs) can: the caller would hold an object every
		 * later free refuses. A byte store beside other CPUs'
		 * compare-and-swaps of its word loses nothing (atomic.h), and
		 * the fence orders it before the caller's next stores, as the
		 * loop's swap would.
		 */
		AK_ALLOC_WATCH_TAKEN(ptr, room);
		ak_write_once(*__ak_live_byte(page, index), 1);
		ak_store_fence();
		return err;
	}
	__ak_stat_add(objects, -1ULL);
	__ak_stat_add(bytes, -bytes);
	return 0;
}

#endif /* __ARENAKIT_ALLOC_IMPL_FREE_H */
