/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/rculist_types.h - the arena-resident structure of rculist.h
 * (its lists are struct ak_list, list_types.h), and nothing else: what a
 * loader or a skeleton needs to lay out and read a read-mostly list's
 * domain through the arena's mmap. BPF programs include
 * <arenakit/rculist.h>, which includes this header.
 */
#ifndef __ARENAKIT_RCULIST_TYPES_H
#define __ARENAKIT_RCULIST_TYPES_H

#include <arenakit/list_types.h>

/*
 * The grace-period domain of read-mostly lists; zero is ready. Lists that
 * share a domain share their writers' lock too, and one entry type: a
 * reclaim under one lock while a delete under another reads the epoch
 * would let that entry go after one check instead of two.
 */
struct ak_rcu {
	unsigned long long epoch;
	unsigned long long readers[2];			/* inside, by epoch parity */
	struct ak_list_node __arena *retired[2];	/* by the parity retired in */
	unsigned long long pending;			/* retired, not yet freed */
};

#endif /* __ARENAKIT_RCULIST_TYPES_H */
