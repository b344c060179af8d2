// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF side of <arenakit/user.h>'s test (tests/guest/user_header.c):
 * the allocation program user space calls through ak_arena_strdup(), a
 * program that matches two arena strings user space put there, one that
 * frees them, and one that is cut a set number of times before it is done
 * (ak_run_until_done).
 */
#include <arenakit/alloc.h>
#include <arenakit/glob.h>

AK_ALLOC_PROGRAM(arena_alloc)

/* Set by user space: addresses in the arena, as ak_arena_strdup gave them. */
unsigned long long pattern_addr, string_addr;
/* In the arena: a program that casts arena pointers must use the arena map. */
int __arena_global match;

SEC("syscall")
int match_strings(void *ctx)
{
	match = ak_glob_match_len((const char __arena *)pattern_addr,
				  (const char __arena *)string_addr, AK_GLOB_NUL_TERMINATED);
	return 0;
}

SEC("syscall")
int free_strings(void *ctx)
{
	int err = ak_free((void __arena *)pattern_addr);

	return err ?: ak_free((void __arena *)string_addr);
}

/* Cut cuts_left times (-AK_EBUDGET), then done: 0. */
unsigned int cuts_left;

SEC("syscall")
int cut_then_done(void *ctx)
{
	if (cuts_left) {
		cuts_left--;
		return -AK_EBUDGET;
	}
	return 0;
}

char _license[] SEC("license") = "GPL";
