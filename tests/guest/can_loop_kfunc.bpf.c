// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel patch 8 (the bpf_can_loop() kfunc): loops bounded by a call
 * instead of the may_goto instruction, from the same per-frame budget.
 * tests/guest/can_loop_kfunc.c loads each program alone; the reject_* ones must
 * be refused, the others run and return what the comment says.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <arenakit/loop.h>	/* ak_opaque_zero() only: these loops use the kfunc */

extern long bpf_can_loop(void *ptr__ign) __ksym;

int values[16];
__u64 steps;

/* A loop its own condition ends: 0 + 1 + ... + 999 = 499500. */
SEC("syscall")
int bounded(void *ctx)
{
	int i, sum = 0;

	for (i = ak_opaque_zero(); i < 1000 && bpf_can_loop(0); i++)
		sum += i;
	return sum;
}

/* A loop only bpf_can_loop() ends: it does end, after many steps. */
SEC("syscall")
int unbounded(void *ctx)
{
	__u64 n = ak_opaque_zero();

	while (bpf_can_loop(0))
		n++;
	steps = n;
	return n > 1000;
}

/* Nested loops share the frame's budget: 20 x 50 = 1000. */
SEC("syscall")
int nested(void *ctx)
{
	int i, j, n = 0;

	for (i = ak_opaque_zero(); i < 20 && bpf_can_loop(0); i++)
		for (j = ak_opaque_zero(); j < 50 && bpf_can_loop(0); j++)
			n++;
	return n;
}

/* A function of its own has a budget of its own: 10 calls x 100 = 1000. */
static __noinline int count_to(int limit)
{
	int i, n = 0;

	for (i = ak_opaque_zero(); i < limit && bpf_can_loop(0); i++)
		n++;
	return n;
}

SEC("syscall")
int in_subprog(void *ctx)
{
	int i, n = 0;

	for (i = ak_opaque_zero(); i < 10 && bpf_can_loop(0); i++)
		n += count_to(100);
	return n;
}

/* The loop body is verified: an index the loop lets grow is refused. */
SEC("syscall")
int reject_unchecked_index(void *ctx)
{
	__u32 i = 0;	/* precise: only exploring the loop makes it unbounded */

	while (bpf_can_loop(0))
		i++;
	return values[i];	/* i is unbounded here */
}

/*
 * A callee that spends its whole budget leaves its caller's untouched: the
 * caller's loop after the call must still be verified, so its unchecked
 * index is refused too.
 */
static __noinline int spend_budget(void)
{
	int n = ak_opaque_zero();

	while (bpf_can_loop(0))
		n++;
	return n;
}

SEC("syscall")
int reject_after_callee_drained(void *ctx)
{
	int sum = spend_budget();
	__u32 i = 0;	/* precise: only exploring the loop makes it unbounded */

	while (bpf_can_loop(0)) {
		sum += values[i];	/* i is unbounded here */
		i++;
	}
	return sum;
}

char _license[] SEC("license") = "GPL";
