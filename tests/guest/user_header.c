// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * <arenakit/user.h>, the installed user-space header, under a real kernel:
 * strings a loader puts into the arena are there for BPF, allocated by the
 * program's own allocator and freed by it; the budget contract's runner
 * runs a cut program until it is done, and says when it never is; the
 * verifier's statistics are read back as the kernel reported them.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <arenakit/alloc.h>
#include <arenakit/user.h>
#include "guest/guest.h"
#include "user_header.skel.h"

static struct user_header *load(void)
{
	struct user_header *skel = user_header__open();

	cr_assert(skel);
	cr_assert_eq(arenakit_load_skeleton(skel->skeleton), 0);
	return skel;
}

Test(user_header, verifier_stats_are_what_the_kernel_reported, .timeout = 120)
{
	struct user_header *skel = user_header__open();
	struct ak_verifier_stats alloc, cut, none;
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	char alloc_log[4096], cut_log[4096];

	cr_assert(skel);
	cr_assert_eq(ak_verifier_log_keep(skel->progs.arena_alloc, alloc_log, sizeof(alloc_log),
					  AK_VERIFIER_LOG_STATS), 0);
	cr_assert_eq(ak_verifier_log_keep(skel->progs.cut_then_done, cut_log, sizeof(cut_log),
					  AK_VERIFIER_LOG_STATS), 0);
	cr_expect_eq(ak_verifier_log_keep(skel->progs.match_strings, cut_log, sizeof(cut_log), 2),
		     -EINVAL, "an unknown level is refused");
	cr_assert_eq(arenakit_load_skeleton(skel->skeleton), 0);
	cr_expect_eq(ak_verifier_log_keep(skel->progs.match_strings, cut_log, sizeof(cut_log),
					  AK_VERIFIER_LOG_STATS), -EBUSY, "kept after the load");

	cr_assert_eq(ak_verifier_stats(skel->progs.arena_alloc, &alloc), 0, "log:\n%s", alloc_log);
	cr_assert_eq(bpf_prog_get_info_by_fd(bpf_program__fd(skel->progs.arena_alloc), &info,
					     &len), 0);
	printf("user_header: arena_alloc: %u insns processed in %u us, %u states (%u at most), "
	       "stack %u bytes, %u bytes JITed\n", alloc.insns_processed, alloc.verify_usec,
	       alloc.total_states, alloc.peak_states, alloc.stack_depth, alloc.jited_bytes);
	cr_expect_eq(alloc.insns_processed, info.verified_insns);
	cr_expect_eq(alloc.jited_bytes, info.jited_prog_len);
	cr_expect(strstr(alloc_log, "processed "), "the statistics line:\n%s", alloc_log);
	/* The allocator branches and calls: it has states, a stack, and takes time. */
	cr_expect_gt(alloc.total_states, 0);
	cr_expect_geq(alloc.total_states, alloc.peak_states);
	cr_expect_gt(alloc.stack_depth, 0);
	cr_expect_gt(alloc.verify_usec, 0);
	cr_assert_eq(ak_verifier_stats(skel->progs.cut_then_done, &cut), 0, "log:\n%s", cut_log);
	cr_expect_lt(cut.insns_processed, alloc.insns_processed, "a few tests against the allocator");
	cr_expect_eq(ak_verifier_stats(skel->progs.free_strings, &none), -ENODATA,
		     "no log was kept for it");
	cr_expect_gt(none.insns_processed, 0, "but the loaded program's figures are there");
	user_header__destroy(skel);
}

Test(user_header, strdup_puts_a_string_where_bpf_reads_it, .timeout = 120)
{
	struct user_header *skel = load();
	char *pattern, *string;
	int err = 0, retval;

	pattern = ak_arena_strdup(skel->progs.arena_alloc, "/usr/*/ca?", &err);
	cr_assert(pattern, "strdup: %d", err);
	string = ak_arena_strdup(skel->progs.arena_alloc, "/usr/bin/cat", &err);
	cr_assert(string, "strdup: %d", err);
	cr_expect_str_eq(pattern, "/usr/*/ca?", "the copy, read back through the mmap");
	cr_expect_eq(guest_live_objects(skel), 2);
	skel->bss->pattern_addr = (unsigned long)pattern;
	skel->bss->string_addr = (unsigned long)string;
	cr_assert_eq(ak_run(skel->progs.match_strings, NULL, 0, &retval), 0);
	cr_expect_eq(skel->arena->match, 1, "BPF matched what user space wrote: %d",
		     skel->arena->match);
	string[9] = 'd';	/* "/usr/bin/dat": user space writes, BPF sees it */
	cr_assert_eq(ak_run(skel->progs.match_strings, NULL, 0, &retval), 0);
	cr_expect_eq(skel->arena->match, 0);
	cr_assert_eq(ak_run(skel->progs.free_strings, NULL, 0, &retval), 0);
	cr_expect_eq(retval, 0, "freed by the allocator that made them: %d", retval);
	cr_expect_eq(guest_live_objects(skel), 0);
	user_header__destroy(skel);
}

Test(user_header, alloc_says_why_it_cannot, .timeout = 120)
{
	struct user_header *skel = load();
	int err = 0;

	cr_expect_null(ak_arena_alloc(skel->progs.arena_alloc, 0, &err));
	cr_expect_eq(err, -EINVAL, "0 bytes: %d", err);
	cr_expect_null(ak_arena_alloc(skel->progs.arena_alloc, AK_ALLOC_MAX + 1ULL, &err));
	cr_expect_eq(err, -E2BIG, "over AK_ALLOC_MAX: %d", err);
	cr_expect_null(ak_arena_strdup(skel->progs.match_strings, "x", &err),
		       "a program that is not AK_ALLOC_PROGRAM allocates nothing");
	cr_expect_eq(guest_live_objects(skel), 0);
	user_header__destroy(skel);
}

Test(user_header, run_until_done_follows_the_budget_contract, .timeout = 120)
{
	struct user_header *skel = load();
	unsigned int runs;
	int retval;

	skel->bss->cuts_left = 3;
	cr_expect_eq(ak_run_until_done(skel->progs.cut_then_done, NULL, 0, 10, &retval, &runs), 0);
	cr_expect_eq(retval, 0);
	cr_expect_eq(runs, 4, "3 cut runs and the one that finished: %u", runs);
	skel->bss->cuts_left = 5;
	cr_expect_eq(ak_run_until_done(skel->progs.cut_then_done, NULL, 0, 2, &retval, &runs),
		     -AK_EBUDGET, "still cut after the runs allowed");
	cr_expect_eq(runs, 2);
	cr_expect_eq(retval, -AK_EBUDGET);
	user_header__destroy(skel);
}
