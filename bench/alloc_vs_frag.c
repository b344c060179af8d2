// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Section "alloc": alloc+free ns per object of the arenakit allocator and
 * of the 6.12 selftests' page_frag allocator, for several object sizes,
 * on one CPU and on two at once; and the pages each needs to hold a
 * million live 32-byte objects (distinct pages under the objects, counted
 * from the pointers through the arena mmap).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include <arenakit/alloc.h>
#include "alloc_vs_frag.h"
#include "alloc_vs_frag.skel.h"
#include "bench.h"
#include "loader.h"

static const char *const kind_names[ALLOC_KINDS] = {
	[ALLOC_OURS] = "arenakit", [ALLOC_PAGE_FRAG] = "selftests page_frag",
};

struct cpu_run {
	const struct bpf_program *prog;
	int cpu, err;
	struct alloc_bench_args args;
};

static void *run_on_cpu(void *arg)
{
	struct cpu_run *run = arg;
	int retval;

	run->err = arenakit_pin_to_cpu(run->cpu);
	if (!run->err)
		run->err = arenakit_run_ctx(run->prog, &run->args, sizeof(run->args), &retval);
	if (!run->err)
		run->err = retval;
	return NULL;
}

/* Run @cpus copies at once, CPU i on its own slots; ns per alloc+free. */
static int run_cpus(struct bench *b, struct alloc_vs_frag *skel, int cpus, unsigned int kind,
		    unsigned int size, unsigned int count, double *ns_per_op)
{
	struct cpu_run runs[ALLOC_BENCH_CPUS] = {};
	pthread_t threads[ALLOC_BENCH_CPUS];
	double total = 0;
	int i, err = 0;

	for (i = 0; i < cpus; i++) {
		runs[i].prog = skel->progs.alloc_free;
		runs[i].cpu = i;
		runs[i].args = (struct alloc_bench_args){
			.kind = kind, .size = size, .first = i * count, .count = count,
		};
		if (pthread_create(&threads[i], NULL, run_on_cpu, &runs[i]))
			return -EAGAIN;
	}
	for (i = 0; i < cpus; i++) {
		pthread_join(threads[i], NULL);
		err = err ?: runs[i].err;
		/*
		 * arenakit's lock is bounded: an allocation that finds it held
		 * (under TCG, by a vCPU the host is not running) fails with
		 * -EBUSY, as documented. Reported, not an error.
		 */
		if (runs[i].args.failed * 100 > count)
			bench_wrong(b, "%s, %u bytes: %llu of %u allocations failed",
				    kind_names[kind], size, runs[i].args.failed, count);
		else if (runs[i].args.failed)
			fprintf(stderr, "arenakit bench: alloc: %s, %u bytes: %llu of %u "
				"allocations failed (-EBUSY: the lock stayed held)\n",
				kind_names[kind], size, runs[i].args.failed, count);
		total += (double)(runs[i].args.alloc_ns + runs[i].args.free_ns) / count;
	}
	*ns_per_op = total / cpus;
	return err;
}

/* Distinct pages under @count live objects of @size. */
static int pages_for(struct bench *b, struct alloc_vs_frag *skel, unsigned int kind,
		     unsigned int size, unsigned int count, double *pages)
{
	struct cpu_run run = { .prog = skel->progs.alloc_free };
	unsigned long long *seen, page, base, n = 0;
	size_t words = (1ULL << 30) / 4096 / 64;	/* one bit per arena page */
	unsigned int i;
	size_t mapped;
	int err;

	run.args = (struct alloc_bench_args){ .kind = kind, .size = size, .count = count,
					      .keep = 1 };
	run_on_cpu(&run);
	if (run.err)
		return run.err;
	seen = calloc(words, sizeof(*seen));
	if (!seen)
		return -ENOMEM;
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
	run.prog = skel->progs.free_kept;
	run_on_cpu(&run);
	err = run.err;
	return err;
}

int bench_alloc(struct bench *b)
{
	static const unsigned int sizes[] = { 16, 64, 256, 4096 };
	struct bench_row *rows[4][ALLOC_KINDS][ALLOC_BENCH_CPUS] = {};
	struct bench_row *pages[ALLOC_KINDS];
	int cpus = sysconf(_SC_NPROCESSORS_ONLN) >= 2 ? 2 : 1;
	unsigned int live = b->quick ? 1 << 16 : 1 << 20;
	struct alloc_vs_frag *skel;
	char variant[32], what[96];
	int s, k, c, r, err;
	double v;

	skel = alloc_vs_frag__open();
	if (!skel)
		return -errno;
	err = arenakit_load_skeleton(skel->skeleton) ?: arenakit_run_retval(skel->progs.setup);
	if (err)
		goto out;
	for (s = 0; s < 4; s++)
		for (k = 0; k < ALLOC_KINDS; k++)
			for (c = 0; c < cpus; c++) {
				/* page_frag serves objects under a page only. */
				if (k == ALLOC_PAGE_FRAG && sizes[s] >= 4096 - 8)
					continue;
				snprintf(variant, sizeof(variant), "%d CPU%s at once", c + 1,
					 c ? "s" : "");
				rows[s][k][c] = bench_row(b, "alloc", kind_names[k], sizes[s],
							  variant, "ns/alloc+free",
							  BENCH_CLOCK_BPF);
			}
	for (r = BENCH_WARMUP; r < b->runs; r++)
		for (s = 0; s < 4; s++) {
			unsigned int count = b->quick ? 1024 : sizes[s] >= 4096 ? 8192 : 65536;

			for (k = 0; k < ALLOC_KINDS; k++)
				for (c = 0; c < cpus; c++) {
					if (!rows[s][k][c])
						continue;
					err = run_cpus(b, skel, c + 1, k, sizes[s], count, &v);
					if (err)
						goto out;
					if (r >= 0)
						bench_sample(rows[s][k][c], v);
				}
		}
	for (k = 0; k < ALLOC_KINDS; k++) {
		snprintf(what, sizeof(what), "%uk live", live >> 10);
		pages[k] = bench_row(b, "alloc-pages", kind_names[k], 32, what, "pages",
				     "distinct pages under the live objects");
		err = pages_for(b, skel, k, 32, live, &v);
		if (err)
			goto out;
		bench_sample(pages[k], v);
	}
	for (s = 0; s < 4; s++)
		for (c = 0; c < cpus; c++) {
			snprintf(what, sizeof(what),
				 "alloc+free, %u bytes, %d CPU%s: arenakit / page_frag", sizes[s],
				 c + 1, c ? "s" : "");
			bench_ratio(b, what, rows[s][ALLOC_OURS][c], rows[s][ALLOC_PAGE_FRAG][c],
				    BENCH_NO_GOAL, 0);
		}
	bench_ratio(b, "pages for live 32-byte objects: arenakit / page_frag",
		    pages[ALLOC_OURS], pages[ALLOC_PAGE_FRAG], BENCH_NO_GOAL, 0);
out:
	alloc_vs_frag__destroy(skel);
	return err;
}
