/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/alloc_impl.h - the inside of alloc.h: size classes, the page
 * header and its bitmap, the page lists, the queues, and the entry points'
 * definitions. Internal: include <arenakit/alloc.h>, which includes this
 * header once its types and calls are declared. Nothing here is API.
 *
 * A small object's page (one page, cut into blocks of one class):
 *
 *   0        64                                                  4096
 *   | header | block | block | ... | block (bump) ...never used... |
 *
 * The header (struct __ak_page) holds the class, the bump (the first block
 * never handed out), the head of the page's free list (an offset; each free
 * block holds the next one's offset in its first bytes), the count of live
 * blocks, the links of the class's partial or empty list, and the live
 * bitmap: bit i of map[] is set while block i is handed out. The bitmap is
 * the only state that says "live", and only atomics change it: allocation
 * sets the bit (ak_fetch_or, under the lock), a free clears it
 * (ak_fetch_and, without the lock) and wins only if it saw it set.
 * A large object's pages have the same header, class __AK_CLASS_LARGE, the
 * object at offset 64 and its live bit in map[0] bit 0.
 *
 * A CPU's cache (struct __ak_cpu_cache, alloc.h) holds free blocks, live
 * bits clear, that their pages count as taken (.live): a page with a block
 * in any cache is never empty, so never given back, and a free of a cached
 * block sees its bit clear and is refused as a double free.
 */
#ifndef __ARENAKIT_ALLOC_H
#error "<arenakit/alloc_impl.h> is internal: include <arenakit/alloc.h>"
#elif !defined(__ARENAKIT_ALLOC_IMPL_H)
#define __ARENAKIT_ALLOC_IMPL_H

/* Bytes before a page's first block (and before a large object). */
#define __AK_PAGE_HDR 64
#define __AK_PAGE_DATA (AK_PAGE_SIZE - __AK_PAGE_HDR)
/* Classes of 16..128 bytes in steps of 8, then eight per doubling. */
#define __AK_FINE_CLASSES 15
#define __AK_FINE_MAX 128

/* Reads a page return waits for a free's claim on it to end (see __ak_page_unwatched). */
#define __AK_CLAIM_WAIT 64

/* Blocks a lock holder takes off the queue of frees that found it busy. */
#define __AK_DRAIN_BATCH 64

#define __AK_PAGE_MAGIC 0x61a6e5edU	/* a page of ours */
#define __AK_CLASS_LARGE 0xffU

enum {
	__AK_ON_NO_LIST,		/* full (or large) */
	__AK_ON_PARTIAL,		/* some blocks free, some live */
	__AK_ON_EMPTY,			/* every block free */
};

struct __ak_page {
	unsigned int magic;
	unsigned char class;		/* or __AK_CLASS_LARGE */
	unsigned char list;		/* __AK_ON_* */
	unsigned short live;		/* blocks handed out */
	unsigned short bump;		/* offset of the first block never used */
	unsigned short free;		/* offset of the first free block, 0: none */
	union {
		unsigned int pages;	/* large: pages in the object; spare: in the run */
		/*
		 * Small: 2^32 / the block size, rounded up. A block's index is
		 * its offset past the header times this, >> 32: exact below
		 * 4096, and a multiplication where a division costs several
		 * times more (an emulator's many more).
		 */
		unsigned int recip;
	};
	struct __ak_page __arena *next;	/* on the class's list, or the next spare run */
	struct __ak_page __arena *prev;
	unsigned long long map[4];	/* live bitmap: 252 blocks of 16 bytes fit */
};

_Static_assert(sizeof(struct __ak_page) == __AK_PAGE_HDR, "the page header is 64 bytes");
_Static_assert(__AK_PAGE_DATA / 16 <= 4 * 64, "a bit for every 16-byte block");
_Static_assert(sizeof(struct __ak_cpu_cache) == 512, "a CPU's cache is 512 bytes");

/*
 * Which pages start with a header the allocator wrote: a bit a page, set
 * while the page is a slab page or a large object's first page. A page's
 * own bytes cannot say so: a large object's later pages start with the
 * program's bytes, which may hold a copy of a real header (magic, class,
 * live bits and all), and a free that believed them would claim a "block"
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

/* A cache lock's value: what its holder does (see __ak_page_unwatched). */
#define __AK_CACHE_ALLOC 1U
#define __AK_CACHE_FREE 2U

