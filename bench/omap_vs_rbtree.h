/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What bench/omap_vs_rbtree.bpf.c and its driver bench/omap_vs_rbtree.c share. */
#ifndef ARENAKIT_BENCH_OMAP_H
#define ARENAKIT_BENCH_OMAP_H

#include "phase.h"

#define OMAP_BENCH_MAX (1 << 20)

/* The operations timed. */
enum omap_op { OMAP_INSERT, OMAP_LOOKUP, OMAP_WALK, OMAP_POP, OMAP_OPS };

/* What each is timed on: not every side has every operation (see omap_bench_has). */
enum omap_side { OMAP_SIDE_OMAP, OMAP_SIDE_RBTREE, OMAP_SIDE_HTAB, OMAP_SIDES };

/*
 * bpf_rbtree_* in 6.12 has add, first and remove, no search and no step
 * to a neighbour (bpf_rbtree_root/left/right came in 6.16): it cannot look
 * up a key or walk without taking nodes out. The arena hash table answers
 * point lookups, unordered.
 */
static inline int omap_bench_has(int op, int side)
{
	switch (side) {
	case OMAP_SIDE_OMAP:
		return 1;
	case OMAP_SIDE_RBTREE:
		return op == OMAP_INSERT || op == OMAP_POP;
	default:
		return op == OMAP_INSERT || op == OMAP_LOOKUP;
	}
}

struct omap_bench_result {
	unsigned long long ps[OMAP_OPS][OMAP_SIDES];	/* picoseconds per operation */
	unsigned long long found;	/* lookups that found their key */
	unsigned long long walked;	/* keys the walks returned */
	unsigned long long popped;	/* keys the pops returned */
	unsigned long long disorder;	/* a walk's or pop's key not above the one before */
	unsigned long long errors;	/* operations that failed */
};

#endif
