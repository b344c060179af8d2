/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/omap_impl_calls.h - the calls of omap.h: their out-of-line
 * versions per key width on the keyed spine (keyed_impl.h), the macros'
 * bodies, and init, count, trim, destroy, next and check.
 * Internal: part of <arenakit/omap.h> (through omap_impl.h).
 */
#ifndef __ARENAKIT_OMAP_H
#error "<arenakit/omap_impl_calls.h> is internal: include <arenakit/omap.h>"
#elif !defined(__ARENAKIT_OMAP_IMPL_CALLS_H)
#define __ARENAKIT_OMAP_IMPL_CALLS_H

#include <arenakit/alloc.h>
#include <arenakit/keyed_impl.h>

/* The widths the map's calls have versions for (keyed_impl.h), and its key rule. */
#define __AK_OMAP_WIDTHS __AK_WIDTHS_TO_4
#define __AK_OMAP_KEY_RULE "an omap key is 1 to 4 whole words"

/*
 * The out-of-line calls, one version per key width (a program links those
 * it calls): a call's budget is its own, and a program's frame holds only
 * the caller's part (the value's copy, which has the value's type). Each
 * works on a copy of the key in AK_OMAP_MAX_KEY bytes, which every loop
 * over a key's words stays within, whatever the map says its width is.
 *  - find: the value's address of the entry a mode asks for, its key in
 *    *@key_out (a read section, or the lock);
 *  - unlink: the entry of *@key (first: of the first key) out of the
 *    tree, its key in *@key_out, the lock held; the caller copies the
 *    value, then __ak_omap_take_end; a first key's unlink takes NULL for
 *    both (ak_omap_destroy);
 *  - begin_sleepable, begin_nosleep: __ak_omap_update_begin;
 *  - rekey: __ak_omap_rekey_locked; __AK_OMAP_REFILL when the spare
 *    stock is short (the caller fills it: __ak_omap_refill_sleepable or
 *    _nosleep, out of line, so no allocation runs below a tree's frame).
 */
/* find and unlink: @impl on a copy of the key, its key out copied back (@arg: the mode, first). */
#define __AK_OMAP_KEYED(n, name, impl)					\
__ak_global unsigned long long							\
__ak_omap_##name##n(__arg_arena struct ak_omap __arena *m,		\
		    const struct __ak_key##n *key, int arg,		\
		    struct __ak_key##n *key_out, __ak_nonnull int *err)	\
{									\
	unsigned long long k[__AK_OMAP_KW_MAX] = {}, out[__AK_OMAP_KW_MAX] = {}, r; \
									\
	if (key)							\
		__builtin_memcpy(k, key->w, sizeof(key->w));		\
	r = impl(m, k, arg, out, err);					\
	if (key_out)							\
		__builtin_memcpy(key_out->w, out, sizeof(key_out->w));	\
	return r;							\
}

/* begin_sleepable, begin_nosleep: the allocator's two kinds (a program sees only its own). */
#define __AK_OMAP_BEGIN(kind, n)					\
__ak_global unsigned long long							\
__ak_omap_begin_##kind##n(__arg_arena struct ak_omap __arena *m,		\
			  __ak_nonnull const struct __ak_key##n *key,	\
			  unsigned int flags, __ak_nonnull struct __ak_omap_update *u) \
{									\
	unsigned long long k[__AK_OMAP_KW_MAX] = {};			\
									\
	__builtin_memcpy(k, key->w, sizeof(key->w));			\
	return (unsigned long long)__ak_omap_update_begin(m, k, flags, __AK_KIND(kind), u); \
}

/* rekey: __ak_omap_rekey_locked on copies of both keys, under the lock. */
#define __AK_OMAP_REKEY(n)						\
__ak_global int __ak_omap_rekey##n(__arg_arena struct ak_omap __arena *m,		\
				   __ak_nonnull const struct __ak_key##n *key,	\
				   __ak_nonnull const struct __ak_key##n *to)	\
{									\
	unsigned long long k[__AK_OMAP_KW_MAX] = {}, t[__AK_OMAP_KW_MAX] = {}; \
	int err = __ak_omap_lock(m);					\
									\
	if (err)							\
		return err;						\
	__builtin_memcpy(k, key->w, sizeof(key->w));			\
	__builtin_memcpy(t, to->w, sizeof(to->w));			\
	err = __ak_omap_rekey_locked(m, k, t);				\
	__ak_omap_unlock(m);					\
	return err;							\
}

