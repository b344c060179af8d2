/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/htab_impl_common.h - what every path through a table starts
 * from, the BPF calls (htab.h) and the loader's copying walk (htab_user.h)
 * alike: a bucket word's chain, a node's value, holding the bucket array,
 * and a walk's cursor. Internal: included by <arenakit/htab_impl.h> and
 * <arenakit/htab_user.h>. Nothing here allocates or frees, so a loader
 * that reads a table links without the allocator.
 */
#if !defined(__ARENAKIT_HTAB_H) && !defined(__ARENAKIT_HTAB_USER_H)
#error "<arenakit/htab_impl_common.h> is internal: include <arenakit/htab.h> (or htab_user.h)"
#elif !defined(__ARENAKIT_HTAB_IMPL_COMMON_H)
#define __ARENAKIT_HTAB_IMPL_COMMON_H

#include <arenakit/htab_types.h>

/* The first node of the chain a bucket word holds, its flag bits masked off. */
static inline struct ak_htab_node __arena *__ak_htab_node_of(unsigned long long word)
{
	return (struct ak_htab_node __arena *)(word & ~(__AK_HTAB_LOCKED | __AK_HTAB_MOVED));
}

static inline void __arena *__ak_htab_value(const struct ak_htab __arena *h,
					    struct ak_htab_node __arena *node)
{
	return (void __arena *)&node->data[h->key_words];
}

/*
 * Count in as a caller that may hold the old array: before h->cur or
 * h->old is read. The protocol that keeps a held array from being freed
 * is at __ak_htab_moved_one (htab_impl_table.h).
 */
static inline void __ak_htab_hold(struct ak_htab __arena *h)
{
	ak_fetch_add(&h->movers, __AK_HTAB_MOVER);
}

/*
 * Count out, as a reader: one that never frees (it may have no allocator,
 * as user space reading through the mmap) and leaves a retired array it
 * was the last to hold to the next writer, maintain or growth. Writers
 * count out with __ak_htab_mover_leave (htab_impl_table.h).
 */
static inline void __ak_htab_unhold(struct ak_htab __arena *h)
{
	ak_fetch_add(&h->movers, -__AK_HTAB_MOVER);
}

static inline void __ak_htab_cursor_reset(struct ak_htab_cursor *c)
{
	c->htab = 0;
	c->gen = 0;
	c->bucket = 0;
	c->skip = 0;
}

/*
 * A walk's first step with @c starts it on @h; a later one resumes only if
 * @h did not change since: 0, or -AK_ESTALE.
 */
static inline int __ak_htab_cursor_begin(struct ak_htab __arena *h, struct ak_htab_cursor *c)
{
	if (!c->htab) {
		__ak_htab_cursor_reset(c);
		c->htab = h;
		c->gen = ak_read_once(h->gen);
		return 0;
	}
	return c->htab != h || c->gen != ak_read_once(h->gen) ? -AK_ESTALE : 0;
}

#endif /* __ARENAKIT_HTAB_IMPL_COMMON_H */
