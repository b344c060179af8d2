/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What tests/guest/rculist.bpf.c and its driver share: a policy of glob
 * rules in a read-mostly list, matched against every path the test's
 * threads open, while a writer adds and deletes rules.
 */
#ifndef ARENAKIT_TESTS_GUEST_RCULIST_SHARED_H
#define ARENAKIT_TESTS_GUEST_RCULIST_SHARED_H

#include <arenakit/rculist.h>
#include <arenakit/lock.h>

#define RCU_PATTERN_MAX 48
/* Opens of paths under it are the test's events; its rule matches them all. */
#define RCU_PREFIX "/tmp/akrcu/"

/* A rule, and the policy: its list, the writers' lock and the readers' domain. */
struct rule {
	struct ak_list_node node;
	unsigned long long id;
	char pattern[RCU_PATTERN_MAX];
};

struct policy {
	struct ak_lock lock;		/* writers, and locked readers */
	struct ak_list rules;
	struct ak_rcu rcu;
};

/* The context of add_rule, del_rule and reclaim (ctx_in and ctx_out). */
struct rcu_rule_args {
	char pattern[RCU_PATTERN_MAX];
	unsigned long long rule;	/* add_rule's out, del_rule's in: the entry */
	int head;			/* add_rule: first, not last */
	int reclaimed;			/* del_rule, reclaim: ak_rcu_reclaim's answer */
};

/* Counted by the tracing program, in its .bss. */
struct rcu_counts {
	unsigned long long events;	/* opens under RCU_PREFIX */
	unsigned long long walked;	/* whole walks: the event was matched */
	unsigned long long matches;	/* rules that matched, over those walks */
	unsigned long long lost_busy;	/* the list's lock stayed busy */
	unsigned long long lost_budget;	/* the loop budget cut the walk */
	unsigned long long lost_other;	/* a fault, or a path that could not be read */
	unsigned long long rules_max;	/* the most rules one walk passed */
	unsigned long long calls;	/* openat calls of the test's threads, any path */
	int read_err;			/* why a path could not be read, the last time */
};

#endif