#define __ak_stat_add(field, n) ak_atomic_add(&ak_allocator.stats.field, (n))

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

static __ak_always_inline unsigned int __ak_blocks_per_page(unsigned int class)
{
	return __AK_PAGE_DATA / __ak_block_size(class);
}

static __ak_always_inline struct __ak_class __arena *__ak_class_of(unsigned int class)
{
	return &ak_allocator.classes[class < AK_ALLOC_CLASSES ? class : 0];
}

/* The page that holds @ptr (a block, or a large object's start). */
static __ak_always_inline struct __ak_page __arena *__ak_page_of(void __arena *ptr)
{
	return (struct __ak_page __arena *)((char __arena *)ptr -
					     ((unsigned long long)ptr & (AK_PAGE_SIZE - 1)));
}

/* The live bitmap word of block @index of @page, and its bit. */
#define __ak_map_word(page, index) (&(page)->map[((index) >> 6) & 3])
#define __ak_map_bit(index) (1ULL << ((index) & 63))

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
 * bump), or 0 if it has none; under the lock. Its live bit stays clear: a
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
	if (offset + size > AK_PAGE_SIZE)
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
	if (!page->free && page->bump + size > AK_PAGE_SIZE)
		__ak_page_unlink(cls, page);	/* full */
}

/* The index of the block at @offset of small @page (see .recip). */
static __ak_always_inline unsigned int __ak_block_index(struct __ak_page __arena *page,
							unsigned int offset)
{
	return ((unsigned long long)(offset - __AK_PAGE_HDR) * page->recip) >> 32;
}

/* Set the live bit of @block: 0, or -EBUSY / -AK_EBUDGET. */
static __ak_always_inline int __ak_mark_live(char __arena *block)
{
	struct __ak_page __arena *page = __ak_page_of(block);
	unsigned int index = __ak_block_index(page, (unsigned long long)block & (AK_PAGE_SIZE - 1));
	unsigned long long old;

	return ak_fetch_or(__ak_map_word(page, index), __ak_map_bit(index), &old);
}

static __ak_always_inline void __ak_free_block(void __arena *block, int may_spare_page,
					       unsigned int own_cpu);

/*
 * A block of @class from @page (on a list, with a free block), live and
 * counted; under the lock. NULL if the bitmap word kept changing (the
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
		__ak_free_block(block, 0, AK_ALLOC_CPU_SLOTS);
		return 0;
	}
	return __ak_hand_out(block, class, size);
}

/*
 * Initialise a page for @class: fresh from the kernel (zeroed), or spare
 * (emptied: no live block, its bitmap clear, on no list); nobody else's
 * yet either way.
 */
