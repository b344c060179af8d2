// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * omap: the ordered map at its edges and against a model.
 *  - Edges: maps of 1k, 64k, 1M and 10M keys (up to --size), built in BPF
 *    in no order; checked whole through the mmap (ak_omap_check, the
 *    count); walked by a live cursor and by an exact one across as many
 *    runs as the budget needs (every key once, in order, with its value);
 *    every key looked up; drained by pop-first in order; and after the
 *    destroy the allocator is back where it was.
 *  - Model: batches of random operations (inserts with each flag,
 *    deletes, lookups, bounds, pops, live walk steps) on keys below
 *    STRESS_OMAP_MODEL_KEYS, every result checked against a set of bits
 *    kept here, the tree checked whole after each batch.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arenakit/omap.h>
#include <arenakit/user.h>
#include "stress_tool.h"
#include "stress_omap.skel.h"

/* Run @prog until done; 0, or the error it or the run ended with (said on stderr). */
static int omap_run(struct bpf_program *prog, const char *what, unsigned int *runs)
{
	int retval, err = ak_run_until_done(prog, NULL, 0, STRESS_MAX_RUNS, &retval, runs);

	err = err ?: retval;
	if (err)
		fprintf(stderr, "\narenakit stress: omap: %s: %s\n", what, strerror(-err));
	return err;
}

/* A walk of the whole map across runs, live or exact: every key once, in order. */
static int omap_walk(struct stress_omap *skel, struct stress_row *r, int exact)
{
	struct stress_omap_edge *e = &skel->bss->edge;
	unsigned long long n = e->n;
	int err;

	e->walked = e->wrong = e->runs = 0;
	ak_omap_cursor_init(&skel->bss->edge_cursor, (unsigned long long *)NULL,
			    (unsigned long long *)NULL, exact);
	err = omap_run(skel->progs.omap_walk, exact ? "exact walk" : "live walk", NULL);
	if (err)
		return err;
	stress_verdict(r, e->walked == n && !e->wrong, 0,
		       "%s walk: %llu keys of %llu, %llu out of order or wrong, in %llu runs",
		       exact ? "an exact" : "a live", e->walked, n, e->wrong, e->runs);
	return 0;
}

static int omap_edge(struct stress_run *s, struct stress_omap *skel, unsigned long long n)
{
	struct stress_omap_edge *e = &skel->bss->edge;
	struct ak_omap *map = (struct ak_omap *)&skel->arena->omap_map;
	struct ak_alloc_stats before, after;
	unsigned int runs, walk_runs, depth;
	struct stress_row *r;
	int err, check;

	ak_alloc_stats_read(&skel->arena->ak_allocator, &before);
	r = stress_row(s, "omap", "build, walk, look up, drain", n);
	stress_progress(s, "omap: building %llu keys", n);
	*e = (struct stress_omap_edge){ .n = n };
	err = omap_run(skel->progs.omap_init, "init", NULL) ?:
	      omap_run(skel->progs.omap_build, "build", &runs);
	if (err)
		return err;
	check = ak_omap_check(map);
	depth = map->depth;
	stress_verdict(r, !check && ak_omap_count(map) == n, 0,
		       "ak_omap_check through the mmap: %d, %llu keys of %llu, %u levels", check,
		       ak_omap_count(map), n, map->depth);
	stress_progress(s, "omap: walking %llu keys", n);
	err = omap_walk(skel, r, 0);
	walk_runs = (unsigned int)e->runs;
	err = err ?: omap_walk(skel, r, 1);
	if (err)
		return err;
	stress_progress(s, "omap: looking up %llu keys", n);
	e->next = e->wrong = 0;
	err = omap_run(skel->progs.omap_lookup_all, "lookups", NULL);
	if (err)
		return err;
	stress_verdict(r, !e->wrong, 0, "lookups: %llu of %llu missing or wrong", e->wrong, n);
	stress_progress(s, "omap: draining %llu keys", n);
	e->walked = e->wrong = 0;
	err = omap_run(skel->progs.omap_drain, "drain", NULL) ?:
	      omap_run(skel->progs.omap_destroy, "destroy", NULL);
	if (err)
		return err;
	stress_verdict(r, e->walked == n && !e->wrong, 0,
		       "pop-first drain: %llu keys of %llu, %llu out of order or wrong", e->walked,
		       n, e->wrong);
	ak_alloc_stats_read(&skel->arena->ak_allocator, &after);
	stress_verdict(r, after.objects == before.objects && after.bytes == before.bytes, 0,
		       "after the destroy: %llu objects, %llu bytes (before: %llu, %llu)",
		       after.objects, after.bytes, before.objects, before.bytes);
	stress_progress_clear(s);
	printf("omap: %llu keys built in %u runs, %u levels; a live walk took %u runs\n", n,
	       runs, depth, walk_runs);
	stress_row_done(r);
	return 0;
}

