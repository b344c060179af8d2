// SPDX-License-Identifier: GPL-2.0
/*
 * The allocator under contention at the sizes a program's records have:
 * each run allocates 32 objects of 16 to 616 bytes (random), stamps every
 * word after their header, trades its chain for the one another CPU left
 * in the mailbox, and checks and frees that one (driven by
 * tests/guest/alloc_busy.c, on 4 CPUs at once).
 */
#define MAGIC 0x5eed5eed5eed5eedULL

#include <arenakit/arena.h>
/* Room for 4 CPUs' caches of every class these sizes use, and their pages. */
AK_ARENA_MAP(arena, 4096, 0);
#define AK_ALLOC_MAP arena
#include <arenakit/alloc.h>
#include "guest/bpf_test.h"

#define PER_RUN 32
#define MIN_SIZE 16
#define MAX_SIZE 616
#define MAX_WORDS ((MAX_SIZE - MIN_SIZE) / 8)

/* An object whose every word says whose it is: one handed out twice shows. */
struct stamped {
	struct stamped __arena *next;
	unsigned long long words;	/* stamped words after this header */
	unsigned long long stamp[];
};

struct stamped __arena *mailbox;	/* the last run's chain, for the next run to free */
unsigned long long alloc_failures, corrupted, free_failures, busy_frees;

static __always_inline unsigned long long stamp_of(struct stamped __arena *o, unsigned long long i)
{
	return (unsigned long long)o ^ MAGIC ^ (i + 1) * 0x9e3779b97f4a7c15ULL;
}

/* Global functions: the verifier checks each loop once, not in every caller's. */
__weak __noinline int stamp_words(struct stamped __arena *o __arg_arena)
{
	unsigned long long i, n;

	if (!o)
		return 0;
	n = o->words;
	for (i = ak_opaque_zero(); i < n && i < MAX_WORDS && can_loop; i++)
		o->stamp[i] = stamp_of(o, i);
	return 0;
}

/* The words of @o that are not its stamps (or its count itself, if wrong); clears them. */
__weak __noinline int stamps_wrong(struct stamped __arena *o __arg_arena)
{
	unsigned long long i, n;
	int wrong = 0;

	if (!o)
		return 0;
	n = o->words;
	if (n > MAX_WORDS)
		return 1;
	for (i = ak_opaque_zero(); i < n && can_loop; i++) {
		wrong += o->stamp[i] != stamp_of(o, i);
		o->stamp[i] = 0;
	}
	return wrong;
}

#include "guest/alloc_retry.h"

/* Check and free a run's chain (at most PER_RUN objects). */
static int free_chain(struct stamped __arena *head)
{
	struct stamped __arena *next;
	int i;

	for (i = ak_opaque_zero(); i < PER_RUN && head && can_loop; i++) {
		next = head->next;
		if (stamps_wrong(head))
			__sync_fetch_and_add(&corrupted, 1);
		if (free_retrying(head))
			__sync_fetch_and_add(&free_failures, 1);
		head = next;
	}
	if (head)	/* a chain longer than a run makes */
		__sync_fetch_and_add(&corrupted, 1);
	return 0;
}

SEC("syscall")
int churn_stamped(void *ctx)
{
	struct stamped __arena *head = 0, *o;
	unsigned int size;
	int i;

	for (i = ak_opaque_zero(); i < PER_RUN && can_loop; i++) {
		size = MIN_SIZE + bpf_get_prandom_u32() % (MAX_SIZE - MIN_SIZE + 1);
		o = ak_alloc(size, NULL);
		if (!o) {
			__sync_fetch_and_add(&alloc_failures, 1);
			continue;
		}
		o->words = (size - MIN_SIZE) / 8;
		stamp_words(o);
		o->next = head;
		head = o;
	}
	return free_chain(__sync_lock_test_and_set(&mailbox, head));
}

SEC("syscall")
int drain_mailbox(void *ctx)
{
	return free_chain(__sync_lock_test_and_set(&mailbox, 0));
}

char _license[] SEC("license") = "GPL";