static __ak_always_inline void __ak_page_init(struct __ak_page __arena *page, unsigned int class)
{
	page->magic = __AK_PAGE_MAGIC;
	page->class = class;
	page->list = __AK_ON_NO_LIST;
	if (class != __AK_CLASS_LARGE)
		page->recip = ((1ULL << 32) + __ak_block_size(class) - 1) / __ak_block_size(class);
	page->bump = __AK_PAGE_HDR;
	page->free = 0;
	page->next = 0;
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

/*
 * At the end of a sleepable free: past two runs' worth of spare pages, back
 * to one. Out of line, in a frame beside the free path's rather than below
 * it. Not with the caches off (AK_ALLOC_CPUS 0): that object's stack has no
 * frame to spare, and its frees leave the spare pages to the next free of
 * an object with caches, a large allocation, or ak_alloc_trim.
 */
static __ak_always_inline void __ak_spare_overflow(void)
{
#if AK_ALLOC_CPUS
	if (ak_read_once(ak_allocator.stats.spare_pages) >= 2 * AK_ALLOC_PAGE_RUN)
		__ak_alloc_spare_trim(AK_ALLOC_PAGE_RUN);
#endif
}

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
		page->map[0] = 1;	/* not published yet: a plain store */
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
	page->map[0] = 1;
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

static __ak_always_inline unsigned int __ak_drain_queued(unsigned int max);

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

/* ---- the CPU caches ---- */

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

/* This CPU's cache, locked for @who; NULL if it has none or it is held. */
static __ak_always_inline struct __ak_cpu_cache __arena *__ak_cache_get(unsigned int who)
{
	unsigned int cpu = __ak_this_cpu();
	struct __ak_cpu_cache __arena *cache;

	if (cpu >= AK_ALLOC_CPUS)
		return 0;
	cache = &ak_allocator.cpus[cpu];
	return ak_cmpxchg(&cache->lock.locked, 0, who) ? 0 : cache;
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
 * Put the blocks of @class in @cache (held) back on their pages until
 * @keep are left (see __ak_free_block for the pages they empty). Blocks
 * stay cached if the lock stayed busy or the budget ran out.
 */
static __ak_always_inline void __ak_cache_flush(struct __ak_cpu_cache __arena *cache,
						unsigned int class, unsigned int keep,
						int may_spare_page, unsigned int own_cpu)
{
	if (ak_lock_acquire(&ak_allocator.lock))
		return;
	while (cache->count[class] > keep && ak_can_loop)
		__ak_free_block(__ak_cache_pop(cache, class), may_spare_page, own_cpu);
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
	ak_lock_release(&cache->lock);
	if (block)
		AK_ALLOC_WATCH_TAKEN(block, size);
	return block;
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

/* Where a queued block links to the next: its first bytes. */
#define __ak_queue_link(block) (*(unsigned long long __arena *)(block))

/*
 * Check that @ptr is a live object of ours, without the lock, and claim
 * it: clear its live bit, which only one free of it sees set. Only pages
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
 * double or a bad free, or -EBUSY / -AK_EBUDGET if the bitmap word kept
 * changing (nothing done). The caller works from these, never from the
 * class again: a class whose range the verifier knows from one way through
 * here would split its verification by the ways through __ak_block_size.
 */
static __ak_always_inline int __ak_free_claim(void __arena *ptr, int want,
					      struct __ak_page __arena **pagep,
					      unsigned int *indexp, unsigned long long *bytesp,
					      int *largep)
{
	unsigned long long at = (unsigned long long)ptr, old, bytes;
	unsigned int offset = at & (AK_PAGE_SIZE - 1), class, size, index = 0;
	struct __ak_page __arena *page = __ak_page_of(ptr);
	int err;

	if (at & 7 || !__ak_is_header(page) || ak_read_once(page->magic) != __AK_PAGE_MAGIC)
		goto bad;
	class = page->class;
	if (want >= 0 && class != (unsigned int)want)
		goto bad;
	if (class == __AK_CLASS_LARGE) {
		if (offset != __AK_PAGE_HDR)
			goto bad;
		bytes = (unsigned long long)page->pages * AK_PAGE_SIZE;
	} else {
		if (class >= AK_ALLOC_CLASSES || offset < __AK_PAGE_HDR ||
		    offset >= ak_read_once(page->bump))
			goto bad;
		size = __ak_block_size(class);
		index = __ak_block_index(page, offset);
		if (offset - __AK_PAGE_HDR != index * size)
			goto bad;	/* inside a block */
		bytes = size;
	}
	err = ak_fetch_and(__ak_map_word(page, index), ~__ak_map_bit(index), &old);
	if (err)
		return err;
	if (!(old & __ak_map_bit(index))) {
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
static __ak_always_inline void __arena *__ak_queue_pop(unsigned long long __arena *top)
{
	unsigned long long old;
	unsigned int spins;

	for (spins = (unsigned int)ak_opaque_zero(); spins < AK_LOCK_SPINS; spins++) {
		old = ak_read_once(*top);
		if (!old)
			return 0;
		if (ak_cmpxchg(top, old, __ak_queue_link((void __arena *)old)) == old)
			return (void __arena *)old;
		ak_spin_wait();
		ak_cond_break_label(spent);
	}
spent:
	return 0;
}

/*
 * May @page go back to the kernel? Not while a free may still be checking
 * a block on it: a free that passed the check and then claims its block
 * with an atomic on the bitmap would write into a page the kernel may have
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
 * page can be another object's. @own_cpu's cache is not looked at: its
 * holder is this very call. Under the lock (the bit's rule).
 */
static __ak_always_inline int __ak_page_unwatched(struct __ak_page __arena *page,
						  unsigned int own_cpu)
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
		     cpu != own_cpu &&
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
 * Put @block (claimed: its bit clear) back on its page's free list; under
 * the lock. A page that this empties becomes spare (with @may_spare_page;
 * ak_free sees to __ak_spare_overflow), unless its class has fewer than
 * AK_ALLOC_KEEP_EMPTY other empty pages or its blocks are needed for the
 * reserve: then it stays with its class.
 */
static __ak_always_inline void __ak_free_block(void __arena *block, int may_spare_page,
					       unsigned int own_cpu)
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
	    __ak_page_unwatched(page, own_cpu))
		__ak_slab_to_spare(cls, page, per_page);
	else
		__ak_page_push(cls, page, __AK_ON_EMPTY);
}

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
		__ak_free_block(block, 0, AK_ALLOC_CPU_SLOTS);
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
			gone = __ak_page_unwatched(page, AK_ALLOC_CPU_SLOTS);
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
	unsigned long long bytes, room, old;
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
			__ak_free_block(ptr, sleepable, AK_ALLOC_CPU_SLOTS);
			__ak_drain_queued(__AK_DRAIN_BATCH);
			ak_lock_release(&ak_allocator.lock);
		}
	}
	if (err) {
		/*
		 * Not queued: the object stays the caller's, live again (its
		 * page cannot have gone: it had this live block all along).
		 */
		AK_ALLOC_WATCH_TAKEN(ptr, room);
		ak_fetch_or(__ak_map_word(page, index), __ak_map_bit(index), &old);
		return err;
	}
	__ak_stat_add(objects, -1ULL);
	__ak_stat_add(bytes, -bytes);
	return 0;
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
		ak_lock_release(&cache->lock);
		return 1;
	}
	class = ak_read_once(page->class);
	cap = class < AK_ALLOC_CLASSES ? __ak_cache_cap(class) : 0;
	if (!cap || cache->count[class] >= 2 * cap) {
		ak_lock_release(&cache->lock);
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
			__ak_cache_flush(cache, class, cap / 2, sleepable, __ak_this_cpu());
	}
	ak_lock_release(&cache->lock);
	return err;
}

