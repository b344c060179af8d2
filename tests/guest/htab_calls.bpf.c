// SPDX-License-Identifier: GPL-2.0
/*
 * htab.h's calls under the real verifier, on a real arena, each test a
 * program that runs alone (test_*): flags and errors, an update in a long
 * chain, the whole-table check, a walk that deletes as it goes, the walk
 * with a callback, and a chain forced long that makes the table reseed. htab.bpf.c has the programs tests/guest/htab.c
 * drives.
 */
#include "guest/htab_test_hash.h"
#define AK_ARENA_PAGES 262144	/* 1 GiB of address space, taken as used */
#define AK_HTAB_PROG_MAX_KEY 16	/* the longest key its tables take */
#include <arenakit/htab.h>
#include "guest/bpf_test.h"
#include "htab_calls_shared.h"

struct key16 {
	__u64 a, b;
};

struct ak_htab __arena_global table;	/* 4-byte keys, 8-byte values */
struct ak_htab __arena_global table16;	/* 16-byte keys, 8-byte values */

#define FILL_CHUNK 64

/* Keys [first, first + n) into table, values k * mul: 0, or -1. */
static __noinline int fill_chunk(__u32 first, __u32 n, __u64 mul)
{
	__u64 v;
	__u32 k;

	for (k = first + (__u32)ak_opaque_zero(); k < first + n && can_loop; k++) {
		v = k * mul;
		if (ak_htab_update(&table, &k, &v, AK_HTAB_NOEXIST))
			return -1;
	}
	return k == first + n ? 0 : -1;
}

/*
 * Keys 0..n-1 into table, values k * mul, FILL_CHUNK keys a frame: on a
 * kernel that bounds may_goto by time, a frame reads the clock only after
 * 256 steps, so a chunk's inserts are done long before its budget and the
 * loop here takes a step a chunk. A busy host slows the fill, never cuts
 * it. 0, or -1.
 */
static int fill_table(__u32 n, __u64 mul)
{
	__u32 first;

	for (first = ak_opaque_zero(); first < n && can_loop; first += FILL_CHUNK)
		if (fill_chunk(first, n - first < FILL_CHUNK ? n - first : FILL_CHUNK, mul))
			return -1;
	return first >= n ? 0 : -1;
}

SEC("syscall")
int test_htab_flags_and_errors(void *ctx)
{
	__u32 k = 7, absent = 8;
	__u64 v = 70, got = 0;
	__u64 __arena *p;
	int err = 0;

	test_expect_eq(ak_htab_init(&table, sizeof(k), sizeof(v), 16), 0);
	test_expect(!ak_htab_lookup(&table, &k, &err));
	test_expect_eq(err, -ENOENT);
	test_expect_eq(ak_htab_update(&table, &k, &v, AK_HTAB_EXIST), -ENOENT);
	test_expect_eq(ak_htab_update(&table, &k, &v, AK_HTAB_NOEXIST), 0);
	test_expect_eq(ak_htab_update(&table, &k, &v, AK_HTAB_NOEXIST), -EEXIST);
	v = 0;
	test_expect_eq(ak_htab_update(&table, &k, &v, AK_HTAB_EXIST), 0);
	p = ak_htab_lookup(&table, &k, &err);
	test_expect(p);
	test_expect_eq(*p, 0);	/* a stored 0 is a value, not "missing" */
	test_expect_eq(ak_htab_delete(&table, &absent), -ENOENT);
	test_expect_eq(ak_htab_lookup_and_delete(&table, &k, &got), 0);
	test_expect_eq(ak_htab_count(&table), 0);
	test_expect_eq(ak_htab_destroy(&table), 0);
	test_expect_eq(test_live_objects(), 0);
	return 0;
}

/*
 * An update of one key in a long chain keeps every other key of the chain
 * (the 6.12 selftests' arena hash table drops the chain's rest).
 */
SEC("syscall")
int test_htab_long_chain_update_keeps_every_key(void *ctx)
{
	struct key16 k;
	__u64 v;
	__u64 __arena *p;
	int i, err = 0;

	one_chain = 1;
	test_expect_eq(ak_htab_init(&table16, sizeof(k), sizeof(v), 1024), 0);
	for (i = ak_opaque_zero(); i < 63 && can_loop; i++) {
		k.a = i;
		k.b = ~(__u64)i;
		v = i;
		test_expect_eq(ak_htab_update(&table16, &k, &v, AK_HTAB_NOEXIST), 0);
	}
	k.a = 31;
	k.b = ~31ULL;
	v = 3100;
	test_expect_eq(ak_htab_update(&table16, &k, &v, AK_HTAB_ANY), 0);
	for (i = ak_opaque_zero(); i < 63 && can_loop; i++) {
		k.a = i;
		k.b = ~(__u64)i;
		p = ak_htab_lookup(&table16, &k, &err);
		if (!p)
			return test_fail("key %d lost: %d", i, err);
		test_expect_eq(*p, i == 31 ? 3100 : i);
	}
	test_expect_eq(ak_htab_count(&table16), 63);
	one_chain = 0;
	return 0;
}

