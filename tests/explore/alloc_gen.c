// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * alloc.h's public calls as a table for the generator (gen.h), with their
 * sequential model. Every state has two objects made in setup that the
 * threads race to free: S (16 bytes) and L (a large object of three
 * pages). An object a thread allocates is filled with its own pattern, and
 * the pattern is checked after a point where any other thread may run (a
 * program using its memory): a block handed to two owners shows there, or
 * in the check after the schedule, which frees what was kept.
 */
#include <errno.h>
#include <string.h>
#include <criterion/criterion.h>

#include "explore/gen.h"

#define LARGE (3 * AK_PAGE_SIZE - 64)

static void *shared_small, *shared_large;
static void *kept[GEN_MAX_CALLS];
static unsigned long long kept_size[GEN_MAX_CALLS];
static int pattern_broken;

static void fill(void *p, unsigned long long size, int thread)
{
	memset(p, 0x11 * (thread + 1), size);
}

static int intact(const void *p, unsigned long long size, int thread)
{
	const unsigned char *b = p;
	unsigned long long i;

	for (i = 0; i < size; i++)
		if (b[i] != (unsigned char)(0x11 * (thread + 1)))
			return 0;
	return 1;
}

/* ---- the starting states ---- */

static void setup_common(void)
{
	memset(kept, 0, sizeof(kept));
	memset(kept_size, 0, sizeof(kept_size));
	pattern_broken = 0;
	shared_small = ak_alloc(16, NULL);
	shared_large = ak_alloc(LARGE, NULL);
	if (!shared_small || !shared_large)
		explore_fail("setup: no memory");
}

/* S and L, and a pool of four 16-byte blocks for _nosleep allocations. */
static void setup_fresh(void)
{
	setup_common();
	if (ak_alloc_reserve(16, 4))
		explore_fail("setup: reserve");
}

/*
 * S the only live block of its page (the first 16-byte page full of freed
 * blocks but S): freeing it empties the page, which goes back; no pool.
 */
static void setup_page_edge(void)
{
	unsigned long long page;
	void *blocks[512], *p;
	int n = 0, i;

	memset(kept, 0, sizeof(kept));
	memset(kept_size, 0, sizeof(kept_size));
	pattern_broken = 0;
	/* One page of the class full; S its last block; the rest freed. */
	blocks[n++] = ak_alloc(16, NULL);
	page = (unsigned long long)blocks[0] / AK_PAGE_SIZE;
	for (;;) {
		p = ak_alloc(16, NULL);
		if (!p || n == 512) {
			explore_fail("setup: no memory");
			return;
		}
		if ((unsigned long long)p / AK_PAGE_SIZE != page) {
			blocks[n++] = p;
			break;
		}
		blocks[n++] = p;
	}
	shared_small = blocks[n - 2];
	for (i = 0; i < n; i++)
		if (i != n - 2 && ak_free(blocks[i]))
			explore_fail("setup: free");
	shared_large = ak_alloc(LARGE, NULL);
	if (!shared_large || ak_alloc_trim())
		explore_fail("setup: no memory, or trim");
}

enum { FRESH, PAGE_EDGE, NSTATES };

static const struct gen_state states[NSTATES] = {
	[FRESH] = { "S, L and a pool", setup_fresh },
	[PAGE_EDGE] = { "S alone on its page, no pool", setup_page_edge },
};

/* ---- the calls ---- */

/* A program's use of its memory: any other thread may run meanwhile. */
static void use(void)
{
	explore_point("use", __FILE__, __LINE__);
}

static void alloc_kept(struct gen_call *c, unsigned long long size, int nosleep)
{
	int err = 0;
	void *p = nosleep ? ak_alloc_nosleep(size, &err) : ak_alloc(size, &err);

	c->ret = p ? 0 : err;
	if (!p)
		return;
	fill(p, size, c->thread);
	use();
	if (!intact(p, size, c->thread))
		pattern_broken = 1;
	kept[c->thread] = p;
	kept_size[c->thread] = size;
}

static void op_alloc16(struct gen_call *c)
{
	alloc_kept(c, 16, 0);
}

static void op_alloc_large(struct gen_call *c)
{
	alloc_kept(c, LARGE, 0);
}

static void op_alloc_nosleep16(struct gen_call *c)
{
	alloc_kept(c, 16, 1);
}

