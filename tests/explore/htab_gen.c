// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * htab.h's public calls as a table for the generator (gen.h), with their
 * sequential model. Keys are numbers whose hash is the key's bits reversed
 * (explore.h): in a 16-bucket table P = 1 and Q = 17 share a bucket, and
 * the absent key A = 33 belongs there too; in the 32-bucket table a growth
 * makes, P and A stay together and Q goes to a bucket of its own. A reseed
 * keeps them together, in another bucket. So every call meets the others
 * in one chain, and a growth splits it. A key's value in a starting state
 * (htab_gen_states.c) is ten times the key; a call of thread t writes
 * 1000 (t + 1) + key.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <criterion/criterion.h>

#include "explore/gen.h"
#include <arenakit/htab_user.h>
#include "explore/htab_gen.h"

struct ak_htab __arena_global table;
struct ak_htab __arena_global other;
struct ak_omap __arena_global beside_map;

static unsigned long long written(const struct gen_call *c, unsigned long long key)
{
	return 1000ULL * (c->thread + 1) + key;
}

/* ---- the calls ---- */

static void op_lookup(struct gen_call *c)
{
	unsigned long long key = KEY_P, *v;
	int err = 0;

	v = ak_htab_lookup(&table, &key, &err);
	c->ret = v ? 0 : err;
	/*
	 * Read at once, as if by the lookup: the address was the key's inside
	 * the call (htab.h); a later read racing a delete is the caller's.
	 */
	explore_read_at_once(1);
	c->out = v ? *v : 0;
}

static void op_lookup_copy(struct gen_call *c)
{
	unsigned long long key = KEY_P;

	c->ret = ak_htab_lookup_copy(&table, &key, &c->out);
}

static void op_update_any(struct gen_call *c)
{
	unsigned long long key = KEY_P, value = written(c, key);

	c->ret = ak_htab_update(&table, &key, &value, AK_HTAB_ANY);
}

static void op_update_noexist(struct gen_call *c)
{
	unsigned long long key = KEY_A, value = written(c, key);

	c->ret = ak_htab_update(&table, &key, &value, AK_HTAB_NOEXIST);
}

static void op_update_exist(struct gen_call *c)
{
	unsigned long long key = KEY_Q, value = written(c, key);

	c->ret = ak_htab_update(&table, &key, &value, AK_HTAB_EXIST);
}

static void op_update_nosleep(struct gen_call *c)
{
	unsigned long long key = KEY_A, value = written(c, key);

	c->ret = ak_htab_update_nosleep(&table, &key, &value, AK_HTAB_ANY);
}

static void op_lookup_or_init(struct gen_call *c)
{
	unsigned long long key = KEY_A, init = written(c, key), *v;
	int err = 0;

	v = ak_htab_lookup_or_init(&table, &key, &init, &err);
	c->ret = v ? 0 : err;
	explore_read_at_once(1);	/* read at once, as op_lookup's */
	c->out = v ? *v : 0;
}

static void op_delete(struct gen_call *c)
{
	unsigned long long key = KEY_P;

	c->ret = ak_htab_delete(&table, &key);
}

static void op_delete_nosleep(struct gen_call *c)
{
	unsigned long long key = KEY_Q;

	c->ret = ak_htab_delete_nosleep(&table, &key);
}

static void op_lookup_and_delete(struct gen_call *c)
{
	unsigned long long key = KEY_P;

	c->ret = ak_htab_lookup_and_delete(&table, &key, &c->out);
}

/*
 * A walk with ak_htab_next, deleting P with ak_htab_delete_current when
 * @delete_p: out is the set of keys seen (bit k), aux the delete's answer
 * (1: P not seen). A key seen twice is a failure here and now.
 */
