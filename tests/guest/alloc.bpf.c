// SPDX-License-Identifier: GPL-2.0
/*
 * alloc.h on a real arena: reuse, large objects, exhaustion and recovery,
 * frees on another CPU (driven by tests/guest/alloc.c), and the pool used
 * from a non-sleepable program type.
 */
#define ARENA_PAGES 64
#define MAGIC 0x5eed5eed5eed5eedULL

#include <arenakit/arena.h>
AK_ARENA_MAP(arena, ARENA_PAGES, 0);	/* small, so exhaustion comes quickly */
#define AK_ALLOC_MAP arena
#include <arenakit/alloc.h>
#include <arenakit/list.h>
#include "guest/bpf_test.h"

/* An object that can prove it was not handed out twice. */
struct obj {
	struct obj __arena *next;
	unsigned long long check;	/* its own address ^ MAGIC while owned */
};

int filled, refilled;			/* exhaustion test results */
struct obj __arena *mailbox;		/* objects left for another CPU to free */
unsigned long long corrupted, alloc_failures, busy_frees;

static unsigned long long check_of(struct obj __arena *o)
{
	return (unsigned long long)o ^ MAGIC;
}

/*
 * The chains are made and freed in chunks, each a frame of its own: a
 * frame's budget is 250 ms of its time, calls included, and 100,000
 * allocator calls under TCG can take longer; a chunk takes milliseconds.
 */
#define CHAIN_CHUNK 4096

/* Allocate up to @n more objects onto @head; how many went on in *@added. */
static __noinline struct obj __arena *alloc_onto(struct obj __arena *head, int n, int *added)
{
	struct obj __arena *o;
	int i;

	for (i = ak_opaque_zero(); i < n && can_loop; i++) {
		o = ak_alloc(sizeof(*o), NULL);
		if (!o)
			break;
		o->check = check_of(o);
		o->next = head;
		head = o;
	}
	*added = i;
	return head;
}

/* Allocate up to @max objects chained through ->next; NULL-terminated. */
static struct obj __arena *alloc_chain(int max, int *count)
{
	struct obj __arena *head = 0;
	int chunk, added = 0, n = 0;

	while (n < max && can_loop) {
		chunk = max - n < CHAIN_CHUNK ? max - n : CHAIN_CHUNK;
		head = alloc_onto(head, chunk, &added);
		n += added;
		if (added < chunk)
			break;	/* the arena is full */
	}
	*count = n;
	return head;
}

#include "guest/alloc_retry.h"

/* Free up to @n objects of @head's chain: the rest of it. */
static __noinline struct obj __arena *free_some(struct obj __arena *head, int n)
{
	struct obj __arena *next;
	int i;

	for (i = ak_opaque_zero(); i < n && head && can_loop; i++) {
		next = head->next;
		if (head->check != check_of(head))
			__sync_fetch_and_add(&corrupted, 1);
		head->check = 0;
		if (free_retrying(head))
			__sync_fetch_and_add(&corrupted, 1);
		head = next;
	}
	return head;
}

static void free_chain(struct obj __arena *head)
{
	while (head && can_loop)
		head = free_some(head, CHAIN_CHUNK);
}

/* pages == slab_pages + large_pages + spare_pages, whatever happened. */
static int expect_pages_accounted(void)
{
	struct ak_alloc_stats __arena *st = &ak_allocator.stats;

	test_expect_eq(st->pages, st->slab_pages + st->large_pages + st->spare_pages);
	return 0;
}

/* A size known only at run time (ak_alloc of a size user space chose). */
unsigned int runtime_size = 32;

/* Two live objects of @size never overlap; both go back. */
static int expect_apart_and_free(char __arena *a, char __arena *b, unsigned int size)
{
	test_expect(a && b);
	test_expect(b >= a + size || a >= b + size);
	test_expect_eq(ak_free(a), 0);
	test_expect_eq(ak_free(b), 0);
	return 0;
}

SEC("syscall")
int test_alloc_runtime_size_gets_a_block_that_fits(void *ctx)
{
	unsigned int size = runtime_size;

	return expect_apart_and_free(ak_alloc(size, NULL), ak_alloc(size, NULL), size);
}

