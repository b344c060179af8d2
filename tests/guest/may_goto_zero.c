// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Kernel patch 1: the verifier takes "may_goto +0" as the nop it is and
 * drops it before the JIT. On a kernel without it (KERNEL=stock) these
 * tests skip, naming the feature.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>

#include "guest/guest.h"
#include "kernel_features.h"
#include "may_goto_zero.skel.h"

#define MOV0 ARENAKIT_MOV0
#define ADD0 ARENAKIT_ADD0
#define MAY_GOTO ARENAKIT_MAY_GOTO
#define JA ARENAKIT_JA
#define EXIT ARENAKIT_EXIT

static void require_may_goto_zero(void)
{
	guest_require_feature(ARENAKIT_MAY_GOTO_ZERO, "kernel/patches/0001");
}

/* The instructions the verifier left for the JIT. */
static unsigned int xlated_count(int fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	cr_assert_eq(bpf_prog_get_info_by_fd(fd, &info, &len), 0);
	return info.xlated_prog_len / sizeof(struct bpf_insn);
}

/* Load @insns (which must load) and run them: their fd; *@retval the result. */
static int load_and_run(const char *name, const struct bpf_insn *insns, size_t count,
			unsigned int *retval)
{
	int fd;

	require_may_goto_zero();
	*retval = guest_run_insns(name, insns, count, &fd);
	return fd;
}

Test(may_goto_zero, hand_assembled_loads_runs_and_is_dropped, .timeout = GUEST_TEST_TIMEOUT)
{
	/* r0 = 40; may_goto +0; r0 += 2; may_goto +0; exit */
	const struct bpf_insn insns[] = { MOV0(40), MAY_GOTO(0), ADD0(2), MAY_GOTO(0), EXIT };
	unsigned int retval;
	int fd = load_and_run("mg0_raw", insns, 5, &retval);

	cr_expect_eq(retval, 42);
	cr_expect_eq(xlated_count(fd), 3, "the may_goto +0s were not dropped before the JIT");
	close(fd);
}

/*
 * Dropping the +0 turns the +1 before it into a +0, and then the +2: each
 * is looked at again, and all three go.
 */
Test(may_goto_zero, jumps_that_become_plus_0_are_dropped_too, .timeout = GUEST_TEST_TIMEOUT)
{
	/* r0 = 40; may_goto +2; may_goto +1; may_goto +0; r0 += 2; exit */
	const struct bpf_insn insns[] = {
		MOV0(40), MAY_GOTO(2), MAY_GOTO(1), MAY_GOTO(0), ADD0(2), EXIT,
	};
	unsigned int retval;
	int fd = load_and_run("mg0_batch", insns, 6, &retval);

	cr_expect_eq(retval, 42);
	cr_expect_eq(xlated_count(fd), 3, "%u insns left: a may_goto that became +0 stayed",
		     xlated_count(fd));
	close(fd);
}

/* Nested in a real may_goto loop: still a nop, the loop still ends. */
Test(may_goto_zero, inside_a_bounded_loop, .timeout = GUEST_TEST_TIMEOUT)
{
	/* r0 = 0; loop: may_goto +3; may_goto +0; r0 += 1; goto loop; exit */
	const struct bpf_insn insns[] = {
		MOV0(0), MAY_GOTO(3), MAY_GOTO(0), ADD0(1), JA(-4), EXIT,
	};
	unsigned int retval;

	close(load_and_run("mg0_loop", insns, 6, &retval));
	cr_expect_gt(retval, 0, "the loop never ran");
}

/* A loop with only may_goto +0 is unbounded: still refused. */
Test(may_goto_zero, is_no_bound_on_its_own, .timeout = GUEST_TEST_TIMEOUT)
{
	/* r0 = 0; loop: may_goto +0; if r0 != 0 goto out; goto loop; out: exit */
	const struct bpf_insn insns[] = {
		MOV0(0), MAY_GOTO(0), ARENAKIT_INSN(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_0, 0, 1, 0),
		JA(-3), EXIT,
	};
	char log[65536];
	int fd;

	require_may_goto_zero();
	fd = arenakit_load_insns("mg0_endless", insns, 5, log, sizeof(log));
	cr_expect_lt(fd, 0, "an endless loop was taken");
	if (fd >= 0)
		close(fd);
	cr_expect(strstr(log, "infinite loop detected"), "the log says:\n%s", log);
}

/* What clang-19 makes of an unrolled loop around cond_break. */
Test(may_goto_zero, unrolled_c_loop_loads, .timeout = GUEST_TEST_TIMEOUT)
{
	struct may_goto_zero *skel;
	int retval;

	require_may_goto_zero();
	skel = may_goto_zero__open();
	cr_assert(skel);
	cr_assert_eq(arenakit_load_skeleton(skel->skeleton), 0);
	cr_assert_eq(ak_run(skel->progs.unrolled_cond_break, NULL, 0, &retval), 0);
	cr_expect_eq(retval, 10);
	may_goto_zero__destroy(skel);
}
