/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A timed phase of a bench program: one operation on one side (the arena
 * structure, or what it is compared with) over keys [0, n), in chunks, as
 * many runs of the program as the loop budget needs. User space sets
 * @op and @side, zero the rest; BENCH_TIMED (bench/phase.bpf.h) does the
 * rest in BPF.
 */
#ifndef ARENAKIT_BENCH_PHASE_H
#define ARENAKIT_BENCH_PHASE_H

struct bench_phase {
	unsigned int op;		/* the section's operation */
	unsigned int side;		/* 0: the arena structure; 1, 2: the others */
	unsigned int rep;		/* passes over the keys done */
	unsigned int at;		/* the next key of this pass */
	unsigned long long ns;		/* spent in this phase's runs so far */
};

#endif
