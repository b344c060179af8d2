// SPDX-License-Identifier: GPL-2.0
/*
 * The matcher behind `arenakit glob`, an example of ak_glob_match_batch():
 * each run matches the batch of lines user space wrote into the arena
 * against one group of up to AK_GLOB_MAX_PATTERNS patterns (layout and
 * limits in glob_cli.h). A run the loop budget stops returns -AK_EBUDGET
 * with next_line where the next run goes on, as the budget contract says
 * (include/arenakit/loop.h); user space reruns it with
 * ak_run_until_done() (<arenakit/user.h>).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "glob_cli.h"

AK_ARENA_MAP(arena, GLOB_CLI_ARENA_PAGES, 0);

struct glob_cli_arena __arena_global cli;

/* Set by user space before the first run of a group. */
unsigned int line_count, pattern_first, pattern_count, next_line;
/* Time spent in the matcher, over every run: --stats divides by it. */
__u64 elapsed_ns;

SEC("syscall")
int glob_lines(void *ctx)
{
	__u64 start = bpf_ktime_get_ns();
	int err;

	if (line_count > GLOB_CLI_LINES || pattern_count > AK_GLOB_MAX_PATTERNS ||
	    pattern_first > GLOB_CLI_PATTERNS - pattern_count)
		return -EINVAL;
	err = ak_glob_match_batch(cli.pattern + pattern_first, pattern_count, cli.line,
				  cli.line_len, line_count, cli.matched, cli.cut, &next_line);
	elapsed_ns += bpf_ktime_get_ns() - start;
	return err;	/* the library's code as it got it: 0 or -AK_EBUDGET */
}

char _license[] SEC("license") = "GPL";
