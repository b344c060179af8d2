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
 * cursor is reset. AK_LIST_GROUP (1 to 16, default 8) is how many nodes the
 * grouped walks take between two budget checks (list_impl.h says why).
 * Each macro evaluates each of its arguments once, as a function would;
 * the loops' @pos and @tmp are the variables they assign.
 *
 * Nothing here locks: guard a list shared by CPUs with an ak_lock.
 *
 * This header declares and documents the calls; their bodies are in
 * list_impl.h, in the same order, and the whole walks' in list_impl_all.h.
 * A loader finds the structures' layout in <arenakit/list_types.h>, and
 * in <arenakit/list_user.h> its walks through the arena's mmap while BPF
 * programs write the list: ak_list_next_copy (complete or stale) and
 * ak_list_next_copy_live (never stale).
 */
#ifndef __ARENAKIT_LIST_H
#define __ARENAKIT_LIST_H

#include <arenakit/list_types.h>

/**
 * ak_list_init - make @list an empty list
 * @list: the list
 *
 * A cursor saved before the init never resumes on the new list, even when
 * the list's memory went back to the kernel and came back zeroed: the
 * generation starts from a random value (list_impl.h).
 */
static inline void ak_list_init(struct ak_list __arena *list);

/**
 * ak_list_empty - does @list hold no node?
 * @list: the list
 *
 * Return: 1 if @list is empty, 0 if not.
 */
static inline int ak_list_empty(const struct ak_list __arena *list);

/**
 * ak_list_len - the number of nodes on @list, in O(1)
 * @list: the list
 *
 * Return: the count the list keeps (ak_list_count walks to prove it).
 */
static inline unsigned long long ak_list_len(const struct ak_list __arena *list);

/**
 * ak_list_add_head - insert @node first in @list
 * @list: the list
 * @node: the node to insert (not on any list)
 *
 * The kernel's list_add(new, head), with the list first (see the top of
 * this file).
 */
static inline void ak_list_add_head(struct ak_list __arena *list,
				    struct ak_list_node __arena *node);

/**
 * ak_list_add_tail - insert @node last in @list
 * @list: the list
 * @node: the node to insert (not on any list)
 *
 * The kernel's list_add_tail(new, head), with the list first.
 */
static inline void ak_list_add_tail(struct ak_list __arena *list,
				    struct ak_list_node __arena *node);

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
				     struct ak_list_node __arena *where);

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
				      struct ak_list_node __arena *where);

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
static inline int ak_list_del(struct ak_list __arena *list, struct ak_list_node __arena *node);

/**
 * ak_list_move - move @node from @from to the front of @to
 * @from: the list @node is on
 * @node: the node
 * @to: the list to put it on (may be @from)
 *
 * Return: 0; -EINVAL as ak_list_del (nothing moved).
 */
static inline int ak_list_move(struct ak_list __arena *from, struct ak_list_node __arena *node,
			       struct ak_list __arena *to);

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
				    struct ak_list __arena *to);

/**
 * ak_list_splice_init - move every node of @from to the front of @to
 * @from: the list to empty; it is left empty
 * @to: the list that receives the nodes, in their order
 *
 * O(1) however long @from is: no walk, so no budget to run out.
 */
static inline void ak_list_splice_init(struct ak_list __arena *from, struct ak_list __arena *to);

/**
 * ak_list_first - the first node of @list, or NULL if it is empty
 * @list: the list
 *
 * Return: the node, or NULL.
 */
static inline struct ak_list_node __arena *ak_list_first(struct ak_list __arena *list);

/**
 * ak_list_last - the last node of @list, or NULL if it is empty
 * @list: the list
 *
 * Return: the node, or NULL.
 */
static inline struct ak_list_node __arena *ak_list_last(struct ak_list __arena *list);

/**
 * ak_list_next - the node after @node on @list, or NULL after the last
 * @list: the list
 * @node: a node on @list
 *
 * Return: the node, or NULL.
 */
static inline struct ak_list_node __arena *ak_list_next(struct ak_list __arena *list,
							struct ak_list_node __arena *node);

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
static inline long long ak_list_count(struct ak_list __arena *list, struct ak_list_cursor *cursor);

/* The byte offset of an entry's 64-bit @key from its list node @member. */
#define ak_list_key_offset(type, member, key)				\
	((long)__builtin_offsetof(type, key) - (long)__builtin_offsetof(type, member))

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
					   struct ak_list_node __arena **found);

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
				struct ak_list_node __arena **bad);

/**
 * ak_list_entry - the structure that embeds @node
 * @node: a list node
 * @type: the type of the structure
 * @member: the name of the node in @type
 */
#define ak_list_entry(node, type, member) ak_container_of(node, type, member)

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
	__ak_list_bind(list)						\
		for (pos = __ak_list_entry_or_null(___ak_list->head.next, pos, member); \
		     (pos) && &(pos)->member != &___ak_list->head && ak_can_loop; \
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
	__ak_list_bind(list)						\
		for (pos = __ak_list_entry_or_null(___ak_list->head.next, pos, member); \
		     (pos) && &(pos)->member != &___ak_list->head && ak_can_loop && \
		     ((tmp = __ak_list_entry_or_null((pos)->member.next, pos, member)), 1); \
		     pos = tmp)

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
		for (; (pos) && &(pos)->member != &___ak_list->head && ak_can_loop; \
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
		for (; (pos) && &(pos)->member != &___ak_list->head && ak_can_loop && \
		     ((tmp = __ak_list_entry_or_null((pos)->member.next, pos, member)), 1); \
		     pos = tmp, ___ak_seen++)

/* Did the loop above reach the end of the list? */
#define ak_list_walk_done(pos, list, member) __ak_list_walk_done(pos, list, member)

/* 0 if a plain for_each loop reached the end; -EFAULT or -AK_EBUDGET if not. */
#define ak_list_walk_status(pos, list, member) __ak_list_walk_status(pos, list, member)

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
	__ak_list_walk_save(pos, list, member, cursor)

/*
 * Whole walks in one program run: the _all calls walk in chunks, each a
 * call of a global function with a loop budget of its own, so they finish
 * a list of any length inside one run. Past ak_list_len() steps a cycle
 * search decides (list_impl_all.h): -ELOOP, or the walk goes on, up to
 * AK_LIST_MAX_NODES steps, more than the largest arena holds 16-byte nodes.
 *
 * A run holds its CPU for the whole walk, and the kernel's soft-lockup
 * watchdog reports a CPU held for about 20 s: keep a one-run walk to a
 * list a CPU walks well within that, under emulation or on a busy host
 * too, and a cycle as long again (include/arenakit/README.md gives sizes).
 * Longer lists: the cursor forms, returning between runs, a budget each.
 */
#define AK_LIST_MAX_NODES (1ULL << 28)

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
static inline long long ak_list_count_all(struct ak_list __arena *list);

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
				   unsigned long long key, struct ak_list_node __arena **found);

/**
 * ak_list_check_all - ak_list_check over the whole of @list in one call
 * @list: the list
 * @bad: set to the first node whose links disagree (may be NULL)
 *
 * Return: 0 if the list is sound; -EINVAL with *@bad set if not;
 * otherwise as ak_list_count_all.
 */
static inline int ak_list_check_all(struct ak_list __arena *list,
				    struct ak_list_node __arena **bad);

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
	__AK_LIST_DEFINE_EACH_ALL(name, type, member, fn)

/* The bodies of the calls above, and the helpers of the macros: internal. */
#include <arenakit/list_impl.h>
#include <arenakit/list_impl_all.h>

#endif /* __ARENAKIT_LIST_H */