#define __AK_OMAP_WIDTH(n, ...)						\
__AK_OMAP_KEYED(n, find, __ak_omap_find_impl)				\
__AK_OMAP_KEYED(n, unlink, __ak_omap_unlink_impl)			\
__AK_KINDS(__AK_OMAP_BEGIN, n)						\
__AK_OMAP_REKEY(n)

__AK_OMAP_WIDTHS(__AK_OMAP_WIDTH, )

/* A walk's step works on the cursor's key copy, whatever the width: one version. */
__ak_global unsigned long long __ak_omap_step(__arg_arena struct ak_omap __arena *m,
					      __ak_nonnull struct ak_omap_cursor *c,
					      __ak_nonnull struct __ak_key4 *found,
					      __ak_nonnull int *err)
{
	return __ak_omap_step_impl(m, c, found->w, err, 0);
}

/* Call @fn's version for keys of @words words (a constant: the rest fold away). */
#define __AK_OMAP_BY_WIDTH(fn, words, ...)				\
	__AK_BY_WIDTH(__AK_OMAP_WIDTHS, __AK_OMAP_KEY_RULE, fn, words, __VA_ARGS__)

/* A key type's check: whole words, at most AK_OMAP_MAX_KEY bytes. */
#define __ak_omap_key_ok(k)						\
	_Static_assert(sizeof(*(k)) % 8 == 0 && sizeof(*(k)) <= AK_OMAP_MAX_KEY, \
		       __AK_OMAP_KEY_RULE)

/* The words a version takes for *@key: whole words, taken where they are. */
#define __ak_omap_key_words(buf, key)					\
	({								\
		__ak_omap_key_ok(key);					\
		__ak_key_words(buf, key, 0);				\
	})

/*
 * A find of @mode: the value's address, the key copied to @key_out (NULL:
 * not wanted).
 */
#define __ak_omap_find(m, key, mode, key_out, errp)			\
	({								\
		struct ak_omap __arena *___ak_fm = (m);			\
		typeof(key) ___ak_fk = (key);				\
		unsigned long long ___ak_fkb[__AK_KEY_WORDS(sizeof(*___ak_fk))]; \
		unsigned long long ___ak_fout[sizeof(*___ak_fk) / 8];	\
		void *___ak_fo = (key_out);				\
		int *___ak_fe = (errp), ___ak_ferr = -EINVAL;		\
		unsigned long long ___ak_fv = 0;			\
		const void *___ak_fkp = __ak_omap_key_words(___ak_fkb, ___ak_fk); \
									\
		if (sizeof(*___ak_fk) == ___ak_fm->key_words * 8)	\
			___ak_fv = __AK_OMAP_BY_WIDTH(__ak_omap_find,	\
						      __AK_KEY_WORDS(sizeof(*___ak_fk)), \
						      ___ak_fm, ___ak_fkp, (mode), \
						      (void *)___ak_fout, &___ak_ferr); \
		if (___ak_fv && ___ak_fo)				\
			__builtin_memcpy(___ak_fo, ___ak_fout, sizeof(___ak_fout)); \
		if (!___ak_fv && ___ak_fe)				\
			*___ak_fe = ___ak_ferr;				\
		(void __arena *)___ak_fv;				\
	})

/* First or last: @key_out is both the key's type and where it goes, bound once. */
#define __ak_omap_find_end(m, key_out, mode, errp)			\
	({								\
		typeof(key_out) ___ak_eo = (key_out);			\
									\
		__ak_omap_find(m, ___ak_eo, mode, ___ak_eo, errp);	\
	})

/* ak_omap_update[_nosleep]: the value stored while the lock the begin took is held. */
#define __ak_omap_update(m, key, value, flags, kind)			\
	({								\
		struct ak_omap __arena *___ak_um = (m);			\
		typeof(key) ___ak_uk = (key);				\
		typeof(value) ___ak_uval = (value);			\
		unsigned long long ___ak_ukb[__AK_KEY_WORDS(sizeof(*___ak_uk))]; \
		struct __ak_omap_update ___ak_u = { .err = -EINVAL };	\
		const void *___ak_ukp = __ak_omap_key_words(___ak_ukb, ___ak_uk); \
		void __arena *___ak_uv;					\
									\
		if (sizeof(*___ak_uk) == ___ak_um->key_words * 8 &&	\
		    sizeof(*___ak_uval) == ___ak_um->value_size) {	\
			___ak_uv = (void __arena *)__AK_OMAP_BY_WIDTH(__ak_omap_begin_##kind, \
				__AK_KEY_WORDS(sizeof(*___ak_uk)), ___ak_um, ___ak_ukp, \
				(flags), &___ak_u);			\
			__ak_keyed_store_held(___ak_uv, 1, ___ak_uv, ___ak_uval, \
					      __ak_omap_update_end(___ak_um, &___ak_u)); \
		}							\
		___ak_u.err;						\
	})

