/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/list.h - a doubly linked list in the arena, shaped like the
 * kernel's include/linux/list.h: circular, with a head node, so add, delete,
 * move and splice are O(1) and never loop.
 *
 * A list is a struct ak_list: the head node, the number of nodes (so
 * ak_list_len is O(1)) and a generation that every change bumps. Every
 * function that changes a list takes the list, so the generation cannot be
 * forgotten. A cursor records the generation of the list it was saved for:
 * a walk resumed after the list changed returns -AK_ESTALE (and resets the
 * cursor) instead of a wrong answer or an endless walk. The price is one
 * extra argument to the edits and 16 bytes per list; the kernel's API
 * cannot tell a cursor it went stale, which this one can.
 *
 * Argument order: the list first, then the node, ak_list_add_head(list,
 * node) where the kernel has list_add(new, head). On purpose: every call
 * that changes a list needs the list (its length and generation), and
 * every arenakit call takes the structure it works on first, as
 * ak_htab_update(h, ...) and ak_lock_acquire(lock) do. Mind the order
 * when porting code written for include/linux/list.h.
 *
 * Walks keep the budget contract of loop.h. They resume from a cursor:
 *   ak_list_count, ak_list_find, ak_list_check, and the macros
 *   ak_list_for_each_entry_resume (read-only) and
 *   ak_list_for_each_entry_resume_safe (may delete and free the entry it
 *   is on), each closed by ak_list_walk_save().
 * The plain ak_list_for_each_entry[_safe] macros only report, with
 * ak_list_walk_status(). A NULL link met during a walk (a deleted node still
 * linked, or a fault in the arena, which reads as 0) is -EFAULT, and the
 * cursor is reset.
 * User space only: ak_list_next_copy, the loader's walk through the mmap
 * while BPF programs write the list, one entry copied per call under the
 * writers' lock.
 *
 * Nothing here locks: guard a list shared by CPUs with an ak_lock.
 */
#ifndef __ARENAKIT_LIST_H
#define __ARENAKIT_LIST_H

#include <arenakit/arena.h>

struct ak_list_node {
	struct ak_list_node __arena *next;
	struct ak_list_node __arena *prev;
};

struct ak_list {
	struct ak_list_node head;
	unsigned long long len;		/* nodes on the list */
	unsigned long long gen;		/* bumped by every change */
};

/* Where a cut walk stopped; zero it before the first walk. */
struct ak_list_cursor {
	struct ak_list_node __arena *pos;	/* next node to visit; NULL: start */
	struct ak_list __arena *list;		/* the list it is a position in */
	unsigned long long gen;			/* that list's gen when saved */
	unsigned long long seen;		/* nodes visited before pos */
};

#ifdef __BPF__
#define __ak_list_gen_seed() ((unsigned long long)bpf_get_prandom_u32() << 32)
#else
/* User space: where this file's counter lies (randomised) and its count. */
static unsigned long long __ak_list_inits __attribute__((unused));
#define __ak_list_gen_seed()						\
	(((unsigned long long)(unsigned long)&__ak_list_inits * 0x9e3779b97f4a7c15ULL + \
	  ++__ak_list_inits) << 32)
#endif

/**
 * ak_list_init - make @list an empty list
 * @list: the list
 *
 * A cursor saved before the init must never resume on the new list, even
 * when the list's memory went back to the kernel and came back zeroed (its
 * generation would start again from 0): the generation starts from a random
 * value in its upper 32 bits, so an old cursor validates against the new
 * list with a chance of 2^-32.
 */
static inline void ak_list_init(struct ak_list __arena *list)
{
	list->head.next = &list->head;
	list->head.prev = &list->head;
	list->len = 0;
	list->gen = (list->gen + 1) ^ __ak_list_gen_seed();
}

/**
 * ak_list_empty - does @list hold no node?
 * @list: the list
 *
 * Return: 1 if @list is empty, 0 if not.
 */
static inline int ak_list_empty(const struct ak_list __arena *list)
{
	return list->head.next == &list->head;
}

/**
 * ak_list_len - the number of nodes on @list, in O(1)
 * @list: the list
 *
 * Return: the count the list keeps (ak_list_count walks to prove it).
 */
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

/**
 * ak_list_add_head - insert @node first in @list
 * @list: the list
 * @node: the node to insert (not on any list)
 *
 * The kernel's list_add(new, head), with the list first (see the top of
 * this file).
 */
