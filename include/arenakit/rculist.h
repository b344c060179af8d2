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
 * The grace period. struct ak_rcu holds an epoch and two reader counts, one
 * for each parity of the epoch; a reader counts itself under the parity it
 * read. A node retired in epoch E is freed only once both counts have been
 * seen at zero after its retirement: the ak_rcu_reclaim that moves the
 * epoch from E to E+1 checks the count of E-1's parity, and the next one,
 * in E+1, checks E's before it frees. A reader that was inside when the node
 * was unlinked is counted under one of the two parities, so one of the
 * checks finds it, and the free waits until it leaves. A reader that read
 * the epoch just before a move and counts itself just after is counted
 * under the parity not current: that only delays a free. Writers never
 * wait either: a reclaim that finds readers answers -EBUSY, and the next
 * one (at the next write, or from user space) goes on.
 *
 * Memory order: the reader's count is a fetching atomic add, fully ordered,
 * before its first load of a link and after its last; the reclaim reads the
 * count with a compare-and-swap, after every unlink it covers; a node is
 * linked with an atomic exchange after its own links are stored. So the
 * lists do not lean on x86's ordering (only x86-64 is tested here).
 *
 * User space reads such a list with ak_list_next_copy under the writers'
 * lock (list.h), not with a read section: a loader that dies inside one
 * would stop every free.
 */
#ifndef __ARENAKIT_RCULIST_H
#define __ARENAKIT_RCULIST_H

#include <arenakit/list.h>
#include <arenakit/atomic.h>
#include <arenakit/alloc.h>

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

/*
 * The reader's adds must be the fetching form, which BPF orders fully: the
 * section's loads may not pass them. Clang emits a plain atomic add when the
 * result goes unused, and some JITs make that unordered (arm64's STADD;
 * x86's is a locked instruction either way): so the result is used.
 */
#define __ak_rcu_keep_fetch(v)						\
	do {								\
		ak_barrier_var(v);					\
		(void)(v);						\
	} while (0)

/*
 * A retired node's back link chains it among the retired, tagged in bit 0
 * (nodes are 8-byte aligned), so that neither it nor its old neighbours
 * pass for linked: a second delete of it is refused.
 */
#define __AK_RCU_RETIRED 1ULL

static __ak_always_inline struct ak_list_node __arena *
__ak_rcu_chain(struct ak_list_node __arena *next)
{
	return (struct ak_list_node __arena *)((unsigned long long)next | __AK_RCU_RETIRED);
}

static __ak_always_inline struct ak_list_node __arena *
__ak_rcu_unchain(struct ak_list_node __arena *link)
{
	return (struct ak_list_node __arena *)((unsigned long long)link & ~__AK_RCU_RETIRED);
}

static __ak_always_inline int __ak_rcu_is_retired(struct ak_list_node __arena *link)
{
	return (unsigned long long)link & __AK_RCU_RETIRED;
}

/**
 * ak_rcu_read_begin - open a read section of @rcu
 * @rcu: the domain of the lists to be read
 *
 * Never waits and never fails: a load and an atomic add. Close the section
 * with ak_rcu_read_end(@rcu, the value returned), in the same program run.
 * Return: the section's token.
 */
static __ak_always_inline unsigned int ak_rcu_read_begin(struct ak_rcu __arena *rcu)
{
	unsigned int side = ak_read_once(rcu->epoch) & 1;
	unsigned long long before = ak_fetch_add(&rcu->readers[side], 1);

	__ak_rcu_keep_fetch(before);
	return side;
}

/**
 * ak_rcu_read_end - close a read section of @rcu
 * @rcu: the domain
 * @token: what ak_rcu_read_begin returned
 *
 * After it, no node reached in the section may be touched.
 */
static __ak_always_inline void ak_rcu_read_end(struct ak_rcu __arena *rcu, unsigned int token)
{
	unsigned long long before = ak_fetch_add(&rcu->readers[token & 1], -1ULL);

	__ak_rcu_keep_fetch(before);
}

/**
 * ak_rcu_pending - nodes retired and not yet freed (a snapshot)
 * @rcu: the domain
 *
 * Return: the count.
 */
static __ak_always_inline unsigned long long ak_rcu_pending(const struct ak_rcu __arena *rcu)
{
	return ak_read_once(rcu->pending);
}

/*
 * Link @node between @prev and @next, for readers: the node's own links
 * first, then the exchange that makes it reachable (fully ordered, so no
 * reader reaches a node whose link it cannot follow yet).
 */
static inline void __ak_list_insert_rcu(struct ak_list __arena *list,
					struct ak_list_node __arena *node,
					struct ak_list_node __arena *prev,
					struct ak_list_node __arena *next)
{
	ak_write_once(node->next, next);
	node->prev = prev;
	ak_xchg(&prev->next, node);
	next->prev = node;
	list->len++;
	list->gen++;
}

