// SPDX-License-Identifier: GPL-2.0
/*
 * omap.h under the real verifier, on a real arena: batches of calls from
 * tests/guest/omap.c, whose answers it checks against a model.
 */
#define AK_ARENA_PAGES 262144
#include <arenakit/omap.h>
#include "guest/bpf_test.h"
#include "omap_shared.h"

struct ak_omap __arena_global map;	/* 8-byte keys, 8-byte values */

struct omap_op __arena_global ops[OMAP_MAX_OPS];
unsigned int nops, next_op;

SEC("syscall")
int init_map(void *ctx)
{
	return ak_omap_init(&map, sizeof(__u64), sizeof(__u64));
}

SEC("syscall")
int run_ops(void *ctx)
{
	unsigned int i = next_op + (unsigned int)ak_opaque_zero();
	struct omap_op __arena *op;
	__u64 k, v, out_k, out_v;
	__u64 __arena *p;
	int err;

	while (i < nops && i < OMAP_MAX_OPS) {
		ak_cond_break_label(cut);
		op = &ops[i];
		k = op->key;
		v = op->value;
		out_k = 0;
		out_v = 0;
		err = 0;
		p = 0;
		switch (op->kind) {
		case OMAP_OP_INSERT:
			err = ak_omap_update(&map, &k, &v, op->flags);
			break;
		case OMAP_OP_DELETE:
			err = ak_omap_lookup_and_delete(&map, &k, &out_v);
			break;
		case OMAP_OP_LOOKUP:
			p = ak_omap_lookup(&map, &k, &err);
			break;
		case OMAP_OP_BOUND:
			p = ak_omap_bound(&map, &k, op->flags, &out_k, &err);
			break;
		default:
			err = ak_omap_pop_first(&map, &out_k, &out_v);
			break;
		}
		if (p)
			out_v = *p;
		op->err = err;
		op->out_key = out_k;
		op->out_value = out_v;
		i++;
	}
	next_op = i;
	return 0;
cut:
	next_op = i;
	return -AK_EBUDGET;
}

char _license[] SEC("license") = "GPL";
