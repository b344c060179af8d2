// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * list.h and rculist.h's calls as a table for the generator (gen.h), with
 * their sequential model: a list of entries from the allocator (so a freed
 * one is poisoned past its first word, where the node lies), written under
 * an ak_lock with the _rcu edits, read in read sections, under the lock
 * with a cursor, and by the loader's two copying walks; retired entries go
 * back through ak_rcu_reclaim. Keys 1..4 start on the list in order; a
 * thread t adds key 10 + t (head) or 20 + t (tail), and deletes key 2 or 3.
 */
#include <errno.h>
#include <string.h>
#include <criterion/criterion.h>

#include "explore/gen.h"
#include <arenakit/list_user.h>
#include <arenakit/rculist.h>

#define MAX_KEYS 8
#define UNIVERSE 64

struct entry {
	unsigned long long key;
	struct ak_list_node node;
	unsigned long long value;	/* key * 10 + 1: a copy is of one entry, whole */
};

static struct ak_list __arena_global list;
static struct ak_rcu __arena_global rcu;
static struct ak_lock __arena_global lock;

/* What a walk saw, in order: keys as bytes of a call's out (8 at most). */
static void record(struct gen_call *c, unsigned long long key)
{
	if (c->aux < MAX_KEYS)
		c->out |= (key & 0xff) << (8 * c->aux);
	c->aux++;
}

static struct entry *new_entry(unsigned long long key)
{
	struct entry *e = ak_alloc(sizeof(*e), NULL);

	if (e) {
		e->key = key;
		e->value = key * 10 + 1;
	}
	return e;
}

/* ---- the starting states ---- */

static void setup_four(void)
{
	unsigned long long k;
	struct entry *e;

	memset(&rcu, 0, sizeof(rcu));
	lock.locked = 0;
	ak_list_init(&list);
	for (k = 1; k <= 4; k++) {
		e = new_entry(k);
		if (!e) {
			explore_fail("setup: alloc");
			return;
		}
		ak_list_add_tail_rcu(&list, &e->node);
	}
}

/* As four, with key 1 deleted and retired (not yet freed) in setup. */
static void setup_retired(void)
{
	setup_four();
	if (ak_list_del_rcu(&list, ak_list_first(&list), &rcu))
		explore_fail("setup: del_rcu");
}

enum { FOUR, RETIRED, NSTATES };

static const struct gen_state states[NSTATES] = {
	[FOUR] = { "keys 1-4", setup_four },
	[RETIRED] = { "keys 2-4, key 1 retired", setup_retired },
};

/* ---- the calls ---- */

static int lock_list(void)
{
	return ak_lock_acquire(&lock);
}

static void op_add(struct gen_call *c, int tail)
{
	unsigned long long key = (tail ? 20 : 10) + (unsigned long long)c->thread;
	struct entry *e = new_entry(key);
	int err;

	if (!e) {
		c->ret = -ENOMEM;
		return;
	}
	err = lock_list();
	if (err) {
		ak_free(e);
		c->ret = err;
		return;
	}
	if (tail)
		ak_list_add_tail_rcu(&list, &e->node);
	else
		ak_list_add_head_rcu(&list, &e->node);
	ak_lock_release(&lock);
	c->ret = 0;
}

static void op_add_head(struct gen_call *c)
{
	op_add(c, 0);
}

static void op_add_tail(struct gen_call *c)
{
	op_add(c, 1);
}

/* Delete key @key under the lock (found by a locked walk): 0 or -ENOENT. */
static void op_del_key(struct gen_call *c, unsigned long long key)
{
	struct entry *e;
	int err = lock_list();

	if (err) {
		c->ret = err;
		return;
	}
	c->ret = -ENOENT;
	ak_list_for_each_entry(e, &list, node) {
		if (e->key == key) {
			c->ret = ak_list_del_rcu(&list, &e->node, &rcu);
			break;
		}
	}
	ak_lock_release(&lock);
}

static void op_del2(struct gen_call *c)
{
	op_del_key(c, 2);
}

static void op_del3(struct gen_call *c)
{
	op_del_key(c, 3);
}

static void op_reclaim(struct gen_call *c)
{
	int err = lock_list();

	if (err) {
		c->ret = err;
		return;
	}
	c->ret = ak_rcu_reclaim(&rcu, struct entry, node);
	ak_lock_release(&lock);
}

static void op_read_section(struct gen_call *c)
{
	unsigned int token = ak_rcu_read_begin(&rcu);
	struct entry *e;

	ak_list_for_each_entry_rcu(e, &list, node) {
		if (e->value != e->key * 10 + 1)
			record(c, 0);	/* not an entry a writer made: a stranger */
		record(c, e->key);
	}
	c->ret = ak_list_walk_status(e, &list, node);
	ak_rcu_read_end(&rcu, token);
}

