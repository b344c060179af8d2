// SPDX-License-Identifier: GPL-2.0
/*
 * The matcher behind `arenakit glob`: user space writes up to
 * GLOB_CLI_STRINGS strings and GLOB_CLI_PATTERNS patterns into the arena;
 * each run matches every string against every pattern and writes, per
 * string, a bit mask of the patterns it matched and one of the patterns the
 * loop budget cut. A run the budget stops leaves next_string where the next
 * run goes on.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <arenakit/glob.h>

#define GLOB_CLI_STRINGS 16384
#define GLOB_CLI_PATTERNS 32
#define GLOB_CLI_TEXT (1024 * 1024)

ARENA_MAP(arena, 2048, 0);

char __arena_global cli_text[GLOB_CLI_TEXT];
unsigned int __arena_global cli_string_at[GLOB_CLI_STRINGS];
unsigned int __arena_global cli_string_len[GLOB_CLI_STRINGS];
unsigned int __arena_global cli_pattern_at[GLOB_CLI_PATTERNS];
unsigned int __arena_global cli_matched[GLOB_CLI_STRINGS];
unsigned int __arena_global cli_cut[GLOB_CLI_STRINGS];

unsigned int string_count, pattern_count, next_string;
unsigned int zero;
__u64 elapsed_ns;

/* Verified once, on its own; each call gets a fresh loop budget. */
__noinline int cli_match(const char __arena *pat __arg_arena, const char __arena *str __arg_arena,
			 unsigned long long len)
{
	return arena_glob_match_len(pat, str, len);
}

SEC("syscall")
int glob_strings(void *ctx)
{
	unsigned int i = next_string + zero, j, slot, matched, cut;
	__u64 start = bpf_ktime_get_ns();
	int result;

	while (i < string_count) {
		if (!can_loop)
			goto stop;
		slot = i % GLOB_CLI_STRINGS;
		matched = 0;
		cut = 0;
		for (j = zero; j < pattern_count; j++) {
			if (!can_loop)
				goto stop;
			result = cli_match(cli_text + cli_pattern_at[j % GLOB_CLI_PATTERNS] % GLOB_CLI_TEXT,
					   cli_text + cli_string_at[slot] % GLOB_CLI_TEXT,
					   cli_string_len[slot]);
			if (result == 1)
				matched |= 1u << (j & 31);
			else if (result < 0)
				cut |= 1u << (j & 31);
		}
		cli_matched[slot] = matched;
		cli_cut[slot] = cut;
		i++;
	}
	next_string = i;
	elapsed_ns += bpf_ktime_get_ns() - start;
	return 0;
stop:
	next_string = i;
	elapsed_ns += bpf_ktime_get_ns() - start;
	return ARENA_EBUDGET;
}

char _license[] SEC("license") = "GPL";
