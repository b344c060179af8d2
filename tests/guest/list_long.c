// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Lists longer than one frame's loop budget: a cut walk is reported and
 * resumable, and user space reads the same list through the arena's mmap.
 */
#include <errno.h>
#include <string.h>

#include "clock.h"
#include "guest/guest.h"
#include "kernel_features.h"
#include <arenakit/alloc.h>
#include <arenakit/list.h>
#include "guest/list_long_shared.h"
#include "list_long.skel.h"

/* Runs of a frame's budget each: under KASAN, building 10M nodes takes hundreds. */
#define MAX_RUNS 1024

static void run(struct bpf_program *prog, int *retval)
{
	int err = ak_run(prog, NULL, 0, retval);

	cr_assert_eq(err, 0, "%s: %s", bpf_program__name(prog), strerror(-err));
}

static struct list_long *build(unsigned long long nodes)
{
	struct list_long *skel = list_long__open();
	unsigned int runs;
	int retval = -1, err;

	cr_assert(skel);
	skel->bss->target = nodes;
	cr_assert_eq(arenakit_load_skeleton(skel->skeleton), 0);
	err = ak_run_until_done(skel->progs.build_long_list, NULL, 0, MAX_RUNS, &retval, &runs);
	cr_assert_eq(err, 0, "building %llu nodes: %d after %u runs", nodes, retval, runs);
	cr_assert_eq(retval, 0, "building %llu nodes: %d after %u runs", nodes, retval, runs);
	cr_assert_eq(skel->bss->built, nodes);
	return skel;
}

/* Walk the list as user space sees it, checking every back link. */
static unsigned long long user_count(struct ak_list_node *head, unsigned long long cap)
{
	struct ak_list_node *pos;
	unsigned long long n = 0;

	for (pos = head->next; pos != head && n <= cap; pos = pos->next, n++) {
		cr_assert(pos, "NULL link after %llu nodes", n);
		cr_assert_eq(pos->next->prev, pos, "broken back link after %llu nodes", n);
	}
	return n;
}

