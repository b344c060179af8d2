/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/list_types.h - the arena-resident structures of list.h, and
 * nothing else: what a loader or a skeleton needs to lay out and read a
 * list through the arena's mmap. BPF programs include <arenakit/list.h>,
 * which includes this header; a loader that walks a list while BPF writes
 * it includes <arenakit/list_user.h>.
 */
#ifndef __ARENAKIT_LIST_TYPES_H
#define __ARENAKIT_LIST_TYPES_H

#include <arenakit/arena.h>

struct ak_list_node {
	struct ak_list_node __arena *next;
	struct ak_list_node __arena *prev;
};

/*
 * An insert adds 1 to a list's generation, an unlink (a delete, a move's
 * first half) this: a walk that only needs its position to stay on the
 * list (ak_list_next_copy_live) tells the two apart by the upper half.
 */
#define __AK_LIST_GEN_UNLINK (1ULL << 32)

struct ak_list {
	struct ak_list_node head;
	unsigned long long len;		/* nodes on the list */
	unsigned long long gen;		/* changed by every change (above) */
};

/* Where a cut walk stopped; zero it before the first walk. */
struct ak_list_cursor {
	struct ak_list_node __arena *pos;	/* next node to visit; NULL: start */
	struct ak_list __arena *list;		/* the list it is a position in */
	unsigned long long gen;			/* that list's gen when saved */
	unsigned long long seen;		/* nodes visited before pos */
};

#endif /* __ARENAKIT_LIST_TYPES_H */
