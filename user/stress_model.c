// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * model: batches of random operations on a list and a hash table, drawn
 * here (xorshift64 from the seed), applied in BPF and to a plain model
 * here; after each batch every result must be the model's, the list must
 * hold the model's keys in its order (read through the mmap), both
 * structures must pass their whole checks, and every key must look up to
 * the model's value. Phases of growth and shrinking make the table grow
 * many times over and the list swing between empty and long.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arenakit/user.h>
#include "loader.h"
#include "stress_tool.h"
#include "stress_model.skel.h"

#define MODEL_LIST_MAX (64 * 1024)

struct model {
	unsigned long long rng;
	unsigned long long list[MODEL_LIST_MAX];
	unsigned int list_len;
	unsigned char present[STRESS_MODEL_KEYS];
	unsigned long long value[STRESS_MODEL_KEYS];
	unsigned long long entries;
};

static unsigned long long model_random(struct model *m)
{
	m->rng = stress_xorshift(m->rng);
	return m->rng;
}

static int model_list_index(const struct model *m, unsigned long long key)
{
	unsigned int i;

	for (i = 0; i < m->list_len; i++)
		if (m->list[i] == key)
			return i;
	return -1;
}

static void model_list_remove(struct model *m, unsigned int i)
{
	memmove(&m->list[i], &m->list[i + 1], (m->list_len - i - 1) * sizeof(m->list[0]));
	m->list_len--;
}

/* Draw one operation; @grow picks the phase's mix. */
static void model_draw(struct model *m, struct stress_op *op, int grow)
{
	unsigned long long r = model_random(m);
	unsigned int pick = r % 100;

	memset(op, 0, sizeof(*op));
	op->key = (r >> 8) % STRESS_MODEL_KEYS;
	op->value = (r >> 20) & ((1ULL << 40) - 1);
	if (m->list_len >= MODEL_LIST_MAX - 1 && pick < 50)
		pick += 50;			/* the model's array is full: no adds */
	if (pick < 50) {			/* the list */
		if (pick < (grow ? 15 : 2))
			op->kind = STRESS_OP_LIST_ADD_HEAD;
		else if (pick < (grow ? 30 : 4))
			op->kind = STRESS_OP_LIST_ADD_TAIL;
		else
			op->kind = (const unsigned int[]){
				STRESS_OP_LIST_DEL, STRESS_OP_LIST_TO_TAIL, STRESS_OP_LIST_POP,
				grow ? STRESS_OP_LIST_DEL : STRESS_OP_LIST_POP }[(r >> 4) % 4];
	} else if (pick < (grow ? 75 : 62)) {
		op->kind = STRESS_OP_HTAB_UPDATE;
		op->flags = (r >> 50) % 3;	/* AK_HTAB_ANY, _NOEXIST, _EXIST */
	} else {
		op->kind = (const unsigned int[]){ STRESS_OP_HTAB_DELETE, STRESS_OP_HTAB_LOOKUP,
						   STRESS_OP_HTAB_TAKE }[(r >> 4) % 3];
	}
}

