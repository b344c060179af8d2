/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Scenarios generated from a table of operations, not listed by hand.
 *
 * A structure gives the explorer its public calls (struct gen_op: one entry
 * per call and variant, each run on the real structure and recording what
 * it answered), the small states they start from (struct gen_state), and a
 * sequential model that says whether an answer is one the call may give
 * (struct gen_model). From these, gen_explore() builds and explores:
 *  - every pair of operations on two threads (each with itself too);
 *  - every ordered pair with the second thread nested on the first one's
 *    CPU (explore.h's nested_on): the first cannot run until the second
 *    ends, so what it holds stays held;
 *  - the triples the table names;
 * in every state. After each schedule the answers must be explained: some
 * order of the calls consistent with their real-time order (a call that
 * ended before another began comes first) in which the model, run call by
 * call, allows each answer and ends in the state the structure holds; a
 * call's weak answers (-EBUSY, -AK_EBUDGET, -AK_ESTALE, as documented) are
 * the model's to allow, with the effect the call documents for them. Then
 * the structure's own invariants are checked and everything is given back.
 * Adding an operation to the table explores it against every other.
 *
 * EXPLORE_ONLY=substring runs only the generated scenarios whose name
 * contains it (the mutants use it to name theirs). EXPLORE_GEN_BOUND sets
 * the preemption bound of the pairs (default: EXPLORE_BOUND's); triples
 * run with one fewer (at least one): at bound 2 a state's triples alone
 * took as many schedules as all its pairs.
 */
#ifndef ARENAKIT_TESTS_EXPLORE_GEN_H
#define ARENAKIT_TESTS_EXPLORE_GEN_H

#include "explore/explore.h"

#define GEN_MAX_CALLS EXPLORE_MAX_THREADS

/* gen_op.flags */
#define GEN_CHANGES 1		/* may change the structure: others' walks may be stale */
#define GEN_READS_FREED 2	/* a lock-free reader: may read freed objects, as BPF may */
/*
 * Not one step but many, as ak_htab_clear deletes entry by entry: the
 * model sees its beginning and its end as two events, and what others
 * observe in between may be any part of it done.
 */
#define GEN_SPANS 4
/*
 * A call that also writes structures beside the one the table explores
 * (sharing its allocator): run only in states that have them (.beside).
 */
#define GEN_BESIDE 8

/* One call of a schedule: what it answered and when it ran. */
struct gen_call {
	const struct gen_op *op;
	int thread;
	long long ret;			/* its return value */
	unsigned long long out;		/* what it read (a value, a count, a key set) */
	unsigned long long aux;		/* a second answer (an op says which) */
	unsigned int begin, end;	/* logical times: the real-time order */
};

struct gen_op {
	const char *name;
	unsigned int flags;
	/* Make the call on the real structure, from thread @c->thread. */
	void (*run)(struct gen_call *c);
};

struct gen_state {
	const char *name;
	void (*setup)(void);
	/*
	 * After the threads, before the checks (may be NULL): what a program
	 * that could not run during the schedule does when it runs again
	 * (a state may start with a lock held by one).
	 */
	void (*settle)(void);
	/* Has the structures GEN_BESIDE calls write: they run here too. */
	int beside;
};

/*
 * The sequential model. @begin resets it to the state @state starts in;
 * @step applies @c if its answer is allowed there (1) or refuses it (0,
 * with gen_refuse), @phase saying which event of a GEN_SPANS call it is
 * (0: its beginning, 1: its end; -1 for any other call), @others_change
 * whether a call running beside it may change the structure; @end
 * compares the model with the structure as the schedule left it (1: the
 * same). The model lives in the structure's file.
 */
struct gen_model {
	void (*begin)(int state);
	int (*step)(const struct gen_call *c, int phase, int others_change);
	int (*end)(void);
	/* The model's state, copied to try another order from the same start. */
	void *state;
	unsigned int size;
	/* The structure's invariants, then everything given back: explore_fail(). */
	void (*check_and_destroy)(void);
};

struct gen_table {
	const char *name;
	const struct gen_op *ops;
	int nops;
	const struct gen_state *states;
	int nstates;
	/* Triples worth running (indices into ops), ended by a -1 first entry. */
	const int (*triples)[3];
	const struct gen_model *model;
};

/* Explore every generated scenario of @t in state @state; a Criterion test. */
void gen_explore(const struct gen_table *t, int state);

/* Logical time, for a gen_op's run: the calls' begin and end. */
unsigned int gen_now(void);

/* From a model's step or end: refuse, saying why (for the report). 0. */
int gen_refuse(const char *why);

/* An answer a call documents as "nothing done, call again". */
static inline int gen_weak(long long ret)
{
	return ret == -EBUSY || ret == -AK_EBUDGET;
}

#endif