static void op_alloc_free24(struct gen_call *c)
{
	int err = 0;
	void *p = ak_alloc(24, &err);

	c->ret = p ? 0 : err;
	if (!p)
		return;
	fill(p, 24, c->thread);
	use();
	if (!intact(p, 24, c->thread))
		pattern_broken = 1;
	c->aux = (unsigned long long)(long long)ak_free(p);
}

static void op_free_s(struct gen_call *c)
{
	c->ret = ak_free(shared_small);
}

static void op_free_nosleep_s(struct gen_call *c)
{
	c->ret = ak_free_nosleep(shared_small);
}

static void op_free_l(struct gen_call *c)
{
	c->ret = ak_free(shared_large);
}

static void op_free_nosleep_l(struct gen_call *c)
{
	c->ret = ak_free_nosleep(shared_large);
}

/* A pointer into L's second page: refused, whatever L's state. */
static void op_free_inside_l(struct gen_call *c)
{
	c->ret = ak_free((char *)shared_large + AK_PAGE_SIZE);
}

/*
 * A program's own large object whose later pages hold a copy of a real
 * page header (that of its own 16-byte object's page), as bytes a program
 * stores or copies may: a free of a pointer at the first block the copy
 * would describe is refused (ret), and both objects then free (aux).
 */
static void op_free_forged(struct gen_call *c)
{
	int err = 0;
	char *big = ak_alloc(LARGE, &err), *small = big ? ak_alloc(16, &err) : NULL;
	unsigned long long page;

	c->ret = err;
	if (!small) {
		c->aux = (unsigned long long)(long long)ak_free(big);
		return;
	}
	for (page = 1; page < 3; page++) {
		/* A forger copies a live header as others change it: a race by design. */
		explore_read_at_once(2);
		memcpy(big - 64 + page * AK_PAGE_SIZE,
		       (void *)((unsigned long long)small & ~(AK_PAGE_SIZE - 1)), 64);
	}
	use();
	c->ret = ak_free(big - 64 + AK_PAGE_SIZE + 64);
	c->aux = (unsigned long long)(long long)(ak_free(small) ?: ak_free(big));
}

static void op_reserve(struct gen_call *c)
{
	c->ret = ak_alloc_reserve(16, 6);
}

static void op_trim(struct gen_call *c)
{
	c->ret = ak_alloc_trim();
}

enum {
	ALLOC16, ALLOC_LARGE, ALLOC_NOSLEEP16, ALLOC_FREE24, FREE_S, FREE_NOSLEEP_S, FREE_L,
	FREE_NOSLEEP_L, FREE_INSIDE_L, FREE_FORGED, RESERVE, TRIM, NOPS
};

static const struct gen_op ops[NOPS] = {
	[ALLOC16] = { "alloc(16), kept", GEN_CHANGES, op_alloc16 },
	[ALLOC_LARGE] = { "alloc(3 pages), kept", GEN_CHANGES, op_alloc_large },
	[ALLOC_NOSLEEP16] = { "alloc_nosleep(16), kept", GEN_CHANGES, op_alloc_nosleep16 },
	[ALLOC_FREE24] = { "alloc(24), free", GEN_CHANGES, op_alloc_free24 },
	[FREE_S] = { "free(S)", GEN_CHANGES, op_free_s },
	[FREE_NOSLEEP_S] = { "free_nosleep(S)", GEN_CHANGES, op_free_nosleep_s },
	[FREE_L] = { "free(L)", GEN_CHANGES, op_free_l },
	[FREE_NOSLEEP_L] = { "free_nosleep(L)", GEN_CHANGES, op_free_nosleep_l },
	[FREE_INSIDE_L] = { "free(inside L)", 0, op_free_inside_l },
	[FREE_FORGED] = { "free(inside a large object, behind a forged header)", GEN_CHANGES,
			  op_free_forged },
	[RESERVE] = { "reserve(16, 6)", GEN_CHANGES, op_reserve },
	[TRIM] = { "trim", GEN_CHANGES, op_trim },
};

/* ---- the model: which objects are live, and what the frees refused ---- */

struct model {
	int small_live, large_live, kept, refused;
};

static struct model m;

static void model_begin(int st)
{
	(void)st;
	m = (struct model){ .small_live = 1, .large_live = 1 };
}

