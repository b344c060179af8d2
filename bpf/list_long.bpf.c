// SPDX-License-Identifier: GPL-2.0
/*
 * A list longer than one stack frame's may_goto budget (8,388,608 steps on
 * 6.12). tests/guest/list_long.c drives it run by run: building resumes
 * where the budget cut it, a bare cond_break walk shows the silent short
 * count this library exists to remove, and arena_list_count with a cursor
 * counts the whole list exactly over several runs.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <arenakit/list.h>

#define NUMA_NO_NODE (-1)
#define BATCH_PAGES 256
#define PAGE 4096
/* The first 16 bytes of each batch stay unused: at the arena's 4 GiB-aligned
 * base they would have an address whose low 32 bits are 0. */
#define BATCH_NODES ((BATCH_PAGES * PAGE - 16) / sizeof(struct arena_list_node))

ARENA_MAP(arena, 65536, 0);	/* 256 MiB */

struct arena_list_node __arena_global long_head;

__u64 target;		/* set by user space before the first build run */
__u64 built;
__u64 zero;
struct arena_list_node __arena *carve_next;
__u64 carve_left;
int started;

long long bare_count;
long long count_result;
struct arena_list_cursor cursor;

SEC("syscall")
int build_long_list(void *ctx)
{
	if (!started) {
		arena_list_init(&long_head);
		started = 1;
	}
	while (built < target) {
		cond_break_label(cut);
		if (!carve_left) {
			char __arena *batch = bpf_arena_alloc_pages(&arena, NULL, BATCH_PAGES,
								    NUMA_NO_NODE, 0);

			if (!batch)
				return ENOMEM;
			carve_next = (struct arena_list_node __arena *)(batch + 16);
			carve_left = BATCH_NODES;
		}
		arena_list_add_tail(carve_next, &long_head);
		carve_next++;
		carve_left--;
		built++;
	}
	return 0;
cut:
	return ARENA_EBUDGET;	/* run again to go on */
}

/* What a plain cond_break walk reports: no sign that it was cut. */
SEC("syscall")
int count_bare(void *ctx)
{
	struct arena_list_node __arena *pos = long_head.next;
	long long n = zero;

	while (pos != &long_head) {
		cond_break;
		n++;
		pos = pos->next;
	}
	bare_count = n;
	return 0;
}

SEC("syscall")
int count_once(void *ctx)
{
	count_result = arena_list_count(&long_head, NULL);
	return 0;
}

SEC("syscall")
int count_resume(void *ctx)
{
	count_result = arena_list_count(&long_head, &cursor);
	return 0;
}

/* The same count with the resumable for_each: one call per run. */
struct long_item {
	struct arena_list_node node;
};

struct arena_list_cursor walk_cursor;
long long walk_status;

SEC("syscall")
int walk_resume(void *ctx)
{
	struct long_item __arena *pos;

	arena_list_for_each_entry_resume(pos, &long_head, node, &walk_cursor)
		;
	walk_status = walk_cursor.seen;
	walk_status = arena_list_walk_save(pos, &long_head, node, &walk_cursor) ?: walk_status;
	return 0;
}

char _license[] SEC("license") = "GPL";
