/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/htab_user.h - the loader's side of a hash table: a walk over
 * every entry through the arena's mmap, while BPF programs write the table.
 *
 *	struct ak_htab_cursor c = {};
 *	while ((err = ak_htab_next_copy(&skel->arena->flows, &c, &key, &stats)) == 0)
 *		...;	(-ENOENT: the end; -AK_ESTALE: begin again; -EBUSY: later)
 *
 * It needs the table's layout (htab_types.h) and its bucket locks
 * (lock.h), not the BPF code of htab.h: no allocator, no growth. A loader
 * that also looks keys up includes <arenakit/htab.h> too
 * (ak_htab_lookup_copy works in user space). User space only.
 */
#ifndef __ARENAKIT_HTAB_USER_H
#define __ARENAKIT_HTAB_USER_H

#ifdef __BPF__
#error "<arenakit/htab_user.h> is for user space; BPF walks a table with ak_htab_next (htab.h)"
#else

#include <arenakit/htab_types.h>
#include <arenakit/lock.h>
#include <arenakit/htab_impl_common.h>

/* ak_htab_next_copy's body: @ks and @vs are the table's sizes, checked. */
static inline int __ak_htab_next_copy(struct ak_htab *h, struct ak_htab_cursor *c, void *key,
				      unsigned long long ks, void *value,
				      unsigned long long vs)
{
	struct __ak_htab_table *t;
	struct ak_htab_node *node = 0;
	unsigned long long *bucket, b, k;
	int err = 0;

	if (__ak_htab_cursor_begin(h, c))
		goto stale;
	/* Held before h->old is read: the array read below is not freed under us. */
	__ak_htab_hold(h);
	t = ak_read_once(h->cur);
	if (ak_read_once(h->old)) {
		err = -EBUSY;	/* a growth: BPF's next update or maintain moves it on */
		goto out;
	}
	for (b = c->bucket; b < t->nbuckets; b++, c->skip = 0) {
		bucket = &t->buckets[b];
		if (!ak_read_once(*bucket))
			continue;	/* one that fills meanwhile moves the generation */
		err = ak_bit_lock_acquire(bucket);
		if (err) {
			c->bucket = b;
			goto out;
		}
		node = __ak_htab_node_of(*bucket);
		for (k = 0; node && k < c->skip; k++)
			node = node->next;
		if (node) {
			__builtin_memcpy(key, node->data, ks);
			__builtin_memcpy(value, __ak_htab_value(h, node), vs);
		}
		ak_bit_lock_release(bucket);
		if (c->gen != ak_read_once(h->gen))
			break;
		if (node) {
			c->bucket = b;
			c->skip = k + 1;
			goto out;
		}
	}
	__ak_htab_unhold(h);
	if (c->gen != ak_read_once(h->gen))
		goto stale;
	__ak_htab_cursor_reset(c);
	return -ENOENT;
out:
	__ak_htab_unhold(h);
	return err;
stale:
	__ak_htab_cursor_reset(c);
	return -AK_ESTALE;
}

/**
 * ak_htab_next_copy - the next entry of a walk, copied (user space, through
 * the arena's mmap, while BPF programs write the table)
 * @h: the table
 * @c: the walk's cursor, zeroed before the first call
 * @key: where the entry's key is copied (its type's size: the table's)
 * @value: where its value is copied (its type's size: the table's)
 *
 * The loader's walk, as bpf_map_get_next_key is for a map. Each call holds
 * the table's bucket array (as ak_htab_lookup_copy does) and copies one
 * entry under its bucket's lock, so it never follows a link a writer has
 * changed nor reads memory given back; nothing is held between calls. It
 * needs no allocator and moves nothing: while a growth is in progress it
 * answers -EBUSY (a BPF program's next update, or ak_htab_maintain, moves
 * the growth on). The generation, checked after each step, says whether
 * the table changed since the walk began: a walk is complete, or says it
 * is stale, never short or doubled.
 *
 * Return: 0 (an entry copied); -ENOENT at the end (the cursor is reset);
 * -AK_ESTALE if the table changed since the walk began (the cursor is
 * reset: begin again); -EBUSY (a lock stayed busy, or a growth is in
 * progress: call again); -EINVAL (sizes, or a table not initialised).
 */
#define ak_htab_next_copy(h, c, key, value)				\
	({								\
		struct ak_htab *___ak_nh = (h);				\
		struct ak_htab_cursor *___ak_nc = (c);			\
		typeof(key) ___ak_nkey = (key);				\
		typeof(value) ___ak_nval = (value);			\
		int ___ak_nerr = -EINVAL;				\
									\
		if (sizeof(*___ak_nkey) == ___ak_nh->key_size &&	\
		    sizeof(*___ak_nval) == ___ak_nh->value_size &&	\
		    ak_read_once(___ak_nh->cur))			\
			___ak_nerr = __ak_htab_next_copy(___ak_nh, ___ak_nc, ___ak_nkey, \
				sizeof(*___ak_nkey), ___ak_nval, sizeof(*___ak_nval)); \
		___ak_nerr;						\
	})

#endif /* !__BPF__ */
#endif /* __ARENAKIT_HTAB_USER_H */
