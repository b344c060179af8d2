/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/atomic.h - every access to arena memory that another CPU may
 * make at the same time, in one place.
 *
 *   ak_read_once(x)            a load the compiler must make, once
 *   ak_write_once(x, v)        a store the compiler must make, once
 *   ak_cmpxchg(p, old, new)    compare-and-swap; the value *p had
 *   ak_xchg(p, v)              exchange; the value *p had
 *   ak_fetch_add(p, v)         add; the value *p had
 *   ak_atomic_add(p, v)        add, nothing returned (statistics, counts)
 *   ak_spin_wait()             in a bounded spin, after an attempt failed
 *
 * The headers use nothing else for memory another CPU can touch: locks,
 * lock-free reads and the links a lock-free reader follows all go through
 * these. That is what makes them testable: a host build may define
 * AK_SCHED_POINT(op) before including any arenakit header, and it is then
 * called before each of these accesses, so a test scheduler can switch
 * threads exactly there (tests/explore/ enumerates the interleavings);
 * AK_SCHED_SPIN() marks a spinning thread as waiting for another. Both
 * are nothing in BPF and by default in user space.
 *
 * Memory order, in the terms of the kernel's memory model, which is BPF's:
 * ak_cmpxchg, ak_xchg and ak_fetch_add (BPF atomics with BPF_FETCH) are
 * fully ordered, as the kernel's value-returning atomics; ak_atomic_add
 * (BPF_ADD without BPF_FETCH) is unordered, and is used only where nothing
 * is ordered by it; ak_read_once and ak_write_once are READ_ONCE and
 * WRITE_ONCE, ordered only by address dependency (a load through a pointer
 * loaded with ak_read_once sees what was stored before that pointer was
 * published with a fully ordered atomic). 6.12 has no BPF load-acquire or
 * store-release, so wherever arenakit makes new memory reachable (a node
 * linked, an array published, a lock released) it does so with a fully
 * ordered exchange, never a plain store. Links moved under a bucket lock
 * are plain stores: a lock-free reader that sees them half done sees the
 * lock too, and looks again (htab.h).
 *
 * 6.12's x86-64 JIT refuses fetch-and, fetch-or and fetch-xor on arena
 * memory, and clang 22 emits the fetch form even when the result is
 * unused: arenakit uses no and, or or xor atomics.
 */
#ifndef __ARENAKIT_ATOMIC_H
#define __ARENAKIT_ATOMIC_H

#if defined(__BPF__) || !defined(AK_SCHED_POINT)
#undef AK_SCHED_POINT
#undef AK_SCHED_SPIN
#define AK_SCHED_POINT(op) ((void)0)
#define AK_SCHED_SPIN() ((void)0)
#elif !defined(AK_SCHED_SPIN)
#define AK_SCHED_SPIN() ((void)0)
#endif

#define ak_read_once(x)							\
	({								\
		AK_SCHED_POINT("read");					\
		*(volatile typeof(x) *)&(x);				\
	})

#define ak_write_once(x, v)						\
	do {								\
		AK_SCHED_POINT("write");				\
		*(volatile typeof(x) *)&(x) = (v);			\
	} while (0)

#define ak_cmpxchg(p, old, new)						\
	({								\
		AK_SCHED_POINT("cmpxchg");				\
		__sync_val_compare_and_swap((p), (old), (new));		\
	})

/* Not __sync_lock_test_and_set: gcc makes that an acquire barrier only. */
#define ak_xchg(p, v)							\
	({								\
		AK_SCHED_POINT("xchg");					\
		__atomic_exchange_n((p), (v), __ATOMIC_SEQ_CST);	\
	})

#define ak_fetch_add(p, v)						\
	({								\
		AK_SCHED_POINT("fetch_add");				\
		__sync_fetch_and_add((p), (v));				\
	})

#define ak_atomic_add(p, v)						\
	do {								\
		AK_SCHED_POINT("add");					\
		(void)__sync_fetch_and_add((p), (v));			\
	} while (0)

#define ak_spin_wait() AK_SCHED_SPIN()

#endif /* __ARENAKIT_ATOMIC_H */
