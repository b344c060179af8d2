// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Section "alloc": the arenakit allocator against the 6.12 selftests'
 * page_frag allocator, side by side: alloc+free ns per object when a run
 * allocates N objects and then frees them; ns per free+alloc in the steady
 * state (a working set of ALLOC_BENCH_WORKING live objects a CPU, one freed
 * at random and replaced, over and over), with the pages arenakit took or
 * gave back meanwhile; each on one CPU and on two at once; and the pages
 * under a million live objects of each size (distinct pages under the
 * objects, counted from the pointers through the arena mmap), against the
 * ideal ceil(n * size / 4096).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include <arenakit/alloc_types.h>
#include <arenakit/user.h>
#include "alloc_vs_frag.h"
#include "alloc_vs_frag.skel.h"
#include "bench.h"
#include "loader.h"

static const char *const kind_names[ALLOC_KINDS] = {
	[ALLOC_OURS] = "arenakit", [ALLOC_PAGE_FRAG] = "selftests page_frag",
};

struct cpu_run {
	int cpu, err;
	struct alloc_bench_args args;
};

/* Program runs a phase may take: each is cut by the loop budget at worst. */
#define MAX_RUNS 100000

struct phase {
	const struct bpf_program *prog;
	struct cpu_run *run;
};

static void *run_on_cpu(void *arg)
{
	struct phase *ph = arg;
	struct cpu_run *run = ph->run;
	int retval = 0;

	run->args.done = 0;
	run->args.ns = 0;
	run->args.failed = 0;
	run->err = arenakit_pin_to_cpu(run->cpu) ?:
		   ak_run_until_done(ph->prog, &run->args, sizeof(run->args), MAX_RUNS, &retval,
				     NULL) ?: retval;
	return NULL;
}

/* Run @prog for @count operations on @cpus CPUs at once, each on its own slots. */
static int phase(struct cpu_run *runs, int cpus, const struct bpf_program *prog,
		 unsigned int count)
{
	struct phase phases[ALLOC_BENCH_CPUS];
	pthread_t threads[ALLOC_BENCH_CPUS];
	int i, err = 0;

	for (i = 0; i < cpus; i++) {
		runs[i].args.count = count;
		phases[i] = (struct phase){ .prog = prog, .run = &runs[i] };
		if (pthread_create(&threads[i], NULL, run_on_cpu, &phases[i]))
			return -EAGAIN;
	}
	for (i = 0; i < cpus; i++) {
		pthread_join(threads[i], NULL);
		err = err ?: runs[i].err;
	}
	return err;
}

/*
 * arenakit's lock is bounded: an allocation that finds it held (under TCG,
 * by a vCPU the host is not running) fails with -EBUSY, as documented: a
 * few are reported, more are a wrong answer.
 */
static void check_failed(struct bench *b, const char *what, unsigned int kind, unsigned int size,
			 unsigned long long failed, unsigned int count)
{
	if (failed * 100 > count)
		bench_wrong(b, "%s, %u bytes, %s: %llu of %u allocations failed",
			    kind_names[kind], size, what, failed, count);
	else if (failed)
		fprintf(stderr, "arenakit bench: alloc: %s, %u bytes, %s: %llu of %u "
			"allocations failed (-EBUSY: the lock stayed held)\n",
			kind_names[kind], size, what, failed, count);
}

static void start_runs(struct cpu_run *runs, int cpus, unsigned int kind, unsigned int size,
		       unsigned int per_cpu)
{
	int i;

	for (i = 0; i < cpus; i++)
		runs[i] = (struct cpu_run){ .cpu = i, .args = { .kind = kind, .size = size,
				.first = i * per_cpu, .cpu = i } };
}

/*
 * Allocate @count objects on each of @cpus CPUs at once, then free them; ns
 * per alloc+free, and arenakit's page kfunc calls and pages taken or given
 * back meanwhile (page_frag's are not counted: 0).
 */
