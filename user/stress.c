// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * arenakit stress: drive the structures to their edges and check that
 * nothing is silent: every walk either finishes with the right answer or
 * returns an error (the budget's -AK_EBUDGET, -ELOOP for a cycle, -EFAULT
 * for a link to nowhere), never a wrong count without one; misuse is refused
 * and counted; random operations agree with a model. Scenarios in this
 * version: long, cycle, corrupt, glob-worst, misuse, model (bpf/stress.bpf.c).
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "clock.h"
#include "commands.h"
#include "loader.h"
#include <arenakit/alloc.h>
#include <arenakit/glob.h>
#include <arenakit/htab.h>
#include <arenakit/lock.h>
#include "stress.h"
#include "stress.skel.h"
#include "stress_exhaust.skel.h"

#define DEFAULT_SEED 20261203u
#define DEFAULT_SIZE 10000000ULL
#define MAX_RUNS 1000

struct row {
	const char *scenario;
	char what[48];
	unsigned long long size;
	int checks, ok, truncated, broken;
	double seconds;
};

struct stress_run {
	struct stress *skel;
	unsigned int seed;
	unsigned long long max_size;
	int quick, tty;
	struct row rows[64];
	int nrows;
};

static const char *const walk_names[STRESS_WALKS] = {
	[STRESS_COUNT_ONCE] = "ak_list_count (one frame)",
	[STRESS_COUNT_ALL] = "ak_list_count_all",
	[STRESS_FOR_EACH] = "ak_list_for_each_entry",
	[STRESS_FIND_ALL] = "ak_list_find_all (absent)",
	[STRESS_CHECK_ALL] = "ak_list_check_all",
};

