/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What tests/guest/htab.bpf.c and its driver share. */
#ifndef ARENAKIT_TESTS_GUEST_HTAB_SHARED_H
#define ARENAKIT_TESTS_GUEST_HTAB_SHARED_H

#define HTAB_MAX_OPS 65536

enum { HTAB_OP_LOOKUP, HTAB_OP_INSERT, HTAB_OP_UPDATE, HTAB_OP_DELETE };

struct htab_op {
	unsigned int kind;
	unsigned int key;
	unsigned long long value;
};

/*
 * The context of one count_keys run: CPUs count into keys 0..COUNT_KEYS-1
 * of count_table, one key a step, round and round, with
 * ak_htab_lookup_or_init and an atomic add.
 */
#define COUNT_KEYS 64
struct htab_count_args {
	unsigned int steps;	/* to take in all */
	unsigned int done;	/* taken: the next run resumes here */
	unsigned int busy;	/* -EBUSY answers, each tried again */
	unsigned int errors;	/* other failures */
	int last_error;
};

/*
 * CPUs inserting distinct keys into a table at its limit (limit_insert):
 * LIMIT_ENTRIES entries at most, refusing (table 0) or evicting (table 1,
 * AK_HTAB_LRU) past it.
 */
#define LIMIT_ENTRIES 1000
struct htab_limit_args {
	unsigned int first, count;	/* the keys to insert */
	unsigned int lru;		/* which table */
	unsigned int inserted;		/* inserts that went in */
	unsigned int refused;		/* -E2BIG answers */
	unsigned int busy;		/* -EBUSY answers, each tried again */
	unsigned int cut;		/* -AK_EBUDGET answers (an eviction's search cut), tried again */
	unsigned int errors;		/* other failures */
	int last_error;
	unsigned int done;		/* keys done: the next run resumes here */
};

/* The context of one cpu_churn run (BPF_PROG_TEST_RUN ctx_in/ctx_out). */
struct htab_churn_args {
	unsigned int first, count;
	unsigned int errors;	/* other than -EBUSY */
	int last_error;
	unsigned int busy;	/* -EBUSY answers, each tried again */
	unsigned int done;	/* steps done: the next run resumes here */
};

/*
 * Readers racing writers (readers_see_what_is_documented): the table holds
 * RW_STABLE keys (0..RW_STABLE-1) the whole time, their values rewritten in
 * place, while writers insert and delete keys from RW_CHURN_BASE up.
 */
#define RW_STABLE 2048
#define RW_CHURN_BASE 1000000u

struct rw_value {
	unsigned long long version, check;	/* check == rw_check(key, version) */
};

static inline unsigned long long rw_check(unsigned int key, unsigned long long version)
{
	return version * 0x9e3779b97f4a7c15ULL ^ key;
}

/* One writer's or reader's run (ctx_in, copied back). */
struct htab_rw_args {
	unsigned int first, count;	/* a writer's churn keys; a reader's range */
	unsigned long long lookups;	/* a reader's lookups */
	unsigned int absent;	/* a stable key not found: never allowed */
	unsigned int torn;	/* lock-free reads of a value mid-update: allowed */
	unsigned int torn_copy;	/* copies mid-update: never allowed */
	unsigned int wrong;	/* a copy that is not its key's value: never */
	unsigned int busy;	/* -EBUSY answers, each tried again */
	unsigned int errors;	/* other errors */
	int last_error;
	unsigned int done;	/* steps (a reader's rounds) done: the next run resumes here */
	/* The user reader's walks (ak_htab_next_copy): complete, or stale. */
	unsigned int walks_complete, walks_stale;
	unsigned int walk_missed;	/* a complete walk without a stable key: never */
};

#endif
