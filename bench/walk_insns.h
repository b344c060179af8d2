/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The walk bench's count of BPF instructions per node (walk_insns.c), for
 * walk.c: deterministic, where a time under TCG is not.
 */
#ifndef ARENAKIT_BENCH_WALK_INSNS_H
#define ARENAKIT_BENCH_WALK_INSNS_H

#include <bpf/libbpf.h>
#include "bench.h"
#include "walk.h"

/* Each walk case's instructions a loop trip, per node, as bench rows; 0 or an error. */
int report_walk_insns(struct bench *b, const struct bpf_program *prog,
		      const char *const walk_names[WALK_CASES]);

#endif