/* A free of an object: 0 while it is live, -EINVAL (counted) after. */
static int step_free(int *live, long long ret)
{
	if (gen_weak(ret))
		return 1;	/* "the object is then still allocated" */
	if (ret == 0 && *live) {
		*live = 0;
		return 1;
	}
	if (ret == -EINVAL && !*live) {
		m.refused++;
		return 1;
	}
	return gen_refuse(ret ? "a free of a live object refused" : "a double free accepted");
}

static int model_step(const struct gen_call *c, int phase, int others_change)
{
	(void)phase;
	(void)others_change;
	switch (c->op - ops) {
	case ALLOC16:
	case ALLOC_LARGE:
	case ALLOC_NOSLEEP16:
		if (c->ret == 0) {
			m.kept++;
			return 1;
		}
		return c->ret == -ENOMEM || gen_weak(c->ret) ? 1 :
			gen_refuse("alloc: an undocumented error");
	case ALLOC_FREE24:
		if (c->ret)
			return c->ret == -ENOMEM || gen_weak(c->ret) ? 1 :
				gen_refuse("alloc: an undocumented error");
		return c->aux == 0 ? 1 : gen_refuse("the free of a block just allocated failed");
	case FREE_S:
	case FREE_NOSLEEP_S:
		return step_free(&m.small_live, c->ret);
	case FREE_L:
	case FREE_NOSLEEP_L:
		return step_free(&m.large_live, c->ret);
	case FREE_INSIDE_L:
		if (c->ret != -EINVAL)
			return gen_refuse("a pointer inside a large object freed");
		m.refused++;
		return 1;
	case FREE_FORGED:
		if (c->ret == -ENOMEM || gen_weak(c->ret))
			return 1;	/* no object to forge in */
		if (c->ret != -EINVAL)
			return gen_refuse("a pointer behind a forged header freed");
		if (c->aux)
			return gen_refuse("the object with a forged header would not free");
		m.refused++;
		return 1;
	case RESERVE:
	case TRIM:
		return !c->ret || gen_weak(c->ret) ? 1 : gen_refuse("an undocumented error");
	}
	return gen_refuse("an operation the model does not know");
}

/* The live objects the allocator counts, and the frees it refused. */
static int model_end(void)
{
	struct ak_alloc_stats s = explore_alloc_stats();
	unsigned long long live = (unsigned long long)(m.small_live + m.large_live + m.kept);

	if (s.objects != live)
		return gen_refuse("the allocator counts other live objects than the model");
	if (ak_allocator.stats.double_frees + ak_allocator.stats.bad_frees !=
	    (unsigned long long)m.refused)
		return gen_refuse("the allocator counts other refused frees than the model");
	return 1;
}

static void check_and_destroy(void)
{
	int t;

	if (pattern_broken)
		explore_fail("an object's bytes changed while its owner used it: two owners");
	for (t = 0; t < GEN_MAX_CALLS; t++) {
		if (!kept[t])
			continue;
		if (!intact(kept[t], kept_size[t], t))
			explore_fail("T%d's object %p changed after it was allocated: two owners", t,
				     kept[t]);
		if (ak_free(kept[t]))
			explore_fail("T%d's object would not free", t);
	}
	/* What the model says is still live frees now; the rest is refused. */
	if (m.small_live != !ak_free(shared_small))
		explore_fail("S: live %d, but its free says otherwise", m.small_live);
	if (m.large_live != !ak_free(shared_large))
		explore_fail("L: live %d, but its free says otherwise", m.large_live);
	/* The refused frees were counted against the model's (model_end). */
	explore_expect_given_back(1);
}

static const struct gen_model model = {
	.begin = model_begin,
	.step = model_step,
	.end = model_end,
	.state = &m,
	.size = sizeof(m),
	.check_and_destroy = check_and_destroy,
};

/* A double free racing a reuse of the block, and a trim. */
static const int triples[][3] = {
	{ FREE_S, FREE_NOSLEEP_S, ALLOC16 },
	{ FREE_L, FREE_INSIDE_L, ALLOC_LARGE },
	{ FREE_NOSLEEP_S, ALLOC_NOSLEEP16, TRIM },
	{ -1 },
};

static const struct gen_table alloc_table = {
	.name = "alloc",
	.ops = ops,
	.nops = NOPS,
	.states = states,
	.nstates = NSTATES,
	.triples = triples,
	.model = &model,
};

Test(explore_gen_alloc, fresh)
{
	gen_explore(&alloc_table, FRESH);
}

Test(explore_gen_alloc, page_edge)
{
	gen_explore(&alloc_table, PAGE_EDGE);
}