SEC("syscall")
int test_alloc_reuses_freed_blocks(void *ctx)
{
	void __arena *a = ak_alloc(40, NULL), *b;

	test_expect(a);
	test_expect_eq(ak_free_nosleep(a), 0);
	b = ak_alloc(40, NULL);
	test_expect(b == a);
	test_expect_eq(ak_free(b), 0);
	test_expect_eq(test_live_objects(), 0);
	test_expect_eq(test_live_bytes(), 0);
	/*
	 * The emptied page is kept (AK_ALLOC_KEEP_EMPTY) until a trim; the
	 * run it came in with (one page kfunc call) is spare.
	 */
	test_expect_eq(ak_allocator.stats.slab_pages, 1);
	test_expect_eq(ak_allocator.stats.spare_pages, AK_ALLOC_PAGE_RUN - 1);
	test_expect_eq(ak_allocator.stats.pages_taken, AK_ALLOC_PAGE_RUN);
	test_expect_eq(ak_alloc_trim(), 0);
	test_expect_eq(ak_allocator.stats.pages, 0);
	return expect_pages_accounted();
}

/* A double free and a foreign free under the real verifier: refused, counted, harmless. */
SEC("syscall")
int test_alloc_double_and_foreign_free(void *ctx)
{
	char __arena *a = ak_alloc(24, NULL), *b = ak_alloc(24, NULL), *big = ak_alloc(5000, NULL), *c, *d;
	char __arena *raw = bpf_arena_alloc_pages(&arena, NULL, 1, -1, 0);
	int err;

	test_expect(a && b && big && raw);
	b[0] = 0x5a;
	test_expect_eq(ak_free(a), 0);
	test_expect_eq(ak_free(a), -EINVAL);
	test_expect_eq(ak_free_nosleep(a), -EINVAL);
	test_expect_eq(ak_allocator.stats.double_frees, 2);
	test_expect_eq(ak_free(raw + 64), -EINVAL);	/* a page the allocator never saw */
	test_expect_eq(ak_free(b + 8), -EINVAL);		/* inside an object */
	test_expect_eq(ak_free(big + 4096), -EINVAL);	/* inside a large object */
	/* A block past the bump, never cut: the page's last (b + 24 may be in a CPU's cache). */
	test_expect_eq(ak_free((char __arena *)((unsigned long long)b & ~(AK_PAGE_SIZE - 1ULL)) +
			       __AK_PAGE_HDR + (__AK_PAGE_DATA / 24 - 1) * 24), -EINVAL);
	test_expect_eq(ak_allocator.stats.bad_frees, 4);
	c = ak_alloc(24, NULL);
	d = ak_alloc(24, NULL);
	test_expect(c == a && d != a && d != b);
	test_expect_eq(b[0], 0x5a);
	test_expect_eq(ak_free(big), 0);
	/* Its pages are gone: freeing it again reads a faulting page as 0. */
	test_expect_eq(ak_free(big), -EINVAL);
	err = ak_free(b) ?: ak_free(c) ?: ak_free(d);
	test_expect_eq(err, 0);
	test_expect_eq(test_live_objects(), 0);
	test_expect_eq(ak_alloc_trim(), 0);
	test_expect_eq(ak_allocator.stats.pages, 0);
	bpf_arena_free_pages(&arena, raw, 1);
	return expect_pages_accounted();
}

/*
 * A busy lock costs a bounded number of steps, not the frame's budget:
 * BUSY_WAITS failed waits, then a loop of 4M steps, within stock 6.12's
 * 8,388,608.
 */
#define BUSY_WAITS 12
SEC("syscall")
int test_alloc_busy_lock_keeps_the_budget(void *ctx)
{
	unsigned int cpu = bpf_get_smp_processor_id();
	void __arena *obj, *mine;
	int err = 0, i;

	/*
	 * The shared path's lock, so hold this CPU's cache as a program this
	 * one interrupted would: every call takes the shared path.
	 */
	test_expect(cpu < AK_ALLOC_CPUS);
	ak_allocator.cpus[cpu].lock.locked = 1;
	mine = ak_alloc(32, NULL);
	test_expect(mine);
	ak_allocator.lock.locked = 1;	/* as if another CPU held it */
	/* A free does not wait: the block is queued for the lock's next holder. */
	test_expect_eq(ak_free(mine), 0);
	test_expect(ak_allocator.queued);
	test_expect_eq(ak_free(mine), -EINVAL);
	for (i = ak_opaque_zero(); i < BUSY_WAITS && can_loop; i++) {
		obj = ak_alloc(32, &err);
		test_expect(!obj);
		test_expect_eq(err, -EBUSY);
	}
	ak_allocator.lock.locked = 0;
	test_expect_eq(ak_allocator.stats.fail_busy, BUSY_WAITS);
	obj = ak_alloc(32, NULL);
	test_expect(obj == mine);		/* put back by this allocation, and reused */
	test_expect(!ak_allocator.queued);
	test_expect_eq(ak_free(obj), 0);
	ak_allocator.cpus[cpu].lock.locked = 0;
	/* The waits took BUSY_WAITS x AK_LOCK_SPINS steps; the rest is still there. */
	err = 0;
	for (i = ak_opaque_zero(); i < 4000000; i++) {
		if (!can_loop) {
			err = 1;
			break;
		}
	}
	test_expect_eq(err, 0);
	return expect_pages_accounted();
}

