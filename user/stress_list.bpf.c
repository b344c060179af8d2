// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF side of the list that `arenakit stress` long, cycle and corrupt
 * share (user/stress_list.c): a list of up to 134M items built run by run
 * (stress_list.h), every kind of walk over it, and its links broken on
 * purpose (cycles, garbage, page 0, freed pages) and put back. Every
 * result is a count or an error, and user space checks that no walk ever
 * returns a wrong count without one.
 */
#include "stress.h"
#define AK_ARENA_PAGES STRESS_ARENA_PAGES
#include <arenakit/alloc.h>
#include "stress_list.h"

long long walk_result[STRESS_WALKS];
__u32 walk_which;			/* the walk the next run of walks makes */
struct ak_list_cursor cursor;		/* count_resume's, between runs */
long long resume_result;

__u64 link_index, link_target;		/* set_link's arguments */
__u32 link_kind;
struct ak_list_node __arena *saved_next;	/* what set_link replaced */
__u64 bad_index;			/* check_all's bad node, as an index (~0: none) */

/* Global, so each walk has a frame (and budget) of its own. */
__noinline long long walk_for_each(void)
{
	struct stress_item __arena *it;
	long long n = ak_opaque_zero(), status;

	ak_list_for_each_entry(it, &list, node)
		n++;
	status = ak_list_walk_status(it, &list, node);
	return status ? status : n;
}

__noinline long long walk_count_once(void)
{
	return ak_list_count(&list, 0);
}

/*
 * One walk a run (walk_which): a run holds its CPU for its whole walk, and
 * each of these may take seconds of a 100M-item list.
 */
SEC("syscall")
int walks(void *ctx)
{
	struct ak_list_node __arena *node = 0;
	long long err;

	switch (walk_which) {
	case STRESS_COUNT_ONCE:
		walk_result[STRESS_COUNT_ONCE] = walk_count_once();
		break;
	case STRESS_COUNT_ALL:
		walk_result[STRESS_COUNT_ALL] = ak_list_count_all(&list);
		break;
	case STRESS_FOR_EACH:
		walk_result[STRESS_FOR_EACH] = walk_for_each();
		break;
	case STRESS_FIND_ALL:
		err = ak_list_find_all(&list, ak_list_key_offset(struct stress_item, node, key),
				       ~0ULL, &node);
		walk_result[STRESS_FIND_ALL] = err ? err : node ? -EEXIST : 0;
		break;
	case STRESS_CHECK_ALL:
		walk_result[STRESS_CHECK_ALL] = ak_list_check_all(&list, &node);
		bad_index = node && node != &list.head ?
			    ak_container_of(node, struct stress_item, node)->key : ~0ULL;
		break;
	}
	return 0;
}

/* ak_list_count with a cursor, one run at a time: user space reruns it. */
SEC("syscall")
int count_resume(void *ctx)
{
	resume_result = ak_list_count(&list, &cursor);
	return 0;
}

SEC("syscall")
int set_link(void *ctx)
{
	struct stress_item __arena *it = item(link_index), *to;
	char __arena *page;

	if (!it)
		return -EINVAL;
	if (link_kind == STRESS_LINK_RESTORE) {
		if (saved_next)
			it->node.next = saved_next;
		saved_next = 0;
		return 0;
	}
	if (!saved_next)
		saved_next = it->node.next;
	switch (link_kind) {
	case STRESS_LINK_ITEM:
		to = item(link_target);
		if (!to)
			return -EINVAL;
		it->node.next = &to->node;
		return 0;
	case STRESS_LINK_VALUE:
		it->node.next = (struct ak_list_node __arena *)link_target;
		return 0;
	case STRESS_LINK_PAGE0:
		/* The arena's first page: the upper half of any arena address. */
		it->node.next = (struct ak_list_node __arena *)
			(((__u64)it & ~0xffffffffULL) | (link_target & 0xff8));
		return 0;
	case STRESS_LINK_FREED:
		page = ak_alloc(2 * AK_PAGE_SIZE, NULL);	/* whole pages of its own */
		if (!page)
			return -ENOMEM;
		ak_free(page);
		it->node.next = (struct ak_list_node __arena *)(page + 64);
		return 0;
	}
	return -EINVAL;
}

char _license[] SEC("license") = "GPL";
