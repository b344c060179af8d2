/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/rculist.h - read-mostly lists: readers that take no lock and
 * never wait.
 *
 * A list written rarely and read on every event (a policy's rules, a set of
 * patterns) should not make its readers take the writers' lock: a reader
 * that holds it through a walk of 10,000 rules makes every other CPU wait,
 * and a bounded wait then fails. Here a reader takes no lock. It opens a
 * read section with ak_rcu_read_begin (a load and an atomic add), walks
 * with ak_list_for_each_entry_rcu, and closes the section with
 * ak_rcu_read_end. Writers still exclude each other with the list's
 * ak_lock, and edit with the _rcu calls below, which keep every state a
 * reader can see a whole list:
 *   - ak_list_add_head_rcu / ak_list_add_tail_rcu link a node only once its
 *     own links are written;
 *   - ak_list_del_rcu unlinks a node but leaves its forward link, so a
 *     reader standing on it goes on to the rest of the list, and retires
 *     it instead of freeing it;
 *   - ak_rcu_reclaim frees what was retired once no reader that could have
 *     seen it is still inside a read section.
 * This is the kernel's RCU list discipline (include/linux/rculist.h), with
 * the grace period kept in the arena as counts of readers, as SRCU keeps
 * them, because a BPF program cannot wait for one.
 *
 * What a reader sees: a node on the list for the whole walk, once, in
 * order; a node added or deleted during the walk, at most once; nothing
 * freed. A walk ends as the plain walks do: ak_list_walk_status() is 0 at
 * the end, -AK_EBUDGET if the loop budget cut it (a read section is not
 * kept across program runs: report the cut, the event is not matched), or
 * -EFAULT on a NULL link (a node deleted with ak_list_del instead of
 * ak_list_del_rcu).
 *
 * Writers never wait either: a reclaim that finds readers answers -EBUSY,
 * and the next one (at the next write, or from user space) goes on. How
 * the grace period is counted, and the memory order that makes it hold on
 * any architecture: rculist_impl.h.
 *
 * User space reads such a list with ak_list_next_copy under the writers'
 * lock (<arenakit/list_user.h>), not with a read section: a loader that
 * dies inside one would stop every free.
 *
 * This header declares and documents the calls; their bodies are in
 * rculist_impl.h, in the same order. struct ak_rcu is in
 * <arenakit/rculist_types.h>, for loaders.
 */
#ifndef __ARENAKIT_RCULIST_H
#define __ARENAKIT_RCULIST_H

#include <arenakit/rculist_types.h>
#include <arenakit/list.h>
#include <arenakit/atomic.h>
#include <arenakit/alloc.h>

/**
 * ak_rcu_read_begin - open a read section of @rcu
 * @rcu: the domain of the lists to be read
 *
 * Never waits and never fails: a load and an atomic add. Close the section
 * with ak_rcu_read_end(@rcu, the value returned), in the same program run.
 * Return: the section's token.
 */
static __ak_always_inline unsigned int ak_rcu_read_begin(struct ak_rcu __arena *rcu);

/**
 * ak_rcu_read_end - close a read section of @rcu
 * @rcu: the domain
 * @token: what ak_rcu_read_begin returned
 *
 * After it, no node reached in the section may be touched.
 */
static __ak_always_inline void ak_rcu_read_end(struct ak_rcu __arena *rcu, unsigned int token);

/**
 * ak_rcu_pending - nodes retired and not yet freed (a snapshot)
 * @rcu: the domain
 *
 * Return: the count.
 */
static __ak_always_inline unsigned long long ak_rcu_pending(const struct ak_rcu __arena *rcu);

/**
 * ak_list_add_head_rcu - insert @node first in @list, with readers inside
 * @list: the list (the writers' lock held)
 * @node: the node to insert (not on any list)
 */
static inline void ak_list_add_head_rcu(struct ak_list __arena *list,
					struct ak_list_node __arena *node);

/**
 * ak_list_add_tail_rcu - insert @node last in @list, with readers inside
 * @list: the list (the writers' lock held)
 * @node: the node to insert (not on any list)
 */
static inline void ak_list_add_tail_rcu(struct ak_list __arena *list,
					struct ak_list_node __arena *node);

/**
 * ak_list_del_rcu - take @node off @list, with readers inside, and retire it
 * @list: the list (the writers' lock held)
 * @node: the node
 * @rcu: the domain whose readers read @list
 *
 * The node's forward link stays, so a reader on it goes on to the list's
 * rest; its back link chains it among the retired nodes. Do not free it,
 * nor add it to a list again: ak_rcu_reclaim frees it, once no reader can
 * reach it.
 * Return: 0; -EINVAL if @node is not on a list, is retired already, or its
 * neighbours do not link back to it: nothing is written.
 */
static inline int ak_list_del_rcu(struct ak_list __arena *list, struct ak_list_node __arena *node,
				  struct ak_rcu __arena *rcu);

/**
 * ak_list_for_each_entry_rcu - iterate over @list in a read section
 * @pos: a pointer to the entry type, the loop cursor
 * @list: the list
 * @member: the name of the struct ak_list_node in the entry
 *
 * As ak_list_for_each_entry, each link read once. Inside
 * ak_rcu_read_begin/_end; ak_list_walk_status(pos, list, member) says how
 * a loop that ended without a break ended.
 */
#define ak_list_for_each_entry_rcu(pos, list, member)			\
	__ak_list_bind(list)						\
		for (pos = __ak_list_entry_or_null(ak_read_once(___ak_list->head.next), \
						   pos, member);	\
		     (pos) && &(pos)->member != &___ak_list->head && ak_can_loop; \
		     pos = __ak_list_entry_or_null(ak_read_once((pos)->member.next), pos, member))

/**
 * ak_rcu_reclaim - free the retired entries no reader can reach (any program)
 * @rcu: the domain (the writers' lock held: the one of the lists it covers)
 * @type: the type of the entries
 * @member: the name of their struct ak_list_node
 *
 * Frees, with ak_free_nosleep, the entries retired in the epoch before
 * this one if no reader of that epoch is still inside, then moves the
 * epoch on (if this one retired any). So an entry is freed by the second
 * reclaim after its delete that finds no reader in its way: call it after
 * each delete, or now and then. Every entry the domain retires must be of
 * @type, allocated by ak_alloc or ak_alloc_nosleep.
 *
 * Return: the number of entries freed (0 and more); -EBUSY if readers of
 * the last epoch are still inside (nothing freed: try later); -AK_EBUDGET
 * if the loop budget, or a busy allocator, stopped the frees part way
 * (ak_rcu_pending() went down by those freed; the rest stay retired: call
 * again); another ak_free_nosleep error, -EINVAL for an entry that is not
 * the allocator's (one freed by hand, say): that entry is dropped from the
 * retired ones, so that the next call goes on with the others.
 */
#define ak_rcu_reclaim(rcu, type, member) __ak_rcu_reclaim(rcu, type, member)

/* The bodies of the calls above, and of ak_rcu_reclaim: internal. */
#include <arenakit/rculist_impl.h>

#endif /* __ARENAKIT_RCULIST_H */