static inline void ak_list_add_head(struct ak_list __arena *list,
				    struct ak_list_node __arena *node)
{
	__ak_list_insert(list, node, &list->head, list->head.next);
}

/**
 * ak_list_add_tail - insert @node last in @list
 * @list: the list
 * @node: the node to insert (not on any list)
 *
 * The kernel's list_add_tail(new, head), with the list first.
 */
static inline void ak_list_add_tail(struct ak_list __arena *list,
				    struct ak_list_node __arena *node)
{
	__ak_list_insert(list, node, list->head.prev, &list->head);
}

/**
 * ak_list_add_after - insert @node right after @where
 * @list: the list @where is on
 * @node: the node to insert (not on any list)
 * @where: a node on @list
 *
 * The kernel's list_add(new, prev), with the list first.
 */
static inline void ak_list_add_after(struct ak_list __arena *list,
				     struct ak_list_node __arena *node,
				     struct ak_list_node __arena *where)
{
	__ak_list_insert(list, node, where, where->next);
}

/**
 * ak_list_add_before - insert @node right before @where
 * @list: the list @where is on
 * @node: the node to insert (not on any list)
 * @where: a node on @list
 *
 * The kernel's list_add_tail(new, next), with the list first.
 */
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
	list->gen++;
	return 0;
}

/**
 * ak_list_del - take @node off @list
 * @list: the list @node is on
 * @node: the node
 *
 * Its links are cleared, so a walk that meets it later fails with -EFAULT
 * instead of wandering into the list it left, and a second delete is
 * refused.
 * Return: 0; -EINVAL if @node is not on a list (deleted already, never
 * added) or its neighbours do not link back to it: nothing is written.
 */
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

/**
 * ak_list_move - move @node from @from to the front of @to
 * @from: the list @node is on
 * @node: the node
 * @to: the list to put it on (may be @from)
 *
 * Return: 0; -EINVAL as ak_list_del (nothing moved).
 */
static inline int ak_list_move(struct ak_list __arena *from, struct ak_list_node __arena *node,
			       struct ak_list __arena *to)
{
	int err = __ak_list_unlink(from, node);

	if (!err)
		ak_list_add_head(to, node);
	return err;
}

/**
 * ak_list_move_tail - move @node from @from to the end of @to
 * @from: the list @node is on
 * @node: the node
 * @to: the list to put it on (may be @from)
 *
 * Return: 0; -EINVAL as ak_list_del (nothing moved).
 */
static inline int ak_list_move_tail(struct ak_list __arena *from,
				    struct ak_list_node __arena *node,
				    struct ak_list __arena *to)
{
	int err = __ak_list_unlink(from, node);

	if (!err)
		ak_list_add_tail(to, node);
	return err;
}

/**
 * ak_list_splice_init - move every node of @from to the front of @to
 * @from: the list to empty; it is left empty
 * @to: the list that receives the nodes, in their order
 *
 * O(1) however long @from is: no walk, so no budget to run out.
 */
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

/**
 * ak_list_first - the first node of @list, or NULL if it is empty
 * @list: the list
 *
 * Return: the node, or NULL.
 */
static inline struct ak_list_node __arena *ak_list_first(struct ak_list __arena *list)
{
	return list->head.next == &list->head ? 0 : list->head.next;
}

/**
 * ak_list_last - the last node of @list, or NULL if it is empty
 * @list: the list
 *
 * Return: the node, or NULL.
 */
static inline struct ak_list_node __arena *ak_list_last(struct ak_list __arena *list)
{
	return list->head.prev == &list->head ? 0 : list->head.prev;
}

/**
 * ak_list_next - the node after @node on @list, or NULL after the last
 * @list: the list
 * @node: a node on @list
 *
 * Return: the node, or NULL.
 */
static inline struct ak_list_node __arena *ak_list_next(struct ak_list __arena *list,
							struct ak_list_node __arena *node)
{
	return node->next == &list->head ? 0 : node->next;
}

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
 * cursor resumes there. Verified with groups of 4, 8 and 16.
 */
#ifndef AK_LIST_GROUP
#define AK_LIST_GROUP 8
#endif
_Static_assert(AK_LIST_GROUP >= 1 && AK_LIST_GROUP <= 16,
	       "AK_LIST_GROUP: 1 to 16 nodes a budget check");

