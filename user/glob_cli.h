/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The arena layout `arenakit glob` shares between its BPF matcher
 * (user/glob_cli.bpf.c) and user space (user/glob_cli_match.c): one struct at
 * the arena's start, so both sides agree on every offset, and the limits
 * --help states.
 *
 * User space writes a window of patterns and a batch of lines, each line
 * NUL-terminated (for fnmatch(3)) and with its length (so the matcher sees
 * bytes after a NUL), and pointers to them: user addresses, which are arena
 * pointers. A run matches line[0..line_count) against the group
 * pattern[pattern_first..+pattern_count) of at most AK_GLOB_MAX_PATTERNS
 * and writes, per line, a mask of the patterns it matched and a mask of
 * those the loop budget cut.
 */
#ifndef ARENAKIT_GLOB_CLI_H
#define ARENAKIT_GLOB_CLI_H

#include <arenakit/glob.h>

#define GLOB_CLI_LINE_MAX	65536		/* bytes in a line, newline excluded */
#define GLOB_CLI_PATTERN_MAX	4096		/* bytes in a pattern */
#define GLOB_CLI_LINES		16384		/* lines in a batch */
#define GLOB_CLI_TEXT		(1024 * 1024)	/* bytes of line text in a batch */
#define GLOB_CLI_PATTERNS	1024		/* patterns in the arena at once */
#define GLOB_CLI_PATTERN_TEXT	(256 * 1024)	/* bytes of pattern text in it */
#define GLOB_CLI_ARENA_PAGES	512

struct glob_cli_arena {
	/*
	 * Nothing is handed out at offset 0: the arena may start on a 4 GiB
	 * boundary, where an address's low 32 bits are 0 and BPF sees NULL.
	 */
	unsigned long long guard;
	const char __arena *pattern[GLOB_CLI_PATTERNS];
	const char __arena *line[GLOB_CLI_LINES];
	unsigned int line_len[GLOB_CLI_LINES];
	unsigned int matched[GLOB_CLI_LINES];
	unsigned int cut[GLOB_CLI_LINES];
	char pattern_text[GLOB_CLI_PATTERN_TEXT];
	char text[GLOB_CLI_TEXT];
};

_Static_assert(sizeof(struct glob_cli_arena) <= GLOB_CLI_ARENA_PAGES * AK_PAGE_SIZE,
	       "the layout outgrew the arena");
_Static_assert(GLOB_CLI_TEXT >= GLOB_CLI_LINE_MAX + 1, "a batch must hold a longest line");
_Static_assert(GLOB_CLI_PATTERN_TEXT >= AK_GLOB_MAX_PATTERNS * (GLOB_CLI_PATTERN_MAX + 1) &&
	       GLOB_CLI_PATTERNS >= AK_GLOB_MAX_PATTERNS,
	       "the arena must hold a whole group of longest patterns");

#endif /* ARENAKIT_GLOB_CLI_H */
