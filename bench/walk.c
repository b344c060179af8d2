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
#include <unistd.h>
#include <sys/wait.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <linux/bpf.h>

#include "bench.h"
#include "clock.h"
#include "kernel_features.h"
#include "loader.h"
#include <arenakit/alloc.h>
#include <arenakit/user.h>
#include "walk.h"
#include "walk_insns.h"
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
	[WALK_LIB_CHECK] = "ak_list_check",
};

static int has_kfunc(void)
{
	return arenakit_feature_probe(ARENAKIT_CAN_LOOP_KFUNC) == 1;
}

/* One timed BPF case: ns per step, or a negative errno / wrong count. */
static int run_case(struct bench *b, struct walk *skel, const struct bpf_program *prog,
		    int case_id, long long steps, struct bench_row *row, int run)
{
	int ret, retval;

	skel->bss->case_id = case_id;
	ret = ak_run(prog, NULL, 0, &retval) ?: retval;
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
	bench_count(b, "loop: the first time check of a frame", first, "ns", BENCH_NO_GOAL, 0);
	bench_count(b, "loop: a later time check", second, "ns", BENCH_NO_GOAL, 0);
	bench_count(b, "loop: checks' share of an empty loop's time", 100 * second / period, "%",
		    BENCH_NO_GOAL, 0);
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

/*
 * What a call of a frame of 256 to 65,535 steps costs under the kernel's
 * bound: on stock 6.12 a count, set once a frame; on ours the clock's
 * checks, none in a frame of 256 steps, from 257 on a first that starts the
 * clock and then one each 16 steps of the probe or each slice. bench/kernels.sh
 * runs this on both kernels and gives the ratios.
 */
static int bench_frames_of(struct bench *b, struct walk *skel)
{
	static const long long frame_sizes[] = { 256, 257, 1000, 65535 };
	struct bench_row *rows[ARRAY_SIZE(frame_sizes)];
	long long total = b->quick ? 1 << 16 : 4 << 20, calls[ARRAY_SIZE(rows)];
	char name[64];
	size_t f;
	int r, ret, retval;

	for (f = 0; f < ARRAY_SIZE(rows); f++) {
		calls[f] = total / frame_sizes[f] ? total / frame_sizes[f] : 1;
		snprintf(name, sizeof(name), "can_loop, %lld steps a frame", frame_sizes[f]);
		rows[f] = bench_row(b, "frames", name, frame_sizes[f], "", "ns/call",
				    BENCH_CLOCK_BPF);
	}
	for (r = BENCH_WARMUP; r < b->runs; r++)
		for (f = 0; f < ARRAY_SIZE(rows); f++) {
			long long steps = calls[f] * frame_sizes[f];

			skel->bss->frame_steps = frame_sizes[f];
			skel->bss->iterations = steps;
			ret = ak_run(skel->progs.frames, NULL, 0, &retval) ?: retval;
			if (ret)
				return ret < 0 ? ret : -EPROTO;
			if (skel->bss->result_count != steps) {
				bench_wrong(b, "frames %s: %lld steps, want %lld", rows[f]->name,
					    skel->bss->result_count, steps);
				return 0;
			}
			if (r >= 0)
				bench_sample(rows[f], (double)skel->bss->result_ns / calls[f]);
		}
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

/* A native find of a key no entry has, as the BPF finds are run. */
static long long native_find(const struct ak_list *list, unsigned long long key)
{
	const struct ak_list_node *pos;
	long long n = 0;

	for (pos = list->head.next; pos != &list->head; pos = pos->next) {
		if (ak_container_of(pos, struct walk_item, node)->key == key)
			return -EEXIST;
		n++;
	}
	return n;
}

/*
 * The cases that run alone (run_alone()): the walk cases, and after them
 * the two native walks.
 */
enum { ALONE_NATIVE = WALK_CASES, ALONE_NATIVE_FIND, ALONE_CASES };

static struct walk *open_walk(void);

/* What one case alone gives back to the bench through a pipe: one sample. */
struct alone_result {
	int err, wrong, sampled;
	double sample;
};

/*
 * In the child: load the program afresh, link a list of n nodes in order
 * and run case c only, a warm-up and one timed walk, timed as in the
 * interleaved runs.
 */
static void alone_child(long long n, int c, struct alone_result *res)
{
	struct bench child = { .runs = 1 };
	struct bench_row row = { .section = "walk-alone", .name = "alone" };
	unsigned long long start;
	struct walk *skel;
	long long got;
	int r, retval;

	skel = open_walk();
	if (!skel) {
		res->err = -errno;
		return;
	}
	skel->bss->items_wanted = n;
	res->err = ak_run(skel->progs.alloc_items, NULL, 0, &retval) ?: retval;
	if (!res->err)
		res->err = link_list(skel, n, 0);
	for (r = BENCH_WARMUP; !res->err && r < child.runs; r++) {
		if (c < WALK_CASES) {
			res->err = run_case(&child, skel, c == WALK_CAN_LOOP_KFUNC ?
					    skel->progs.walk_can_loop_kfunc : skel->progs.walk,
					    c, n, &row, r);
			continue;
		}
		start = monotonic_ns();
		got = c == ALONE_NATIVE ? native_walk(&skel->arena->walk_list) :
		      native_find(&skel->arena->walk_list, ~0ULL);
		if (r >= 0)
			bench_sample(&row, (double)(monotonic_ns() - start) / n);
		if (got != n)
			bench_wrong(&child, "alone: native walk: %lld nodes, want %lld", got, n);
	}
	res->wrong = child.wrong;
	res->sampled = row.n > 0;
	res->sample = row.n > 0 ? row.samples[0] : 0;
	walk__destroy(skel);
}

/*
 * One run of case c of a list of n nodes in order, alone: in a process of
 * its own that runs no other case, a warm-up and one timed walk.
 * Interleaved with the others, a case shares the caches, the JIT's memory
 * and (under TCG) the translation cache with them, and its time moves with
 * their placement; alone, only its own counts.
 */
static int run_alone(struct bench *b, long long n, int c, struct bench_row *row)
{
	struct alone_result res = {};
	ssize_t got = 0, k;
	int fd[2], status;
	pid_t pid;

	if (pipe(fd))
		return -errno;
	fflush(NULL);	/* nothing buffered is written twice */
	pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return -errno;
	}
	if (!pid) {
		close(fd[0]);
		alone_child(n, c, &res);
		_exit(write(fd[1], &res, sizeof(res)) == sizeof(res) ? 0 : 1);
	}
	close(fd[1]);
	while (got < (ssize_t)sizeof(res) &&
	       (k = read(fd[0], (char *)&res + got, sizeof(res) - got)) > 0)
		got += k;
	close(fd[0]);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) ||
	    got != sizeof(res))
		return -ECHILD;
	if (res.err)
		return res.err;
	if (res.wrong)
		bench_wrong(b, "walk-alone %s: %d wrong answer(s)", row->name, res.wrong);
	if (res.sampled)
		bench_sample(row, res.sample);
	return 0;
}