/**
 * ak_list_count - count the nodes of @list by walking it
 * @list: the list
 * @cursor: where a cut walk resumes (NULL: no resuming)
 *
 * ak_list_len is O(1); this walk is for proving the links agree with it.
 *
 * Return: the number of nodes; -AK_EBUDGET if the loop budget ran out
 * (@cursor, if given, says where to go on); -AK_ESTALE if @list changed
 * since @cursor was saved; -EFAULT on a NULL link. Both reset @cursor.
 */
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

/* The byte offset of an entry's 64-bit @key from its list node @member. */
#define ak_list_key_offset(type, member, key)				\
	((long)__builtin_offsetof(type, key) - (long)__builtin_offsetof(type, member))

#define __ak_list_key(node, key_offset)					\
	(*(unsigned long long __arena *)((char __arena *)(node) + (key_offset)))

/**
 * ak_list_find - find the first node whose 64-bit key equals @key
 * @list: the list
 * @key_offset: where the key lies from each node (ak_list_key_offset())
 * @key: the value sought
 * @cursor: where a cut walk resumes (NULL: no resuming)
 * @found: set to the node, or to NULL when no node has the key
 *
 * Return: 0 (see *@found); -AK_EBUDGET if the loop budget ran out;
 * -AK_ESTALE if @list changed since @cursor was saved; -EFAULT on a NULL
 * link.
 */
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

/**
 * ak_list_check - verify every link of @list, and its length
 * @list: the list
 * @cursor: where a cut walk resumes (NULL: no resuming)
 * @bad: set to the first node whose links disagree (may be NULL): the node
 *	holding a link to something that is not a node, or whose next leads
 *	to a node linked in elsewhere; a node whose own prev is wrong
 *
 * Each node's next must point back at it through prev, and the nodes must
 * number ak_list_len(@list).
 * Return: 0 if the list is sound; -EINVAL with *@bad set if not (the head
 * node when only the length is wrong); -EFAULT on a link to no node (NULL,
 * or memory that reads as 0, as a freed arena page does; *@bad: the node
 * holding the link); -AK_EBUDGET if cut; -AK_ESTALE as ak_list_count.
 */
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

/**
 * ak_list_entry - the structure that embeds @node
 * @node: a list node
 * @type: the type of the structure
 * @member: the name of the node in @type
 */
#define ak_list_entry(node, type, member) ak_container_of(node, type, member)

/* A NULL link becomes a NULL entry, so the loops can stop on it. */
#define __ak_list_entry_or_null(node, pos, member)			\
	((node) ? (typeof(pos))((char __arena *)(node) -			\
				__builtin_offsetof(typeof(*(pos)), member)) : 0)

/**
 * ak_list_for_each_entry - iterate over the entries of @list
 * @pos: a pointer to the entry type, the loop cursor
 * @list: the list
 * @member: the name of the struct ak_list_node in the entry
 *
 * Bounded by may_goto. When the loop ends without a break,
 * ak_list_walk_status(pos, list, member) says whether it reached the end
 * (0), was cut (-AK_EBUDGET) or met a NULL link (-EFAULT).
 */
#define ak_list_for_each_entry(pos, list, member)			\
	for (pos = __ak_list_entry_or_null((list)->head.next, pos, member); \
	     (pos) && &(pos)->member != &(list)->head && ak_can_loop;	\
	     pos = __ak_list_entry_or_null((pos)->member.next, pos, member))

/**
 * ak_list_for_each_entry_safe - iterate, allowing @pos to be deleted
 * @pos: a pointer to the entry type, the loop cursor
 * @tmp: another such pointer, the next entry
 * @list: the list
 * @member: the name of the struct ak_list_node in the entry
 *
 * As ak_list_for_each_entry, for walks that delete the current entry.
 */
#define ak_list_for_each_entry_safe(pos, tmp, list, member)		\
	for (pos = __ak_list_entry_or_null((list)->head.next, pos, member); \
	     (pos) && &(pos)->member != &(list)->head && ak_can_loop &&	\
	     ((tmp = __ak_list_entry_or_null((pos)->member.next, pos, member)), 1); \
	     pos = tmp)

/* The first entry of a resumed walk; a stale cursor gives NULL and a mark. */
#define __ak_list_resume_entry(list, cursor, pos, member)		\
	({								\
		int ___stale;						\
		struct ak_list_node __arena *___from =			\
			__ak_list_resume_from(list, cursor, (list)->head.next, &___stale); \
									\
		if (___stale) {						\
			__ak_list_cursor_reset(cursor);			\
			(cursor)->seen = ~0ULL;	/* read by ak_list_walk_save */ \
		}							\
		__ak_list_entry_or_null(___from, pos, member);		\
	})

