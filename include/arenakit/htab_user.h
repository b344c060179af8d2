/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/htab_user.h - the loader's side of a hash table: a walk over
 * every entry through the arena's mmap, while BPF programs write the table.
 *
 *	struct ak_htab_cursor c = {};
 *	while ((err = ak_htab_next_copy(&skel->arena->flows, &c, &key, &stats)) == 0)
 *		...;	(-ENOENT: the end; -AK_ESTALE: begin again; -EBUSY: later)
 *
 * That walk is an exact snapshot or none; ak_htab_next_copy_live is the
 * walk that never goes stale (each entry present throughout once, one
 * added or deleted meanwhile at most once), as bpf_map_get_next_key's.
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
#define ak_htab_next_copy(h, c, key, value) __ak_htab_copy_call(__ak_htab_next_copy, h, c, key, value)

/* A copying walk's call: @body, given sizes checked against the table's. */
#define __ak_htab_copy_call(body, h, c, key, value)			\
	({								\
		struct ak_htab *___ak_nh = (h);				\
		typeof(c) ___ak_nc = (c);				\
		typeof(key) ___ak_nkey = (key);				\
		typeof(value) ___ak_nval = (value);			\
		int ___ak_nerr = -EINVAL;				\
									\
		if (sizeof(*___ak_nkey) == ___ak_nh->key_size &&	\
		    sizeof(*___ak_nval) == ___ak_nh->value_size &&	\
		    ak_read_once(___ak_nh->cur))			\
			___ak_nerr = body(___ak_nh, ___ak_nc, ___ak_nkey, sizeof(*___ak_nkey), \
					  ___ak_nval, sizeof(*___ak_nval)); \
		___ak_nerr;						\
	})

/* Is @n's place in the live walk's order, (hash, key words), after @c's? */
static inline int __ak_htab_live_after(const struct ak_htab_node *n, unsigned long long hash,
				       const unsigned long long *key, unsigned int words)
{
	unsigned int i;

	if (n->hash != hash)
		return n->hash > hash;
	for (i = 0; i < words; i++)
		if (n->data[i] != key[i])
			return n->data[i] > key[i];
	return 0;
}

/* ak_htab_next_copy_live's body: @ks and @vs are the table's sizes, checked. */
static inline int __ak_htab_next_copy_live(struct ak_htab *h, struct ak_htab_live_cursor *c,
					   void *key, unsigned long long ks, void *value,
					   unsigned long long vs)
{
	unsigned int words = h->key_words;
	struct __ak_htab_table *t;
	struct ak_htab_node *node, *next;
	unsigned long long *bucket, b, word;
	int err = 0;

	if (!c->htab) {
		*c = (struct ak_htab_live_cursor){ .htab = h, .reseeds = ak_read_once(h->reseeds) };
	} else if (c->htab != h || c->reseeds != ak_read_once(h->reseeds)) {
		/* Another table, or a reseed: every entry's place in the order moved. */
		*c = (struct ak_htab_live_cursor){};
		return -AK_ESTALE;
	}
	/* Held before h->old is read: the array read below is not freed under us. */
	__ak_htab_hold(h);
	t = ak_read_once(h->cur);
	if (ak_read_once(h->old)) {
		err = -EBUSY;	/* entries are moving: BPF's next update or maintain moves them on */
		goto out;
	}
	/*
	 * The order is the seeds': a growth keeps them, a reseed does not. An
	 * array of other seeds than the walk's last one means a reseed ran
	 * since, whole or in part, whatever the count said when the call began
	 * (it moves before the new array is published).
	 */
	if (c->started && __AK_HTAB_SEED(t, 0) != c->seed) {
		__ak_htab_unhold(h);
		*c = (struct ak_htab_live_cursor){};
		return -AK_ESTALE;
	}
	c->seed = __AK_HTAB_SEED(t, 0);
	for (b = c->started ? c->hash >> t->shift : 0; b < t->nbuckets; b++) {
		bucket = &t->buckets[b];
		if (!ak_read_once(*bucket))
			continue;	/* one that fills meanwhile holds entries added during the walk */
		err = ak_bit_lock_acquire(bucket);
		if (err)
			goto out;	/* the cursor as it was: call again */
		word = *bucket;
		if (word & __AK_HTAB_MOVED) {
			/* A growth began since h->old was read: its entries are moving. */
			ak_bit_lock_release(bucket);
			err = -EBUSY;
			goto out;
		}
		/* The chain's first entry after the cursor, in (hash, key) order. */
		next = 0;
		for (node = __ak_htab_node_of(word); node; node = node->next)
			if ((!c->started || __ak_htab_live_after(node, c->hash, c->key, words)) &&
			    (!next || __ak_htab_live_after(next, node->hash, node->data, words)))
				next = node;
		if (next) {
			__builtin_memcpy(key, next->data, ks);
			__builtin_memcpy(value, __ak_htab_value(h, next), vs);
			c->hash = next->hash;
			__builtin_memcpy(c->key, next->data, words * 8);
			c->started = 1;
		}
		ak_bit_lock_release(bucket);
		if (next)
			goto out;
	}
	__ak_htab_unhold(h);
	*c = (struct ak_htab_live_cursor){};
	return -ENOENT;
out:
	__ak_htab_unhold(h);
	return err;
}

/**
 * ak_htab_next_copy_live - the next entry of a walk that never goes stale,
 * copied (user space, through the arena's mmap, while BPF programs write
 * the table)
 * @h: the table
 * @c: the walk's struct ak_htab_live_cursor, zeroed before the first call
 * @key: where the entry's key is copied (its type's size: the table's)
 * @value: where its value is copied (its type's size: the table's)
 *
 * As bpf_map_get_next_key's users expect of a map that changes under them:
 * every entry present for the whole walk is copied exactly once, and one
 * added or deleted during it at most once, however many inserts and
 * deletes run meanwhile; the walk never begins again. ak_htab_next_copy,
 * by contrast, is complete or says it is stale: an exact snapshot, or
 * none. The walk goes in the order of (hash, key): a bucket's index is its
 * hashes' top bits, so the order is the same in every bucket array a
 * growth makes, and the cursor keeps the last entry's hash and key (hence
 * its 256 bytes), not a position. Each call copies one entry under its
 * bucket's lock, the first of its bucket after the cursor (a chain's
 * length of compares), or passes empty buckets on to the next; nothing is
 * held between calls.
 *
 * A reseed (htab.h) rehashes every entry, and the order with it: a walk
 * across one answers -AK_ESTALE. While a growth or reseed moves entries it
 * answers -EBUSY, and resumes where it was once they are moved (a BPF
 * program's next update, or ak_htab_maintain, moves them on).
 *
 * Return: 0 (an entry copied); -ENOENT at the end (the cursor is reset);
 * -EBUSY (a lock stayed busy, or entries are moving: call again);
 * -AK_ESTALE (the table reseeded: the cursor is reset); -EINVAL (sizes, or
 * a table not initialised).
 */
#define ak_htab_next_copy_live(h, c, key, value)			\
	__ak_htab_copy_call(__ak_htab_next_copy_live, h, c, key, value)

#endif /* !__BPF__ */
#endif /* __ARENAKIT_HTAB_USER_H */
