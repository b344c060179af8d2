/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/alloc_impl_pages.h - the allocator's pages: size classes, which
 * pages hold a header of ours, the page kfuncs, the classes' page lists,
 * blocks cut from a page, the spare pages, and pages added to a class
 * (a large object's pages: alloc_impl.h). Everything here but __ak_spare_trim runs
 * under the allocator's lock or touches only a page nobody else has yet.
 * Internal: part of <arenakit/alloc.h> (see alloc_impl.h for the order).
 */
#ifndef __ARENAKIT_ALLOC_H
#error "<arenakit/alloc_impl_pages.h> is internal: include <arenakit/alloc.h>"
#elif !defined(__ARENAKIT_ALLOC_IMPL_PAGES_H)
#define __ARENAKIT_ALLOC_IMPL_PAGES_H

/* ---- size classes ---- */

/* Classes of 16..128 bytes in steps of 8, then eight per doubling. */
#define __AK_FINE_CLASSES 15
#define __AK_FINE_MAX 128

/*
 * The block size of @class: (class + 2) * 8 for the first 15, then group g
 * (0..3) of eight steps of 16 << g above 128 << g, and 2016 last.
 */
static __ak_always_inline unsigned int __ak_block_size(unsigned int class)
{
	unsigned int g, i;

	if (class < __AK_FINE_CLASSES)
		return (class + 2) * 8;
	if (class >= AK_ALLOC_CLASSES - 1)
		return AK_ALLOC_MAX_SMALL;
	g = (class - __AK_FINE_CLASSES) >> 3;
	i = (class - __AK_FINE_CLASSES) & 7;
	return (__AK_FINE_MAX << g) + ((i + 1) << (4 + g));
}

/*
 * The class of an object of @size bytes, the smallest whose blocks hold
 * it; -1 if it needs whole pages. No loop: a division by 8 up to 128
 * bytes, then the doubling the size is in and a shift for its step.
 */
static __ak_always_inline int __ak_alloc_class(unsigned long long size)
{
	unsigned int s, g;

	if (size > AK_ALLOC_MAX_SMALL)
		return -1;
	s = size < 16 ? 16 : (unsigned int)size;
	if (s <= __AK_FINE_MAX)
		return (s + 7) / 8 - 2;
	g = s <= 256 ? 0 : s <= 512 ? 1 : s <= 1024 ? 2 : 3;
	return __AK_FINE_CLASSES + 8 * g + ((s - (__AK_FINE_MAX << g) - 1) >> (4 + g));
}

/*
 * The blocks a page of @class holds: as many as fit after the header if
 * the header can hold their live bytes too, else as many as fit with a
 * byte each after them, rounded up to a word (alloc_types.h).
 */
static __ak_always_inline unsigned int __ak_blocks_per_page(unsigned int class)
{
	unsigned int size = __ak_block_size(class);

	if (__AK_PAGE_DATA / size <= __AK_HDR_LIVES)
		return __AK_PAGE_DATA / size;
	return (__AK_PAGE_DATA - 7) / (size + 1);
}

/* Where block 0's live byte lies in a page of @class (block i's: i bytes on). */
static __ak_always_inline unsigned int __ak_lives_offset(unsigned int class)
{
	unsigned int n = __ak_blocks_per_page(class);

	if (n <= __AK_HDR_LIVES)
		return __builtin_offsetof(struct __ak_page, lives);
	return AK_PAGE_SIZE - ((n + 7) & ~7U);
}

static __ak_always_inline struct __ak_class __arena *__ak_class_of(unsigned int class)
{
	return &ak_allocator.classes[class < AK_ALLOC_CLASSES ? class : 0];
}

/* ---- the statistics, the page kfuncs, the hosts' watch hooks ---- */

#define __ak_stat_add(field, n) ak_atomic_add(&ak_allocator.stats.field, (n))

/*
 * Count a failed allocation by its reason; give the reason to the caller.
 * -ENOMEM is counted by the entry point, which may try again.
 */
static __ak_always_inline void __arena *__ak_alloc_fail(int err, int *errp)
{
	if (err == -EBUSY)
		__ak_stat_add(fail_busy, 1);
	else if (err == -AK_EBUDGET)
		__ak_stat_add(fail_budget, 1);
	else if (err != -ENOMEM)
		__ak_stat_add(fail_size, 1);
	if (errp)
		*errp = err;
	return 0;
}

/* The page kfuncs (user space: the host's stand-ins), each call counted. */
#ifdef __BPF__
static __ak_always_inline void __arena *__ak_pages_get(unsigned int pages)
{
	__ak_stat_add(page_calls, 1);
	return bpf_arena_alloc_pages(&AK_ALLOC_MAP, 0, pages, -1 /* NUMA_NO_NODE */, 0);
}

static __ak_always_inline void __ak_pages_put(void __arena *ptr, unsigned int pages)
{
	__ak_stat_add(page_calls, 1);
	bpf_arena_free_pages(&AK_ALLOC_MAP, ptr, pages);
}
#else
static inline void __arena *__ak_pages_get(unsigned int pages)
{
	__ak_stat_add(page_calls, 1);
	return ak_user_pages_get(pages);
}

static inline void __ak_pages_put(void __arena *ptr, unsigned int pages)
{
	__ak_stat_add(page_calls, 1);
	ak_user_pages_put(ptr, pages);
}
#endif

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

/* ---- page headers: a pointer's page, its live bytes, and whether it is ours ---- */

/* The page that holds @ptr (a block, or a large object's start). */
static __ak_always_inline struct __ak_page __arena *__ak_page_of(void __arena *ptr)
{
	return (struct __ak_page __arena *)((char __arena *)ptr -
					     ((unsigned long long)ptr & (AK_PAGE_SIZE - 1)));
}

/* The live byte of block @index of @page (a large object's: index 0). */
#define __ak_live_byte(page, index) \
	((unsigned char __arena *)(page) + (page)->lives_at + (index))

/*
 * Which pages start with a header the allocator wrote: a bit a page, set
 * while the page is a slab page or a large object's first page. A page's
 * own bytes cannot say so: a large object's later pages start with the
 * program's bytes, which may hold a copy of a real header (magic, class,
 * live bytes and all), and a free that believed them would claim a "block"
 * inside a live object and hand it out again. No object overlaps this
 * bitmap, and a free checks a page's bit before anything the page says.
 *
 * The invariant: a page's bit is set from when its header is written
 * (__ak_page_publish, __ak_alloc_large) until __ak_page_unwatched lets the
 * page go (to the spare pages, or a large object's back to the kernel),
 * and clear otherwise: spare pages, pages in the kernel, the program's own
 * pages, and every page inside a large object. It changes under the lock
 * only; frees read it without (see __ak_page_unwatched for that race).
 *
 * A page's bit is its page number (of the low 32 bits of its address, which
 * BPF and user space agree on) modulo __AK_HEADER_PAGES. An arena's pages
 * have consecutive numbers (it is at most 4 GiB and does not cross a 4 GiB
 * boundary), so no two of them share a bit if it has at most that many: in
 * BPF, the arena's own size (its map's max_entries, which __uint() makes
 * an array length the compiler knows), so the bitmap is 1/32768 of the
 * arena, 8 KiB of a 256 MiB one; in user space, all of 4 GiB, as .bss.
 */
#ifdef __BPF__
#define __AK_HEADER_PAGES \
	((unsigned int)(sizeof(*AK_ALLOC_MAP.max_entries) / sizeof(int) + 63) / 64 * 64)
#else
#define __AK_HEADER_PAGES (1U << 20)
#endif
_Static_assert(__AK_HEADER_PAGES <= (1U << 20), "an arena has at most 4 GiB of pages");

#ifdef __BPF__
/* Weak, as ak_allocator (alloc.h, "Several objects"). */
unsigned long long __arena_global __ak_headers[__AK_HEADER_PAGES / 64] __weak;
#else
__attribute__((weak)) unsigned long long __ak_headers[__AK_HEADER_PAGES / 64];
#endif

#define __ak_header_number(page) \
	(((unsigned int)(unsigned long long)(page) / AK_PAGE_SIZE) % __AK_HEADER_PAGES)

/* Does @page start with a header the allocator wrote? */
static __ak_always_inline int __ak_is_header(struct __ak_page __arena *page)
{
	unsigned int n = __ak_header_number(page);

	return (ak_read_once(__ak_headers[n / 64]) >> (n % 64)) & 1;
}

/* Under the lock: @page's header is the allocator's (@on), or no longer. */
static __ak_always_inline void __ak_header_mark(struct __ak_page __arena *page, int on)
{
	unsigned int n = __ak_header_number(page);
	unsigned long long word = __ak_headers[n / 64], bit = 1ULL << (n % 64);

	ak_write_once(__ak_headers[n / 64], on ? word | bit : word & ~bit);
}

/* ---- a class's page lists, and blocks cut from a page ---- */

static __ak_always_inline void __ak_page_push(struct __ak_class __arena *cls,
					      struct __ak_page __arena *page, unsigned char list)
{
	struct __ak_page __arena *__arena *head =
		list == __AK_ON_EMPTY ? &cls->empty : &cls->partial;

	page->list = list;
	page->next = *head;
	ak_arena_store_barrier();
	page->prev = 0;
	if (*head)
		(*head)->prev = page;
	*head = page;
	if (list == __AK_ON_EMPTY)
		cls->empty_pages++;
}

static __ak_always_inline void __ak_page_unlink(struct __ak_class __arena *cls,
						struct __ak_page __arena *page)
{
	struct __ak_page __arena *__arena *head =
		page->list == __AK_ON_EMPTY ? &cls->empty : &cls->partial;

	if (page->list == __AK_ON_EMPTY)
		cls->empty_pages--;
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

/* The bytes an object has in a block (or pages) of @bytes. */
static __ak_always_inline unsigned long long __ak_object_room(unsigned int class,
							     unsigned long long bytes)
{
	return class == __AK_CLASS_LARGE ? bytes - __AK_PAGE_HDR : bytes;
}

/* Count the object at @obj handed out. */
static __ak_always_inline void __arena *__ak_hand_out(char __arena *obj, unsigned int class,
						      unsigned long long bytes)
{
	__ak_stat_add(objects, 1);
	__ak_stat_add(bytes, bytes);
	AK_ALLOC_WATCH_TAKEN(obj, __ak_object_room(class, bytes));
	(void)class;
	return obj;
}

/*
 * The offset of @page's next free block (its free list first, then the
 * bump), or 0 if it has none; under the lock. Its live byte stays clear: a
 * (mistaken) free of it meanwhile is refused as a double free and writes
 * nothing, so the block's link, read here, is still the free list's. The
 * page's counts and lists are __ak_page_taken's.
 */
static __ak_always_inline unsigned int __ak_page_cut(struct __ak_page __arena *page,
						     unsigned int size)
{
	unsigned int offset = page->free;

	if (offset) {
		page->free = *(unsigned long long __arena *)((char __arena *)page + offset);
		return offset;
	}
	offset = page->bump;
	if (offset + size > page->end)
		return 0;
	page->bump = offset + size;
	return offset;
}

/* @n blocks of @size were cut from @page: its counts, and its lists. */
static __ak_always_inline void __ak_page_taken(struct __ak_class __arena *cls,
					       struct __ak_page __arena *page, unsigned int size,
					       unsigned int n)
{
	if (page->list == __AK_ON_EMPTY) {
		__ak_page_unlink(cls, page);
		__ak_page_push(cls, page, __AK_ON_PARTIAL);
	}
	page->live += n;
	cls->free_blocks -= n;
	if (!page->free && page->bump + size > page->end)
		__ak_page_unlink(cls, page);	/* full */
}

/* The index of the block at @offset of a small page whose .recip is @recip. */
static __ak_always_inline unsigned int __ak_block_index(unsigned int recip, unsigned int offset)
{
	return ((unsigned long long)(offset - __AK_PAGE_HDR) * recip) >> 32;
}

/*
 * Set the live byte of @block, just taken (its byte clear, and no other
 * call sets it while the block is ours): 0, or -EBUSY / -AK_EBUDGET where
 * ak_byte_publish takes an atomic (never on x86-64).
 */
static __ak_always_inline int __ak_mark_live(char __arena *block)
{
	struct __ak_page __arena *page = __ak_page_of(block);
	unsigned int index = __ak_block_index(page->recip,
					      (unsigned long long)block & (AK_PAGE_SIZE - 1));

	return ak_byte_publish(__ak_live_byte(page, index), 1);
}

#if __AK_ALLOC_DEFINE
/* Clears a new page's live bytes (alloc.h declares it): a loop verified once. */
__ak_global int __ak_lives_clear(__arg_arena struct __ak_page __arena *page)
{
	unsigned int at;

	for (at = page->lives_at; at < AK_PAGE_SIZE && ak_can_loop; at += 8)
		*(unsigned long long __arena *)((char __arena *)page + at) = 0;
	return 0;
}
#endif

/*
 * Initialise a page for @class: fresh from the kernel (zeroed), or spare
 * (emptied: no live block, on no list); nobody else's
 * yet either way.
 */
static __ak_always_inline void __ak_page_init(struct __ak_page __arena *page, unsigned int class)
{
	unsigned int size;

	page->magic = __AK_PAGE_MAGIC;
	page->class = class;
	page->list = __AK_ON_NO_LIST;
	page->bump = __AK_PAGE_HDR;
	page->free = 0;
	page->next = 0;
	page->lives_at = __builtin_offsetof(struct __ak_page, lives);
	/*
	 * The header's live bytes are 0 already: a page comes zeroed from
	 * the kernel, and a page with no live block has none set (a page
	 * whose live bytes lay after its blocks never wrote these).
	 */
	if (class == __AK_CLASS_LARGE)
		return;
	size = __ak_block_size(class);
	page->recip = ((1ULL << 32) + size - 1) / size;
	page->size = size;
	page->end = __AK_PAGE_HDR + __ak_blocks_per_page(class) * size;
	page->lives_at = __ak_lives_offset(class);
	/*
	 * Live bytes after the blocks: where an earlier class of a spare page
	 * had blocks, whatever their objects left there. Every one clear, or
	 * a block just cut, not yet live, would pass a free's claim. Live
	 * bytes in the header are clear already (above): the page's blocks
	 * are not theirs to clear.
	 */
	if (page->lives_at != __builtin_offsetof(struct __ak_page, lives))
		__ak_lives_clear(page);
}

/* ---- spare pages: empty, of no class, kept as runs of adjacent pages ---- */

#define __ak_page_at(page, n) \
	((struct __ak_page __arena *)((char __arena *)(page) + (unsigned long long)(n) * AK_PAGE_SIZE))

/*
 * Make the @n pages from @page spare; under the lock. A run that ends where
 * the first spare run starts, or starts where it ends, joins it: pages
 * emptied in address order, either way, make one run.
 */
static __ak_always_inline void __ak_spare_push(struct __ak_page __arena *page, unsigned int n)
{
	struct __ak_page __arena *head = ak_allocator.spare;

	if (head && __ak_page_at(head, head->pages) == page) {
		head->pages += n;
	} else {
		page->pages = n;
		if (head && __ak_page_at(page, n) == head) {
			page->pages += head->pages;
			head = head->next;
		}
		page->next = head;
		ak_allocator.spare = page;
	}
	__ak_stat_add(spare_pages, n);
}

/*
 * Under the lock: @page of @cls, empty, unwatched (__ak_page_unwatched)
 * and on no list, becomes spare.
 */
static __ak_always_inline void __ak_slab_to_spare(struct __ak_class __arena *cls,
						  struct __ak_page __arena *page, unsigned int per_page)
{
	cls->free_blocks -= per_page;
	__ak_spare_push(page, 1);
	__ak_stat_add(slab_pages, -1ULL);
}

/* A spare page for a class, or NULL; under the lock. */
static __ak_always_inline struct __ak_page __arena *__ak_spare_pop(void)
{
	struct __ak_page __arena *page = ak_allocator.spare, *rest;

	if (!page)
		return 0;
	if (page->pages > 1) {
		rest = __ak_page_at(page, 1);
		rest->pages = page->pages - 1;
		rest->next = page->next;
		ak_allocator.spare = rest;
	} else {
		ak_allocator.spare = page->next;
	}
	__ak_stat_add(spare_pages, -1ULL);
	__ak_stat_add(slab_pages, 1);
	/* Its last class's freed objects are gone: every byte is ours again. */
	AK_ALLOC_WATCH_TAKEN((char __arena *)page + __AK_PAGE_HDR, __AK_PAGE_DATA);
	return page;
}

/*
 * Give spare pages back to the kernel until @keep are left, a run a page
 * kfunc call (a long first run: its tail); sleepable, the lock not held.
 * 0, -EBUSY or -AK_EBUDGET.
 */
static __ak_always_inline int __ak_spare_trim(unsigned long long keep)
{
	struct __ak_page __arena *run, *head;
	unsigned long long over;
	unsigned int n;
	int err;

	for (;;) {
		ak_cond_break_label(cut);
		if (ak_read_once(ak_allocator.stats.spare_pages) <= keep)
			return 0;
		err = ak_lock_acquire(&ak_allocator.lock);
		if (err)
			return err;
		head = ak_allocator.spare;
		run = 0;
		n = 0;
		if (head && ak_allocator.stats.spare_pages > keep) {
			over = ak_allocator.stats.spare_pages - keep;
			if (head->pages > over) {
				n = over;
				head->pages -= n;
				run = __ak_page_at(head, head->pages);
			} else {
				n = head->pages;
				run = head;
				ak_allocator.spare = head->next;
			}
			__ak_stat_add(spare_pages, -(unsigned long long)n);
		}
		ak_lock_release(&ak_allocator.lock);
		if (!run)
			return 0;
		__ak_pages_put(run, n);
		__ak_stat_add(pages, -(unsigned long long)n);
		__ak_stat_add(pages_returned, n);
	}
cut:
	return -AK_EBUDGET;
}

#if __AK_ALLOC_DEFINE
/* Out of line: the frees that may call it are verified without its loop. */
__ak_global int __ak_alloc_spare_trim(unsigned long long keep)
{
	return __ak_spare_trim(keep);
}
#endif

/*
 * At the end of a sleepable free: past two runs' worth of spare pages, back
 * to one. Out of line, in a frame beside the free path's rather than below
 * it. Not with the caches off (AK_ALLOC_CPUS 0): that object's stack has no
 * frame to spare, and its frees leave the spare pages to the next free of
 * an object with caches, a large allocation, or ak_alloc_trim.
 */
static __ak_always_inline void __ak_spare_overflow(void)
{
	if (AK_ALLOC_CPUS && ak_read_once(ak_allocator.stats.spare_pages) >= 2 * AK_ALLOC_PAGE_RUN)
		__ak_alloc_spare_trim(AK_ALLOC_PAGE_RUN);
}

/* ---- pages added to a class, and large objects ---- */

static __ak_always_inline void __ak_count_taken(unsigned int pages, int large)
{
	__ak_stat_add(pages, pages);
	if (large)
		__ak_stat_add(large_pages, pages);
	else
		__ak_stat_add(slab_pages, pages);
	__ak_stat_add(pages_taken, pages);
}

/*
 * Under the lock: @page (nobody else's) initialised for @class and onto
 * its lists. With @obj, the caller's block is cut from it before it is
 * published, so that no other CPU can take every block of the page first
 * and leave the caller a spurious -ENOMEM.
 */
static __ak_always_inline void __ak_page_publish(struct __ak_class __arena *cls,
						 struct __ak_page __arena *page,
						 unsigned int class, int obj)
{
	__ak_page_init(page, class);
	__ak_header_mark(page, 1);
	if (obj) {
		page->bump += __ak_block_size(class);
		page->live = 1;
		*__ak_live_byte(page, 0) = 1;	/* not published yet: a plain store */
	}
	__ak_page_push(cls, page, obj ? __AK_ON_PARTIAL : __AK_ON_EMPTY);
	cls->free_blocks += __ak_blocks_per_page(class) - (obj ? 1 : 0);
}

/*
 * A page for @class onto its lists: a spare one, or (@sleepable) a run
 * from the kernel whose rest becomes spare; -ENOMEM or -EBUSY. With @obj,
 * the caller's block comes from it (see __ak_page_publish).
 */
static __ak_always_inline int __ak_add_page(unsigned int class, void __arena **obj, int sleepable)
{
	struct __ak_class __arena *cls = __ak_class_of(class);
	struct __ak_page __arena *page;
	unsigned int run = AK_ALLOC_PAGE_RUN;
	int err;

	err = ak_lock_acquire(&ak_allocator.lock);
	if (err)
		return err;
	page = __ak_spare_pop();
	if (page)
		__ak_page_publish(cls, page, class, obj != 0);
	ak_lock_release(&ak_allocator.lock);
	if (!page) {
		if (!sleepable)
			return -ENOMEM;
		page = __ak_pages_get(run);
		if (!page && run > 1) {
			run = 1;	/* no run this long is left: one page */
			page = __ak_pages_get(1);
		}
		if (!page)
			return -ENOMEM;
		err = ak_lock_acquire(&ak_allocator.lock);
		if (err) {
			/* Cannot publish it: give it back rather than leak it. */
			__ak_pages_put(page, run);
			return err;
		}
		__ak_page_publish(cls, page, class, obj != 0);
		if (run > 1)
			__ak_spare_push(__ak_page_at(page, 1), run - 1);
		ak_lock_release(&ak_allocator.lock);
		__ak_count_taken(run, 0);
		__ak_stat_add(slab_pages, -(unsigned long long)(run - 1));	/* the rest are spare */
	}
	if (obj)
		*obj = __ak_hand_out((char __arena *)page + __AK_PAGE_HDR, class,
				     __ak_block_size(class));
	return 0;
}

#endif /* __ARENAKIT_ALLOC_IMPL_PAGES_H */