/* A progress line: rewritten in place on a terminal, one line each otherwise. */
static void progress(struct stress_run *s, const char *fmt, ...)
{
	va_list ap;

	fputs(s->tty ? "\r\033[K" : "", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(s->tty ? "" : "\n", stderr);
}

/* Clear a terminal's progress line before a line of results. */
static void progress_clear(struct stress_run *s)
{
	if (s->tty)
		fputs("\r\033[K", stderr);
}

static struct row *row(struct stress_run *s, const char *scenario, const char *what,
		       unsigned long long size)
{
	struct row *r = &s->rows[s->nrows < 63 ? s->nrows++ : 63];

	memset(r, 0, sizeof(*r));
	r->scenario = scenario;
	snprintf(r->what, sizeof(r->what), "%s", what);
	r->size = size;
	r->seconds = monotonic_seconds();
	return r;
}

/* One invariant: held, held by reporting the cut, or broken (printed). */
static void verdict(struct row *r, int ok, int truncated, const char *fmt, ...)
{
	va_list ap;

	r->checks++;
	if (ok) {
		r->ok++;
		return;
	}
	if (truncated) {
		r->truncated++;
		return;
	}
	r->broken++;
	fprintf(stderr, "\narenakit stress: BROKEN: %s %s (%llu): ", r->scenario, r->what,
		r->size);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int run(const struct bpf_program *prog)
{
	int retval, err = arenakit_run(prog, &retval);

	return err ? err : retval;
}

/* Every walk of bpf/stress.bpf.c's walks, one program run each. */
static int run_walks(struct stress_run *s)
{
	int k, err = 0;

	for (k = 0; k < STRESS_WALKS && !err; k++) {
		s->skel->bss->walk_which = k;
		err = run(s->skel->progs.walks);
	}
	return err;
}

static int build_to(struct stress_run *s, unsigned long long n)
{
	unsigned int runs;
	int retval, err;

	s->skel->bss->target = n;
	err = arenakit_run_until_done(s->skel->progs.build, MAX_RUNS, &retval, &runs);
	if (err || retval) {
		fprintf(stderr, "arenakit stress: building %llu items: %s\n", n,
			strerror(-(err ? err : retval)));
		return err ? err : retval;
	}
	return 0;
}

/* ak_list_count with a cursor, rerun until it is not cut (at most @max_runs runs). */
static long long count_resume(struct stress_run *s, unsigned int max_runs, unsigned int *runs)
{
	memset(&s->skel->bss->cursor, 0, sizeof(s->skel->bss->cursor));
	for (*runs = 1; ; (*runs)++) {
		if (run(s->skel->progs.count_resume))
			return -EIO;
		if (s->skel->bss->resume_result != -AK_EBUDGET || *runs >= max_runs)
			return s->skel->bss->resume_result;
	}
}

/* long: every walk of a sound list gives its length, or says it was cut. */
static int scenario_long(struct stress_run *s)
{
	static const unsigned long long sizes[] = { 1000, 65536, 1000000, 10000000,
						    100000000 };
	long long *w = s->skel->bss->walk_result, got;
	unsigned long long n;
	unsigned int runs;
	struct row *r;
	size_t i;
	int k;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		n = sizes[i] < s->max_size ? sizes[i] : s->max_size;
		if (i && n <= sizes[i - 1])
			break;
		progress(s, "long: building %llu items", n);
		if (build_to(s, n))
			return -1;
		r = row(s, "long", "6 walks of a sound list", n);
		progress(s, "long: walking %llu items", n);
		if (run_walks(s))
			return -1;
		for (k = 0; k < STRESS_WALKS; k++) {
			got = w[k];
			if (k == STRESS_FIND_ALL || k == STRESS_CHECK_ALL)
				verdict(r, got == 0, 0, "%s: %lld, want 0", walk_names[k], got);
			else
				verdict(r, got == (long long)n,
					k != STRESS_COUNT_ALL && got == -AK_EBUDGET,
					"%s: %lld, want %llu or -AK_EBUDGET", walk_names[k], got, n);
		}
		got = count_resume(s, MAX_RUNS, &runs);
		verdict(r, got == (long long)n, 0, "ak_list_count with a cursor: %lld after %u runs",
			got, runs);
		r->seconds = monotonic_seconds() - r->seconds;
		if (n == s->max_size)
			break;
	}
	return 0;
}

/* Every walk of the broken list must end with an error; a count is a silent lie. */
static void expect_errors(struct stress_run *s, struct row *r, unsigned long long index,
			  int want_bad)
{
	long long *w = s->skel->bss->walk_result;
	unsigned int runs;
	long long got;
	int k;

	if (run_walks(s)) {
		verdict(r, 0, 0, "the walks program failed");
		return;
	}
	for (k = 0; k < STRESS_WALKS; k++) {
		got = w[k];
		verdict(r, got < 0 && got != -AK_EBUDGET, got == -AK_EBUDGET && k != STRESS_COUNT_ALL &&
			k != STRESS_FIND_ALL && k != STRESS_CHECK_ALL,
			"%s: %lld, want an error", walk_names[k], got);
	}
	if (want_bad)
		verdict(r, s->skel->bss->bad_index == index, 0,
			"ak_list_check_all named item %llu, want %llu",
			(unsigned long long)s->skel->bss->bad_index, index);
	got = count_resume(s, 3, &runs);
	verdict(r, got < 0 && got != -AK_EBUDGET, got == -AK_EBUDGET,
		"ak_list_count with a cursor: %lld after %u runs", got, runs);
}

static int set_link(struct stress_run *s, unsigned long long index, int kind,
		    unsigned long long target)
{
	int err;

	s->skel->bss->link_index = index;
	s->skel->bss->link_kind = kind;
	s->skel->bss->link_target = target;
	err = run(s->skel->progs.set_link);
	if (err)
		fprintf(stderr, "arenakit stress: set_link: %s\n", strerror(-err));
	return err;
}

/* After a restore the list is sound again: the walks say so. */
static void expect_restored(struct stress_run *s, struct row *r, unsigned long long n)
{
	if (set_link(s, s->skel->bss->link_index, STRESS_LINK_RESTORE, 0) ||
	    run_walks(s)) {
		verdict(r, 0, 0, "restoring the link failed");
		return;
	}
	verdict(r, s->skel->bss->walk_result[STRESS_COUNT_ALL] == (long long)n &&
		s->skel->bss->walk_result[STRESS_CHECK_ALL] == 0, 0,
		"after the restore: count_all %lld, check_all %lld",
		s->skel->bss->walk_result[STRESS_COUNT_ALL],
		s->skel->bss->walk_result[STRESS_CHECK_ALL]);
}

static unsigned long long list_size(struct stress_run *s)
{
	return s->skel->bss->built;
}

/* cycle: the last item's link back into the middle, and an item linked to itself. */
static int scenario_cycle(struct stress_run *s)
{
	unsigned long long n = list_size(s), to;
	struct row *r;

	if (!n && build_to(s, n = s->max_size < 1000000 ? s->max_size : 1000000))
		return -1;
	to = (unsigned long long)rand_r(&s->seed) % n;
	r = row(s, "cycle", "last item back into the middle", n);
	progress(s, "cycle: item %llu -> item %llu of %llu", n - 1, to, n);
	if (set_link(s, n - 1, STRESS_LINK_ITEM, to))
		return -1;
	expect_errors(s, r, 0, 0);
	expect_restored(s, r, n);
	r->seconds = monotonic_seconds() - r->seconds;

	to = (unsigned long long)rand_r(&s->seed) % n;
	r = row(s, "cycle", "an item linked to itself", n);
	progress(s, "cycle: item %llu -> itself", to);
	if (set_link(s, to, STRESS_LINK_ITEM, to))
		return -1;
	expect_errors(s, r, 0, 0);
	expect_restored(s, r, n);
	r->seconds = monotonic_seconds() - r->seconds;
	return 0;
}

/* corrupt: a link overwritten with garbage, into page 0, into a freed page. */
static int scenario_corrupt(struct stress_run *s)
{
	static const struct {
		int kind;
		const char *what;
	} kinds[] = {
		{ STRESS_LINK_VALUE, "a link to garbage" },
		{ STRESS_LINK_PAGE0, "a link into page 0" },
		{ STRESS_LINK_FREED, "a link into a freed page" },
	};
	unsigned long long n = list_size(s), index, value;
	struct row *r;
	size_t i;

	if (!n && build_to(s, n = s->max_size < 1000000 ? s->max_size : 1000000))
		return -1;
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		index = (unsigned long long)rand_r(&s->seed) % n;
		value = (unsigned long long)rand_r(&s->seed) << 33 | (unsigned int)rand_r(&s->seed);
		r = row(s, "corrupt", kinds[i].what, n);
		progress(s, "corrupt: item %llu, %s", index, kinds[i].what);
		if (set_link(s, index, kinds[i].kind, value))
			return -1;
		expect_errors(s, r, index, 1);
		expect_restored(s, r, n);
		r->seconds = monotonic_seconds() - r->seconds;
	}
	return 0;
}

/*
 * glob-worst: lib/glob.c backtracks to the last '*' only, so "*a..ab"
 * against "a..ac" costs (pattern) x (string) steps. In BPF the answer must
 * be the native header's, or -AK_EBUDGET.
 */
