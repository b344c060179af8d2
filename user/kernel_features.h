/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the running kernel offers beyond stock 6.12: the three changes of
 * kernel/patches/, each probed by loading (and for the time bound, running)
 * a few raw instructions, never by reading the release string. Probes load
 * BPF, so they run only on the arenakit kernel (the loader's check).
 */
#ifndef ARENAKIT_KERNEL_FEATURES_H
#define ARENAKIT_KERNEL_FEATURES_H

#include <linux/bpf.h>

enum arenakit_feature {
	ARENAKIT_MAY_GOTO_ZERO,		/* the verifier takes may_goto +0 as a nop */
	ARENAKIT_TIMED_MAY_GOTO,	/* may_goto ends loops by time, not by count */
	ARENAKIT_CAN_LOOP_KFUNC,	/* the bpf_can_loop() kfunc */
	ARENAKIT_FEATURES
};

/* Raw instructions, for the probes and the tests of the kernel changes. */
#define ARENAKIT_INSN(c, d, s, o, i)					\
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })
#define ARENAKIT_MOV0(imm) ARENAKIT_INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, imm)
#define ARENAKIT_ADD0(imm) ARENAKIT_INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_0, 0, 0, imm)
#define ARENAKIT_MAY_GOTO(off) ARENAKIT_INSN(BPF_JMP | BPF_JCOND, 0, BPF_MAY_GOTO, off, 0)
#define ARENAKIT_JA(off) ARENAKIT_INSN(BPF_JMP | BPF_JA, 0, 0, off, 0)
#define ARENAKIT_EXIT ARENAKIT_INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

/* A line's worth: what the feature is, e.g. for a skipped test's message. */
const char *arenakit_feature_name(enum arenakit_feature feature);

/* 1 if the running kernel has @feature, 0 if not, or a negative errno; each
 * feature is probed once per process. */
int arenakit_feature_probe(enum arenakit_feature feature);
/* The vmlinux BTF id of the bpf_can_loop() kfunc: 0 if it has none, or -errno. */
int arenakit_can_loop_btf_id(void);

#endif
