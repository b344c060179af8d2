// SPDX-License-Identifier: GPL-2.0
/*
 * The cond_break tests again, built with loop.h's hand-encoded may_goto
 * (what compilers without the mnemonic get) instead of the assembler's.
 */
#undef __BPF_FEATURE_MAY_GOTO
#include "may_goto.bpf.c"
