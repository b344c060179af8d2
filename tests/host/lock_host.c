// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* lock.h built for user space: the bounded spin lock and the bit lock in a word. */
#include <errno.h>
#include <criterion/criterion.h>

#include <arenakit/lock.h>

Test(lock_host, lock_gives_up_after_its_spins)
{
	struct ak_lock lock = { 0 };

	cr_expect_eq(ak_lock_acquire(&lock), 0);
	cr_expect(ak_lock_is_locked(&lock));
	cr_expect_eq(ak_lock_acquire(&lock), -EBUSY);
	ak_lock_release(&lock);
	cr_expect_not(ak_lock_is_locked(&lock));
	cr_expect_eq(ak_lock_acquire(&lock), 0);
}

Test(lock_host, bit_lock_keeps_the_other_bits)
{
	unsigned long long word = 0x1000;

	cr_expect_eq(ak_bit_lock_acquire(&word), 0);
	cr_expect_eq(word, 0x1001);
	cr_expect_eq(ak_bit_lock_acquire(&word), -EBUSY);
	word = 0x2000 | AK_BIT_LOCK;	/* the holder stores, keeping the bit */
	ak_bit_lock_release(&word);
	cr_expect_eq(word, 0x2000);
}