/* Apply @op to the model: the result the library must have returned. */
static long long model_apply(struct model *m, const struct stress_op *op)
{
	unsigned long long k = op->key, v;
	int i = -1;

	if (op->kind == STRESS_OP_LIST_DEL || op->kind == STRESS_OP_LIST_TO_TAIL) {
		i = model_list_index(m, k);
		if (i < 0)
			return -ENOENT;
	}
	switch (op->kind) {
	case STRESS_OP_LIST_ADD_HEAD:
		memmove(&m->list[1], &m->list[0], m->list_len * sizeof(m->list[0]));
		m->list[0] = k;
		m->list_len++;
		return 0;
	case STRESS_OP_LIST_ADD_TAIL:
		m->list[m->list_len++] = k;
		return 0;
	case STRESS_OP_LIST_DEL:
		model_list_remove(m, i);
		return 0;
	case STRESS_OP_LIST_POP:
		if (!m->list_len)
			return -ENOENT;
		v = m->list[0];
		model_list_remove(m, 0);
		return v;
	case STRESS_OP_LIST_TO_TAIL:
		model_list_remove(m, i);
		m->list[m->list_len++] = k;
		return 0;
	case STRESS_OP_HTAB_UPDATE:
		if (op->flags == AK_HTAB_NOEXIST && m->present[k])
			return -EEXIST;
		if (op->flags == AK_HTAB_EXIST && !m->present[k])
			return -ENOENT;
		m->entries += !m->present[k];
		m->present[k] = 1;
		m->value[k] = op->value;
		return 0;
	case STRESS_OP_HTAB_LOOKUP:
		return m->present[k] ? (long long)m->value[k] : -ENOENT;
	case STRESS_OP_HTAB_DELETE:
	case STRESS_OP_HTAB_TAKE:
		if (!m->present[k])
			return -ENOENT;
		m->present[k] = 0;
		m->entries--;
		return op->kind == STRESS_OP_HTAB_TAKE ? (long long)m->value[k] : 0;
	}
	return -EINVAL;
}

static const char *const op_names[STRESS_OP_KINDS] = {
	"list add head", "list add tail", "list del", "list pop", "list to tail",
	"htab update", "htab delete", "htab lookup", "htab lookup_and_delete",
};

/* The list as BPF left it, read through the mmap, against the model's keys. */
static void model_check_list(struct stress_model *skel, struct stress_row *r,
			     const struct model *m, unsigned int batch)
{
	struct ak_list *list = &skel->arena->model_list;
	struct ak_list_node *pos = list->head.next;
	unsigned int i;

	for (i = 0; i < m->list_len && pos && pos != &list->head; i++, pos = pos->next)
		if (ak_list_entry(pos, struct stress_item, node)->key != m->list[i])
			break;
	stress_verdict(r, i == m->list_len && pos == &list->head &&
		       ak_list_len(list) == m->list_len, 0,
		       "batch %u: the list differs from the model at item %u of %u (len %llu)",
		       batch, i, m->list_len, ak_list_len(list));
	stress_verdict(r, skel->bss->model_list_check == 0, 0,
		       "batch %u: ak_list_check_all: %lld", batch, skel->bss->model_list_check);
}

/* Every key, looked up here through the mmap, against the model. */
static void model_check_htab(struct stress_model *skel, struct stress_row *r,
			     const struct model *m, unsigned int batch)
{
	struct ak_htab *h = &skel->arena->model_htab;
	unsigned long long *v;
	unsigned int k, key;
	int err;

	for (k = 0; k < STRESS_MODEL_KEYS; k++) {
		key = k;
		err = 0;
		v = ak_htab_lookup(h, &key, &err);
		if (m->present[k] ? !v || *v != m->value[k] : v || err != -ENOENT)
			break;
	}
	stress_verdict(r, k == STRESS_MODEL_KEYS && ak_htab_count(h) == m->entries, 0,
		"batch %u: key %u differs from the model (count %llu, model %llu)", batch, k,
		ak_htab_count(h), m->entries);
	stress_verdict(r, skel->bss->model_htab_check == 0, 0,
		       "batch %u: ak_htab_check_all: %lld", batch, skel->bss->model_htab_check);
}

