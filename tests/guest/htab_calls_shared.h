/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What tests/guest/htab_calls.bpf.c's skeleton names: the registry
 * (gen-registry.sh) includes it before the skeleton.
 */
#ifndef ARENAKIT_TESTS_GUEST_HTAB_CALLS_SHARED_H
#define ARENAKIT_TESTS_GUEST_HTAB_CALLS_SHARED_H

/* test_htab_each_all's state, in the arena. */
struct each_sum {
	unsigned long long sum, visited, stop, last;
	unsigned long long want;	/* the sum of every value */
	unsigned long long work;	/* loop steps per entry, to outlast a budget */
};

#endif