/*
 * The outer loop of the _resume walks: it starts the walk, runs the inner
 * loop once, and then (however the inner loop ended, break included)
 * stores the count of entries passed in @cursor. The count lives in a
 * local meanwhile: one write to the cursor per walk, not one per entry.
 */
#define __ak_list_counting(pos, list, member, cursor)			\
	for (unsigned long long ___ak_seen =				\
		((pos = __ak_list_resume_entry(list, cursor, pos, member)), (cursor)->seen), \
		___ak_once = 1;						\
	     ___ak_once; ___ak_once = 0, (cursor)->seen = ___ak_seen)

/**
 * ak_list_for_each_entry_resume - iterate from where a cut walk stopped
 * @pos: a pointer to the entry type, the loop cursor
 * @list: the list
 * @member: the name of the struct ak_list_node in the entry
 * @cursor: a struct ak_list_cursor *, zeroed before the first walk
 *
 * Starts at @cursor's node (or the first); ->seen counts the entries
 * passed. Close the loop with ak_list_walk_save(pos, list, member, cursor).
 * The body must not change @list.
 */
#define ak_list_for_each_entry_resume(pos, list, member, cursor)	\
	__ak_list_counting(pos, list, member, cursor)			\
		for (; (pos) && &(pos)->member != &(list)->head && ak_can_loop; \
		     pos = __ak_list_entry_or_null((pos)->member.next, pos, member), \
		     ___ak_seen++)

/**
 * ak_list_for_each_entry_resume_safe - a resumable walk that may delete
 * @pos: a pointer to the entry type, the loop cursor
 * @tmp: another such pointer, the next entry
 * @list: the list
 * @member: the name of the struct ak_list_node in the entry
 * @cursor: a struct ak_list_cursor *, zeroed before the first walk
 *
 * The body may ak_list_del(@list, &@pos->@member) and free @pos, and
 * nothing else to @list. Close the loop with ak_list_walk_save(): it saves
 * the generation the walk's own deletions left, so the next run goes on,
 * while a change made by anyone between runs makes it -AK_ESTALE.
 *
 *	ak_list_for_each_entry_resume_safe(ev, tmp, &events, node, &cur)
 *		if (ak_glob_match(pattern, ev->name) == 1) {
 *			ak_list_del(&events, &ev->node);
 *			ak_free(ev);
 *		}
 *	return ak_list_walk_save(ev, &events, node, &cur);
 */
#define ak_list_for_each_entry_resume_safe(pos, tmp, list, member, cursor) \
	__ak_list_counting(pos, list, member, cursor)			\
		for (; (pos) && &(pos)->member != &(list)->head && ak_can_loop && \
		     ((tmp = __ak_list_entry_or_null((pos)->member.next, pos, member)), 1); \
		     pos = tmp, ___ak_seen++)

/* Did the loop above reach the end of the list? */
#define ak_list_walk_done(pos, list, member) ((pos) && &(pos)->member == &(list)->head)

/* 0 if a plain for_each loop reached the end; -EFAULT or -AK_EBUDGET if not. */
#define ak_list_walk_status(pos, list, member)				\
	(!(pos) ? -EFAULT : ak_list_walk_done(pos, list, member) ? 0 : -AK_EBUDGET)

/**
 * ak_list_walk_save - close a _resume loop that ended without a break
 * @pos: the loop cursor
 * @list: the list
 * @member: the node member
 * @cursor: the walk's cursor
 *
 * Keeps the cut position in @cursor, or resets it. Evaluates to the walk's
 * status: 0 (done), -AK_EBUDGET (call again to go on), -AK_ESTALE (the list
 * changed since the cursor was saved; start again) or -EFAULT.
 */
#define ak_list_walk_save(pos, list, member, cursor)			\
	({								\
		int ___status;						\
									\
		if (!(pos) && (cursor)->seen == ~0ULL)			\
			___status = -AK_ESTALE;				\
		else							\
			___status = ak_list_walk_status(pos, list, member); \
		if (___status == -AK_EBUDGET)				\
			__ak_list_cursor_save(cursor, list, &(pos)->member, \
					      (cursor)->seen);		\
		else							\
			__ak_list_cursor_reset(cursor);			\
		___status;						\
	})