/* The whole-table check: sound, a node in the wrong chain, a chain that cycles. */
struct ak_htab __arena_global checked;

SEC("syscall")
int test_htab_check_all_finds_a_wrong_chain_and_a_cycle(void *ctx)
{
	struct ak_htab_node __arena *bad = 0, *first, *next;
	unsigned long long b;
	__u32 k;
	__u64 v = 1;
	int i;

	test_expect_eq(ak_htab_init(&checked, sizeof(k), sizeof(v), 1024), 0);
	for (i = ak_opaque_zero(); i < 1000 && can_loop; i++) {
		k = i;
		test_expect_eq(ak_htab_update(&checked, &k, &v, AK_HTAB_NOEXIST), 0);
	}
	test_expect_eq(ak_htab_check_all(&checked, &bad), 0);
	for (b = ak_opaque_zero(); b < checked.cur->nbuckets && can_loop; b++)
		if (checked.cur->buckets[b])
			break;
	first = __ak_htab_node_of(checked.cur->buckets[b & (checked.cur->nbuckets - 1)]);
	test_expect(first);
	if (!first)
		return 1;
	first->hash ^= 1;	/* now it is not its key's hash */
	test_expect_eq(ak_htab_check_all(&checked, &bad), -EINVAL);
	test_expect(bad == first);
	first->hash ^= 1;
	next = first->next;
	first->next = first;	/* a chain that never ends */
	test_expect_eq(ak_htab_check_all(&checked, &bad), -ELOOP);
	first->next = next;
	test_expect_eq(ak_htab_check_all(&checked, &bad), 0);
	for (i = ak_opaque_zero(); i < 64 && can_loop; i++)
		if (ak_htab_destroy(&checked) != -AK_EBUDGET)
			break;
	return 0;
}

/* A walk over every entry, deleting odd keys as it goes; a stale cursor. */
char __arena_global seen[1000];

SEC("syscall")
int test_htab_walk_and_delete_current(void *ctx)
{
	struct ak_htab_cursor c = {};
	void __arena *key;
	void __arena *value;
	__u32 k, n = ak_opaque_zero();
	__u64 v;
	int err;

	test_expect_eq(ak_htab_init(&table, sizeof(k), sizeof(v), 16), 0);
	test_expect_eq(fill_table(1000, 3), 0);
	/* 1000 entries in 16-bucket steps: the last growth may still be going. */
	while ((err = ak_htab_next(&table, &c, &key, &value)) == 0 && can_loop) {
		k = *(__u32 __arena *)key;
		if (k >= 1000)
			return test_fail("key %u was never inserted", k);
		if (seen[k]++)
			return test_fail("key %u walked twice", k);
		test_expect_eq(*(__u64 __arena *)value, k * 3);
		if (k & 1)
			test_expect_eq(ak_htab_delete_current(&table, &c), 0);
		n++;
	}
	test_expect_eq(err, -ENOENT);
	test_expect_eq(n, 1000);
	test_expect_eq(ak_htab_count(&table), 500);
	n = ak_opaque_zero();
	while ((err = ak_htab_next(&table, &c, &key, &value)) == 0 && can_loop) {
		test_expect_eq(*(__u32 __arena *)key & 1, 0);
		n++;
	}
	test_expect_eq(err, -ENOENT);
	test_expect_eq(n, 500);
	/* A change the walk did not make leaves its cursor stale. */
	test_expect_eq(ak_htab_next(&table, &c, &key, &value), 0);
	k = 1;
	v = 1;
	test_expect_eq(ak_htab_update(&table, &k, &v, AK_HTAB_NOEXIST), 0);
	test_expect_eq(ak_htab_next(&table, &c, &key, &value), -AK_ESTALE);
	test_expect_eq(ak_htab_delete_current(&table, &c), -AK_ESTALE);
	test_expect_eq(ak_htab_next(&table, &c, &key, &value), 0);	/* a new walk */
	test_expect_eq(ak_htab_destroy(&table), 0);
	test_expect_eq(test_live_objects(), 0);
	return 0;
}

/* AK_HTAB_DEFINE_EACH_ALL: sum the values, stop (1) at the key ->stop. */
struct each_sum __arena_global each_state;