/*
 * The loader's copying walks: ak_list_next_copy (complete or stale) or
 * ak_list_next_copy_live (never stale: its errors are only a lock that
 * stayed busy).
 */
static void copying_walk(struct gen_call *c, int live)
{
	struct ak_list_live_cursor live_cursor = {};
	struct ak_list_cursor cursor = {};
	struct entry e;
	int calls, err;

	for (calls = 0; calls < 32; calls++) {
		err = live ? ak_list_next_copy_live(&list, &lock, &live_cursor, &e, node) :
			     ak_list_next_copy(&list, &lock, &cursor, &e, node);
		if (err == -EBUSY) {
			c->ret = err;	/* a holder that cannot run: the walk says so */
			break;
		}
		if (err) {
			c->ret = err == -ENOENT ? 0 : err;
			return;
		}
		if (e.value != e.key * 10 + 1)
			record(c, 0);
		record(c, e.key);
	}
	ak_list_live_cursor_release(&live_cursor);
	if (calls == 32)
		explore_fail("T%d: a copying walk went on past 32 calls", c->thread);
}

static void op_next_copy(struct gen_call *c)
{
	copying_walk(c, 0);
}

static void op_next_copy_live(struct gen_call *c)
{
	copying_walk(c, 1);
}

/* The length under the lock, and ak_list_check: one atomic look. */
static void op_len(struct gen_call *c)
{
	int err = lock_list();

	if (err) {
		c->ret = err;
		return;
	}
	c->out = ak_list_len(&list);
	c->ret = ak_list_check(&list, NULL, NULL);
	ak_lock_release(&lock);
}

enum { ADD_HEAD, ADD_TAIL, DEL2, DEL3, RECLAIM, READ_SECTION, NEXT_COPY, NEXT_COPY_LIVE, LEN,
       NOPS };

static const struct gen_op ops[NOPS] = {
	[ADD_HEAD] = { "add_head_rcu", GEN_CHANGES, op_add_head },
	[ADD_TAIL] = { "add_tail_rcu", GEN_CHANGES, op_add_tail },
	[DEL2] = { "del_rcu(2)", GEN_CHANGES, op_del2 },
	[DEL3] = { "del_rcu(3)", GEN_CHANGES, op_del3 },
	[RECLAIM] = { "reclaim", 0, op_reclaim },
	[READ_SECTION] = { "read section walk", GEN_SPANS, op_read_section },
	[NEXT_COPY] = { "next_copy walk", GEN_SPANS, op_next_copy },
	[NEXT_COPY_LIVE] = { "next_copy_live walk", GEN_SPANS, op_next_copy_live },
	[LEN] = { "len and check", 0, op_len },
};

/* ---- the model: the keys in order, and what each walk must have seen ---- */

struct model {
	unsigned char keys[MAX_KEYS];
	int n;
	/* Keys on the list when a spanning walk began (a bit a key), by thread. */
	unsigned long long at_begin[GEN_MAX_CALLS];
};

static struct model m;

static void model_begin(int st)
{
	int k;

	memset(&m, 0, sizeof(m));
	for (k = st == RETIRED ? 2 : 1; k <= 4; k++)
		m.keys[m.n++] = (unsigned char)k;
}

static unsigned long long present(void)
{
	unsigned long long mask = 0;
	int i;

	for (i = 0; i < m.n; i++)
		mask |= 1ULL << m.keys[i];
	return mask;
}

/*
 * A walk that ended: every key on the list at its beginning and its end
 * (there throughout: no key comes back) seen once, in the list's order;
 * nothing twice; no stranger.
 */
static int walk_explained(const struct gen_call *c)
{
	unsigned long long throughout = m.at_begin[c->thread] & present(), seen = 0, key;
	unsigned int i, next = 0;

	if (c->aux > MAX_KEYS)
		return gen_refuse("a walk saw more entries than the list ever held");
	for (i = 0; i < c->aux; i++) {
		key = (c->out >> (8 * i)) & 0xff;
		if (!key || key >= UNIVERSE || (seen & 1ULL << key))
			return gen_refuse("a walk saw an entry twice, or one no writer made");
		seen |= 1ULL << key;
		if (!(throughout & 1ULL << key))
			continue;
		/* The keys there throughout come in the list's order. */
		while (next < (unsigned int)m.n && m.keys[next] != key)
			next++;
		if (next == (unsigned int)m.n)
			return gen_refuse("a walk saw entries out of order");
	}
	if ((seen & throughout) != throughout)
		return gen_refuse("a walk missed an entry there throughout");
	return 1;
}