/*
 * Whole walks in one program run. Each call of a global function starts
 * with a loop budget of its own, so a walk done in chunks, one global
 * function call per chunk, goes on past any one frame's budget: the _all
 * walks below finish a list of any length inside one program run, with no
 * cursor kept between runs.
 *
 * What bounds them instead: a walk of a sound list takes ak_list_len()
 * steps. One that has gone past that (checked between chunks) is followed
 * by a cycle search (Brent's: a mark left at each power of two of steps,
 * which the walk meets again only on a cycle), which ends with -ELOOP
 * after at most about twice the nodes before and on the cycle; if there is
 * no cycle (the list's length is wrong), the walk goes on, up to
 * AK_LIST_MAX_NODES steps, more than the largest arena holds 16-byte
 * nodes. The chunks' own loop (one step per chunk) is bounded by the
 * caller's frame, whose end is -AK_EBUDGET as ever.
 *
 * How long a run holds its CPU: the whole walk. A program run is not
 * preempted, and the kernel's soft-lockup watchdog reports a CPU held for
 * about 20 s; at 1-10 ns a node natively, and 10-100 under emulation or on
 * a busy host, keep a one-run walk to lists of about 10M nodes (and a
 * cycle to about as many again). Longer lists: the cursor forms
 * (ak_list_count ...), returning between runs, one budget each.
 */
#define AK_LIST_MAX_NODES (1ULL << 28)

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
 * Call @chunk until it is not cut. Past the list's length, a cycle search
 * decides: -ELOOP, or go on up to AK_LIST_MAX_NODES steps.
 */
#define __ak_list_all(list, chunk, cursor)				\
	({								\
		long long ___ak_all = __ak_walk_all(chunk, (cursor).seen, \
						    ak_list_len(list) + 1); \
									\
		if (___ak_all == -ELOOP) {				\
			___ak_all = __ak_list_find_cycle(list);		\
			if (!___ak_all)					\
				___ak_all = __ak_walk_all(chunk, (cursor).seen, \
							  AK_LIST_MAX_NODES); \
		}							\
		___ak_all;						\
	})

/**
 * ak_list_count_all - count the nodes of @list in one call, however many
 * @list: the list
 *
 * Walks in chunks, each a global function call with a loop budget of its
 * own (see above).
 *
 * Return: the number of nodes; -ELOOP if the list goes round a cycle (or
 * past AK_LIST_MAX_NODES nodes); -EFAULT on a NULL link; -AK_ESTALE if the
 * list changed between chunks; -AK_EBUDGET if the caller's own budget ran
 * out between chunks.
 */
static inline long long ak_list_count_all(struct ak_list __arena *list)
{
	struct ak_list_cursor cursor = {};

	return __ak_list_all(list, __ak_list_count_chunk(list, &cursor), cursor);
}

/**
 * ak_list_find_all - ak_list_find over the whole of @list in one call
 * @list: the list
 * @key_offset: where the key lies from each node (ak_list_key_offset())
 * @key: the value sought
 * @found: set to the node, or to NULL when no node has the key
 *
 * Return: 0 (see *@found); otherwise as ak_list_count_all.
 */
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

/**
 * ak_list_check_all - ak_list_check over the whole of @list in one call
 * @list: the list
 * @bad: set to the first node whose links disagree (may be NULL)
 *
 * Return: 0 if the list is sound; -EINVAL with *@bad set if not;
 * otherwise as ak_list_count_all.
 */
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

/**
 * AK_LIST_DEFINE_EACH_ALL - define a whole walk that calls @fn for every entry
 * @name: the walk: long long name(struct ak_list __arena *list, void __arena *ctx)
 * @type: the entry type
 * @member: the name of the struct ak_list_node in @type
 * @fn: long long fn(@type __arena *entry, void __arena *ctx), called for
 *	each entry in order: 0 goes on; anything else (a positive value, so
 *	that it is told from the walk's errors) stops the walk and is returned
 *
 * BPF has no calls through pointers, so the callback is named when the
 * walk is defined: this defines the global function name##_chunk (a chunk
 * of the walk, with a loop budget of its own) and name(), which calls it
 * until the list ends, as ak_list_count_all does, in one program run. @ctx
 * is arena memory (the walk's state; it may be NULL). @fn must not change
 * the list. name() returns 0 when @fn saw every entry, @fn's value if it
 * stopped the walk, or an error as ak_list_count_all (-ELOOP, -EFAULT,
 * -AK_ESTALE, -AK_EBUDGET).
 */