/*
 * A rekey of *@key to *@to, keys of one type; the spare stock filled
 * (@kind: the allocator's kind) and the rekey tried again when it fell
 * short, at most 4 times (-EBUSY: other CPUs took the nodes each time).
 */
#define __ak_omap_rekey(m, key, to, kind)				\
	({								\
		struct ak_omap __arena *___ak_rm = (m);			\
		typeof(key) ___ak_rk = (key);				\
		typeof(key) ___ak_rt = (to);				\
		unsigned long long ___ak_rkb[__AK_KEY_WORDS(sizeof(*___ak_rk))]; \
		unsigned long long ___ak_rtb[__AK_KEY_WORDS(sizeof(*___ak_rk))]; \
		const void *___ak_rkp = __ak_omap_key_words(___ak_rkb, ___ak_rk); \
		const void *___ak_rtp = __ak_omap_key_words(___ak_rtb, ___ak_rt); \
		int ___ak_rerr = -EINVAL;				\
		unsigned int ___ak_rtry;				\
									\
		for (___ak_rtry = 0; ___ak_rtry < 4 &&			\
		     sizeof(*___ak_rk) == ___ak_rm->key_words * 8; ___ak_rtry++) { \
			___ak_rerr = __AK_OMAP_BY_WIDTH(__ak_omap_rekey,	\
				__AK_KEY_WORDS(sizeof(*___ak_rk)), ___ak_rm, ___ak_rkp, \
				___ak_rtp);				\
			if (___ak_rerr != __AK_OMAP_REFILL)		\
				break;					\
			___ak_rerr = __ak_omap_refill_##kind(___ak_rm) ?: -EBUSY; \
			if (___ak_rerr != -EBUSY)			\
				break;					\
		}							\
		___ak_rerr;						\
	})

/*
 * Unlink (@first: the first key's entry), copy the key and value out
 * while the lock the unlink took is held, keep the entry.
 */
#define __ak_omap_take(m, key, first, key_out, value)			\
	({								\
		struct ak_omap __arena *___ak_tm = (m);			\
		typeof(key) ___ak_tk = (key);				\
		unsigned long long ___ak_tkb[__AK_KEY_WORDS(sizeof(*___ak_tk))]; \
		unsigned long long ___ak_tout[sizeof(*___ak_tk) / 8];	\
		typeof(value) ___ak_tval = (value);			\
		void *___ak_to = (key_out);				\
		const void *___ak_tkp = __ak_omap_key_words(___ak_tkb, ___ak_tk); \
		int ___ak_terr = -EINVAL;				\
		unsigned long long ___ak_te = 0;			\
									\
		if (sizeof(*___ak_tk) == ___ak_tm->key_words * 8 &&	\
		    (!___ak_tval || sizeof(*___ak_tval) == ___ak_tm->value_size)) \
			___ak_te = __AK_OMAP_BY_WIDTH(__ak_omap_unlink,	\
						      __AK_KEY_WORDS(sizeof(*___ak_tk)), \
						      ___ak_tm, ___ak_tkp, (first), \
						      (void *)___ak_tout, &___ak_terr); \
		__ak_keyed_fetch_held(___ak_te, ___ak_tval, ___ak_tval,	\
				      (unsigned long long __arena *)___ak_te +	\
				      sizeof(*___ak_tk) / 8,			\
				      __ak_omap_take_end(___ak_tm, (void __arena *)___ak_te)); \
		if (___ak_te) {						\
			if (___ak_to)					\
				__builtin_memcpy(___ak_to, ___ak_tout, sizeof(___ak_tout)); \
			___ak_terr = 0;					\
		} else if (___ak_terr >= 0) {				\
			/* Never: said so that a verifier sees 0 only with the copies made. */ \
			___ak_terr = -EFAULT;				\
		}							\
		___ak_terr;						\
	})

/* The calls (omap.h). */

