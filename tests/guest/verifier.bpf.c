// SPDX-License-Identifier: GPL-2.0
/*
 * Loops the verifier must refuse: without may_goto (or another bound it
 * understands) it cannot prove they end. tests/guest/verifier.c loads each
 * program alone and checks that the load fails and the log says why.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

volatile int stop;	/* user space could set it; the verifier cannot know */

/*
 * Waits on a flag: every pass through the loop leaves the verifier in the
 * same state, so it can prove nothing ends the loop and refuses it.
 */
SEC("syscall")
int reject_infinite_loop(void *ctx)
{
	for (;;)
		if (stop)
			break;
	return 0;
}

char _license[] SEC("license") = "GPL";
