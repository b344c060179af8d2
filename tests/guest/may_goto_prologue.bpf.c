// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel patch 3, the BPF_PSEUDO_FUNC form (tests/guest/may_goto_prologue.c
 * says why): a looping subprogram whose first instruction loads the address
 * of an earlier callback. A raw program cannot have callbacks without BTF,
 * so this one is C with naked functions. libbpf lays the subprograms out in
 * the order prologue_callback_back calls them: keep_going, stop, looping.
 * Loading it on a kernel without the patch WARNs: only the test loads it,
 * and only where the series is (tests/guest/compilers.c skips it too).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#define __naked_sub __attribute__((naked, noinline, used)) static

/* bpf_loop() goes on: two passes. */
__naked_sub int keep_going(void)
{
	asm volatile("r0 = 0; exit;");
}

/* bpf_loop() stops: one pass. Two instructions after keep_going. */
__naked_sub int stop(void)
{
	asm volatile("r0 = 1; exit;");
}

/*
 * The address of keep_going first (the compiler's load of the operand),
 * then bpf_loop() over it with flags the verifier cannot see are 0 (the
 * clock's top bit), so that the call is not inlined and goes through the
 * address; then a may_goto loop, which gives this subprogram its prologue.
 * Returns bpf_loop()'s passes.
 */
__naked_sub int looping(void)
{
	asm volatile(
	"r7 = %[keep_going];"
	"call %[bpf_ktime_get_ns];"
	"r0 >>= 63;"
	"r4 = r0;"
	"r1 = 2;"
	"r2 = r7;"
	"r3 = 0;"
	"call %[bpf_loop];"
	"r8 = r0;"
	"r6 = 3;"
"1:"	"may_goto 2f;"
	"r6 -= 1;"
	"if r6 != 0 goto 1b;"
"2:"	"r0 = r8;"
	"exit;"
	:
	: [keep_going]"r"(&keep_going), [bpf_ktime_get_ns]"i"(bpf_ktime_get_ns),
	  [bpf_loop]"i"(bpf_loop)
	: "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "memory");
}

SEC("syscall")
__attribute__((naked)) int prologue_callback_back(void)
{
	asm volatile(
	"call keep_going;"
	"call stop;"
	"call looping;"
	"exit;"
	::: "r0", "r1", "r2", "r3", "r4", "r5", "memory");
}

char _license[] SEC("license") = "GPL";