static inline int ak_omap_init(struct ak_omap __arena *m, unsigned int key_size,
			       unsigned int value_size)
{
	__ak_omap_node_t root;
	int err = 0;

	if (!key_size || key_size % 8 || key_size > AK_OMAP_MAX_KEY || !value_size ||
	    value_size > AK_OMAP_MAX_VALUE || m->depth)
		return -EINVAL;
	root = ak_alloc(__ak_omap_node_size(key_size / 8), &err);
	if (!root)
		return err;
	root->nkeys = 0;
	root->leaf = 1;
	root->start = 0;
	root->next = 0;
	m->key_words = key_size / 8;
	m->value_size = value_size;
	m->entry_size = key_size + (value_size + 7) / 8 * 8;	/* the value word-aligned */
	m->count = 0;	/* the spare nodes and kept entries: none in a zeroed or destroyed map */
	m->root = root;
	m->head = root;
	m->depth = 1;
	return 0;
}

static inline unsigned long long ak_omap_count(const struct ak_omap __arena *m)
{
	unsigned long long gen, count;
	unsigned int tries;

	/* Between changes: a rekey's count is one more for a moment, between its link and unlink. */
	for (tries = 0; tries < __AK_OMAP_READ_TRIES; tries++) {
		gen = __ak_omap_read_begin(m);
		if (gen & 1) {
			ak_spin_wait();
			continue;
		}
		count = ak_read_once(m->count);
		if (__ak_omap_read_end(m, gen))
			return count;
	}
	return ak_read_once(m->count);
}

/*
 * The spare nodes, and an empty map's chunks, freed one at a time, each
 * taken out under the lock: a trim the budget cut leaves the rest, and
 * goes on when called again. Under the lock every entry is in the tree or
 * idle, so with no key in the map the chunks hold no entry in use: they
 * move to m->retired at once (the idle list emptied with them), and are
 * freed from there. Out of line, as __ak_omap_destroy.
 */
__ak_global int __ak_omap_trim(__arg_arena struct ak_omap __arena *m)
{
	void __arena *kept;
	int err;

	while (ak_can_loop) {
		err = ak_lock_acquire(&m->lock);
		if (err)
			return err;
		if (!m->count && m->chunks && !m->retired) {
			m->retired = m->chunks;
			/* Plain stores of 0 side by side lose their arena cast (clang 19). */
			ak_write_once(m->chunks, 0);
			ak_write_once(m->idle, 0);
			ak_write_once(m->nidle, 0);
		}
		kept = m->retired;
		if (kept) {
			m->retired = (unsigned long long __arena *)(unsigned long)m->retired[0];
		} else if (m->spare) {
			kept = m->spare;
			m->spare = m->spare->next;
			m->nspare--;
		}
		__ak_omap_unlock(m);
		if (!kept)
			return 0;
		ak_free_nosleep(kept);
	}
	return -AK_EBUDGET;
}

static inline int ak_omap_trim(struct ak_omap __arena *m)
{
	return __ak_omap_trim(m);
}

/* Out of line: its loops are checked once, whatever loops its caller runs it in. */
__ak_global int __ak_omap_destroy(__arg_arena struct ak_omap __arena *m)
{
	unsigned long long entry;
	__ak_omap_node_t root;
	int err = 0;

	/*
	 * The first key's entry at a time, through the out-of-line unlink (any
	 * width's version: it is given no key and copies none out): each take
	 * leaves a whole tree, so a destroy the budget cut goes on where it
	 * stopped. The entries are kept, then freed with the rest the map keeps.
	 */
	while (ak_read_once(m->count) && ak_can_loop) {	/* each take lowers the count */
		entry = __ak_omap_unlink1(m, NULL, 1, NULL, &err);
		if (!entry)
			break;
		__ak_omap_take_end(m, (unsigned long long __arena *)entry);
	}
	if (err && err != -ENOENT)
		return err;
	err = __ak_omap_trim(m);
	if (err)
		return err;
	err = __ak_omap_lock(m);
	if (err)
		return err;
	if (m->count || m->chunks || m->retired || m->spare) {
		__ak_omap_unlock(m);
		return -AK_EBUDGET;	/* call again: it goes on */
	}
	root = m->root;
	m->root = 0;
	ak_write_once(m->head, 0);	/* as in __ak_omap_trim */
	m->depth = 0;
	__ak_omap_unlock(m);
	ak_free_nosleep(root);
	return 0;
}

static inline int ak_omap_destroy(struct ak_omap __arena *m)
{
	return __ak_omap_destroy(m);
}

/*
 * The walk's next entry: one step from the cursor, in a read section; its
 * key copied to *@key_out and its value's address to *@value_out.
 */
