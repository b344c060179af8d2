// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The walk bench's instruction counts (walk_insns.h): the BPF
 * instructions of a walk's loop trip, read from the program as the
 * verifier left it, per node the trip visits.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <linux/bpf.h>
#include "bench.h"
#include "clock.h"
#include "kernel_features.h"
#include "loader.h"
#include <arenakit/alloc.h>
#include <arenakit/user.h>
#include "walk.h"
#include "walk_insns.h"

#define WALK_INSNS_SOURCE "the program as verified (xlated), a loop trip"

/* The BPF functions that walk, per case (NULL: not one function), and nodes a loop trip visits. */
static const struct {
	const char *func;
	int nodes_per_trip;
} walk_funcs[WALK_CASES] = {
	[WALK_CAN_LOOP] = { "walk_can_loop", 1 },
	[WALK_COND_BREAK] = { "walk_cond_break", 1 },
	[WALK_BPF_FOR] = { "walk_bpf_for", 1 },
	[WALK_CAN_LOOP_KFUNC] = { "walk_kfunc", 1 },
	[WALK_LIB_COUNT] = { "walk_lib_count", AK_LIST_GROUP },
	[WALK_LIB_FIND] = { "walk_lib_find", AK_LIST_GROUP },
	[WALK_LIB_CHECK] = { "walk_lib_check", AK_LIST_GROUP },
	[WALK_LIB_FOR_EACH] = { "walk_lib_for_each", 1 },
	[WALK_BARE_FIND] = { "walk_bare_find", 1 },
};

static int is_jump(const struct bpf_insn *insn)
{
	int class = BPF_CLASS(insn->code);

	return (class == BPF_JMP || class == BPF_JMP32) && BPF_OP(insn->code) != BPF_CALL &&
	       BPF_OP(insn->code) != BPF_EXIT;
}

static long jump_target(const struct bpf_insn *insn, long at)
{
	/* gotol (BPF_JMP32 | BPF_JA) keeps its offset in imm. */
	if (BPF_CLASS(insn->code) == BPF_JMP32 && BPF_OP(insn->code) == BPF_JA)
		return at + 1 + insn->imm;
	return at + 1 + insn->off;
}

/* Where control goes after insns[at]: up to two places; returns how many. */
static int successors(const struct bpf_insn *insns, long at, long next[2])
{
	const struct bpf_insn *insn = &insns[at];
	int n = 0;

	if (insn->code == (BPF_LD | BPF_IMM | BPF_DW)) {
		next[n++] = at + 2;
	} else if (is_jump(insn)) {
		next[n++] = jump_target(insn, at);
		if (BPF_OP(insn->code) != BPF_JA)
			next[n++] = at + 1;
	} else if (insn->code != (BPF_JMP | BPF_EXIT)) {
		next[n++] = at + 1;
	}
	return n;
}

/* The shortest way from insns[anchor] back to it within [from, to), or 0. */
static unsigned int cycle_through(const struct bpf_insn *insns, long from, long to, long anchor)
{
	long *queue, head = 0, tail = 0, at, next[2];
	unsigned int *dist, trip = 0;
	int n, k;

	dist = calloc(to - from, sizeof(*dist));
	queue = calloc(to - from, sizeof(*queue));
	if (!dist || !queue)
		goto out;
	/* Breadth first: dist is instructions run, the anchor's included. */
	dist[anchor - from] = 1;
	queue[tail++] = anchor;
	while (head < tail && !trip) {
		at = queue[head++];
		n = successors(insns, at, next);
		for (k = 0; k < n; k++) {
			if (next[k] < from || next[k] >= to)
				continue;
			if (next[k] == anchor) {
				trip = dist[at - from];
				break;
			}
			if (!dist[next[k] - from]) {
				dist[next[k] - from] = dist[at - from] + 1;
				queue[tail++] = next[k];
			}
		}
	}
out:
	free(queue);
	free(dist);
	return trip;
}

/*
 * Instructions one trip round the budgeted loop of insns[from..to) runs:
 * the shortest way round through its may_goto, as the verifier expanded it
 * (the expansion keeps the budget in BPF_REG_AX, register 11, which nothing
 * else here uses), or through the call that bounds it (bpf_for's
 * iterator, the bpf_can_loop kfunc). The slow paths (a found key, a cut, a
 * fault) leave the loop and never come back, so the shortest way round is
 * the trip every group of nodes takes. 0 if there is no such loop.
 */
static int bounds_the_loop(const struct bpf_insn *insn, int kfunc)
{
	if (!kfunc)	/* the may_goto's expansion */
		return insn->dst_reg == MAX_BPF_REG || insn->src_reg == MAX_BPF_REG;
	return insn->code == (BPF_JMP | BPF_CALL) && insn->src_reg != BPF_PSEUDO_CALL;
}