static __always_inline long long sum_value(void __arena *key, void __arena *value,
					   void __arena *ctx)
{
	struct each_sum __arena *st = ctx;
	__u64 i;

	for (i = ak_opaque_zero(); i < st->work && can_loop; i++)
		ak_barrier_var(i);
	st->sum += *(__u64 __arena *)value;
	st->visited++;
	st->last = *(__u32 __arena *)key;
	return st->last == st->stop;
}

AK_HTAB_DEFINE_EACH_ALL(sum_values, sum_value);


SEC("syscall")
int test_htab_each_all(void *ctx)
{
	__u32 k;
	__u64 v;

	test_expect_eq(ak_htab_init(&table, sizeof(k), sizeof(v), 16), 0);
	test_expect_eq(fill_table(3000, 7), 0);
	each_state.want = 7ULL * 2999 * 3000 / 2;	/* 7 x (0 + 1 + ... + 2999) */
	ak_arena_store_barrier();
	/*
	 * 3000 x 100,000 steps: more than a frame's budget, count or 250 ms.
	 * The chunks, each a frame, take them; this frame takes a step per
	 * chunk, a few, and the budget's first check comes later.
	 */
	each_state.work = 100000;
	ak_arena_store_barrier();	/* no merged, uncast memset (README) */
	each_state.stop = ~0ULL;
	ak_arena_store_barrier();
	each_state.sum = 0;
	ak_arena_store_barrier();
	each_state.visited = 0;
	test_expect_eq(sum_values(&table, &each_state), 0);
	test_expect_eq(each_state.visited, 3000);
	test_expect_eq(each_state.sum, each_state.want);
	/* The callback stops the walk: its value comes back. */
	each_state.stop = 1234;
	each_state.work = 0;
	ak_arena_store_barrier();
	each_state.visited = 0;
	test_expect_eq(sum_values(&table, &each_state), 1);
	test_expect_eq(each_state.last, 1234);	/* no entry after it */
	test_expect_eq(ak_htab_destroy(&table), 0);
	return 0;
}

/*
 * A reseed: keys chosen under the table's seeds to share one bucket (as
 * one who learnt the collisions would choose them) make the insert that
 * finds the chain past AK_HTAB_CHAIN_MAX ask for a reseed; the next
 * sleepable update starts it (h->reseeds counts it), into an array as
 * large under new seeds. Writes move it on, inserts and deletes among them,
 * and after each, every key is looked up, present or deleted; at its end
 * the table is sound and the chain spread.
 */
#define RESEED_OTHERS 100
#define RESEED_CHAIN (AK_HTAB_CHAIN_MAX + 2)
#define RESEED_KEYS 512

struct ak_htab __arena_global reseeded;	/* 4-byte keys, 8-byte values */
__u32 reseed_keys[RESEED_KEYS];
__u8 reseed_present[RESEED_KEYS];
int reseed_nkeys;

static __u64 reseed_bucket(struct __ak_htab_table __arena *t, __u32 k)
{
	__u64 w = k;

	return __ak_htab_pms(t, &w, 1) >> t->shift;
}

/*
 * @i as an index the verifier can bound: hidden from clang, then masked;
 * else clang drops a mask it knows is no-op (i < RESEED_KEYS, a % result)
 * or walks the array with a pointer of its own, neither bounded.
 */
static __always_inline unsigned int reseed_index(unsigned int i)
{
	ak_barrier_var(i);
	return i & (RESEED_KEYS - 1);
}

static int reseed_add(__u32 k)
{
	__u64 v = k * 3ULL;
	unsigned int i = reseed_nkeys;

	if (i >= RESEED_KEYS)
		return -1;
	reseed_keys[i] = k;
	reseed_present[i] = 1;
	reseed_nkeys = i + 1;
	return ak_htab_update(&reseeded, &k, &v, AK_HTAB_NOEXIST);
}

/*
 * Every key looked up as reseed_present says: 0, or the failing key's index
 * + 1. Weak, so that no compiler narrows its result from the body and drops
 * the callers' mask, which the verifier needs to bound the index.
 */
__weak __noinline int reseed_check_keys(void)
{
	__u64 __arena *p;
	unsigned int i, j;
	__u32 k;
	int err;

	for (i = ak_opaque_zero(); i < (unsigned int)reseed_nkeys && i < RESEED_KEYS && can_loop; i++) {
		j = reseed_index(i);
		k = reseed_keys[j];
		err = 0;
		p = ak_htab_lookup(&reseeded, &k, &err);
		if (reseed_present[j] ? !p || *p != k * 3ULL : p || err != -ENOENT)
			return i + 1;
	}
	return 0;
}

/*
 * The steps are global functions, each verified once on its own: the
 * test's loops call them, so the verifier does not walk every call's
 * inlined body again for each state of those loops.
 */
