// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>

#include "kernel_features.h"
#include "loader.h"

/* The count budget of a stock 6.12 stack frame (BPF_MAX_LOOPS). */
#define STOCK_MAY_GOTO_STEPS 8388608

static const char *const names[ARENAKIT_FEATURES] = {
	[ARENAKIT_MAY_GOTO_ZERO] = "may_goto +0 accepted as a nop",
	[ARENAKIT_TIMED_MAY_GOTO] = "may_goto bounded by time, not by a count",
	[ARENAKIT_CAN_LOOP_KFUNC] = "the bpf_can_loop() kfunc",
};

const char *arenakit_feature_name(enum arenakit_feature feature)
{
	return feature < ARENAKIT_FEATURES ? names[feature] : "an unknown feature";
}

#define INSN ARENAKIT_INSN
#define MOV0 ARENAKIT_MOV0
#define MAY_GOTO ARENAKIT_MAY_GOTO
#define EXIT ARENAKIT_EXIT

/* Load @insns: 1 if the verifier takes them, 0 if it refuses them (-EINVAL). */
static int loads(const char *name, const struct bpf_insn *insns, size_t count, int *fdp)
{
	char log[4096];
	int fd = arenakit_load_insns(name, insns, count, log, sizeof(log));

	if (fd < 0 && getenv("ARENAKIT_DEBUG"))
		fprintf(stderr, "arenakit: probe %s: %s\n%s", name, strerror(-fd), log);
	if (fd == -EINVAL || fd == -EACCES)
		return 0;
	if (fd < 0)
		return fd;
	if (fdp)
		*fdp = fd;
	else
		close(fd);
	return 1;
}

static int probe_may_goto_zero(void)
{
	const struct bpf_insn insns[] = { MOV0(0), MAY_GOTO(0), EXIT };
	const struct bpf_insn control[] = { MOV0(0), EXIT };
	int ok = loads("ak_probe_ctrl", control, 2, NULL);

	/* A refusal means something only if the same program without it loads. */
	if (ok <= 0)
		return ok ? ok : -EIO;
	return loads("ak_probe_mg0", insns, 3, NULL);
}

/*
 * A loop that only may_goto ends: under the count it stops after exactly
 * BPF_MAX_LOOPS passes; under a time bound, after as many as fit in it.
 */
static int probe_timed_may_goto(void)
{
	const struct bpf_insn insns[] = {
		MOV0(0),
		MAY_GOTO(2),
		INSN(BPF_ALU | BPF_ADD | BPF_K, BPF_REG_0, 0, 0, 1),
		ARENAKIT_JA(-3),
		EXIT,
	};
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	int fd = -1, ok = loads("ak_probe_timed", insns, 5, &fd);

	if (ok <= 0)
		return ok;
	ok = bpf_prog_test_run_opts(fd, &opts) ? -errno : opts.retval != STOCK_MAY_GOTO_STEPS;
	close(fd);
	return ok;
}

int arenakit_can_loop_btf_id(void)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	int id;

	if (!vmlinux)
		return -errno;
	id = btf__find_by_name_kind(vmlinux, "bpf_can_loop", BTF_KIND_FUNC);
	btf__free(vmlinux);
	return id < 0 ? 0 : id;
}

static int probe_can_loop_kfunc(void)
{
	struct bpf_insn insns[] = {
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_1, 0, 0, 0),
		INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, 0),	/* imm: the id */
		EXIT,
	};
	int id = arenakit_can_loop_btf_id();

	if (id <= 0)
		return id;	/* 0: not even declared */
	insns[1].imm = id;
	return loads("ak_probe_canloop", insns, 3, NULL);
}

static int probe(enum arenakit_feature feature)
{
	switch (feature) {
	case ARENAKIT_MAY_GOTO_ZERO:
		return probe_may_goto_zero();
	case ARENAKIT_TIMED_MAY_GOTO:
		return probe_timed_may_goto();
	case ARENAKIT_CAN_LOOP_KFUNC:
		return probe_can_loop_kfunc();
	default:
		return -EINVAL;
	}
}

int arenakit_feature_probe(enum arenakit_feature feature)
{
	/* A kernel keeps its features: probe each once (the time probe runs 250 ms). */
	static int known[ARENAKIT_FEATURES] = { -1, -1, -1 };
	int has;

	if ((int)feature < 0 || feature >= ARENAKIT_FEATURES)
		return -EINVAL;
	if (known[feature] >= 0)
		return known[feature];
	has = probe(feature);
	if (has >= 0)
		known[feature] = has;
	return has;
}
