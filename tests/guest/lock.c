// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * lock.h's two locks on every CPU of the VM at once: no update made under
 * them is lost, and the same updates made without them are.
 */
#include <stdio.h>
#include <unistd.h>

#include "guest/guest.h"
#include <arenakit/lock.h>
#include "guest/lock_shared.h"
#include "lock.skel.h"

Test(lock, no_update_is_lost_on_every_cpu, .timeout = 300)
{
	enum { ROUNDS = 100000 };
	struct lock *skel = lock__open();
	int cpus = sysconf(_SC_NPROCESSORS_ONLN), i, errs[8];
	unsigned long long total, busy = 0, runs = 0;
	struct lock_args t[8];

	cr_assert(skel);
	cr_assert_eq(arenakit_load_skeleton(skel->skeleton), 0);
	cr_assert_geq(cpus, 2);
	if (cpus > 8)
		cpus = 8;
	for (i = 0; i < cpus; i++)
		t[i] = (struct lock_args){ .rounds = ROUNDS };
	guest_run_on_cpus(skel->progs.lock_count, cpus, t, sizeof(t[0]), errs);
	for (i = 0; i < cpus; i++) {
		cr_expect(!errs[i] && !t[i].err, "CPU %d: %d, lock: %d", i, errs[i], t[i].err);
		cr_expect_eq(t[i].done, ROUNDS, "CPU %d: %u rounds", i, t[i].done);
		busy += t[i].busy;
		runs += t[i].runs;
	}
	total = (unsigned long long)cpus * ROUNDS;
	cr_expect_eq(skel->arena->counter, total, "ak_lock: %llu of %llu",
		     skel->arena->counter, total);
	cr_expect_eq(skel->arena->bit_word, 2 * total, "bit lock: %llu of %llu (lock bit %llu)",
		     skel->arena->bit_word / 2, total, skel->arena->bit_word & AK_BIT_LOCK);
	cr_expect_not(ak_lock_is_locked(&skel->arena->counter_lock));
	printf("lock: %d CPUs x %d rounds in %llu runs: ak_lock %llu and bit lock %llu of %llu "
	       "updates (%llu -EBUSY tried again); without a lock %llu were lost\n", cpus, ROUNDS,
	       runs, skel->arena->counter, skel->arena->bit_word / 2, total, busy,
	       total - skel->arena->unlocked);
	lock__destroy(skel);
}
