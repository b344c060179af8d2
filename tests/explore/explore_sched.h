/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the explorer's scheduler (explore.c) and its weak mode
 * (explore_weak.c) give each other. Internal to the explorer.
 */
#ifndef ARENAKIT_TESTS_EXPLORE_SCHED_H
#define ARENAKIT_TESTS_EXPLORE_SCHED_H

#include "explore/explore.h"

/* The scheduler's side. */
extern int explore_self_id;	/* the running thread's id; -1: setup and check */
const struct explore_scenario *explore_running(void);
/* Which of @count values a weak load returns: a decision, 0 the newest. */
int explore_decide_value(int count);
/* Whether this schedule may read one more older value (its weak bound). */
int explore_stale_allowed(void);

/* The weak mode's side. */
void explore_weak_reset(void);		/* before each run */
void explore_weak_begin(void);		/* at the threads' start */
void explore_weak_object_taken(void *obj, unsigned long long room);

#endif
