// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The errors a user meets first when loading, reproduced: each program of
 * tests/guest/mistakes.bpf.c makes one mistake, and the load must fail
 * with the message README's troubleshooting section quotes (the build-time
 * ones are in tests/system/toolchain_system.c).
 */
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include <arenakit/user.h>

#include "guest/guest.h"
/* The types of the object's arena globals, before its skeleton. */
#include <arenakit/alloc.h>
#include <arenakit/list.h>
#include "mistakes.skel.h"

static void expect_mistake(const char *program, const char *message)
{
	size_t size;
	const void *elf = mistakes__elf_bytes(&size);

	guest_expect_rejected(elf, size, program, message);
}

Test(mistakes, sleepable_kfunc_from_a_tc_program, .timeout = GUEST_TEST_TIMEOUT)
{
	expect_mistake("alloc_in_tc", "program must be sleepable to call sleepable kfunc");
}

Test(mistakes, matcher_inlined_in_a_walk_verifies_within_the_insn_limit, .timeout = GUEST_TEST_TIMEOUT)
{
	struct bpf_object *obj;
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	size_t size;
	const void *elf = mistakes__elf_bytes(&size);
	struct bpf_program *prog = guest_load_one(elf, size, "mistakes",
						  "match_inline_in_a_walk", &obj);

	cr_assert_eq(bpf_prog_get_info_by_fd(bpf_program__fd(prog), &info, &len), 0);
	printf("match_inline_in_a_walk: %u instructions processed\n", info.verified_insns);
	cr_expect_lt(info.verified_insns, 1000000);
	bpf_object__close(obj);
}

Test(mistakes, zero_stores_merged_into_a_memset, .timeout = GUEST_TEST_TIMEOUT)
{
	expect_mistake("zero_neighbours", "invalid mem access 'scalar'");
}

/* A loader of its own (user.h's helpers, no tool): the reason is the kept log's tail. */
Test(mistakes, a_kept_log_ends_with_the_reason, .timeout = GUEST_TEST_TIMEOUT)
{
	struct mistakes *skel = mistakes__open();
	struct bpf_program *prog;
	struct ak_verifier_stats stats;
	char log[8192];
	const char *tail;

	cr_assert(skel);
	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_autoload(prog, prog == skel->progs.zero_neighbours);
	cr_assert_eq(ak_verifier_log_keep(skel->progs.zero_neighbours, log, sizeof(log),
					  AK_VERIFIER_LOG_STATS), 0);
	arenakit_set_report_stream(NULL);
	cr_expect_neq(arenakit_load_skeleton(skel->skeleton), 0, "the verifier refuses it");
	arenakit_set_report_stream(stderr);
	/* The reason, then the statistics' three lines. */
	tail = ak_verifier_log_tail(log, strlen(log), 4);
	cr_expect(strstr(tail, "invalid mem access 'scalar'"), "the last lines:\n%s\nthe log:\n%s",
		  tail, log);
	cr_expect_eq(ak_verifier_log_tail(log, strlen(log), 1000), log, "a short log is whole");
	cr_expect_eq(ak_verifier_stats(skel->progs.zero_neighbours, &stats), -EBADF);
	mistakes__destroy(skel);
}

static void expect_loads(const char *program)
{
	struct bpf_object *obj;
	size_t size;
	const void *elf = mistakes__elf_bytes(&size);

	cr_expect(guest_load_one(elf, size, "mistakes", program, &obj), "%s", program);
	bpf_object__close(obj);
}

Test(mistakes, a_walk_counter_from_constant_zero, .timeout = GUEST_TEST_TIMEOUT)
{
	expect_mistake("count_from_constant_zero", "jumps is too complex");
	expect_loads("count_from_opaque_zero");
}

Test(mistakes, a_struct_copied_arena_to_arena, .timeout = GUEST_TEST_TIMEOUT)
{
	expect_mistake("copy_arena_struct", "invalid mem access 'scalar'");
	expect_loads("copy_arena_struct_by_words");
}
