// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF side of `arenakit stress` omap (user/stress_omap.c): a map built
 * to a size, walked, looked up and drained, each program resumable across
 * runs (a cut run returns -AK_EBUDGET, the next goes on); and batches of
 * random operations, each result left for user space's model.
 */
#include "stress.h"
#define AK_ARENA_PAGES STRESS_ARENA_PAGES
#include <arenakit/omap.h>

struct ak_omap __arena_global omap_map;
struct stress_omap_op __arena_global omap_ops[STRESS_OMAP_BATCH];
struct stress_omap_edge edge;
/* Set by user space (ak_omap_cursor_init) before a walk's first run. */
struct ak_omap_cursor edge_cursor;
struct ak_omap_cursor model_cursor;
__u32 omap_nops, omap_done;

SEC("syscall")
int omap_init(void *ctx)
{
	return ak_omap_init(&omap_map, sizeof(__u64), sizeof(__u64));
}

SEC("syscall")
int omap_destroy(void *ctx)
{
	return ak_omap_destroy(&omap_map);
}

/* A busy map is cut work too: the next run tries again. */
static int cut(int err)
{
	return err == -EBUSY ? -AK_EBUDGET : err;
}

/* Keys edge.next to edge.n - 1, in stress_omap_key's order. */
SEC("syscall")
int omap_build(void *ctx)
{
	__u64 i = edge.next, k, v;
	int err;

	for (; i < edge.n && can_loop; i++) {
		k = stress_omap_key(i);
		v = stress_omap_value(k);
		err = ak_omap_update(&omap_map, &k, &v, AK_OMAP_NOEXIST);
		if (err) {
			edge.next = i;
			return cut(err);
		}
	}
	edge.next = i;
	return i < edge.n ? -AK_EBUDGET : 0;
}

/* A key a walk or a drain returned: above the last, with its value. */
static void edge_key(__u64 k, __u64 v)
{
	if ((edge.walked && k <= edge.last) || v != stress_omap_value(k))
		edge.wrong++;
	edge.last = k;
	edge.walked++;
}

/* The walk edge_cursor was set for, from where the last run stopped: 0 at its end. */
SEC("syscall")
int omap_walk(void *ctx)
{
	__u64 k;
	__u64 __arena *v;
	int err = 0;

	edge.runs++;
	while (can_loop) {
		err = ak_omap_next(&omap_map, &edge_cursor, &k, &v);
		if (err)
			return err == -ENOENT ? 0 : cut(err);
		edge_key(k, *v);
	}
	return -AK_EBUDGET;
}

/* Every key built, looked up: each missing or wrong value counts in edge.wrong. */
SEC("syscall")
int omap_lookup_all(void *ctx)
{
	__u64 i = edge.next, k;
	__u64 __arena *v;
	int err = 0;

	for (; i < edge.n && can_loop; i++) {
		k = stress_omap_key(i);
		v = ak_omap_lookup(&omap_map, &k, &err);
		if (!v && (err == -AK_EBUDGET || err == -EBUSY))
			break;
		if (!v || *v != stress_omap_value(k))
			edge.wrong++;
	}
	edge.next = i;
	return i < edge.n ? -AK_EBUDGET : 0;
}

/* Pop the smallest key until the map is empty: 0 then. */
SEC("syscall")
int omap_drain(void *ctx)
{
	__u64 k, v;
	int err;

	while (can_loop) {
		err = ak_omap_pop_first(&omap_map, &k, &v);
		if (err)
			return err == -ENOENT ? 0 : cut(err);
		edge_key(k, v);
	}
	return -AK_EBUDGET;
}

/* A step of the model's live walk, in a frame of its own (the stack's limit). */
__noinline __u64 model_step(__u64 k, int init, __ak_nonnull __u64 *key_out,
			    __ak_nonnull int *err)
{
	__u64 __arena *v = 0;

	if (init)
		ak_omap_cursor_init(&model_cursor, &k, (__u64 *)NULL, 0);
	*err = ak_omap_next(&omap_map, &model_cursor, key_out, &v);
	return (__u64)v;
}

/* The batch's operations from omap_done on, each result in its slot. */
SEC("syscall")
int omap_model_run(void *ctx)
{
	struct stress_omap_op __arena *op;
	__u64 k, v, out_k, out_v;
	__u32 i = omap_done;
	__u64 __arena *p;
	int err;

	for (; i < omap_nops && i < STRESS_OMAP_BATCH && can_loop; i++) {
		op = &omap_ops[i];
		k = op->key;
		v = op->value;
		out_k = 0;
		out_v = 0;
		err = 0;
		p = 0;
		switch (op->kind) {
		case STRESS_OMAP_INSERT:
			err = ak_omap_update(&omap_map, &k, &v, op->flags);
			break;
		case STRESS_OMAP_DELETE:
			err = ak_omap_lookup_and_delete(&omap_map, &k, &out_v);
			break;
		case STRESS_OMAP_LOOKUP:
			p = ak_omap_lookup(&omap_map, &k, &err);
			break;
		case STRESS_OMAP_BOUND:
			p = ak_omap_bound(&omap_map, &k, op->flags, &out_k, &err);
			break;
		case STRESS_OMAP_POP:
			err = ak_omap_pop_first(&omap_map, &out_k, &out_v);
			break;
		default:
			p = (__u64 __arena *)model_step(k, op->flags, &out_k, &err);
			break;
		}
		if (err == -AK_EBUDGET || err == -EBUSY)
			break;	/* this operation again, in the next run */
		if (p)
			out_v = *p;
		op->result = p ? 0 : err;
		op->out_key = out_k;
		op->out_value = out_v;
	}
	omap_done = i;
	return i < omap_nops ? -AK_EBUDGET : 0;
}

char _license[] SEC("license") = "GPL";
