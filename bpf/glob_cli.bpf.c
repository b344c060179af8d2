// SPDX-License-Identifier: GPL-2.0
/*
 * The matcher behind `arenakit glob`, an example of arena_glob_match_batch:
 * user space writes up to GLOB_CLI_STRINGS strings and GLOB_CLI_PATTERNS
 * patterns into the arena, with pointers to them (user addresses are arena
 * pointers); each run matches every string against every pattern and writes,
 * per string, a bit mask of the patterns it matched and one of the patterns
 * the loop budget cut. A run the budget stops leaves next_string where the
 * next run goes on.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <arenakit/glob.h>

#define GLOB_CLI_STRINGS 16384
#define GLOB_CLI_PATTERNS 32
#define GLOB_CLI_TEXT (1024 * 1024)

ARENA_MAP(arena, 2048, 0);

char __arena_global cli_text[GLOB_CLI_TEXT];
const char __arena *__arena_global cli_pattern[GLOB_CLI_PATTERNS];
const char __arena *__arena_global cli_string[GLOB_CLI_STRINGS];
unsigned int __arena_global cli_string_len[GLOB_CLI_STRINGS];
unsigned int __arena_global cli_matched[GLOB_CLI_STRINGS];
unsigned int __arena_global cli_cut[GLOB_CLI_STRINGS];

unsigned int string_count, pattern_count, next_string;
__u64 elapsed_ns;

SEC("syscall")
int glob_strings(void *ctx)
{
	__u64 start = bpf_ktime_get_ns();
	int err;

	err = arena_glob_match_batch(cli_pattern, pattern_count, cli_string, cli_string_len,
				     string_count, cli_matched, cli_cut, &next_string);
	elapsed_ns += bpf_ktime_get_ns() - start;
	return -err;	/* 0, or ARENA_EBUDGET: run again */
}

char _license[] SEC("license") = "GPL";
