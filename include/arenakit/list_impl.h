/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/list_impl.h - the bodies of list.h's calls, in the order of the
 * calls:
 *  - the O(1) operations: init, add, delete, move, splice, first/next;
 *  - cursors and the grouped walks (ak_list_count, ak_list_find,
 *    ak_list_check), one budget check a group of AK_LIST_GROUP nodes;
 *  - the helpers of the iteration macros, and the bodies of
 *    ak_list_walk_done, ak_list_walk_status and ak_list_walk_save.
 * The whole walks, which call the grouped ones in chunks, are in
 * list_impl_all.h.
 * Internal: include <arenakit/list.h>, which declares and documents every
 * call and includes this header at its end. Nothing here is API.
 */
#ifndef __ARENAKIT_LIST_H
#error "<arenakit/list_impl.h> is internal: include <arenakit/list.h>"
#elif !defined(__ARENAKIT_LIST_IMPL_H)
#define __ARENAKIT_LIST_IMPL_H

/* The O(1) operations. */

#ifdef __BPF__
#define __ak_list_gen_seed() ((unsigned long long)bpf_get_prandom_u32() << 32)
#else
/* User space: where this file's counter lies (randomised) and its count. */
static unsigned long long __ak_list_inits __attribute__((unused));
#define __ak_list_gen_seed()						\
	(((unsigned long long)(unsigned long)&__ak_list_inits * 0x9e3779b97f4a7c15ULL + \
	  ++__ak_list_inits) << 32)
#endif

/*
 * The generation starts from a random value in its upper 32 bits: a list
 * whose memory went back to the kernel and came back zeroed would start
 * again from 0, where a cursor saved before the init could validate; with
 * the random start it does with a chance of 2^-32. To a live walk
 * (list_user.h) an init is an unlink, as it is of every node.
 */
static inline void ak_list_init(struct ak_list __arena *list)
{
	list->head.next = &list->head;
	list->head.prev = &list->head;
	list->len = 0;
	list->gen = (list->gen + 1) ^ __ak_list_gen_seed();
}

static inline int ak_list_empty(const struct ak_list __arena *list)
{
	return list->head.next == &list->head;
}

static inline unsigned long long ak_list_len(const struct ak_list __arena *list)
{
	return list->len;
}

static inline void __ak_list_insert(struct ak_list __arena *list,
				    struct ak_list_node __arena *node,
				    struct ak_list_node __arena *prev,
				    struct ak_list_node __arena *next)
{
	next->prev = node;
	node->next = next;
	node->prev = prev;
	prev->next = node;
	list->len++;
	list->gen++;
}

static inline void ak_list_add_head(struct ak_list __arena *list,
				    struct ak_list_node __arena *node)
{
	__ak_list_insert(list, node, &list->head, list->head.next);
}

static inline void ak_list_add_tail(struct ak_list __arena *list,
				    struct ak_list_node __arena *node)
{
	__ak_list_insert(list, node, list->head.prev, &list->head);
}

static inline void ak_list_add_after(struct ak_list __arena *list,
				     struct ak_list_node __arena *node,
				     struct ak_list_node __arena *where)
{
	__ak_list_insert(list, node, where, where->next);
}

static inline void ak_list_add_before(struct ak_list __arena *list,
				      struct ak_list_node __arena *node,
				      struct ak_list_node __arena *where)
{
	__ak_list_insert(list, node, where->prev, where);
}

/*
 * Unlink @node if its neighbours agree it is theirs (as the kernel's
 * CONFIG_DEBUG_LIST checks): a node deleted already has NULL links, and
 * writing through them would change whatever lies at the arena's first
 * bytes. -EINVAL, and nothing written, if not.
 */
static inline int __ak_list_unlink(struct ak_list __arena *list,
				   struct ak_list_node __arena *node)
{
	struct ak_list_node __arena *next = node->next, *prev = node->prev;

	if (!next || !prev || next->prev != node || prev->next != node || node == &list->head)
		return -EINVAL;
	/*
	 * Write through the neighbours themselves, not through copies. The
	 * forward link in one store: a lock-free reader (rculist.h) may be
	 * about to follow it.
	 */
	ak_write_once(prev->next, next);
	next->prev = prev;
	list->len--;
	list->gen += __AK_LIST_GEN_UNLINK;
	return 0;
}

static inline int ak_list_del(struct ak_list __arena *list, struct ak_list_node __arena *node)
{
	int err = __ak_list_unlink(list, node);

	if (err)
		return err;
	node->next = 0;
	ak_arena_store_barrier();
	node->prev = 0;
	return 0;
}

static inline int ak_list_move(struct ak_list __arena *from, struct ak_list_node __arena *node,
			       struct ak_list __arena *to)
{
	int err = __ak_list_unlink(from, node);

	if (!err)
		ak_list_add_head(to, node);
	return err;
}

