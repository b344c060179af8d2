/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What tests/guest/lock.bpf.c and its driver share. */
#ifndef ARENAKIT_TESTS_GUEST_LOCK_H
#define ARENAKIT_TESTS_GUEST_LOCK_H

/* One CPU's run of lock_count (ctx_in, copied back). */
struct lock_args {
	unsigned int rounds;
	unsigned int busy;	/* -EBUSY answers, each tried again */
	int err;		/* an acquire that failed for good */
};

#endif
