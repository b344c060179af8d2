// SPDX-License-Identifier: GPL-2.0
/*
 * htab.h under the real verifier, on a real arena. The test_* programs run
 * alone; the others are driven by tests/guest/htab.c: batches of random
 * operations checked against a model in user space, four CPUs writing at
 * once, a program of a non-sleepable type, and an arena that runs out.
 */
int one_chain;	/* force every key into one chain (the lost-update case) */

#define AK_HTAB_TEST_HASH(h, key)					\
	(one_chain ? 0x5eedULL : __ak_siphash((key)->w, (h)->key_size, (h)->seed[0], \
					      (h)->seed[1], 1, 3))
#define AK_ARENA_PAGES 262144	/* 1 GiB of address space, taken as used */
#include <arenakit/htab.h>
#include "guest/bpf_test.h"
#include "htab.h"

struct key16 {
	__u64 a, b;
};

struct ak_htab __arena_global table;	/* 4-byte keys, 8-byte values */
struct ak_htab __arena_global table16;	/* 16-byte keys, 8-byte values */
int zero;

SEC("syscall")
int test_htab_flags_and_errors(void *ctx)
{
	__u32 k = 7, absent = 8;
	__u64 v = 70, got = 0;
	__u64 __arena *p;
	int err = 0;

	ak_expect_eq(ak_htab_init(&table, sizeof(k), sizeof(v), 16), 0);
	ak_expect(!ak_htab_lookup(&table, &k, &err));
	ak_expect_eq(err, -ENOENT);
	ak_expect_eq(ak_htab_update(&table, &k, &v, AK_HTAB_EXIST), -ENOENT);
	ak_expect_eq(ak_htab_update(&table, &k, &v, AK_HTAB_NOEXIST), 0);
	ak_expect_eq(ak_htab_update(&table, &k, &v, AK_HTAB_NOEXIST), -EEXIST);
	v = 0;
	ak_expect_eq(ak_htab_update(&table, &k, &v, AK_HTAB_EXIST), 0);
	p = ak_htab_lookup(&table, &k, &err);
	ak_expect(p);
	ak_expect_eq(*p, 0);	/* a stored 0 is a value, not "missing" */
	ak_expect_eq(ak_htab_delete(&table, &absent), -ENOENT);
	ak_expect_eq(ak_htab_lookup_and_delete(&table, &k, &got), 0);
	ak_expect_eq(ak_htab_count(&table), 0);
	ak_expect_eq(ak_htab_destroy(&table), 0);
	ak_expect_eq(ak_allocator.stats.objects, 0);
	return 0;
}

/* The selftests' demo lost the rest of a chain when one key in it was updated. */
SEC("syscall")
int test_htab_long_chain_update_keeps_every_key(void *ctx)
{
	struct key16 k;
	__u64 v;
	__u64 __arena *p;
	int i, err = 0;

	one_chain = 1;
	ak_expect_eq(ak_htab_init(&table16, sizeof(k), sizeof(v), 1024), 0);
	for (i = zero; i < 63 && can_loop; i++) {
		k.a = i;
		k.b = ~(__u64)i;
		v = i;
		ak_expect_eq(ak_htab_update(&table16, &k, &v, AK_HTAB_NOEXIST), 0);
	}
	k.a = 31;
	k.b = ~31ULL;
	v = 3100;
	ak_expect_eq(ak_htab_update(&table16, &k, &v, AK_HTAB_ANY), 0);
	for (i = zero; i < 63 && can_loop; i++) {
		k.a = i;
		k.b = ~(__u64)i;
		p = ak_htab_lookup(&table16, &k, &err);
		if (!p)
			return ak_test_fail("key %d lost: %d", i, err);
		ak_expect_eq(*p, i == 31 ? 3100 : i);
	}
	ak_expect_eq(ak_htab_count(&table16), 63);
	one_chain = 0;
	return 0;
}

/* Batches of operations from user space; results in the arena. */
struct htab_op __arena_global ops[HTAB_MAX_OPS];
long long __arena_global results[HTAB_MAX_OPS];
unsigned int nops, next_op;

SEC("syscall")
int init_table(void *ctx)
{
	return ak_htab_init(&table, sizeof(__u32), sizeof(__u64), 16);
}

SEC("syscall")
int run_ops(void *ctx)
{
	unsigned int i = next_op + (unsigned int)zero;
	__u64 __arena *p;
	__u64 v;
	__u32 k;
	int err;

	while (i < nops && i < HTAB_MAX_OPS) {
		ak_cond_break_label(cut);
		k = ops[i].key;
		v = ops[i].value;
		err = 0;
		switch (ops[i].kind) {
		case HTAB_OP_INSERT:
			err = ak_htab_update(&table, &k, &v, AK_HTAB_NOEXIST);
			break;
		case HTAB_OP_UPDATE:
			err = ak_htab_update(&table, &k, &v, AK_HTAB_EXIST);
			break;
		case HTAB_OP_DELETE:
			err = ak_htab_delete(&table, &k);
			break;
		default:
			p = ak_htab_lookup(&table, &k, &err);
			if (p) {
				results[i] = *p;
				i++;
				continue;
			}
			break;
		}
		results[i] = err;
		i++;
	}
	next_op = i;
	return 0;
cut:
	next_op = i;
	return -AK_EBUDGET;
}

/*
 * Four CPUs at once: each inserts its own keys, then deletes its odd ones.
 * A bucket lock that stays busy is -EBUSY by contract (a vCPU holding it
 * may be descheduled by the host; with four vCPUs on two host cores the
 * spinning ones starve it): the writer tries again, as users must,
 * and counts it; any other error is a failure.
 */
static int retry_busy(struct htab_churn_args *args, __u32 k, int insert)
{
	__u64 v = k;
	int err = -EBUSY, tries;

	for (tries = zero; tries < 100000 && err == -EBUSY && can_loop; tries++) {
		err = insert ? ak_htab_update(&table, &k, &v, AK_HTAB_NOEXIST) :
			       ak_htab_delete(&table, &k);
		if (err == -EBUSY)
			args->busy++;
	}
	if (err) {
		args->errors++;
		args->last_error = err;
	}
	return err;
}

SEC("syscall")
int cpu_churn(struct htab_churn_args *args)
{
	__u32 first = args->first, n = args->count, i;

	for (i = first + (__u32)zero; i < first + n && can_loop; i++)
		retry_busy(args, i, 1);
	for (i = first + (__u32)zero; i < first + n && can_loop; i++)
		if (i & 1)
			retry_busy(args, i, 0);
	return 0;
}

SEC("syscall")
int maintain(void *ctx)
{
	return ak_htab_maintain(&table);
}

SEC("syscall")
int reserve_pool(void *ctx)
{
	return ak_htab_reserve(&table, 1024);
}

/* What a networking program does: count packets per key, from the pool. */
SEC("tc")
int tc_count(struct __sk_buff *skb)
{
	__u32 k = skb->len;
	__u64 one = 1;
	__u64 __arena *count;
	int err = 0;

	count = ak_htab_lookup(&table, &k, &err);
	if (count) {
		__sync_fetch_and_add(count, 1);
		return 0;
	}
	err = ak_htab_update_nosleep(&table, &k, &one, AK_HTAB_NOEXIST);
	return err == -EEXIST ? 0 : -err;
}

SEC("syscall")
int destroy_table(void *ctx)
{
	int err = ak_htab_destroy(&table);

	return err ?: ak_alloc_trim();
}

char _license[] SEC("license") = "GPL";