static int scenario_glob_worst(struct stress_run *s)
{
	static const unsigned int sizes[] = { 64, 256, 1024, 4096, 8000 };
	char *pat = s->skel->arena->glob_pattern, *str = s->skel->arena->glob_string;
	unsigned int n, i, m;
	int want, got, ending;
	struct row *r;
	char what[48];

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		n = sizes[i];
		if (s->quick && n > 256)
			break;
		m = n / 2;
		snprintf(what, sizeof(what), "*a{%u}b against a{%u}c and a{%u}b", m, n, n);
		r = row(s, "glob-worst", what, n);
		for (ending = 0; ending < 2; ending++) {
			pat[0] = '*';
			memset(pat + 1, 'a', m);
			pat[m + 1] = 'b';
			pat[m + 2] = '\0';
			memset(str, 'a', n);
			str[n] = ending ? 'b' : 'c';
			str[n + 1] = '\0';
			s->skel->bss->glob_len = n + 1;
			progress(s, "glob-worst: %u x %u", m + 2, n + 1);
			if (run(s->skel->progs.glob_one))
				return -1;
			got = s->skel->bss->glob_result;
			want = ak_glob_match_len(pat, str, n + 1);
			verdict(r, got == want, got == -AK_EBUDGET, "BPF %d, native %d", got, want);
		}
		r->seconds = monotonic_seconds() - r->seconds;
	}
	return 0;
}

/*
 * misuse: a long seeded run of allocations and frees with double,
 * interior and foreign frees and stale cursors mixed in: each refused,
 * each counted, and the allocator's accounting back where it was.
 */
static int scenario_misuse(struct stress_run *s)
{
	struct stress_misuse *m = &s->skel->bss->misuse;
	struct ak_alloc_stats *st = &s->skel->arena->ak_allocator.stats, before;
	unsigned long long ops = s->quick ? 20000 : 2000000;
	unsigned int runs;
	int retval, err;
	struct row *r;

	if (!list_size(s) && build_to(s, 1000))	/* for the stale cursors */
		return -1;
	before = *st;
	memset(m, 0, sizeof(*m));
	s->skel->bss->rng = (s->seed | 1ULL) * 0x9e3779b97f4a7c15ULL;
	s->skel->bss->ops_left = ops;
	r = row(s, "misuse", "allocs, frees, misuse mixed in", ops);
	progress(s, "misuse: %llu operations", ops);
	err = arenakit_run_until_done(s->skel->progs.misuse_run, MAX_RUNS, &retval, &runs);
	if (err || retval) {
		fprintf(stderr, "arenakit stress: misuse: %s\n", strerror(-(err ? err : retval)));
		return -1;
	}
	if (run(s->skel->progs.misuse_teardown))
		return -1;
	verdict(r, m->doubles && m->doubles_caught == m->doubles, 0,
		"double frees: %llu caught of %llu", m->doubles_caught, m->doubles);
	verdict(r, m->interiors && m->interiors_caught == m->interiors, 0,
		"interior frees: %llu caught of %llu", m->interiors_caught, m->interiors);
	verdict(r, m->foreigns && m->foreigns_caught == m->foreigns, 0,
		"foreign frees: %llu caught of %llu", m->foreigns_caught, m->foreigns);
	verdict(r, m->stales && m->stales_caught == m->stales, 0,
		"stale cursors: %llu caught of %llu", m->stales_caught, m->stales);
	verdict(r, !m->free_failed && !m->alloc_failed, 0,
		"legitimate calls refused: %llu frees, %llu allocations", m->free_failed,
		m->alloc_failed);
	/*
	 * A second free of an object whose pages already went back to the
	 * kernel (a large one, or the last of its page) finds no block there:
	 * it is refused all the same, but counted as a bad free.
	 */
	verdict(r, st->double_frees - before.double_frees +
		st->bad_frees - before.bad_frees == m->doubles + m->interiors + m->foreigns &&
		st->double_frees - before.double_frees <= m->doubles, 0,
		"stats: %llu double and %llu bad frees counted, %llu double and %llu other "
		"injected", st->double_frees - before.double_frees,
		st->bad_frees - before.bad_frees, m->doubles, m->interiors + m->foreigns);
	verdict(r, st->objects == before.objects && st->bytes == before.bytes, 0,
		"after freeing everything: %llu objects, %llu bytes (before: %llu, %llu)",
		st->objects, st->bytes, before.objects, before.bytes);
	verdict(r, st->pages == st->slab_pages + st->large_pages, 0,
		"pages %llu != slab %llu + large %llu", st->pages, st->slab_pages, st->large_pages);
	progress_clear(s);
	printf("misuse: %llu allocations, %llu frees; caught %llu double, %llu interior, "
	       "%llu foreign frees and %llu stale cursors, in %u runs (stats: %llu double, "
	       "%llu bad frees)\n", m->allocs, m->frees, m->doubles_caught, m->interiors_caught,
	       m->foreigns_caught, m->stales_caught, runs, st->double_frees - before.double_frees,
	       st->bad_frees - before.bad_frees);
	r->seconds = monotonic_seconds() - r->seconds;
	return 0;
}

/*
 * model: batches of random operations on a list and a hash table, drawn
 * here (xorshift64 from the seed), applied in BPF and to a plain model
 * here; after each batch every result must be the model's, the list must
 * hold the model's keys in its order (read through the mmap), both
 * structures must pass their whole checks, and every key must look up to
 * the model's value. Phases of growth and shrinking make the table grow
 * many times over and the list swing between empty and long.
 */
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
			op->kind = (const unsigned int[]){ STRESS_OP_LIST_DEL, STRESS_OP_LIST_TO_TAIL,
							   STRESS_OP_LIST_POP, grow ? STRESS_OP_LIST_DEL :
							   STRESS_OP_LIST_POP }[(r >> 4) % 4];
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
static void model_check_list(struct stress_run *s, struct row *r, const struct model *m,
			     unsigned int batch)
{
	struct ak_list *list = &s->skel->arena->model_list;
	struct ak_list_node *pos = list->head.next;
	unsigned int i;

	for (i = 0; i < m->list_len && pos && pos != &list->head; i++, pos = pos->next)
		if (ak_list_entry(pos, struct stress_item, node)->key != m->list[i])
			break;
	verdict(r, i == m->list_len && pos == &list->head && ak_list_len(list) == m->list_len, 0,
		"batch %u: the list differs from the model at item %u of %u (len %llu)", batch,
		i, m->list_len, ak_list_len(list));
	verdict(r, s->skel->bss->model_list_check == 0, 0, "batch %u: ak_list_check_all: %lld",
		batch, s->skel->bss->model_list_check);
}