static void walk(struct gen_call *c, int delete_p)
{
	struct ak_htab_cursor cursor = {};
	void *key, *value;
	unsigned long long k;
	int err, steps;

	c->aux = 1;
	for (steps = 0; steps <= UNIVERSE; steps++) {
		err = ak_htab_next(&table, &cursor, &key, &value);
		if (err) {
			c->ret = err == -ENOENT ? 0 : err;
			return;
		}
		/* Read at once, as if by the step: a later read racing a delete is the caller's. */
		explore_read_at_once(1);
		k = *(unsigned long long *)key;
		if (k >= UNIVERSE || (c->out & 1ULL << k))
			explore_fail("T%d: the walk returned key %llu twice (or a stranger)",
				     c->thread, k);
		c->out |= 1ULL << (k % UNIVERSE);
		if (delete_p && k == KEY_P) {
			c->aux = (unsigned long long)(long long)ak_htab_delete_current(&table, &cursor);
			if (c->aux) {
				c->ret = (long long)c->aux;	/* stale or busy: the walk ends */
				return;
			}
		}
	}
	explore_fail("T%d: the walk did not end", c->thread);
}

static void op_next(struct gen_call *c)
{
	walk(c, 0);
}

static void op_delete_current(struct gen_call *c)
{
	walk(c, 1);
}

static void op_next_copy(struct gen_call *c)
{
	struct ak_htab_cursor cursor = {};
	unsigned long long key, value;
	int err, steps;

	for (steps = 0; steps <= UNIVERSE; steps++) {
		err = ak_htab_next_copy(&table, &cursor, &key, &value);
		if (err) {
			c->ret = err == -ENOENT ? 0 : err;
			return;
		}
		if (key >= UNIVERSE || (c->out & 1ULL << key))
			explore_fail("T%d: next_copy returned key %llu twice (or a stranger)",
				     c->thread, key);
		c->out |= 1ULL << (key % UNIVERSE);
	}
	explore_fail("T%d: the copying walk did not end", c->thread);
}

static void op_clear(struct gen_call *c)
{
	c->ret = ak_htab_clear(&table);
}

static void op_count(struct gen_call *c)
{
	c->out = ak_htab_count(&table);
	c->ret = 0;
}

static void op_reserve(struct gen_call *c)
{
	c->ret = ak_htab_reserve(&table, 6);
}

static void op_maintain(struct gen_call *c)
{
	c->ret = ak_htab_maintain(&table);
}

/*
 * delete(P), then P into a structure beside the table, on the same CPU: the
 * block the delete freed is the next its CPU's cache hands out, so the
 * other table's P lands where the table's was, with the same hash and key
 * (what a lock-free reader of the table must not take for its P). aux: the
 * insert's answer.
 */
static void op_move_to_other(struct gen_call *c)
{
	unsigned long long key = KEY_P, value = written(c, key);

	c->ret = ak_htab_delete(&table, &key);
	c->aux = (unsigned long long)(long long)ak_htab_update(&other, &key, &value, AK_HTAB_ANY);
}

/* The same into the ordered map (its nodes come from chunks of other sizes). */
static void op_move_to_map(struct gen_call *c)
{
	unsigned long long key = KEY_P, value = written(c, key);

	c->ret = ak_htab_delete(&table, &key);
	c->aux = (unsigned long long)(long long)ak_omap_update(&beside_map, &key, &value,
							      AK_OMAP_ANY);
}

enum {
	LOOKUP, LOOKUP_COPY, UPDATE_ANY, UPDATE_NOEXIST, UPDATE_EXIST, UPDATE_NOSLEEP,
	LOOKUP_OR_INIT, DELETE, DELETE_NOSLEEP, LOOKUP_AND_DELETE, NEXT, DELETE_CURRENT,
	NEXT_COPY, CLEAR, COUNT, RESERVE, MAINTAIN, MOVE_TO_OTHER, MOVE_TO_MAP, NOPS
};

