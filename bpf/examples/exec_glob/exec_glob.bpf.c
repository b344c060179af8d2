// SPDX-License-Identifier: GPL-2.0
/*
 * exec_glob: glob rules matched in a tracing program. On every exec, the
 * file name is matched against the rules user space added to an arenakit
 * rule set (ruleset.h); each match is counted per rule (an arena array)
 * and per (executable, rule) in an arena hash table, which user space
 * reads through the arena's mmap (exec_glob.c).
 *
 * The exec hook is not sleepable: it allocates nothing itself. The table's
 * nodes come from a pool that the sleepable setup program reserves first.
 */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "exec_glob.h"
#define AK_HTAB_PROG_MAX_KEY 56	/* sizeof(struct exec_key): compile no longer ones */
#include <arenakit/glob.h>
#include <arenakit/htab.h>
#include <arenakit/ruleset.h>

struct ak_ruleset __arena_global rules;
struct exec_glob __arena_global eg;
struct ak_htab __arena_global counts;

/* rules_add, rules_del, rules_reclaim: how the loader adds the rules. */
AK_RULESET_PROGRAMS(rules, &rules)

/* The file name (outside the arena), the rules it matched and a key, per CPU. */
struct scratch {
	struct ak_glob_subject name;
	struct ak_ruleset_matches matches;
	struct exec_key key;
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

	/* Buckets for every key, so the table never needs to grow (a sleepable job). */
	err = ak_htab_init(&counts, sizeof(struct exec_key), sizeof(__u64), EXEC_GLOB_KEYS);
	if (err)
		return err;
	/* A reserve cut by its budget keeps what it reserved: call it again. */
	err = -AK_EBUDGET;
	for (i = ak_opaque_zero(); i < 64 && err == -AK_EBUDGET && can_loop; i++)
		err = ak_htab_reserve(&counts, EXEC_GLOB_KEYS);
	return err;
}

/* The base name of @s->name into @s->key, for rule @rule. */
static void make_key(struct scratch *s, unsigned int rule)
{
	unsigned int i, base = 0, len = s->name.len;

	for (i = ak_opaque_zero(); i < len && can_loop; i++)
		if (s->name.s[i & (AK_GLOB_SUBJECT_MAX - 1)] == '/')
			base = i + 1;
	/* The loop's test bounds i for the verifier (48 is no mask). */
	for (i = ak_opaque_zero(); i < EXEC_GLOB_EXE_MAX - 1 && can_loop; i++)
		s->key.exe[i] = base + i < len ?
				s->name.s[(base + i) & (AK_GLOB_SUBJECT_MAX - 1)] : 0;
	s->key.exe[EXEC_GLOB_EXE_MAX - 1] = 0;
	s->key.rule = rule;
	s->key.unused = 0;
}

static void count(struct scratch *s, unsigned int rule)
{
	__u64 __arena *n;
	__u64 zero = 0;

	make_key(s, rule);
	/* One entry per key, however many CPUs count it first at once. */
	n = ak_htab_lookup_or_init(&counts, &s->key, &zero, 0);
	if (!n) {
		__sync_fetch_and_add(&eg.dropped, 1);
		return;
	}
	__sync_fetch_and_add(n, 1);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *task, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 key = 0;
	struct scratch *s = bpf_map_lookup_elem(&scratch, &key);
	unsigned int i, id;
	int n, err;

	if (!s)
		return 0;
	err = ak_glob_subject_read_kernel(&s->name, bprm->filename);
	__sync_fetch_and_add(&eg.execs, 1);
	if (err == -E2BIG)
		__sync_fetch_and_add(&eg.too_long, 1);	/* no rule is told it matched */
	if (err)
		return 0;
	n = ak_ruleset_match(&rules, &s->name, &s->matches);
	if (n < 0)
		__sync_fetch_and_add(&eg.cut, 1);
	for (i = 0; i < n && i < AK_RULESET_MATCH_IDS; i++) {
		id = s->matches.id[i];
		if (id < EXEC_GLOB_RULES)
			__sync_fetch_and_add(&eg.hits[id], 1);
		count(s, id);
	}
	return 0;
}

char _license[] SEC("license") = "GPL";
