/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the allocator's guest tests free with (tests/guest/alloc*.bpf.c):
 * ak_free, again while it says -EBUSY, each such free counted in the
 * includer's busy_frees.
 */
#ifndef ARENAKIT_TESTS_GUEST_ALLOC_RETRY_H
#define ARENAKIT_TESTS_GUEST_ALLOC_RETRY_H

/*
 * -EBUSY leaves the object allocated: the caller frees it again. A global
 * function, so the verifier checks its loop once, not inside every caller's.
 */
__weak __noinline int free_retrying(void __arena *obj __arg_arena)
{
	int err = -EBUSY, tries;

	for (tries = ak_opaque_zero(); tries < 16 && err == -EBUSY && can_loop; tries++) {
		err = ak_free(obj);
		if (err == -EBUSY)
			__sync_fetch_and_add(&busy_frees, 1);
	}
	return err;
}

#endif