static int scenario_model(struct stress_run *s)
{
	struct stress_model *skel = stress_model__open();
	struct ak_alloc_stats st, before;
	unsigned int batches = s->quick ? 4 : 100, b, i, runs, wrong[2];
	unsigned long long buckets_max = 0, list_min = ~0ULL, list_max = 0;
	struct stress_row *rl, *rh;
	struct model *m = NULL;
	struct stress_op *ops;
	int retval, err;
	long long want;

	err = stress_load("model", skel ? skel->skeleton : NULL);
	if (err)
		goto out;
	ops = skel->arena->model_ops;
	ak_alloc_stats_read(&skel->arena->ak_allocator, &before);
	m = calloc(1, sizeof(*m));
	err = m ? 0 : -ENOMEM;
	if (err)
		goto out;
	m->rng = stress_seed_state(s->seed);
	rl = stress_row(s, "model", "list: random ops against a model",
			(unsigned long long)batches * STRESS_MODEL_BATCH);
	rh = stress_row(s, "model", "htab: random ops against a model",
			(unsigned long long)batches * STRESS_MODEL_BATCH);
	for (b = 0; b < batches; b++) {
		stress_progress(s, "model: batch %u of %u, list %u items, table %llu entries",
				b + 1, batches, m->list_len, m->entries);
		for (i = 0; i < STRESS_MODEL_BATCH; i++)
			model_draw(m, &ops[i], b % 8 < 4);
		skel->bss->model_n = STRESS_MODEL_BATCH;
		skel->bss->model_done = 0;
		err = ak_run_until_done(skel->progs.model_run, NULL, 0, STRESS_MAX_RUNS, &retval,
					      &runs);
		if (err || retval) {
			fprintf(stderr, "arenakit stress: model: %s\n",
				strerror(-(err ?: retval)));
			err = err ?: retval;
			goto out;
		}
		wrong[0] = wrong[1] = 0;
		for (i = 0; i < STRESS_MODEL_BATCH; i++) {
			int htab = ops[i].kind >= STRESS_OP_HTAB_UPDATE;

			want = model_apply(m, &ops[i]);
			if (ops[i].result != want && !wrong[htab]++)
				fprintf(stderr, "\narenakit stress: model: batch %u op %u: %s of "
					"key %llu returned %lld, the model says %lld\n", b, i,
					op_names[ops[i].kind], ops[i].key, ops[i].result, want);
		}
		stress_verdict(rl, !wrong[0], 0, "batch %u: %u list results differ", b, wrong[0]);
		stress_verdict(rh, !wrong[1], 0, "batch %u: %u htab results differ", b, wrong[1]);
		err = ak_run(skel->progs.model_check, NULL, 0, &retval) ?: retval;
		if (err)
			goto out;
		model_check_list(skel, rl, m, b);
		model_check_htab(skel, rh, m, b);
		list_min = m->list_len < list_min ? m->list_len : list_min;
		list_max = m->list_len > list_max ? m->list_len : list_max;
		if (skel->arena->model_htab.cur &&
		    skel->arena->model_htab.cur->nbuckets > buckets_max)
			buckets_max = skel->arena->model_htab.cur->nbuckets;
	}
	err = ak_run(skel->progs.model_teardown, NULL, 0, &retval) ?: retval;
	ak_alloc_stats_read(&skel->arena->ak_allocator, &st);
	stress_verdict(rh, !err && st.objects == before.objects && st.bytes == before.bytes, 0,
		"after teardown (%d): %llu objects, %llu bytes (before: %llu, %llu)", err,
		st.objects, st.bytes, before.objects, before.bytes);
	stress_progress_clear(s);
	printf("model: %u batches of %u operations; after a batch the list held %llu to %llu "
	       "items, the table up to %llu buckets\n", batches, STRESS_MODEL_BATCH, list_min,
	       list_max, buckets_max);
	stress_row_done(rl);
	stress_row_done(rh);
	err = 0;
out:
	free(m);
	stress_model__destroy(skel);
	return err;
}

const struct stress_scenario stress_scenario_model = {
	.name = "model",
	.help = "100 batches (--quick: 4) of 4096 random list operations (adds at\n"
		"either end, deletes by key, pops, moves to the tail) and\n"
		"hash-table operations (updates with each flag, deletes, lookups,\n"
		"lookup-and-delete), each batch checked against a model kept in\n"
		"user space: every result, the list read through the mmap in\n"
		"order, both whole checks, every key's value; at the end the\n"
		"allocator must be back where it was",
	.run = scenario_model,
};
