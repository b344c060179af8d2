/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/atomic.h - every access to arena memory that another CPU may
 * make at the same time, in one place.
 *
 *   ak_read_once(x)            a load the compiler must make, once
 *   ak_dep(v)                  a zero carrying an address dependency on v
 *   ak_read_once_dep(x, tok)   a load ordered after the one ak_dep(v) named
 *   ak_write_once(x, v)        a store the compiler must make, once
 *   ak_cmpxchg(p, old, new)    compare-and-swap; the value *p had
 *   ak_xchg(p, v)              exchange; the value *p had
 *   ak_fetch_add(p, v)         add; the value *p had
 *   ak_atomic_add(p, v)        add, nothing returned (statistics, counts)
 *   ak_fetch_or(p, v, oldp)    or, the value *p had in *oldp; 0 or -EBUSY
 *   ak_fetch_and(p, v, oldp)   and, the same way
 *   ak_spin_wait()             in a bounded spin, after an attempt failed
 *   ak_store_release(x, v)     a store that publishes what came before it
 *   ak_read_fence()            the loads before it before the loads after it
 *   ak_store_fence()           the stores before it before the stores after it
 *   ak_byte_publish(p, v)      a byte store, ordered before the stores after it
 *   ak_byte_claim(p, oldp)     zero a byte if it is not zero; its old value
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

/*
 * AK_ACCESS_ATOMIC_NEXT(n): a sequence count's read section begins (@n, the
 * accesses it may make) or ends (0). Its plain reads race with a writer's
 * stores by design, and nothing read is trusted until the count is read
 * again; a host build that checks every access for data races (the
 * explorer's) takes them as marked, as KCSAN takes a seqlock reader's.
 * Nothing in BPF and by default.
 */
#if defined(__BPF__) || !defined(AK_ACCESS_ATOMIC_NEXT)
#undef AK_ACCESS_ATOMIC_NEXT
#define AK_ACCESS_ATOMIC_NEXT(n) ((void)0)
#endif

/*
 * The weak-memory hooks (tests/explore/'s weak mode; nothing in BPF, and
 * nothing unless a host build defines AK_WEAK_LOAD, which then defines
 * all three): AK_WEAK_LOAD(p, size, v, dep) is called with the value @v a
 * load of *@p just read and answers the value the load returns (it may be
 * an older one, as a weakly ordered CPU may return; @dep: the load's address
 * carries an ak_dep() token); AK_WEAK_STORE(p, size, old, ordered) is
 * called after a store or atomic wrote *@p, which held @old, and
 * @ordered says it was fully ordered; AK_WEAK_DEP(v) is ak_dep()'s.
 */
#if defined(__BPF__) || !defined(AK_WEAK_LOAD)
#undef AK_WEAK_LOAD
#undef AK_WEAK_STORE
#undef AK_WEAK_DEP
#define __ak_loaded(x, v, dep) (v)
#define __ak_stored(p, old, ordered) ((void)0)
#else
#define __ak_loaded(x, v, dep)						\
	((typeof(x))AK_WEAK_LOAD(&(x), sizeof(x), (unsigned long long)(v), dep))
#define __ak_stored(p, old, ordered)					\
	AK_WEAK_STORE((p), sizeof(*(p)), (unsigned long long)(old), ordered)
#endif

#define ak_read_once(x)							\
	({								\
		AK_SCHED_POINT("read");					\
		__ak_loaded(x, *(volatile typeof(x) *)&(x), 0);		\
	})

/* @op names the store for the scheduler: "write", or "release" (below). */
#define ak_write_once(x, v) __ak_write_once(x, v, "write")