static inline int ak_list_move_tail(struct ak_list __arena *from,
				    struct ak_list_node __arena *node,
				    struct ak_list __arena *to)
{
	int err = __ak_list_unlink(from, node);

	if (!err)
		ak_list_add_tail(to, node);
	return err;
}

static inline void ak_list_splice_init(struct ak_list __arena *from, struct ak_list __arena *to)
{
	struct ak_list_node __arena *first = from->head.next, *last = from->head.prev;

	if (first == &from->head)
		return;
	last->next = to->head.next;
	to->head.next->prev = last;
	to->head.next = first;
	first->prev = &to->head;
	to->len += from->len;
	to->gen++;
	ak_list_init(from);
}

static inline struct ak_list_node __arena *ak_list_first(struct ak_list __arena *list)
{
	return list->head.next == &list->head ? 0 : list->head.next;
}

static inline struct ak_list_node __arena *ak_list_last(struct ak_list __arena *list)
{
	return list->head.prev == &list->head ? 0 : list->head.prev;
}

static inline struct ak_list_node __arena *ak_list_next(struct ak_list __arena *list,
							struct ak_list_node __arena *node)
{
	return node->next == &list->head ? 0 : node->next;
}

/* Cursors and the grouped walks. */

/*
 * Where a walk of @list starts: @cursor's node, or @first when the cursor
 * is fresh. A cursor saved for another list or an older generation is
 * reset; the result is then NULL and *@stale is set.
 */
static inline struct ak_list_node __arena *
__ak_list_resume_from(struct ak_list __arena *list, struct ak_list_cursor *cursor,
		      struct ak_list_node __arena *first, int *stale)
{
	*stale = 0;
	if (!cursor->pos)
		return first;
	if (cursor->list == list && cursor->gen == list->gen)
		return cursor->pos;
	*stale = 1;
	return 0;
}

static inline void __ak_list_cursor_reset(struct ak_list_cursor *cursor)
{
	cursor->pos = 0;
	cursor->list = 0;
	cursor->gen = 0;
	cursor->seen = 0;
}

static inline void __ak_list_cursor_save(struct ak_list_cursor *cursor,
					 struct ak_list __arena *list,
					 struct ak_list_node __arena *pos, unsigned long long seen)
{
	cursor->pos = pos;
	cursor->list = list;
	cursor->gen = list->gen;
	cursor->seen = seen;
}

/* End a walk: keep the position of a cut one, reset the cursor otherwise. */
static inline long long __ak_list_walk_end(struct ak_list_cursor *cursor,
					   struct ak_list __arena *list,
					   struct ak_list_node __arena *pos,
					   unsigned long long seen, long long status)
{
	if (status == -AK_EBUDGET)
		__ak_list_cursor_save(cursor, list, pos, seen);
	else
		__ak_list_cursor_reset(cursor);
	return status;
}

/*
 * The walks check the loop budget once per group of AK_LIST_GROUP nodes,
 * not at every node: a check is a may_goto, several instructions (a stack
 * load, two tests, a subtract, a store), against four for the step itself
 * (a cast, the load of the next link, the head and NULL tests). A group's
 * first node is tested for the head and NULL before the check and the rest
 * after it, so a cut can only fall at a group's start, on a node not yet
 * visited: a cut walk is as exact as one checked at every node, and its
 * cursor resumes there.
 */
#ifndef AK_LIST_GROUP
#define AK_LIST_GROUP 8
#endif
_Static_assert(AK_LIST_GROUP >= 1 && AK_LIST_GROUP <= 16,
	       "AK_LIST_GROUP: 1 to 16 nodes a budget check");

static inline long long ak_list_count(struct ak_list __arena *list, struct ak_list_cursor *cursor)
{
	struct ak_list_cursor start = {};
	struct ak_list_node __arena *pos, *group;
	unsigned long long seen;
	int stale, i;

	if (!cursor)
		cursor = &start;
	pos = __ak_list_resume_from(list, cursor, list->head.next, &stale);
	if (stale)
		goto stale;
	seen = cursor->seen + ak_opaque_zero();
	for (;;) {
		if (pos == &list->head)
			goto done;
		if (!pos)
			goto fault;
		ak_cond_break_label(cut);
		group = pos;
		pos = pos->next;
		__ak_unroll
		for (i = 1; i < AK_LIST_GROUP; i++) {
			if (pos == &list->head)
				goto ended_in_group;
			if (!pos)
				goto fault;
			pos = pos->next;
		}
		seen += AK_LIST_GROUP;
	}
ended_in_group:
	/*
	 * Count the last group's nodes again, once, rather than keep a count
	 * at every node on the way: its links were just followed, and the
	 * loop is bounded by the group's size.
	 */
	for (i = 0; i < AK_LIST_GROUP && group != &list->head; i++) {
		seen++;
		group = group->next;
	}
done:
	__ak_list_cursor_reset(cursor);
	return seen;
cut:
	return __ak_list_walk_end(cursor, list, pos, seen, -AK_EBUDGET);
stale:
	return __ak_list_walk_end(cursor, list, pos, 0, -AK_ESTALE);
fault:
	return __ak_list_walk_end(cursor, list, pos, 0, -EFAULT);
}

