// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF side of `arenakit stress` glob-worst (user/stress_glob_worst.c):
 * the glob matcher on a pattern and a string user space writes into the
 * arena.
 */
#include "stress.h"
#include <arenakit/glob.h>

/* The pattern and the string, and as much again to spare. */
AK_ARENA_MAP(arena, 4 * STRESS_GLOB_BYTES / AK_PAGE_SIZE, 0);

char __arena_global glob_pattern[STRESS_GLOB_BYTES];
char __arena_global glob_string[STRESS_GLOB_BYTES];
__u64 glob_len;
int glob_result;

SEC("syscall")
int glob_one(void *ctx)
{
	glob_result = ak_glob_match_len(glob_pattern, glob_string,
					 glob_len < STRESS_GLOB_BYTES ? glob_len : 0);
	return 0;
}

char _license[] SEC("license") = "GPL";
