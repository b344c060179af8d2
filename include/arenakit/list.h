/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/list.h - a doubly linked list in the arena, shaped like the
 * kernel's include/linux/list.h: circular, with a head node, so add, delete,
 * move and splice are O(1) and never loop.
 *
 * Walks (count, check) are bounded by may_goto. A walk the budget cut short
 * returns -ARENA_EBUDGET and leaves its position in the optional cursor;
 * calling again with the same cursor (in the next program run, or in another
 * global function, which has a fresh budget) goes on from there. Walks that
 * finish reset the cursor. A pointer found NULL during a walk (a deleted
 * node still linked, or a fault in the arena, which reads as 0) is -EFAULT.
 *
 * Functions that resume: arena_list_count, arena_list_find, arena_list_check.
 * The for_each macros report (arena_list_walk_status); the _resume one also
 * goes on from a cursor (arena_list_walk_save records where it stopped).
 */
#ifndef __ARENAKIT_LIST_H
#define __ARENAKIT_LIST_H

#include <arenakit/arena.h>


struct arena_list_node {
	struct arena_list_node __arena *next;
	struct arena_list_node __arena *prev;
};

/* Where a cut walk stopped; zero it before the first call. */
struct arena_list_cursor {
	struct arena_list_node __arena *pos;	/* next node to visit, NULL: start */
	unsigned long long seen;		/* nodes visited before pos */
};

/**
 * arena_list_init - make @head an empty list (or @node an unlinked node)
 * @head: the list head
 */
static inline void arena_list_init(struct arena_list_node __arena *head)
{
	head->next = head;
	head->prev = head;
}

/**
 * arena_list_empty - does the list hold no node?
 * @head: the list head
 */
static inline int arena_list_empty(const struct arena_list_node __arena *head)
{
	return head->next == head;
}

static inline void __arena_list_insert(struct arena_list_node __arena *node,
				       struct arena_list_node __arena *prev,
				       struct arena_list_node __arena *next)
{
	next->prev = node;
	node->next = next;
	node->prev = prev;
	prev->next = node;
}

/**
 * arena_list_add_head - insert @node first in the list
 * @node: the node to insert (not on any list)
 * @head: the list head
 */
static inline void arena_list_add_head(struct arena_list_node __arena *node,
				       struct arena_list_node __arena *head)
{
	__arena_list_insert(node, head, head->next);
}

/**
 * arena_list_add_tail - insert @node last in the list
 * @node: the node to insert (not on any list)
 * @head: the list head
 */
static inline void arena_list_add_tail(struct arena_list_node __arena *node,
				       struct arena_list_node __arena *head)
{
	__arena_list_insert(node, head->prev, head);
}

/**
 * arena_list_add_after - insert @node right after @where
 * @node: the node to insert (not on any list)
 * @where: a node on a list (or its head)
 */
static inline void arena_list_add_after(struct arena_list_node __arena *node,
					struct arena_list_node __arena *where)
{
	__arena_list_insert(node, where, where->next);
}

/**
 * arena_list_add_before - insert @node right before @where
 * @node: the node to insert (not on any list)
 * @where: a node on a list (or its head)
 */
static inline void arena_list_add_before(struct arena_list_node __arena *node,
					 struct arena_list_node __arena *where)
{
	__arena_list_insert(node, where->prev, where);
}

static inline void __arena_list_unlink(struct arena_list_node __arena *node)
{
	struct arena_list_node __arena *next = node->next, *prev = node->prev;

	/* Write through the neighbours themselves, not through copies. */
	prev->next = next;
	next->prev = prev;
}

/**
 * arena_list_del - take @node off its list
 * @node: a node on a list
 *
 * Its links are cleared, so a walk that meets it later fails with -EFAULT
 * instead of wandering into the list it left.
 */
static inline void arena_list_del(struct arena_list_node __arena *node)
{
	__arena_list_unlink(node);
	node->next = 0;
	/*
	 * Keep the two stores apart: clang-19 merges them into a memset that
	 * it lowers without the arena address cast, which the verifier refuses.
	 */
	asm volatile("" ::: "memory");
	node->prev = 0;
}

/**
 * arena_list_del_init - take @node off its list and make it an empty list
 * @node: a node on a list
 */
static inline void arena_list_del_init(struct arena_list_node __arena *node)
{
	__arena_list_unlink(node);
	arena_list_init(node);
}

/**
 * arena_list_move - move @node to the front of the list at @head
 * @node: a node on a list
 * @head: the list head (the same list or another)
 */
static inline void arena_list_move(struct arena_list_node __arena *node,
				   struct arena_list_node __arena *head)
{
	__arena_list_unlink(node);
	arena_list_add_head(node, head);
}

