// SPDX-License-Identifier: GPL-2.0
/*
 * Loops the verifier must refuse: without may_goto (or another bound it
 * understands) it cannot prove they end. tests/guest/verifier.c loads each
 * program alone and checks that the load fails and the log says why.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

volatile int stop;	/* user space could set it; the verifier cannot know */
int limit;

/* Waits on a flag: every iteration looks the same to the verifier. */
SEC("syscall")
int reject_infinite_loop(void *ctx)
{
	int spins = 0;

	while (!stop)
		spins++;
	return spins;
}

/* Counts to a bound the verifier does not know: it walks every iteration
 * until its complexity limit. */
SEC("syscall")
int reject_unknown_bound(void *ctx)
{
	unsigned int i, sum = 0;

	for (i = 0; i < (unsigned int)limit; i++)
		sum += i * i;
	return sum;
}

char _license[] SEC("license") = "GPL";