#if __AK_ALLOC_DEFINE
/*
 * In BPF, the CPU-cache path and the shared path of each call are functions
 * of their own (static, out of line), and the entry point calls one, then
 * maybe the other, keeping nothing on its stack: a program's 512 bytes of
 * stack (over every frame of a call chain) pay for the larger of the two
 * paths' spills, not for both inlined into one frame.
 */
#ifdef __BPF__
#define __ak_alloc_path static __attribute__((noinline))
#else
#define __ak_alloc_path static inline
#endif

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
#if AK_ALLOC_CPUS
	unsigned long long obj = __ak_alloc_cached(size);

	if (obj)
		return obj;
	obj = __ak_alloc_shared(size, sleepable, err);
	if (!obj && *err == -ENOMEM && !__ak_alloc_reclaim())
		obj = __ak_alloc_shared(size, sleepable, err);
#else
	unsigned long long obj = (unsigned long long)__ak_alloc(size, sleepable, err);
#endif
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
#if AK_ALLOC_CPUS
	return __ak_alloc_cached(size);
#else
	return (void)size, 0;
#endif
}

/* ak_free: documented in alloc.h. */
__ak_global int ak_free(__arg_arena void __arena *ptr)
{
#if AK_ALLOC_CPUS
	int err = __ak_free_cached(ptr, 1);

	if (err == 1)
		err = __ak_free_shared(ptr, 1);
#else
	int err = __ak_free(ptr, 1);
#endif
	__ak_spare_overflow();
	__ak_drain_deferred();	/* best effort: a later call finishes it */
	return err;
}

__ak_global int ak_free_nosleep(__arg_arena void __arena *ptr)
{
#if AK_ALLOC_CPUS
	int err = __ak_free_cached(ptr, 0);

	return err == 1 ? __ak_free_shared(ptr, 0) : err;
#else
	return __ak_free(ptr, 0);
#endif
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
		if (cache->count[class])
			__ak_cache_flush(cache, class, 0, 0, AK_ALLOC_CPU_SLOTS);
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
		if (!__ak_page_unwatched(page, AK_ALLOC_CPU_SLOTS)) {
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

/* Out of line: the frees that may call it are verified without its loop. */
__ak_global int __ak_alloc_spare_trim(unsigned long long keep)
{
	return __ak_spare_trim(keep);
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

#endif /* __ARENAKIT_ALLOC_IMPL_H */