/**
 * ak_list_add_head_rcu - insert @node first in @list, with readers inside
 * @list: the list (the writers' lock held)
 * @node: the node to insert (not on any list)
 */
static inline void ak_list_add_head_rcu(struct ak_list __arena *list,
					struct ak_list_node __arena *node)
{
	__ak_list_insert_rcu(list, node, &list->head, list->head.next);
}

/**
 * ak_list_add_tail_rcu - insert @node last in @list, with readers inside
 * @list: the list (the writers' lock held)
 * @node: the node to insert (not on any list)
 */
static inline void ak_list_add_tail_rcu(struct ak_list __arena *list,
					struct ak_list_node __arena *node)
{
	__ak_list_insert_rcu(list, node, list->head.prev, &list->head);
}

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
				  struct ak_rcu __arena *rcu)
{
	unsigned int side;
	int err;

	/* A retired node's back link is the chain's, tagged: it has no neighbours. */
	if (__ak_rcu_is_retired(node->prev))
		return -EINVAL;
	/* Unlinked as ak_list_del does, but its forward link stays. */
	err = __ak_list_unlink(list, node);
	if (err)
		return err;
	side = rcu->epoch & 1;
	node->prev = __ak_rcu_chain(rcu->retired[side]);
	rcu->retired[side] = node;
	rcu->pending++;
	return 0;
}

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
	for (pos = __ak_list_entry_or_null(ak_read_once((list)->head.next), pos, member); \
	     (pos) && &(pos)->member != &(list)->head && ak_can_loop;	\
	     pos = __ak_list_entry_or_null(ak_read_once((pos)->member.next), pos, member))

/*
 * The first half of a reclaim: 0 if no reader counted under the parity not
 * current remains, so what was retired in the last epoch may go. The count
 * is read by a compare-and-swap of 0 for 0, fully ordered after every
 * unlink before it (not an add of 0: clang makes that a fetching OR, which
 * the 6.12 JITs refuse on arena memory).
 */
static __ak_always_inline int __ak_rcu_grace_over(struct ak_rcu __arena *rcu)
{
	return ak_cmpxchg(&rcu->readers[(rcu->epoch + 1) & 1], 0, 0) ? -EBUSY : 0;
}

/* The next node of the last epoch's retired ones, off the chain; or NULL. */
static __ak_always_inline struct ak_list_node __arena *__ak_rcu_pop(struct ak_rcu __arena *rcu)
{
	unsigned int side = (rcu->epoch + 1) & 1;
	struct ak_list_node __arena *node = rcu->retired[side];

	if (node) {
		rcu->retired[side] = __ak_rcu_unchain(node->prev);
		rcu->pending--;
	}
	return node;
}

/* Put @node back (its free must wait): a later reclaim frees it. */
static __ak_always_inline void __ak_rcu_unpop(struct ak_rcu __arena *rcu,
					      struct ak_list_node __arena *node)
{
	unsigned int side = (rcu->epoch + 1) & 1;

	node->prev = __ak_rcu_chain(rcu->retired[side]);
	rcu->retired[side] = node;
	rcu->pending++;
}

/*
 * The last epoch's retired nodes are all freed: move on, if this epoch
 * retired any (a move with nothing to free would only make readers count
 * under the other parity).
 */
static __ak_always_inline void __ak_rcu_advance(struct ak_rcu __arena *rcu)
{
	if (rcu->retired[rcu->epoch & 1])
		ak_write_once(rcu->epoch, rcu->epoch + 1);
}

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
#define ak_rcu_reclaim(rcu, type, member)				\
	({								\
		__label__ ___ak_cut;	/* one per use of the macro */	\
		struct ak_rcu __arena *___ak_rcu = (rcu);		\
		struct ak_list_node __arena *___ak_node;		\
		long long ___ak_freed = 0;				\
		int ___ak_err = __ak_rcu_grace_over(___ak_rcu);		\
									\
		while (!___ak_err && (___ak_node = __ak_rcu_pop(___ak_rcu))) { \
			___ak_err = ak_free_nosleep(ak_list_entry(___ak_node, type, member)); \
			if (___ak_err == -EBUSY || ___ak_err == -AK_EBUDGET) { \
				__ak_rcu_unpop(___ak_rcu, ___ak_node);	\
				___ak_err = -AK_EBUDGET;		\
			}						\
			if (___ak_err)					\
				break;					\
			___ak_freed++;					\
			ak_cond_break_label(___ak_cut);			\
			continue;					\
		___ak_cut:						\
			___ak_err = -AK_EBUDGET;			\
		}							\
		if (!___ak_err)						\
			__ak_rcu_advance(___ak_rcu);			\
		___ak_err ? ___ak_err : ___ak_freed;			\
	})

#endif /* __ARENAKIT_RCULIST_H */