/* Every key, looked up here through the mmap, against the model. */
static void model_check_htab(struct stress_run *s, struct row *r, const struct model *m,
			     unsigned int batch)
{
	struct ak_htab *h = &s->skel->arena->model_htab;
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
	verdict(r, k == STRESS_MODEL_KEYS && ak_htab_count(h) == m->entries, 0,
		"batch %u: key %u differs from the model (count %llu, model %llu)", batch, k,
		ak_htab_count(h), m->entries);
	verdict(r, s->skel->bss->model_htab_check == 0, 0, "batch %u: ak_htab_check_all: %lld",
		batch, s->skel->bss->model_htab_check);
}

static int scenario_model(struct stress_run *s)
{
	struct ak_alloc_stats *st = &s->skel->arena->ak_allocator.stats, before = *st;
	unsigned int batches = s->quick ? 4 : 100, b, i, runs, wrong[2];
	struct stress_op *ops = s->skel->arena->model_ops;
	unsigned long long buckets_max = 0, list_min = ~0ULL, list_max = 0;
	struct row *rl, *rh;
	struct model *m;
	int retval, err;
	long long want;

	m = calloc(1, sizeof(*m));
	if (!m)
		return -1;
	m->rng = (s->seed | 1ULL) * 0x9e3779b97f4a7c15ULL;
	rl = row(s, "model", "list: random ops against a model",
		 (unsigned long long)batches * STRESS_MODEL_BATCH);
	rh = row(s, "model", "htab: random ops against a model",
		 (unsigned long long)batches * STRESS_MODEL_BATCH);
	for (b = 0; b < batches; b++) {
		progress(s, "model: batch %u of %u, list %u items, table %llu entries", b + 1,
			 batches, m->list_len, m->entries);
		for (i = 0; i < STRESS_MODEL_BATCH; i++)
			model_draw(m, &ops[i], b % 8 < 4);
		s->skel->bss->model_n = STRESS_MODEL_BATCH;
		s->skel->bss->model_done = 0;
		err = arenakit_run_until_done(s->skel->progs.model_run, MAX_RUNS, &retval, &runs);
		if (err || retval) {
			fprintf(stderr, "arenakit stress: model: %s\n",
				strerror(-(err ? err : retval)));
			free(m);
			return -1;
		}
		wrong[0] = wrong[1] = 0;
		for (i = 0; i < STRESS_MODEL_BATCH; i++) {
			int htab = ops[i].kind >= STRESS_OP_HTAB_UPDATE;

			want = model_apply(m, &ops[i]);
			if (ops[i].result != want && !wrong[htab]++)
				fprintf(stderr, "\narenakit stress: model: batch %u op %u: %s of key %llu "
					"returned %lld, the model says %lld\n", b, i,
					op_names[ops[i].kind], ops[i].key, ops[i].result, want);
		}
		verdict(rl, !wrong[0], 0, "batch %u: %u list results differ", b, wrong[0]);
		verdict(rh, !wrong[1], 0, "batch %u: %u htab results differ", b, wrong[1]);
		if (run(s->skel->progs.model_check)) {
			free(m);
			return -1;
		}
		model_check_list(s, rl, m, b);
		model_check_htab(s, rh, m, b);
		list_min = m->list_len < list_min ? m->list_len : list_min;
		list_max = m->list_len > list_max ? m->list_len : list_max;
		if (s->skel->arena->model_htab.cur &&
		    s->skel->arena->model_htab.cur->nbuckets > buckets_max)
			buckets_max = s->skel->arena->model_htab.cur->nbuckets;
	}
	err = run(s->skel->progs.model_teardown);
	verdict(rh, !err && st->objects == before.objects && st->bytes == before.bytes, 0,
		"after teardown (%d): %llu objects, %llu bytes (before: %llu, %llu)", err,
		st->objects, st->bytes, before.objects, before.bytes);
	progress_clear(s);
	printf("model: %u batches of %u operations; after a batch the list held %llu to %llu "
	       "items, the table up to %llu buckets\n", batches, STRESS_MODEL_BATCH, list_min,
	       list_max, buckets_max);
	rl->seconds = rh->seconds = monotonic_seconds() - rl->seconds;
	free(m);
	return 0;
}

/*
 * exhaust: an operation meets a full arena at every point where it
 * allocates. The arena is filled until no size can be had, then given back
 * one filler object at a time, the operation tried after each: until it
 * succeeds, each try must fail with -ENOMEM and leave the structure as it
 * was (its length, its entries, its whole check).
 */
struct exhaust {
	struct stress_exhaust *skel;
	struct row *r;
	const char *what;
};

static unsigned long long exhaust_size(struct exhaust *x, int htab)
{
	return htab ? ak_htab_count(&x->skel->arena->exhaust_htab) :
		      ak_list_len(&x->skel->arena->exhaust_list);
}

/* Is the structure as it should be with @n entries? Keys 0..n-1 for the table. */
static int exhaust_sound(struct exhaust *x, int htab, unsigned long long n)
{
	unsigned long long *v;
	unsigned int k;
	int err;

	if (run(x->skel->progs.check) || x->skel->bss->list_check || x->skel->bss->htab_check ||
	    exhaust_size(x, htab) != n)
		return 0;
	for (k = 0; htab && k < n; k++) {
		v = ak_htab_lookup(&x->skel->arena->exhaust_htab, &k, &err);
		if (!v || *v != (unsigned long long)k << 8)
			return 0;
	}
	return 1;
}

