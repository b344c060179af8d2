/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Between the explorer's scheduler (explore.c) and its emulated arena
 * (explore_arena.c), and no other file: the pages' states, which the
 * scheduler's fault handler reads and sets, and the reset between runs.
 */
#ifndef ARENAKIT_TESTS_EXPLORE_ARENA_H
#define ARENAKIT_TESTS_EXPLORE_ARENA_H

#define ARENA_PAGES 4096	/* 16 MiB of address space */
/* Never given, read as zero pages: room for a clamped link's node past the arena's end. */
#define ARENA_GUARD_PAGES 16
#define ARENA_ALL_PAGES (ARENA_PAGES + ARENA_GUARD_PAGES)

enum page_state { PAGE_UNUSED, PAGE_LIVE, PAGE_FREED };

extern char *arena_base;
extern unsigned char page_state[ARENA_ALL_PAGES];
/*
 * Pages mapped readable and writable now. A page an earlier schedule was
 * given stays so, zeroed at the reset, so that a schedule costs no system
 * call for the pages it is given (most schedules are given the same ones);
 * a page given back is unmapped at once, as before.
 */
extern unsigned char page_rw[ARENA_ALL_PAGES];
extern int checking;	/* the scenario's check runs: no thread is left */

/* A fresh arena and allocator, before each run. */
void arena_reset(void);

#endif
