// SPDX-License-Identifier: GPL-2.0
/*
 * A list of 16M nodes, counted and checked whole in one program run by
 * the chunked _all walks of list.h; and a cycle, which they must stop
 * with -ELOOP. tests/guest/list_huge.c drives it. The nodes are bare
 * 16-byte list nodes cut from 1 MiB allocations: 256 MiB of arena.
 */
#define AK_ARENA_PAGES (1 << 19)	/* 2 GiB of address space */
#include <arenakit/alloc.h>
#include <arenakit/list.h>

#define SLAB_NODES 65536		/* 1 MiB of nodes per allocation */
#define NODES_PER_RUN (16ULL << 20)	/* keeps each build run short */

struct ak_list __arena_global huge;
struct ak_list_node __arena *__arena_global cycle_from;	/* the last node, when cut */

__u64 target;		/* nodes wanted; set by user space */
__u64 built;
long long count_result;
int check_result;

/* Link up to @n nodes of a new slab; a global function: a budget per call. */
__noinline long long add_slab(__u64 n)
{
	struct ak_list_node __arena *slab = ak_alloc(SLAB_NODES * sizeof(*slab), NULL);
	__u64 i;

	if (!slab)
		return -ENOMEM;
	for (i = ak_opaque_zero(); i < n && i < SLAB_NODES && can_loop; i++)
		ak_list_add_tail(&huge, &slab[i]);
	return i;
}

SEC("syscall")
int build(void *ctx)
{
	__u64 stop = built + NODES_PER_RUN;
	long long added;

	if (!built)
		ak_list_init(&huge);
	while (built < target && built < stop && can_loop) {
		added = add_slab(target - built < SLAB_NODES ? target - built : SLAB_NODES);
		if (added < 0)
			return added;
		built += added;
	}
	return built < target ? -AK_EBUDGET : 0;	/* run again to go on */
}

SEC("syscall")
int count_all(void *ctx)
{
	count_result = ak_list_count_all(&huge);
	return 0;
}

SEC("syscall")
int check_all(void *ctx)
{
	check_result = ak_list_check_all(&huge, 0);
	return 0;
}

/* The last node's next to the first node: the walk goes round forever. */
SEC("syscall")
int make_cycle(void *ctx)
{
	struct ak_list_node __arena *last = huge.head.prev;

	cycle_from = last;
	last->next = huge.head.next;
	return 0;
}

SEC("syscall")
int undo_cycle(void *ctx)
{
	if (cycle_from)
		cycle_from->next = &huge.head;
	cycle_from = 0;
	return 0;
}

char _license[] SEC("license") = "GPL";
