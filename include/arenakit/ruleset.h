/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/ruleset.h - a set of glob rules, matched on every event and
 * edited live: what a policy or a filter keeps (paths to count, commands to
 * skip), as a call.
 *
 *	struct ak_ruleset __arena_global excludes;	(zero: an empty set)
 *	AK_RULESET_PROGRAMS(excludes, &excludes)	the loader's edit programs
 *
 *	struct ak_ruleset_matches m;
 *	n = ak_ruleset_match(&excludes, &subject, &m);	any program
 *	if (n > 0) ... m.id[0] is the first rule that matched
 *
 * The rules are a read-mostly list (rculist.h): a match walks all of them
 * in a read section, taking no lock, so readers on every CPU never wait
 * for each other or for a writer; edits take the set's lock, and a deleted
 * rule is freed once no reader can reach it. Each rule is a pattern of
 * lib/glob.c's syntax (glob.h) of up to AK_RULE_PATTERN_MAX - 1 bytes, and
 * an id, given in order from 0 and never given again, that stays the
 * rule's for its life: what a program counts by.
 *
 * Who does what:
 *  - BPF, any program type: ak_ruleset_match(), a global function (each
 *    call is verified once and has its own loop budget; a match of every
 *    rule costs the sum of the patterns' matches, each bounded by
 *    may_goto, and a cut walk says so, -AK_EBUDGET, never a short answer).
 *  - BPF, sleepable programs (they allocate): ak_ruleset_add(),
 *    ak_ruleset_del(), ak_ruleset_reclaim(); AK_RULESET_PROGRAMS(name, set)
 *    defines the three as SEC("syscall") programs name_add, name_del and
 *    name_reclaim, which the loader runs.
 *  - The loader (<arenakit/ruleset_user.h>): checks a pattern, runs the
 *    edit programs (an edit line "+PATTERN" or "-PATTERN", a -EBUSY lock
 *    tried again), reclaims, and walks the rules through the mmap.
 *
 * What a match sees while the set is edited: every rule on the set for the
 * whole walk, once; a rule added or deleted during it, at most once
 * (rculist.h), and m->edited says the set changed meanwhile.
 *
 * Where things are: ruleset_types.h, the structures; this header, the
 * calls; ruleset_impl.h, their bodies (internal, included at the end).
 */
#ifndef __ARENAKIT_RULESET_H
#define __ARENAKIT_RULESET_H

#include <arenakit/ruleset_types.h>
#include <arenakit/rculist.h>
#include <arenakit/glob.h>

/**
 * ak_ruleset_match - match @subj against every rule of @set (any program)
 * @set: the set
 * @subj: the string, outside the arena (ak_glob_subject_read_kernel/_user)
 * @m: what matched: how many rules, the ids of the first
 *	AK_RULESET_MATCH_IDS of them in the set's order, and whether the set
 *	was edited during the walk
 *
 * A global function in BPF: call it in a loop, or from a program of any
 * type; not under a bpf_spin_lock.
 *
 * Return: the number of rules that matched (0 and more, as @m->matched);
 * -AK_EBUDGET if the loop budget cut the walk or a match, -E2BIG if @subj
 * did not fit its buffer (no rule is told it matched: its first bytes are
 * no answer), -EFAULT if the walk met a broken link. On an error, @m holds
 * what was found before it, which is no answer either.
 */
__ak_global int ak_ruleset_match(__arg_arena struct ak_ruleset __arena *set,
				 __ak_nonnull const struct ak_glob_subject *subj,
				 __ak_nonnull struct ak_ruleset_matches *m);

/**
 * ak_ruleset_add - add a rule last in @set (sleepable programs)
 * @set: the set
 * @edit: the pattern, NUL-terminated, in AK_RULE_PATTERN_MAX readable
 *	bytes (a syscall program's context, the stack, a map value); its id
 *	is written back to @edit->id
 *
 * The pattern is stored as given up to its NUL (the loader checks it with
 * ak_glob_valid()); its last byte is taken as a NUL.
 * Return: 0; -EINVAL for an empty pattern; -ENOMEM; -EBUSY (the set's lock
 * or the allocator stayed busy: try again).
 */
static __ak_always_inline int ak_ruleset_add(struct ak_ruleset __arena *set,
					     struct ak_rule_edit *edit);

/**
 * ak_ruleset_del - delete the first rule of @set whose pattern is
 * @edit->pattern, and reclaim (sleepable programs)
 * @set: the set
 * @edit: as for ak_ruleset_add(); @edit->id is set to the deleted rule's,
 *	@edit->reclaimed to the reclaim's answer (-EBUSY while readers are
 *	inside: a later edit or ak_ruleset_reclaim() frees the rule)
 *
 * Return: 0; -ENOENT if no rule has that pattern; -AK_EBUDGET if the walk
 * was cut before it found one; -EBUSY (the set's lock: try again).
 */
static __ak_always_inline int ak_ruleset_del(struct ak_ruleset __arena *set,
					     struct ak_rule_edit *edit);

/**
 * ak_ruleset_reclaim - free the deleted rules no reader can reach
 * @set: the set
 * @edit: @edit->reclaimed gets ak_rcu_reclaim's answer (freed, or -EBUSY
 *	while readers of the last deletes are inside)
 *
 * Return: 0, or -EBUSY for the set's lock (try again).
 */
static __ak_always_inline int ak_ruleset_reclaim(struct ak_ruleset __arena *set,
						 struct ak_rule_edit *edit);

/**
 * AK_RULESET_PROGRAMS - define the edit programs of a set, for its loader
 * @name: their names' stem: @name_add, @name_del, @name_reclaim (the
 *	skeleton's progs.@name_add...; ruleset_user.h's AK_RULESET_PROGS
 *	gathers them)
 * @set: the set, a struct ak_ruleset __arena *
 *
 * Sleepable SEC("syscall") programs whose context is a struct ak_rule_edit.
 */
#define AK_RULESET_PROGRAMS(name, set)					\
	SEC("syscall")							\
	int name##_add(struct ak_rule_edit *edit)			\
	{								\
		return ak_ruleset_add(set, edit);			\
	}								\
	SEC("syscall")							\
	int name##_del(struct ak_rule_edit *edit)			\
	{								\
		return ak_ruleset_del(set, edit);			\
	}								\
	SEC("syscall")							\
	int name##_reclaim(struct ak_rule_edit *edit)			\
	{								\
		return ak_ruleset_reclaim(set, edit);			\
	}

/* The bodies of the calls above: internal. */
#include <arenakit/ruleset_impl.h>

#endif /* __ARENAKIT_RULESET_H */
