/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/htab_impl_walk.h - the calls over the whole table: the check
 * (ak_htab_check_all, in chunks), ak_htab_maintain (finish a growth, which
 * the walk, clear and check do first), the walk (ak_htab_next,
 * ak_htab_delete_current), ak_htab_clear and ak_htab_destroy. Internal:
 * part of <arenakit/htab.h> (through htab_impl.h).
 */
#ifndef __ARENAKIT_HTAB_H
#error "<arenakit/htab_impl_walk.h> is internal: include <arenakit/htab.h>"
#elif !defined(__ARENAKIT_HTAB_IMPL_WALK_H)
#define __ARENAKIT_HTAB_IMPL_WALK_H

#include <arenakit/alloc.h>
#include <arenakit/lock.h>
#include <arenakit/keyed_impl.h>

/*
 * The steps a whole-table walk may take: the table's entries, checked
 * between chunks, so a chain that goes round a cycle ends the walk after
 * one chunk past them instead of AK_HTAB_MAX_NODES steps (seconds of a CPU
 * that a program run holds).
 */
static inline unsigned long long __ak_htab_max_steps(struct ak_htab __arena *h)
{
	unsigned long long count = ak_read_once(h->count);

	return count < AK_HTAB_MAX_NODES ? count + 1 : AK_HTAB_MAX_NODES;
}

/* Where a whole-table check is; zeroed by ak_htab_check_all. */
struct __ak_htab_check {
	unsigned long long gen;		/* the table's when the check began */
	unsigned long long bucket;	/* the next bucket to check */
	unsigned long long entries;	/* nodes in the buckets before it */
	unsigned long long steps;	/* nodes visited, cut chunks' included */
	unsigned long long bad;		/* the first node in the wrong chain */
};

__ak_global int __ak_htab_check_chunk(__arg_arena struct ak_htab __arena *h,
				      __ak_nonnull struct __ak_htab_check *c)
{
	struct __ak_htab_table __arena *t = ak_read_once(h->cur);
	struct ak_htab_node __arena *node;
	unsigned long long b, n;

	if (!t)
		return -EINVAL;
	if (ak_read_once(h->gen) != c->gen)
		return -AK_ESTALE;
	if (ak_read_once(h->old))
		return -EBUSY;	/* a growth began meanwhile */
	for (b = c->bucket + ak_opaque_zero(); b < t->nbuckets; b++) {
		ak_cond_break_label(cut);
		n = 0;
		/* A bucket is counted whole, or again from its start next chunk. */
		for (node = __ak_htab_node_of(t->buckets[b]); node; node = node->next) {
			ak_cond_break_label(cut);
			if (node->hash != __ak_htab_hash(t, node->data, h->key_words) ||
			    node->hash >> t->shift != b) {
				c->bad = (unsigned long long)node;
				return -EINVAL;
			}
			n++;
			c->steps++;
		}
		c->entries += n;
		c->bucket = b + 1;
	}
	if (c->entries != h->count)
		return -EINVAL;
	return 0;
cut:
	return -AK_EBUDGET;
}

static inline int ak_htab_check_all(struct ak_htab __arena *h, struct ak_htab_node __arena **bad)
{
	struct __ak_htab_check c = {};
	int err = ak_htab_maintain(h);	/* a growth in progress is finished first */

	if (bad)
		*bad = 0;
	if (err)
		return err;
	c.gen = h->gen;
	/* Past the count, a chain goes round (or the count is wrong). */
	err = __ak_walk_all(__ak_htab_check_chunk(h, &c), c.steps, __ak_htab_max_steps(h));
	if (bad)
		*bad = (struct ak_htab_node __arena *)c.bad;
	return err;
}

__ak_global int ak_htab_maintain(__arg_arena struct ak_htab __arena *h)
{
	struct __ak_htab_table __arena *old, *cur;
	unsigned long long i;
	int ret = 0;

	if (!ak_read_once(h->cur))
		return -EINVAL;
	if (!__ak_htab_mover_enter(h, &old, &cur))
		goto out;
	for (i = ak_opaque_zero(); i < old->nbuckets; i++) {
		ak_cond_break_label(cut);
		if (ak_read_once(h->old) != old)
			break;
		if (ak_read_once(old->buckets[i]) == __AK_HTAB_MOVED)
			continue;
		ret = __ak_htab_move_counted(h, old, cur, i);
		if (ret)
			goto out;
	}
	goto out;
cut:
	ret = -AK_EBUDGET;
out:
	__ak_htab_mover_leave(h, __AK_NOSLEEP);
	return ret;
}

