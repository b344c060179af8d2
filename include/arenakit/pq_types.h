/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/pq_types.h - the priority queue as it lies in the arena: an
 * ordered map (omap_types.h) keyed by a handle, no code. The calls are
 * <arenakit/pq.h>.
 */
#ifndef __ARENAKIT_PQ_TYPES_H
#define __ARENAKIT_PQ_TYPES_H

#include <arenakit/omap_types.h>

/**
 * struct ak_pq_handle - an element's key in the queue, and its name
 * @prio: the priority: the smallest comes out first
 * @seq: the push's number: among equal priorities the first pushed
 *	comes out first
 */
struct ak_pq_handle {
	unsigned long long prio;
	unsigned long long seq;
};

/**
 * struct ak_pq - a priority queue in the arena; zero before ak_pq_init
 * @map: its elements by handle (the map's seq numbers the pushes)
 */
struct ak_pq {
	struct ak_omap map;
};

#endif /* __ARENAKIT_PQ_TYPES_H */
