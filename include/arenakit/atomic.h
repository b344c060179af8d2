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
 *   ak_fetch_or(p, v, oldp)    or, the value *p had in *oldp; 0 or -EBUSY
 *   ak_fetch_and(p, v, oldp)   and, the same way
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
 * memory (bpf_jit_supports_insn: its cmpxchg loop for them does not take
 * arena addresses), and clang 22 emits the fetch form even when the result
 * is unused: arenakit uses no and, or or xor atomic instruction.
 * ak_fetch_or and ak_fetch_and are compare-and-swap loops instead: read
 * the word, swap in the new value if the word is still what was read, try
 * again if not. Each attempt is an ak_cmpxchg (a schedule point); the one
 * that succeeds is fully ordered, as the kernel's atomic_fetch_or(), and a
 * failed one orders nothing. An attempt fails only if another CPU changed
 * the word after it was read, so a retry means someone else made progress;
 * still the loop is bounded (the verifier wants it so): after
 * AK_ATOMIC_TRIES attempts, or when the frame's loop budget runs out, it
 * gives up with *p unchanged and returns -EBUSY (-AK_EBUDGET for the
 * budget). That is why they take @oldp and return a status, unlike
 * ak_fetch_add, whose instruction every JIT takes.
 */
#ifndef __ARENAKIT_ATOMIC_H
#define __ARENAKIT_ATOMIC_H

#include <arenakit/loop.h>

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

/* Attempts of ak_fetch_or and ak_fetch_and before they give up. */
#ifndef AK_ATOMIC_TRIES
#define AK_ATOMIC_TRIES 65536
#endif

/*
 * *p = *p OP v as a compare-and-swap loop; the old value in *oldp (on the
 * stack: its type, not that of *p, which may carry the arena address space).
 */
#define __ak_fetch_op(p, OP, v, oldp)					\
	({								\
		typeof(*(oldp)) ___ak_old = ak_read_once(*(p)), ___ak_seen; \
		unsigned int ___ak_try;					\
		int ___ak_err = -EBUSY;					\
									\
		for (___ak_try = (unsigned int)ak_opaque_zero();	\
		     ___ak_try < AK_ATOMIC_TRIES; ___ak_try++) {		\
			___ak_seen = ak_cmpxchg((p), ___ak_old,		\
						___ak_old OP (v));	\
			if (___ak_seen == ___ak_old) {			\
				*(oldp) = ___ak_old;			\
				___ak_err = 0;				\
				break;					\
			}						\
			___ak_old = ___ak_seen;				\
			if (!ak_can_loop) {				\
				___ak_err = -AK_EBUDGET;		\
				break;					\
			}						\
		}							\
		___ak_err;						\
	})

#define ak_fetch_or(p, v, oldp) __ak_fetch_op(p, |, v, oldp)
#define ak_fetch_and(p, v, oldp) __ak_fetch_op(p, &, v, oldp)

#endif /* __ARENAKIT_ATOMIC_H */
