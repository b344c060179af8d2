/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What open_policy.bpf.c and open_policy.c share: what the tracing program
 * counts. The rules are an arenakit rule set (ruleset.h).
 */
#ifndef OPEN_POLICY_H
#define OPEN_POLICY_H

#define OPEN_POLICY_KEYS 4096		/* (rule, command) pairs counted at most */
#define OPEN_POLICY_COMM 16		/* the kernel's TASK_COMM_LEN */

/* The hash table's key: which rule matched a file which command opened. */
struct open_key {
	unsigned int rule;
	char comm[OPEN_POLICY_COMM];
	unsigned int unused;
};

/* In the arena: what the tracing program saw and lost. */
struct open_stats {
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

#endif
