// SPDX-License-Identifier: GPL-2.0
/*
 * Probes for `arenakit info`: how many may_goto steps one stack frame gets
 * before the kernel cuts its loops, in the main program and in a called
 * (non-inlined) function, which starts with a budget of its own.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <arenakit/loop.h>

__u64 main_steps;
__u64 subprog_steps;

static __noinline __u64 steps_until_cut(void)
{
	__u64 steps = ak_opaque_zero();

	for (;;) {
		cond_break;
		steps++;
	}
	return steps;
}

SEC("syscall")
int measure_budget(void *ctx)
{
	__u64 steps = ak_opaque_zero();

	for (;;) {
		cond_break;
		steps++;
	}
	main_steps = steps;
	subprog_steps = steps_until_cut();
	return 0;
}

char _license[] SEC("license") = "GPL";