static int model_step(const struct gen_call *c, int phase, int others_change)
{
	unsigned char key;
	int i;

	switch (c->op - ops) {
	case ADD_HEAD:
	case ADD_TAIL:
		if (c->ret)
			return gen_weak(c->ret) || c->ret == -ENOMEM ? 1 :
				gen_refuse("add: an undocumented error");
		if (m.n == MAX_KEYS)
			return gen_refuse("the model's list is full");
		key = (unsigned char)((c->op - ops == ADD_TAIL ? 20 : 10) + c->thread);
		if (c->op - ops == ADD_TAIL) {
			m.keys[m.n++] = key;
		} else {
			memmove(m.keys + 1, m.keys, (size_t)m.n);
			m.keys[0] = key;
			m.n++;
		}
		return 1;
	case DEL2:
	case DEL3:
		key = c->op - ops == DEL2 ? 2 : 3;
		for (i = 0; i < m.n && m.keys[i] != key; i++)
			;
		if (gen_weak(c->ret))
			return 1;
		if (c->ret == -ENOENT)
			return i == m.n ? 1 : gen_refuse("del: a key on the list not found");
		if (c->ret)
			return gen_refuse("del: an undocumented error");
		if (i == m.n)
			return gen_refuse("del: a key not on the list deleted");
		memmove(m.keys + i, m.keys + i + 1, (size_t)(m.n - i - 1));
		m.n--;
		return 1;
	case RECLAIM:
		return c->ret >= 0 || gen_weak(c->ret) ? 1 :
			gen_refuse("reclaim: an undocumented error");
	case READ_SECTION:
	case NEXT_COPY:
	case NEXT_COPY_LIVE:
		if (phase == 0) {
			m.at_begin[c->thread] = present();
			return 1;
		}
		if (c->ret == -AK_ESTALE && c->op - ops == NEXT_COPY)
			return others_change ? 1 : gen_refuse("a copying walk stale with no writer");
		if (c->ret == -EBUSY && c->op - ops != READ_SECTION)
			return 1;
		if (c->ret)
			return gen_refuse("a walk ended with an undocumented error");
		return walk_explained(c);
	case LEN:
		if (gen_weak(c->ret))
			return 1;
		if (c->ret)
			return gen_refuse("ak_list_check failed under the lock");
		return c->out == (unsigned long long)m.n ? 1 : gen_refuse("the length");
	}
	return gen_refuse("an operation the model does not know");
}

/* The list as the schedule left it: the model's keys, in its order. */
static int model_end(void)
{
	struct entry *e;
	int i = 0;

	if (ak_list_check(&list, NULL, NULL) || ak_list_len(&list) != (unsigned long long)m.n)
		return gen_refuse("the list is broken, or its length is not the model's");
	ak_list_for_each_entry(e, &list, node) {
		if (i == m.n || e->key != m.keys[i])
			return gen_refuse("the list holds other keys than the model, or in another order");
		i++;
	}
	return i == m.n ? 1 : gen_refuse("the list is shorter than the model");
}

static void check_and_destroy(void)
{
	struct entry *e, *tmp;
	long long n;
	int i;

	if (lock.locked)
		explore_fail("the list's lock is held after the schedule");
	/* Two reclaims with no reader inside free every retired entry. */
	for (i = 0; i < 2; i++) {
		n = ak_rcu_reclaim(&rcu, struct entry, node);
		if (n < 0)
			explore_fail("reclaim with no reader: %lld", n);
	}
	if (ak_rcu_pending(&rcu))
		explore_fail("%llu entries still retired", ak_rcu_pending(&rcu));
	if (rcu.readers[0] || rcu.readers[1])
		explore_fail("readers still counted inside: %llu, %llu", rcu.readers[0],
			     rcu.readers[1]);
	ak_list_for_each_entry_safe(e, tmp, &list, node) {
		if (ak_list_del(&list, &e->node) || ak_free(e))
			explore_fail("the entry of key %llu would not go", e->key);
	}
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

/* A reader against a delete and the reclaim that may free what it reads. */
static const int triples[][3] = {
	{ READ_SECTION, DEL2, RECLAIM },
	{ NEXT_COPY, DEL3, ADD_TAIL },
	{ NEXT_COPY_LIVE, DEL3, ADD_TAIL },
	{ NEXT_COPY_LIVE, DEL2, RECLAIM },
	{ READ_SECTION, READ_SECTION, RECLAIM },
	{ -1 },
};

static const struct gen_table list_table = {
	.name = "list",
	.ops = ops,
	.nops = NOPS,
	.states = states,
	.nstates = NSTATES,
	.triples = triples,
	.model = &model,
};

Test(explore_gen_list, four)
{
	gen_explore(&list_table, FOUR);
}

Test(explore_gen_list, retired)
{
	gen_explore(&list_table, RETIRED);
}