/**
 * arena_list_move_tail - move @node to the end of the list at @head
 * @node: a node on a list
 * @head: the list head (the same list or another)
 */
static inline void arena_list_move_tail(struct arena_list_node __arena *node,
					struct arena_list_node __arena *head)
{
	__arena_list_unlink(node);
	arena_list_add_tail(node, head);
}

/**
 * arena_list_splice_init - move every node of @list to the front of @head
 * @list: the list to empty; it is left empty
 * @head: the list that receives the nodes, in their order
 *
 * O(1) however long @list is: no walk, so no budget to run out.
 */
static inline void arena_list_splice_init(struct arena_list_node __arena *list,
					  struct arena_list_node __arena *head)
{
	struct arena_list_node __arena *first = list->next, *last = list->prev;

	if (first == list)
		return;
	last->next = head->next;
	head->next->prev = last;
	head->next = first;
	first->prev = head;
	arena_list_init(list);
}

/**
 * arena_list_first - the first node, or NULL if the list is empty
 * @head: the list head
 */
static inline struct arena_list_node __arena *
arena_list_first(struct arena_list_node __arena *head)
{
	return head->next == head ? 0 : head->next;
}

/**
 * arena_list_last - the last node, or NULL if the list is empty
 * @head: the list head
 */
static inline struct arena_list_node __arena *
arena_list_last(struct arena_list_node __arena *head)
{
	return head->prev == head ? 0 : head->prev;
}

/**
 * arena_list_count - count the nodes of a list
 * @head: the list head
 * @cursor: where a cut walk resumes (NULL: no resuming)
 *
 * Return: the number of nodes; -ARENA_EBUDGET if the loop budget ran out
 * (@cursor, if given, says where to go on); -EFAULT on a NULL link.
 */
static inline long long arena_list_count(struct arena_list_node __arena *head,
					 struct arena_list_cursor *cursor)
{
	struct arena_list_cursor start = {};
	struct arena_list_node __arena *pos;
	unsigned long long seen;

	if (!cursor)
		cursor = &start;
	pos = cursor->pos ? cursor->pos : head->next;
	seen = cursor->seen + arena_opaque_zero();
	while (pos != head) {
		if (!pos)
			return -EFAULT;
		cond_break_label(cut);
		seen++;
		pos = pos->next;
	}
	cursor->pos = 0;
	cursor->seen = 0;
	return seen;
cut:
	cursor->pos = pos;
	cursor->seen = seen;
	return -ARENA_EBUDGET;
}

/* The byte offset of an entry's 64-bit @key from its list node @member. */
#define arena_list_key_offset(type, member, key)			\
	((long)__builtin_offsetof(type, key) - (long)__builtin_offsetof(type, member))

/**
 * arena_list_find - find the first node whose 64-bit key equals @key
 * @head: the list head
 * @key_offset: where the key lies from each node (arena_list_key_offset())
 * @key: the value sought
 * @cursor: where a cut walk resumes (NULL: no resuming)
 * @found: set to the node, or to NULL when no node has the key
 *
 * Return: 0 (see *@found); -ARENA_EBUDGET if the loop budget ran out;
 * -EFAULT on a NULL link.
 */
static inline int arena_list_find(struct arena_list_node __arena *head, long key_offset,
				  unsigned long long key, struct arena_list_cursor *cursor,
				  struct arena_list_node __arena **found)
{
	struct arena_list_cursor start = {};
	struct arena_list_node __arena *pos;
	unsigned long long seen;

	if (!cursor)
		cursor = &start;
	*found = 0;
	pos = cursor->pos ? cursor->pos : head->next;
	seen = cursor->seen + arena_opaque_zero();
	while (pos != head) {
		if (!pos)
			return -EFAULT;
		cond_break_label(cut);
		if (*(unsigned long long __arena *)((char __arena *)pos + key_offset) == key) {
			*found = pos;
			break;
		}
		seen++;
		pos = pos->next;
	}
	cursor->pos = 0;
	cursor->seen = 0;
	return 0;
cut:
	cursor->pos = pos;
	cursor->seen = seen;
	return -ARENA_EBUDGET;
}

/**
 * arena_list_check - verify every link of a list
 * @head: the list head
 * @cursor: where a cut walk resumes (NULL: no resuming)
 * @bad: set to the first node whose links disagree (may be NULL)
 *
 * Each node's next must point back at it through prev.
 * Return: 0 if the list is sound; -EINVAL with *@bad set if not; -EFAULT on
 * a NULL link (*@bad: the node holding it); -ARENA_EBUDGET if cut.
 */
