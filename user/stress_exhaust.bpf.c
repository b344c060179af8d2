// SPDX-License-Identifier: GPL-2.0
/*
 * The exhaust scenario of `arenakit stress` (user/stress_exhaust.c), in an
 * arena of its own small enough to fill: fill it until no allocation of any
 * size succeeds, then give the filler back one object at a time (the
 * smallest, last taken, first), trying an operation after each, so that it
 * meets a full arena at every point where it allocates. User space checks
 * each failure: the error, and the structure as it was.
 */
#include "stress.h"
#define AK_ARENA_PAGES STRESS_EXHAUST_PAGES
#include <arenakit/alloc.h>
#define AK_HTAB_PROG_MAX_KEY 8	/* the longest key its tables take */
#include <arenakit/htab.h>
#include "stress_items.h"

struct ak_list __arena_global exhaust_list;
struct ak_htab __arena_global exhaust_htab;
void __arena *__arena_global fillers[STRESS_EXHAUST_FILLERS];
__u32 nfillers;

/*
 * From whole pages down to the smallest block: what ak_alloc can still give.
 * The list's items (24 bytes) and the table's nodes must be among them: a
 * class left out may keep a page with room from setup, and an operation of
 * that class then never meets the full arena.
 */
static const unsigned int fill_sizes[] = { 4032, 2008, 1000, 440, 216, 104, 56, 24, 8 };

SEC("syscall")
int setup(void *ctx)
{
	ak_list_init(&exhaust_list);
	return ak_htab_init(&exhaust_htab, sizeof(__u32), sizeof(__u64), 0);
}

/* The size fill() is taking, kept across the runs of one fill. */
__u32 fill_class;

/*
 * Take memory until no size is left: 0, -ENOSPC if fillers[] ran out, or
 * -AK_EBUDGET when the loop budget cut the run (run it again to go on).
 */
SEC("syscall")
int fill(void *ctx)
{
	void __arena *p;
	__u32 class;

	for (;;) {
		class = fill_class;
		if (class >= ARRAY_SIZE(fill_sizes))
			break;
		if (nfillers >= STRESS_EXHAUST_FILLERS)
			return -ENOSPC;
		if (!can_loop)
			return -AK_EBUDGET;
		p = ak_alloc(fill_sizes[class], NULL);
		if (p)
			fillers[nfillers++] = p;
		else
			fill_class = class + 1;
	}
	fill_class = 0;
	return 0;
}

/* Free the filler taken last: 0, or -ENOENT when none is left. */
SEC("syscall")
int unfill_one(void *ctx)
{
	__u32 n = nfillers;

	if (!n || n > STRESS_EXHAUST_FILLERS)
		return -ENOENT;
	nfillers = --n;
	return ak_free(fillers[n]);
}

__u32 op_key;
long long op_result;

/* list add: a new item for the tail, or the allocator's error. */
SEC("syscall")
int list_add(void *ctx)
{
	struct stress_item __arena *it;
	int err = 0;

	it = ak_alloc(sizeof(*it), &err);
	if (it) {
		it->key = op_key;
		ak_list_add_tail(&exhaust_list, &it->node);
	}
	op_result = err;
	return 0;
}

SEC("syscall")
int htab_insert(void *ctx)
{
	__u32 key = op_key;
	__u64 value = (__u64)op_key << 8;

	op_result = ak_htab_update(&exhaust_htab, &key, &value, AK_HTAB_NOEXIST);
	return 0;
}

long long list_check, htab_check;

SEC("syscall")
int check(void *ctx)
{
	stress_check(&exhaust_list, &exhaust_htab, &list_check, &htab_check);
	return 0;
}

SEC("syscall")
int teardown(void *ctx)
{
	int err;

	while (nfillers && nfillers <= STRESS_EXHAUST_FILLERS && can_loop) {
		err = ak_free(fillers[--nfillers]);
		if (err)
			return err;
	}
	if (nfillers)
		return -AK_EBUDGET;
	return stress_teardown(&exhaust_list, &exhaust_htab);
}

char _license[] SEC("license") = "GPL";
