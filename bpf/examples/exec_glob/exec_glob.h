/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What exec_glob.bpf.c and exec_glob.c share: the rules user space writes
 * into the arena, and what the tracing program counts there.
 */
#ifndef EXEC_GLOB_H
#define EXEC_GLOB_H

#define EXEC_GLOB_RULES 16		/* patterns at most */
#define EXEC_GLOB_PATTERN_MAX 64	/* bytes of each, its NUL included */
#define EXEC_GLOB_KEYS 1024		/* (executable, rule) pairs counted at most */
#define EXEC_GLOB_EXE_MAX 48		/* bytes of a base name kept, its NUL included */

/* The hash table's key: which rule matched which executable (by base name). */
struct exec_key {
	char exe[EXEC_GLOB_EXE_MAX];
	unsigned int rule;
	unsigned int unused;
};

/* In the arena: written by user space before attaching, then by BPF. */
struct exec_glob {
	unsigned int nrules;
	char pattern[EXEC_GLOB_RULES][EXEC_GLOB_PATTERN_MAX];
	unsigned long long hits[EXEC_GLOB_RULES];	/* execs each rule matched */
	unsigned long long execs;			/* execs seen */
	unsigned long long cut;				/* matches the loop budget cut */
	unsigned long long dropped;			/* hits the table could not count */
	unsigned long long too_long;			/* file names a subject cannot hold */
};

#endif