/* Keys 0..@n-1 in, with memory to spare: each @op must succeed. */
static int exhaust_prefill(struct exhaust *x, const struct bpf_program *op, unsigned int n)
{
	unsigned int k;

	for (k = 0; k < n; k++) {
		x->skel->bss->op_key = k;
		if (run(op) || x->skel->bss->op_result)
			return -1;
	}
	return 0;
}

/* Try @op with key @key in a full arena until it succeeds; the tries it took. */
static int exhaust_op(struct stress_run *s, struct exhaust *x, const struct bpf_program *op,
		      int htab, unsigned int key)
{
	unsigned long long n = exhaust_size(x, htab);
	long long result;
	int tries, err;

	if (run(x->skel->progs.fill)) {
		verdict(x->r, 0, 0, "%s: the filler ran out of slots", x->what);
		return -1;
	}
	progress(s, "exhaust: %s, %u filler objects", x->what, x->skel->bss->nfillers);
	for (tries = 1; ; tries++) {
		x->skel->bss->op_key = key;
		if (run(op))
			return -1;
		result = x->skel->bss->op_result;
		if (!result) {
			verdict(x->r, exhaust_sound(x, htab, n + 1), 0,
				"%s: after it succeeded (try %d) the structure is not sound", x->what,
				tries);
			break;
		}
		verdict(x->r, result == -ENOMEM, 0, "%s: try %d returned %lld, want -ENOMEM",
			x->what, tries, result);
		verdict(x->r, exhaust_sound(x, htab, n), 0,
			"%s: after failing (try %d) the structure changed", x->what, tries);
		err = run(x->skel->progs.unfill_one);
		if (err) {
			verdict(x->r, 0, 0, "%s: still failing with all the filler freed (%s)",
				x->what, strerror(-err));
			return -1;
		}
	}
	while (!run(x->skel->progs.unfill_one))
		;
	return tries;
}

static int scenario_exhaust(struct stress_run *s)
{
	struct exhaust x = { 0 };
	struct ak_alloc_stats *st, before;
	unsigned int grew_at_once, nbuckets;
	int list_tries, htab_tries;
	int err = -1;

	x.skel = stress_exhaust__open();
	if (!x.skel || arenakit_load_skeleton(x.skel->skeleton)) {
		fprintf(stderr, "arenakit stress: exhaust: cannot load its program\n");
		goto out;
	}
	st = &x.skel->arena->ak_allocator.stats;
	before = *st;
	if (run(x.skel->progs.setup))
		goto out;

	x.r = row(s, "exhaust", "list add in a full arena", STRESS_EXHAUST_PAGES);
	x.what = "list add";
	if (exhaust_prefill(&x, x.skel->progs.list_add, 5))
		goto out;
	list_tries = exhaust_op(s, &x, x.skel->progs.list_add, 0, 5);
	if (list_tries < 0)
		goto out;
	x.r->seconds = monotonic_seconds() - x.r->seconds;

	/* 13 of 16 buckets: the next insert starts a growth (load past 3/4). */
	x.r = row(s, "exhaust", "htab insert that grows, full arena", STRESS_EXHAUST_PAGES);
	x.what = "htab insert";
	if (exhaust_prefill(&x, x.skel->progs.htab_insert, 13))
		goto out;
	nbuckets = x.skel->arena->exhaust_htab.cur->nbuckets;
	htab_tries = exhaust_op(s, &x, x.skel->progs.htab_insert, 1, 13);
	if (htab_tries < 0)
		goto out;
	grew_at_once = x.skel->arena->exhaust_htab.cur->nbuckets > nbuckets;
	/* With memory back, the next insert grows the table if that one could not. */
	x.skel->bss->op_key = 14;
	if (run(x.skel->progs.htab_insert))
		goto out;
	verdict(x.r, !x.skel->bss->op_result &&
		x.skel->arena->exhaust_htab.cur->nbuckets > nbuckets && exhaust_sound(&x, 1, 15), 0,
		"with memory back: insert %lld, %llu buckets (were %u)", x.skel->bss->op_result,
		x.skel->arena->exhaust_htab.cur->nbuckets, nbuckets);
	x.r->seconds = monotonic_seconds() - x.r->seconds;

	x.r = row(s, "exhaust", "teardown: the allocator back to baseline", 0);
	verdict(x.r, !run(x.skel->progs.teardown) && st->objects == before.objects &&
		st->bytes == before.bytes, 0, "after teardown: %llu objects, %llu bytes (before: "
		"%llu, %llu)", st->objects, st->bytes, before.objects, before.bytes);
	x.r->seconds = monotonic_seconds() - x.r->seconds;
	progress_clear(s);
	printf("exhaust: a %u-page arena; failed cleanly with -ENOMEM before they fit: "
	       "list add %d tries, htab insert %d (%s)\n", STRESS_EXHAUST_PAGES, list_tries - 1,
	       htab_tries - 1, grew_at_once ? "it grew the table when it fit" :
	       "it went in without growing; the next insert grew the table");
	err = 0;
out:
	stress_exhaust__destroy(x.skel);
	return err;
}

/*
 * concurrent: a writer thread per CPU runs conc_run, all at once, on one
 * list (under an ak_lock) and one table; each thread works on keys of its
 * own, so a replay of its log alone says what it must have left and what
 * each of its calls must have returned. Meanwhile a thread here reads the
 * same structures through the mmap as documented: the list under the same
 * lock, the table with ak_htab_lookup_copy.
 */
struct conc_writer {
	struct stress_run *s;
	pthread_t thread;
	unsigned int tid;
	int err;
	unsigned int runs;
};

struct conc_reader {
	struct stress_run *s;
	volatile int stop;
	unsigned long long list_reads, list_busy, list_bad;
	unsigned long long lookups, hits, busy, foreign, odd;
	char first_bad[160];
};

