/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/alloc_types.h - the allocator's state as it lies in the arena:
 * struct ak_allocator (its lists, queues, statistics and CPU caches) and
 * the header at the start of each of its pages. No code: a loader or a test
 * that reads the allocator through the arena's mmap needs only this. The
 * calls are in <arenakit/alloc.h>.
 */
#ifndef __ARENAKIT_ALLOC_TYPES_H
#define __ARENAKIT_ALLOC_TYPES_H

#include <arenakit/arena.h>
#include <arenakit/lock.h>

#define AK_ALLOC_CLASSES 47

/*
 * CPUs with a cache of their own in the allocator: 512 bytes of the arena's
 * globals each. Every object of a program must agree, as on AK_ARENA_PAGES
 * (alloc.h's AK_ALLOC_CPUS says how many of them this object's calls use).
 */
#ifndef AK_ALLOC_CPU_SLOTS
#define AK_ALLOC_CPU_SLOTS 64
#endif

/*
 * A small object's page (one page, cut into blocks of one class):
 *
 *   0        64                                                   4096
 *   | header | block | block | ... | block (bump) ...never used... | lives |
 *
 * The header (struct __ak_page) holds the class, the bump (the first block
 * never handed out) and where the blocks end, the head of the page's free
 * list (an offset; each free block holds the next one's offset in its
 * first bytes), the count of live blocks, the links of the class's
 * partial or empty list, and where the live bytes are: byte i is not zero
 * while block i is handed out. They are the only state that says "live":
 * allocation sets a block's byte (ak_byte_publish: it is the byte's only
 * writer, the block being its own), a free clears it (ak_byte_claim,
 * without the lock) and wins only if it saw it set. A byte each, not a
 * bit, so that setting one is a store that no free of a neighbour can
 * undo, where a bit's or would need an atomic. A page of at most
 * __AK_HDR_LIVES blocks (blocks of 168 bytes and more) keeps its live
 * bytes in the header (.lives); smaller blocks' pages keep them in the
 * page's last bytes, after the last block (a block less a page than the
 * header alone would leave room for).
 * A large object's pages have the same header, class __AK_CLASS_LARGE, the
 * object at offset 64 and its live byte in .lives[0].
 */

/* Bytes before a page's first block (and before a large object). */
#define __AK_PAGE_HDR 64
#define __AK_PAGE_DATA (AK_PAGE_SIZE - __AK_PAGE_HDR)
/* Live bytes the header holds: pages of this many blocks or fewer keep them there. */
#define __AK_HDR_LIVES 24

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
	unsigned short end;		/* small: where the last block ends */
	unsigned short lives_at;	/* offset of block 0's live byte */
	unsigned short size;		/* small: the block size */
	unsigned short unused;
	unsigned char lives[__AK_HDR_LIVES];	/* live bytes of a page of few blocks */
};

_Static_assert(sizeof(struct __ak_page) == __AK_PAGE_HDR, "the page header is 64 bytes");
_Static_assert(__builtin_offsetof(struct __ak_page, lives) % 8 == 0,
	       "the header's live bytes start a word of their own");

/*
 * The statistics. Read them with ak_alloc_stats_read(): objects and bytes
 * in ak_allocator.stats are only the shared path's part of the count.
 */
struct ak_alloc_stats {
	unsigned long long pages;		/* taken from the kernel, held now */
	unsigned long long slab_pages;		/* of them, cut into blocks */
	unsigned long long large_pages;		/* of them, in large objects */
	unsigned long long spare_pages;		/* of them, empty, of no class */
	unsigned long long objects;		/* handed out, not yet freed */
	unsigned long long bytes;		/* their blocks' bytes (large: pages') */
	unsigned long long fail_nomem;		/* allocations: arena full */
	unsigned long long fail_size;		/* size 0 or over AK_ALLOC_MAX */
	unsigned long long fail_busy;		/* the lock stayed busy */
	unsigned long long fail_budget;		/* the loop budget ran out */
	unsigned long long double_frees;	/* frees of a block already free */
	unsigned long long bad_frees;		/* foreign or interior pointers */
	unsigned long long pages_returned;	/* given back to the kernel */
	unsigned long long pages_taken;		/* taken from the kernel, ever */
	unsigned long long page_calls;		/* page kfunc calls (take or give back), ever */
};

/* A size class: its pages with a free block (all free: on .empty). */
struct __ak_class {
	struct __ak_page __arena *partial;
	struct __ak_page __arena *empty;
	unsigned long long free_blocks;	/* in partial and empty pages */
	unsigned long long reserved;	/* the pool asked for: keep this many */
	unsigned long long empty_pages;	/* on .empty */
};

/*
 * A CPU's cache: per class, a stack of free blocks linked through their
 * first word, and how many; the CPU's share of stats.objects and .bytes
 * (it wraps below zero when it frees more than it handed out). All under
 * .lock: __AK_CACHE_ALLOC while a call allocates, __AK_CACHE_FREE while one
 * frees (see __ak_page_unwatched in alloc_impl_free.h).
 */
struct __ak_cpu_cache {
	struct ak_lock lock;
	unsigned int unused;
	unsigned long long objects;
	unsigned long long bytes;
	unsigned long long pad;
	void __arena *head[AK_ALLOC_CLASSES];
	unsigned char count[AK_ALLOC_CLASSES];
	unsigned char pad2[512 - 32 - 9 * AK_ALLOC_CLASSES];
};

_Static_assert(sizeof(struct __ak_cpu_cache) == 512, "a CPU's cache is 512 bytes");

/* A cache lock's value: what its holder does. */
#define __AK_CACHE_ALLOC 1U
#define __AK_CACHE_FREE 2U

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
	/*
	 * Spare pages, under the lock: runs of adjacent pages, each linked
	 * through its first page's .next, with its length in .pages.
	 */
	struct __ak_page __arena *spare;
	struct ak_alloc_stats stats;
	struct __ak_cpu_cache cpus[AK_ALLOC_CPU_SLOTS];
};

#endif /* __ARENAKIT_ALLOC_TYPES_H */