/* The model: a bit a key, and the value stored under it. */
struct omap_model {
	unsigned long long rng;
	unsigned char present[STRESS_OMAP_MODEL_KEYS];
	unsigned long long value[STRESS_OMAP_MODEL_KEYS];
	unsigned long long count;
	unsigned long long walk_from;	/* the live walk's last key, or its bound */
	int walk_started;
};

/* The first key at or after @k (after it if @strict), or STRESS_OMAP_MODEL_KEYS. */
static unsigned long long model_next(const struct omap_model *m, unsigned long long k, int strict)
{
	for (k += !!strict; k < STRESS_OMAP_MODEL_KEYS && !m->present[k]; k++)
		;
	return k;
}

/*
 * An answer that names a key: the model's @at (STRESS_OMAP_MODEL_KEYS:
 * none, -ENOENT), with its value.
 */
static int model_names(const struct omap_model *m, const struct stress_omap_op *op,
		       unsigned long long at)
{
	if (at == STRESS_OMAP_MODEL_KEYS)
		return op->result == -ENOENT;
	return !op->result && op->out_key == at && op->out_value == m->value[at];
}

/* Does @op's answer agree with the model's? The model takes @op's change. */
static int model_agrees(struct omap_model *m, const struct stress_omap_op *op)
{
	unsigned long long k = op->key, at;
	int has = m->present[k], ok;

	switch (op->kind) {
	case STRESS_OMAP_INSERT:
		if ((has && op->flags == AK_OMAP_NOEXIST) || (!has && op->flags == AK_OMAP_EXIST))
			return op->result == (has ? -EEXIST : -ENOENT);
		if (op->result)
			return 0;
		m->count += !has;
		m->present[k] = 1;
		m->value[k] = op->value;
		return 1;
	case STRESS_OMAP_DELETE:
		if (!has)
			return op->result == -ENOENT;
		m->present[k] = 0;
		m->count--;
		return !op->result && op->out_value == m->value[k];
	case STRESS_OMAP_LOOKUP:
		return has ? !op->result && op->out_value == m->value[k] : op->result == -ENOENT;
	case STRESS_OMAP_BOUND:
		return model_names(m, op, model_next(m, k, op->flags));
	case STRESS_OMAP_POP:
		at = model_next(m, 0, 0);
		ok = model_names(m, op, at);
		if (ok && at < STRESS_OMAP_MODEL_KEYS) {
			m->present[at] = 0;
			m->count--;
		}
		return ok;
	default:	/* STRESS_OMAP_STEP: from the bound, then after the last key */
		if (op->flags) {
			m->walk_from = k;
			m->walk_started = 0;
		}
		at = model_next(m, m->walk_from, m->walk_started);
		ok = model_names(m, op, at);
		if (ok && at < STRESS_OMAP_MODEL_KEYS) {
			m->walk_from = at;
			m->walk_started = 1;
		}
		return ok;
	}
}

/* One random operation; @grow: a phase of more inserts than deletes. */
static void model_draw(struct omap_model *m, struct stress_omap_op *op, int grow)
{
	unsigned long long r;

	m->rng = stress_xorshift(m->rng);
	r = m->rng;
	memset(op, 0, sizeof(*op));
	op->key = (r >> 8) % STRESS_OMAP_MODEL_KEYS;
	op->value = r >> 20;
	switch (r % 16) {
	case 0 ... 5:
		op->kind = STRESS_OMAP_INSERT;
		op->flags = (r >> 4) % 3;
		break;
	case 6 ... 8:
		op->kind = grow ? STRESS_OMAP_INSERT : STRESS_OMAP_DELETE;
		break;
	case 9 ... 10:
		op->kind = STRESS_OMAP_LOOKUP;
		break;
	case 11:
		op->kind = STRESS_OMAP_BOUND;
		op->flags = (r >> 4) & 1;
		break;
	case 12:
		op->kind = grow ? STRESS_OMAP_LOOKUP : STRESS_OMAP_POP;
		break;
	default:
		op->kind = STRESS_OMAP_STEP;
		op->flags = (r >> 4) % 8 == 0;
		break;
	}
}