#ifndef AK_WEAK_LOAD
#define __ak_write_once(x, v, op)					\
	do {								\
		AK_SCHED_POINT(op);					\
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
#else
/*
 * The same, each store told to the weak model with the value it replaced
 * (user space only: no address space on the locals). A failed
 * compare-and-swap wrote nothing and orders nothing (-1): a read of the
 * latest value.
 */
#define __ak_write_once(x, v, op)					\
	do {								\
		typeof(x) ___ak_was;					\
									\
		AK_SCHED_POINT(op);					\
		___ak_was = *(volatile typeof(x) *)&(x);		\
		*(volatile typeof(x) *)&(x) = (v);			\
		__ak_stored(&(x), ___ak_was, 0);			\
	} while (0)

#define ak_cmpxchg(p, old, new)						\
	({								\
		typeof(*(p)) ___ak_cas_old = (old), ___ak_cas_was;	\
									\
		AK_SCHED_POINT("cmpxchg");				\
		___ak_cas_was = __sync_val_compare_and_swap((p), ___ak_cas_old, (new)); \
		__ak_stored((p), ___ak_cas_was, ___ak_cas_was == ___ak_cas_old ? 1 : -1); \
		___ak_cas_was;						\
	})

#define ak_xchg(p, v)							\
	({								\
		typeof(*(p)) ___ak_xchg_was;				\
									\
		AK_SCHED_POINT("xchg");					\
		___ak_xchg_was = __atomic_exchange_n((p), (v), __ATOMIC_SEQ_CST); \
		__ak_stored((p), ___ak_xchg_was, 1);			\
		___ak_xchg_was;						\
	})

#define ak_fetch_add(p, v)						\
	({								\
		typeof(*(p)) ___ak_add_was;				\
									\
		AK_SCHED_POINT("fetch_add");				\
		___ak_add_was = __sync_fetch_and_add((p), (v));		\
		__ak_stored((p), ___ak_add_was, 1);			\
		___ak_add_was;						\
	})

#define ak_atomic_add(p, v)						\
	do {								\
		AK_SCHED_POINT("add");					\
		__ak_stored((p), __sync_fetch_and_add((p), (v)), 0);	\
	} while (0)
#endif

#define ak_spin_wait() AK_SCHED_SPIN()

/* Attempts of ak_fetch_or and ak_fetch_and before they give up. */
#ifndef AK_ATOMIC_TRIES
#define AK_ATOMIC_TRIES 65536
#endif

/*
 * The compare-and-swap loop: the word *p read once into ___ak_old (of
 * *(oldp)'s type: on the stack, where *p may carry the arena address
 * space), then until it lands, swap in @next, an expression of ___ak_old;
 * unless @stop, another, is true first. *(oldp) is the value the last
 * attempt saw (the one swapped out, or the one @stop looked at).
 */
#define __ak_cas_loop(p, oldp, stop, next)				\
	({								\
		typeof(*(oldp)) ___ak_old = ak_read_once(*(p)), ___ak_seen; \
		unsigned int ___ak_try;					\
		int ___ak_err = -EBUSY;					\
									\
		for (___ak_try = (unsigned int)ak_opaque_zero();	\
		     ___ak_try < AK_ATOMIC_TRIES; ___ak_try++) {		\
			*(oldp) = ___ak_old;				\
			if (stop) {					\
				___ak_err = 0;				\
				break;					\
			}						\
			___ak_seen = ak_cmpxchg((p), ___ak_old, (next)); \
			if (___ak_seen == ___ak_old) {			\
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

/* *p = *p OP v as a compare-and-swap loop; the old value in *oldp. */
#define __ak_fetch_op(p, OP, v, oldp) __ak_cas_loop(p, oldp, 0, ___ak_old OP (v))

#define ak_fetch_or(p, v, oldp) __ak_fetch_op(p, |, v, oldp)
#define ak_fetch_and(p, v, oldp) __ak_fetch_op(p, &, v, oldp)

/*
 * AK_TSO: 1 where the CPU that runs the code orders every store after the
 * loads and stores before it (total store order: x86-64), 0 where it may
 * not (arm64, and every other weakly ordered CPU). A BPF object does not
 * know the CPU its JIT will target, so it is taken as weakly ordered (the
 * fully ordered forms, correct everywhere) unless the build names x86 with
 * libbpf's __TARGET_ARCH_<arch> convention (-D__TARGET_ARCH_x86, as the
 * tree's Makefile does): an object built for one CPU and run on another is
 * slower, never wrong. Only the helpers below read it.
 */
#ifndef AK_TSO
#if defined(__BPF__)
#if defined(__TARGET_ARCH_x86)
#define AK_TSO 1
#else
#define AK_TSO 0
#endif
#elif defined(__x86_64__) || defined(__i386__)
#define AK_TSO 1
#else
#define AK_TSO 0
#endif
#endif

/* Keeps the compiler from moving memory accesses across it; emits nothing. */
#define ak_compiler_barrier() __asm__ __volatile__("" ::: "memory")

/*
 * ak_dep(v) and ak_read_once_dep(x, tok): a read ordered after an earlier
 * one by an address dependency that the code makes itself. @v is a value
 * an ak_read_once() returned; ak_dep(v) is a zero computed from it (a
 * token), and ak_read_once_dep(x, tok) reads @x at its address plus
 * @tok. A CPU cannot make a read before it knows the read's address, so
 * the second read is satisfied after the first, as a read through a
 * pointer the first returned is (an address dependency: the kernel
 * memory model's addr, which orders reads on every CPU Linux runs on).
 * That is the read barrier 6.12's BPF lacks, at the price of an ALU
 * instruction, where the only other is a fully ordered atomic (a write:
 * on a shared word, a cache line every reader would bounce).
 *
 * The zero is made where the compiler cannot see it (an asm that ANDs the
 * register with 0): a compiler that knew it would drop the dependency. It
 * must come from the loaded register itself, so a token is taken right
 * after its read, before any branch that tells the compiler the value (a
 * loop that ends on a NULL link knows the last link is NULL after it).
 * BPF has no optimiser after clang: the verifier and the JITs keep the
 * AND and the add (arm64's JIT emits both), so the CPU sees the
 * dependency.
 *
 * On x86-64 (AK_TSO) reads are never satisfied out of order: the token is
 * a constant 0 and ak_read_once_dep() is ak_read_once(), no instruction
 * more. In user space on a weakly ordered CPU other than arm64 an acquire
 * fence stands in for the dependency.
 */
#if AK_TSO
#define ak_dep(v) ((void)(v), 0ULL)
#elif defined(AK_WEAK_DEP)
#define ak_dep(v) AK_WEAK_DEP((unsigned long long)(v))
#elif defined(__BPF__)
#define ak_dep(v)							\
	({								\
		unsigned long long ___ak_tok = (unsigned long long)(v);	\
		asm volatile("%[t] &= 0" : [t] "+r"(___ak_tok));	\
		___ak_tok;						\
	})
#elif defined(__aarch64__)
#define ak_dep(v)							\
	({								\
		unsigned long long ___ak_tok = (unsigned long long)(v);	\
		asm volatile("and %0, %0, xzr" : "+r"(___ak_tok));	\
		___ak_tok;						\
	})
#else
#define ak_dep(v) ((void)(v), __atomic_thread_fence(__ATOMIC_ACQUIRE), 0ULL)
#endif

#if AK_TSO
#define ak_read_once_dep(x, tok) ((void)(tok), ak_read_once(x))
#else
#define ak_read_once_dep(x, tok)					\
	({								\
		typeof(&(x)) ___ak_dp =					\
			(typeof(&(x)))((char __arena *)&(x) + (tok));	\
									\
		AK_SCHED_POINT("read");					\
		__ak_loaded(*___ak_dp, *(volatile typeof(x) *)___ak_dp, 1); \
	})
#endif

/*
 * ak_store_release(x, v): store @v into @x so that whoever reads @v there
 * also sees every load and store this CPU made before it: the kernel's
 * smp_store_release(), which releases a lock (the next holder, whose
 * compare-and-swap reads the store, sees what the last one wrote).
 *
 * On x86-64 (TSO) that is a plain store once the compiler is kept from
 * moving earlier accesses below it: the CPU never makes a store visible
 * before an earlier load or store, which is how the kernel's
 * smp_store_release() is a barrier() and a WRITE_ONCE() there, and no
 * locked instruction is needed. A weakly ordered CPU can make the store
 * visible before earlier ones (arm64 needs STLR, which BPF lacks in
 * 6.12), so there it is ak_xchg, a fully ordered exchange, as every
 * release was before this helper.
 */
#define ak_store_release(x, v)						\
	do {								\
		if (AK_TSO) {						\
			ak_compiler_barrier();				\
			__ak_write_once(x, v, "release");		\
		} else {						\
			(void)ak_xchg(&(x), (v));			\
		}							\
	} while (0)

/*
 * ak_read_fence(): the loads before it are satisfied before the loads
 * after it: the kernel's smp_rmb(), which a sequence count's reader needs
 * around its reads (omap_impl_read.h's __ak_omap_find_impl).
 *
 * On x86-64 (TSO) loads are never satisfied out of order: only the
 * compiler is kept from moving them. 6.12's BPF has no barrier
 * instruction, so a weakly ordered CPU gets a fully ordered atomic (a
 * value-returning add: the kernel's memory model puts a full barrier on
 * each side of it) on a word of the caller's stack, which no other CPU
 * touches: no cache line bounces between readers, as one on a shared word
 * would. arm64's JIT emits LDADDAL, or an exclusive pair and a DMB ISH.
 * The asm gives the word's address away so that the compiler keeps the
 * atomic on a variable no one else could see.
 */
#define ak_read_fence() __ak_fence()

/* A compiler barrier where AK_TSO, else a fully ordered atomic on the stack. */
#define __ak_fence()							\
	do {								\
		if (AK_TSO) {						\
			ak_compiler_barrier();				\
		} else {						\
			unsigned long long ___ak_fence = 0;		\
									\
			__asm__ __volatile__("" : : "r"(&___ak_fence) : "memory"); \
			___ak_fence = ak_fetch_add(&___ak_fence, 1);	\
			__asm__ __volatile__("" : : "r"(___ak_fence) : "memory"); \
		}							\
	} while (0)

/*
 * ak_store_fence(): the stores before it are seen before the stores after
 * it, by every CPU: the kernel's smp_wmb(). On x86-64 (TSO) only the
 * compiler is kept from moving them; elsewhere the fully ordered atomic of
 * ak_read_fence, which orders both.
 */
#define ak_store_fence() __ak_fence()

/*
 * A byte's aligned 64-bit word, and where the byte is in it: BPF's atomics
 * take 32- and 64-bit words only, so a byte is claimed by a compare-and-swap
 * of the word around it (little-endian: x86-64, arm64 and BPF's hosts).
 */
#define __ak_byte_word(p)						\
	((unsigned long long __arena *)((char __arena *)(p) - ((unsigned long long)(p) & 7)))
#define __ak_byte_shift(p) (((unsigned long long)(p) & 7) * 8)

/*
 * ak_byte_claim(p, oldp): if the byte *@p is not zero, make it zero, and
 * say what it was (*@oldp, 0 if it was zero already and nothing changed):
 * of two calls racing on one byte, exactly one sees it set. A
 * compare-and-swap loop on the byte's word, as ak_fetch_and: the attempt
 * that lands is fully ordered; one fails only if another CPU changed the
 * word (another byte of it) meanwhile, and the loop gives up after
 * AK_ATOMIC_TRIES attempts (-EBUSY) or when the loop budget runs out
 * (-AK_EBUDGET), with nothing changed. 0 otherwise. A clear byte is
 * swapped too (the word for itself): the call writes the word whatever it
 * finds, as an atomic and would, so a caller that may reach a page gone
 * back to the kernel is caught writing there by the schedule explorer
 * whether the byte it finds is set or not.
 *
 * Plain byte stores into the same word (ak_byte_publish) are safe beside
 * it: a compare-and-swap is atomic with respect to every store to the bytes
 * it covers, of any size, so a byte stored between the read and the swap
 * makes the swap fail and be tried again, never lost. x86-64 guarantees it
 * for locked instructions, and arm64 for its atomics and exclusives; the
 * kernel's qspinlock relies on the same (a byte store of ->locked beside a
 * compare-and-swap of the whole word).
 */
#define ak_byte_claim(p, oldp)						\
	({								\
		typeof(p) ___ak_p = (p);				\
		unsigned long long ___ak_sh = __ak_byte_shift(___ak_p), ___ak_word; \
		int ___ak_err = __ak_cas_loop(__ak_byte_word(___ak_p), &___ak_word, 0, \
					      ___ak_old & ~(0xffULL << ___ak_sh)); \
									\
		*(oldp) = (unsigned char)(___ak_word >> ___ak_sh);	\
		___ak_err;						\
	})

/*
 * ak_byte_publish(p, v): set the byte *@p, zero until now, to @v (not
 * zero), where ak_byte_claim may clear it, so that a CPU that sees any
 * later store of this one (a pointer to the object the byte says is live,
 * however the program passes it on) sees the byte too; 0, or -EBUSY /
 * -AK_EBUDGET (nothing stored) where it takes an atomic. The caller is the
 * byte's only writer while it is zero (others may clear other bytes of
 * its word meanwhile, not set this one).
 *
 * On x86-64 (TSO) a plain byte store: later stores are never seen before
 * it, and ak_byte_claim's compare-and-swap beside it loses nothing (see
 * there); no locked instruction. A compiler barrier after it keeps the
 * compiler from moving a caller's later plain store ahead of it (no
 * instruction: every caller passes an atomic before it returns the
 * pointer today, and a future one need not). A weakly ordered CPU may make a later
 * plain store (the program's, handing the object to another CPU) visible
 * first, and that CPU's free would find the byte clear and refuse a live
 * object; 6.12's BPF has no barrier but the fully ordered atomics, so
 * there the byte is or-ed into its word by a compare-and-swap loop (as
 * the allocator set its live bits on every architecture before this
 * helper).
 */
#define ak_byte_publish(p, v)						\
	({								\
		typeof(p) ___ak_p = (p);				\
		int ___ak_err = 0;					\
		unsigned long long ___ak_o;				\
									\
		if (AK_TSO) {						\
			ak_write_once(*___ak_p, (v));			\
			ak_compiler_barrier();				\
		} else							\
			___ak_err = __ak_fetch_op(__ak_byte_word(___ak_p), |, \
				(unsigned long long)(unsigned char)(v) << \
				__ak_byte_shift(___ak_p), &___ak_o);	\
		___ak_err;						\
	})

#endif /* __ARENAKIT_ATOMIC_H */
