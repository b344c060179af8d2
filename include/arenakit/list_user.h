/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/list_user.h - the loader's side of list.h: walks of a list
 * through the arena's mmap while BPF programs write it, one entry copied
 * per call under the writers' lock. ak_list_next_copy is complete or says
 * it is stale: an exact snapshot, or none; ak_list_next_copy_live never
 * goes stale (each entry on the list throughout copied once, one added or
 * deleted meanwhile at most once). User space only; it needs the list's
 * layout (list_types.h) and the lock (lock.h), not the BPF side's calls.
 */
#ifndef __ARENAKIT_LIST_USER_H
#define __ARENAKIT_LIST_USER_H

#ifdef __BPF__
#error "<arenakit/list_user.h> is for user space; a BPF program walks a list with list.h"
#else

#include <errno.h>
#include <stdlib.h>
#include <arenakit/list_types.h>
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
	*c = (struct ak_list_cursor){
		.pos = pos->next, .list = list, .gen = list->gen, .seen = c->seen + 1,
	};
out:
	ak_lock_release(lock);
	if (err)
		*c = (struct ak_list_cursor){};
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
	__ak_list_copy_call(__ak_list_next_copy, list, lock, cursor, entry, member)

/* A copying walk's call: @body given the node's offset in *@entry and the entry's size. */
#define __ak_list_copy_call(body, list, lock, cursor, entry, member)	\
	({								\
		typeof(entry) ___ak_lentry = (entry);			\
									\
		_Static_assert(__builtin_types_compatible_p(typeof(___ak_lentry->member), \
							    struct ak_list_node), \
			       #body ": " #member " is not a struct ak_list_node"); \
		body(list, lock, cursor, ___ak_lentry,			\
		     __builtin_offsetof(typeof(*___ak_lentry), member),	\
		     sizeof(*___ak_lentry));				\
	})

/**
 * struct ak_list_live_cursor - where a walk that never goes stale is
 * (ak_list_next_copy_live); it owns memory between its first call and its
 * end: ak_list_live_cursor_release gives it back from a walk left early
 * @list: the list walked (NULL: the walk has not begun)
 * @pos: the node to look at next, while no node has been unlinked since
 * @unlinks: the list generation's upper half, which every unlink moves, at @pos
 * @seen: the addresses of the nodes copied: a set, open addressing
 * @seen_bits: the set has 1 << @seen_bits slots (0: none yet)
 * @copied: entries copied so far, each at its own address
 *
 * Zero it before the first call.
 */
struct ak_list_live_cursor {
	struct ak_list *list;
	struct ak_list_node *pos;
	unsigned long long unlinks;
	unsigned long long *seen;
	unsigned int seen_bits;
	unsigned long long copied;
};

/* ak_list_live_cursor_release - end a walk early: its set goes back, the cursor is zeroed */
static inline void ak_list_live_cursor_release(struct ak_list_live_cursor *c)
{
	free(c->seen);
	*c = (struct ak_list_live_cursor){};
}

/* The slot of @node in @c's set: where it is, or the empty one it would take. */
static inline unsigned long long *__ak_list_live_slot(const struct ak_list_live_cursor *c,
						      const struct ak_list_node *node)
{
	unsigned long long mask = (1ULL << c->seen_bits) - 1, addr = (unsigned long)node;
	unsigned long long i = ((addr >> 3) * 0x9e3779b97f4a7c15ULL) >> (64 - c->seen_bits);

	while (c->seen[i] && c->seen[i] != addr)
		i = (i + 1) & mask;	/* ends: the set is at most half full */
	return &c->seen[i];
}

/* Room in @c's set for one more address, kept at most half full: 0 or -ENOMEM. */
static inline int __ak_list_live_room(struct ak_list_live_cursor *c)
{
	struct ak_list_live_cursor grown = *c;
	unsigned long long i;

	if (c->seen_bits && c->copied + 1 <= 1ULL << (c->seen_bits - 1))
		return 0;
	grown.seen_bits = c->seen_bits ? c->seen_bits + 1 : 6;
	grown.seen = calloc(1ULL << grown.seen_bits, sizeof(*grown.seen));
	if (!grown.seen)
		return -ENOMEM;
	for (i = 0; c->seen_bits && i < 1ULL << c->seen_bits; i++)
		if (c->seen[i])
			*__ak_list_live_slot(&grown, (struct ak_list_node *)(unsigned long)c->seen[i]) =
				c->seen[i];
	free(c->seen);
	*c = grown;
	return 0;
}

/* ak_list_next_copy_live's body: @offset is the node's place in the entry, @size the entry's. */
static inline int __ak_list_next_copy_live(struct ak_list *list, struct ak_lock *lock,
					   struct ak_list_live_cursor *c, void *entry,
					   unsigned long long offset, unsigned long long size)
{
	struct ak_list_node *pos;
	unsigned long long steps, *slot = 0;
	int err;

	if (c->list && c->list != list) {
		ak_list_live_cursor_release(c);
		return -AK_ESTALE;	/* another list's cursor: begin again */
	}
	err = __ak_list_live_room(c);
	if (err) {
		ak_list_live_cursor_release(c);
		return err;
	}
	err = ak_lock_acquire(lock);
	if (err)
		return err;	/* the cursor as it was: call again */
	/*
	 * Under the lock the list holds still. With no unlink since the last
	 * call, only inserts, the node the cursor names is still on it (not
	 * deleted, nor freed: its page would fault here, where BPF reads 0),
	 * and every node that was after it still is. Otherwise that node may
	 * be gone, and the pass begins again from the head, past the nodes
	 * copied already.
	 */
	if (c->list && c->unlinks == list->gen >> 32)
		pos = c->pos;
	else
		pos = list->head.next;
	for (steps = 0;; steps++, pos = pos->next) {
		if (pos == &list->head) {
			err = -ENOENT;
			break;
		}
		if (!pos || !pos->next) {
			err = -EFAULT;	/* a deleted node still linked, or a list never initialised */
			break;
		}
		if (steps > list->len) {
			err = -ELOOP;	/* a cycle, or links that disagree with the length */
			break;
		}
		slot = __ak_list_live_slot(c, pos);
		if (!*slot)
			break;	/* the first node not copied yet */
	}
	if (!err) {
		__builtin_memcpy(entry, (char *)pos - offset, size);
		*slot = (unsigned long)pos;
		c->list = list;
		c->pos = pos->next;
		c->unlinks = list->gen >> 32;
		c->copied++;
	}
	ak_lock_release(lock);
	if (err)
		ak_list_live_cursor_release(c);
	return err;
}

/**
 * ak_list_next_copy_live - the next entry of a walk that never goes stale,
 * copied (user space, through the arena's mmap, while BPF programs write
 * the list)
 * @list: the list (a struct ak_list *)
 * @lock: the struct ak_lock * that the list's writers hold while they change it
 * @cursor: the walk's struct ak_list_live_cursor *, zeroed before the first call
 * @entry: where the entry is copied: a pointer to the entry type, whose
 *	sizeof(*@entry) bytes are copied from the entry of the next node
 * @member: the name of the struct ak_list_node in the entry type
 *
 * However writers change the list meanwhile, every entry on it for the
 * whole walk is copied exactly once, in the list's order, and one added or
 * deleted during it at most once; the walk never begins again. A move is
 * an unlink and an insert: the moved entry is copied at most once.
 * ak_list_next_copy, by contrast, is an exact snapshot or none.
 *
 * Each call takes @lock, copies the first entry after the cursor whose
 * node it has not copied, and lets go. The cursor keeps the addresses of
 * the nodes it copied (a set it allocates: 16 bytes an entry at most):
 * an entry there throughout kept its address throughout, so no other
 * entry had it, and one added at a copied one's address after it was
 * freed is one added during the walk, passed over. After an insert the
 * walk goes on from the cursor; after an unlink, from the head, past the
 * copied entries: a call then holds @lock for up to a pass over them, and
 * a walk of n entries while deletes keep coming up to n * n / 2 steps.
 *
 * The walk ends when a pass reaches the list's end; it makes at most one
 * call an entry it meets, those present at its start and those added
 * ahead of it: a list that writers lengthen for ever faster than the
 * walk copies is a stream, and @cursor->copied says how far it went. A
 * walk left early must give its set back: ak_list_live_cursor_release.
 * Evaluates each argument once.
 *
 *	while ((err = ak_list_next_copy_live(&skel->arena->events, &skel->arena->lock,
 *					     &cursor, &ev, node)) == 0)
 *		show(&ev);
 *
 * Return: 0 (an entry copied); -ENOENT at the end; -EBUSY or -AK_EBUDGET
 * if @lock stayed busy (the cursor unchanged: call again); -ENOMEM if its
 * set cannot grow; -AK_ESTALE if @cursor is another list's; -EFAULT on a
 * NULL link; -ELOOP if the links run past the list's length. Every error
 * but -EBUSY and -AK_EBUDGET ends the walk: the cursor is released and
 * zeroed.
 */
#define ak_list_next_copy_live(list, lock, cursor, entry, member)	\
	__ak_list_copy_call(__ak_list_next_copy_live, list, lock, cursor, entry, member)

#endif /* !__BPF__ */

#endif /* __ARENAKIT_LIST_USER_H */
