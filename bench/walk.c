// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Sections "walk": ns per iteration of an empty loop under each loop
 * mechanism, and ns per node of whole walks of one arena list, by each
 * mechanism in BPF, by the library's walks, and natively in user space
 * through the arena mmap (the physical limit: the same nodes, the same
 * memory). The list is linked here, in order of address or shuffled.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "clock.h"
#include "kernel_features.h"
#include "loader.h"
#include <arenakit/alloc.h>
#include "walk.h"
#include "walk.skel.h"

#define SHUFFLE_SEED 20261203u

static const char *const loop_names[LOOP_CASES] = {
	[LOOP_MAY_GOTO] = "may_goto (hand-written)",
	[LOOP_COND_BREAK] = "cond_break",
	[LOOP_CAN_LOOP] = "can_loop",
	[LOOP_BPF_FOR] = "bpf_for",
	[LOOP_BPF_LOOP] = "bpf_loop",
	[LOOP_CAN_LOOP_KFUNC] = "bpf_can_loop kfunc",
	[LOOP_IN_FRAMES] = "can_loop, 60k per frame",
	[LOOP_FRAMES_NO_CHECK] = "can_loop, 256 per frame",
	[LOOP_FRAMES_ONE_CHECK] = "can_loop, 257 per frame",
	[LOOP_FRAMES_TWO_CHECKS] = "can_loop, 273 per frame",
};

static const char *const walk_names[WALK_CASES] = {
	[WALK_CAN_LOOP] = "can_loop (bare walk)",
	[WALK_COND_BREAK] = "cond_break",
	[WALK_BPF_FOR] = "bpf_for",
	[WALK_BPF_LOOP] = "bpf_loop",
	[WALK_CAN_LOOP_KFUNC] = "bpf_can_loop kfunc",
	[WALK_LIB_COUNT] = "ak_list_count",
	[WALK_LIB_FIND] = "ak_list_find (absent)",
	[WALK_LIB_FOR_EACH] = "ak_list_for_each_entry",
	[WALK_BARE_FIND] = "can_loop, key compared",
};

static int has_kfunc(void)
{
	return arenakit_feature_probe(ARENAKIT_CAN_LOOP_KFUNC) == 1;
}

/* One timed BPF case: ns per step, or a negative errno / wrong count. */
static int run_case(struct bench *b, struct walk *skel, const struct bpf_program *prog,
		    int case_id, long long steps, struct bench_row *row, int run)
{
	int ret;

	skel->bss->case_id = case_id;
	ret = arenakit_run_retval(prog);
	if (ret)
		return ret < 0 ? ret : -EPROTO;
	if (skel->bss->result_count != steps) {
		bench_wrong(b, "%s %s: %lld steps, want %lld", row->section, row->name,
			    skel->bss->result_count, steps);
		return 0;
	}
	if (run >= 0)	/* not the warm-up */
		bench_sample(row, (double)skel->bss->result_ns / steps);
	return 0;
}

/*
 * What a time check of the patched may_goto costs, from frames that loop
 * 256 steps (no check), 257 (the first check, which starts the clock) and
 * 273 (a second, which measures and divides): the frames' extra time less
 * the extra steps at the one-frame rate. Against the 1 ms slice the checks
 * aim at, or 65,535 steps where those take less, it is the budget's cost
 * (on the stock kernel, which counts, both come out near 0).
 */
static void report_check_cost(struct bench *b, struct bench_row **rows)
{
	double step = bench_median(rows[LOOP_CAN_LOOP]);
	double none = bench_median(rows[LOOP_FRAMES_NO_CHECK]) * LOOP_FIRST_CHECK;
	double one = bench_median(rows[LOOP_FRAMES_ONE_CHECK]) * (LOOP_FIRST_CHECK + 1);
	double two = bench_median(rows[LOOP_FRAMES_TWO_CHECKS]) *
		     (LOOP_FIRST_CHECK + LOOP_PROBE + 1);
	double first = one - none - step;
	double second = two - one - LOOP_PROBE * step;
	double period = 65535 * step < 1e6 ? 65535 * step : 1e6;

	if (!step || !none || !one || !two)
		return;
	bench_figure(b, "loop: the first time check of a frame (ns)", first, BENCH_NO_GOAL, 0);
	bench_figure(b, "loop: a later time check (ns)", second, BENCH_NO_GOAL, 0);
	bench_figure(b, "loop: checks' share of an empty loop's time (%)",
		     100 * second / period, BENCH_NO_GOAL, 0);
}

