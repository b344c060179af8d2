// SPDX-License-Identifier: GPL-2.0
/*
 * top_opens: every open(2) and openat(2) on every CPU counted per
 * (command, path), but for the paths an exclude rule matches. The counts
 * are an arena hash table of 256-byte keys held to TOP_OPENS_MAX_KEYS
 * entries, the least used evicted (AK_HTAB_LRU); the exclude rules are an
 * arenakit rule set, edited live by the loader, which reads the table
 * through the arena's mmap (top_opens.c).
 */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <arenakit/glob.h>
#include <arenakit/htab.h>
#include <arenakit/ruleset.h>
#include "top_opens.h"

struct ak_ruleset __arena_global excludes;
struct ak_htab __arena_global counts;
struct top_stats __arena_global stats;

/* excludes_add, excludes_del, excludes_reclaim: the loader's edits. */
AK_RULESET_PROGRAMS(excludes, &excludes)

/* The path, the rules it matched and the key, per CPU: no room on the stack. */
struct scratch {
	struct ak_glob_subject path;
	struct ak_ruleset_matches matches;
	struct top_key key;
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
	/* Buckets for the limit: the table never grows. */
	int err = ak_htab_init(&counts, sizeof(struct top_key), sizeof(__u64),
			       TOP_OPENS_MAX_KEYS * 4 / 3);

	err = err ?: ak_htab_set_limit(&counts, TOP_OPENS_MAX_KEYS, AK_HTAB_LRU);
	/* The tracing program takes nodes from the pool; at the limit it reuses the evicted. */
	return err ?: ak_htab_reserve(&counts, TOP_OPENS_MAX_KEYS);
}

static void lost(int err)
{
	__sync_fetch_and_add(&stats.lost, 1);
	stats.lost_err = err;
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
	const void *path = (const void *)(id == NR_OPEN ? PT_REGS_PARM1(regs) : PT_REGS_PARM2(regs));
	struct scratch *s;
	__u64 __arena *n;
	__u64 zero = 0;
	__u32 key = 0, len;
	int err;

	if (id != NR_OPEN && id != NR_OPENAT)
		return 0;
	s = bpf_map_lookup_elem(&scratch, &key);
	if (!s)
		return 0;
	__sync_fetch_and_add(&stats.opens, 1);
	err = ak_glob_subject_read_user(&s->path, path);
	len = s->path.len;
	if (err || len >= TOP_OPENS_PATH) {
		__sync_fetch_and_add(err && err != -E2BIG ? &stats.unreadable : &stats.too_long, 1);
		return 0;
	}
	err = ak_ruleset_match(&excludes, &s->path, &s->matches);
	if (err) {
		if (err > 0)
			__sync_fetch_and_add(&stats.excluded, 1);
		else
			lost(err);	/* a walk cut: no count rather than a wrong one */
		return 0;
	}
	__builtin_memset(&s->key, 0, sizeof(s->key));
	bpf_get_current_comm(s->key.comm, sizeof(s->key.comm));
	bpf_probe_read_kernel(s->key.path, len, s->path.s);	/* len < TOP_OPENS_PATH */
	n = ak_htab_lookup_or_init(&counts, &s->key, &zero, &err);
	if (!n) {
		lost(err);
		return 0;
	}
	__sync_fetch_and_add(n, 1);
	__sync_fetch_and_add(&stats.counted, 1);
	return 0;
}

char _license[] SEC("license") = "GPL";
