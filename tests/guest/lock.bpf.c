// SPDX-License-Identifier: GPL-2.0
/*
 * lock.h on four CPUs (driven by tests/guest/lock.c): every CPU adds to
 * counters with plain loads and stores, under ak_lock, under a bit lock,
 * and, to show the race is real, under no lock at all.
 */
#include <arenakit/arena.h>
#include <arenakit/lock.h>
#include "lock_shared.h"

AK_ARENA_MAP(arena, 16, 0);

struct ak_lock __arena_global counter_lock;
unsigned long long __arena_global counter;	/* under counter_lock */
unsigned long long __arena_global bit_word;	/* bit 0 its lock, the rest a count of 2s */
unsigned long long __arena_global unlocked;	/* under nothing */

/* Read, wait a little, write: a window another CPU can fall into. */
static void add_one(unsigned long long __arena *where, unsigned long long step)
{
	unsigned long long v = *(volatile unsigned long long __arena *)where;
	int i;

	for (i = ak_opaque_zero(); i < 8 && can_loop; i++)
		ak_barrier_var(v);
	*(volatile unsigned long long __arena *)where = v + step;
}

/*
 * Take a lock, trying again while -EBUSY (a holder's vCPU may be
 * descheduled); -AK_EBUDGET when the loop budget runs out first.
 */
#define acquire_retrying(args, acquire)					\
	({								\
		int ___err = -EBUSY, ___tries;				\
									\
		for (___tries = ak_opaque_zero(); ___tries < 1000 && ___err == -EBUSY; \
		     ___tries++) {				\
			if (!can_loop) {				\
				___err = -AK_EBUDGET;			\
				break;					\
			}						\
			___err = (acquire);				\
			if (___err == -EBUSY)				\
				(args)->busy++;				\
		}							\
		___err;							\
	})

/*
 * Rounds of three updates. Spinning on every CPU can spend a run's whole
 * loop budget (8,388,608 steps, or 250 ms on our kernel): the run then
 * returns -AK_EBUDGET and is run again, going on from the update it
 * stopped before, so no round is cut short or made twice.
 */
SEC("syscall")
int lock_count(struct lock_args *args)
{
	int err = 0;

	args->runs++;
	while (args->done < args->rounds && can_loop) {
		if (!args->step) {
			err = acquire_retrying(args, ak_lock_acquire(&counter_lock));
			if (err)
				break;
			add_one(&counter, 1);
			ak_lock_release(&counter_lock);
			args->step = 1;
		}
		err = acquire_retrying(args, ak_bit_lock_acquire(&bit_word));
		if (err)
			break;
		add_one(&bit_word, 2);
		ak_bit_lock_release(&bit_word);

		add_one(&unlocked, 1);
		args->step = 0;
		args->done++;
	}
	if (err == -AK_EBUDGET || (!err && args->done < args->rounds))
		return -AK_EBUDGET;
	args->err = err;
	return 0;
}

char _license[] SEC("license") = "GPL";