static int bench_loops(struct bench *b, struct walk *skel)
{
	long long n = b->quick ? 65536 : 4 << 20;
	struct bench_row *rows[LOOP_CASES] = {};
	int c, r, err;

	for (c = 0; c < LOOP_CASES; c++)
		if (c != LOOP_CAN_LOOP_KFUNC || has_kfunc())
			rows[c] = bench_row(b, "loop", loop_names[c], n, "empty body", "ns/iter",
					    BENCH_CLOCK_BPF);
	skel->bss->iterations = n;
	for (r = BENCH_WARMUP; r < b->runs; r++)
		for (c = 0; c < LOOP_CASES; c++) {
			if (!rows[c])
				continue;
			err = run_case(b, skel, c == LOOP_CAN_LOOP_KFUNC ?
				       skel->progs.loop_can_loop_kfunc : skel->progs.loop,
				       c, n, rows[c], r);
			if (err)
				return err;
		}
	bench_ratio(b, "loop: cond_break / hand-written may_goto", rows[LOOP_COND_BREAK],
		    rows[LOOP_MAY_GOTO], BENCH_AT_MOST, 1.1);
	bench_ratio(b, "loop: can_loop / hand-written may_goto", rows[LOOP_CAN_LOOP],
		    rows[LOOP_MAY_GOTO], BENCH_AT_MOST, 1.1);
	bench_ratio(b, "loop: bpf_for / cond_break", rows[LOOP_BPF_FOR], rows[LOOP_COND_BREAK],
		    BENCH_AT_LEAST, 2.5);
	bench_ratio(b, "loop: bpf_loop / cond_break", rows[LOOP_BPF_LOOP], rows[LOOP_COND_BREAK],
		    BENCH_AT_LEAST, 2.5);
	bench_ratio(b, "loop: bpf_can_loop kfunc / can_loop", rows[LOOP_CAN_LOOP_KFUNC],
		    rows[LOOP_CAN_LOOP], BENCH_NO_GOAL, 0);
	bench_ratio(b, "loop: can_loop in one frame / in frames of 60k (the time checks' cost)",
		    rows[LOOP_CAN_LOOP], rows[LOOP_IN_FRAMES], BENCH_NO_GOAL, 0);
	report_check_cost(b, rows);
	return 0;
}

static unsigned int next_random(unsigned int *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 17;
	*state ^= *state << 5;
	return *state;
}

