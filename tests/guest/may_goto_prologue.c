// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Kernel patch 3: a looping subprogram gets a prologue (its may_goto
 * budget's stack slots), and its first instruction is copied after it. A
 * pc-relative first instruction, a call or the address of a subprogram,
 * must still reach the subprogram it named, which the verifier checked:
 * without the patch a target before the subprogram is reached as many
 * instructions too far as the prologue is long. With stock's one-store
 * prologue that is no subprogram's start (a kernel WARNING and -EFAULT);
 * with the series' two stores, the next subprogram, which then runs
 * unchecked for that call.
 *
 * No probe can ask a kernel that lacks the patch without that WARNING, so
 * these tests run where the series is (its patch 1, may_goto +0, stands
 * for it) and skip on stock; GUEST_ENV='ARENAKIT_PROLOGUE_ANYWAY=1' runs
 * them there too, to show the bug (the VM then fails on the WARNING).
 */
#include <stdlib.h>
#include <linux/bpf.h>

#include "guest/guest.h"
#include "kernel_features.h"
#include "may_goto_prologue.skel.h"

#define INSN ARENAKIT_INSN
#define MOV0 ARENAKIT_MOV0
#define EXIT ARENAKIT_EXIT
#define MAY_GOTO ARENAKIT_MAY_GOTO
/* A call of the subprogram @rel + 1 instructions on. */
#define CALL_REL(rel) INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, rel)
#define MOV_IMM(reg, imm) INSN(BPF_ALU64 | BPF_MOV | BPF_K, reg, 0, 0, imm)
#define SUB_IMM(reg, imm) INSN(BPF_ALU64 | BPF_SUB | BPF_K, reg, 0, 0, imm)
#define JNE_IMM(reg, imm, off) INSN(BPF_JMP | BPF_JNE | BPF_K, reg, 0, off, imm)

/*
 * The loop that makes a subprogram's prologue: three passes of
 * "may_goto +2; r6 -= 1; if r6 != 0 goto -3", r0 kept.
 */
#define SHORT_LOOP MOV_IMM(BPF_REG_6, 3), MAY_GOTO(2), SUB_IMM(BPF_REG_6, 1), \
	JNE_IMM(BPF_REG_6, 0, -3)
#define SHORT_LOOP_INSNS 4

static void require_patch(void)
{
	if (!getenv("ARENAKIT_PROLOGUE_ANYWAY"))
		guest_require_feature(ARENAKIT_MAY_GOTO_ZERO, "kernel/patches/0003, with the series");
}

static unsigned int load_and_run(const char *name, const struct bpf_insn *insns, size_t count)
{
	require_patch();
	return guest_run_insns(name, insns, count, NULL);
}

/*
 * The program: the looping subprogram's first instruction calls
 * the earlier first_tiny (r0 = 0), which second_tiny (r0 = 42) follows;
 * 42 means second_tiny ran.
 */
Test(may_goto_prologue, a_first_call_back_reaches_its_own_target, .timeout = GUEST_TEST_TIMEOUT)
{
	const struct bpf_insn insns[] = {
		/* 0 main */ CALL_REL(3), CALL_REL(4), CALL_REL(5), EXIT,
		/* 4 first_tiny */ MOV0(0), EXIT,
		/* 6 second_tiny */ MOV0(42), EXIT,
		/* 8 looping */ CALL_REL(-5), SHORT_LOOP, EXIT,
	};
	unsigned int retval = load_and_run("prologue_back", insns, ARRAY_SIZE(insns));

	cr_expect_eq(retval, 0, "the looping subprogram's call went past first_tiny: %u",
		     retval);
}

/* A later target moves with the copy: it was right before, and stays so. */
Test(may_goto_prologue, a_first_call_forward_reaches_its_own_target,
     .timeout = GUEST_TEST_TIMEOUT)
{
	const struct bpf_insn insns[] = {
		/* 0 main */ CALL_REL(1), EXIT,
		/* 2 looping */ CALL_REL(SHORT_LOOP_INSNS + 1), SHORT_LOOP, EXIT,
		/* 8 tail_tiny */ MOV0(7), EXIT,
	};

	cr_expect_eq(load_and_run("prologue_fwd", insns, ARRAY_SIZE(insns)), 7);
}

/*
 * The BPF_PSEUDO_FUNC form (may_goto_prologue.bpf.c, C for the callbacks'
 * BTF): the looping subprogram's first instruction loads the address of
 * the earlier keep_going (returns 0: bpf_loop() goes on, 2 passes), which
 * stop (returns 1: 1 pass) follows two instructions on.
 */
Test(may_goto_prologue, a_first_callback_address_back_is_its_own,
     .timeout = GUEST_TEST_TIMEOUT)
{
	struct may_goto_prologue *skel;
	int retval;

	require_patch();
	skel = may_goto_prologue__open();
	cr_assert(skel);
	cr_assert_eq(arenakit_load_skeleton(skel->skeleton), 0);
	cr_assert_eq(ak_run(skel->progs.prologue_callback_back, NULL, 0, &retval), 0);
	cr_expect_eq(retval, 2, "bpf_loop() ran %d passes: another callback than the one loaded",
		     retval);
	may_goto_prologue__destroy(skel);
}
