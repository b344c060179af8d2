// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* loop.h in user space: the bounds vanish, the code around them stays valid. */
#include <errno.h>
#include <criterion/criterion.h>
#include <arenakit/loop.h>

Test(loop_user, can_loop_is_always_true)
{
	int steps = 0;

	while (can_loop && steps < 1000)
		steps++;
	cr_expect_eq(steps, 1000);
}

Test(loop_user, cond_break_never_breaks)
{
	int steps;

	for (steps = 0; steps < 1000; steps++)
		cond_break;
	cr_expect_eq(steps, 1000);
}

Test(loop_user, cond_break_label_never_jumps)
{
	int steps;

	for (steps = 0; steps < 1000; steps++)
		cond_break_label(cut);
	cr_expect_eq(steps, 1000);
	return;
cut:
	cr_assert_fail("cond_break_label jumped in user space");
}

Test(loop_user, budget_error_is_eagain)
{
	cr_expect_eq(AK_EBUDGET, EAGAIN);
}
