/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/list_impl_all.h - the bodies of list.h's whole walks (the _all
 * calls and AK_LIST_DEFINE_EACH_ALL): chunks of the cursor walks of
 * list_impl.h, each a global function with a loop budget of its own, and
 * Brent's cycle search for a walk that goes on past the list's length.
 * Internal: include <arenakit/list.h>, which includes this header after
 * list_impl.h. Nothing here is API.
 */
#ifndef __ARENAKIT_LIST_H
#error "<arenakit/list_impl_all.h> is internal: include <arenakit/list.h>"
#elif !defined(__ARENAKIT_LIST_IMPL_ALL_H)
#define __ARENAKIT_LIST_IMPL_ALL_H

/*
 * The whole walks. Each chunk is a call of a global function, with a loop
 * budget of its own, that goes on from the cursor the last one left. What
 * bounds the walk instead of one budget: a walk of a sound list takes
 * ak_list_len() steps. One that has gone past that (checked between
 * chunks) is followed by a cycle search (Brent's: a mark left at each
 * power of two of steps, which the walk meets again only on a cycle), which
 * ends with -ELOOP after at most about twice the nodes before and on the
 * cycle; if there is no cycle (the list's length is wrong), the walk goes
 * on, up to AK_LIST_MAX_NODES steps. The chunks' own loop (one step per
 * chunk) is bounded by the caller's frame, whose end is -AK_EBUDGET as ever.
 */

/* Brent's cycle search over @list from its head, resumable in chunks. */
struct __ak_list_cycle {
	struct ak_list_node __arena *pos;	/* NULL: not started */
	struct ak_list_node __arena *mark;
	unsigned long long steps, next_mark;
};

__ak_global int __ak_list_cycle_chunk(__arg_arena struct ak_list __arena *list,
				      __ak_nonnull struct __ak_list_cycle *c)
{
	struct ak_list_node __arena *pos = c->pos;

	if (!pos) {
		pos = list->head.next;
		c->next_mark = 1;
	}
	for (;;) {
		ak_cond_break_label(cut);
		if (pos == &list->head)
			return 0;		/* the end: no cycle */
		if (!pos)
			return -EFAULT;
		if (pos == c->mark)
			return -ELOOP;
		if (++c->steps == c->next_mark) {
			c->mark = pos;
			c->next_mark <<= 1;
		}
		pos = pos->next;
	}
cut:
	c->pos = pos;
	return -AK_EBUDGET;
}

/* 0 if @list ends at its head, -ELOOP if it goes round a cycle, or an error. */
static inline int __ak_list_find_cycle(struct ak_list __arena *list)
{
	struct __ak_list_cycle c = {};

	return __ak_walk_all(__ak_list_cycle_chunk(list, &c), c.steps, AK_LIST_MAX_NODES);
}

__ak_global long long __ak_list_count_chunk(__arg_arena struct ak_list __arena *list,
					    __ak_nonnull struct ak_list_cursor *cursor)
{
	return ak_list_count(list, cursor);
}

__ak_global int __ak_list_find_chunk(__arg_arena struct ak_list __arena *list, long key_offset,
				     unsigned long long key,
				     __ak_nonnull struct ak_list_cursor *cursor,
				     __ak_nonnull unsigned long long *found)
{
	struct ak_list_node __arena *node = 0;
	int err = ak_list_find(list, key_offset, key, cursor, &node);

	*found = (unsigned long long)node;
	return err;
}

__ak_global int __ak_list_check_chunk(__arg_arena struct ak_list __arena *list,
				      __ak_nonnull struct ak_list_cursor *cursor,
				      __ak_nonnull unsigned long long *bad)
{
	struct ak_list_node __arena *node = 0;
	int err = ak_list_check(list, cursor, &node);

	*bad = (unsigned long long)node;
	return err;
}

/*
 * Call @chunk until it is not cut (@chunk is evaluated once a chunk: it is
 * the call that walks one; @cursor is the struct it advances). Past the
 * list's length, a cycle search decides: -ELOOP, or go on up to
 * AK_LIST_MAX_NODES steps.
 */
#define __ak_list_all(list, chunk, cursor)				\
	({								\
		struct ak_list __arena *___ak_all_list = (list);	\
		struct ak_list_cursor *___ak_all_cursor = &(cursor);	\
		long long ___ak_all = __ak_walk_all(chunk, ___ak_all_cursor->seen, \
						    ak_list_len(___ak_all_list) + 1); \
									\
		if (___ak_all == -ELOOP) {				\
			___ak_all = __ak_list_find_cycle(___ak_all_list); \
			if (!___ak_all)					\
				___ak_all = __ak_walk_all(chunk, ___ak_all_cursor->seen, \
							  AK_LIST_MAX_NODES); \
		}							\
		___ak_all;						\
	})

static inline long long ak_list_count_all(struct ak_list __arena *list)
{
	struct ak_list_cursor cursor = {};

	return __ak_list_all(list, __ak_list_count_chunk(list, &cursor), cursor);
}

static inline int ak_list_find_all(struct ak_list __arena *list, long key_offset,
				   unsigned long long key, struct ak_list_node __arena **found)
{
	struct ak_list_cursor cursor = {};
	unsigned long long node = 0;
	int err;

	err = __ak_list_all(list, __ak_list_find_chunk(list, key_offset, key, &cursor, &node),
			    cursor);
	*found = err ? 0 : (struct ak_list_node __arena *)node;
	return err;
}

static inline int ak_list_check_all(struct ak_list __arena *list,
				    struct ak_list_node __arena **bad)
{
	struct ak_list_cursor cursor = {};
	unsigned long long node = 0;
	int err;

	err = __ak_list_all(list, __ak_list_check_chunk(list, &cursor, &node), cursor);
	if (bad)
		*bad = (struct ak_list_node __arena *)node;
	return err;
}

/* AK_LIST_DEFINE_EACH_ALL: a chunk of the walk calling @fn, and the walk. */
#define __AK_LIST_DEFINE_EACH_ALL(name, type, member, fn)		\
__ak_global long long name##_chunk(__arg_arena struct ak_list __arena *list,	\
				   __ak_nonnull struct ak_list_cursor *cursor,	\
				   __arg_arena void __arena *ctx)		\
{									\
	type __arena *pos;						\
	long long ret = 0;						\
									\
	ak_list_for_each_entry_resume(pos, list, member, cursor) {	\
		ret = fn(pos, ctx);					\
		if (ret)						\
			break;						\
	}								\
	if (ret) {							\
		__ak_list_cursor_reset(cursor);				\
		return ret;						\
	}								\
	return ak_list_walk_save(pos, list, member, cursor);		\
}									\
									\
static inline long long name(struct ak_list __arena *list, void __arena *ctx) \
{									\
	struct ak_list_cursor cursor = {};				\
									\
	return __ak_list_all(list, name##_chunk(list, &cursor, ctx), cursor); \
}

#endif /* __ARENAKIT_LIST_IMPL_ALL_H */
