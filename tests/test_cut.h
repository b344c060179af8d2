/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A loop budget a test sets (loop.h's AK_TEST_CUT): include this before
 * the first arenakit header, and set checks_left before a walk to the
 * budget checks it may pass; the next one cuts it, and so does every later
 * one, as a spent budget does. -1: nothing is cut. The same in BPF (any
 * kernel: a may_goto's count or clock cannot be set this finely) and in
 * user space, where the budget never runs out.
 */
#ifndef ARENAKIT_TESTS_TEST_CUT_H
#define ARENAKIT_TESTS_TEST_CUT_H

static long long checks_left = -1;

static inline __attribute__((always_inline)) int test_cut(void)
{
	if (checks_left < 0)
		return 0;
	if (!checks_left)
		return 1;
	checks_left--;
	return 0;
}

#define AK_TEST_CUT() test_cut()

#endif
