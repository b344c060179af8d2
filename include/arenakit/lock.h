/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/lock.h - a spin lock in the arena whose wait is bounded.
 *
 * struct ak_lock is one word of arena memory, zero when free, so it can sit
 * in any arena structure (beside a list head, inside an allocator) and be
 * seen from user space through the mmap. Taking it is a compare-and-swap
 * on arena memory (an arena atomic, Linux 6.10+ JITs), so it works from
 * every program type.
 *
 * Waiting is bounded twice: by AK_LOCK_SPINS attempts, then -EBUSY; and by
 * the may_goto budget (each attempt is one step), then -AK_EBUDGET: that is
 * ak_spin_until, which other compare-and-swap loops use too. So a
 * busy lock costs a caller at most AK_LOCK_SPINS steps of its frame's
 * budget (8,388,608 steps on stock 6.12, 250 ms on the arenakit kernel),
 * never the whole of it, and never hangs.
 *
 * Not fair: whoever's compare-and-swap lands first wins. Hold it for a few
 * instructions only, and never across a call that may sleep (the arena page
 * kfuncs): a sleepable holder that is preempted leaves the other CPUs
 * failing with -EBUSY until it runs again, and a program interrupted on its
 * own CPU by one that wants the same lock makes that one fail with -EBUSY,
 * not deadlock. Treat -EBUSY as "later", not "again at once": a program
 * that keeps retrying within one run keeps its CPU, which the holder (a
 * sleeper, or a user-space thread holding a lock through the mmap) may be
 * waiting for; with no preemption in the kernel that ends in soft lockups.
 * Return, and let user space or the next event try again.
 */
#ifndef __ARENAKIT_LOCK_H
#define __ARENAKIT_LOCK_H

#include <arenakit/arena.h>

/*
 * Attempts before ak_lock_acquire gives up: 262,144 steps, about 3% of a
 * stock frame's budget, a few milliseconds. A holder needs a few dozen
 * instructions; the margin is for a holder whose (virtual) CPU its host
 * preempts, for a time slice: milliseconds, which a shorter wait does
 * not outlast often enough for the allocator's shared lock, taken by every
 * CPU (bench/results/README.md has the counts). The kernel's resilient
 * spin lock (rqspinlock) waits far longer before it gives up.
 */
#ifndef AK_LOCK_SPINS
#define AK_LOCK_SPINS 262144
#endif

/**
 * ak_spin_until - try @attempt until it succeeds, a bounded number of times
 * @attempt: an expression, true when the attempt succeeded (a compare-and-swap
 *	that landed, say); evaluated once per attempt, as a loop condition is.
 *	It may leave the caller (a return in a statement expression), as a
 *	loop body may: the allocator's queue pop returns when it finds the
 *	queue empty.
 *
 * The one bounded wait of arenakit: ak_lock_acquire, ak_bit_lock_acquire
 * and the allocator's lock-free queue are built on it. After each failed
 * attempt it spins (ak_spin_wait: a schedule point in the explorer) and
 * spends one step of the frame's may_goto budget. Its counter starts from
 * ak_opaque_zero(): one the verifier knows starts at 0 is tracked
 * precisely, and the loop would never converge.
 *
 *	return ak_spin_until(!ak_cmpxchg(&lock->locked, 0, 1));
 *
 * Return: 0 once @attempt is true; -EBUSY if it was false AK_LOCK_SPINS
 * times; -AK_EBUDGET if the frame's loop budget ran out first.
 */
#define ak_spin_until(attempt)						\
	({								\
		__label__ ___ak_spent, ___ak_done;			\
		unsigned int ___ak_spins;				\
		int ___ak_err = -EBUSY;					\
									\
		for (___ak_spins = (unsigned int)ak_opaque_zero();	\
		     ___ak_spins < AK_LOCK_SPINS; ___ak_spins++) {	\
			if (attempt) {					\
				___ak_err = 0;				\
				goto ___ak_done;			\
			}						\
			ak_spin_wait();					\
			ak_cond_break_label(___ak_spent);		\
		}							\
		goto ___ak_done;					\
	___ak_spent:							\
		___ak_err = -AK_EBUDGET;				\
	___ak_done:							\
		___ak_err;						\
	})

