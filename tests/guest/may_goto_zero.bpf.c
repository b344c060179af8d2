// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel patch 1 (may_goto +0): clang-19 fully unrolls a small constant
 * loop around cond_break, and where a cut would land on the next
 * instruction anyway it emits "may_goto +0", which stock 6.12 refuses
 * ("invalid may_goto off 0"). This object holds such code on purpose: the
 * host test bpf_objects checks that it does and that no other object does.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <arenakit/loop.h>

int total;

SEC("syscall")
int unrolled_cond_break(void *ctx)
{
	int i;

#pragma clang loop unroll(full)
	for (i = 1; i <= 4; i++) {
		total += i;
		cond_break;	/* the last one's cut and fall-through meet */
	}
	return total;	/* 10 on a fresh load */
}

char _license[] SEC("license") = "GPL";
