// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Kernel patch 8: the bpf_can_loop() kfunc bounds a loop from the frame's
 * may_goto budget, and the verifier explores the loop it bounds like an
 * open-coded iterator's. On a kernel without it (KERNEL=stock) these tests
 * skip, naming the feature.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>

#include <arenakit/arena.h>
#include "guest/guest.h"
#include "kernel_features.h"
#include "can_loop_kfunc.skel.h"

static void require_can_loop(void)
{
	guest_require_feature(ARENAKIT_CAN_LOOP_KFUNC, "kernel/patches/0008");
}

/* Open the object with only @program to load. */
static struct can_loop_kfunc *open_one(const char *program)
{
	struct can_loop_kfunc *skel = can_loop_kfunc__open();
	struct bpf_program *prog;

	cr_assert(skel);
	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_autoload(prog, !strcmp(bpf_program__name(prog), program));
	return skel;
}

static int run_one(const char *program, struct can_loop_kfunc **skelp)
{
	struct can_loop_kfunc *skel = open_one(program);
	int retval;

	cr_assert_eq(arenakit_load_skeleton(skel->skeleton), 0, "%s does not load", program);
	cr_assert_eq(ak_run(bpf_object__find_program_by_name(skel->obj, program), NULL, 0,
			    &retval), 0);
	*skelp = skel;
	return retval;
}

#define EXPECT_RESULT(program, want)					\
	Test(can_loop_kfunc, program, .timeout = GUEST_TEST_TIMEOUT)		\
	{								\
		struct can_loop_kfunc *skel;					\
									\
		require_can_loop();					\
		cr_expect_eq(run_one(#program, &skel), (want));		\
		can_loop_kfunc__destroy(skel);				\
	}

EXPECT_RESULT(bounded, 499500)
EXPECT_RESULT(nested, 1000)
EXPECT_RESULT(in_subprog, 1000)

Test(can_loop_kfunc, unbounded_ends, .timeout = GUEST_TEST_TIMEOUT)
{
	struct can_loop_kfunc *skel;

	require_can_loop();
	cr_expect_eq(run_one("unbounded", &skel), 1);
	printf("can_loop: a loop only bpf_can_loop() ends ran %llu times\n", skel->bss->steps);
	can_loop_kfunc__destroy(skel);
}

static void expect_rejected(const char *program, const char *reason)
{
	struct can_loop_kfunc *skel;
	int err;

	require_can_loop();
	skel = open_one(program);
	arenakit_set_report_stream(NULL);
	err = arenakit_load_skeleton(skel->skeleton);
	arenakit_set_report_stream(stderr);
	cr_expect_neq(err, 0, "%s loaded, but the verifier should refuse it", program);
	cr_expect(strstr(arenakit_load_log(), reason), "%s: the log does not say \"%s\":\n%s",
		  program, reason, arenakit_load_log());
	can_loop_kfunc__destroy(skel);
}

Test(can_loop_kfunc, loop_body_is_verified, .timeout = GUEST_TEST_TIMEOUT)
{
	expect_rejected("reject_unchecked_index", "invalid access to map value");
}

/* Each frame has its own budget, and the verifier keeps one per frame. */
Test(can_loop_kfunc, callee_budget_is_its_own, .timeout = GUEST_TEST_TIMEOUT)
{
	expect_rejected("reject_after_callee_drained", "invalid access to map value");
}

/*
 * A loop that bpf_can_loop() does not bound: main calls a function that
 * calls bpf_can_loop() once, and loops forever. Each call of the function
 * has a budget of its own, so the verifier must not take the state of the
 * second call as the first one's going round: it refuses the loop.
 */
Test(can_loop_kfunc, another_calls_budget_bounds_no_loop, .timeout = GUEST_TEST_TIMEOUT)
{
	struct bpf_insn insns[] = {
		ARENAKIT_MOV0(0),
		ARENAKIT_INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_1, 0, 0, 0),	/* loop: */
		ARENAKIT_INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 3),	/* call sub */
		ARENAKIT_INSN(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_0, 0, 1, 0),	/* never */
		ARENAKIT_JA(-4),						/* goto loop */
		ARENAKIT_EXIT,
		/* sub: */
		ARENAKIT_INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_1, 0, 0, 0),
		ARENAKIT_INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, 0),
		ARENAKIT_MOV0(0),
		ARENAKIT_EXIT,
	};
	static char log[1 << 20];
	int fd;

	require_can_loop();
	insns[7].imm = arenakit_can_loop_btf_id();
	cr_assert_gt(insns[7].imm, 0, "no BTF id for bpf_can_loop: %d", insns[7].imm);
	fd = arenakit_load_insns("can_loop_other", insns, ARRAY_SIZE(insns), log,
				 sizeof(log));
	cr_expect_lt(fd, 0, "an endless loop was taken");
	if (fd >= 0)
		close(fd);
	cr_expect(strstr(log, "infinite loop detected"), "the log ends:\n%s",
		  log + (strlen(log) > 400 ? strlen(log) - 400 : 0));
}