static int run_cpus(struct bench *b, struct alloc_vs_frag *skel, int cpus, unsigned int kind,
		    unsigned int size, unsigned int count, double *ns_per_op,
		    unsigned long long *calls, unsigned long long *pages_moved)
{
	struct ak_alloc_stats *st = &skel->arena->ak_allocator.stats, before = *st;
	struct cpu_run runs[ALLOC_BENCH_CPUS];
	unsigned long long alloc_ns[ALLOC_BENCH_CPUS];
	double total = 0;
	int i, err;

	start_runs(runs, cpus, kind, size, count);
	err = phase(runs, cpus, skel->progs.alloc_some, count);
	for (i = 0; i < cpus; i++) {
		check_failed(b, "alloc+free", kind, size, runs[i].args.failed, count);
		alloc_ns[i] = runs[i].args.ns;
	}
	err = phase(runs, cpus, skel->progs.free_some, count) ?: err;
	for (i = 0; i < cpus; i++)
		total += (double)(alloc_ns[i] + runs[i].args.ns) / count;
	*ns_per_op = total / cpus;
	*calls = kind == ALLOC_OURS ? st->page_calls - before.page_calls : 0;
	*pages_moved = kind == ALLOC_OURS ? st->pages_taken - before.pages_taken +
					    st->pages_returned - before.pages_returned : 0;
	return err;
}

/*
 * The steady state on @cpus CPUs: fill each working set, run @ops
 * operations a CPU untimed (to reach the steady state), then @ops timed;
 * ns per free+alloc, and the page kfunc calls arenakit made in the timed
 * part.
 */
static int steady_cpus(struct bench *b, struct alloc_vs_frag *skel, int cpus, unsigned int kind,
		       unsigned int size, unsigned int ops, double *ns_per_op,
		       unsigned long long *calls)
{
	struct ak_alloc_stats *st = &skel->arena->ak_allocator.stats, before;
	struct cpu_run runs[ALLOC_BENCH_CPUS];
	double total = 0;
	int i, err;

	start_runs(runs, cpus, kind, size, ALLOC_BENCH_WORKING);
	err = phase(runs, cpus, skel->progs.alloc_some, ALLOC_BENCH_WORKING) ?:
	      phase(runs, cpus, skel->progs.steady, ops);
	if (err)
		return err;
	before = *st;
	err = phase(runs, cpus, skel->progs.steady, ops);
	*calls = st->page_calls - before.page_calls;
	for (i = 0; !err && i < cpus; i++) {
		check_failed(b, "steady", kind, size, runs[i].args.failed, ops);
		total += (double)runs[i].args.ns / ops;
	}
	*ns_per_op = total / cpus;
	return phase(runs, cpus, skel->progs.free_some, ALLOC_BENCH_WORKING) ?: err;
}

/* Distinct pages under @count live objects of @size. */
static int pages_for(struct bench *b, struct alloc_vs_frag *skel, unsigned int kind,
		     unsigned int size, unsigned int count, double *pages)
{
	struct cpu_run run;
	unsigned long long *seen, page, base, n = 0;
	size_t words = (1ULL << 30) / 4096 / 64;	/* one bit per arena page */
	unsigned int i;
	size_t mapped;
	int err;

	start_runs(&run, 1, kind, size, count);
	err = phase(&run, 1, skel->progs.alloc_some, count);
	if (err)
		return err;
	check_failed(b, "pages", kind, size, run.args.failed, count);
	seen = calloc(words, sizeof(*seen));
	if (!seen)
		return phase(&run, 1, skel->progs.free_some, count) ?: -ENOMEM;
	base = (unsigned long long)bpf_map__initial_value(skel->maps.arena, &mapped);
	for (i = 0; i < count; i++) {
		page = ((unsigned long long)skel->arena->slots[i] - base) / 4096;
		if (!skel->arena->slots[i] || page / 64 >= words) {
			bench_wrong(b, "%s: object %u at %p, outside the arena", kind_names[kind],
				    i, skel->arena->slots[i]);
			break;
		}
		n += !(seen[page / 64] & 1ULL << page % 64);
		seen[page / 64] |= 1ULL << page % 64;
	}
	free(seen);
	*pages = n;
	return phase(&run, 1, skel->progs.free_some, count);
}

/* A row of BPF-timed samples for @kind at @size on @cpus CPUs at once. */
static struct bench_row *cpus_row(struct bench *b, const char *section, unsigned int kind,
				  unsigned int size, int cpus, const char *unit)
{
	char variant[32];

	snprintf(variant, sizeof(variant), "%d CPU%s at once", cpus, cpus > 1 ? "s" : "");
	return bench_row(b, section, kind_names[kind], size, variant, unit, BENCH_CLOCK_BPF);
}