static void *conc_write(void *arg)
{
	struct conc_writer *w = arg;
	struct { __u32 tid; } ctx = { w->tid };
	int retval;

	w->err = arenakit_pin_to_cpu(w->tid % sysconf(_SC_NPROCESSORS_ONLN));
	for (w->runs = 1; !w->err && w->runs <= 1000000; w->runs++) {
		w->err = arenakit_run_ctx(w->s->skel->progs.conc_run, &ctx, sizeof(ctx), &retval);
		if (!w->err && retval != -AK_EBUDGET) {
			w->err = retval;
			break;
		}
	}
	return 0;
}

/* One walk of the list under its lock: each thread's items in the order it added them. */
static void conc_read_list(struct conc_reader *rd, struct ak_list *list, struct ak_lock *lock)
{
	unsigned long long last[STRESS_CONC_THREADS], n = 0, key;
	struct ak_list_node *pos;
	unsigned int tid;

	if (ak_lock_acquire(lock)) {
		rd->list_busy++;
		return;
	}
	memset(last, 0xff, sizeof(last));
	for (pos = list->head.next; pos && pos != &list->head && n <= ak_list_len(list);
	     pos = pos->next, n++) {
		key = ak_list_entry(pos, struct stress_item, node)->key;
		tid = key >> 32;
		if (tid >= STRESS_CONC_THREADS ||
		    (last[tid] != ~0ULL && (unsigned int)key <= (unsigned int)last[tid]))
			break;
		last[tid] = key;
	}
	if ((!pos || pos != &list->head || n != ak_list_len(list)) && !rd->list_bad++)
		snprintf(rd->first_bad, sizeof(rd->first_bad),
			 "list under the lock: stopped at item %llu of %llu", n, ak_list_len(list));
	ak_lock_release(lock);
	rd->list_reads++;
}

static void *conc_read(void *arg)
{
	struct conc_reader *rd = arg;
	struct ak_htab *h = &rd->s->skel->arena->conc_htab;
	unsigned int seed = rd->s->seed, key, i;
	unsigned long long v;
	int err;

	while (!rd->stop) {
		conc_read_list(rd, &rd->s->skel->arena->conc_list, &rd->s->skel->arena->conc_lock);
		for (i = 0; i < 256; i++) {
			key = STRESS_CONC_KEY(rand_r(&seed) % STRESS_CONC_THREADS,
					      rand_r(&seed) % STRESS_CONC_KEYS);
			err = ak_htab_lookup_copy(h, &key, &v);
			rd->lookups++;
			if (!err) {
				rd->hits++;
				if (v >> 24 != key && !rd->foreign++)
					snprintf(rd->first_bad, sizeof(rd->first_bad),
						 "key %#x read value %#llx, another key's", key, v);
			} else if (err == -EBUSY || err == -AK_EBUDGET) {
				rd->busy++;
			} else if (err != -ENOENT && !rd->odd++) {
				snprintf(rd->first_bad, sizeof(rd->first_bad),
					 "key %#x: ak_htab_lookup_copy returned %d", key, err);
			}
		}
	}
	return 0;
}

/* A thread's replay: its items in order, its table, and each result it logged. */
struct conc_replay {
	unsigned long long *items, nitems, first, pushed;
	unsigned char present[STRESS_CONC_KEYS];
	unsigned long long value[STRESS_CONC_KEYS];
	unsigned long long entries, skipped;
};

static unsigned long long conc_rng0(unsigned int seed, unsigned int tid)
{
	return ((seed | 1ULL) * 0x9e3779b97f4a7c15ULL) ^ (tid + 1ULL) * 0xbf58476d1ce4e5b9ULL;
}

/* Replay thread @tid's @ops results; the first that differs, or -1. */
static long long conc_replay(struct stress_run *s, unsigned int tid, struct conc_replay *m,
			     long long *got, long long *want)
{
	unsigned long long rng = conc_rng0(s->seed, tid), r, op, ops;
	const long long *log = s->skel->arena->conc_log[tid];
	unsigned int k;

	ops = s->skel->arena->conc_threads[tid].done;
	for (op = 0; op < ops; op++) {
		r = rng = stress_xorshift(rng);
		k = (r >> 8) % STRESS_CONC_KEYS;
		*got = log[op];
		/* A busy lock or a cut walk changed nothing: the op is left out. */
		if (*got == -EBUSY || *got == -AK_EBUDGET) {
			m->skipped++;
			continue;
		}
		switch (r % 8) {
		case 0: case 1:
			*want = 0;
			if (*got == 0)
				m->items[m->nitems++] = STRESS_CONC_ITEM(tid, m->pushed++);
			break;
		case 2:
			*want = m->first < m->nitems ? 0 : -ENOENT;
			if (*got == 0 && !*want)
				m->first++;
			break;
		case 3: case 4: case 5:
			*want = 0;
			if (*got == 0) {
				m->entries += !m->present[k];
				m->present[k] = 1;
				m->value[k] = STRESS_CONC_VALUE(STRESS_CONC_KEY(tid, k), op);
			}
			break;
		case 6:
			*want = m->present[k] ? 0 : -ENOENT;
			if (*got == 0 && m->present[k]) {
				m->present[k] = 0;
				m->entries--;
			}
			break;
		default:
			*want = m->present[k] ? (long long)m->value[k] : -ENOENT;
		}
		if (*got != *want)
			return op;
	}
	return -1;
}

