/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/list_user.h - the loader's side of list.h: ak_list_next_copy,
 * a walk of a list through the arena's mmap while BPF programs write it,
 * one entry copied per call under the writers' lock. User space only; it
 * needs the list's layout (list_types.h) and the lock (lock.h), not the
 * BPF side's calls.
 */
#ifndef __ARENAKIT_LIST_USER_H
#define __ARENAKIT_LIST_USER_H

#ifdef __BPF__
#error "<arenakit/list_user.h> is for user space; a BPF program walks a list with list.h"
#else

#include <errno.h>
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

#endif /* __ARENAKIT_LIST_USER_H */
