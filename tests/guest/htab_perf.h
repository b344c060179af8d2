/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What tests/guest/htab_perf.bpf.c and its driver share. */
#ifndef ARENAKIT_TESTS_GUEST_HTAB_PERF_H
#define ARENAKIT_TESTS_GUEST_HTAB_PERF_H

#define HTAB_PERF_MAX (1 << 20)

/* Picoseconds per operation (ns x 1000), and checks. */
struct htab_perf_result {
	unsigned long long arena_insert, map_insert;
	unsigned long long arena_update, map_update;
	unsigned long long arena_hit, map_hit;
	unsigned long long arena_miss, map_miss;
	unsigned long long found;	/* lookups that found something: the hits, x2 */
	unsigned long long errors;	/* chunks with an error or cut short */
};

#endif