static int scenario_concurrent(struct stress_run *s)
{
	unsigned long long ops = s->quick ? 2000 : STRESS_CONC_OPS, total = 0, n, at[STRESS_CONC_THREADS];
	struct ak_alloc_stats *st = &s->skel->arena->ak_allocator.stats, before = *st;
	struct stress__arena *a = s->skel->arena;
	struct conc_writer w[STRESS_CONC_THREADS];
	struct conc_replay *m[STRESS_CONC_THREADS] = { 0 };
	struct conc_reader rd = { .s = s };
	struct ak_list_node *pos;
	pthread_t reader;
	long long bad, got = 0, want = 0;
	unsigned int t, k, key;
	unsigned long long *v;
	struct row *r, *rr;
	int err, ret = -1;

	if (run(s->skel->progs.conc_setup))
		return -1;
	for (t = 0; t < STRESS_CONC_THREADS; t++) {
		memset(&a->conc_threads[t], 0, sizeof(a->conc_threads[t]));
		a->conc_threads[t].rng = conc_rng0(s->seed, t);
		a->conc_threads[t].ops = ops;
		w[t] = (struct conc_writer){ .s = s, .tid = t };
	}
	r = row(s, "concurrent", "4 writers: list under ak_lock, htab", ops * STRESS_CONC_THREADS);
	rr = row(s, "concurrent", "a reader through the mmap meanwhile", 0);
	progress(s, "concurrent: %u writers x %llu operations, a reader", STRESS_CONC_THREADS, ops);
	if (pthread_create(&reader, NULL, conc_read, &rd))
		return -1;
	for (t = 0; t < STRESS_CONC_THREADS; t++)
		if (pthread_create(&w[t].thread, NULL, conc_write, &w[t]))
			w[t].err = -errno;
	for (t = 0; t < STRESS_CONC_THREADS; t++)
		if (w[t].thread)
			pthread_join(w[t].thread, NULL);
	rd.stop = 1;
	pthread_join(reader, NULL);
	for (t = 0; t < STRESS_CONC_THREADS; t++)
		if (w[t].err) {
			fprintf(stderr, "arenakit stress: concurrent: writer %u: %s\n", t,
				strerror(-w[t].err));
			goto out;
		}

	/* Each thread's log, replayed alone. */
	for (t = 0; t < STRESS_CONC_THREADS; t++) {
		m[t] = calloc(1, sizeof(*m[t]));
		if (!m[t] || !(m[t]->items = calloc(ops, sizeof(*m[t]->items))))
			goto out;
		bad = conc_replay(s, t, m[t], &got, &want);
		verdict(r, bad < 0 && a->conc_threads[t].done == ops, 0,
			"thread %u, operation %lld of %llu: returned %lld, its replay says %lld", t,
			bad, (unsigned long long)a->conc_threads[t].done, got, want);
		total += m[t]->entries;
	}
	/* The list: each thread's items, in its order, nothing else. */
	memset(at, 0, sizeof(at));
	for (pos = a->conc_list.head.next, n = 0; pos && pos != &a->conc_list.head; pos = pos->next, n++) {
		unsigned long long key64 = ak_list_entry(pos, struct stress_item, node)->key;

		t = key64 >> 32;
		if (t >= STRESS_CONC_THREADS || m[t]->first + at[t] >= m[t]->nitems ||
		    m[t]->items[m[t]->first + at[t]] != key64)
			break;
		at[t]++;
	}
	for (t = 0; t < STRESS_CONC_THREADS && pos == &a->conc_list.head; t++)
		if (m[t]->first + at[t] != m[t]->nitems)
			pos = NULL;
	verdict(r, pos == &a->conc_list.head && n == ak_list_len(&a->conc_list), 0,
		"the list differs from the replays at item %llu", n);
	/* The table: every key of every thread as its replay left it. */
	for (t = 0, bad = 0; t < STRESS_CONC_THREADS; t++)
		for (k = 0; k < STRESS_CONC_KEYS; k++) {
			key = STRESS_CONC_KEY(t, k);
			v = ak_htab_lookup(&a->conc_htab, &key, &err);
			bad += m[t]->present[k] ? !v || *v != m[t]->value[k] : !!v;
		}
	verdict(r, !bad && ak_htab_count(&a->conc_htab) == total, 0,
		"the table: %lld keys differ from the replays, count %llu, replays %llu", bad,
		ak_htab_count(&a->conc_htab), total);
	if (run(s->skel->progs.conc_check))
		goto out;
	verdict(r, !s->skel->bss->conc_list_check && !s->skel->bss->conc_htab_check, 0,
		"ak_list_check_all %lld, ak_htab_check_all %lld", s->skel->bss->conc_list_check,
		s->skel->bss->conc_htab_check);
	err = run(s->skel->progs.conc_teardown);
	verdict(r, !err && st->objects == before.objects && st->bytes == before.bytes, 0,
		"after teardown (%d): %llu objects, %llu bytes (before: %llu, %llu)", err,
		st->objects, st->bytes, before.objects, before.bytes);

	verdict(rr, rd.list_reads > 0 && !rd.list_bad, 0, "%llu of %llu list reads: %s",
		rd.list_bad, rd.list_reads, rd.first_bad);
	verdict(rr, rd.hits > 0 && !rd.foreign && !rd.odd, 0, "%llu foreign values, %llu odd "
		"errors in %llu lookups: %s", rd.foreign, rd.odd, rd.lookups, rd.first_bad);
	progress_clear(s);
	printf("concurrent: %u writers on %ld CPUs, %llu operations each (left out as busy or "
	       "cut: %llu, %llu, %llu, %llu); the reader walked the list %llu times (%llu busy) "
	       "and made %llu lookups (%llu hits, %llu busy)\n", STRESS_CONC_THREADS,
	       sysconf(_SC_NPROCESSORS_ONLN), ops, m[0]->skipped, m[1]->skipped, m[2]->skipped,
	       m[3]->skipped, rd.list_reads, rd.list_busy, rd.lookups, rd.hits, rd.busy);
	r->seconds = rr->seconds = monotonic_seconds() - r->seconds;
	rr->size = rd.list_reads + rd.lookups;
	ret = 0;
out:
	for (t = 0; t < STRESS_CONC_THREADS; t++)
		if (m[t]) {
			free(m[t]->items);
			free(m[t]);
		}
	return ret;
}

