// SPDX-License-Identifier: GPL-2.0
/*
 * A mistake tests/system/toolchain_system.c compiles: a pointer outside the
 * arena given to ak_free.
 */
#include <arenakit/alloc.h>

SEC("syscall")
int free_a_global(void *ctx)
{
	static int not_in_the_arena;

	return ak_free(&not_in_the_arena);
}

char _license[] SEC("license") = "GPL";
