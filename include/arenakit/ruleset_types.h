/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/ruleset_types.h - the arena-resident structures of ruleset.h,
 * and what a loader passes its edit programs: all a loader or a skeleton
 * needs to lay out, edit and read a rule set through the arena's mmap.
 * BPF programs include <arenakit/ruleset.h>, which includes this header;
 * a loader that edits or walks a set includes <arenakit/ruleset_user.h>.
 */
#ifndef __ARENAKIT_RULESET_TYPES_H
#define __ARENAKIT_RULESET_TYPES_H

#include <arenakit/list_types.h>
#include <arenakit/lock.h>
#include <arenakit/rculist_types.h>

/* Bytes of a rule's pattern, its NUL included; a multiple of 8. */
#define AK_RULE_PATTERN_MAX 128
/* The matching rules' ids one ak_ruleset_match() keeps. */
#define AK_RULESET_MATCH_IDS 8

/* A rule: a glob pattern, and an id no other rule of its set ever had. */
struct ak_rule {
	struct ak_list_node node;
	unsigned int id;
	unsigned int unused;
	char pattern[AK_RULE_PATTERN_MAX];	/* NUL-terminated, zero-padded */
};

/*
 * A set of rules, read on every event and edited rarely: a read-mostly
 * list (rculist.h) with its writers' lock and its readers' domain. Zero is
 * an empty set: an __arena_global needs no init.
 */
struct ak_ruleset {
	struct ak_lock lock;
	struct ak_list rules;
	struct ak_rcu rcu;
	unsigned int next_id;
	unsigned int unused;
};

/*
 * The context of the edit programs AK_RULESET_PROGRAMS defines (in and
 * out): what ak_ruleset_add_rule() and the others of ruleset_user.h pass.
 */
struct ak_rule_edit {
	char pattern[AK_RULE_PATTERN_MAX];	/* NUL-terminated, zero-padded */
	unsigned int id;			/* add: the new rule's id */
	int reclaimed;				/* del, reclaim: ak_rcu_reclaim's answer */
};

/* What ak_ruleset_match() found. */
struct ak_ruleset_matches {
	unsigned int matched;		/* rules that matched */
	unsigned int edited;		/* the set changed during the walk */
	unsigned int id[AK_RULESET_MATCH_IDS];	/* the first of them, in the set's order */
};

#endif /* __ARENAKIT_RULESET_TYPES_H */
