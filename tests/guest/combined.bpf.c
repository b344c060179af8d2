// SPDX-License-Identifier: GPL-2.0
/*
 * Every arenakit header in one program with the headers arena users start
 * from: the 6.12 selftests' bpf_experimental.h, bpf_arena_common.h,
 * bpf_arena_alloc.h and bpf_arena_list.h (built with their directory on the
 * include path). Both libraries are then used side by side on one arena.
 * bpf_experimental.h defines can_loop and cond_break without a guard, so it
 * comes first; arenakit's own guarded definitions then step aside.
 */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include "bpf_experimental.h"

#define ARENA_PAGES 256
struct {
	__uint(type, BPF_MAP_TYPE_ARENA);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, ARENA_PAGES);
} arena SEC(".maps");

#include "bpf_arena_alloc.h"
#include "bpf_arena_list.h"

#define AK_ALLOC_MAP arena
#include <arenakit/loop.h>
#include <arenakit/arena.h>
#include <arenakit/lock.h>
#include <arenakit/alloc.h>
#include <arenakit/list.h>
#include <arenakit/glob.h>
#include "guest/bpf_test.h"

struct theirs {
	struct arena_list_node node;
	int value;
};

struct ours {
	struct ak_list_node node;
	int value;
};

struct ak_list __arena_global our_list;
static arena_list_head_t their_list;	/* static: user space has no such type */
char __arena_global pattern[8] = "a*c";
char __arena_global subject[8] = "abc";

SEC("syscall")
int test_combined_with_selftest_headers(void *ctx)
{
	struct theirs __arena *t;
	struct ours __arena *o;
	int i, sum_theirs = ak_opaque_zero(), sum_ours = ak_opaque_zero();

	ak_list_init(&our_list);
	for (i = ak_opaque_zero(); i < 10 && can_loop; i++) {
		t = bpf_alloc(sizeof(*t));
		o = ak_alloc(sizeof(*o), NULL);
		test_expect(t && o);
		t->value = i;
		o->value = i;
		list_add_head(&t->node, &their_list);
		ak_list_add_tail(&our_list, &o->node);
	}
	list_for_each_entry(t, &their_list, node)
		sum_theirs += t->value;
	ak_list_for_each_entry(o, &our_list, node)
		sum_ours += o->value;
	test_expect_eq(sum_theirs, 45);
	test_expect_eq(sum_ours, 45);
	test_expect_eq(ak_list_len(&our_list), 10);
	test_expect_eq(ak_glob_match(pattern, subject), 1);
	test_expect_eq(test_live_objects(), 10);
	return 0;
}

char _license[] SEC("license") = "GPL";
