// SPDX-License-Identifier: GPL-2.0
/*
 * Read-mostly data read on every CPU (rculist.h): every openat(2) of the
 * test's threads under RCU_PREFIX is matched against every glob rule of a
 * policy list, either in a read section that takes no lock (the default)
 * or under the writers' lock (locked_readers, the way a list had to be
 * read before), while a syscall program adds and deletes rules.
 */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <arenakit/alloc.h>
#include <arenakit/lock.h>
#include <arenakit/rculist.h>
#include <arenakit/glob.h>
#include "guest/rculist_shared.h"

struct policy __arena_global policy;

int target_tgid;
int locked_readers;
struct rcu_counts counts;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ak_glob_subject);
} subject SEC(".maps");

SEC("syscall")
int init(void *ctx)
{
	ak_list_init(&policy.rules);
	return 0;
}

SEC("syscall")
int add_rule(struct rcu_rule_args *a)
{
	struct rule __arena *r;
	int i, err;

	r = ak_alloc(sizeof(*r), &err);	/* -EBUSY too: the writer tries again */
	if (!r)
		return err;
	/* Unrolled: a syscall program's context is read at constant offsets only. */
#pragma clang loop unroll(full)
	for (i = 0; i < RCU_PATTERN_MAX; i++)
		r->pattern[i] = a->pattern[i];
	r->pattern[RCU_PATTERN_MAX - 1] = 0;
	err = ak_lock_acquire(&policy.lock);
	if (err) {
		ak_free(r);
		return err;
	}
	r->id = policy.rules.len;
	if (a->head)
		ak_list_add_head_rcu(&policy.rules, &r->node);
	else
		ak_list_add_tail_rcu(&policy.rules, &r->node);
	ak_lock_release(&policy.lock);
	a->rule = (unsigned long long)r;
	return 0;
}

SEC("syscall")
int del_rule(struct rcu_rule_args *a)
{
	struct rule __arena *r = (struct rule __arena *)a->rule;
	int err = ak_lock_acquire(&policy.lock);

	if (err)
		return err;
	err = ak_list_del_rcu(&policy.rules, &r->node, &policy.rcu);
	if (!err)
		a->reclaimed = ak_rcu_reclaim(&policy.rcu, struct rule, node);
	ak_lock_release(&policy.lock);
	return err;
}

SEC("syscall")
int reclaim(struct rcu_rule_args *a)
{
	int err = ak_lock_acquire(&policy.lock);

	if (err)
		return err;
	a->reclaimed = ak_rcu_reclaim(&policy.rcu, struct rule, node);
	ak_lock_release(&policy.lock);
	return 0;
}

/* Every rule against @s: 0 with the matches counted, or why the walk stopped. */
static int match_rules(const struct ak_glob_subject *s)
{
	unsigned long long matches = 0, passed = 0;
	struct rule __arena *r;
	int m, err = 0;

	ak_list_for_each_entry_rcu(r, &policy.rules, node) {
		m = ak_glob_match_subject(r->pattern, s);
		if (m < 0) {
			err = m;
			break;
		}
		matches += m;
		passed++;
	}
	err = err ?: ak_list_walk_status(r, &policy.rules, node);
	if (err)
		return err;
	__sync_fetch_and_add(&counts.matches, matches);
	if (passed > counts.rules_max)
		counts.rules_max = passed;	/* a racy max: a statistic */
	return 0;
}

static int match_locked(const struct ak_glob_subject *s)
{
	int err = ak_lock_acquire(&policy.lock);

	if (err)
		return err;
	err = match_rules(s);
	ak_lock_release(&policy.lock);
	return err;
}

static int match_read_section(const struct ak_glob_subject *s)
{
	unsigned int token = ak_rcu_read_begin(&policy.rcu);
	int err = match_rules(s);

	ak_rcu_read_end(&policy.rcu, token);
	return err;
}

static int under_prefix(const struct ak_glob_subject *s)
{
	static const char prefix[] = RCU_PREFIX;
	int i;

	if (s->len < sizeof(prefix) - 1)
		return 0;
	for (i = 0; i < sizeof(prefix) - 1; i++)
		if (s->s[i] != prefix[i])
			return 0;
	return 1;
}

#if defined(__TARGET_ARCH_arm64)
#define NR_OPENAT	56
#else
#define NR_OPENAT	257
#endif

SEC("tp_btf/sys_enter")
int BPF_PROG(on_enter, struct pt_regs *regs, long id)
{
	struct ak_glob_subject *s;
	__u32 zero = 0;
	int err;

	if (id != NR_OPENAT || bpf_get_current_pid_tgid() >> 32 != target_tgid)
		return 0;
	s = bpf_map_lookup_elem(&subject, &zero);
	if (!s)
		return 0;
	__sync_fetch_and_add(&counts.calls, 1);
	err = ak_glob_subject_read_user(s, (const void *)PT_REGS_PARM2(regs));
	if (err || !under_prefix(s)) {
		if (err && err != -E2BIG) {
			__sync_fetch_and_add(&counts.lost_other, 1);
			counts.read_err = err;
		}
		return 0;
	}
	__sync_fetch_and_add(&counts.events, 1);
	err = locked_readers ? match_locked(s) : match_read_section(s);
	if (!err)
		__sync_fetch_and_add(&counts.walked, 1);
	else if (err == -EBUSY)
		__sync_fetch_and_add(&counts.lost_busy, 1);
	else if (err == -AK_EBUDGET)
		__sync_fetch_and_add(&counts.lost_budget, 1);
	else
		__sync_fetch_and_add(&counts.lost_other, 1);
	return 0;
}

char _license[] SEC("license") = "GPL";
