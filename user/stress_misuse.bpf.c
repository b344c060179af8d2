// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF side of `arenakit stress` misuse (user/stress_misuse.c), with a
 * list of its own (stress_list.h) for the stale cursors.
 */
#include "stress.h"
#define AK_ARENA_PAGES STRESS_ARENA_PAGES
#include <arenakit/alloc.h>
#include "stress_list.h"

/*
 * misuse: a long random run of allocations and frees (xorshift64, seeded
 * by user space, so a run can be replayed), with double, interior and
 * foreign frees and stale cursors mixed in. Each must be refused (-EINVAL,
 * -AK_ESTALE) and change nothing; user space then checks the allocator's
 * counts and that freeing what is left gives every page back.
 */
__u64 rng;				/* the generator's state: never 0 */
__u64 ops_left;
struct stress_misuse_counts misuse;
void __arena *__arena *__arena_global live;	/* STRESS_MISUSE_SLOTS objects or NULL */

static __u64 next_random(void)
{
	rng = stress_xorshift(rng);
	return rng;
}

static const unsigned int misuse_sizes[8] = { 8, 16, 24, 60, 100, 500, 2000, 5000 };

/* One operation; a global function, so the run's loop counts one step for it. */
__noinline int misuse_step(void)
{
	__u64 r = next_random(), k = r % 16;
	void __arena *__arena *slot = &live[r & (STRESS_MISUSE_SLOTS - 1)];
	void __arena *p = *slot;
	struct ak_list_cursor c;
	struct stress_item __arena *it;

	if (k == 10 && p) {			/* free, then free again */
		if (ak_free(p))
			misuse.free_failed++;
		*slot = 0;
		misuse.doubles++;
		misuse.doubles_caught += ak_free(p) == -EINVAL;
	} else if (k == 11 && p) {		/* a pointer inside the object */
		misuse.interiors++;
		misuse.interiors_caught += ak_free((char __arena *)p + 8) == -EINVAL;
	} else if (k == 12) {			/* arena memory the allocator never gave */
		misuse.foreigns++;
		misuse.foreigns_caught += ak_free(&list.len) == -EINVAL;
	} else if (k == 13 && built) {		/* a cursor, then a change, then a resume */
		it = item((r >> 20) % built);
		if (!it)
			return 0;
		c.pos = &it->node;
		c.list = &list;
		c.gen = list.gen;
		c.seen = it->key;
		ak_list_move(&list, list.head.next, &list);	/* a change, order kept */
		misuse.stales++;
		misuse.stales_caught += ak_list_count(&list, &c) == -AK_ESTALE && !c.pos;
	} else if (p) {
		if (ak_free(p))
			misuse.free_failed++;
		else
			misuse.frees++;
		*slot = 0;
	} else {
		p = ak_alloc(misuse_sizes[(r >> 32) & 7], NULL);
		if (p) {
			*slot = p;
			misuse.allocs++;
		} else {
			misuse.alloc_failed++;
		}
	}
	return 0;
}

SEC("syscall")
int misuse_run(void *ctx)
{
	__u64 run_ops = STRESS_MISUSE_OPS_PER_RUN;

	if (!live) {
		live = ak_alloc(STRESS_MISUSE_SLOTS * sizeof(*live), NULL);
		if (!live)
			return -ENOMEM;
	}
	while (ops_left && run_ops && can_loop) {
		misuse_step();
		ops_left--;
		run_ops--;
	}
	return ops_left ? -AK_EBUDGET : 0;	/* run again to go on */
}

/*
 * Free what the run left, then the slots; each free must succeed. A run the
 * loop budget cuts says so and the next goes on from teardown_at.
 */
__u64 teardown_at;

SEC("syscall")
int misuse_teardown(void *ctx)
{
	for (; live && teardown_at < STRESS_MISUSE_SLOTS; teardown_at++) {
		if (!can_loop)
			return -AK_EBUDGET;
		if (live[teardown_at] && ak_free(live[teardown_at]))
			misuse.free_failed++;
		live[teardown_at] = 0;
	}
	if (live && ak_free(live))
		misuse.free_failed++;
	live = 0;
	teardown_at = 0;
	return 0;
}

char _license[] SEC("license") = "GPL";
