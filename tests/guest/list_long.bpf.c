// SPDX-License-Identifier: GPL-2.0
/*
 * A list longer than one stack frame's may_goto budget (8,388,608 steps on
 * 6.12). tests/guest/list_long.c drives it run by run: building resumes
 * where the budget cut it, a bare cond_break walk shows the silent short
 * count this library exists to remove, and ak_list_count with a cursor
 * counts the whole list exactly over several runs.
 */
#define AK_ARENA_PAGES 131072	/* 512 MiB: 10M 32-byte blocks and room */
#include <arenakit/alloc.h>
#include <arenakit/list.h>
#include "list_long_shared.h"

struct long_item {
	struct ak_list_node node;
	__u64 key;
};

struct ak_list __arena_global long_list;

__u64 target;		/* set by user space before the first build run */
/*
 * Loop steps of work per node in the walks below (set by user space), so
 * that they outlast one frame's budget whether it is a count or time: on
 * the arenakit kernel a frame loops for 250 ms, in which a bare walk of
 * 10M nodes finishes.
 */
__u64 node_work;
__u64 built;

long long bare_count;
long long count_result;
int find_all_result, check_all_result;
__u64 found_key;
struct ak_list_cursor cursor;

SEC("syscall")
int build_long_list(void *ctx)
{
	struct long_item __arena *item;

	if (!built)
		ak_list_init(&long_list);
	while (built < target) {
		ak_cond_break_label(cut);
		item = ak_alloc(sizeof(*item), NULL);
		if (!item)
			return -ENOMEM;
		item->key = built;
		ak_list_add_tail(&long_list, &item->node);
		built++;
	}
	return 0;
cut:
	return -AK_EBUDGET;	/* run again to go on */
}

static __always_inline void work(void)
{
	__u64 i;

	for (i = ak_opaque_zero(); i < node_work && can_loop; i++)
		ak_barrier_var(i);
}

/* What a plain cond_break walk reports: no sign that it was cut. */
SEC("syscall")
int count_bare(void *ctx)
{
	struct ak_list_node __arena *pos = long_list.head.next;
	long long n = ak_opaque_zero();

	while (pos != &long_list.head) {
		cond_break;
		work();
		n++;
		pos = pos->next;
	}
	bare_count = n;
	return 0;
}

SEC("syscall")
int count_once(void *ctx)
{
	count_result = ak_list_count(&long_list, NULL);
	return 0;
}

SEC("syscall")
int count_resume(void *ctx)
{
	count_result = ak_list_count(&long_list, &cursor);
	return count_result == -AK_EBUDGET ? -AK_EBUDGET : 0;
}

/* The same count with the resumable for_each: one call per run. */
struct ak_list_cursor walk_cursor;
long long walk_status;

SEC("syscall")
int walk_resume(void *ctx)
{
	struct long_item __arena *pos;

	ak_list_for_each_entry_resume(pos, &long_list, node, &walk_cursor)
		work();
	walk_status = walk_cursor.seen;
	walk_status = ak_list_walk_save(pos, &long_list, node, &walk_cursor) ?: walk_status;
	return walk_status == -AK_EBUDGET ? -AK_EBUDGET : 0;
}

/* Someone else's edit between two runs of a cursor walk. */
SEC("syscall")
int delete_first(void *ctx)
{
	struct ak_list_node __arena *first = ak_list_first(&long_list);

	if (!first)
		return -ENOENT;
	ak_list_del(&long_list, first);
	return ak_free(ak_list_entry(first, struct long_item, node));
}

/* Delete (and free) every odd key, going on across runs after each cut. */
struct ak_list_cursor delete_cursor;

SEC("syscall")
int delete_odd_keys(void *ctx)
{
	struct long_item __arena *pos, *tmp;

	ak_list_for_each_entry_resume_safe(pos, tmp, &long_list, node, &delete_cursor) {
		work();
		if (pos->key & 1) {
			ak_list_del(&long_list, &pos->node);
			ak_free(pos);
		}
	}
	return ak_list_walk_save(pos, &long_list, node, &delete_cursor);
}

/* A callback over the whole list: sums keys, stops (returns 1) at stop_at. */
struct each_state __arena_global each;

static __always_inline long long sum_key(struct long_item __arena *item,
					 void __arena *ctx)
{
	struct each_state __arena *st = ctx;

	work();		/* as the cut walks above: outlasts one frame's budget */
	st->sum += item->key;
	st->visited++;
	return item->key == st->stop_at;
}

AK_LIST_DEFINE_EACH_ALL(sum_keys, struct long_item, node, sum_key);

long long each_result;

SEC("syscall")
int each_all(void *ctx)
{
	each.sum = 0;
	ak_arena_store_barrier();	/* no merged, uncast memset (README) */
	each.visited = 0;
	each_result = sum_keys(&long_list, &each);
	return 0;
}

/* The whole list in one run, whatever the kernel's budget: list.h's _all walks. */
SEC("syscall")
int whole_walks(void *ctx)
{
	struct ak_list_node __arena *found;

	count_result = ak_list_count_all(&long_list);
	find_all_result = ak_list_find_all(&long_list,
					   ak_list_key_offset(struct long_item, node, key),
					   target - 1, &found);
	found_key = found ? ak_container_of(found, struct long_item, node)->key : ~0ULL;
	check_all_result = ak_list_check_all(&long_list, 0);
	return 0;
}

char _license[] SEC("license") = "GPL";