#define __ak_omap_next(m, c, key_out, value_out)			\
	({								\
		struct ak_omap __arena *___ak_nm = (m);			\
		typeof(key_out) ___ak_nko = (key_out);			\
		typeof(value_out) ___ak_nvo = (value_out);		\
		struct __ak_key4 ___ak_nfound = {};			\
		int ___ak_nerr = -EINVAL;				\
		unsigned long long ___ak_nv = 0;			\
									\
		__ak_omap_key_ok(___ak_nko);				\
		if (sizeof(*___ak_nko) == ___ak_nm->key_words * 8)	\
			___ak_nv = __ak_omap_step(___ak_nm, (c), &___ak_nfound, &___ak_nerr); \
		if (___ak_nv) {						\
			__builtin_memcpy(___ak_nko, ___ak_nfound.w, sizeof(*___ak_nko)); \
			*___ak_nvo = (void __arena *)___ak_nv;		\
			___ak_nerr = 0;					\
		} else if (___ak_nerr >= 0) {				\
			___ak_nerr = -EFAULT;	/* never: as __ak_omap_take's */ \
		}							\
		___ak_nerr;						\
	})

/*
 * Depth first, in order: every leaf at the bottom and met in the order of
 * the leaves' links, the keys strictly increasing across them, each
 * separator above every key before it and at most the first key after it,
 * and each entry holding its key.
 */
static inline int ak_omap_check(struct ak_omap __arena *m)
{
	__ak_omap_node_t node[AK_OMAP_MAX_DEPTH], next_leaf, n;
	unsigned long long keys = 0, last[__AK_OMAP_KW_MAX] = {}, lower[__AK_OMAP_KW_MAX] = {};
	unsigned int at[AK_OMAP_MAX_DEPTH], kw, i;
	int d = 0, have_last = 0, have_lower = 0, err = __ak_omap_lock(m);
	struct __ak_omap_path p;

	if (err)
		return err;
	kw = m->key_words;
	node[0] = m->root;
	at[0] = 0;
	next_leaf = __ak_omap_descend(m, __AK_OMAP_LEFTMOST, &p);
	if (next_leaf != m->head)
		err = -EINVAL;
	while (d >= 0 && !err && ak_can_loop) {
		n = node[d];
		if (n->start + n->nkeys > AK_OMAP_FANOUT || (d && !n->nkeys) ||
		    n->leaf != (d + 1 == (int)m->depth) || (!n->leaf && n->start)) {
			/* Keys past the node's end, an empty node, a leaf not at the bottom. */
			err = -EINVAL;
			break;
		}
		if (n->leaf) {
			if (n != next_leaf)
				err = -EINVAL;
			if (!err && have_lower && n->nkeys &&
			    __ak_omap_cmp(__ak_omap_key(m, n, 0), lower, kw) < 0)
				err = -EINVAL;
			have_lower = 0;
			for (i = 0; !err && i < n->nkeys; i++) {
				if (have_last && __ak_omap_cmp(__ak_omap_key(m, n, i), last, kw) <= 0)
					err = -EINVAL;
				__ak_omap_key_get(last, m, n, i);
				have_last = 1;
				if (!__ak_omap_entry(m, n, i) ||
				    __ak_omap_cmp(__ak_omap_entry(m, n, i), last, kw))
					err = -EINVAL;	/* an entry that is not its key's */
			}
			keys += n->nkeys;
			next_leaf = n->next;
			d--;
			continue;
		}
		if (at[d] > n->nkeys) {
			d--;
			continue;
		}
		if (at[d] > 0) {
			/* Key at[d] - 1 lies between child at[d] - 1's keys and child at[d]'s. */
			if (have_last && __ak_omap_cmp(__ak_omap_key(m, n, at[d] - 1), last, kw) <= 0)
				err = -EINVAL;
			__ak_omap_key_get(lower, m, n, at[d] - 1);
			have_lower = 1;
		}
		if (d + 1 >= AK_OMAP_MAX_DEPTH) {
			err = -EINVAL;
			break;
		}
		node[d + 1] = __ak_omap_child(m, n, at[d]);
		at[d + 1] = 0;
		at[d]++;
		d++;
	}
	if (!err && d >= 0)
		err = -AK_EBUDGET;	/* the budget cut the walk: nothing found wrong so far */
	if (!err && (next_leaf || keys != m->count))
		err = -EINVAL;
	__ak_omap_unlock(m);
	return err;
}

#endif /* __ARENAKIT_OMAP_IMPL_CALLS_H */
