/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What exec_glob.bpf.c and exec_glob.c share: what the tracing program
 * counts in the arena.
 */
#ifndef EXEC_GLOB_H
#define EXEC_GLOB_H

#define EXEC_GLOB_RULES 16		/* patterns at most */
#define EXEC_GLOB_KEYS 1024		/* (executable, rule) pairs counted at most */
#define EXEC_GLOB_EXE_MAX 48		/* bytes of a base name kept, its NUL included */

/* The hash table's key: which rule matched which executable (by base name). */
struct exec_key {
	char exe[EXEC_GLOB_EXE_MAX];
	unsigned int rule;
	unsigned int unused;
};

/* In the arena: what the tracing program counted (the rules are a rule set). */
struct exec_glob {
	unsigned long long hits[EXEC_GLOB_RULES];	/* execs each rule matched, by id */
	unsigned long long execs;			/* execs seen */
	unsigned long long cut;				/* matches the loop budget cut */
	unsigned long long dropped;			/* hits the table could not count */
	unsigned long long too_long;			/* file names a subject cannot hold */
};

#endif
