// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel patches 5 to 7 (may_goto bounded by time): loops that only
 * may_goto ends, timed from inside the program; tests/guest/timed_may_goto.c
 * runs them.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <arenakit/loop.h>

__u64 steps, elapsed_ns;
__u64 target;			/* counted(): iterations wanted */
__u64 level_steps[4];		/* nested(): per depth, 1..3 */
__u64 level_ns[4];		/* time in the frame, callees included */

SEC("syscall")
int endless(void *ctx)
{
	__u64 start = bpf_ktime_get_ns(), n = ak_opaque_zero();

	for (;;) {
		cond_break;
		n++;
	}
	elapsed_ns = bpf_ktime_get_ns() - start;
	steps = n;
	return 0;
}

SEC("syscall")
int counted(void *ctx)
{
	__u64 start = bpf_ktime_get_ns(), n;

	for (n = ak_opaque_zero(); n < target && can_loop; n++)
		ak_barrier_var(n);
	elapsed_ns = bpf_ktime_get_ns() - start;
	steps = n;
	return 0;
}

/*
 * Three frames deep: each level starts the next one once, then loops until
 * its own frame's budget ends it. Not inlined, so each is a frame.
 */
#define LEVEL(depth, call_next)						\
	static __noinline int level##depth(void)			\
	{								\
		__u64 start = bpf_ktime_get_ns(), n = ak_opaque_zero();		\
									\
		call_next;						\
		for (;;) {						\
			cond_break;					\
			n++;						\
		}							\
		level_steps[depth] = n;					\
		level_ns[depth] = bpf_ktime_get_ns() - start;		\
		return 0;						\
	}

LEVEL(3, (void)0)
LEVEL(2, level3())
LEVEL(1, level2())

SEC("syscall")
int nested(void *ctx)
{
	return level1();
}

__u64 step_ns;			/* slow_steps(): each step waits this long */

/* Its own frame, so that its loop is not steps of its caller's. */
static __noinline int busy_wait(__u64 ns)
{
	__u64 until = bpf_ktime_get_ns() + ns;

	while (bpf_ktime_get_ns() < until && can_loop)
		;
	return 0;
}

__u64 longest_step_ns;		/* slow_steps(): the longest step, in wall time */

/*
 * A loop whose every step costs step_ns: the budget must hold all the same.
 * A step the host stalled lasts longer, and the bound allows for the
 * longest step: it is kept.
 */
SEC("syscall")
int slow_steps(void *ctx)
{
	__u64 start = bpf_ktime_get_ns(), n = ak_opaque_zero(), longest = 0, t, d;

	for (;;) {
		cond_break;
		t = bpf_ktime_get_ns();
		busy_wait(step_ns);
		d = bpf_ktime_get_ns() - t;
		longest = d > longest ? d : longest;
		n++;
	}
	elapsed_ns = bpf_ktime_get_ns() - start;
	longest_step_ns = longest;
	steps = n;
	return 0;
}

__u64 stall_ns;		/* stalled(): these steps wait this long */
__u64 stall_at[3] = { ~0ULL, ~0ULL, ~0ULL };

/*
 * A loop of cheap steps, some of which (the steps in stall_at, among the
 * ones the first checks time) stall for stall_ns, as a preempted or
 * faulting step would: the frame must not take every step for that slow.
 */
SEC("syscall")
int stalled(void *ctx)
{
	__u64 start = bpf_ktime_get_ns(), n;

	for (n = ak_opaque_zero(); n < target && can_loop; n++)
		if (n == stall_at[0] || n == stall_at[1] || n == stall_at[2])
			busy_wait(stall_ns);
	elapsed_ns = bpf_ktime_get_ns() - start;
	steps = n;
	return 0;
}

char _license[] SEC("license") = "GPL";
