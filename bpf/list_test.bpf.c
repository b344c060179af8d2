// SPDX-License-Identifier: GPL-2.0
/*
 * list.h on a real arena, under the real verifier. Nodes are carved from
 * pages taken with bpf_arena_alloc_pages (the allocator of alloc.h is not
 * in yet), starting past the first bytes of a page: a page at the arena's
 * 4 GiB-aligned base has an address whose low 32 bits are 0, like NULL.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <arenakit/list.h>

#define NUMA_NO_NODE (-1)
#define PAGE 4096
#define NODES 200

ARENA_MAP(arena, 1024, 0);

struct item {
	struct arena_list_node node;
	__u64 value;
};

struct arena_list_node __arena_global head;
struct arena_list_node __arena_global other;
struct item __arena *items;
int zero;

static int carve_items(void)
{
	char __arena *page = bpf_arena_alloc_pages(&arena, NULL,
						   (NODES * sizeof(struct item)) / PAGE + 2,
						   NUMA_NO_NODE, 0);
	int i;

	if (!page)
		return -ENOMEM;
	items = (struct item __arena *)(page + 64);
	for (i = zero; i < NODES && can_loop; i++)
		items[i].value = i;
	return 0;
}

/* The values in order, their sum as a checksum, and a sound list. */
static int expect_list(struct arena_list_node __arena *h, long long count, __u64 sum)
{
	struct item __arena *pos;
	__u64 got = 0;

	if (arena_list_count(h, NULL) != count)
		return 1;
	if (arena_list_check(h, NULL, NULL))
		return 2;
	arena_list_for_each_entry(pos, h, node)
		got += pos->value;
	if (arena_list_walk_status(pos, h, node))
		return 3;
	return got == sum ? 0 : 4;
}

SEC("syscall")
int test_list_build_and_edit(void *ctx)
{
	struct item __arena *pos, *tmp;
	int i, err;

	if (carve_items())
		return 100;
	arena_list_init(&head);
	arena_list_init(&other);
	if (!arena_list_empty(&head) || arena_list_first(&head))
		return 101;
	for (i = zero; i < NODES && can_loop; i++)
		arena_list_add_tail(&items[i].node, &head);
	err = expect_list(&head, NODES, NODES * (NODES - 1) / 2);
	if (err)
		return 10 + err;
	if (arena_list_first(&head) != &items[0].node ||
	    arena_list_last(&head) != &items[NODES - 1].node)
		return 102;

	/* Odd values move to the other list; then splice them back in front. */
	arena_list_for_each_entry_safe(pos, tmp, &head, node)
		if (pos->value & 1)
			arena_list_move_tail(&pos->node, &other);
	if (arena_list_walk_status(pos, &head, node))
		return 103;
	err = expect_list(&head, NODES / 2, (NODES / 2) * (NODES / 2 - 1));
	if (err)
		return 20 + err;
	arena_list_splice_init(&other, &head);
	if (!arena_list_empty(&other))
		return 104;
	err = expect_list(&head, NODES, NODES * (NODES - 1) / 2);
	if (err)
		return 30 + err;
	if (arena_list_first(&head) != &items[1].node)
		return 105;
	return 0;
}

/* arena_list_del must unlink through the neighbours (the 6.12 selftests'
 * list_del wrote a local copy and left the node linked). Nothing is freed:
 * a freed page would hide the bug behind faulting loads. */
SEC("syscall")
int test_list_del_unlinks(void *ctx)
{
	int i;

	if (carve_items())
		return 100;
	arena_list_init(&head);
	for (i = zero; i < 3 && can_loop; i++)
		arena_list_add_tail(&items[i].node, &head);
	arena_list_del(&items[1].node);
	if (items[0].node.next != &items[2].node || items[2].node.prev != &items[0].node)
		return 1;
	if (items[1].node.next || items[1].node.prev)
		return 2;
	if (arena_list_count(&head, NULL) != 2 || arena_list_check(&head, NULL, NULL))
		return 3;
	arena_list_del(&items[0].node);
	arena_list_del(&items[2].node);
	return arena_list_empty(&head) ? 0 : 4;
}

SEC("syscall")
int test_list_find(void *ctx)
{
	const long offset = arena_list_key_offset(struct item, node, value);
	struct arena_list_node __arena *found = 0;
	int i;

	if (carve_items())
		return 100;
	arena_list_init(&head);
	for (i = zero; i < NODES && can_loop; i++)
		arena_list_add_tail(&items[i].node, &head);
	if (arena_list_find(&head, offset, 150, NULL, &found) || found != &items[150].node)
		return 1;
	if (arena_list_find(&head, offset, NODES + 7, NULL, &found) || found)
		return 2;
	return 0;
}

/* A corrupted back link is found and named. */
SEC("syscall")
int test_list_check_finds_broken_link(void *ctx)
{
	struct arena_list_node __arena *bad = 0;
	int i;

	if (carve_items())
		return 100;
	arena_list_init(&head);
	for (i = zero; i < 10 && can_loop; i++)
		arena_list_add_tail(&items[i].node, &head);
	items[6].node.prev = &items[2].node;
	if (arena_list_check(&head, NULL, &bad) != -EINVAL)
		return 1;
	return bad == &items[6].node ? 0 : 2;
}

char _license[] SEC("license") = "GPL";
