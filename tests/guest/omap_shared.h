/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What tests/guest/omap.bpf.c and its driver share. */
#ifndef ARENAKIT_TESTS_GUEST_OMAP_SHARED_H
#define ARENAKIT_TESTS_GUEST_OMAP_SHARED_H

#define OMAP_MAX_OPS 65536

enum {
	OMAP_OP_INSERT, OMAP_OP_DELETE, OMAP_OP_LOOKUP, OMAP_OP_BOUND, OMAP_OP_POP_FIRST,
	OMAP_OP_WALK,	/* one step of a live walk; flags 1: from key, a new walk */
};

/* One call: its kind, key and value (or flags) in; its error, key and value out. */
struct omap_op {
	unsigned int kind;
	unsigned int flags;
	unsigned long long key;
	unsigned long long value;
	long long err;
	unsigned long long out_key;
	unsigned long long out_value;
};

/*
 * One CPU's part of the 4-CPU test: insert keys first, first + step, ...
 * (count of them), then pop the smallest key until the map is empty,
 * keeping the keys it popped (in the arena: popped[cpu][...]). A run
 * resumes where the last one stopped (-AK_EBUDGET or busy).
 */
#define CPU_KEYS 2000
#define CPU_MAX 4
struct omap_cpu_args {
	unsigned int cpu;
	unsigned int inserted;		/* done so far */
	unsigned int popped;		/* done so far */
	unsigned int phase;		/* 0: inserting; 1: popping; 2: done */
	unsigned int busy;		/* -EBUSY answers, tried again */
	int err;			/* another failure */
};

/*
 * The read side's test: even keys 0 to 2 * (READ_STABLE - 1) stay in
 * throughout; writer CPUs insert READ_BATCH odd keys of their own and
 * delete them again, READ_ROUNDS times (splits and merges under the
 * readers), while reader CPUs look up random stable keys until both
 * writers are done. Every lookup must find its key with its value; every
 * 8th is followed by a walk of 8 steps from the key, which must return the
 * stable keys after it in order, each once, whatever odd keys come between.
 */
#define READ_STABLE 2000
#define READ_BATCH 600
#define READ_ROUNDS 6
#define READ_WRITERS 2
struct omap_read_args {
	unsigned int cpu;
	unsigned int reader;		/* 1: a reader; 0: a writer */
	unsigned int round, at;		/* a writer's place: round, and key in its batch */
	unsigned int deleting;		/* a writer in its round's deletes */
	unsigned int busy;		/* -EBUSY or -AK_EBUDGET answers, tried again */
	unsigned long long done;	/* a writer's changes; a reader's lookups */
	unsigned long long walked;	/* a reader's walk steps (a short walk every 8th lookup) */
	unsigned long long wrong;	/* a reader's lookups that missed, or read another value */
	int err;			/* another failure */
};

#endif