__noinline int reseed_fill(void)
{
	struct __ak_htab_table __arena *first;
	__u64 target, v = 0;
	int i, chain = 0;
	__u32 k;

	reseed_nkeys = 0;
	test_expect_eq(ak_htab_init(&reseeded, sizeof(k), sizeof(v), 256), 0);
	first = reseeded.cur;
	if (!first)
		return test_fail("no bucket array");
	for (i = ak_opaque_zero(); i < RESEED_OTHERS && can_loop; i++)
		test_expect_eq(reseed_add((i + 1) * 2654435761u), 0);
	/* An empty bucket: the chain is the chosen keys' alone. */
	for (target = ak_opaque_zero(); target < 255 && first->buckets[target] && can_loop; target++)
		;
	for (k = 1000000 + ak_opaque_zero(); chain < RESEED_CHAIN && k < 1100000 && can_loop; k++) {
		if (reseed_bucket(first, k) != target)
			continue;
		test_expect_eq(reseed_add(k), 0);
		chain++;
	}
	test_expect_eq(chain, RESEED_CHAIN);
	return 0;
}

/* One write of the reseed (an insert, a delete of a chain key, or an update), then every key. */
__noinline int reseed_step(unsigned int step)
{
	unsigned int i = reseed_index(RESEED_OTHERS + step % RESEED_CHAIN);
	__u64 v;
	__u32 k;
	int bad;

	if (step % 3 == 0) {
		test_expect_eq(reseed_add(3000000 + step), 0);
	} else if (step % 3 == 1 && reseed_present[i]) {
		k = reseed_keys[i];
		test_expect_eq(ak_htab_delete(&reseeded, &k), 0);
		reseed_present[i] = 0;
	} else {
		k = reseed_keys[reseed_index(step % RESEED_OTHERS)];
		v = k * 3ULL;
		test_expect_eq(ak_htab_update(&reseeded, &k, &v, AK_HTAB_ANY), 0);
	}
	bad = reseed_check_keys();
	if (bad)
		return test_fail("step %u of the reseed: key %u", step,
				 reseed_keys[(bad - 1) & (RESEED_KEYS - 1)]);
	return 0;
}

/* Nodes in bucket @b of the current array: a global function, its loop verified alone. */
__weak __noinline int reseed_chain_length(__u64 b)
{
	struct ak_htab_node __arena *node;
	int n = 0;

	if (!reseeded.cur || b >= reseeded.cur->nbuckets)
		return 0;
	for (node = __ak_htab_node_of(reseeded.cur->buckets[b]); node && can_loop; node = node->next)
		n++;
	return n;
}

/* The reseed over: the table sound, the chain spread, then destroyed. */
__noinline int reseed_finish(void)
{
	__u64 b;
	int i, n, longest = 0;

	test_expect(!reseeded.old);
	test_expect_eq(reseeded.reseeds, 1);
	test_expect_eq(ak_htab_check_all(&reseeded, 0), 0);
	for (b = ak_opaque_zero(); reseeded.cur && b < reseeded.cur->nbuckets && can_loop; b++) {
		n = reseed_chain_length(b);
		longest = n > longest ? n : longest;
	}
	test_expect(longest < AK_HTAB_CHAIN_MAX);
	for (i = ak_opaque_zero(); i < 64 && can_loop; i++)
		if (ak_htab_destroy(&reseeded) != -AK_EBUDGET)
			break;
	return 0;
}

SEC("syscall")
int test_htab_forced_chain_reseeds_and_lookups_hold(void *ctx)
{
	struct __ak_htab_table __arena *first;
	unsigned int step;
	int err, bad;
	__u64 v;
	__u32 k;

	err = reseed_fill();
	if (err)
		return err;
	first = reseeded.cur;
	test_expect_eq(reseeded.reseed_wanted, 1);
	test_expect_eq(reseeded.reseeds, 0);
	test_expect(!reseeded.old);
	bad = reseed_check_keys();
	if (bad)
		return test_fail("the chain long: key %u", reseed_keys[(bad - 1) & (RESEED_KEYS - 1)]);

	/* The next sleepable update starts it. */
	k = reseed_keys[0];
	v = k * 3ULL;
	test_expect_eq(ak_htab_update(&reseeded, &k, &v, AK_HTAB_EXIST), 0);
	test_expect_eq(reseeded.reseeds, 1);
	test_expect(reseeded.old == first);
	test_expect_eq(reseeded.cur->nbuckets, 256);
	for (step = ak_opaque_zero(); reseeded.old && step < 400 && can_loop; step++) {
		err = reseed_step(step);
		if (err)
			return err;
	}
	return reseed_finish();
}

char _license[] SEC("license") = "GPL";