/*
 * The walk's target ratios, from the cases each run alone: what the
 * targets are judged by. A run is one process for each case in turn, so
 * the cases' samples of one run share the machine's state of the moment
 * as the interleaved ones do, and their ratios pair run by run.
 */
static int bench_walk_alone(struct bench *b, long long n)
{
	static const int cases[] = { ALONE_NATIVE, ALONE_NATIVE_FIND, WALK_CAN_LOOP,
				     WALK_BARE_FIND, WALK_LIB_COUNT, WALK_LIB_FIND };
	struct bench_row *rows[ALONE_CASES] = {};
	char what[96];
	size_t i;
	int c, r, err;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		c = cases[i];
		rows[c] = bench_row(b, "walk-alone", c == ALONE_NATIVE ? "native C, user space" :
				    c == ALONE_NATIVE_FIND ? "native C, key compared" :
				    walk_names[c], n, "in order", "ns/node",
				    c >= WALK_CASES ? BENCH_CLOCK_USER : BENCH_CLOCK_BPF);
	}
	for (r = 0; r < b->runs; r++)
		for (i = 0; i < ARRAY_SIZE(cases); i++) {
			err = run_alone(b, n, cases[i], rows[cases[i]]);
			if (err)
				return err;
		}
	snprintf(what, sizeof(what), "walk, %lld nodes in order, alone: BPF bare / native", n);
	bench_ratio(b, what, rows[WALK_CAN_LOOP], rows[ALONE_NATIVE], BENCH_AT_MOST, 1.25);
	snprintf(what, sizeof(what), "walk, %lld nodes in order, alone: ak_list_count / native", n);
	bench_ratio(b, what, rows[WALK_LIB_COUNT], rows[ALONE_NATIVE], BENCH_AT_MOST, 1.20);
	snprintf(what, sizeof(what), "walk, %lld nodes in order, alone: ak_list_find (absent) / native",
		 n);
	bench_ratio(b, what, rows[WALK_LIB_FIND], rows[ALONE_NATIVE_FIND], BENCH_AT_MOST, 1.30);
	snprintf(what, sizeof(what), "walk, %lld nodes in order, alone: ak_list_count / bare", n);
	bench_ratio(b, what, rows[WALK_LIB_COUNT], rows[WALK_CAN_LOOP], BENCH_AT_MOST, 0.80);
	snprintf(what, sizeof(what), "walk, %lld nodes in order, alone: ak_list_find / bare, key compared",
		 n);
	bench_ratio(b, what, rows[WALK_LIB_FIND], rows[WALK_BARE_FIND], BENCH_NO_GOAL, 0);
	return 0;
}

