// SPDX-License-Identifier: GPL-2.0
/*
 * open_policy: glob rules matched against every file opened, in a tracing
 * program. The rules are an arenakit rule set (ruleset.h): every CPU
 * matches the path of every open(2) and openat(2) against all of them,
 * taking no lock, while the loader adds and deletes rules through the
 * set's edit programs. Each match is counted per (rule, command) in an
 * arena hash table, which the loader walks through the arena's mmap
 * (open_policy.c).
 *
 * The tracing program is not sleepable: its table entries come from a pool
 * that the sleepable setup program reserves first.
 */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "open_policy.h"
#define AK_HTAB_PROG_MAX_KEY 24	/* sizeof(struct open_key): compile no longer ones */
#include <arenakit/glob.h>
#include <arenakit/htab.h>
#include <arenakit/ruleset.h>

struct ak_ruleset __arena_global rules;
struct open_stats __arena_global stats;
struct ak_htab __arena_global counts;

/* rules_add, rules_del, rules_reclaim: the loader's edits (ruleset_user.h). */
AK_RULESET_PROGRAMS(rules, &rules)

/* The path (outside the arena), the rules it matched and a key, per CPU. */
struct scratch {
	struct ak_glob_subject path;
	struct ak_ruleset_matches matches;
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

	err = ak_htab_init(&counts, sizeof(struct open_key), sizeof(__u64), OPEN_POLICY_KEYS);
	if (err)
		return err;
	/* A reserve cut by its budget keeps what it reserved: call it again. */
	err = -AK_EBUDGET;
	for (i = ak_opaque_zero(); i < 64 && err == -AK_EBUDGET && can_loop; i++)
		err = ak_htab_reserve(&counts, OPEN_POLICY_KEYS);
	return err;
}

/*
 * Count a match of rule @rule for this CPU's key. A global function: the
 * table's code is verified once, not at each of the calls below.
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
	 * wait (its virtual CPU preempted by the host, say: under emulation,
	 * for tens of milliseconds, longer than four waits). It is not this
	 * CPU's own caller (a tracing program does not nest in itself), so
	 * more waits are safe, and a count is worth them: as many as this
	 * function's loop budget allows.
	 */
	for (tries = ak_opaque_zero(); tries < 64 && can_loop; tries++) {
		n = ak_htab_lookup_or_init(&counts, &s->key, &none, &err);
		if (n || err != -EBUSY)
			break;
	}
	if (!n) {
		__sync_fetch_and_add(&stats.dropped, 1);
		stats.dropped_err = err;
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
	struct scratch *s;
	__u32 zero = 0;
	int i, n, err;

	if (id != NR_OPEN && id != NR_OPENAT)
		return 0;
	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return 0;
	__sync_fetch_and_add(&stats.opens, 1);
	err = ak_glob_subject_read_user(&s->path, (const void *)(id == NR_OPEN ? PT_REGS_PARM1(regs) : PT_REGS_PARM2(regs)));
	if (err) {
		/* A path cut short is not matched: no rule is told it matched. */
		__sync_fetch_and_add(err == -E2BIG ? &stats.too_long : &stats.unreadable, 1);
		return 0;
	}
	n = ak_ruleset_match(&rules, &s->path, &s->matches);
	if (n < 0) {
		__sync_fetch_and_add(n == -AK_EBUDGET ? &stats.lost_budget : &stats.lost_fault, 1);
		return 0;
	}
	__sync_fetch_and_add(&stats.matched, 1);
	if (s->matches.edited)
		__sync_fetch_and_add(&stats.matched_in_edit, 1);
	bpf_get_current_comm(s->key.comm, sizeof(s->key.comm));
	s->key.unused = 0;
	for (i = 0; i < n && i < AK_RULESET_MATCH_IDS; i++)
		count_match(s->matches.id[i]);
	/* More rules matched than a match keeps ids of: those are not counted. */
	if (n > AK_RULESET_MATCH_IDS)
		__sync_fetch_and_add(&stats.dropped, n - AK_RULESET_MATCH_IDS);
	return 0;
}

char _license[] SEC("license") = "GPL";