static const struct {
	const char *name;
	int (*run)(struct stress_run *s);
} scenarios[] = {
	{ "long", scenario_long },
	{ "cycle", scenario_cycle },
	{ "corrupt", scenario_corrupt },
	{ "glob-worst", scenario_glob_worst },
	{ "misuse", scenario_misuse },
	{ "exhaust", scenario_exhaust },
	{ "concurrent", scenario_concurrent },
	{ "model", scenario_model },
};
#define N_SCENARIOS (sizeof(scenarios) / sizeof(scenarios[0]))

static void usage(FILE *f)
{
	fprintf(f, "usage: arenakit stress [--seed N] [--size N] [--quick] SCENARIO...|all\n"
		"Drive arenakit's structures to their edges in BPF and check that every\n"
		"walk ends with the right answer or an error, never a silent wrong one.\n"
		"  long        lists of 1k, 64k, 1M, 10M (up to --size) items, six walks each\n"
		"  cycle       the last item linked back into the middle; an item to itself\n"
		"  corrupt     a link to garbage, into page 0, into a freed page\n"
		"  glob-worst  quadratic glob inputs of 64 to 8000 bytes\n"
		"  misuse      2M random allocations and frees with double, interior and\n"
		"              foreign frees and stale cursors mixed in\n"
		"  exhaust     list add and a growing htab insert in a full arena, memory\n"
		"              given back an object at a time: clean -ENOMEM until they fit\n"
		"  concurrent  a writer per CPU (4) on one list under an ak_lock and one\n"
		"              table, checked against a replay of each thread's log, and\n"
		"              a user-space reader through the mmap meanwhile\n"
		"  model       100 batches of 4096 random list and hash-table operations,\n"
		"              each batch checked against a model kept in user space\n"
		"  --seed N    the random seed (default %u; printed)\n"
		"  --size N    the longest list (default %llu; 100000000 needs a 4 GiB VM)\n"
		"  --quick     small sizes only\n"
		"Prints a summary table; exits 1 if any invariant broke, 2 on bad usage.\n",
		DEFAULT_SEED, DEFAULT_SIZE);
}

static void summary(struct stress_run *s)
{
	int i;

	printf("\n%-11s %-42s %11s %6s %5s %9s %6s %8s\n", "scenario", "case", "size", "checks",
	       "ok", "truncated", "broken", "seconds");
	for (i = 0; i < s->nrows; i++) {
		struct row *r = &s->rows[i];

		printf("%-11s %-42s %11llu %6d %5d %9d %6d %8.2f\n", r->scenario, r->what, r->size,
		       r->checks, r->ok, r->truncated, r->broken, r->seconds);
	}
}

int cmd_stress(int argc, char **argv)
{
	struct stress_run s = { .seed = DEFAULT_SEED, .max_size = DEFAULT_SIZE };
	int chosen[N_SCENARIOS] = { 0 }, any = 0, broken = 0, i, err;
	size_t k;
	char *end;

	if (wants_help(argc, argv)) {
		usage(stdout);
		return 0;
	}
	for (i = 1; i < argc; i++) {
		if ((!strcmp(argv[i], "--seed") || !strcmp(argv[i], "--size")) && i + 1 < argc) {
			unsigned long long v = strtoull(argv[i + 1], &end, 0);

			if (*end || !*argv[i + 1] || !v) {
				fprintf(stderr, "arenakit stress: %s: not a positive number: %s\n",
					argv[i], argv[i + 1]);
				return 2;
			}
			if (!strcmp(argv[i], "--seed"))
				s.seed = v;
			else
				s.max_size = v;
			i++;
		} else if (!strcmp(argv[i], "--quick")) {
			s.quick = 1;
		} else if (!strcmp(argv[i], "all")) {
			for (k = 0; k < N_SCENARIOS; k++)
				chosen[k] = any = 1;
		} else {
			for (k = 0; k < N_SCENARIOS && strcmp(argv[i], scenarios[k].name); k++)
				;
			if (k == N_SCENARIOS) {
				fprintf(stderr, "arenakit stress: no scenario '%s'\n", argv[i]);
				usage(stderr);
				return 2;
			}
			chosen[k] = any = 1;
		}
	}
	if (!any) {
		usage(stderr);
		return 2;
	}
	if (s.quick && s.max_size > 65536)
		s.max_size = 65536;
	if (s.max_size > (unsigned long long)STRESS_SLAB_ITEMS * STRESS_MAX_SLABS) {
		fprintf(stderr, "arenakit stress: --size: at most %llu items\n",
			(unsigned long long)STRESS_SLAB_ITEMS * STRESS_MAX_SLABS);
		return 2;
	}
	s.tty = isatty(STDERR_FILENO);
	printf("arenakit stress: seed %u, lists up to %llu items\n", s.seed, s.max_size);
	fflush(stdout);

	s.skel = stress__open();
	if (!s.skel) {
		fprintf(stderr, "arenakit stress: %s\n", strerror(errno));
		return 1;
	}
	err = arenakit_load_skeleton(s.skel->skeleton);
	for (k = 0; !err && k < N_SCENARIOS; k++)
		if (chosen[k] && scenarios[k].run(&s))
			err = -EIO;
	progress(&s, "%s", "");
	summary(&s);
	for (i = 0; i < s.nrows; i++)
		broken += s.rows[i].broken;
	stress__destroy(s.skel);
	if (err) {
		fprintf(stderr, "arenakit stress: could not run every scenario\n");
		return 1;
	}
	printf("arenakit stress: %s\n", broken ? "invariants BROKEN (see above)" :
	       "every walk ended right or said why");
	return broken ? 1 : 0;
}