static int bench_walk_list(struct bench *b, struct walk *skel, long long n, int shuffled)
{
	const char *variant = shuffled ? "shuffled" : "in order";
	struct bench_row *rows[WALK_CASES] = {}, *native, *native_found;
	/* The targets' size, and at --quick the largest, so the path runs. */
	const int at_target = n == (b->quick ? 1 << 16 : 1 << 20);
	const char *how = at_target ? ", interleaved" : "";
	unsigned long long start;
	long long got;
	char what[96];
	int c, r, err;

	err = link_list(skel, n, shuffled);
	if (err)
		return err;
	native = bench_row(b, "walk", "native C, user space", n, variant, "ns/node",
			   BENCH_CLOCK_USER);
	native_found = bench_row(b, "walk", "native C, key compared", n, variant, "ns/node",
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
		start = monotonic_ns();
		got = native_find(&skel->arena->walk_list, ~0ULL);
		if (r >= 0)
			bench_sample(native_found, (double)(monotonic_ns() - start) / n);
		if (got != n)
			bench_wrong(b, "native find: %lld nodes, want %lld", got, n);
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
	/*
	 * The targets are judged on the cases run alone (bench_walk_alone());
	 * the interleaved ratios are printed beside them, without a target.
	 */
	snprintf(what, sizeof(what), "walk, %lld nodes %s%s: BPF bare / native", n, variant,
		 shuffled ? "" : how);
	bench_ratio(b, what, rows[WALK_CAN_LOOP], native, BENCH_NO_GOAL, 0);
	if (shuffled)
		return 0;
	/*
	 * The library's walks against native code doing the same work per
	 * node, and against the bare walk, which checks its budget at every
	 * node where they check it once a group (AK_LIST_GROUP).
	 */
	snprintf(what, sizeof(what), "walk, %lld nodes in order%s: ak_list_count / native", n, how);
	bench_ratio(b, what, rows[WALK_LIB_COUNT], native, BENCH_NO_GOAL, 0);
	snprintf(what, sizeof(what), "walk, %lld nodes in order%s: ak_list_find (absent) / native",
		 n, how);
	bench_ratio(b, what, rows[WALK_LIB_FIND], native_found, BENCH_NO_GOAL, 0);
	for (c = WALK_LIB_COUNT; c < WALK_CASES; c++) {
		if (c == WALK_BARE_FIND)
			continue;
		snprintf(what, sizeof(what), "walk, %lld nodes in order%s: %s / bare%s", n, how,
			 walk_names[c], c == WALK_LIB_FIND ? ", key compared" : "");
		bench_ratio(b, what, rows[c], rows[c == WALK_LIB_FIND ? WALK_BARE_FIND : WALK_CAN_LOOP],
			    BENCH_NO_GOAL, 0);
	}
	for (c = WALK_BPF_FOR; c <= WALK_CAN_LOOP_KFUNC; c++) {
		snprintf(what, sizeof(what), "walk, %lld nodes in order: %s / can_loop", n,
			 walk_names[c]);
		bench_ratio(b, what, rows[c], rows[WALK_CAN_LOOP], BENCH_NO_GOAL, 0);
	}
	return at_target ? bench_walk_alone(b, n) : 0;
}

static struct walk *open_walk(void)
{
	int kfunc = has_kfunc(), err;
	struct walk *skel = walk__open();

	if (!skel)
		return NULL;
	bpf_program__set_autoload(skel->progs.loop_can_loop_kfunc, kfunc);
	bpf_program__set_autoload(skel->progs.walk_can_loop_kfunc, kfunc);
	err = arenakit_load_skeleton(skel->skeleton);
	if (err) {
		walk__destroy(skel);
		errno = -err;	/* after the destroy, which may set it */
		return NULL;
	}
	return skel;
}

int bench_frames(struct bench *b)
{
	struct walk *skel = open_walk();
	int err;

	if (!skel)
		return -errno;
	err = bench_frames_of(b, skel);
	walk__destroy(skel);
	return err;
}

int bench_loops_and_walks(struct bench *b)
{
	static const long long sizes[] = { 1 << 10, 1 << 16, 1 << 20, 8 << 20 };
	int kfunc = has_kfunc(), err, retval;
	struct walk *skel;
	size_t i;

	skel = open_walk();
	if (!skel)
		return -errno;
	err = report_walk_insns(b, skel->progs.walk, walk_names);
	if (!err && kfunc)
		err = report_walk_insns(b, skel->progs.walk_can_loop_kfunc, walk_names);
	if (!err)
		err = bench_loops(b, skel);
	for (i = 0; !err && i < ARRAY_SIZE(sizes); i++) {
		if (b->quick && sizes[i] > 1 << 16)
			break;
		skel->bss->items_wanted = sizes[i];
		err = ak_run(skel->progs.alloc_items, NULL, 0, &retval) ?: retval;
		if (!err)
			err = bench_walk_list(b, skel, sizes[i], 0);
		if (!err)
			err = bench_walk_list(b, skel, sizes[i], 1);
		if (!err)
			err = ak_run(skel->progs.free_items, NULL, 0, &retval) ?: retval;
	}
	walk__destroy(skel);
	return err;
}
