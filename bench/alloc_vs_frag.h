/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What bench/alloc_vs_frag.bpf.c and its driver bench/alloc_vs_frag.c share. */
#ifndef ARENAKIT_BENCH_ALLOC_H
#define ARENAKIT_BENCH_ALLOC_H

#define ALLOC_BENCH_SLOTS (1 << 20)	/* live objects at most, all CPUs */
#define ALLOC_BENCH_CPUS 2
/* The steady-state case: each CPU's working set of live objects. */
#define ALLOC_BENCH_WORKING 1000

enum alloc_kind { ALLOC_OURS, ALLOC_PAGE_FRAG, ALLOC_KINDS };

/*
 * One CPU's share of a case: @count operations on the slots from @first.
 * A program run that the loop budget cuts returns -AK_EBUDGET with @done
 * saying how far it got, and is run again; @ns adds up the timed loops of
 * every run, so the time is the operations' own.
 */
struct alloc_bench_args {
	unsigned int kind;
	unsigned int size;
	unsigned int first;
	unsigned int count;
	unsigned int cpu;		/* steady: which CPU's random sequence */
	unsigned int done;		/* in/out: operations made so far */
	unsigned long long ns;		/* out: time in the measured loops */
	unsigned long long failed;	/* out: allocations that returned NULL */
};

#endif