static int omap_model(struct stress_run *s, struct stress_omap *skel)
{
	struct ak_omap *map = (struct ak_omap *)&skel->arena->omap_map;
	unsigned int batches = s->quick ? 4 : 64, b, i, wrong, max_depth = 0;
	struct stress_omap_op *ops = (struct stress_omap_op *)skel->arena->omap_ops;
	unsigned long long lo = ~0ULL, hi = 0;
	struct omap_model *m = calloc(1, sizeof(*m));
	struct stress_row *r;
	int err, check;

	if (!m)
		return -ENOMEM;
	m->rng = stress_seed_state(s->seed);
	r = stress_row(s, "omap", "random ops against a model",
		       (unsigned long long)batches * STRESS_OMAP_BATCH);
	err = omap_run(skel->progs.omap_init, "init", NULL);
	for (b = 0; b < batches && !err; b++) {
		stress_progress(s, "omap: batch %u of %u, %llu keys", b + 1, batches, m->count);
		for (i = 0; i < STRESS_OMAP_BATCH; i++)
			model_draw(m, &ops[i], b % 8 < 4);
		skel->bss->omap_nops = STRESS_OMAP_BATCH;
		skel->bss->omap_done = 0;
		err = omap_run(skel->progs.omap_model_run, "model batch", NULL);
		if (err)
			break;
		for (i = 0, wrong = 0; i < STRESS_OMAP_BATCH; i++)
			if (!model_agrees(m, &ops[i]) && !wrong++)
				fprintf(stderr, "\narenakit stress: omap: batch %u op %u: kind %u key "
					"%llu flags %u: %lld, key %llu, value %llu\n", b, i,
					ops[i].kind, ops[i].key, ops[i].flags, ops[i].result,
					ops[i].out_key, ops[i].out_value);
		check = ak_omap_check(map);
		stress_verdict(r, !wrong, 0, "batch %u: %u results differ from the model", b, wrong);
		stress_verdict(r, !check && ak_omap_count(map) == m->count, 0,
			       "batch %u: ak_omap_check %d, %llu keys, the model %llu", b, check,
			       ak_omap_count(map), m->count);
		lo = m->count < lo ? m->count : lo;
		hi = m->count > hi ? m->count : hi;
		max_depth = map->depth > max_depth ? map->depth : max_depth;
	}
	err = err ?: omap_run(skel->progs.omap_destroy, "destroy", NULL);
	stress_progress_clear(s);
	if (!err) {
		printf("omap: %u batches of %u operations; after a batch the map held %llu to %llu "
		       "keys in up to %u levels\n", batches, STRESS_OMAP_BATCH, lo, hi, max_depth);
		stress_row_done(r);
	}
	free(m);
	return err;
}

static int scenario_omap(struct stress_run *s)
{
	static const unsigned long long sizes[] = { 1000, 65536, 1000000, 10000000 };
	struct stress_omap *skel = stress_omap__open();
	unsigned long long n;
	size_t i;
	int err;

	err = stress_load("omap", skel ? skel->skeleton : NULL);
	for (i = 0; !err && i < ARRAY_SIZE(sizes); i++) {
		n = sizes[i] < s->max_size ? sizes[i] : s->max_size;
		if (i && n <= sizes[i - 1])
			break;
		err = omap_edge(s, skel, n);
	}
	err = err ?: omap_model(s, skel);
	stress_omap__destroy(skel);
	return err;
}

const struct stress_scenario stress_scenario_omap = {
	.name = "omap",
	.help = "ordered maps of 1k, 64k, 1M and 10M keys (up to --size), built in\n"
		"BPF in no order: checked whole through the mmap, walked by a live\n"
		"and an exact cursor across runs (every key once, in order), every\n"
		"key looked up, drained by pop-first in order, the allocator back\n"
		"where it was after the destroy; then 64 batches (--quick: 4) of\n"
		"4096 random operations (inserts with each flag, deletes, lookups,\n"
		"bounds, pops, live walk steps) against a model",
	.run = scenario_omap,
};