/* Link items[0..n) on the list, in address order or in a shuffled one. */
static int link_list(struct walk *skel, long long n, int shuffled)
{
	struct walk_item *items = skel->arena->walk_items;
	struct ak_list *list = &skel->arena->walk_list;
	unsigned int *order = malloc(n * sizeof(*order)), state = SHUFFLE_SEED, t;
	long long i, j;

	if (!order)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		order[i] = i;
	for (i = n - 1; shuffled && i > 0; i--) {
		j = next_random(&state) % (i + 1);
		t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	ak_list_init(list);
	for (i = 0; i < n; i++) {
		items[order[i]].key = i;
		ak_list_add_tail(list, &items[order[i]].node);
	}
	free(order);
	return 0;
}

/* The physical limit: the same nodes followed by native code. */
static long long native_walk(const struct ak_list *list)
{
	const struct ak_list_node *pos;
	long long n = 0;

	for (pos = list->head.next; pos != &list->head; pos = pos->next)
		n++;
	return n;
}

static int bench_walk_list(struct bench *b, struct walk *skel, long long n, int shuffled)
{
	const char *variant = shuffled ? "shuffled" : "in order";
	struct bench_row *rows[WALK_CASES] = {}, *native;
	unsigned long long start;
	long long got;
	char what[96];
	int c, r, err;

	err = link_list(skel, n, shuffled);
	if (err)
		return err;
	native = bench_row(b, "walk", "native C, user space", n, variant, "ns/node",
			   BENCH_CLOCK_USER);
	for (c = 0; c < WALK_CASES; c++)
		if (c != WALK_CAN_LOOP_KFUNC || has_kfunc())
			rows[c] = bench_row(b, "walk", walk_names[c], n, variant, "ns/node",
					    BENCH_CLOCK_BPF);
	for (r = BENCH_WARMUP; r < b->runs; r++) {
		start = monotonic_ns();
		got = native_walk(&skel->arena->walk_list);
		if (r >= 0)
			bench_sample(native, (double)(monotonic_ns() - start) / n);
		if (got != n)
			bench_wrong(b, "native walk: %lld nodes, want %lld", got, n);
		for (c = 0; c < WALK_CASES; c++) {
			if (!rows[c])
				continue;
			err = run_case(b, skel, c == WALK_CAN_LOOP_KFUNC ?
				       skel->progs.walk_can_loop_kfunc : skel->progs.walk,
				       c, n, rows[c], r);
			if (err)
				return err;
		}
	}
	snprintf(what, sizeof(what), "walk, %lld nodes %s: BPF bare / native", n, variant);
	bench_ratio(b, what, rows[WALK_CAN_LOOP], native,
		    n == 1 << 20 && !shuffled ? BENCH_AT_MOST : BENCH_NO_GOAL, 1.25);
	if (shuffled)
		return 0;
	/*
	 * What the library's checks cost: each walk against the bare walk
	 * doing the same work per node (find loads and compares a key).
	 */
	for (c = WALK_LIB_COUNT; c <= WALK_LIB_FOR_EACH; c++) {
		snprintf(what, sizeof(what), "walk, %lld nodes in order: %s / bare", n,
			 walk_names[c]);
		bench_ratio(b, what, rows[c], rows[WALK_CAN_LOOP],
			    c == WALK_LIB_FIND ? BENCH_NO_GOAL : BENCH_AT_MOST, 1.05);
	}
	snprintf(what, sizeof(what), "walk, %lld nodes in order: %s / bare, key compared", n,
		 walk_names[WALK_LIB_FIND]);
	bench_ratio(b, what, rows[WALK_LIB_FIND], rows[WALK_BARE_FIND], BENCH_AT_MOST, 1.05);
	for (c = WALK_BPF_FOR; c <= WALK_CAN_LOOP_KFUNC; c++) {
		snprintf(what, sizeof(what), "walk, %lld nodes in order: %s / can_loop", n,
			 walk_names[c]);
		bench_ratio(b, what, rows[c], rows[WALK_CAN_LOOP], BENCH_NO_GOAL, 0);
	}
	return 0;
}

int bench_loops_and_walks(struct bench *b)
{
	static const long long sizes[] = { 1 << 10, 1 << 16, 1 << 20, 8 << 20 };
	int kfunc = has_kfunc(), err;
	struct walk *skel;
	size_t i;

	skel = walk__open();
	if (!skel)
		return -errno;
	bpf_program__set_autoload(skel->progs.loop_can_loop_kfunc, kfunc);
	bpf_program__set_autoload(skel->progs.walk_can_loop_kfunc, kfunc);
	err = arenakit_load_skeleton(skel->skeleton);
	if (!err)
		err = bench_loops(b, skel);
	for (i = 0; !err && i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		if (b->quick && sizes[i] > 1 << 16)
			break;
		skel->bss->items_wanted = sizes[i];
		err = arenakit_run_retval(skel->progs.alloc_items);
		if (!err)
			err = bench_walk_list(b, skel, sizes[i], 0);
		if (!err)
			err = bench_walk_list(b, skel, sizes[i], 1);
		if (!err)
			err = arenakit_run_retval(skel->progs.free_items);
	}
	walk__destroy(skel);
	return err;
}
