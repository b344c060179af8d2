// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Section "htab": ns per operation of the arena hash table and of
 * BPF_MAP_TYPE_HASH at 1k, 64k and 1M entries, 4- and 16-byte keys, from
 * the same kind of program, in the same run (bench/htab_vs_map.bpf.c);
 * insert and delete of the table also without a reserved pool.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include <arenakit/alloc.h>
#include <arenakit/htab_types.h>
#include <arenakit/user.h>
#include "htab_vs_map.h"
#include "htab_vs_map.skel.h"
#include "loader.h"

/* Runs of one phase at most (each a frame's budget): far more than any takes. */
#define HTAB_BENCH_MAX_RUNS 1000

static const char *const op_names[HTAB_OPS] = {
	[HTAB_INSERT] = "insert", [HTAB_UPDATE] = "update", [HTAB_HIT] = "lookup hit",
	[HTAB_MISS] = "lookup miss", [HTAB_DELETE] = "delete",
};

/* One run of the program; 0 with the figures in res, or an error. */
static int run_once(struct bench *b, struct htab_vs_map *skel, int wide, int pool,
		    unsigned long long want_found)
{
	struct htab_bench_result *res = &skel->bss->result;
	int ret;

	struct bpf_program *prog = wide ? skel->progs.htab16 : skel->progs.htab4;
	int op, map, retval;

	skel->bss->pool = pool;
	skel->bss->wide = wide;
	memset(res, 0, sizeof(*res));
	ret = ak_run(skel->progs.fill_pool, NULL, 0, &retval) ?: retval;
	/* Each operation on the table, then on the map, a phase of runs each. */
	for (op = 0; op < HTAB_OPS && !ret; op++) {
		for (map = 0; map < 2 && !ret; map++) {
			skel->bss->phase = (struct bench_phase){ .op = op, .side = map };
			ret = ak_run_until_done(prog, NULL, 0, HTAB_BENCH_MAX_RUNS, &retval, NULL);
			if (!ret && retval)
				ret = retval;
		}
	}
	if (!ret)
		ret = ak_run(skel->progs.teardown, NULL, 0, &retval) ?: retval;
	if (ret)
		return ret < 0 ? ret : -EPROTO;
	if (res->errors || res->found != want_found) {
		bench_wrong(b, "htab %u entries, %d-byte keys%s: %llu lookups found, want %llu; "
			    "%llu chunks failed", skel->bss->entries, wide ? 16 : 4,
			    pool ? "" : ", no pool", res->found, want_found, res->errors);
		return 1;
	}
	return 0;
}

/*
 * The arena table with a pool reserved for every entry (the hash map
 * preallocates its elements), and without one: inserts then take pages
 * from the kernel and deletes give them back. Each run does both.
 */
static int bench_size(struct bench *b, struct htab_vs_map *skel, unsigned int entries, int wide)
{
	const char *variant = wide ? "16-byte keys" : "4-byte keys";
	struct htab_bench_result *res = &skel->bss->result;
	unsigned int reps = entries >= (1 << 19) ? 1 : (1 << 19) / entries;
	struct bench_row *rows[HTAB_OPS][2], *no_pool[HTAB_OPS] = {};
	unsigned long long want_found;
	char name[40], what[96];
	int op, side, r, ret;

	if (b->quick)
		reps = 1;
	for (op = 0; op < HTAB_OPS; op++) {
		for (side = 0; side < 2; side++) {
			snprintf(name, sizeof(name), "%s, %s", op_names[op],
				 side ? "BPF hash map" : "arena htab");
			rows[op][side] = bench_row(b, "htab", name, entries, variant, "ns/op",
						   BENCH_CLOCK_BPF);
		}
		if (op == HTAB_INSERT || op == HTAB_DELETE) {
			snprintf(name, sizeof(name), "%s, arena htab, no pool", op_names[op]);
			no_pool[op] = bench_row(b, "htab", name, entries, variant, "ns/op",
						BENCH_CLOCK_BPF);
		}
	}
	skel->bss->entries = entries;
	skel->bss->reps = reps;
	want_found = 2ULL * entries * reps;	/* the hits, arena and map */
	for (r = BENCH_WARMUP; r < b->runs; r++) {
		ret = run_once(b, skel, wide, 1, want_found);
		if (ret < 0)
			return ret;
		for (op = 0; op < HTAB_OPS && r >= 0 && !ret; op++)
			for (side = 0; side < 2; side++)
				bench_sample(rows[op][side], res->ps[op][side] / 1e3);
		ret = run_once(b, skel, wide, 0, want_found);
		if (ret < 0)
			return ret;
		for (op = 0; op < HTAB_OPS && r >= 0 && !ret; op++)
			if (no_pool[op])
				bench_sample(no_pool[op], res->ps[op][0] / 1e3);
	}
	for (op = 0; op < HTAB_OPS; op++) {
		/*
		 * The targets, at 64k entries, judged on time and on
		 * instructions alike: a lookup at most the map's cost, an
		 * insert at most 0.8x it.
		 */
		double goal = entries != 1 << 16 ? 0 :
			      op == HTAB_HIT || op == HTAB_MISS ? 1.0 :
			      op == HTAB_INSERT ? 1 / 0.8 : 0;

		snprintf(what, sizeof(what), "htab, %u entries, %s, %s: hash map / arena htab",
			 entries, variant, op_names[op]);
		bench_ratio(b, what, rows[op][1], rows[op][0],
			    goal ? BENCH_AT_LEAST : BENCH_NO_GOAL, goal);
		if (!no_pool[op])
			continue;
		snprintf(what, sizeof(what), "htab, %u entries, %s, %s: hash map / arena, no pool",
			 entries, variant, op_names[op]);
		bench_ratio(b, what, rows[op][1], no_pool[op], BENCH_NO_GOAL, 0);
	}
	return 0;
}

int bench_htab(struct bench *b)
{
	static const unsigned int sizes[] = { 1 << 10, 1 << 16, 1 << 20 };
	struct htab_vs_map *skel = htab_vs_map__open();
	size_t i;
	int err;

	if (!skel)
		return -errno;
	err = arenakit_load_skeleton(skel->skeleton);
	for (i = 0; !err && i < ARRAY_SIZE(sizes); i++) {
		if (b->quick && sizes[i] > 1 << 10)
			break;
		err = bench_size(b, skel, sizes[i], 0);
		if (!err)
			err = bench_size(b, skel, sizes[i], 1);
	}
	htab_vs_map__destroy(skel);
	return err;
}
