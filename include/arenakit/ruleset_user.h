/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/ruleset_user.h - the loader's side of ruleset.h: edit a rule set
 * through the edit programs AK_RULESET_PROGRAMS defined, and walk its rules
 * through the arena's mmap. User space only; header-only, on libbpf.
 *
 *	struct ak_ruleset_progs p = AK_RULESET_PROGS(skel, excludes);
 *	err = ak_ruleset_add_rule(&p, "*.conf", &id);
 *	err = ak_ruleset_edit(&p, line, NULL, &why);	"+PATTERN" or "-PATTERN"
 *	while (!(err = ak_ruleset_next_copy(&skel->arena->excludes, &cursor, &rule)))
 *		printf("%u %s\n", rule.id, rule.pattern);
 *
 * An edit whose lock stays busy (-EBUSY: a holder's CPU preempted, say) is
 * run again, AK_RULESET_EDIT_TRIES times a millisecond apart, before the
 * call gives up with -EBUSY.
 */
#ifndef __ARENAKIT_RULESET_USER_H
#define __ARENAKIT_RULESET_USER_H

#ifdef __BPF__
#error "<arenakit/ruleset_user.h> is for user space; a BPF program includes ruleset.h"
#else

#include <errno.h>
#include <string.h>
#include <time.h>
#include <arenakit/ruleset_types.h>
#include <arenakit/glob.h>
#include <arenakit/list_user.h>
#include <arenakit/user.h>

#define AK_RULESET_EDIT_TRIES 100

/* A set's edit programs, as AK_RULESET_PROGRAMS(name, set) defined them. */
struct ak_ruleset_progs {
	const struct bpf_program *add, *del, *reclaim;
};

/* The edit programs of AK_RULESET_PROGRAMS(@name, ...) in the skeleton @skel. */
#define AK_RULESET_PROGS(skel, name)					\
	((struct ak_ruleset_progs){ (skel)->progs.name##_add,		\
				    (skel)->progs.name##_del,		\
				    (skel)->progs.name##_reclaim })

/* Run an edit program on @e; -EBUSY is tried again. The program's answer. */
static inline int __ak_ruleset_run(const struct bpf_program *prog, struct ak_rule_edit *e)
{
	const struct timespec ms = { .tv_nsec = 1000000 };
	struct ak_rule_edit in = *e;
	int tries, retval, err = -EBUSY;

	for (tries = 0; tries < AK_RULESET_EDIT_TRIES && err == -EBUSY; tries++) {
		if (tries)
			nanosleep(&ms, NULL);
		*e = in;
		err = ak_run(prog, e, sizeof(*e), &retval) ?: retval;
	}
	return err;
}

/* @pattern into @e, zero-padded; -EINVAL (and *@why) if it is no rule. */
static inline int __ak_ruleset_pattern(struct ak_rule_edit *e, const char *pattern,
				       const char **why)
{
	unsigned long long at;
	int bad = ak_glob_valid(pattern, AK_RULE_PATTERN_MAX - 1, &at);

	if (bad) {
		if (why)
			*why = ak_glob_invalid_reason(bad);
		return -EINVAL;
	}
	memset(e, 0, sizeof(*e));
	memcpy(e->pattern, pattern, strlen(pattern));
	return 0;
}

/**
 * ak_ruleset_add_rule - add a rule, last, to the set of @progs
 * @progs: the set's edit programs (AK_RULESET_PROGS)
 * @pattern: a glob pattern, 1 to AK_RULE_PATTERN_MAX - 1 bytes, checked
 *	with ak_glob_valid()
 * @id: the new rule's id (may be NULL)
 *
 * Return: 0; -EINVAL for a pattern ak_glob_valid() refuses; -ENOMEM;
 * -EBUSY if the set's lock stayed busy through every try; or why the
 * program could not run.
 */
static inline int ak_ruleset_add_rule(const struct ak_ruleset_progs *progs, const char *pattern,
				      unsigned int *id)
{
	struct ak_rule_edit e;
	int err = __ak_ruleset_pattern(&e, pattern, NULL) ?: __ak_ruleset_run(progs->add, &e);

	if (!err && id)
		*id = e.id;
	return err;
}

/**
 * ak_ruleset_del_rule - delete the first rule whose pattern is @pattern
 * @progs: the set's edit programs
 * @pattern: the pattern
 * @reclaimed: the reclaim's answer: rules freed, or -EBUSY while readers
 *	are inside (the rule is freed later; may be NULL)
 *
 * Return: 0; -ENOENT if no rule has it; -EINVAL for a pattern that can be
 * no rule; -EBUSY; -AK_EBUDGET (the walk was cut: try again).
 */
static inline int ak_ruleset_del_rule(const struct ak_ruleset_progs *progs, const char *pattern,
				      int *reclaimed)
{
	struct ak_rule_edit e;
	int err = __ak_ruleset_pattern(&e, pattern, NULL) ?: __ak_ruleset_run(progs->del, &e);

	if (!err && reclaimed)
		*reclaimed = e.reclaimed;
	return err;
}

/**
 * ak_ruleset_edit - apply one edit line: "+PATTERN" adds a rule,
 * "-PATTERN" deletes one
 * @progs: the set's edit programs
 * @line: the line, without its newline
 * @done: the edit as its program answered (may be NULL): the rule's id
 *	(added or deleted) and, for a delete, the reclaim's answer (-EBUSY:
 *	readers were inside, a later reclaim frees the rule)
 * @why: on -EINVAL, why the line is no edit (may be NULL)
 *
 * Return: 0 for an edit made; 1 for a line that is no edit and no error
 * (empty, or a comment: '#' first); -EINVAL for a line that is neither
 * "+PATTERN" nor "-PATTERN" with a valid pattern; otherwise the error of
 * ak_ruleset_add_rule() or ak_ruleset_del_rule().
 */
static inline int ak_ruleset_edit(const struct ak_ruleset_progs *progs, const char *line,
				  struct ak_rule_edit *done, const char **why)
{
	struct ak_rule_edit e;
	int err;

	if (!line[0] || line[0] == '#')
		return 1;
	if (line[0] != '+' && line[0] != '-') {
		if (why)
			*why = "not +PATTERN or -PATTERN";
		return -EINVAL;
	}
	err = __ak_ruleset_pattern(&e, line + 1, why) ?:
	      __ak_ruleset_run(line[0] == '+' ? progs->add : progs->del, &e);
	if (!err && done)
		*done = e;
	return err;
}

/**
 * ak_ruleset_reclaim_all - free every deleted rule, waiting out the readers
 * @progs: the set's edit programs
 * @set: the set, through the mmap (for its count of rules waiting)
 * @tries: reclaims to run at most, a millisecond apart
 *
 * A reclaim frees a deleted rule once no reader that could have seen it is
 * inside; after the programs that read the set are detached, two reclaims
 * free them all, unless a reader was still inside.
 *
 * Return: the deleted rules still waiting (0: none).
 */
static inline unsigned long long ak_ruleset_reclaim_all(const struct ak_ruleset_progs *progs,
						       const struct ak_ruleset *set,
						       unsigned int tries)
{
	const struct timespec ms = { .tv_nsec = 1000000 };
	struct ak_rule_edit e;
	unsigned int i;

	for (i = 0; i < tries && __atomic_load_n(&set->rcu.pending, __ATOMIC_ACQUIRE); i++) {
		memset(&e, 0, sizeof(e));
		if (__ak_ruleset_run(progs->reclaim, &e) || e.reclaimed == -EBUSY)
			nanosleep(&ms, NULL);
	}
	return __atomic_load_n(&set->rcu.pending, __ATOMIC_ACQUIRE);
}

/**
 * ak_ruleset_next_copy - the next rule of a walk of @set, copied (through
 * the arena's mmap, while BPF edits and matches it)
 * @set: the set (struct ak_ruleset *)
 * @cursor: the walk's struct ak_list_cursor, zeroed before the first call
 * @rule: where the rule is copied (struct ak_rule *)
 *
 * ak_list_next_copy() under the set's lock (list_user.h): complete, every
 * rule on the set throughout copied once in order, or -AK_ESTALE if the set
 * was edited since the walk began (begin again).
 *
 * Return: 0 with the next rule in *@rule; -ENOENT at the end (or for a set
 * never added to); -AK_ESTALE; -EBUSY while the lock stays busy (call
 * again).
 */
static inline int ak_ruleset_next_copy(struct ak_ruleset *set, struct ak_list_cursor *cursor,
				       struct ak_rule *rule)
{
	if (!__atomic_load_n(&set->rules.head.next, __ATOMIC_ACQUIRE))
		return -ENOENT;
	return ak_list_next_copy(&set->rules, &set->lock, cursor, rule, node);
}

#endif /* __BPF__ */
#endif /* __ARENAKIT_RULESET_USER_H */
