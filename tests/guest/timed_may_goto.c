// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Kernel patch 2: on x86-64 with the JIT, a frame's may_goto budget is
 * time (BPF_MAY_GOTO_TIME_NS, 250 ms), not 8,388,608 steps. On a kernel
 * without it (KERNEL=stock) these tests skip, naming the feature.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "guest/guest.h"
#include "kernel_features.h"
#include "timed_may_goto.skel.h"

#define MS 1000000ULL
/* The window an endless loop must end in: the budget is 250 ms. */
#define BUDGET_MIN_NS (200 * MS)
#define BUDGET_MAX_NS (5000 * MS)
#define OLD_COUNT 8388608ULL

static struct timed_may_goto *load(void)
{
	struct timed_may_goto *skel;

	guest_require_feature(ARENAKIT_TIMED_MAY_GOTO, "kernel/patches/0002");
	skel = timed_may_goto__open_and_load();
	cr_assert(skel, "cannot load: %s", strerror(errno));
	return skel;
}

static void run(struct bpf_program *prog)
{
	int retval;

	cr_assert_eq(arenakit_run(prog, &retval), 0);
	cr_assert_eq(retval, 0);
}

Test(timed_may_goto, endless_loop_ends_after_the_time_budget, .timeout = GUEST_TEST_TIMEOUT)
{
	struct timed_may_goto *skel = load();

	run(skel->progs.endless);
	cr_expect_geq(skel->bss->elapsed_ns, BUDGET_MIN_NS, "ended after %llu ms",
		      skel->bss->elapsed_ns / MS);
	cr_expect_leq(skel->bss->elapsed_ns, BUDGET_MAX_NS, "ended after %llu ms",
		      skel->bss->elapsed_ns / MS);
	cr_expect_neq(skel->bss->steps, OLD_COUNT, "the count budget is still in force");
	printf("timed_may_goto: an endless loop ran %llu steps in %llu ms (%.2f ns per step)\n",
	       skel->bss->steps, skel->bss->elapsed_ns / MS,
	       (double)skel->bss->elapsed_ns / skel->bss->steps);
	timed_may_goto__destroy(skel);
}

/*
 * Twice the old count completes when the machine runs it within the budget;
 * when it does not (three tries), the time budget is what stopped it.
 * Whether it fits is known only after a run: under TCG the rate moves
 * several times over between runs (4 vCPUs on a shared host), so no
 * estimate from another loop holds.
 */
Test(timed_may_goto, twice_the_old_count_completes, .timeout = GUEST_TEST_TIMEOUT)
{
	struct timed_may_goto *skel = load();
	unsigned long long want = 2 * OLD_COUNT, steps = 0, ms = 0;
	int tries;

	/* Three tries: a busy host slows one run, seldom three. */
	for (tries = 0; tries < 3 && steps < want; tries++) {
		skel->bss->target = want;
		run(skel->progs.counted);
		steps = skel->bss->steps;
		ms = skel->bss->elapsed_ns / MS;
		if (steps < want && (steps == OLD_COUNT || ms * MS < BUDGET_MIN_NS))
			break;	/* not the time budget: fail below */
	}
	timed_may_goto__destroy(skel);
	if (steps < want && steps != OLD_COUNT && ms * MS >= BUDGET_MIN_NS)
		cr_skip_test("this machine ran %llu steps in %llu ms, fewer than %llu", steps, ms,
			     want);
	cr_expect_eq(steps, want, "the loop stopped at %llu of %llu steps after %llu ms", steps,
		     want, ms);
	printf("timed_may_goto: %llu steps (twice the old count) in %llu ms\n", steps, ms);
}

/* The budget is per frame: three nested frames each loop for about one. */
Test(timed_may_goto, three_nested_frames_each_get_the_budget, .timeout = GUEST_TEST_TIMEOUT)
{
	struct timed_may_goto *skel = load();
	unsigned long long *ns = skel->bss->level_ns, own;
	int depth;

	run(skel->progs.nested);
	for (depth = 1; depth <= 3; depth++) {
		own = ns[depth] - (depth < 3 ? ns[depth + 1] : 0);
		cr_expect_geq(own, BUDGET_MIN_NS, "frame %d looped %llu ms", depth, own / MS);
		cr_expect_leq(own, BUDGET_MAX_NS, "frame %d looped %llu ms", depth, own / MS);
		printf("timed_may_goto: frame %d looped %llu steps in %llu ms of its own\n", depth,
		       skel->bss->level_steps[depth], own / MS);
	}
	cr_expect_leq(ns[1], 3 * BUDGET_MAX_NS);
	timed_may_goto__destroy(skel);
}
