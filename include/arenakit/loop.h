/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/loop.h - loops the verifier accepts, bounded by may_goto.
 *
 * The may_goto instruction (Linux 6.9+) lets the verifier accept a loop it
 * cannot prove finite: the kernel keeps a hidden per-stack-frame counter and
 * takes the branch once the counter's budget is spent (8,388,608 steps on
 * 6.12, shared by every loop of one function; a call to a non-inlined
 * function starts with a fresh budget). Expiry is silent, so arenakit reports
 * it: a walk cut short returns -ARENA_EBUDGET, never a short answer.
 *
 *   can_loop                  expression: true while budget remains; for
 *                             loop conditions: while (p && can_loop) ...
 *   cond_break                statement: break out of the enclosing loop when
 *                             the budget is spent; only valid in a loop body
 *   cond_break_label(label)   statement: goto label when the budget is spent;
 *                             lets the caller record *that* it was cut
 *
 * In user space all three are no-ops (can_loop is always true): the headers
 * compile there so a loader can read arena structures through the mmap.
 */
#ifndef __ARENAKIT_LOOP_H
#define __ARENAKIT_LOOP_H

/*
 * The documented error for "the loop budget cut this traversal short".
 * Functions return it negated. It is EAGAIN because a cut walk is resumable:
 * call again (from a fresh budget: the next program run or another global
 * function) with the cursor the walk left behind.
 */
#define ARENA_EBUDGET 11	/* EAGAIN */

#if defined(__BPF__)

#ifdef __BPF_FEATURE_MAY_GOTO
#define __arena_may_goto(label)						\
	asm volatile goto("may_goto %l[" #label "]" :::: label)
#else
/*
 * Older assemblers lack the mnemonic: emit the instruction by hand.
 * Opcode 0xe5 (BPF_JMP | BPF_JCOND), registers 0, then the 16-bit jump
 * offset in instructions and a zero immediate. LLVM cannot fix up a 2-byte
 * PC-relative field, so the offset is written as a 4-byte word followed by
 * a 2-byte zero, which is the same bytes on little-endian targets.
 */
#define __arena_may_goto(label)						\
	asm volatile goto("1: .byte 0xe5\n"				\
			  ".byte 0\n"					\
			  ".long ((%l[" #label "] - 1b - 8) / 8) & 0xffff\n" \
			  ".short 0" :::: label)
#endif

#ifndef can_loop
#define can_loop							\
	({								\
		__label__ __spent, __done;				\
		_Bool __more = 1;					\
		__arena_may_goto(__spent);				\
		goto __done;						\
	__spent:							\
		__more = 0;						\
	__done:								\
		__more;							\
	})
#endif

#ifndef cond_break
#define cond_break							\
	({								\
		__label__ __spent, __done;				\
		__arena_may_goto(__spent);				\
		goto __done;						\
	__spent:							\
		break;							\
	__done:;							\
	})
#endif

#define cond_break_label(label) __arena_may_goto(label)

/*
 * A zero the verifier cannot see through (a .bss value may have changed).
 * A walk adds it to a counter that would otherwise start from a constant:
 * the verifier tracks such a counter precisely and never converges.
 */
static volatile unsigned long long __arena_opaque_zero __attribute__((unused));
#define arena_opaque_zero() (__arena_opaque_zero)

/*
 * Hide a value from the optimiser so a loop counter started from it is not
 * a known constant: the verifier cannot converge on a loop whose counter it
 * tracks precisely.
 */
#define arena_barrier_var(var) asm volatile("" : "+r"(var))

#else /* user space */

#ifndef can_loop
#define can_loop 1
#endif
#ifndef cond_break
#define cond_break ((void)0)
#endif
/* Never taken, but keeps the label "used" for -Wunused-label. */
#define cond_break_label(label)						\
	do {								\
		if (0)							\
			goto label;					\
	} while (0)
#define arena_barrier_var(var) ((void)0)
#define arena_opaque_zero() 0ULL

#endif /* __BPF__ */

#endif /* __ARENAKIT_LOOP_H */
