/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/omap_impl.h - the inside of omap.h: the bodies of its calls.
 * Internal: <arenakit/omap.h> includes this at its end, after its
 * declarations; nothing here is API. By mechanism, each part using only
 * those before it:
 *  - keyed_impl.h: the keyed maps' spine (key widths, the dispatch to a
 *    width's version, the two kinds of caller), shared with htab.h;
 *  - omap_impl_node.h: a node's layout, moves, key compares, the search
 *    in a node and the descent (shared with omap_user.h);
 *  - omap_impl_read.h: the sequence count and the lock, the read sections
 *    of finds and walk steps, a walk's cursor (shared with omap_user.h);
 *  - omap_impl_insert.h: the spare stocks, a node's split, the insert, an
 *    update's begin and end;
 *  - omap_impl_delete.h: merges and borrows, the unlink, the head's pop,
 *    the rekey, a take's end;
 *  - omap_impl_calls.h: the calls' versions per key width, their macros'
 *    bodies, and the calls on the whole map.
 *
 * Invariants, held whenever the lock is free: keys strictly increase
 * along the leaves' links and within every node; every leaf lies at
 * depth m->depth; an inner node's key i is above every key under its
 * child i and at most the first key under child i + 1; every node but
 * the root holds at least one key; m->count is the leaves' keys.
 */
#ifndef __ARENAKIT_OMAP_H
#error "<arenakit/omap_impl.h> is internal: include <arenakit/omap.h>"
#elif !defined(__ARENAKIT_OMAP_IMPL_H)
#define __ARENAKIT_OMAP_IMPL_H

#include <arenakit/keyed_impl.h>
#include <arenakit/omap_impl_node.h>
#include <arenakit/omap_impl_read.h>
#include <arenakit/omap_impl_insert.h>
#include <arenakit/omap_impl_delete.h>
#include <arenakit/omap_impl_calls.h>

#endif /* __ARENAKIT_OMAP_IMPL_H */