static const struct gen_op ops[NOPS] = {
	[LOOKUP] = { "lookup(P)", GEN_READS_FREED, op_lookup },
	[LOOKUP_COPY] = { "lookup_copy(P)", 0, op_lookup_copy },
	[UPDATE_ANY] = { "update(P, ANY)", GEN_CHANGES, op_update_any },
	[UPDATE_NOEXIST] = { "update(A, NOEXIST)", GEN_CHANGES, op_update_noexist },
	[UPDATE_EXIST] = { "update(Q, EXIST)", GEN_CHANGES, op_update_exist },
	[UPDATE_NOSLEEP] = { "update_nosleep(A, ANY)", GEN_CHANGES, op_update_nosleep },
	[LOOKUP_OR_INIT] = { "lookup_or_init(A)", GEN_CHANGES | GEN_READS_FREED, op_lookup_or_init },
	[DELETE] = { "delete(P)", GEN_CHANGES, op_delete },
	[DELETE_NOSLEEP] = { "delete_nosleep(Q)", GEN_CHANGES, op_delete_nosleep },
	[LOOKUP_AND_DELETE] = { "lookup_and_delete(P)", GEN_CHANGES, op_lookup_and_delete },
	[NEXT] = { "next walk", GEN_CHANGES, op_next },
	[DELETE_CURRENT] = { "next walk, delete_current(P)", GEN_CHANGES, op_delete_current },
	[NEXT_COPY] = { "next_copy walk", 0, op_next_copy },
	[CLEAR] = { "clear", GEN_CHANGES | GEN_SPANS, op_clear },
	[COUNT] = { "count", 0, op_count },
	[RESERVE] = { "reserve", 0, op_reserve },
	[MAINTAIN] = { "maintain", GEN_CHANGES, op_maintain },
	[MOVE_TO_OTHER] = { "delete(P), P into the other table", GEN_CHANGES | GEN_BESIDE,
			    op_move_to_other },
	[MOVE_TO_MAP] = { "delete(P), P into the ordered map", GEN_CHANGES | GEN_BESIDE,
			  op_move_to_map },
};

/* ---- the model: which keys are present, with which value ---- */

/*
 * MAYBE: a cut clear may or may not have removed it; CLEARING: present
 * when a clear began, which removes it at some moment before its end.
 */
enum presence { ABSENT, PRESENT, MAYBE, CLEARING };

struct model {
	unsigned char presence[UNIVERSE];
	unsigned long long value[UNIVERSE];
};

static struct model m;
static int model_state;

/*
 * The table as the schedule left it, looked up once (model_end is asked
 * once per order the model tries): err and value of every key.
 */
static struct {
	int taken;
	int err[UNIVERSE];
	unsigned long long value[UNIVERSE];
} table_after;

static void model_begin(int st)
{
	unsigned long long k;

	memset(&m, 0, sizeof(m));
	model_state = st;
	table_after.taken = 0;
	for (k = 1; k < UNIVERSE; k++) {
		if (k == KEY_P || k == KEY_Q || k == 2 ||
		    (st != SMALL && st != RESEED && st != BESIDE && k >= 3 && k <= 12)) {
			m.presence[k] = PRESENT;
			m.value[k] = k * 10;
		}
	}
}

static int may_be_present(unsigned long long k)
{
	return m.presence[k] != ABSENT;
}

static int may_be_absent(unsigned long long k)
{
	return m.presence[k] != PRESENT;
}

static void set(unsigned long long k, unsigned long long v)
{
	m.presence[k] = PRESENT;
	m.value[k] = v;
}

/* A found value: that of the key, present (or maybe) here. */
static int step_found(unsigned long long k, long long ret, unsigned long long out)
{
	if (ret == -ENOENT)
		return may_be_absent(k) ? 1 : gen_refuse("a present key reported absent");
	if (gen_weak(ret))
		return 1;
	if (ret)
		return gen_refuse("an error the call does not document");
	if (!may_be_present(k) || out != m.value[k])
		return gen_refuse("a value the key does not hold");
	return 1;
}

static int step_update(unsigned long long k, int flags, const struct gen_call *c)
{
	if (gen_weak(c->ret) || (c->op->run == op_update_nosleep && c->ret == -ENOMEM))
		return 1;
	if (c->ret == -EEXIST)
		return flags == AK_HTAB_NOEXIST && may_be_present(k) ? 1 :
			gen_refuse("-EEXIST for an absent key");
	if (c->ret == -ENOENT)
		return flags == AK_HTAB_EXIST && may_be_absent(k) ? 1 :
			gen_refuse("-ENOENT from an update that may add");
	if (c->ret)
		return gen_refuse("an error the update does not document");
	if ((flags == AK_HTAB_NOEXIST && !may_be_absent(k)) ||
	    (flags == AK_HTAB_EXIST && !may_be_present(k)))
		return gen_refuse("an update its flags forbid");
	set(k, written(c, k));
	return 1;
}

