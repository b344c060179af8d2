/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/htab_impl.h - the inside of htab.h: the bodies of its calls and
 * their helpers. Internal: <arenakit/htab.h> includes this at its end,
 * after its declarations; nothing here is API. In the order of the calls,
 * each part using only those before it:
 *  - htab_impl_common.h: a bucket word's chain, a node's value, holding
 *    the bucket array, a walk's cursor (shared with htab_user.h);
 *  - htab_impl_key.h: a key's words and the width list, the hash, the key
 *    compare, a value's copies in and out of the arena;
 *  - htab_impl_table.h: bucket arrays, ak_htab_init, and how a table grows
 *    or reseeds from one array to the next (the migration);
 *  - htab_impl_ops.h: the calls on one key (lookup, update, delete, the
 *    locked lookup) and their out-of-line versions per key width;
 *  - htab_impl_walk.h: the calls over the whole table (check, maintain,
 *    next, delete_current, clear, destroy).
 *
 * Memory order (atomic.h's terms), path by path:
 *  - Bucket locks: taken by compare-and-swap, released by exchange, both
 *    fully ordered: what a holder wrote is seen by the next, on any CPU.
 *  - A new node is linked by an exchange, fully ordered, so a lock-free
 *    reader that loads the link (ak_read_once, then loads through it:
 *    address dependency) sees the node whole. A growth publishes the old
 *    array, then the new one, each by an exchange.
 *  - The old array's lifetime (h->movers): a holder's fetch-and-add comes
 *    before its load of h->old, and the retirer's exchanges before its
 *    fetch-and-add; all fully ordered, so the argument at
 *    __ak_htab_moved_one (htab_impl_table.h) holds on every architecture.
 *  - The lock-free lookup's miss and ak_htab_next's empty buckets read the
 *    generation, then the bucket and chain, then both again: a seqlock
 *    read. It needs those loads kept in program order, which x86-64 (TSO)
 *    does; a weakly ordered CPU needs a read barrier at both ends, which
 *    6.12's BPF has only as a fully ordered atomic (a store, on a line every
 *    writer bumps). It is not paid: arenakit's arena atomics are tested on
 *    x86-64, and where loads may pass loads, a miss from ak_htab_lookup can
 *    be wrong in the moment a writer moves its bucket; ak_htab_lookup_copy,
 *    under the lock, is the answer that holds everywhere.
 */
#ifndef __ARENAKIT_HTAB_H
#error "<arenakit/htab_impl.h> is internal: include <arenakit/htab.h>"
#elif !defined(__ARENAKIT_HTAB_IMPL_H)
#define __ARENAKIT_HTAB_IMPL_H

#include <arenakit/htab_impl_common.h>
#include <arenakit/htab_impl_key.h>
#include <arenakit/htab_impl_table.h>
#include <arenakit/htab_impl_ops.h>
#include <arenakit/htab_impl_walk.h>

#endif /* __ARENAKIT_HTAB_IMPL_H */
