/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What open_policy.bpf.c and open_policy.c share: the rules, kept in a
 * read-mostly arena list, and what the tracing program counts.
 */
#ifndef OPEN_POLICY_H
#define OPEN_POLICY_H

#define OPEN_POLICY_PATTERN_MAX 64	/* bytes of a rule, its NUL included */
#define OPEN_POLICY_KEYS 4096		/* (rule, command) pairs counted at most */
#define OPEN_POLICY_COMM 16		/* the kernel's TASK_COMM_LEN */

struct open_rule {
	struct ak_list_node node;
	unsigned int id;
	unsigned int unused;
	char pattern[OPEN_POLICY_PATTERN_MAX];	/* zero-padded */
};

/* The hash table's key: which rule matched a file which command opened. */
struct open_key {
	unsigned int rule;
	char comm[OPEN_POLICY_COMM];
	unsigned int unused;
};

/* In the arena: the rules (the writers' lock, the readers' domain) and the counts. */
struct open_policy {
	struct ak_lock lock;
	struct ak_list rules;
	struct ak_rcu rcu;
	unsigned int next_id;
	unsigned long long opens;	/* open and openat calls seen */
	unsigned long long matched;	/* opens matched against every rule */
	unsigned long long matched_in_edit;	/* ... while a writer changed the rules */
	unsigned long long lost_budget;	/* walks the loop budget cut */
	unsigned long long lost_fault;	/* walks that met a broken link */
	unsigned long long too_long;	/* paths a subject cannot hold */
	unsigned long long unreadable;	/* paths not in memory (no fault in a tracepoint) */
	unsigned long long dropped;	/* matches the table could not count */
	int dropped_err;		/* why, the last time */
};

/* The context of add_rule and del_rule: the pattern, zero-padded. */
struct open_rule_args {
	char pattern[OPEN_POLICY_PATTERN_MAX];
	unsigned int id;		/* add_rule: the new rule's */
	int reclaimed;			/* del_rule: ak_rcu_reclaim's answer */
};

#endif