static int step_delete(unsigned long long k, const struct gen_call *c)
{
	if (gen_weak(c->ret))
		return 1;
	if (c->ret == -ENOENT)
		return may_be_absent(k) ? 1 : gen_refuse("delete of a present key: -ENOENT");
	if (c->ret)
		return gen_refuse("an error delete does not document");
	if (!may_be_present(k))
		return gen_refuse("delete of an absent key: 0");
	if (c->op->run == op_lookup_and_delete && c->out != m.value[k])
		return gen_refuse("lookup_and_delete: not the key's value");
	m.presence[k] = ABSENT;
	return 1;
}

/*
 * A walk: complete (0), it saw exactly the keys present; stale only if
 * another call may have changed the table; busy or cut, it says nothing.
 * Then P goes, if its delete_current said so.
 */
static int step_walk(const struct gen_call *c, int others_change)
{
	unsigned long long k;

	if (c->ret == -AK_ESTALE && !others_change)
		return gen_refuse("a walk stale with no one changing the table");
	if (c->ret && c->ret != -AK_ESTALE && !gen_weak(c->ret))
		return gen_refuse("an error the walk does not document");
	for (k = 1; !c->ret && k < UNIVERSE; k++) {
		int seen = !!(c->out & 1ULL << k);

		if ((seen && !may_be_present(k)) || (!seen && !may_be_absent(k)))
			return gen_refuse("a complete walk that is wrong");
	}
	if (c->op->run != op_delete_current || c->aux == 1)
		return 1;
	if (c->aux == 0) {
		if (!may_be_present(KEY_P))
			return gen_refuse("delete_current deleted an absent key");
		m.presence[KEY_P] = ABSENT;
		return 1;
	}
	return c->aux == (unsigned long long)-AK_ESTALE || gen_weak((long long)c->aux) ? 1 :
		gen_refuse("delete_current: an error it does not document");
}

static int model_step(const struct gen_call *c, int phase, int others_change)
{
	unsigned long long k, lo = 0, hi = 0;

	switch (c->op - ops) {
	case LOOKUP:
	case LOOKUP_COPY:
		return step_found(KEY_P, c->ret, c->out);
	case UPDATE_ANY:
		return step_update(KEY_P, AK_HTAB_ANY, c);
	case UPDATE_NOEXIST:
		return step_update(KEY_A, AK_HTAB_NOEXIST, c);
	case UPDATE_EXIST:
		return step_update(KEY_Q, AK_HTAB_EXIST, c);
	case UPDATE_NOSLEEP:
		return step_update(KEY_A, AK_HTAB_ANY, c);
	case LOOKUP_OR_INIT:
		if (gen_weak(c->ret))
			return 1;
		if (c->ret)
			return gen_refuse("lookup_or_init: an error it does not document");
		if (may_be_present(KEY_A) && c->out == m.value[KEY_A])
			return 1;
		if (may_be_absent(KEY_A) && c->out == written(c, KEY_A)) {
			set(KEY_A, c->out);
			return 1;
		}
		return gen_refuse("lookup_or_init: neither the value there nor its own");
	case DELETE:
	case LOOKUP_AND_DELETE:
		return step_delete(KEY_P, c);
	case DELETE_NOSLEEP:
		return step_delete(KEY_Q, c);
	case NEXT:
	case DELETE_CURRENT:
	case NEXT_COPY:
		return step_walk(c, others_change);
	case CLEAR:
		if (c->ret && !gen_weak(c->ret))
			return gen_refuse("clear: an error it does not document");
		for (k = 1; k < UNIVERSE; k++) {
			if (phase == 0 && m.presence[k] == PRESENT)
				m.presence[k] = CLEARING;
			else if (phase == 1 && m.presence[k] == CLEARING)
				/* Cut: what it removed stays removed, the rest is there. */
				m.presence[k] = c->ret ? MAYBE : ABSENT;
			else if (phase == 1 && m.presence[k] == PRESENT)
				m.presence[k] = MAYBE;	/* added meanwhile, maybe behind it */
		}
		return 1;
	case COUNT:
		for (k = 1; k < UNIVERSE; k++) {
			lo += m.presence[k] == PRESENT;
			hi += m.presence[k] != ABSENT;
		}
		return c->out >= lo && c->out <= hi ? 1 : gen_refuse("count");
	case RESERVE:
	case MAINTAIN:
		return !c->ret || gen_weak(c->ret) ? 1 : gen_refuse("an error it does not document");
	case MOVE_TO_OTHER:
	case MOVE_TO_MAP:
		/* The insert beside changes nothing here; it never fails but busy. */
		if (c->aux && !gen_weak((long long)c->aux))
			return gen_refuse("the insert beside the table failed");
		return step_delete(KEY_P, c);
	}
	return gen_refuse("an operation the model does not know");
}