/* The 64-bit key @key_offset bytes from @node (ak_list_key_offset()). */
#define __ak_list_key(node, key_offset)					\
	(*(unsigned long long __arena *)((char __arena *)(node) + (key_offset)))

static __ak_always_inline int ak_list_find(struct ak_list __arena *list, long key_offset,
					   unsigned long long key, struct ak_list_cursor *cursor,
					   struct ak_list_node __arena **found)
{
	struct ak_list_cursor start = {};
	struct ak_list_node __arena *pos;
	unsigned long long seen;
	int stale, i;

	if (!cursor)
		cursor = &start;
	*(struct ak_list_node __arena *volatile *)found = 0;
	pos = __ak_list_resume_from(list, cursor, list->head.next, &stale);
	if (stale)
		goto stale;
	seen = cursor->seen + ak_opaque_zero();
	for (;;) {
		if (pos == &list->head)
			goto done;
		if (!pos)
			goto fault;
		ak_cond_break_label(cut);
		if (__ak_list_key(pos, key_offset) == key)
			goto hit;
		pos = pos->next;
		__ak_unroll
		for (i = 1; i < AK_LIST_GROUP; i++) {
			if (pos == &list->head)
				goto done;
			if (!pos)
				goto fault;
			if (__ak_list_key(pos, key_offset) == key)
				goto hit;
			pos = pos->next;
		}
		seen += AK_LIST_GROUP;
	}
hit:
	/*
	 * Volatile, so that the answer stays a store: as a value, it (and what
	 * a caller makes of it) would become one per way out of the loop, set
	 * before every test there.
	 */
	*(struct ak_list_node __arena *volatile *)found = pos;
done:
	__ak_list_cursor_reset(cursor);
	return 0;
cut:
	return __ak_list_walk_end(cursor, list, pos, seen, -AK_EBUDGET);
stale:
	return __ak_list_walk_end(cursor, list, pos, 0, -AK_ESTALE);
fault:
	return __ak_list_walk_end(cursor, list, pos, 0, -EFAULT);
}

/*
 * @pos->next is @next, but @next->prev is not @pos: which link is wrong?
 * If @next's prev links forward to @next, @next is where it belongs and
 * @pos's next is wrong (a cycle, a stray link); if @next's own next links
 * back to it, @next is a node whose prev is wrong; otherwise @next is no
 * node at all (garbage), and @pos holds the bad link.
 */
static inline struct ak_list_node __arena *__ak_list_culprit(struct ak_list_node __arena *pos,
							     struct ak_list_node __arena *next)
{
	struct ak_list_node __arena *prev = next->prev, *after = next->next;

	if (prev && prev->next == next)
		return pos;
	if (after && after->prev == next)
		return next;
	return pos;
}

static inline int ak_list_check(struct ak_list __arena *list, struct ak_list_cursor *cursor,
				struct ak_list_node __arena **bad)
{
	struct ak_list_cursor start = {};
	struct ak_list_node __arena *pos, *next, *group;
	unsigned long long seen;
	int stale, i;

	if (!cursor)
		cursor = &start;
	pos = __ak_list_resume_from(list, cursor, &list->head, &stale);
	if (stale)
		goto stale;
	seen = cursor->seen + ak_opaque_zero();
	for (;;) {
		ak_cond_break_label(cut);
		group = pos;
		__ak_unroll
		for (i = 0; i < AK_LIST_GROUP; i++) {
			next = pos->next;
			/*
			 * Each way out names its node itself, stored volatile:
			 * a value shared by the ways out would be set before
			 * every test of the loop.
			 */
			if (!next || !next->prev) {
				/* A link to no node (NULL, or memory that reads as 0). */
				if (bad)
					*(struct ak_list_node __arena *volatile *)bad = pos;
				goto fault;
			}
			if (next->prev != pos) {
				if (bad)
					*(struct ak_list_node __arena *volatile *)bad =
						__ak_list_culprit(pos, next);
				__ak_list_cursor_reset(cursor);
				return -EINVAL;
			}
			if (next == &list->head)
				goto ended_in_group;
			pos = next;
		}
		seen += AK_LIST_GROUP;
	}
ended_in_group:
	/* The last group's nodes, counted again once (see ak_list_count). */
	for (i = 0; i < AK_LIST_GROUP && group->next != &list->head; i++) {
		seen++;
		group = group->next;
	}
	__ak_list_cursor_reset(cursor);
	if (seen != list->len) {
		if (bad)
			*bad = &list->head;
		return -EINVAL;
	}
	return 0;
cut:
	return __ak_list_walk_end(cursor, list, pos, seen, -AK_EBUDGET);
stale:
	return __ak_list_walk_end(cursor, list, pos, 0, -AK_ESTALE);
fault:
	return __ak_list_walk_end(cursor, list, pos, 0, -EFAULT);
}