__ak_global int ak_htab_next(__arg_arena struct ak_htab __arena *h,
			     __ak_nonnull struct ak_htab_cursor *c,
			     __ak_nonnull void __arena **key,
			     __ak_nonnull void __arena **value)
{
	struct __ak_htab_table __arena *t;
	struct ak_htab_node __arena *node;
	unsigned long long __arena *bucket;
	unsigned long long b, k;
	int err, fresh;

	err = ak_htab_maintain(h);
	if (err)
		return err;
	fresh = !c->htab;
	/*
	 * The generation first, then the hold, then the array and its buckets:
	 * the hold's fully ordered add orders the generation's read before
	 * every bucket's, so a bucket an insert filled before the bump this
	 * read saw is read full (complete or stale: htab_impl.h). The hold
	 * comes before h->cur is read: a growth that begins and ends during
	 * the walk moves the generation (the walk is stale), but cannot free
	 * the array this step reads and locks buckets of.
	 */
	err = __ak_htab_cursor_begin(h, c);
	__ak_htab_hold(h);
	if (err)
		goto stale;
	t = ak_read_once(h->cur);
	if (ak_read_once(h->old)) {
		if (fresh)
			__ak_htab_cursor_reset(c);	/* not begun: the next call begins */
		err = -EBUSY;
		goto out;
	}
	node = 0;
	for (b = c->bucket + ak_opaque_zero(); b < t->nbuckets; b++) {
		ak_cond_break_label(cut);
		bucket = &t->buckets[b];
		/* An empty bucket that fills meanwhile moves the generation. */
		if (!ak_read_once(*bucket)) {
			c->skip = 0;
			continue;
		}
		err = ak_bit_lock_acquire(bucket);
		if (err) {
			c->bucket = b;
			goto out;
		}
		node = __ak_htab_node_of(*bucket);
		for (k = ak_opaque_zero(); node && k < c->skip; k++) {
			ak_cond_break_label(cut_locked);
			node = node->next;
		}
		ak_bit_lock_release(bucket);
		if (node)
			break;
		if (c->gen != ak_read_once(h->gen))
			goto stale;
		c->skip = 0;
	}
	/*
	 * The generation is read last, after the count-out's fully ordered
	 * add: an entry returned was in the table, unchanged, after every
	 * other step of the call, and the empty buckets a walk ends on were
	 * read before the generation that says they still are.
	 */
	__ak_htab_mover_leave(h, __AK_NOSLEEP);
	if (c->gen != ak_read_once(h->gen))
		goto stale_left;
	if (!node) {
		__ak_htab_cursor_reset(c);
		return -ENOENT;
	}
	c->bucket = b;
	c->skip = k + 1;
	*key = (void __arena *)node->data;
	*value = __ak_htab_value(h, node);
	return 0;
cut_locked:
	ak_bit_lock_release(bucket);
cut:
	c->bucket = b;
	err = -AK_EBUDGET;
	goto out;
stale:
	__ak_htab_mover_leave(h, __AK_NOSLEEP);
stale_left:
	__ak_htab_cursor_reset(c);
	return -AK_ESTALE;
out:
	__ak_htab_mover_leave(h, __AK_NOSLEEP);
	return err;
}

__ak_global int ak_htab_delete_current(__arg_arena struct ak_htab __arena *h,
				       __ak_nonnull struct ak_htab_cursor *c)
{
	struct __ak_htab_table __arena *t;
	struct ak_htab_node __arena *node;
	unsigned long long __arena *bucket;
	unsigned long long __arena *link;
	unsigned long long k, gen;
	int err;

	if (!ak_read_once(h->cur))
		return -EINVAL;
	if (c->htab != h || !c->skip)
		goto stale;
	/* Held before h->cur is read, as in ak_htab_next: the array outlives the lock. */
	__ak_htab_hold(h);
	t = ak_read_once(h->cur);
	bucket = &t->buckets[c->bucket & (t->nbuckets - 1)];
	err = ak_bit_lock_acquire(bucket);
	if (err)
		goto out;
	/* Under the lock this chain holds still; the generation says the rest did. */
	if (c->gen != ak_read_once(h->gen) || ak_read_once(h->cur) != t) {
		ak_bit_lock_release(bucket);
		goto stale_held;
	}
	link = bucket;
	node = __ak_htab_node_of(*bucket);
	for (k = ak_opaque_zero(); node && k + 1 < c->skip; k++) {
		ak_cond_break_label(cut);
		link = (unsigned long long __arena *)&node->next;
		node = node->next;
	}
	if (!node) {
		ak_bit_lock_release(bucket);
		goto stale_held;
	}
	gen = __ak_htab_unlink_at(h, bucket, link, node);
	ak_bit_lock_release(bucket);
	__ak_htab_mover_leave(h, __AK_NOSLEEP);
	c->skip--;
	/* Only this delete since the walk's last step: the walk goes on. */
	if (gen == c->gen)
		c->gen = gen + 1;
	return ak_free_nosleep(node);
cut:
	ak_bit_lock_release(bucket);
	err = -AK_EBUDGET;
out:
	__ak_htab_mover_leave(h, __AK_NOSLEEP);
	return err;
stale_held:
	__ak_htab_mover_leave(h, __AK_NOSLEEP);
stale:
	__ak_htab_cursor_reset(c);
	return -AK_ESTALE;
}