static inline int arena_list_check(struct arena_list_node __arena *head,
				   struct arena_list_cursor *cursor,
				   struct arena_list_node __arena **bad)
{
	struct arena_list_cursor start = {};
	struct arena_list_node __arena *pos, *next;
	unsigned long long seen;

	if (!cursor)
		cursor = &start;
	pos = cursor->pos ? cursor->pos : head;
	seen = cursor->seen + arena_opaque_zero();
	for (;;) {
		cond_break_label(cut);
		next = pos->next;
		if (!next || !next->prev) {
			if (bad)
				*bad = next ? next : pos;
			return -EFAULT;
		}
		if (next->prev != pos) {
			if (bad)
				*bad = next;
			return -EINVAL;
		}
		if (next == head)
			break;
		pos = next;
		seen++;
	}
	cursor->pos = 0;
	cursor->seen = 0;
	return 0;
cut:
	cursor->pos = pos;
	cursor->seen = seen;
	return -ARENA_EBUDGET;
}

/**
 * arena_list_entry - the structure that embeds @node
 */
#define arena_list_entry(node, type, member) arena_container_of(node, type, member)

/**
 * arena_list_for_each_entry - iterate over the entries of a list
 * @pos: a pointer to the entry type, the loop cursor
 * @head: the list head
 * @member: the name of the struct arena_list_node in the entry
 *
 * Bounded by can_loop. When the loop ends without a break, the walk ended
 * normally only if arena_list_walk_done(pos, head, member) is true;
 * otherwise arena_list_walk_status() tells the cut (-ARENA_EBUDGET) from a
 * NULL link (-EFAULT).
 */
#define arena_list_for_each_entry(pos, head, member)			\
	for (pos = __arena_list_entry_or_null((head)->next, pos, member);	\
	     (pos) && &(pos)->member != (head) && can_loop;		\
	     pos = __arena_list_entry_or_null((pos)->member.next, pos, member))

/**
 * arena_list_for_each_entry_safe - iterate, allowing @pos to be deleted
 * @pos: a pointer to the entry type, the loop cursor
 * @tmp: another such pointer, the next entry
 * @head: the list head
 * @member: the name of the struct arena_list_node in the entry
 *
 * As arena_list_for_each_entry, for walks that delete the current entry.
 */
#define arena_list_for_each_entry_safe(pos, tmp, head, member)		\
	for (pos = __arena_list_entry_or_null((head)->next, pos, member);	\
	     (pos) && &(pos)->member != (head) && can_loop &&		\
	     ((tmp = __arena_list_entry_or_null((pos)->member.next, pos, member)), 1); \
	     pos = tmp)

/**
 * arena_list_for_each_entry_resume - iterate from where a cut walk stopped
 * @pos: a pointer to the entry type, the loop cursor
 * @head: the list head
 * @member: the name of the struct arena_list_node in the entry
 * @cursor: a struct arena_list_cursor *, zeroed before the first walk
 *
 * Starts at @cursor's node (or the first); ->seen counts the entries passed.
 * After the loop, call arena_list_walk_save(pos, head, member, cursor).
 */
#define arena_list_for_each_entry_resume(pos, head, member, cursor)	\
	for (pos = __arena_list_entry_or_null((cursor)->pos ? (cursor)->pos :	\
					      (head)->next, pos, member);	\
	     (pos) && &(pos)->member != (head) && can_loop;		\
	     pos = __arena_list_entry_or_null((pos)->member.next, pos, member), \
	     (cursor)->seen++)

/*
 * After a _resume loop that ended without a break: keep the cut position
 * in @cursor, or reset it if the walk is complete. Evaluates to the walk's
 * status: 0, -ARENA_EBUDGET (call again to go on) or -EFAULT.
 */
#define arena_list_walk_save(pos, head, member, cursor)			\
	({								\
		int __status = arena_list_walk_status(pos, head, member); \
									\
		(cursor)->pos = __status == -ARENA_EBUDGET ? &(pos)->member : 0; \
		if (!__status)						\
			(cursor)->seen = 0;				\
		__status;						\
	})

/* A NULL link becomes a NULL entry, so the loops can stop on it. */
#define __arena_list_entry_or_null(node, pos, member)			\
	((node) ? (typeof(pos))((char __arena *)(node) -			\
				__builtin_offsetof(typeof(*(pos)), member)) : 0)

/* Did the loop above reach the end of the list? */
#define arena_list_walk_done(pos, head, member) ((pos) && &(pos)->member == (head))

/* 0 if the loop above reached the end; -EFAULT or -ARENA_EBUDGET if not. */
#define arena_list_walk_status(pos, head, member)			\
	(!(pos) ? -EFAULT : arena_list_walk_done(pos, head, member) ? 0 : -ARENA_EBUDGET)

#endif /* __ARENAKIT_LIST_H */