Test(list_long, ten_million_nodes_counted_exactly, .timeout = 600)
{
	const unsigned long long nodes = 10000000;
	struct list_long *skel = build(nodes);
	int timed = arenakit_feature_probe(ARENAKIT_TIMED_MAY_GOTO);
	unsigned int uruns;
	double start;
	int runs, retval, err;

	cr_assert_geq(timed, 0, "the probe failed: %s", strerror(-timed));
	/* The walks with work per node outlast a frame's budget, count or time. */
	skel->bss->node_work = 32;

	/* What the library is for: a bare cond_break walk stops short, silently. */
	run(skel->progs.count_bare, &retval);
	cr_expect_lt(skel->bss->bare_count, nodes);
	cr_log_info("bare cond_break walk of %llu nodes returned %lld", nodes,
		    skel->bss->bare_count);

	/*
	 * One run of ak_list_count without a cursor: the whole count, or the
	 * cut reported. The walk checks the budget once per group of 8 nodes,
	 * so the 8,388,608-step count covers 8 times that many nodes: 10M fit
	 * in one run of a count-bounded frame. In 250 ms of a time-bounded one
	 * they fit when the guest's CPU is its own, and may not under TCG on a
	 * loaded host: either answer is right there.
	 */
	run(skel->progs.count_once, &retval);
	if (timed)
		cr_expect(skel->bss->count_result == (long long)nodes ||
			  skel->bss->count_result == -AK_EBUDGET,
			  "count %lld in one run (time budget)", skel->bss->count_result);
	else
		cr_expect_eq(skel->bss->count_result, (long long)nodes,
			     "count %lld in one run (count budget)", skel->bss->count_result);
	cr_log_info("ak_list_count in one run: %lld", skel->bss->count_result);

	/* With a cursor, runs go on where the last one stopped. */
	err = ak_run_until_done(skel->progs.count_resume, NULL, 0, MAX_RUNS, &retval, &uruns);
	cr_expect_eq(err, 0);
	runs = uruns;
	cr_expect_eq(skel->bss->count_result, (long long)nodes, "count %lld after %d runs",
		     skel->bss->count_result, runs);
	cr_log_info("ak_list_count with a cursor: %lld nodes in %d runs",
		    skel->bss->count_result, runs);
	cr_expect_null(skel->bss->cursor.pos, "the cursor was not reset");

	/* The _all walks: the whole list in one run, on a count budget too. */
	run(skel->progs.whole_walks, &retval);
	cr_expect_eq(skel->bss->count_result, (long long)nodes, "count_all: %lld",
		     skel->bss->count_result);
	cr_expect_eq(skel->bss->find_all_result, 0, "find_all: %d", skel->bss->find_all_result);
	cr_expect_eq(skel->bss->found_key, nodes - 1, "find_all found key %llu",
		     skel->bss->found_key);
	cr_expect_eq(skel->bss->check_all_result, 0, "check_all: %d",
		     skel->bss->check_all_result);

	/* A callback over every entry, in one run, though each entry works as above. */
	skel->arena->each.stop_at = ~0ULL;
	run(skel->progs.each_all, &retval);
	cr_expect_eq(skel->bss->each_result, 0, "each_all: %lld", skel->bss->each_result);
	cr_expect_eq(skel->arena->each.visited, nodes, "each_all visited %llu",
		     (unsigned long long)skel->arena->each.visited);
	cr_expect_eq(skel->arena->each.sum, nodes * (nodes - 1) / 2, "each_all: sum %llu",
		     (unsigned long long)skel->arena->each.sum);
	/* The callback stops it: its value comes back, and no entry after. */
	skel->arena->each.stop_at = nodes / 2;
	run(skel->progs.each_all, &retval);
	cr_expect_eq(skel->bss->each_result, 1, "each_all stopped: %lld",
		     skel->bss->each_result);
	cr_expect_eq(skel->arena->each.visited, nodes / 2 + 1, "each_all stopped after %llu",
		     (unsigned long long)skel->arena->each.visited);

		/* The resumable for_each gets there too. */
	err = ak_run_until_done(skel->progs.walk_resume, NULL, 0, MAX_RUNS, &retval, &uruns);
	cr_expect_eq(err, 0);
	runs = uruns;
	cr_expect_eq(skel->bss->walk_status, (long long)nodes, "for_each_entry_resume: %lld",
		     skel->bss->walk_status);
	cr_expect_geq(runs, 2);

	/* User space follows the same pointers through the mmap. */
	cr_expect_eq(user_count(&skel->arena->long_list.head, nodes + 1), nodes);
	cr_expect_eq(skel->arena->long_list.len, nodes);

	/* A cursor left mid-list, then someone deletes a node before it. */
	run(skel->progs.walk_resume, &retval);
	cr_assert_eq(skel->bss->walk_status, -AK_EBUDGET);
	run(skel->progs.delete_first, &retval);
	cr_assert_eq(retval, 0);
	run(skel->progs.walk_resume, &retval);
	cr_expect_eq(skel->bss->walk_status, -AK_ESTALE, "a stale cursor resumed: %lld",
		     skel->bss->walk_status);
	cr_expect_null(skel->bss->walk_cursor.pos);
	err = ak_run_until_done(skel->progs.count_resume, NULL, 0, MAX_RUNS, &retval, &uruns);
	cr_expect_eq(err, 0);
	cr_expect_eq(skel->bss->count_result, (long long)nodes - 1, "after a restart: %lld",
		     skel->bss->count_result);

	/* Delete and free every odd key, resuming after each cut. */
	start = monotonic_seconds();
	err = ak_run_until_done(skel->progs.delete_odd_keys, NULL, 0, MAX_RUNS, &retval, &uruns);
	cr_expect_eq(err, 0);
	cr_expect_eq(retval, 0, "delete walk: %d after %u runs", retval, uruns);
	cr_expect_geq(uruns, 2, "the delete walk was never cut");
	cr_log_info("deleted and freed %llu odd keys of %llu nodes in %u runs, %.2f s",
		    nodes / 2, nodes, uruns, monotonic_seconds() - start);
	cr_expect_eq(skel->arena->long_list.len, nodes / 2 - 1);
	cr_expect_eq(user_count(&skel->arena->long_list.head, nodes), nodes / 2 - 1);
	cr_expect_eq(guest_live_objects(skel), nodes / 2 - 1);
	cr_expect_eq(skel->arena->ak_allocator.stats.double_frees +
		     skel->arena->ak_allocator.stats.bad_frees, 0);
	list_long__destroy(skel);
}

Test(list_long, one_million_node_walk, .timeout = 300)
{
	const unsigned long long nodes = 1000000;
	struct list_long *skel = build(nodes);
	double start, seconds;
	int retval;

	start = monotonic_seconds();
	run(skel->progs.count_once, &retval);
	seconds = monotonic_seconds() - start;
	cr_expect_eq(skel->bss->count_result, (long long)nodes);
	cr_expect_eq(user_count(&skel->arena->long_list.head, nodes + 1), nodes);
	cr_log_info("ak_list_count of %llu nodes: %.1f ms, %.2f ns per node (one run, "
		    "including BPF_PROG_TEST_RUN)", nodes, seconds * 1e3, seconds * 1e9 / nodes);
	list_long__destroy(skel);
}