static unsigned int loop_trip(const struct bpf_insn *insns, long from, long to)
{
	unsigned int trip = 0, t;
	int kfunc;
	long at;

	for (kfunc = 0; kfunc < 2 && !trip; kfunc++)
		for (at = from; at < to; at++) {
			if (!bounds_the_loop(&insns[at], kfunc))
				continue;
			t = cycle_through(insns, from, to, at);
			if (t && (!trip || t < trip))
				trip = t;
		}
	return trip;
}

/* Where function @i of @funcs ends: the next one's start, or the program's end. */
static long func_end(const struct bpf_func_info *funcs, __u32 nr_funcs, __u32 i, long end)
{
	return i + 1 < nr_funcs ? (long)funcs[i + 1].insn_off : end;
}

/*
 * BPF instructions per node of each walk, read from the program as the
 * verifier left it (xlated: may_goto expanded): a loop trip's instructions
 * over the nodes it visits. Deterministic, where a time under TCG is not.
 */
int report_walk_insns(struct bench *b, const struct bpf_program *prog,
		      const char *const walk_names[WALK_CASES])
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), nr_funcs, xlated, btf_id, i;
	struct bpf_func_info *funcs = NULL;
	struct bpf_insn *insns = NULL;
	struct btf *btf = NULL;
	int fd = bpf_program__fd(prog), c, err;

	/* The sizes first, then the instructions and the functions' places. */
	err = bpf_prog_get_info_by_fd(fd, &info, &len);
	if (err)
		return err;
	nr_funcs = info.nr_func_info;
	xlated = info.xlated_prog_len;
	btf_id = info.btf_id;
	insns = calloc(xlated, 1);
	funcs = calloc(nr_funcs, sizeof(*funcs));
	if (!insns || !funcs) {
		err = -ENOMEM;
		goto out;
	}
	memset(&info, 0, sizeof(info));
	info.xlated_prog_len = xlated;
	info.xlated_prog_insns = (__u64)(unsigned long)insns;
	info.nr_func_info = nr_funcs;
	info.func_info_rec_size = sizeof(*funcs);
	info.func_info = (__u64)(unsigned long)funcs;
	len = sizeof(info);
	err = bpf_prog_get_info_by_fd(fd, &info, &len);
	if (err)
		goto out;
	btf = btf__load_from_kernel_by_id(btf_id);
	if (!btf) {
		err = -errno;
		goto out;
	}
	for (c = 0; c < WALK_CASES; c++) {
		const char *func = walk_funcs[c].func;
		long from = -1, to = 0, end = xlated / sizeof(*insns), at;
		unsigned int trip;

		if (!func)
			continue;
		for (i = 0; i < nr_funcs; i++) {
			const struct btf_type *t = btf__type_by_id(btf, funcs[i].type_id);

			if (t && !strcmp(btf__name_by_offset(btf, t->name_off), func)) {
				from = funcs[i].insn_off;
				to = func_end(funcs, nr_funcs, i, end);
				break;
			}
		}
		if (from < 0)
			continue;	/* not in this program (the kfunc's walk) */
		trip = loop_trip(insns, from, to);
		/*
		 * Not inlined: the walk is a function this one calls. The dump
		 * names the callee by its index (imm) once the program is JITed,
		 * by its offset (imm) otherwise.
		 */
		for (at = from; !trip && at < to; at++) {
			if (insns[at].code != (BPF_JMP | BPF_CALL) ||
			    insns[at].src_reg != BPF_PSEUDO_CALL)
				continue;
			for (i = 0; i < nr_funcs && !trip; i++)
				if (i == (__u32)insns[at].imm || funcs[i].insn_off == at + 1 + insns[at].imm)
					trip = loop_trip(insns, funcs[i].insn_off,
							 func_end(funcs, nr_funcs, i, end));
		}
		if (!trip) {
			bench_wrong(b, "walk insns: no loop found in %s", func);
			continue;
		}
		bench_sample(bench_row(b, "walk-insns", walk_names[c], walk_funcs[c].nodes_per_trip,
				       "nodes a trip", "BPF insns/node", WALK_INSNS_SOURCE),
			     (double)trip / walk_funcs[c].nodes_per_trip);
		if (c == WALK_LIB_COUNT)
			bench_count(b, "walk: ak_list_count, BPF insns a node (xlated)",
				    (double)trip / walk_funcs[c].nodes_per_trip, "BPF insns/node",
				    BENCH_AT_MOST, 5.0);
	}
out:
	btf__free(btf);
	free(funcs);
	free(insns);
	return err;
}
