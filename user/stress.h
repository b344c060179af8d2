/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the stress programs (user/stress_NAME.bpf.c, one a scenario, and
 * user/stress_list.bpf.c for the list three of them share) and `arenakit
 * stress` (user/stress*.c) share: the list entry, the walks, the ways a link
 * can be broken, and each scenario's constants and layouts.
 */
#ifndef ARENAKIT_STRESS_H
#define ARENAKIT_STRESS_H

#include <arenakit/list.h>

#define STRESS_ARENA_PAGES (1 << 20)	/* 4 GiB of address space, the most */
#define STRESS_SLAB_ITEMS 65536		/* items per allocation (1.5 MiB) */
#define STRESS_MAX_SLABS 2048		/* 134M items at most */
#define STRESS_ITEMS_PER_RUN (16ULL << 20)	/* a build run's share: short runs */
#define STRESS_GLOB_BYTES 8192		/* pattern and string buffers */

/*
 * The next state of xorshift64 (shifts 13, 7, 17; never 0 from non-zero):
 * the BPF programs draw with it and user space replays their draws with it,
 * so both must be this one function.
 */
static inline unsigned long long stress_xorshift(unsigned long long x)
{
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return x;
}

struct stress_item {
	struct ak_list_node node;
	unsigned long long key;		/* its index in the list */
};

/* The walks each scenario runs over the list; each result is a count or an error. */
enum stress_walk {
	STRESS_COUNT_ONCE,	/* ak_list_count, no cursor: one frame's budget */
	STRESS_COUNT_ALL,	/* ak_list_count_all: chunks, one run */
	STRESS_FOR_EACH,	/* ak_list_for_each_entry + ak_list_walk_status */
	STRESS_FIND_ALL,	/* ak_list_find_all of a key no item has: 0 = not found */
	STRESS_CHECK_ALL,	/* ak_list_check_all: 0 = sound */
	STRESS_WALKS
};

/* How set_link breaks the next link of item @index. */
enum stress_link {
	STRESS_LINK_ITEM,	/* to item @target: a cycle when target <= index */
	STRESS_LINK_VALUE,	/* to the value @target: garbage */
	STRESS_LINK_PAGE0,	/* into the arena's page 0, never allocated */
	STRESS_LINK_FREED,	/* into a page allocated and freed again */
	STRESS_LINK_RESTORE,	/* back as it was */
};

/* misuse: what the program injected, and how many of them the library caught. */
#define STRESS_MISUSE_SLOTS 4096	/* live objects at most (a power of two) */
#define STRESS_MISUSE_OPS_PER_RUN 4096	/* a run's share: short runs, as for concurrent */

struct stress_misuse_counts {
	unsigned long long allocs, frees;		/* legitimate, and succeeded */
	unsigned long long alloc_failed, free_failed;	/* legitimate, and refused */
	unsigned long long doubles, doubles_caught;	/* a second free of an object */
	unsigned long long interiors, interiors_caught;	/* a free inside an object */
	unsigned long long foreigns, foreigns_caught;	/* a free of an arena global */
	unsigned long long stales, stales_caught;	/* a cursor resumed after a change */
};

/*
 * model: batches of random operations on a list and a hash table, which
 * user space draws, applies to its own model and checks against what the
 * BPF side returned and left behind.
 */
#define STRESS_MODEL_BATCH 4096		/* operations per batch */
#define STRESS_MODEL_KEYS 2048		/* keys are drawn below this */

enum stress_op_kind {
	STRESS_OP_LIST_ADD_HEAD,	/* a new item @key at the head */
	STRESS_OP_LIST_ADD_TAIL,	/* at the tail */
	STRESS_OP_LIST_DEL,		/* the first item @key, freed: 0 or -ENOENT */
	STRESS_OP_LIST_POP,		/* the head, freed: its key or -ENOENT */
	STRESS_OP_LIST_TO_TAIL,		/* the first item @key moved to the tail */
	STRESS_OP_HTAB_UPDATE,		/* ak_htab_update(@key, @value, @flags) */
	STRESS_OP_HTAB_DELETE,		/* ak_htab_delete(@key) */
	STRESS_OP_HTAB_LOOKUP,		/* ak_htab_lookup(@key): the value or the error */
	STRESS_OP_HTAB_TAKE,		/* ak_htab_lookup_and_delete: the value or the error */
	STRESS_OP_KINDS
};

