// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * list.h's walks, verified and run in the guest, cut at every budget check
 * (tests/guest/list_cut.bpf.c) and resumed until they end: the answers of
 * uncut walks, and every cut at a group's start on a node not yet visited.
 * The host runs the same cuts on the headers built natively
 * (tests/host/list_cut_host.c).
 */
#include <arenakit/alloc.h>
#include <arenakit/list.h>
#include "guest/guest.h"
#include "list_cut.skel.h"

#define MAX_NODES (3 * AK_LIST_GROUP + 1)

static struct list_cut *skel;

static void setup(void)
{
	skel = list_cut__open();
	cr_assert(skel);
	cr_assert_eq(arenakit_load_skeleton(skel->skeleton), 0);
}

static void teardown(void)
{
	list_cut__destroy(skel);
}

static void run(const struct bpf_program *prog)
{
	int retval, ret = ak_run(prog, NULL, 0, &retval) ?: retval;

	cr_assert_eq(ret, 0, "%s: %d", bpf_program__name(prog), ret);
}

static void build(int nodes)
{
	skel->bss->nodes = nodes;
	run(skel->progs.build);
}

/*
 * Run @prog, which walks from the cursor, until it is not cut; each cut
 * must leave the cursor at a group's start, past the last one, on the node
 * holding that position. Returns the walk's result.
 */
static long long walk_until_done(const struct bpf_program *prog, int nodes, int groups,
				 int from_head)
{
	long long last_seen = -1;
	int runs;

	skel->bss->cut_groups = groups;
	for (runs = 0; runs <= MAX_NODES + 1; runs++) {
		run(prog);
		if (skel->bss->result != -AK_EBUDGET)
			return skel->bss->result;
		cr_assert_eq(skel->bss->cursor_seen % AK_LIST_GROUP, 0, "%s cut inside a group, at %lld",
			     bpf_program__name(prog), skel->bss->cursor_seen);
		cr_assert_gt(skel->bss->cursor_seen, last_seen, "%s did not go on",
			     bpf_program__name(prog));
		cr_assert_lt(skel->bss->cursor_seen, nodes + 1);
		/* A check resumes from the node whose next link it checks next. */
		if (from_head && !skel->bss->cursor_seen)
			cr_assert_eq(skel->bss->cursor_key, -2);
		else
			cr_assert_eq(skel->bss->cursor_key,
				     skel->bss->cursor_seen - (from_head ? 1 : 0),
				     "%s: cursor on node %lld after %lld nodes",
				     bpf_program__name(prog), skel->bss->cursor_key,
				     skel->bss->cursor_seen);
		last_seen = skel->bss->cursor_seen;
	}
	cr_assert_fail("%s never ended", bpf_program__name(prog));
	return 0;
}

TestSuite(list_cut, .init = setup, .fini = teardown, .timeout = 300);

Test(list_cut, count_find_and_check_resume_exactly_from_every_cut)
{
	int n, groups, key, broken;
	long long got;

	for (n = 0; n <= MAX_NODES; n++)
		for (groups = 1; groups <= n / AK_LIST_GROUP + 1; groups++) {
			build(n);
			got = walk_until_done(skel->progs.count_cut, n, groups, 0);
			cr_expect_eq(got, n, "count: %d nodes, cut every %d groups: %lld", n, groups,
				     got);
			for (key = 0; key <= n; key++) {	/* key n: no node has it */
				build(n);
				skel->bss->key = key;
				got = walk_until_done(skel->progs.find_cut, n, groups, 0);
				cr_expect_eq(got, 0);
				cr_expect_eq(skel->bss->answer_key, key < n ? key : -1,
					     "find: %d nodes, key %d, cut every %d groups: %lld", n,
					     key, groups, skel->bss->answer_key);
			}
			for (broken = -1; broken < n; broken++) {	/* -1: sound */
				build(n);
				skel->bss->broken = broken;
				if (broken >= 0)
					run(skel->progs.break_node);
				got = walk_until_done(skel->progs.check_cut, n, groups, 1);
				cr_expect_eq(got, broken < 0 ? 0 : -EINVAL,
					     "check: %d nodes, node %d broken, cut every %d groups: %lld",
					     n, broken, groups, got);
				if (broken >= 0)
					cr_expect_eq(skel->bss->answer_key, broken);
			}
		}
}
