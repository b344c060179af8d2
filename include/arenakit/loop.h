/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/loop.h - loops the verifier accepts, bounded by may_goto, and
 * the one budget contract every arenakit header keeps.
 *
 * The may_goto instruction (Linux 6.9+) lets the verifier accept a loop it
 * cannot prove finite: the kernel keeps a hidden per-stack-frame budget and
 * takes the branch once it is spent. The budget is shared by every loop of
 * one function, and a call to a non-inlined function starts with a fresh
 * one. On stock 6.12 it is 8,388,608 steps; on the arenakit kernel (x86-64
 * JIT; the series' may_goto clock, kernel/README.md) it is 250 ms of the
 * frame's looping, so how many steps fit depends on the machine. Expiry
 * is silent, so arenakit reports it.
 *
 *   ak_can_loop                expression: true while budget remains; for
 *                              loop conditions: while (p && ak_can_loop) ...
 *   ak_cond_break              statement: break out of the enclosing loop
 *                              when the budget is spent (loop bodies only)
 *   ak_cond_break_label(l)     statement: goto l when the budget is spent,
 *                              so the caller can record *that* it was cut
 *
 * can_loop, cond_break and cond_break_label are defined as the same things
 * unless something defined them first. The 6.12 selftests'
 * bpf_experimental.h defines can_loop and cond_break without a guard: when
 * a program uses both, include bpf_experimental.h first.
 *
 * THE BUDGET CONTRACT, kept by every arenakit operation:
 *
 *  1. An operation either finishes, or returns -AK_EBUDGET and leaves, in
 *     the cursor its caller passed, what it needs to go on. Nothing is ever
 *     a silently short answer. Operations without a cursor argument never
 *     loop over data (they are O(1)) or say in their comment how they end.
 *  2. A cursor is resumed by calling again with it, from a fresh budget: the
 *     next program run, or a call of another global (non-inlined) function.
 *     A cursor no longer valid for the structure (it changed in between) is
 *     -AK_ESTALE, and the cursor is reset; a fault (a NULL link) is -EFAULT,
 *     and the cursor is reset too. Calling again then starts from the top.
 *  3. Waiting for a lock spends at most AK_LOCK_SPINS may_goto steps, then
 *     fails with -EBUSY: a busy lock never eats the frame's budget.
 *  4. A BPF program whose work was cut returns the library's code as it
 *     got it (return -AK_EBUDGET; 0 when done). User space runs it again
 *     until it returns anything else (user.h: ak_run_until_done).
 *
 * In user space the loop macros are no-ops (ak_can_loop is always true):
 * the headers compile there so a loader can read arena structures through
 * the mmap, and so their logic can be tested natively.
 */
#ifndef __ARENAKIT_LOOP_H
#define __ARENAKIT_LOOP_H

/*
 * The documented error for "the loop budget cut this traversal short".
 * Functions return it negated. It is EAGAIN because a cut walk is resumable:
 * call again (from a fresh budget) with the cursor the walk left behind.
 */
#define AK_EBUDGET 11	/* EAGAIN */
/* A cursor saved before the structure changed: it was reset, start again. */
#define AK_ESTALE 116	/* ESTALE */

/*
 * The errno values arenakit returns, for BPF programs (which have no
 * <errno.h>). Plain numbers, as <asm-generic/errno*.h> spells them, so a
 * later include of those headers redefines them identically.
 */
#ifndef EPERM
#define EPERM 1
#endif
#ifndef ENOENT
#define ENOENT 2
#endif
#ifndef E2BIG
#define E2BIG 7
#endif
#ifndef EAGAIN
#define EAGAIN 11
#endif
#ifndef ENOMEM
#define ENOMEM 12
#endif
#ifndef EFAULT
#define EFAULT 14
#endif
#ifndef EBUSY
#define EBUSY 16
#endif
#ifndef EEXIST
#define EEXIST 17
#endif
#ifndef EINVAL
#define EINVAL 22
#endif
#ifndef ENOSPC
#define ENOSPC 28
#endif
#ifndef ERANGE
#define ERANGE 34
#endif
#ifndef ELOOP
#define ELOOP 40
#endif
#ifndef ESTALE
#define ESTALE 116
#endif

/*
 * A test's own budget: define AK_TEST_CUT() before including arenakit, as
 * an expression that is true when a budget check should cut (say, after a
 * count the test sets), and every ak_cond_break_label cuts there as if the
 * budget had run out. A cut can then be placed at every position, on any
 * kernel, and in user space, where the budget never runs out. 0 otherwise.
 */
#ifndef AK_TEST_CUT
#define AK_TEST_CUT() 0
#endif

#ifdef __BPF__

#ifdef __BPF_FEATURE_MAY_GOTO
#define __ak_may_goto(label)						\
	asm volatile goto("may_goto %l[" #label "]" :::: label)
#else
/*
 * Older assemblers lack the mnemonic: emit the instruction by hand.
 * Opcode 0xe5 (BPF_JMP | BPF_JCOND), registers 0, then the 16-bit jump
 * offset in instructions and a zero immediate. LLVM cannot fix up a 2-byte
 * PC-relative field, so the offset is written as a 4-byte word followed by
 * a 2-byte zero, which is the same bytes on little-endian targets.
 */
#define __ak_may_goto(label)						\
	asm volatile goto("1: .byte 0xe5\n"				\
			  ".byte 0\n"					\
			  ".long ((%l[" #label "] - 1b - 8) / 8) & 0xffff\n" \
			  ".short 0" :::: label)
#endif

#define ak_can_loop							\
	({								\
		__label__ ___ak_spent, ___ak_done;			\
		_Bool ___ak_more = 1;					\
		__ak_may_goto(___ak_spent);				\
		goto ___ak_done;					\
	___ak_spent:							\
		___ak_more = 0;						\
	___ak_done:							\
		___ak_more;						\
	})

#define ak_cond_break							\
	({								\
		__label__ ___ak_spent, ___ak_done;			\
		__ak_may_goto(___ak_spent);				\
		goto ___ak_done;					\
	___ak_spent:							\
		break;							\
	___ak_done:;							\
	})

#define ak_cond_break_label(label)					\
	do {								\
		__ak_may_goto(label);					\
		if (AK_TEST_CUT())					\
			goto label;					\
	} while (0)

/*
 * A zero the verifier cannot see through (a .bss value may have changed).
 * A walk adds it to a counter that would otherwise start from a constant:
 * the verifier tracks such a counter precisely and never converges.
 */
static volatile unsigned long long __ak_opaque_zero __attribute__((unused));
#define ak_opaque_zero() (__ak_opaque_zero)

/* Hide a value from the optimiser, so a counter started from it is opaque. */
#define ak_barrier_var(var) asm volatile("" : "+r"(var))

#else /* user space */

#define ak_can_loop 1
#define ak_cond_break ((void)0)
/* Taken only when a test cuts (AK_TEST_CUT); keeps the label "used". */
#define ak_cond_break_label(label)					\
	do {								\
		if (AK_TEST_CUT())					\
			goto label;					\
	} while (0)
#define ak_opaque_zero() 0ULL
#define ak_barrier_var(var) ((void)0)

#endif /* __BPF__ */

/*
 * A whole walk in one program run, made of chunks: evaluate @chunk (a call
 * of a global function, so each has a loop budget of its own) until it is
 * not cut (-AK_EBUDGET). The chunks advance @steps; past @max_steps the walk
 * took more steps than the arena can hold nodes, so it is going round a
 * cycle: -ELOOP. The caller's own budget, one step per chunk, ends it too,
 * with -AK_EBUDGET. list.h and htab.h build their _all walks on it.
 */
#define __ak_walk_all(chunk, steps, max_steps)				\
	({								\
		long long ___ak_r;					\
									\
		for (;;) {						\
			___ak_r = (chunk);				\
			if (___ak_r != -AK_EBUDGET)			\
				break;					\
			if ((steps) > (max_steps)) {			\
				___ak_r = -ELOOP;			\
				break;					\
			}						\
			if (!ak_can_loop)				\
				break;					\
		}							\
		___ak_r;						\
	})

#ifndef can_loop
#define can_loop ak_can_loop
#endif
#ifndef cond_break
#define cond_break ak_cond_break
#endif
#ifndef cond_break_label
#define cond_break_label(label) ak_cond_break_label(label)
#endif

#endif /* __ARENAKIT_LOOP_H */
