/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What bench/htab_vs_map.bpf.c and its driver bench/htab_vs_map.c share. */
#ifndef ARENAKIT_BENCH_HTAB_H
#define ARENAKIT_BENCH_HTAB_H

#include "phase.h"

#define HTAB_BENCH_MAX (1 << 20)

/* The operations timed, each on the arena table and on the hash map. */
enum htab_op {
	HTAB_INSERT, HTAB_UPDATE, HTAB_HIT, HTAB_MISS, HTAB_DELETE, HTAB_OPS
};

struct htab_bench_result {
	unsigned long long ps[HTAB_OPS][2];	/* picoseconds per op: [op][0 arena, 1 map] */
	unsigned long long found;	/* lookups that found something */
	unsigned long long errors;	/* chunks with an error, or cut short */
};

#endif
