// SPDX-License-Identifier: GPL-2.0
/*
 * A mistake tests/system/toolchain_system.c compiles: a 16-byte key in a
 * program that said its keys are at most 8 bytes (AK_HTAB_PROG_MAX_KEY,
 * unless -D gives another).
 */
#ifndef AK_HTAB_PROG_MAX_KEY
#define AK_HTAB_PROG_MAX_KEY 8
#endif
#include <arenakit/htab.h>

struct flow {
	__u64 addr;
	__u32 port;
	__u32 proto;
};

struct ak_htab __arena_global flows;

SEC("syscall")
int look_up_a_flow(void *ctx)
{
	struct flow key = { .addr = 1, .port = 2, .proto = 3 };
	int err;

	return ak_htab_lookup(&flows, &key, &err) ? 0 : err;
}

char _license[] SEC("license") = "GPL";