struct stress_op {
	unsigned int kind;
	unsigned int flags;
	unsigned long long key;
	unsigned long long value;	/* values stay below 2^62: never an error */
	long long result;
};

/*
 * concurrent: STRESS_CONC_THREADS writers, pinned across the CPUs, draw
 * operations (xorshift64 from the seed and the thread) on one list under
 * an ak_lock and one hash table, each on keys of its own (so a replay of a
 * thread's log alone says what it left), and log every result.
 */
#define STRESS_CONC_THREADS 4
#define STRESS_CONC_OPS 65536		/* per thread, at most */
#define STRESS_CONC_KEYS 512		/* table keys per thread */
#define STRESS_CONC_OPS_PER_RUN 256	/* a run's share: short runs */

struct stress_conc_thread {
	unsigned long long rng;		/* the generator's state */
	unsigned long long done;	/* operations made */
	unsigned long long ops;		/* operations wanted */
	unsigned long long pushed;	/* items it added: the next item's number */
};

/* A thread's item key: its number in the high half, its count below. */
#define STRESS_CONC_ITEM(tid, n) ((unsigned long long)(tid) << 32 | (n))
/* A table key and a value that names it: a reader can tell a foreign one. */
#define STRESS_CONC_KEY(tid, k) ((unsigned int)(tid) << 20 | (k))
#define STRESS_CONC_VALUE(key, op) ((unsigned long long)(key) << 24 | ((op) & 0xffffff))

/*
 * exhaust (user/stress_exhaust.bpf.c): an arena of 128 pages, which the
 * filler can take whole, in at most this many objects.
 */
#define STRESS_EXHAUST_PAGES 128
#define STRESS_EXHAUST_FILLERS 8192

/*
 * omap: an ordered map built to sizes up to 10M keys (key i is
 * stress_omap_key(i), distinct and in no order; its value the key's
 * stress_omap_value), walked across runs, looked up, drained; then random
 * operations on keys below STRESS_OMAP_MODEL_KEYS against a model.
 */
#define STRESS_OMAP_MODEL_KEYS 4096
#define STRESS_OMAP_BATCH 4096

static inline unsigned long long stress_omap_key(unsigned long long i)
{
	return (unsigned int)(i * 2654435761u) | i >> 32 << 32;
}

static inline unsigned long long stress_omap_value(unsigned long long key)
{
	return key * 3 + 1;
}

enum stress_omap_op_kind {
	STRESS_OMAP_INSERT,	/* @flags: AK_OMAP_ANY, NOEXIST or EXIST */
	STRESS_OMAP_DELETE,	/* lookup_and_delete: its value in @out_value */
	STRESS_OMAP_LOOKUP,
	STRESS_OMAP_BOUND,	/* @flags: 1 strict */
	STRESS_OMAP_POP,
	STRESS_OMAP_STEP,	/* a live walk's step; @flags 1: a new walk from @key */
	STRESS_OMAP_KINDS
};

struct stress_omap_op {
	unsigned int kind, flags;
	unsigned long long key, value;
	long long result;
	unsigned long long out_key, out_value;
};

/* The figures the edge programs leave for user space. */
struct stress_omap_edge {
	unsigned long long next;	/* the next index a resumable program takes */
	unsigned long long n;		/* keys built */
	unsigned long long walked;	/* keys a walk returned */
	unsigned long long last;	/* the last key a walk or drain returned */
	unsigned long long wrong;	/* out of order, a wrong value, a key missing */
	unsigned long long runs;	/* program runs a walk took */
	long long err;			/* the first error other than a cut */
};

#endif
