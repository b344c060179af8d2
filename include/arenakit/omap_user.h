/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/omap_user.h - the loader's side of omap.h: ak_omap_next_copy,
 * a range walk of a map through the arena's mmap while BPF programs write
 * it, each key and value copied under the map's lock. User space only.
 */
#ifndef __ARENAKIT_OMAP_USER_H
#define __ARENAKIT_OMAP_USER_H

#ifdef __BPF__
#error "<arenakit/omap_user.h> is for user space; BPF walks a map with ak_omap_next (omap.h)"
#elif defined(AK_ARENA_CLAMP)
#error "<arenakit/omap_user.h> reads an arena's mmap, where AK_ARENA_CLAMP's promise does not hold (arena.h)"
#else

/* The types and the read path only: a loader's walk allocates nothing. */
#include <arenakit/omap_types.h>
#include <arenakit/keyed_impl.h>
#include <arenakit/omap_impl_node.h>
#include <arenakit/omap_impl_read.h>

/* ak_omap_next_copy's body: @ks and @vs are the caller's sizes. */
static inline int __ak_omap_next_copy(struct ak_omap *m, struct ak_omap_cursor *c, void *key,
				      unsigned long long ks, void *value, unsigned long long vs)
{
	struct __ak_key4 found = {};
	unsigned long long v;
	int err = -EINVAL;

	if (ks != m->key_words * 8ULL || vs != m->value_size)
		return err;
	v = __ak_omap_step_impl(m, c, found.w, &err, 1);	/* returned with the lock held */
	if (!v)		/* never 0 then: said so that a compiler sees 0 only with the copies */
		return err < 0 ? err : -EFAULT;
	/* The value while the lock is held: a program may delete and free it after. */
	__builtin_memcpy(value, (const void *)v, vs);
	ak_lock_release(&m->lock);
	__builtin_memcpy(key, found.w, ks);
	return 0;
}

/**
 * ak_omap_next_copy - the next key and value of a range walk, copied
 * (user space, through the arena's mmap, while BPF programs write the map)
 * @m: the map (a struct ak_omap *)
 * @c: the walk's struct ak_omap_cursor *, from ak_omap_cursor_init
 * @key: where the key is copied (a pointer to the key type)
 * @value: where the value is copied (a pointer to the value type)
 *
 * As ak_omap_next, with the value copied under the map's lock: a walk
 * from a bound to an end, exact (-AK_ESTALE once the map changed) or
 * going on after its last key (every key present throughout once, in
 * order). Nothing is held between calls.
 *
 * Return: 0; -ENOENT at the end; -AK_ESTALE; -EINVAL (sizes); -EBUSY or
 * -AK_EBUDGET if the lock stayed busy (the cursor unchanged: call again).
 */
#define ak_omap_next_copy(m, c, key, value)				\
	({								\
		typeof(key) ___ak_ock = (key);				\
		typeof(value) ___ak_ocv = (value);			\
									\
		__ak_omap_next_copy(m, c, ___ak_ock, sizeof(*___ak_ock), ___ak_ocv, \
				    sizeof(*___ak_ocv));		\
	})

#endif /* !__BPF__ */

#endif /* __ARENAKIT_OMAP_USER_H */
