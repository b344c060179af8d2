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
	return ak_alloc(64, NULL) ? 1 : 0;
}

/*
 * Not a mistake: ak_glob_match() in a walk, four patterns a node. Each
 * match is a call of the global ak_glob_match_len(), verified once, so the
 * walk stays far within the verifier's 1M-instruction limit ("BPF program
 * is too large"); tests/guest/mistakes.c keeps it there and prints its count.
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

/*
 * A counter that starts from the constant 0 in a walk and decides a
 * branch: the verifier knows its value, so each pass is a state it has not
 * seen (1, 2, 3... matches), none is pruned, and the branches it has yet to
 * follow pile up until "The sequence of 8193 jumps is too complex". From
 * ak_opaque_zero() the count is a number it does not know, the same in
 * every pass, and the walk verifies in a few passes.
 */
#define COUNT_UP_TO_A_LIMIT(start)					\
	({								\
		struct item __arena *it;				\
		int hits = (start);					\
									\
		ak_list_for_each_entry(it, &items, node) {		\
			if (it->name[0] != 'a')				\
				continue;				\
			if (++hits == 1000000)			\
				break;	/* enough */			\
		}							\
		hits;							\
	})

SEC("syscall")
int count_from_constant_zero(void *ctx)
{
	return COUNT_UP_TO_A_LIMIT(0);
}

SEC("syscall")
int count_from_opaque_zero(void *ctx)
{
	return COUNT_UP_TO_A_LIMIT(ak_opaque_zero());
}

/*
 * A struct copied from arena to arena: clang-19 turns it into a memcpy that
 * it lowers without the arena address cast, as it does merged stores of
 * zero ("invalid mem access 'scalar'"). Copying word by word through
 * volatile arena pointers keeps each load and store (and its cast).
 */
SEC("syscall")
int copy_arena_struct(void *ctx)
{
	struct pair __arena *p = last;

	if (!p)
		return 0;
	p[1] = p[0];
	return 0;
}

SEC("syscall")
int copy_arena_struct_by_words(void *ctx)
{
	volatile unsigned long long __arena *from = (void __arena *)last;
	volatile unsigned long long __arena *to = (void __arena *)(last + 1);
	unsigned int i;

	if (!last)
		return 0;
	for (i = 0; i < sizeof(struct pair) / 8; i++)
		to[i] = from[i];
	return 0;
}

char _license[] SEC("license") = "GPL";
