/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What bench/walk.bpf.c and its driver bench/walk.c share: the list entry
 * both walk, and the cases the program times.
 */
#ifndef ARENAKIT_BENCH_WALK_H
#define ARENAKIT_BENCH_WALK_H

#include <arenakit/list.h>

struct walk_item {
	struct ak_list_node node;
	unsigned long long key;
};

/* Empty loops: ns per iteration of a loop bounded by each mechanism. */
enum loop_case {
	LOOP_MAY_GOTO,		/* hand-written may_goto, the floor */
	LOOP_COND_BREAK,
	LOOP_CAN_LOOP,
	LOOP_BPF_FOR,		/* bpf_iter_num: open-coded iterator */
	LOOP_BPF_LOOP,		/* bpf_loop() helper and a callback */
	LOOP_CAN_LOOP_KFUNC,	/* bpf_can_loop(), kernel patch 8 */
	LOOP_IN_FRAMES,		/* can_loop, a new frame every LOOP_FRAME iterations */
	LOOP_FRAMES_NO_CHECK,	/* frames of LOOP_FIRST_CHECK steps: no time check */
	LOOP_FRAMES_ONE_CHECK,	/* one step more: the first check of each frame */
	LOOP_FRAMES_TWO_CHECKS,	/* and LOOP_PROBE more: a second, measuring check */
	LOOP_CASES
};

#define LOOP_FRAME 60000
/* The patched kernel's BPF_TIMED_LOOPS_FIRST and BPF_TIMED_LOOPS_PROBE. */
#define LOOP_FIRST_CHECK 256
#define LOOP_PROBE 16

/* List walks: ns per node of a whole walk. */
enum walk_case {
	WALK_CAN_LOOP,		/* while (pos != head && can_loop) */
	WALK_COND_BREAK,
	WALK_BPF_FOR,
	WALK_BPF_LOOP,
	WALK_CAN_LOOP_KFUNC,
	WALK_LIB_COUNT,		/* ak_list_count */
	WALK_LIB_FIND,		/* ak_list_find of a key no entry has */
	WALK_LIB_FOR_EACH,	/* ak_list_for_each_entry_resume */
	WALK_BARE_FIND,		/* the bare walk comparing each key, as find does */
	WALK_LIB_CHECK,		/* ak_list_check */
	WALK_CASES
};

#endif
