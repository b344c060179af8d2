// SPDX-License-Identifier: GPL-2.0
/*
 * The arena ordered map against bpf_rbtree_* under its bpf_spin_lock, and
 * against the arena hash table for point lookups, side by side in one
 * program: inserts of keys in a random order, lookups that hit, range
 * walks over every key, pops of the smallest until empty, each timed in
 * BPF with bpf_ktime_get_ns() around its loop. Every side ends empty, so
 * runs repeat; the counts let the driver (bench/omap_vs_rbtree.c) check
 * that every lookup found its key and every walk and pop came in order.
 */
#define AK_ARENA_PAGES 262144
#define AK_HTAB_PROG_MAX_KEY 8	/* the longest key its tables take */
#include <arenakit/htab.h>
#include <arenakit/omap.h>
#include <bpf/bpf_core_read.h>
#include "omap_vs_rbtree.h"
#include "phase.bpf.h"

/* The kfuncs of BPF's own rbtree (kernel/bpf/helpers.c); vmlinux.h has no prototypes. */
extern void *bpf_obj_new_impl(__u64 local_type_id__k, void *meta__ign) __ksym;
extern void bpf_obj_drop_impl(void *kptr, void *meta__ign) __ksym;
extern int bpf_rbtree_add_impl(struct bpf_rb_root *root, struct bpf_rb_node *node,
			       bool (less)(struct bpf_rb_node *a, const struct bpf_rb_node *b),
			       void *meta__ign, __u64 off) __ksym;
extern struct bpf_rb_node *bpf_rbtree_first(struct bpf_rb_root *root) __ksym;
extern struct bpf_rb_node *bpf_rbtree_remove(struct bpf_rb_root *root,
					     struct bpf_rb_node *node) __ksym;

/* An rbtree's root names its nodes' type and their link's field for the verifier. */
#define __contains(type, field) __attribute__((btf_decl_tag("contains:" #type ":" #field)))
/* The lock and the root it guards share a section of their own, as the verifier wants. */
#define __rb_section SEC(".data.rb") __hidden __attribute__((aligned(8)))

struct rb_elem {
	struct bpf_rb_node node;
	__u64 key;
	__u64 value;
};

__rb_section struct bpf_spin_lock rb_lock;
__rb_section struct bpf_rb_root rb_root __contains(rb_elem, node);

struct ak_omap __arena_global omap;
struct ak_htab __arena_global table;

struct omap_bench_result result;
struct bench_phase phase;
unsigned int entries;	/* set by user space */
unsigned int reps;	/* lookup and walk passes */
struct ak_omap_cursor walk;	/* the walk of the pass under way */
/*
 * The pass's last walked or popped key, if any: globals, which the
 * verifier does not track (a loop index tested against 0 would be a
 * constant to it, a state per iteration).
 */
__u64 last_key;
int have_last;

/* Distinct keys in a random order: i times an odd constant, a bijection of 32 bits. */
static __u64 key_of(__u32 i)
{
	return (__u32)(i * 2654435761u);
}

static bool rb_less(struct bpf_rb_node *a, const struct bpf_rb_node *b)
{
	return container_of(a, struct rb_elem, node)->key <
	       container_of(b, struct rb_elem, node)->key;
}

/* A walked or popped key: above the pass's last, unless it is the pass's first. */
static void in_order(__u64 k)
{
	if (have_last && k <= last_key)
		result.disorder++;
	last_key = k;
	have_last = 1;
}

/* A pass begins (its first chunk's first key is 0): no key before, a new walk. */
static void pass_begins(__u32 from)
{
	if (from)
		return;
	have_last = 0;
	ak_omap_cursor_init(&walk, (__u64 *)NULL, (__u64 *)NULL, 0);
}

/*
 * Keys [from, to) through one operation on one side, each side's a global
 * function (the verifier checks it once, and each chunk has a loop budget
 * of its own). Returns the index it reached: short of @to only when the
 * budget cut it (BENCH_TIMED resumes there); an operation that failed
 * counts in result.errors.
 */
__noinline int omap_insert_chunk(__u32 from, __u32 to)
{
	__u64 k, v = 1, errors = 0;
	__u32 i;
	int err = 0;

	for (i = from; i < to && can_loop; i++) {
		k = key_of(i);
		err = ak_omap_update(&omap, &k, &v, AK_OMAP_NOEXIST);
		if (err == -AK_EBUDGET || err == -EBUSY)
			break;	/* resumed at this key */
		errors += err != 0;
	}
	result.errors += errors;
	return i;
}

__noinline int omap_lookup_chunk(__u32 from, __u32 to)
{
	__u64 k, found = 0;
	__u32 i;
	int err = 0;

	for (i = from; i < to && can_loop; i++) {
		k = key_of(i);
		found += ak_omap_lookup(&omap, &k, &err) != NULL;
	}
	result.found += found;
	return i;
}

/*
 * Walk steps and pops: keys in order, each above the last. Two functions,
 * not one: one frame holding both calls' copies passes the stack's limit
 * with the calls below them.
 */
