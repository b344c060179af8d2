/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/htab_impl.h - the inside of htab.h: the bodies of its calls and
 * their helpers. Internal: <arenakit/htab.h> includes this at its end,
 * after its declarations; nothing here is API. In the order of the calls,
 * each part using only those before it:
 *  - htab_impl_common.h: a bucket word's chain, a node's value, holding
 *    the bucket array, a walk's cursor (shared with htab_user.h);
 *  - htab_impl_key.h: the table's key widths on the keyed spine
 *    (keyed_impl.h), the hash, the key compare (a value's copies in and
 *    out of the arena: arena.h);
 *  - htab_impl_table.h: bucket arrays, ak_htab_init, and how a table grows
 *    or reseeds from one array to the next (the migration);
 *  - htab_impl_lookup.h: finding one key (lock-free, under its bucket's
 *    lock, and the locked lookup that copies);
 *  - htab_impl_update.h: changing one key (update, lookup_or_init,
 *    delete, the LRU) and the calls' out-of-line versions per key width;
 *  - htab_impl_walk.h: the calls over the whole table (check, maintain,
 *    next, delete_current, clear, destroy).
 *
 * Memory order, in the kernel memory model's terms (atomic.h), path by path:
 *  - Bucket locks: taken by compare-and-swap, released by a release store
 *    (an exchange where the CPU is weakly ordered), both ordering what the
 *    holder did before the next holder's compare-and-swap reads the word.
 *  - A new node is linked by an exchange, fully ordered, after its fields
 *    are written: a lock-free reader that loads the link (ak_read_once)
 *    and reads through it (an address dependency) sees the node whole. A
 *    growth publishes the old array, then the new one, each by an exchange,
 *    then moves the generation.
 *  - The old array's lifetime (h->movers): a holder's fetch-and-add comes
 *    before its load of h->old, and the retirer's exchanges before its
 *    fetch-and-add; all fully ordered, so the argument at
 *    __ak_htab_moved_one (htab_impl_table.h) holds on every architecture.
 *  - Every writer that unlinks, relinks or frees a node a lock-free reader
 *    may be on moves the generation (a fully ordered add) after the change
 *    and before the free; a mover locks the bucket (LOCKED) before it
 *    relinks and leaves MOVED behind.
 *  - The lock-free lookup's miss is a seqlock read: the generation, h->cur
 *    and h->old, the bucket and its chain, then the bucket and the
 *    generation again. Each read is ordered after the one
 *    before it: h->cur after the generation and h->old after h->cur by
 *    tokens (ak_dep: an address dependency the code makes), the bucket
 *    and each link after h->cur by the addresses they are read at, and
 *    the re-check's two reads after the last link by a token of it. So if
 *    the walk read a link written after some writer's generation move (a
 *    freed node's first word, a moved node's new link), the message
 *    passing from that writer's fully ordered add to its store, and from
 *    the reader's read of the store through the dependency to its
 *    re-check, makes the re-check see the generation moved (or the bucket
 *    locked or moved): the miss is retried, then taken under the lock. If
 *    the first read saw a writer's move, the walk sees what that writer
 *    did before it. An answer of -ENOENT thus comes from a chain as it was
 *    between two reads of one generation. A hit is checked the same way:
 *    the generation read again with a token of every key word compared
 *    (a key word read from a block another owner took after a free is a
 *    store after that free's generation move, so the re-check sees the
 *    move and the hit is retried). On x86-64 (AK_TSO) reads are not
 *    reordered, and the tokens cost nothing.
 *  - ak_htab_next: a call reads the generation, then counts itself
 *    in (a fully ordered add) before it reads h->cur and the buckets, so a
 *    bucket an insert filled before the move the call saw is read full;
 *    it reads the generation last after counting out (fully ordered), so
 *    every bucket it read was read before it; a bucket with entries is
 *    read under its lock. A complete walk saw the table as it was at its
 *    generation; a walk that may have seen anything else is -AK_ESTALE.
 *    ak_htab_next_copy (htab_user.h) reads the generation before its hold
 *    likewise, and checks it after each locked bucket and after its
 *    count-out.
 *  - ak_htab_count reads one word: a count the table had; ak_htab_clear,
 *    the check and ak_htab_destroy take each bucket's lock.
 * tests/explore/weak_scenarios.c shows the miss and the walk wrong when
 * these orders are taken out (mutants 32 to 35), and right with them.
 */
#ifndef __ARENAKIT_HTAB_H
#error "<arenakit/htab_impl.h> is internal: include <arenakit/htab.h>"
#elif !defined(__ARENAKIT_HTAB_IMPL_H)
#define __ARENAKIT_HTAB_IMPL_H

#include <arenakit/htab_impl_common.h>
#include <arenakit/htab_impl_key.h>
#include <arenakit/htab_impl_table.h>
#include <arenakit/htab_impl_lookup.h>
#include <arenakit/htab_impl_update.h>
#include <arenakit/htab_impl_walk.h>

#endif /* __ARENAKIT_HTAB_IMPL_H */
