/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/rculist_impl.h - the bodies of rculist.h's calls, in the order
 * of the calls: the read sections, the _rcu edits, and the reclaim.
 * Internal: include <arenakit/rculist.h>, which declares and documents
 * every call and includes this header at its end. Nothing here is API.
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
 * under the parity not current: that only delays a free.
 *
 * Memory order: the reader's count is a fetching atomic add, fully ordered,
 * before its first load of a link and after its last; the reclaim reads the
 * count with a compare-and-swap, after every unlink it covers; a node is
 * linked with an atomic exchange after its own links are stored. So the
 * lists do not lean on x86's ordering (only x86-64 is tested here).
 */
#ifndef __ARENAKIT_RCULIST_H
#error "<arenakit/rculist_impl.h> is internal: include <arenakit/rculist.h>"
#elif !defined(__ARENAKIT_RCULIST_IMPL_H)
#define __ARENAKIT_RCULIST_IMPL_H

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

static __ak_always_inline unsigned int ak_rcu_read_begin(struct ak_rcu __arena *rcu)
{
	unsigned int side = ak_read_once(rcu->epoch) & 1;
	unsigned long long before = ak_fetch_add(&rcu->readers[side], 1);

	__ak_rcu_keep_fetch(before);
	return side;
}

static __ak_always_inline void ak_rcu_read_end(struct ak_rcu __arena *rcu, unsigned int token)
{
	unsigned long long before = ak_fetch_add(&rcu->readers[token & 1], -1ULL);

	__ak_rcu_keep_fetch(before);
}

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

static inline void ak_list_add_head_rcu(struct ak_list __arena *list,
					struct ak_list_node __arena *node)
{
	__ak_list_insert_rcu(list, node, &list->head, list->head.next);
}

static inline void ak_list_add_tail_rcu(struct ak_list __arena *list,
					struct ak_list_node __arena *node)
{
	__ak_list_insert_rcu(list, node, list->head.prev, &list->head);
}

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

/* ak_rcu_reclaim (rculist.h). */
#define __ak_rcu_reclaim(rcu, type, member)				\
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

#endif /* __ARENAKIT_RCULIST_IMPL_H */
