// SPDX-License-Identifier: GPL-2.0
/*
 * open_policy: glob rules matched against every file opened, in a tracing
 * program. The rules live in a read-mostly arena list (rculist.h): every
 * CPU walks all of them on every open(2) and openat(2) in a read section,
 * taking no lock, while the loader adds and deletes rules under the
 * writers' lock. Each match is counted per (rule, command) in an arena
 * hash table, which the loader walks through the arena's mmap
 * (open_policy.c).
 *
 * The tracing program is not sleepable: its table entries come from a pool
 * that the sleepable setup program reserves first.
 */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <arenakit/glob.h>
#include <arenakit/htab.h>
#include <arenakit/lock.h>
#include <arenakit/rculist.h>
#include "open_policy.h"

struct open_policy __arena_global policy;
struct ak_htab __arena_global counts;

/* The path (outside the arena) and the key built from it, per CPU. */
struct scratch {
	struct ak_glob_subject path;
	struct open_key key;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

SEC("syscall")
int setup(void *ctx)
{
	int err, i;

	ak_list_init(&policy.rules);
	err = ak_htab_init(&counts, sizeof(struct open_key), sizeof(__u64), OPEN_POLICY_KEYS);
	if (err)
		return err;
	/* A reserve cut by its budget keeps what it reserved: call it again. */
	err = -AK_EBUDGET;
	for (i = ak_opaque_zero(); i < 64 && err == -AK_EBUDGET && can_loop; i++)
		err = ak_htab_reserve(&counts, OPEN_POLICY_KEYS);
	return err;
}

#define PATTERN_WORDS (OPEN_POLICY_PATTERN_MAX / 8)

SEC("syscall")
int add_rule(struct open_rule_args *a)
{
	const __u64 *from = (const __u64 *)a->pattern;
	struct open_rule __arena *r;
	__u64 __arena *to;
	int i, err;

	r = ak_alloc(sizeof(*r), &err);	/* -ENOMEM, or -EBUSY: try later */
	if (!r)
		return err;
	/* Unrolled: a syscall program's context is read at constant offsets. */
	to = (__u64 __arena *)r->pattern;
#pragma clang loop unroll(full)
	for (i = 0; i < PATTERN_WORDS; i++)
		to[i] = from[i];
	r->pattern[OPEN_POLICY_PATTERN_MAX - 1] = 0;
	err = ak_lock_acquire(&policy.lock);
	if (err) {
		ak_free(r);
		return err;
	}
	a->id = r->id = policy.next_id++;
	ak_list_add_tail_rcu(&policy.rules, &r->node);
	ak_lock_release(&policy.lock);
	return 0;
}

static int same_pattern(const struct open_rule __arena *r, const __u64 *pattern)
{
	const __u64 __arena *have = (const __u64 __arena *)r->pattern;
	int i;

#pragma clang loop unroll(full)
	for (i = 0; i < PATTERN_WORDS; i++)
		if (have[i] != pattern[i])
			return 0;
	return 1;
}

/* Delete the first rule whose pattern is @a->pattern, and reclaim. */
SEC("syscall")
int del_rule(struct open_rule_args *a)
{
	__u64 pattern[PATTERN_WORDS];
	struct open_rule __arena *r;
	int i, err, found = 0;

#pragma clang loop unroll(full)
	for (i = 0; i < PATTERN_WORDS; i++)
		pattern[i] = ((const __u64 *)a->pattern)[i];
	err = ak_lock_acquire(&policy.lock);
	if (err)
		return err;
	ak_list_for_each_entry(r, &policy.rules, node)
		if (same_pattern(r, pattern)) {
			found = 1;
			break;
		}
	if (!found) {
		/* Not there, or the walk was cut before it was found: say which. */
		err = ak_list_walk_status(r, &policy.rules, node) ?: -ENOENT;
	} else {
		err = ak_list_del_rcu(&policy.rules, &r->node, &policy.rcu);
		if (!err)
			a->reclaimed = ak_rcu_reclaim(&policy.rcu, struct open_rule, node);
	}
	ak_lock_release(&policy.lock);
	return err;
}

/* Free what no reader can reach any more (the loader calls it at the end). */
SEC("syscall")
int reclaim(struct open_rule_args *a)
{
	int err = ak_lock_acquire(&policy.lock);

	if (err)
		return err;
	a->reclaimed = ak_rcu_reclaim(&policy.rcu, struct open_rule, node);
	ak_lock_release(&policy.lock);
	return 0;
}

/*
 * Count a match of rule @rule for this CPU's key. A global function: the
 * table's code is verified once, not once per state of the rule walk.
 */
__noinline int count_match(unsigned int rule)
{
	__u32 zero = 0;
	struct scratch *s = bpf_map_lookup_elem(&scratch, &zero);
	__u64 __arena *n = 0;
	__u64 none = 0;
	int err = 0, tries;

	if (!s)
		return 0;
	s->key.rule = rule;
	/*
	 * -EBUSY: the bucket's holder, on another CPU, outlasted one bounded
	 * wait (its virtual CPU preempted by the host, say). It is not this
	 * CPU's own caller (a tracing program does not nest in itself), so a
	 * few more waits are safe, and a count is worth them.
	 */
	for (tries = ak_opaque_zero(); tries < 4 && can_loop; tries++) {
		n = ak_htab_lookup_or_init(&counts, &s->key, &none, &err);
		if (n || err != -EBUSY)
			break;
	}
	if (!n) {
		__sync_fetch_and_add(&policy.dropped, 1);
		policy.dropped_err = err;
		return err;
	}
	__sync_fetch_and_add(n, 1);
	return 0;
}

/* The system calls that open a path by name; arm64 has openat only. */
#if defined(__TARGET_ARCH_arm64)
#define NR_OPEN		-1
#define NR_OPENAT	56
#else
#define NR_OPEN		2
#define NR_OPENAT	257
#endif

SEC("tp_btf/sys_enter")
int BPF_PROG(on_open, struct pt_regs *regs, long id)
{
	struct open_rule __arena *r;
	struct scratch *s;
	unsigned long long gen;
	unsigned int token;
	__u32 zero = 0;
	int match, edited, err = 0;

	if (id != NR_OPEN && id != NR_OPENAT)
		return 0;
	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return 0;
	__sync_fetch_and_add(&policy.opens, 1);
	err = ak_glob_subject_read_user(&s->path, (const void *)(id == NR_OPEN ? PT_REGS_PARM1(regs) : PT_REGS_PARM2(regs)));
	if (err) {
		/* A path cut short is not matched: no rule is told it matched. */
		__sync_fetch_and_add(err == -E2BIG ? &policy.too_long : &policy.unreadable, 1);
		return 0;
	}
	bpf_get_current_comm(s->key.comm, sizeof(s->key.comm));
	s->key.unused = 0;

	token = ak_rcu_read_begin(&policy.rcu);
	gen = ak_read_once(policy.rules.gen);
	ak_list_for_each_entry_rcu(r, &policy.rules, node) {
		match = ak_glob_match_subject(r->pattern, &s->path);
		if (match < 0) {
			err = match;
			break;
		}
		if (match)
			count_match(r->id);
	}
	err = err ?: ak_list_walk_status(r, &policy.rules, node);
	edited = ak_read_once(policy.rules.gen) != gen;
	ak_rcu_read_end(&policy.rcu, token);

	if (!err && edited)
		__sync_fetch_and_add(&policy.matched_in_edit, 1);
	if (!err)
		__sync_fetch_and_add(&policy.matched, 1);
	else if (err == -AK_EBUDGET)
		__sync_fetch_and_add(&policy.lost_budget, 1);
	else
		__sync_fetch_and_add(&policy.lost_fault, 1);
	return 0;
}

char _license[] SEC("license") = "GPL";
