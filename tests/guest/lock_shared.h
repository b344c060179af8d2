/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What tests/guest/lock.bpf.c and its driver share. */
#ifndef ARENAKIT_TESTS_GUEST_LOCK_SHARED_H
#define ARENAKIT_TESTS_GUEST_LOCK_SHARED_H

/*
 * One CPU's share of lock_count (ctx_in, copied back, and passed in again
 * when a run returned -AK_EBUDGET to be run again).
 */
struct lock_args {
	unsigned int rounds;
	unsigned int done;	/* rounds complete */
	unsigned int step;	/* 1: this round's ak_lock update is made */
	unsigned int runs;
	unsigned int busy;	/* -EBUSY answers, each tried again */
	int err;		/* an acquire that failed for good */
};

#endif