__ak_global int ak_htab_clear(__arg_arena struct ak_htab __arena *h)
{
	struct __ak_htab_table __arena *t;
	struct ak_htab_node __arena *node;
	unsigned long long __arena *bucket;
	unsigned long long b;
	int err;

	if (!ak_read_once(h->cur))
		return -EINVAL;
	/*
	 * The grow lock keeps h->cur the array walked here: no growth can
	 * begin, so none can move its buckets or free it under this walk.
	 */
	err = ak_lock_acquire(&h->grow_lock);
	if (err)
		return err;
	err = ak_htab_maintain(h);
	if (err)
		goto out;
	t = ak_read_once(h->cur);
	for (b = ak_opaque_zero(); b < t->nbuckets; b++) {
		bucket = &t->buckets[b];
		while (ak_read_once(*bucket)) {
			ak_cond_break_label(cut);
			err = ak_bit_lock_acquire(bucket);
			if (err)
				goto out;
			node = __ak_htab_node_of(*bucket);
			if (node)
				__ak_htab_unlink_at(h, bucket, bucket, node);
			ak_bit_lock_release(bucket);
			if (node)
				ak_free(node);
		}
		ak_cond_break_label(cut);
	}
	goto out;
cut:
	err = -AK_EBUDGET;
out:
	ak_lock_release(&h->grow_lock);
	return err;
}

__ak_global int ak_htab_destroy(__arg_arena struct ak_htab __arena *h)
{
	struct __ak_htab_table __arena *cur;
	int err = ak_htab_clear(h);

	if (err)
		return err;
	cur = ak_xchg(&h->cur, 0);
	__ak_htab_table_free(h, cur, __AK_SLEEPABLE);
	__ak_htab_table_free(h, ak_xchg(&h->retired, 0), __AK_SLEEPABLE);
	h->key_size = 0;
	h->value_size = 0;
	ak_arena_store_barrier();
	h->movers = 0;
	h->gen++;
	return 0;
}

/* AK_HTAB_DEFINE_EACH_ALL: the chunk, a global function, and the walk over chunks. */
#define __AK_HTAB_DEFINE_EACH_ALL(name, fn)				\
__ak_global long long name##_chunk(__arg_arena struct ak_htab __arena *h,	\
				   __ak_nonnull struct ak_htab_cursor *cursor,	\
				   __ak_nonnull unsigned long long *seen,	\
				   __arg_arena void __arena *ctx)		\
{									\
	void __arena *key;						\
	void __arena *value;						\
	long long ret;							\
	int err;							\
									\
	for (;;) {							\
		err = ak_htab_next(h, cursor, &key, &value);		\
		if (err)						\
			return err == -ENOENT ? 0 : err;		\
		++*seen;						\
		ret = fn(key, value, ctx);				\
		if (ret) {						\
			__ak_htab_cursor_reset(cursor);			\
			return ret;					\
		}							\
		if (!ak_can_loop)					\
			return -AK_EBUDGET;				\
	}								\
}									\
									\
static inline long long name(struct ak_htab __arena *h, void __arena *ctx)	\
{									\
	struct ak_htab_cursor cursor = {};				\
	unsigned long long seen = 0;					\
									\
	return __ak_walk_all(name##_chunk(h, &cursor, &seen, ctx), seen,	\
			     __ak_htab_max_steps(h));			\
}

#endif /* __ARENAKIT_HTAB_IMPL_WALK_H */
