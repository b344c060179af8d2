// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Loops without a bound the verifier understands are refused, and the log
 * says why. This is what may_goto exists to lift.
 */
#include "guest/guest.h"
#include "verifier.skel.h"

Test(verifier, rejects_loop_waiting_on_a_flag, .timeout = GUEST_TEST_TIMEOUT)
{
	size_t size;
	const void *elf = verifier__elf_bytes(&size);

	guest_expect_rejected(elf, size, "reject_infinite_loop", "infinite loop detected");
}