/* The table as the schedule left it: every key of the universe looked up. */
static int model_end(void)
{
	unsigned long long k, v;
	int err;

	for (k = 1; !table_after.taken && k < UNIVERSE; k++)
		table_after.err[k] = ak_htab_lookup_copy(&table, &k, &table_after.value[k]);
	table_after.taken = 1;
	for (k = 1; k < UNIVERSE; k++) {
		err = table_after.err[k];
		v = table_after.value[k];
		if (err && err != -ENOENT)
			return gen_refuse("the table does not answer after the schedule");
		if (!err && (!may_be_present(k) || v != m.value[k]))
			return gen_refuse("the table holds a key or value the model does not");
		if (err && !may_be_absent(k))
			return gen_refuse("the table lost a key the model holds");
	}
	return 1;
}

static void check_and_destroy(void)
{
	struct ak_htab_node *bad;
	unsigned long long k, present = 0;
	int err, tries;

	/* Whatever the nested holder left, nothing holds anything now. */
	for (tries = 0; tries < 4 && (err = ak_htab_maintain(&table)); tries++)
		;
	if (err)
		explore_fail("maintain after the schedule: %d", err);
	err = ak_htab_check_all(&table, &bad);
	if (err)
		explore_fail("ak_htab_check_all: %d (node %p)", err, (void *)bad);
	/* (maintain moves entries, never adds or drops one: the lookups above hold.) */
	for (k = 1; k < UNIVERSE; k++)
		present += table_after.taken ? !table_after.err[k] :
			   !ak_htab_lookup_copy(&table, &k, &(unsigned long long){ 0 });
	if (ak_htab_count(&table) != present)
		explore_fail("count %llu, but %llu keys are found", ak_htab_count(&table), present);
	err = ak_htab_destroy(&table);
	if (err)
		explore_fail("destroy: %d", err);
	if (model_state == BESIDE && (ak_htab_destroy(&other) || ak_omap_destroy(&beside_map)))
		explore_fail("the structures beside the table: destroy");
	explore_expect_given_back(0);
}

static const struct gen_model model = {
	.begin = model_begin,
	.step = model_step,
	.end = model_end,
	.state = &m,
	.size = sizeof(m),
	.check_and_destroy = check_and_destroy,
};

/* Three calls where a third changes what two race over. */
static const int triples[][3] = {
	{ CLEAR, UPDATE_NOEXIST, MAINTAIN },
	{ NEXT, DELETE, UPDATE_NOEXIST },
	{ DELETE_CURRENT, UPDATE_ANY, MAINTAIN },
	{ LOOKUP_COPY, DELETE_NOSLEEP, UPDATE_NOEXIST },
	/* A lock-free reader on P while P's node goes to the other table, and a growth. */
	{ LOOKUP, MOVE_TO_OTHER, UPDATE_NOEXIST },
	{ -1 },
};

static const struct gen_table htab_table = {
	.name = "htab",
	.ops = ops,
	.nops = NOPS,
	.states = states,
	.nstates = NSTATES,
	.triples = triples,
	.model = &model,
};

Test(explore_gen_htab, small)
{
	gen_explore(&htab_table, SMALL);
}

Test(explore_gen_htab, full)
{
	gen_explore(&htab_table, FULL);
}

Test(explore_gen_htab, growth_begun)
{
	gen_explore(&htab_table, BEGUN);
}

Test(explore_gen_htab, growth_held)
{
	gen_explore(&htab_table, HELD);
}

Test(explore_gen_htab, growth_end)
{
	gen_explore(&htab_table, END);
}

Test(explore_gen_htab, grown)
{
	gen_explore(&htab_table, GROWN);
}

Test(explore_gen_htab, reseed_begun)
{
	gen_explore(&htab_table, RESEED);
}

Test(explore_gen_htab, beside)
{
	gen_explore(&htab_table, BESIDE);
}
