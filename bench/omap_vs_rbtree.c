// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Section "omap": ns per operation of the arena ordered map, of
 * bpf_rbtree_* under its bpf_spin_lock, and of the arena hash table for
 * point lookups, at 1k, 64k and 1M keys (8-byte keys and values), from the
 * same program, in the same run (bench/omap_vs_rbtree.bpf.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include <arenakit/alloc.h>
#include <arenakit/htab_types.h>
#include <arenakit/omap_types.h>
#include <arenakit/user.h>
#include "omap_vs_rbtree.h"
#include "omap_vs_rbtree.skel.h"
#include "loader.h"

/* Runs of one phase at most (each a frame's budget): far more than any takes. */
#define OMAP_BENCH_MAX_RUNS 1000

static const char *const op_names[OMAP_OPS] = {
	[OMAP_INSERT] = "insert", [OMAP_LOOKUP] = "lookup", [OMAP_WALK] = "walk, per key",
	[OMAP_POP] = "pop-min",
};

static const char *const side_names[OMAP_SIDES] = {
	[OMAP_SIDE_OMAP] = "arena omap", [OMAP_SIDE_RBTREE] = "BPF rbtree",
	[OMAP_SIDE_HTAB] = "arena htab",
};

/* One run of every phase, each side in turn; 0 with the figures in the result, or an error. */
static int run_once(struct bench *b, struct omap_vs_rbtree *skel)
{
	struct omap_bench_result *res = &skel->bss->result;
	unsigned long long n = skel->bss->entries, reps = skel->bss->reps;
	int op, side, retval, ret;

	memset(res, 0, sizeof(*res));
	ret = ak_run(skel->progs.setup, NULL, 0, &retval) ?: retval;
	for (op = 0; op < OMAP_OPS && !ret; op++) {
		for (side = 0; side < OMAP_SIDES && !ret; side++) {
			if (!omap_bench_has(op, side))
				continue;
			skel->bss->phase = (struct bench_phase){ .op = op, .side = side };
			ret = ak_run_until_done(skel->progs.timed, NULL, 0, OMAP_BENCH_MAX_RUNS,
						&retval, NULL) ?: retval;
		}
	}
	if (!ret)
		ret = ak_run(skel->progs.teardown, NULL, 0, &retval) ?: retval;
	if (ret)
		return ret < 0 ? ret : -EPROTO;
	/* Lookups: the map's and the table's; walks: the map's; pops: the map's and the rbtree's. */
	if (res->errors || res->disorder || res->found != 2 * n * reps ||
	    res->walked != n * reps || res->popped != 2 * n) {
		bench_wrong(b, "omap %llu keys: %llu lookups found (want %llu), %llu walked (want "
			    "%llu), %llu popped (want %llu), %llu out of order, %llu failed", n,
			    res->found, 2 * n * reps, res->walked, n * reps, res->popped, 2 * n,
			    res->disorder, res->errors);
		return 1;
	}
	return 0;
}

static int bench_size(struct bench *b, struct omap_vs_rbtree *skel, unsigned int entries)
{
	struct omap_bench_result *res = &skel->bss->result;
	unsigned int reps = entries >= (1 << 19) ? 1 : (1 << 19) / entries;
	struct bench_row *rows[OMAP_OPS][OMAP_SIDES] = {};
	char name[40], what[96];
	int op, side, r, ret;

	if (b->quick)
		reps = 1;
	for (op = 0; op < OMAP_OPS; op++) {
		for (side = 0; side < OMAP_SIDES; side++) {
			if (!omap_bench_has(op, side))
				continue;
			snprintf(name, sizeof(name), "%s, %s", op_names[op], side_names[side]);
			rows[op][side] = bench_row(b, "omap", name, entries, "8-byte keys", "ns/op",
						   BENCH_CLOCK_BPF);
		}
	}
	skel->bss->entries = entries;
	skel->bss->reps = reps;
	for (r = BENCH_WARMUP; r < b->runs; r++) {
		ret = run_once(b, skel);
		if (ret < 0)
			return ret;
		for (op = 0; op < OMAP_OPS && r >= 0 && !ret; op++)
			for (side = 0; side < OMAP_SIDES; side++)
				if (rows[op][side])
					bench_sample(rows[op][side], res->ps[op][side] / 1e3);
	}
	for (op = 0; op < OMAP_OPS; op++) {
		for (side = 1; side < OMAP_SIDES; side++) {
			/*
			 * The target, at 64k keys, on time and on
			 * instructions alike: every operation the rbtree has
			 * at most its cost.
			 */
			int goal = entries == 1 << 16 && side == OMAP_SIDE_RBTREE;

			if (!rows[op][side])
				continue;
			snprintf(what, sizeof(what), "omap, %u keys, %s: %s / arena omap", entries,
				 op_names[op], side_names[side]);
			bench_ratio(b, what, rows[op][side], rows[op][OMAP_SIDE_OMAP],
				    goal ? BENCH_AT_LEAST : BENCH_NO_GOAL, goal ? 1.0 : 0);
		}
	}
	return 0;
}

int bench_omap(struct bench *b)
{
	static const unsigned int sizes[] = { 1 << 10, 1 << 16, 1 << 20 };
	struct omap_vs_rbtree *skel = omap_vs_rbtree__open();
	size_t i;
	int err;

	if (!skel)
		return -errno;
	err = arenakit_load_skeleton(skel->skeleton);
	for (i = 0; !err && i < ARRAY_SIZE(sizes); i++) {
		if (b->quick && sizes[i] > 1 << 10)
			break;
		err = bench_size(b, skel, sizes[i]);
	}
	omap_vs_rbtree__destroy(skel);
	return err;
}
