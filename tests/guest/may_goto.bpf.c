// SPDX-License-Identifier: GPL-2.0
/*
 * The may_goto selftests of the cond_break series (Linux 6.9), as arenakit
 * guest tests. Each computes what the original returned and compares it with
 * the value the series states; the test passes (returns 0) only on a match,
 * and leaves what it computed in `computed` for the runner's message.
 *
 * They prove that the kernel accepts may_goto loops it cannot bound, that
 * they run to completion when the budget suffices, that a loop with no other
 * exit is cut, and that the verifier prunes loop states whose ranges lie
 * within ones already verified (range_within).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <arenakit/loop.h>
#include "guest/bpf_test.h"

#define ARRAY_LEN 1000000

char array[ARRAY_LEN];
unsigned int computed;

/* 0 if @value is @want; otherwise the line, with what was computed reported. */
#define expect(value, want)						\
	({								\
		unsigned int ___got = (value), ___want = (want);	\
									\
		computed = ___got;					\
		___got == ___want ? 0 :					\
			test_fail("%s: %u, not %u", #value, ___got, ___want); \
	})

/* Two million iterations: a can_loop condition, then cond_break in a body. */
SEC("syscall")
int test_cond_break1(void *ctx)
{
	unsigned long i;
	unsigned int sum = 0;

	for (i = ak_opaque_zero(); i < ARRAY_LEN && can_loop; i++)
		sum += i;
	for (i = ak_opaque_zero(); i < ARRAY_LEN; i++) {
		ak_barrier_var(i);
		sum += i + array[i];
		cond_break;
	}
	return expect(sum, 0xd495cdc0);
}

/* Nested loops share the frame's budget; a million steps fit. */
SEC("syscall")
int test_cond_break2(void *ctx)
{
	int i, j, sum = 0;

	for (i = ak_opaque_zero(); i < 1000 && can_loop; i++)
		for (j = ak_opaque_zero(); j < 1000; j++) {
			sum += i + j;
			cond_break;
		}
	return expect(sum, 999000000);
}

static __noinline int sum_to_a_million(void)
{
	int i, sum = 0;

	for (i = ak_opaque_zero(); i <= 1000000 && can_loop; i++)
		sum += i;
	return sum;
}

/* A loop in a static subprogram gets the subprogram's own budget. */
SEC("syscall")
int test_cond_break3(void *ctx)
{
	return expect(sum_to_a_million(), 0x6a5a2920);
}

/* A loop with no exit but the budget ends, after looping for a while. */
SEC("syscall")
int test_cond_break4(void *ctx)
{
	int count = ak_opaque_zero();

	for (;;) {
		cond_break;
		count++;
	}
	return expect(count > 1, 1);
}

static __noinline int loop_until_cut(void)
{
	int count = ak_opaque_zero();

	for (;;) {
		cond_break;
		count++;
	}
	return count;
}

/* The main program and a subprogram are each cut, both after looping. */
SEC("syscall")
int test_cond_break5(void *ctx)
{
	int main_count = ak_opaque_zero(), sub_count;

	for (;;) {
		cond_break;
		main_count++;
	}
	sub_count = loop_until_cut();
	return expect(main_count > 1 && sub_count > 1, 1);
}

/* cond_break_label: the cut is observable, and comes after the whole
 * budget: 8,388,608 steps on stock 6.12. */
SEC("syscall")
int test_cond_break_label(void *ctx)
{
	unsigned int count = ak_opaque_zero();

	for (;;) {
		cond_break_label(spent);
		count++;
	}
	return test_fail("unreachable: the loop has no other exit");
spent:
	computed = count;
	test_expect(count > 1000000);
	return 0;
}

char _license[] SEC("license") = "GPL";