/* Objects left allocated for user space to inspect through the mmap. */
struct obj __arena *kept;
int kept_count;

SEC("syscall")
int keep_objects(void *ctx)
{
	kept = alloc_chain(200, &kept_count);
	test_expect_eq(kept_count, 200);
	return 0;
}

SEC("syscall")
int free_kept(void *ctx)
{
	free_chain(kept);
	kept = 0;
	return 0;
}

SEC("syscall")
int test_alloc_large_objects(void *ctx)
{
	char __arena *big = ak_alloc(3 * 4096, NULL);

	test_expect(big);
	test_expect_eq(ak_allocator.stats.pages, 4);
	test_expect_eq(ak_allocator.stats.large_pages, 4);
	big[0] = 1;
	big[3 * 4096 - 1] = 2;	/* the last byte asked for is usable */
	test_expect_eq(ak_free(big), 0);
	test_expect_eq(ak_allocator.stats.pages, 0);
	test_expect_eq(test_live_objects(), 0);
	return expect_pages_accounted();
}

/* Fill the arena, free everything, fill it again: the same count fits. */
SEC("syscall")
int test_alloc_exhaustion_recovers(void *ctx)
{
	struct obj __arena *head;
	unsigned long long pages;
	int err = 0;

	head = alloc_chain(100000, &filled);
	test_expect(!ak_alloc(sizeof(struct obj), &err));	/* the arena is full */
	test_expect_eq(err, -ENOMEM);
	pages = ak_allocator.stats.pages;
	err = expect_pages_accounted();
	if (err)
		return err;
	free_chain(head);
	test_expect_eq(test_live_objects(), 0);
	test_expect_eq(test_live_bytes(), 0);
	test_expect_eq(ak_alloc_trim(), 0);
	test_expect_eq(ak_allocator.stats.pages, 0);
	head = alloc_chain(100000, &refilled);
	free_chain(head);
	/*
	 * Every page but the globals' holds __ak_blocks_per_page(0) blocks of
	 * 16 bytes, all used.
	 * The globals: ak_allocator (its CPU caches most), then this file's.
	 */
	test_expect(pages >= ARENA_PAGES - 2 - sizeof(ak_allocator) / AK_PAGE_SIZE);
	test_expect_eq(filled, pages * __ak_blocks_per_page(0));
	test_expect_eq(refilled, filled);
	test_expect_eq(corrupted, 0);
	test_expect_eq(test_live_objects(), 0);
	return expect_pages_accounted();
}

/* One round of the two-CPU test: allocate, free half, trade the rest
 * through the mailbox so that they are freed by whoever takes them. */
SEC("syscall")
int churn(void *ctx)
{
	struct obj __arena *mine, *theirs;
	int n;

	mine = alloc_chain(32, &n);
	if (n != 32)
		__sync_fetch_and_add(&alloc_failures, 1);	/* a NULL ends the chain */
	theirs = __sync_lock_test_and_set(&mailbox, mine);
	free_chain(theirs);
	return 0;
}

/*
 * One round of the four-CPU test: 32 objects of random sizes, 16 to 64
 * bytes (seven classes: what the CPUs' caches may hold stays well inside
 * this small arena), traded through the mailbox as churn's are.
 */