struct ak_lock {
	unsigned int locked;
};

/**
 * ak_lock_acquire - take @lock, waiting a bounded time
 * @lock: the lock, in the arena
 *
 * Return: 0 with the lock held; -EBUSY if it stayed busy for AK_LOCK_SPINS
 * attempts; -AK_EBUDGET if the frame's loop budget ran out while waiting.
 */
static __ak_always_inline int ak_lock_acquire(struct ak_lock __arena *lock)
{
	return ak_spin_until(!ak_cmpxchg(&lock->locked, 0, 1));
}

/**
 * ak_lock_try - take @lock if it is free, without waiting
 * @lock: the lock
 *
 * Return: 0 with the lock held, -EBUSY if someone holds it.
 */
static __ak_always_inline int ak_lock_try(struct ak_lock __arena *lock)
{
	return ak_cmpxchg(&lock->locked, 0, 1) ? -EBUSY : 0;
}

/**
 * ak_lock_release - release @lock, taken with ak_lock_acquire
 * @lock: the lock
 *
 * An atomic exchange, so every store made under the lock is visible to the
 * next holder before it sees the lock free.
 */
static __ak_always_inline void ak_lock_release(struct ak_lock __arena *lock)
{
	ak_xchg(&lock->locked, 0);
}

/**
 * ak_lock_is_locked - is @lock held? (a snapshot, for checks and tests)
 * @lock: the lock
 *
 * Return: 1 if held, 0 if free.
 */
static __ak_always_inline int ak_lock_is_locked(const struct ak_lock __arena *lock)
{
	return ak_read_once(lock->locked) != 0;
}

/*
 * A bit lock: bit 0 of a 64-bit arena word whose other bits stay data, as
 * the kernel's hlist_bl keeps a list head's lock in its pointer (pointers
 * to 8-byte-aligned objects never use bit 0). Waiting is bounded as for
 * ak_lock; the holder may store the word, keeping AK_BIT_LOCK set.
 */
#define AK_BIT_LOCK 1ULL

/**
 * ak_bit_lock_acquire - set bit 0 of *@word, waiting a bounded time
 * @word: the word, in the arena
 *
 * Return: 0 with the bit set by us; -EBUSY after AK_LOCK_SPINS attempts;
 * -AK_EBUDGET if the frame's loop budget ran out while waiting.
 */
static __ak_always_inline int ak_bit_lock_acquire(unsigned long long __arena *word)
{
	return ak_spin_until(({
		unsigned long long old = ak_read_once(*word);

		!(old & AK_BIT_LOCK) && ak_cmpxchg(word, old, old | AK_BIT_LOCK) == old;
	}));
}

/**
 * ak_bit_lock_release - clear bit 0 of *@word, keeping the other bits
 * @word: the word, locked by ak_bit_lock_acquire
 *
 * The holder is the only writer of the word while bit 0 is set:
 * ak_bit_lock_acquire changes the word only by a compare-and-swap from a
 * value with bit 0 clear, which fails until the release lands, and the
 * holder's own stores keep the bit. So the word as the holder reads it is
 * its value, and an exchange of it with bit 0 cleared releases the lock,
 * fully ordered (atomic.h): every store made under the lock is seen by the
 * next holder before it sees the bit clear.
 *
 * Not an atomic AND: clang 22 emits its fetching form (BPF_AND |
 * BPF_FETCH) even when the result is unused, and the 6.12 x86 JIT refuses
 * that on arena memory ("BPF_ATOMIC stores into R1 arena is not
 * allowed"): the program would not load.
 */
static __ak_always_inline void ak_bit_lock_release(unsigned long long __arena *word)
{
	ak_xchg(word, *word & ~AK_BIT_LOCK);
}

#endif /* __ARENAKIT_LOCK_H */
