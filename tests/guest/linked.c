// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * One program linked from two objects that both include arenakit
 * (tests/guest/linked/): one arena, one ak_allocator, one set of
 * statistics. The halves run in turn; the driver checks through the mmap.
 */
#include <string.h>
#include <bpf/bpf.h>

#include "guest/guest.h"
#include <arenakit/alloc.h>
#include <arenakit/htab.h>
#include "guest/linked_shared.h"
#include "linked.skel.h"

static void run(struct linked *skel, const struct bpf_program *prog)
{
	int retval = -1;

	cr_assert_eq(ak_run(prog, NULL, 0, &retval), 0, "%s did not run", bpf_program__name(prog));
	cr_assert_eq(retval, 0, "%s returned %d: %s", bpf_program__name(prog), retval,
		     guest_failure_report(skel->obj, retval));
}

Test(linked, two_objects_share_one_arena_and_one_allocator, .timeout = GUEST_TEST_TIMEOUT)
{
	struct linked *skel = linked__open();
	struct ak_alloc_stats *stats;
	struct bpf_map *map;
	unsigned long long objects;
	int arenas = 0;

	cr_assert(skel);
	cr_assert_eq(arenakit_load_skeleton(skel->skeleton), 0);
	bpf_object__for_each_map(map, skel->obj)
		arenas += bpf_map__type(map) == BPF_MAP_TYPE_ARENA;
	cr_expect_eq(arenas, 1, "%d arena maps: both objects declare `arena`", arenas);
	stats = &skel->arena->ak_allocator.stats;
	objects = guest_live_objects(skel);

	/* One object allocates and lists ... */
	run(skel, skel->progs.lists_build);
	cr_expect_eq(guest_live_objects(skel), objects + LINKED_ITEMS);
	cr_expect_eq(skel->arena->lists_items.len, LINKED_ITEMS);
	/* ... the other takes the list into a table and frees the items. */
	run(skel, skel->progs.tables_take);
	cr_expect_eq(skel->bss->tables_taken, LINKED_ITEMS);
	cr_expect_eq(skel->arena->lists_items.len, 0);
	cr_expect_eq(skel->arena->tables_table.count, LINKED_ITEMS);
	cr_expect_gt(guest_live_objects(skel), objects, "the table's nodes are the allocator's");
	run(skel, skel->progs.tables_give_back);
	cr_expect_eq(guest_live_objects(skel), objects, "%llu objects left", guest_live_objects(skel) - objects);
	cr_expect_eq(guest_live_bytes(skel), 0);
	cr_expect_eq(stats->double_frees + stats->bad_frees, 0);
	cr_expect_eq(stats->pages, stats->slab_pages + stats->large_pages + stats->spare_pages);

	/* Both objects' code saw one ak_allocator, the one the mmap shows. */
	cr_expect_eq(skel->bss->lists_allocator_seen, skel->bss->tables_allocator_seen);
	cr_expect_eq(skel->bss->lists_allocator_seen,
		     (unsigned long long)&skel->arena->ak_allocator);
	linked__destroy(skel);
}
