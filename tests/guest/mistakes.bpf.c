// SPDX-License-Identifier: GPL-2.0
/*
 * The mistakes a user meets first, each a program the verifier refuses;
 * tests/guest/mistakes.c loads each alone and checks the message the
 * README's troubleshooting section quotes.
 */
#include <arenakit/alloc.h>
#include <arenakit/glob.h>
#include <arenakit/list.h>

struct item {
	struct ak_list_node node;
	char name[32];
};

struct ak_list __arena_global items;
char __arena_global patterns[4][16] = { "*.c", "*.[ch]", "[!a-z]*", "*/*" };

/* ak_alloc takes pages from the kernel: sleepable programs only. */
SEC("tc")
int alloc_in_tc(struct __sk_buff *skb)
{
	return ak_alloc(64) ? 1 : 0;
}

/*
 * Not a mistake: the matcher inlined into a walk, four patterns a node,
 * verifies far within the verifier's 1M-instruction limit ("BPF program is
 * too large"), in about 19,000; tests/guest/mistakes.c keeps it there.
 */
SEC("syscall")
int match_inline_in_a_walk(void *ctx)
{
	struct item __arena *it;
	int hits = 0, j;

	ak_list_for_each_entry(it, &items, node)
		for (j = ak_opaque_zero(); j < 4 && can_loop; j++)
			hits += ak_glob_match(patterns[j & 3], it->name) == 1;
	return hits;
}

struct pair {
	unsigned long long a, b, c, d;
};

struct pair __arena *__arena_global last;

/*
 * Zeroing neighbouring arena fields: clang-19 merges the stores into a
 * memset, which it lowers without the arena address cast.
 * ak_arena_store_barrier() between the stores is the fix.
 */
SEC("syscall")
int zero_neighbours(void *ctx)
{
	struct pair __arena *p = last;

	if (!p)
		return 0;
	p->a = 0;
	p->b = 0;
	p->c = 0;
	p->d = 0;
	return 0;
}

char _license[] SEC("license") = "GPL";
