// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Whole walks in one program run: 16M nodes (twice stock 6.12's loop
 * budget) counted and checked exactly by ak_list_count_all /
 * ak_list_check_all (one run each, on any kernel: each chunk is a global
 * function call with its own budget), and a cycle through all of them
 * stopped with -ELOOP. Sized for a loaded host: each run holds its CPU for
 * the walk, well under the guest's 20 s soft-lockup watchdog even when
 * emulation runs ten times slower than on an idle host.
 */
#include <stdio.h>

#include "clock.h"
#include "guest/guest.h"
#include <arenakit/alloc.h>
#include <arenakit/list.h>
#include "list_huge.skel.h"

#define NODES (16ULL << 20)

static void run_once(const struct bpf_program *prog, const char *what)
{
	int retval, ret = ak_run(prog, NULL, 0, &retval) ?: retval;

	cr_assert_eq(ret, 0, "%s: %d (%s)", what, ret, strerror(-ret));
}

Test(list_huge, sixteen_million_nodes_in_one_run_and_a_cycle_stopped, .timeout = 600)
{
	struct list_huge *skel = list_huge__open();
	unsigned int runs;
	int retval, err;
	double start;

	cr_assert(skel);
	cr_assert_eq(arenakit_load_skeleton(skel->skeleton), 0);
	skel->bss->target = NODES;
	start = monotonic_seconds();
	err = ak_run_until_done(skel->progs.build, NULL, 0, 100, &retval, &runs);
	cr_assert_eq(err, 0, "build: %s", strerror(-err));
	cr_assert_eq(retval, 0, "build: %d after %u runs", retval, runs);
	cr_log_info("built %llu nodes in %u runs, %.1f s", NODES, runs,
		    monotonic_seconds() - start);

	start = monotonic_seconds();
	run_once(skel->progs.count_all, "count_all");
	cr_expect_eq(skel->bss->count_result, (long long)NODES, "count_all: %lld",
		     skel->bss->count_result);
	cr_log_info("ak_list_count_all: %lld nodes in one run, %.2f s", skel->bss->count_result,
		    monotonic_seconds() - start);

	start = monotonic_seconds();
	run_once(skel->progs.check_all, "check_all");
	cr_expect_eq(skel->bss->check_result, 0, "check_all: %d", skel->bss->check_result);
	cr_log_info("ak_list_check_all: %d in one run, %.2f s", skel->bss->check_result,
		    monotonic_seconds() - start);

	run_once(skel->progs.make_cycle, "make_cycle");
	start = monotonic_seconds();
	run_once(skel->progs.count_all, "count_all on a cycle");
	cr_expect_eq(skel->bss->count_result, -ELOOP, "count_all on a cycle: %lld",
		     skel->bss->count_result);
	cr_log_info("ak_list_count_all on a cycle: %lld after %.2f s", skel->bss->count_result,
		    monotonic_seconds() - start);
	start = monotonic_seconds();
	run_once(skel->progs.check_all, "check_all on a cycle");
	cr_expect_neq(skel->bss->check_result, 0, "check_all took a cycle for a list");
	cr_log_info("ak_list_check_all on a cycle: %d after %.2f s", skel->bss->check_result,
		    monotonic_seconds() - start);
	run_once(skel->progs.undo_cycle, "undo_cycle");
	run_once(skel->progs.count_all, "count_all after");
	cr_expect_eq(skel->bss->count_result, (long long)NODES);
	list_huge__destroy(skel);
}
