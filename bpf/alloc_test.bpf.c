// SPDX-License-Identifier: GPL-2.0
/*
 * alloc.h on a real arena: reuse, large objects, exhaustion and recovery,
 * frees on another CPU (driven by tests/guest/alloc.c), and the pool used
 * from a non-sleepable program type.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <arenakit/arena.h>

#define ARENA_PAGES 64
#define MAGIC 0x5eed5eed5eed5eedULL

ARENA_MAP(arena, ARENA_PAGES, 0);	/* before alloc.h, which uses it */

#include <arenakit/alloc.h>

/* An object that can prove it was not handed out twice. */
struct obj {
	struct obj __arena *next;
	unsigned long long check;	/* its own address ^ MAGIC while owned */
};

int zero;
int filled, refilled;			/* exhaustion test results */
struct obj __arena *mailbox;		/* objects left for another CPU to free */
unsigned long long corrupted, alloc_failures;

static unsigned long long check_of(struct obj __arena *o)
{
	return (unsigned long long)o ^ MAGIC;
}

/* Allocate up to @max objects chained through ->next; NULL-terminated. */
static struct obj __arena *alloc_chain(int max, int *count)
{
	struct obj __arena *head = 0, *o;
	int i;

	for (i = zero; i < max && can_loop; i++) {
		o = arena_alloc(sizeof(*o));
		if (!o)
			break;
		o->check = check_of(o);
		o->next = head;
		head = o;
	}
	*count = i;
	return head;
}

static void free_chain(struct obj __arena *head)
{
	struct obj __arena *next;

	while (head && can_loop) {
		next = head->next;
		if (head->check != check_of(head))
			__sync_fetch_and_add(&corrupted, 1);
		head->check = 0;
		arena_free(head);
		head = next;
	}
}

SEC("syscall")
int test_alloc_reuses_freed_blocks(void *ctx)
{
	void __arena *a = arena_alloc(40), *b;

	if (!a)
		return 1;
	arena_free(a);
	b = arena_alloc(40);
	if (b != a)
		return 2;
	arena_free(b);
	if (arena_allocator.stats.objects || arena_allocator.stats.bytes)
		return 3;
	return 0;
}

/* Objects left allocated for user space to inspect through the mmap. */
struct obj __arena *kept;
int kept_count;

SEC("syscall")
int keep_objects(void *ctx)
{
	kept = alloc_chain(200, &kept_count);
	return kept_count == 200 ? 0 : 1;
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
	char __arena *big = arena_alloc(3 * 4096);
	unsigned long long pages = arena_allocator.stats.pages;

	if (!big || pages != 4)
		return 1;
	big[0] = 1;
	big[3 * 4096 - 1] = 2;	/* the last byte asked for is usable */
	arena_free(big);
	return arena_allocator.stats.pages == 0 && !arena_allocator.stats.objects ? 0 : 2;
}

/* Fill the arena, free everything, fill it again: the same count fits. */
SEC("syscall")
int test_alloc_exhaustion_recovers(void *ctx)
{
	struct obj __arena *head;
	int n;

	unsigned long long pages;

	head = alloc_chain(100000, &filled);
	if (arena_alloc(sizeof(struct obj)))
		return 1;	/* the arena should be full */
	pages = arena_allocator.stats.pages;
	free_chain(head);
	if (arena_allocator.stats.objects || arena_allocator.stats.bytes)
		return 2;
	head = alloc_chain(100000, &refilled);
	free_chain(head);
	n = filled;
	/* Every page but the globals' holds 128 blocks of 32 bytes, all used. */
	if (pages < ARENA_PAGES - 2 || n != pages * 4096 / 32 || refilled != n || corrupted)
		return 3;
	return arena_allocator.stats.objects == 0 ? 0 : 4;
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
		__sync_fetch_and_add(&alloc_failures, 32 - n);
	theirs = __sync_lock_test_and_set(&mailbox, mine);
	free_chain(theirs);
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
	return arena_alloc_reserve(sizeof(struct obj), 64);
}

/* Non-sleepable: only the pool, no page kfuncs. */
SEC("tc")
int pool_user(struct __sk_buff *skb)
{
	struct obj __arena *head = 0, *o;
	int i, got = 0;

	for (i = zero; i < 64 && can_loop; i++) {
		o = arena_alloc_nosleep(sizeof(*o));
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
		arena_free_nosleep(head);
		head = o;
	}
	return got;
}

char _license[] SEC("license") = "GPL";
