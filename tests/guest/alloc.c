// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* alloc.h across CPUs and program types, checked through the arena's mmap. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "guest/guest.h"
#include <arenakit/alloc_types.h>
#include "alloc.skel.h"

#define ROUNDS 2000

struct worker {
	struct alloc *skel;
	int cpu;
	int failed_runs;
	struct bpf_program *prog;	/* churn unless set */
	int rounds;			/* ROUNDS unless set */
};

static void *churn_on_cpu(void *arg)
{
	struct worker *w = arg;
	struct bpf_program *prog = w->prog ? w->prog : w->skel->progs.churn;
	int i, retval, rounds = w->rounds ? w->rounds : ROUNDS;

	if (arenakit_pin_to_cpu(w->cpu))
		w->failed_runs = -1;
	for (i = 0; i < rounds; i++)
		if (ak_run(prog, NULL, 0, &retval) || retval)
			w->failed_runs++;
	return NULL;
}

static struct alloc *load(void)
{
	struct alloc *skel = alloc__open();

	cr_assert(skel);
	/* Only the programs these tests run: the test_* ones have their own. */
	cr_assert_eq(arenakit_load_skeleton(skel->skeleton), 0);
	return skel;
}

Test(alloc, two_cpus_lose_nothing, .timeout = 300)
{
	struct alloc *skel = load();
	struct worker w[2] = { { .skel = skel, .cpu = 0 }, { .skel = skel, .cpu = 1 } };
	struct ak_alloc_stats *stats = &skel->arena->ak_allocator.stats;
	pthread_t t[2];
	int i, retval;

	cr_assert_geq(sysconf(_SC_NPROCESSORS_ONLN), 2, "needs two CPUs (SMP=2)");
	for (i = 0; i < 2; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, churn_on_cpu, &w[i]), 0);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	cr_expect_eq(w[0].failed_runs, 0);
	cr_expect_eq(w[1].failed_runs, 0);
	cr_assert_eq(ak_run(skel->progs.drain_mailbox, NULL, 0, &retval), 0);
	/* A busy lock may fail an allocation (it says so); nothing else may. */
	cr_expect_eq(skel->bss->alloc_failures, stats->fail_busy,
		     "%llu failed allocations, %llu of them -EBUSY", skel->bss->alloc_failures,
		     stats->fail_busy);
	cr_expect_eq(skel->bss->corrupted, 0, "%llu objects were handed out twice or not freed",
		     skel->bss->corrupted);
	cr_expect_eq(guest_live_objects(skel), 0, "%llu objects leaked", guest_live_objects(skel));
	cr_expect_eq(guest_live_bytes(skel), 0);
	cr_expect_eq(stats->fail_nomem + stats->fail_budget, 0);
	cr_expect_eq(stats->double_frees + stats->bad_frees, 0);
	cr_expect_eq(stats->pages, stats->slab_pages + stats->large_pages + stats->spare_pages);
	printf("alloc: 2 CPUs x %d rounds x 32 objects: %llu allocations and %llu frees met a "
	       "busy lock; %llu pages held after\n", ROUNDS, stats->fail_busy,
	       skel->bss->busy_frees, stats->pages);
	alloc__destroy(skel);
}

/* What BPF stored, seen through the mmap: user addresses, none with low 32 bits 0. */
Test(alloc, objects_seen_from_user_space, .timeout = 120)
{
	struct alloc *skel = load();
	struct obj {
		struct obj *next;
		unsigned long long check;
	} *o;
	int n = 0, retval;

	cr_assert_eq(ak_run(skel->progs.keep_objects, NULL, 0, &retval), 0);
	cr_assert_eq(retval, 0);
	for (o = (struct obj *)skel->bss->kept; o && n <= 200; o = o->next, n++) {
		cr_expect_neq((unsigned int)(unsigned long)o, 0, "object %p has low 32 bits 0", o);
		cr_expect_eq(o->check, (unsigned long long)o ^ 0x5eed5eed5eed5eedULL);
	}
	cr_expect_eq(n, 200);
	cr_expect_eq(guest_live_objects(skel), 200);
	cr_assert_eq(ak_run(skel->progs.free_kept, NULL, 0, &retval), 0);
	cr_expect_eq(guest_live_objects(skel), 0);
	cr_expect_eq(guest_live_bytes(skel), 0);
	alloc__destroy(skel);
}

