/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/pq.h - a priority queue in a BPF arena, on the ordered map
 * (omap.h): push, peek and pop the smallest priority, first in first out
 * among equal ones (a scheduler's run queue, timers by deadline), and
 * delete or re-prioritise an element by the handle its push returned.
 *
 * An element's key in the map is its handle: the priority, then the
 * push's number from the map's counter, so equal priorities leave in the
 * order they came. The costs and the concurrency are the map's: one
 * descent under its lock per call; a pop is one descent, so two CPUs
 * never pop the same element.
 */
#ifndef __ARENAKIT_PQ_H
#define __ARENAKIT_PQ_H

#include <arenakit/omap.h>
#include <arenakit/pq_types.h>

/**
 * ak_pq_init - make @q an empty queue of @value_size-byte values (sleepable)
 * @q: the queue, zeroed or destroyed
 * @value_size: bytes per value, 1 to AK_OMAP_MAX_VALUE
 *
 * Return: as ak_omap_init.
 */
static inline int ak_pq_init(struct ak_pq __arena *q, unsigned int value_size)
{
	return ak_omap_init(&q->map, sizeof(struct ak_pq_handle), value_size);
}

/**
 * ak_pq_destroy - free every element of @q (sleepable)
 * @q: the queue
 *
 * Return: as ak_omap_destroy.
 */
static inline int ak_pq_destroy(struct ak_pq __arena *q)
{
	return ak_omap_destroy(&q->map);
}

/* A push, @kind sleepable or nosleep: the handle taken from the map's counter. */
#define __ak_pq_push(q, priority, value, handle, kind)			\
	({								\
		struct ak_pq __arena *___ak_q = (q);			\
		struct ak_pq_handle *___ak_ph = (handle);		\
		struct ak_pq_handle ___ak_h = {				\
			.prio = (priority),				\
			.seq = ak_fetch_add(&___ak_q->map.seq, 1),	\
		};							\
		int ___ak_perr = __ak_omap_update(&___ak_q->map, &___ak_h, value, \
						  AK_OMAP_NOEXIST, kind); \
									\
		if (!___ak_perr && ___ak_ph)				\
			*___ak_ph = ___ak_h;				\
		___ak_perr;						\
	})

/**
 * ak_pq_push - add *@value at priority @priority (sleepable programs)
 * @q: the queue
 * @priority: its priority (unsigned: the smallest comes out first)
 * @value: a pointer to the value (its type's size is the queue's)
 * @handle: where the element's handle is stored (struct ak_pq_handle *), or NULL
 *
 * Return: 0; as ak_omap_update otherwise.
 */
#define ak_pq_push(q, priority, value, handle) __ak_pq_push(q, priority, value, handle, sleepable)

/**
 * ak_pq_push_nosleep - ak_pq_push from any program type
 * @q: the queue
 * @priority: its priority
 * @value: a pointer to the value
 * @handle: where the handle is stored, or NULL
 *
 * The element comes from ak_alloc_reserve's pool.
 *
 * Return: 0; as ak_omap_update_nosleep otherwise.
 */
#define ak_pq_push_nosleep(q, priority, value, handle)			\
	__ak_pq_push(q, priority, value, handle, nosleep)

/**
 * ak_pq_peek - the element that would come out next, left in
 * @q: the queue
 * @handle: where its handle is copied (struct ak_pq_handle *)
 * @err: on NULL, set to -ENOENT (empty), -EBUSY or -AK_EBUDGET (may be NULL)
 *
 * Return: the address of its value (valid until it leaves), or NULL.
 */
#define ak_pq_peek(q, handle, err) ak_omap_first(&(q)->map, (struct ak_pq_handle *)(handle), err)

/**
 * ak_pq_pop - take out the element of the smallest priority, the first
 * pushed among equals
 * @q: the queue
 * @handle: where its handle is copied (struct ak_pq_handle *), or NULL
 * @value: where its value is copied (a pointer to the value type)
 *
 * Return: 0; -ENOENT if @q is empty; -EBUSY; -AK_EBUDGET.
 */
#define ak_pq_pop(q, handle, value)					\
	({								\
		struct ak_pq_handle ___ak_poph, *___ak_popo = (handle);	\
		int ___ak_poperr = ak_omap_pop_first(&(q)->map, &___ak_poph, value); \
									\
		if (!___ak_poperr && ___ak_popo)			\
			*___ak_popo = ___ak_poph;			\
		___ak_poperr;						\
	})

/**
 * ak_pq_delete - take the element of *@handle out, copying its value
 * @q: the queue
 * @handle: its handle (const struct ak_pq_handle *)
 * @value: where its value is copied (a pointer to the value type), or NULL
 *
 * Return: 0; -ENOENT if it left already; -EBUSY; -AK_EBUDGET.
 */
#define ak_pq_delete(q, handle, value)					\
	__ak_omap_take(&(q)->map, (const struct ak_pq_handle *)(handle), 0, NULL, value)

/* A priority's change, @kind sleepable or nosleep: the handle keeps its push's number. */
#define __ak_pq_set_prio(q, handle, priority, kind)			\
	({								\
		struct ak_pq __arena *___ak_sq = (q);			\
		struct ak_pq_handle *___ak_sh = (handle);		\
		struct ak_pq_handle ___ak_snew = { .prio = (priority), .seq = ___ak_sh->seq }; \
		int ___ak_serr = __ak_omap_rekey(&___ak_sq->map, ___ak_sh, &___ak_snew, kind); \
									\
		if (!___ak_serr)					\
			*___ak_sh = ___ak_snew;				\
		___ak_serr;						\
	})

/**
 * ak_pq_set_prio - move the element of *@handle to priority @priority
 * (sleepable programs)
 * @q: the queue
 * @handle: its handle (struct ak_pq_handle *): updated to the new one
 * @priority: the new priority (smaller: a decrease-key)
 *
 * The element keeps its push's number, so among its new equals it stands
 * where its first push put it. One call under the queue's lock
 * (ak_omap_rekey): a CPU popping meanwhile sees the element at its old
 * priority or at its new one, never neither, and its value stays at its
 * address. A handle names the element by its key, and a move changes the
 * key: a copy of the handle taken before a move (another CPU's, or one
 * kept in the arena and read before the mover updated it) names nothing
 * after it, and a move through it is -ENOENT though the element is still
 * queued. CPUs that move one element through a shared handle serialise
 * their moves (a lock around the call and the handle's update).
 *
 * Return: 0; -ENOENT if it left already, or moved since @handle was
 * copied; as ak_omap_rekey otherwise.
 */
#define ak_pq_set_prio(q, handle, priority) __ak_pq_set_prio(q, handle, priority, sleepable)

/**
 * ak_pq_set_prio_nosleep - ak_pq_set_prio from any program type
 * @q: the queue
 * @handle: its handle, updated
 * @priority: the new priority
 *
 * Return: as ak_pq_set_prio; -ENOMEM when ak_alloc_reserve's pool is empty.
 */
#define ak_pq_set_prio_nosleep(q, handle, priority)			\
	__ak_pq_set_prio(q, handle, priority, nosleep)

/**
 * ak_pq_count - the elements in @q
 * @q: the queue
 *
 * Return: the count (a moment's).
 */
static inline unsigned long long ak_pq_count(const struct ak_pq __arena *q)
{
	return ak_omap_count(&q->map);
}

#endif /* __ARENAKIT_PQ_H */
