/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * BENCH_TIMED: a phase (bench/phase.h) run in chunks of BENCH_CHUNK keys,
 * resumable. A phase of a million operations takes longer than a frame's
 * loop budget under TCG, so a run cut by it returns -AK_EBUDGET and the
 * next run goes on where it stopped, the time spent in each run added up.
 */
#ifndef ARENAKIT_BENCH_PHASE_BPF_H
#define ARENAKIT_BENCH_PHASE_BPF_H

#include <arenakit/loop.h>
#include "phase.h"

#define BENCH_CHUNK 16384

/*
 * Run @chunk(op, side, from, to) over keys [@base, @base + @n) @times
 * times, as far as the budget allows; @chunk returns the key it reached
 * (a chunk the budget cut is resumed there, not counted as wrong).
 * @ph.ns adds the time of this run's loop, from the clock around it.
 * 0 when the phase is done, else -AK_EBUDGET.
 */
#define BENCH_TIMED(ph, chunk, times, base, n)				\
	({								\
		__u64 ___start = bpf_ktime_get_ns();			\
		__u32 ___c, ___end, ___reached;				\
		int ___err = 0;						\
									\
		while ((ph).rep < (times)) {				\
			if (!can_loop) {				\
				___err = -AK_EBUDGET;			\
				break;					\
			}						\
			___c = (ph).at;					\
			if (___c >= (n)) {				\
				(ph).rep++;				\
				(ph).at = 0;				\
				continue;				\
			}						\
			___end = ___c + BENCH_CHUNK < (n) ? ___c + BENCH_CHUNK : (n); \
			___reached = chunk((ph).op, (ph).side, (base) + ___c, \
					   (base) + ___end) - (base);	\
			(ph).at = ___reached;				\
			if (___reached < ___end) {			\
				___err = -AK_EBUDGET;			\
				break;					\
			}						\
		}							\
		(ph).ns += bpf_ktime_get_ns() - ___start;		\
		___err;							\
	})

/* Picoseconds per operation of a phase done: @n keys, @times passes. */
#define BENCH_PS_PER_OP(ph, n, times) ((ph).ns * 1000 / ((__u64)(n) * (times)))

#endif
