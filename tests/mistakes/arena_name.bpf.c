// SPDX-License-Identifier: GPL-2.0
/*
 * A mistake tests/system/toolchain_system.c builds: the program declares its arena
 * under its own name, and includes alloc.h without
 * `#define AK_ALLOC_MAP events_arena` first, so alloc.h declares a second
 * arena (`arena`) for the allocator. libbpf refuses the object when it
 * opens it (bpftool gen skeleton already).
 */
#include <arenakit/arena.h>

AK_ARENA_MAP(events_arena, 1024, 0);

#include <arenakit/alloc.h>

SEC("syscall")
int alloc_beside_another_arena(void *ctx)
{
	return ak_alloc(64, NULL) ? 0 : 1;
}

char _license[] SEC("license") = "GPL";