/* Pages under a million (--quick: 64k) live objects of each size, and the ideal. */
static int alloc_pages(struct bench *b, struct alloc_vs_frag *skel)
{
	static const unsigned int sizes[] = { 16, 32, 64, 100, 256 };
	unsigned int live = b->quick ? 1 << 16 : 1 << 20, s, k;
	struct bench_row *pages[ALLOC_KINDS];
	char what[96];
	double v, ideal;
	int err;

	for (s = 0; s < ARRAY_SIZE(sizes); s++) {
		for (k = 0; k < ALLOC_KINDS; k++) {
			snprintf(what, sizeof(what), "%uk live", live >> 10);
			pages[k] = bench_row(b, "alloc-pages", kind_names[k], sizes[s], what,
					     "pages", "distinct pages under the live objects");
			err = pages_for(b, skel, k, sizes[s], live, &v);
			if (err)
				return err;
			bench_sample(pages[k], v);
		}
		snprintf(what, sizeof(what), "pages, %uk live %u-byte objects: arenakit / page_frag",
			 live >> 10, sizes[s]);
		bench_ratio(b, what, pages[ALLOC_OURS], pages[ALLOC_PAGE_FRAG], BENCH_AT_MOST, 1.10);
		ideal = ((double)live * sizes[s] + 4095) / 4096;
		snprintf(what, sizeof(what), "pages, %uk live %u-byte objects: arenakit / ideal",
			 live >> 10, sizes[s]);
		bench_figure(b, what, bench_median(pages[ALLOC_OURS]) / (unsigned long long)ideal,
			     BENCH_AT_MOST, 1.15);
	}
	return 0;
}

/* The steady state at each size, on one CPU and on two at once. */
static int alloc_steady(struct bench *b, struct alloc_vs_frag *skel, int cpus)
{
	static const unsigned int sizes[] = { 16, 64, 256 };
	struct bench_row *rows[3][ALLOC_KINDS][ALLOC_BENCH_CPUS] = {};
	unsigned int ops = b->quick ? 4096 : 65536;
	unsigned long long calls, most_calls = 0;
	char what[96];
	int s, k, c, r, err;
	double v;

	for (s = 0; s < 3; s++)
		for (k = 0; k < ALLOC_KINDS; k++)
			for (c = 0; c < cpus; c++) {
				rows[s][k][c] = cpus_row(b, "alloc-steady", k, sizes[s], c + 1,
							 "ns/free+alloc");
			}
	for (r = BENCH_WARMUP; r < b->runs; r++)
		for (s = 0; s < 3; s++)
			for (k = 0; k < ALLOC_KINDS; k++)
				for (c = 0; c < cpus; c++) {
					err = steady_cpus(b, skel, c + 1, k, sizes[s], ops, &v, &calls);
					if (err)
						return err;
					if (r < 0)
						continue;
					bench_sample(rows[s][k][c], v);
					if (k == ALLOC_OURS && calls > most_calls)
						most_calls = calls;
				}
	for (s = 0; s < 3; s++)
		for (c = 0; c < cpus; c++) {
			snprintf(what, sizeof(what), "steady state, %u bytes, %d CPU%s: page_frag / arenakit",
				 sizes[s], c + 1, c ? "s" : "");
			bench_ratio(b, what, rows[s][ALLOC_PAGE_FRAG][c], rows[s][ALLOC_OURS][c],
				    BENCH_AT_LEAST, 3);
		}
	bench_figure(b, "steady state: page kfunc calls arenakit made in a timed run, most",
		     most_calls, BENCH_AT_MOST, 0);
	return 0;
}

/*
 * What the page kfuncs cost a page, taking and giving back 1 or 16 pages a
 * call, 4096 pages in all (--quick: 256), on one CPU: the floor under any
 * case that moves pages.
 */
static int alloc_kfuncs(struct bench *b, struct alloc_vs_frag *skel)
{
	static const unsigned int per_call[] = { 1, 16 };
	unsigned int pages = b->quick ? 256 : 4096, i, runs;
	struct bench_row *take[2], *give[2];
	struct cpu_run run;
	char what[32];
	int r, err;

	for (i = 0; i < 2; i++) {
		snprintf(what, sizeof(what), "%u page%s a call", per_call[i], per_call[i] > 1 ? "s" : "");
		take[i] = bench_row(b, "alloc-kfunc", "bpf_arena_alloc_pages", pages, what,
				    "ns/page", BENCH_CLOCK_BPF);
		give[i] = bench_row(b, "alloc-kfunc", "bpf_arena_free_pages", pages, what,
				    "ns/page", BENCH_CLOCK_BPF);
	}
	for (r = BENCH_WARMUP; r < b->runs; r++)
		for (i = 0; i < 2; i++) {
			runs = pages / per_call[i];
			start_runs(&run, 1, ALLOC_OURS, per_call[i], runs);
			err = phase(&run, 1, skel->progs.take_pages, runs);
			if (err)
				return err;
			if (run.args.failed)
				bench_wrong(b, "bpf_arena_alloc_pages: %llu of %u calls failed",
					    run.args.failed, runs);
			if (r >= 0)
				bench_sample(take[i], (double)run.args.ns / pages);
			err = phase(&run, 1, skel->progs.give_pages, runs);
			if (err)
				return err;
			if (r >= 0)
				bench_sample(give[i], (double)run.args.ns / pages);
		}
	bench_ratio(b, "bpf_arena_alloc_pages, a page: 1 a call / 16 a call", take[0], take[1],
		    BENCH_NO_GOAL, 0);
	bench_ratio(b, "bpf_arena_free_pages, a page: 1 a call / 16 a call", give[0], give[1],
		    BENCH_NO_GOAL, 0);
	return 0;
}