/*
 * The allocator under contention: 4 CPUs (on a 2-core host, under TCG:
 * vCPUs preempted at any point), 5,000 runs each of 32 allocations of
 * random sizes, freed by whichever CPU takes them. The target is at most
 * one allocation in a million failing with -EBUSY (the shared lock busy);
 * the test asserts a looser bound (a loaded host may stop a vCPU that holds
 * the shared lock for milliseconds) and prints the count.
 */
Test(alloc, four_cpus_of_random_sizes_rarely_meet_a_busy_lock, .timeout = 600)
{
	enum { CPUS = 4, RUNS = 5000, PER_RUN = 32 };
	struct alloc *skel = load();
	struct ak_alloc_stats *stats = &skel->arena->ak_allocator.stats;
	struct worker w[CPUS];
	pthread_t t[CPUS];
	unsigned long long allocations = (unsigned long long)CPUS * RUNS * PER_RUN;
	int i, retval;

	cr_assert_geq(sysconf(_SC_NPROCESSORS_ONLN), CPUS, "needs %d CPUs", CPUS);
	for (i = 0; i < CPUS; i++) {
		w[i] = (struct worker){ .skel = skel, .cpu = i, .prog = skel->progs.churn_sizes,
					.rounds = RUNS };
		cr_assert_eq(pthread_create(&t[i], NULL, churn_on_cpu, &w[i]), 0);
	}
	for (i = 0; i < CPUS; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < CPUS; i++)
		cr_expect_eq(w[i].failed_runs, 0);
	cr_assert_eq(ak_run(skel->progs.drain_mailbox, NULL, 0, &retval), 0);
	cr_expect_eq(skel->bss->alloc_failures, stats->fail_busy,
		     "%llu failed allocations, %llu of them -EBUSY", skel->bss->alloc_failures,
		     stats->fail_busy);
	cr_expect_leq(stats->fail_busy * 100000, allocations,
		      "%llu of %llu allocations met a busy lock", stats->fail_busy, allocations);
	cr_expect_eq(skel->bss->corrupted, 0);
	cr_expect_eq(guest_live_objects(skel), 0, "%llu objects leaked", guest_live_objects(skel));
	cr_expect_eq(stats->double_frees + stats->bad_frees + stats->fail_nomem, 0);
	printf("alloc: %d CPUs x %d runs x %d objects of 16..64 bytes: %llu of %llu allocations "
	       "(%.2f per million) and %llu frees met a busy lock\n", CPUS, RUNS, PER_RUN,
	       stats->fail_busy, allocations, stats->fail_busy * 1e6 / allocations,
	       skel->bss->busy_frees);
	alloc__destroy(skel);
}

Test(alloc, pool_from_tc_program, .timeout = 120)
{
	struct alloc *skel = load();
	struct ak_alloc_stats *stats = &skel->arena->ak_allocator.stats;
	unsigned char packet[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = packet, .data_size_in = sizeof(packet),
		    .repeat = 1);
	unsigned long long pages;
	int retval, err;

	/* Empty pool: the tc program gets nothing, and fails cleanly. */
	err = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.pool_user), &opts);
	cr_assert_eq(err, 0, "tc test run: %s", strerror(errno));
	cr_expect_eq(opts.retval, 0);
	cr_assert_eq(ak_run(skel->progs.fill_pool, NULL, 0, &retval), 0);
	cr_expect_eq(retval, 0);
	pages = stats->pages;
	err = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.pool_user), &opts);
	cr_assert_eq(err, 0);
	cr_expect_eq(opts.retval, 64, "the tc program got %u of 64 pool objects", opts.retval);
	cr_expect_eq(stats->pages, pages);
	cr_expect_eq(guest_live_objects(skel), 0);
	cr_expect_eq(skel->bss->corrupted, 0);
	alloc__destroy(skel);
}
