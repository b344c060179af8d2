/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/ruleset_impl.h - the bodies of ruleset.h's calls. Internal:
 * include <arenakit/ruleset.h>.
 *
 * A zeroed set is empty: its list's head has a NULL link until the first
 * add, which initialises it under the set's lock. A reader that finds the
 * NULL link answers "no rule" (the link only ever goes from NULL to the
 * head, then to the rules, each a single word a reader sees whole).
 */
#ifndef __ARENAKIT_RULESET_H
#error "<arenakit/ruleset_impl.h> is internal: include <arenakit/ruleset.h>"
#elif !defined(__ARENAKIT_RULESET_IMPL_H)
#define __ARENAKIT_RULESET_IMPL_H

#define __AK_RULE_WORDS (AK_RULE_PATTERN_MAX / 8)

__ak_global int ak_ruleset_match(__arg_arena struct ak_ruleset __arena *set,
				 __ak_nonnull const struct ak_glob_subject *subj,
				 __ak_nonnull struct ak_ruleset_matches *m)
{
	struct ak_rule __arena *r;
	unsigned long long gen;
	unsigned int token, n;
	int match, err = 0;

	m->matched = 0;
	m->edited = 0;
	if (subj->len > AK_GLOB_SUBJECT_MAX)
		return -E2BIG;	/* what every rule's match would answer */
	if (!ak_read_once(set->rules.head.next))
		return 0;	/* a zeroed set, never added to */
	token = ak_rcu_read_begin(&set->rcu);
	gen = ak_read_once(set->rules.gen);
	ak_list_for_each_entry_rcu(r, &set->rules, node) {
		match = ak_glob_match_subject(r->pattern, subj);
		if (match < 0) {
			err = match;
			break;
		}
		if (!match)
			continue;
		/*
		 * The count is kept in *@m, not in a register: the verifier
		 * tracks a register's every value and would walk the loop
		 * once per count instead of converging (loop.h).
		 */
		n = m->matched;
		if (n < AK_RULESET_MATCH_IDS)
			m->id[n & (AK_RULESET_MATCH_IDS - 1)] = r->id;
		m->matched = n + 1;
	}
	err = err ?: ak_list_walk_status(r, &set->rules, node);
	m->edited = ak_read_once(set->rules.gen) != gen;
	ak_rcu_read_end(&set->rcu, token);
	return err ?: (int)m->matched;
}

/*
 * Is @r's pattern the NUL-terminated @want (AK_RULE_PATTERN_MAX bytes
 * outside the arena)? 1 or 0; -AK_EBUDGET if the budget cut the compare.
 */
static __ak_always_inline int __ak_rule_is(const struct ak_rule __arena *r, const char *want)
{
	unsigned int i;
	char c;

	/* Both end in a NUL within the bound: only the budget ends this loop. */
	for (i = (unsigned int)ak_opaque_zero(); i < AK_RULE_PATTERN_MAX; i++) {
		ak_cond_break_label(spent);
		c = r->pattern[i];
		if (c != want[i & (AK_RULE_PATTERN_MAX - 1)])
			return 0;
		if (!c)
			return 1;
	}
spent:
	return -AK_EBUDGET;
}

static __ak_always_inline int ak_ruleset_add(struct ak_ruleset __arena *set,
					     struct ak_rule_edit *edit)
{
	/* Word by word, unrolled: a syscall program's context is read at constant offsets. */
	const unsigned long long *from = (const unsigned long long *)edit->pattern;
	unsigned long long __arena *to;
	struct ak_rule __arena *r;
	int i, err;

	if (!edit->pattern[0])
		return -EINVAL;
	r = ak_alloc(sizeof(*r), &err);
	if (!r)
		return err;
	to = (unsigned long long __arena *)r->pattern;
	__ak_unroll
	for (i = 0; i < __AK_RULE_WORDS; i++)
		to[i] = from[i];
	r->pattern[AK_RULE_PATTERN_MAX - 1] = 0;
	err = ak_lock_acquire(&set->lock);
	if (err) {
		ak_free(r);
		return err;
	}
	if (!set->rules.head.next)
		ak_list_init(&set->rules);
	edit->id = r->id = set->next_id++;
	ak_list_add_tail_rcu(&set->rules, &r->node);
	ak_lock_release(&set->lock);
	return 0;
}

static __ak_always_inline int ak_ruleset_del(struct ak_ruleset __arena *set,
					     struct ak_rule_edit *edit)
{
	unsigned long long want[__AK_RULE_WORDS];
	struct ak_rule __arena *r = NULL;
	int i, err, found = 0;

	__ak_unroll
	for (i = 0; i < __AK_RULE_WORDS; i++)
		want[i] = ((const unsigned long long *)edit->pattern)[i];
	((char *)want)[AK_RULE_PATTERN_MAX - 1] = 0;
	err = ak_lock_acquire(&set->lock);
	if (err)
		return err;
	if (!set->rules.head.next) {
		err = -ENOENT;
		goto out;
	}
	ak_list_for_each_entry(r, &set->rules, node) {
		found = __ak_rule_is(r, (const char *)want);
		if (found)
			break;
	}
	if (found < 0) {
		err = found;
	} else if (!found) {
		/* Not there, or the walk was cut before it was found: say which. */
		err = ak_list_walk_status(r, &set->rules, node) ?: -ENOENT;
	} else {
		edit->id = r->id;
		err = ak_list_del_rcu(&set->rules, &r->node, &set->rcu);
		if (!err)
			edit->reclaimed = ak_rcu_reclaim(&set->rcu, struct ak_rule, node);
	}
out:
	ak_lock_release(&set->lock);
	return err;
}

static __ak_always_inline int ak_ruleset_reclaim(struct ak_ruleset __arena *set,
						 struct ak_rule_edit *edit)
{
	int err = ak_lock_acquire(&set->lock);

	if (err)
		return err;
	edit->reclaimed = ak_rcu_reclaim(&set->rcu, struct ak_rule, node);
	ak_lock_release(&set->lock);
	return 0;
}

#endif /* __ARENAKIT_RULESET_IMPL_H */