SEC("syscall")
int churn_sizes(void *ctx)
{
	struct obj __arena *head = 0, *o;
	int i;

	for (i = ak_opaque_zero(); i < 32 && can_loop; i++) {
		o = ak_alloc(sizeof(*o) + bpf_get_prandom_u32() % 49, NULL);
		if (!o) {
			__sync_fetch_and_add(&alloc_failures, 1);
			continue;
		}
		o->check = check_of(o);
		o->next = head;
		head = o;
	}
	free_chain(__sync_lock_test_and_set(&mailbox, head));
	return 0;
}

SEC("syscall")
int drain_mailbox(void *ctx)
{
	free_chain(__sync_lock_test_and_set(&mailbox, 0));
	return 0;
}

SEC("syscall")
int fill_pool(void *ctx)
{
	return ak_alloc_reserve(sizeof(struct obj), 64);
}

/* Non-sleepable: only the pool, no page kfuncs. */
SEC("tc")
int pool_user(struct __sk_buff *skb)
{
	struct obj __arena *head = 0, *o;
	int i, got = 0;

	for (i = ak_opaque_zero(); i < 64 && can_loop; i++) {
		o = ak_alloc_nosleep(sizeof(*o), NULL);
		if (!o)
			break;
		o->check = check_of(o);
		o->next = head;
		head = o;
		got++;
	}
	while (head && can_loop) {
		o = head->next;
		if (head->check != check_of(head))
			__sync_fetch_and_add(&corrupted, 1);
		ak_free_nosleep(head);
		head = o;
	}
	return got;
}

/*
 * A user's shape: a retry loop around ak_alloc in a global function of
 * the program's own, whose objects must each keep their 32 bytes to
 * themselves. Each is filled with words of its own address; objects that
 * overlapped would overwrite each other's, so every word read back intact
 * means every object kept its 32 bytes to itself.
 */
#define RETRY_OBJECTS 32	/* a power of two: indexes are masked for the verifier */

/* Globals: a loop up to a constant makes the verifier track its counter. */
int retry_n = RETRY_OBJECTS, retry_tries = 4;

__weak __noinline int alloc_retrying(__u64 size, __u64 *out)
{
	void __arena *p = 0;
	int err = 0, tries;

	if (!out)
		return -EINVAL;
	for (tries = ak_opaque_zero(); tries < retry_tries && can_loop; tries++) {
		p = ak_alloc(size, &err);
		if (p || err != -EBUSY)
			break;
	}
	*out = (__u64)p;
	return p ? 0 : err;
}

__u64 retry_objects[RETRY_OBJECTS];
__u32 retry_changed;	/* a global: a sum in a register the verifier would track */


/* Allocate the objects, each filled with words of its own address. */
__weak __noinline int retry_fill(void)
{
	__u64 __arena *w;
	__u64 a;
	int i;

	for (i = ak_opaque_zero(); i < retry_n && can_loop; i++) {
		if (alloc_retrying(32, &retry_objects[i & (RETRY_OBJECTS - 1)]))
			return -ENOMEM;
		a = retry_objects[i & (RETRY_OBJECTS - 1)];
		w = (__u64 __arena *)a;
		w[0] = a;
		w[1] = ~a;
		w[2] = a + 1;
		w[3] = a - 1;
	}
	return 0;
}

/* 1 if the 32 bytes at @addr no longer hold what retry_fill wrote. */
__weak __noinline int object_changed(__u64 addr)
{
	__u64 __arena *w = (__u64 __arena *)addr;

	return !addr || (addr & 7) || w[0] != addr || w[1] != ~addr || w[2] != addr + 1 ||
	       w[3] != addr - 1;
}

__weak __noinline int retry_check_and_free(void)
{
	int i;

	retry_changed = 0;
	for (i = ak_opaque_zero(); i < retry_n && can_loop; i++)
		retry_changed += object_changed(retry_objects[i & (RETRY_OBJECTS - 1)]);
	for (i = ak_opaque_zero(); i < retry_n && can_loop; i++)
		ak_free((void __arena *)retry_objects[i & (RETRY_OBJECTS - 1)]);
	return 0;
}

SEC("syscall")
int test_alloc_retry_loop_in_a_global_function_keeps_objects_apart(void *ctx)
{
	test_expect_eq(retry_fill(), 0);
	test_expect_eq(retry_check_and_free(), 0);
	test_expect_eq(retry_changed, 0);
	test_expect_eq(test_live_objects(), 0);
	return 0;
}

char _license[] SEC("license") = "GPL";