__noinline int omap_walk_chunk(__u32 from, __u32 to)
{
	__u64 __arena *v;
	__u64 k, errors = 0;
	__u32 i;
	int err = 0;

	pass_begins(from);
	for (i = from; i < to && can_loop; i++) {
		err = ak_omap_next(&omap, &walk, &k, &v);
		if (!err) {
			in_order(k);
			result.walked++;
		} else if (err == -AK_EBUDGET || err == -EBUSY) {
			break;	/* resumed at this key */
		} else {
			errors++;
		}
	}
	result.errors += errors;
	return i;
}

__noinline int omap_pop_chunk(__u32 from, __u32 to)
{
	__u64 k, v, errors = 0;
	__u32 i;
	int err = 0;

	pass_begins(from);
	for (i = from; i < to && can_loop; i++) {
		err = ak_omap_pop_first(&omap, &k, &v);
		if (!err) {
			in_order(k);
			result.popped++;
		} else if (err == -AK_EBUDGET || err == -EBUSY) {
			break;
		} else {
			errors++;
		}
	}
	result.errors += errors;
	return i;
}

__noinline int rbtree_chunk(__u32 op, __u32 from, __u32 to)
{
	struct bpf_rb_node *n;
	struct rb_elem *e;
	__u64 errors = 0;
	__u32 i;

	pass_begins(from);
	for (i = from; i < to && can_loop; i++) {
		if (op == OMAP_INSERT) {
			e = bpf_obj_new_impl(bpf_core_type_id_local(struct rb_elem), NULL);
			if (!e) {
				errors++;
				continue;
			}
			e->key = key_of(i);
			e->value = 1;
			bpf_spin_lock(&rb_lock);
			bpf_rbtree_add_impl(&rb_root, &e->node, rb_less, NULL, 0);
			bpf_spin_unlock(&rb_lock);
			continue;
		}
		bpf_spin_lock(&rb_lock);
		n = bpf_rbtree_first(&rb_root);
		if (n)
			n = bpf_rbtree_remove(&rb_root, n);
		bpf_spin_unlock(&rb_lock);
		if (!n) {
			errors++;
			continue;
		}
		e = container_of(n, struct rb_elem, node);
		in_order(e->key);
		result.popped++;
		bpf_obj_drop_impl(e, NULL);
	}
	result.errors += errors;
	return i;
}

__noinline int htab_chunk(__u32 op, __u32 from, __u32 to)
{
	__u64 k, v = 1, found = 0, errors = 0;
	__u32 i;
	int err = 0;

	for (i = from; i < to && can_loop; i++) {
		k = key_of(i);
		if (op == OMAP_LOOKUP) {
			found += ak_htab_lookup(&table, &k, 0) != NULL;
			continue;
		}
		err = ak_htab_update(&table, &k, &v, AK_HTAB_NOEXIST);
		if (err == -AK_EBUDGET || err == -EBUSY)
			break;
		errors += err != 0;
	}
	result.found += found;
	result.errors += errors;
	return i;
}

static __always_inline int chunk(__u32 op, __u32 side, __u32 from, __u32 to)
{
	if (side == OMAP_SIDE_OMAP) {
		switch (op) {
		case OMAP_INSERT:
			return omap_insert_chunk(from, to);
		case OMAP_LOOKUP:
			return omap_lookup_chunk(from, to);
		case OMAP_WALK:
			return omap_walk_chunk(from, to);
		default:
			return omap_pop_chunk(from, to);
		}
	}
	if (side == OMAP_SIDE_RBTREE)
		return rbtree_chunk(op, from, to);
	return htab_chunk(op, from, to);
}

/* Before a run: the map and the table, empty; the hash table sized for every key. */
SEC("syscall")
int setup(void *ctx)
{
	return ak_omap_init(&omap, sizeof(__u64), sizeof(__u64)) ?:
	       ak_htab_init(&table, sizeof(__u64), sizeof(__u64), entries * 4 / 3 + 1);
}

/* After it: the table and the map's root gone, and the allocator's empty pages. */
SEC("syscall")
int teardown(void *ctx)
{
	int err = -AK_EBUDGET, err2 = -AK_EBUDGET, i;

	for (i = ak_opaque_zero(); i < 64 && err == -AK_EBUDGET && can_loop; i++)
		err = ak_htab_destroy(&table);
	for (i = ak_opaque_zero(); i < 64 && err2 == -AK_EBUDGET && can_loop; i++)
		err2 = ak_omap_destroy(&omap);
	for (i = ak_opaque_zero(); i < 64 && can_loop; i++)
		if (ak_alloc_trim() != -AK_EBUDGET)
			break;
	return err ?: err2;
}

/* The phase user space set, resumable (bench/phase.bpf.h). */
SEC("syscall")
int timed(void *ctx)
{
	__u32 times = phase.op == OMAP_LOOKUP || phase.op == OMAP_WALK ? reps : 1;
	int err = 0;

	err = BENCH_TIMED(phase, chunk, times, 0, entries);
	if (!err && phase.op < OMAP_OPS && phase.side < OMAP_SIDES)
		result.ps[phase.op][phase.side] = BENCH_PS_PER_OP(phase, entries, times);
	return err;
}

char _license[] SEC("license") = "GPL";