/* What the alloc-calls rows count, a case of the alloc section each. */
#define PAGE_CALLS_SOURCE "the allocator's stats over one allocate-N-then-free-N case"

int bench_alloc(struct bench *b)
{
	static const unsigned int sizes[] = { 16, 64, 256, 4096 };
	struct bench_row *rows[4][ALLOC_KINDS][ALLOC_BENCH_CPUS] = {};
	struct bench_row *calls[4][ALLOC_BENCH_CPUS] = {}, *moved[4][ALLOC_BENCH_CPUS] = {};
	unsigned long long n_calls, n_moved;
	int cpus = sysconf(_SC_NPROCESSORS_ONLN) >= 2 ? 2 : 1;
	struct alloc_vs_frag *skel;
	char what[96];
	int s, k, c, r, err, retval;
	double v;

	skel = alloc_vs_frag__open();
	if (!skel)
		return -errno;
	err = arenakit_load_skeleton(skel->skeleton) ?:
	      ak_run(skel->progs.setup, NULL, 0, &retval) ?: retval;
	if (err)
		goto out;
	for (s = 0; s < 4; s++)
		for (k = 0; k < ALLOC_KINDS; k++)
			for (c = 0; c < cpus; c++) {
				/* page_frag serves objects under a page only. */
				if (k == ALLOC_PAGE_FRAG && sizes[s] >= 4096 - 8)
					continue;
				rows[s][k][c] = cpus_row(b, "alloc", k, sizes[s], c + 1,
							 "ns/alloc+free");
				if (k == ALLOC_OURS) {
					snprintf(what, sizeof(what), "%d CPU%s at once", c + 1,
						 c ? "s" : "");
					calls[s][c] = bench_row(b, "alloc-calls", "arenakit",
								sizes[s], what, "kfunc calls",
								PAGE_CALLS_SOURCE);
					moved[s][c] = bench_row(b, "alloc-calls", "arenakit",
								sizes[s], what, "pages moved",
								PAGE_CALLS_SOURCE);
				}
			}
	for (r = BENCH_WARMUP; r < b->runs; r++)
		for (s = 0; s < 4; s++) {
			unsigned int count = b->quick ? 1024 : sizes[s] >= 4096 ? 8192 : 65536;

			for (k = 0; k < ALLOC_KINDS; k++)
				for (c = 0; c < cpus; c++) {
					if (!rows[s][k][c])
						continue;
					err = run_cpus(b, skel, c + 1, k, sizes[s], count, &v,
						       &n_calls, &n_moved);
					if (err)
						goto out;
					if (r < 0)
						continue;
					bench_sample(rows[s][k][c], v);
					if (k == ALLOC_OURS) {
						bench_sample(calls[s][c], n_calls);
						bench_sample(moved[s][c], n_moved);
					}
				}
		}
	err = alloc_kfuncs(b, skel) ?: alloc_steady(b, skel, cpus) ?: alloc_pages(b, skel);
	if (err)
		goto out;
	for (s = 0; s < 4; s++)
		for (c = 0; c < cpus; c++) {
			snprintf(what, sizeof(what),
				 "alloc+free, %u bytes, %d CPU%s: arenakit / page_frag", sizes[s],
				 c + 1, c ? "s" : "");
			/* The target: 1.5x faster than page_frag, 16 to 256 bytes. */
			bench_ratio(b, what, rows[s][ALLOC_OURS][c], rows[s][ALLOC_PAGE_FRAG][c],
				    sizes[s] <= 256 ? BENCH_AT_MOST : BENCH_NO_GOAL, 1 / 1.5);
		}
out:
	alloc_vs_frag__destroy(skel);
	return err;
}