#define AK_LIST_DEFINE_EACH_ALL(name, type, member, fn)			\
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

#ifndef __BPF__
#include <arenakit/lock.h>

/* ak_list_next_copy's body: @offset is the node's place in the entry, @size the entry's. */
static inline int __ak_list_next_copy(struct ak_list *list, struct ak_lock *lock,
				      struct ak_list_cursor *c, void *entry,
				      unsigned long long offset, unsigned long long size)
{
	struct ak_list_node *pos;
	int err;

	err = ak_lock_acquire(lock);
	if (err)
		return err;	/* the cursor as it was: call again */
	/*
	 * Under the lock the list holds still; an unchanged generation says it
	 * held still since the walk began, so the node the cursor names is
	 * still on it: not deleted, nor freed (its page would fault here,
	 * where BPF reads 0).
	 */
	pos = c->pos;
	if (!pos) {
		pos = list->head.next;	/* the walk begins: the save below records the gen */
	} else if (c->list != list || c->gen != list->gen) {
		err = -AK_ESTALE;
		goto out;
	}
	if (pos == &list->head) {
		err = -ENOENT;
		goto out;
	}
	if (!pos || !pos->next) {
		err = -EFAULT;	/* a deleted node still linked, or a list never initialised */
		goto out;
	}
	__builtin_memcpy(entry, (char *)pos - offset, size);
	__ak_list_cursor_save(c, list, pos->next, c->seen + 1);
out:
	ak_lock_release(lock);
	if (err)
		__ak_list_cursor_reset(c);
	return err;
}

/**
 * ak_list_next_copy - the next entry of a walk, copied (user space, through
 * the arena's mmap, while BPF programs write the list)
 * @list: the list (a struct ak_list *)
 * @lock: the struct ak_lock * that the list's writers hold while they change it
 * @cursor: the walk's struct ak_list_cursor *, zeroed before the first call
 * @entry: where the entry is copied: a pointer to the entry type, whose
 *	sizeof(*@entry) bytes are copied from the entry of the next node
 * @member: the name of the struct ak_list_node in the entry type
 *
 * In user space a link to a page BPF freed faults (SIGSEGV), where BPF
 * reads 0: a walk may follow a link only while it holds the writers' lock
 * and knows, by the list's generation, that the node it stands on is still
 * on the list. So each call takes @lock, checks the generation against the
 * one the walk began with (recorded by the first call), copies one entry
 * and steps the cursor to its next link, and releases @lock; nothing is
 * held between calls, and no allocator is needed. A walk is complete
 * (every entry on the list throughout copied once, in order) or says it is
 * stale, never short or doubled. Evaluates each argument once.
 *
 * The copy is whole for what writers change under @lock; a field BPF
 * updates without it (a counter bumped atomically, say) is copied as it
 * was at that moment. And the loader holds the writers' lock for each
 * copy: a loader preempted there makes BPF writers wait, and their bounded
 * wait may end in -EBUSY (lock.h).
 *
 *	while ((err = ak_list_next_copy(&skel->arena->events, &skel->arena->lock,
 *					&cursor, &ev, node)) == 0)
 *		show(&ev);
 *
 * Return: 0 (an entry copied); -ENOENT at the end (the cursor is reset);
 * -AK_ESTALE if the list changed since the walk began, or @cursor is
 * another list's (the cursor is reset: begin again); -EBUSY or -AK_EBUDGET
 * if @lock stayed busy (the cursor is unchanged: call again); -EFAULT on a
 * NULL link (the cursor is reset).
 */
#define ak_list_next_copy(list, lock, cursor, entry, member)		\
	({								\
		typeof(entry) ___ak_lentry = (entry);			\
									\
		_Static_assert(__builtin_types_compatible_p(typeof(___ak_lentry->member), \
							    struct ak_list_node), \
			       "ak_list_next_copy: " #member " is not a struct ak_list_node"); \
		__ak_list_next_copy(list, lock, cursor, ___ak_lentry,	\
				    __builtin_offsetof(typeof(*___ak_lentry), member), \
				    sizeof(*___ak_lentry));		\
	})
#endif /* !__BPF__ */

#endif /* __ARENAKIT_LIST_H */