/* The helpers of the iteration macros, and the bodies of ak_list_walk_*. */

/*
 * A NULL link becomes a NULL entry, so the loops can stop on it. The link
 * is read once: a test and a computation of their own could see two
 * values of a link a writer changes meanwhile (rculist.h's readers).
 */
#define __ak_list_entry_or_null(node, pos, member)			\
	({								\
		struct ak_list_node __arena *___ak_node = (node);	\
									\
		___ak_node ? (typeof(pos))((char __arena *)___ak_node -	\
			__builtin_offsetof(typeof(*(pos)), member)) : 0;	\
	})

/*
 * @list, evaluated once, as ___ak_list for the loop that follows: the
 * loops around it run once, and a break in the body leaves them all.
 */
#define __ak_list_bind(list)						\
	for (int ___ak_bind = 1; ___ak_bind; ___ak_bind = 0)		\
		for (typeof(&*(list)) ___ak_list = (list); ___ak_bind; ___ak_bind = 0)

/* The first entry of a resumed walk; a stale cursor gives NULL and a mark. */
#define __ak_list_resume_entry(list, cursor, pos, member)		\
	({								\
		typeof(&*(list)) ___ak_from_list = (list);		\
		typeof(&*(cursor)) ___ak_from_cursor = (cursor);	\
		int ___ak_stale;					\
		struct ak_list_node __arena *___ak_from =		\
			__ak_list_resume_from(___ak_from_list, ___ak_from_cursor, \
					      ___ak_from_list->head.next, &___ak_stale); \
									\
		if (___ak_stale) {					\
			__ak_list_cursor_reset(___ak_from_cursor);	\
			___ak_from_cursor->seen = ~0ULL; /* read by ak_list_walk_save */ \
		}							\
		__ak_list_entry_or_null(___ak_from, pos, member);	\
	})

/*
 * The outer loops of the _resume walks: they bind @list (as ___ak_list)
 * and @cursor, start the walk, run the inner loop once, and then (however
 * the inner loop ended, break included) store the count of entries passed
 * in @cursor. The count lives in a local meanwhile: one write to the
 * cursor per walk, not one per entry.
 */
#define __ak_list_counting(pos, list, member, cursor)			\
	__ak_list_bind(list)						\
	for (typeof(&*(cursor)) ___ak_cursor = (cursor); ___ak_bind; ___ak_bind = 0) \
	for (unsigned long long ___ak_seen =				\
		((pos = __ak_list_resume_entry(___ak_list, ___ak_cursor, pos, member)), \
		 ___ak_cursor->seen);					\
	     ___ak_bind; ___ak_bind = 0, ___ak_cursor->seen = ___ak_seen)

#define __ak_list_walk_done(pos, list, member)				\
	({								\
		typeof(pos) ___ak_done_pos = (pos);			\
		typeof(&*(list)) ___ak_done_list = (list);		\
									\
		___ak_done_pos && &___ak_done_pos->member == &___ak_done_list->head; \
	})

#define __ak_list_walk_status(pos, list, member)			\
	({								\
		typeof(pos) ___ak_status_pos = (pos);			\
		typeof(&*(list)) ___ak_status_list = (list);		\
									\
		!___ak_status_pos ? -EFAULT :				\
		__ak_list_walk_done(___ak_status_pos, ___ak_status_list, member) ? 0 : -AK_EBUDGET; \
	})

#define __ak_list_walk_save(pos, list, member, cursor)			\
	({								\
		typeof(pos) ___ak_save_pos = (pos);			\
		typeof(&*(list)) ___ak_save_list = (list);		\
		typeof(&*(cursor)) ___ak_save_cursor = (cursor);	\
		int ___ak_save_status;					\
									\
		if (!___ak_save_pos && ___ak_save_cursor->seen == ~0ULL) \
			___ak_save_status = -AK_ESTALE;			\
		else							\
			___ak_save_status = __ak_list_walk_status(___ak_save_pos, \
								  ___ak_save_list, member); \
		if (___ak_save_status == -AK_EBUDGET)			\
			__ak_list_cursor_save(___ak_save_cursor, ___ak_save_list, \
					      &___ak_save_pos->member,	\
					      ___ak_save_cursor->seen);	\
		else							\
			__ak_list_cursor_reset(___ak_save_cursor);	\
		___ak_save_status;					\
	})

#endif /* __ARENAKIT_LIST_IMPL_H */
