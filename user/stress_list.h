/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The list of stress_item that the list scenarios walk and break
 * (stress_list.bpf.c) and misuse takes stale cursors on
 * (stress_misuse.bpf.c): its globals, its build program and item(). Each
 * object that includes it holds a list of its own, in its own arena.
 * Include after <arenakit/alloc.h> and stress.h.
 */
#ifndef ARENAKIT_STRESS_LIST_H
#define ARENAKIT_STRESS_LIST_H

struct ak_list __arena_global list;
struct stress_item __arena *__arena_global slabs[STRESS_MAX_SLABS];

__u64 target;				/* items wanted (build) */
__u64 built;

/*
 * Link up to @n more items, from the slab the list ends in (a new one when
 * that is full), so that item i is always slab i / STRESS_SLAB_ITEMS,
 * entry i % STRESS_SLAB_ITEMS. A global function: a budget per call.
 */
__noinline long long add_items(__u64 n)
{
	__u64 first = built, s = first / STRESS_SLAB_ITEMS, at = first % STRESS_SLAB_ITEMS, i;
	struct stress_item __arena *slab;

	if (s >= STRESS_MAX_SLABS)
		return -ENOSPC;
	slab = slabs[s];
	if (!at || !slab) {
		slab = ak_alloc(STRESS_SLAB_ITEMS * sizeof(*slab), NULL);
		if (!slab)
			return -ENOMEM;
		slabs[s] = slab;
	}
	for (i = ak_opaque_zero(); i < n && at + i < STRESS_SLAB_ITEMS && can_loop; i++) {
		slab[at + i].key = first + i;
		ak_list_add_tail(&list, &slab[at + i].node);
	}
	return i;
}

/* Grow the list to @target items, STRESS_ITEMS_PER_RUN a run (slab-aligned). */
SEC("syscall")
int build(void *ctx)
{
	__u64 stop = built + STRESS_ITEMS_PER_RUN;
	long long added;

	if (!built)
		ak_list_init(&list);
	while (built < target && built < stop && can_loop) {
		added = add_items(target - built);
		if (added < 0)
			return added;
		built += added;
	}
	return built < target ? -AK_EBUDGET : 0;
}

static struct stress_item __arena *item(__u64 index)
{
	struct stress_item __arena *slab;

	slab = slabs[(index / STRESS_SLAB_ITEMS) & (STRESS_MAX_SLABS - 1)];

	return slab ? &slab[index % STRESS_SLAB_ITEMS] : 0;
}

#endif
