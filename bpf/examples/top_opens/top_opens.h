/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What top_opens.bpf.c and top_opens.c share: the table's key and what the
 * tracing program counts. The exclude rules are an arenakit rule set.
 */
#ifndef TOP_OPENS_H
#define TOP_OPENS_H

#define TOP_OPENS_COMM 16		/* the kernel's TASK_COMM_LEN */
#define TOP_OPENS_PATH 240		/* bytes of a path kept, its NUL included */
#define TOP_OPENS_MAX_KEYS 4096		/* (command, path) pairs held; the least used go */

/* A (command, path) pair: 256 bytes, whole words, 8-byte aligned (htab.h). */
struct top_key {
	char comm[TOP_OPENS_COMM];
	char path[TOP_OPENS_PATH];	/* zero-padded */
} __attribute__((aligned(8)));

/* In the arena: what the tracing program saw. */
struct top_stats {
	unsigned long long opens;	/* open and openat calls seen */
	unsigned long long counted;	/* counted in the table */
	unsigned long long excluded;	/* matched an exclude rule */
	unsigned long long too_long;	/* paths over TOP_OPENS_PATH - 1 bytes */
	unsigned long long unreadable;	/* paths not in memory (no fault in a tracepoint) */
	unsigned long long lost;	/* a rule walk cut, or the table refused */
	int lost_err;			/* why, the last time */
};

#endif
