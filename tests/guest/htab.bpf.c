// SPDX-License-Identifier: GPL-2.0
/*
 * htab.h under the real verifier, on a real arena: the programs
 * tests/guest/htab.c drives. Batches of random operations checked against
 * a model in user space, four CPUs writing at once, a program of a
 * non-sleepable type, and an arena that runs out. The tests that run alone
 * are in htab_calls.bpf.c.
 */
#include "guest/htab_test_hash.h"
#define AK_ARENA_PAGES 262144	/* 1 GiB of address space, taken as used */
#define AK_HTAB_PROG_MAX_KEY 8	/* the longest key its tables take */
#include <arenakit/htab.h>
#include "guest/bpf_test.h"
#include "htab_shared.h"

struct ak_htab __arena_global table;	/* 4-byte keys, 8-byte values */

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
	unsigned int i = next_op + (unsigned int)ak_opaque_zero();
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
 * spinning ones starve it). As lock.h advises, the writer tries a few
 * times, then returns, and user space runs it again from where it stopped
 * (args->done); any other error is a failure.
 */
#define BUSY_TRIES 64
/*
 * Steps one run of the CPU programs below takes before it returns
 * -AK_EBUDGET to be run again. The loop budget alone would let a run go on
 * for 8,388,608 steps (the stock count) of table writes or lookups: tens of
 * seconds on a CPU that, in a kernel without preemption, nothing else gets
 * (a soft lockup under TCG on a busy host). The library's contract is the
 * same: come back, do not hold the CPU.
 */
#define RUN_STEPS 4096

/* One write, tried again while -EBUSY, a few times: 0, -EBUSY, or counted. */
static int retry_busy(struct htab_churn_args *args, __u32 k, int insert)
{
	__u64 v = k;
	int err = -EBUSY, tries;

	for (tries = ak_opaque_zero(); tries < BUSY_TRIES && err == -EBUSY && can_loop; tries++) {
		err = insert ? ak_htab_update(&table, &k, &v, AK_HTAB_NOEXIST) :
			       ak_htab_delete(&table, &k);
		if (err == -EBUSY)
			args->busy++;
	}
	if (err && err != -EBUSY) {
		args->errors++;
		args->last_error = err;
	}
	return err;
}

/* -AK_EBUDGET to be run again (busy, or cut), 0 when all is done. */
SEC("syscall")
int cpu_churn(struct htab_churn_args *args)
{
	__u32 first = args->first, n = args->count, step, i, stop = args->done + RUN_STEPS;

	for (step = args->done + (__u32)ak_opaque_zero(); step < 2 * n && step < stop && can_loop;
	     step++) {
		i = first + (step < n ? step : step - n);
		if (step >= n && !(i & 1))
			continue;	/* deletes: the odd keys only */
		if (retry_busy(args, i, step < n) == -EBUSY)
			break;
	}
	args->done = step;
	return step < 2 * n ? -AK_EBUDGET : 0;
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
	__u64 zero = 0;
	__u64 __arena *count;
	int err = 0;

	count = ak_htab_lookup_or_init(&table, &k, &zero, &err);
	if (!count)
		return -err;
	__sync_fetch_and_add(count, 1);
	return 0;
}

/* Counting on every CPU at once into the same keys (count_keys). */
struct ak_htab __arena_global count_table;

SEC("syscall")
int count_init(void *ctx)
{
	int err = ak_htab_init(&count_table, sizeof(__u32), sizeof(__u64), COUNT_KEYS);

	return err ?: ak_htab_reserve(&count_table, COUNT_KEYS);
}

/* -AK_EBUDGET to be run again (busy, or cut), 0 when all is done. */
SEC("syscall")
int count_keys(struct htab_count_args *args)
{
	__u32 step, stop = args->done + RUN_STEPS, k;
	__u64 zero = 0;
	__u64 __arena *count;
	int err;

	for (step = args->done + (__u32)ak_opaque_zero(); step < args->steps && step < stop &&
	     can_loop; step++) {
		k = step % COUNT_KEYS;
		err = 0;
		count = ak_htab_lookup_or_init(&count_table, &k, &zero, &err);
		if (!count) {
			if (err == -EBUSY) {
				args->busy++;
				break;	/* this step again, next run */
			}
			args->errors++;
			args->last_error = err;
			continue;
		}
		__sync_fetch_and_add(count, 1);
	}
	args->done = step;
	return step < args->steps ? -AK_EBUDGET : 0;
}

/* Tables at their limit, CPUs inserting at once (limit_insert). */
struct ak_htab __arena_global limit_table, lru_table;

SEC("syscall")
int limit_init(void *ctx)
{
	/* Buckets for the limit: neither table grows. */
	int err = ak_htab_init(&limit_table, sizeof(__u32), sizeof(__u64), LIMIT_ENTRIES * 4 / 3);

	err = err ?: ak_htab_set_limit(&limit_table, LIMIT_ENTRIES, 0);
	err = err ?: ak_htab_init(&lru_table, sizeof(__u32), sizeof(__u64), LIMIT_ENTRIES * 4 / 3);
	return err ?: ak_htab_set_limit(&lru_table, LIMIT_ENTRIES, AK_HTAB_LRU);
}

/* -AK_EBUDGET to be run again (busy, or cut), 0 when all is done. */
SEC("syscall")
int limit_insert(struct htab_limit_args *args)
{
	struct ak_htab __arena *t = args->lru ? &lru_table : &limit_table;
	__u32 k, stop = args->first + args->count;
	__u64 v;
	int err;

	for (k = args->first + args->done + (__u32)ak_opaque_zero(); k < stop && can_loop; k++) {
		v = k;
		err = ak_htab_update(t, &k, &v, AK_HTAB_NOEXIST);
		if (err == -EBUSY || err == -AK_EBUDGET) {
			if (err == -EBUSY)
				args->busy++;
			else
				args->cut++;
			break;	/* this key again, next run */
		}
		if (!err)
			args->inserted++;
		else if (err == -E2BIG)
			args->refused++;
		else {
			args->errors++;
			args->last_error = err;
		}
	}
	args->done = k - args->first;
	return k < stop ? -AK_EBUDGET : 0;
}

SEC("syscall")
int limit_check(void *ctx)
{
	return ak_htab_check_all(&limit_table, 0) ?: ak_htab_check_all(&lru_table, 0);
}

/*
 * Readers racing writers on rw_table (u32 keys, struct rw_value values),
 * driven by tests/guest/htab.c. User space sets rw_stop when the writers
 * are done; the readers' rounds tell it they have started.
 */
struct ak_htab __arena_global rw_table;
volatile int rw_stop;
volatile unsigned long long rw_reader_rounds;

SEC("syscall")
int rw_init(void *ctx)
{
	return ak_htab_init(&rw_table, sizeof(__u32), sizeof(struct rw_value), 16);
}

__u32 rw_filled;	/* stable keys in rw_table: rw_fill goes on from here */

/*
 * The stable keys: 0 once all RW_STABLE are in; -AK_EBUDGET when the loop
 * budget ended the run first (2048 inserts under TCG on a busy host can
 * outlast 250 ms), to be run again.
 */
SEC("syscall")
int rw_fill(void *ctx)
{
	struct rw_value v = { 0, 0 };
	int err = 0;
	__u32 k;

	for (k = rw_filled + (__u32)ak_opaque_zero(); k < RW_STABLE && can_loop; k++) {
		v.check = rw_check(k, 0);
		err = ak_htab_update(&rw_table, &k, &v, AK_HTAB_NOEXIST);
		if (err)
			break;
	}
	rw_filled = k;
	return err ?: k < RW_STABLE ? -AK_EBUDGET : 0;
}

static void rw_count_error(struct htab_rw_args *args, int err)
{
	args->errors++;
	args->last_error = err;
}

/* One write, tried again while -EBUSY. */
static int rw_write(struct htab_rw_args *args, __u32 k, __u64 version, int kind)
{
	struct rw_value v = { version, rw_check(k, version) };
	int err = -EBUSY, tries;

	for (tries = ak_opaque_zero(); tries < BUSY_TRIES && err == -EBUSY && can_loop; tries++) {
		if (kind == HTAB_OP_DELETE)
			err = ak_htab_delete(&rw_table, &k);
		else
			err = ak_htab_update(&rw_table, &k, &v, kind == HTAB_OP_INSERT ?
					     AK_HTAB_NOEXIST : AK_HTAB_EXIST);
		if (err == -EBUSY)
			args->busy++;
	}
	if (err && err != -EBUSY)
		rw_count_error(args, err);
	return err;
}

/*
 * Insert its churn keys, then delete them; rewrite a stable key after each.
 * Four steps per key, resumed at args->done: returns -AK_EBUDGET to be
 * run again (a write stayed busy, or the run was cut), 0 when all is done.
 */
SEC("syscall")
int rw_writer(struct htab_rw_args *args)
{
	__u32 first = args->first, n = args->count, step, i, stop = args->done + RUN_STEPS;
	int err;

	for (step = args->done + (__u32)ak_opaque_zero(); step < 4 * n && step < stop && can_loop;
	     step++) {
		i = step / 2 % n;
		switch (step / n / 2 * 2 + step % 2) {
		case 0:
			err = rw_write(args, first + i, i, HTAB_OP_INSERT);
			break;
		case 1:
			err = rw_write(args, (first + i) % RW_STABLE, first + i, HTAB_OP_UPDATE);
			break;
		case 2:
			err = rw_write(args, first + i, 0, HTAB_OP_DELETE);
			break;
		default:
			err = rw_write(args, (first + i) % RW_STABLE, first + n + i,
				       HTAB_OP_UPDATE);
			break;
		}
		if (err == -EBUSY)
			break;
	}
	args->done = step;
	return step < 4 * n ? -AK_EBUDGET : 0;
}

/* Look key @k up both ways and check what the documentation promises. */
static void rw_read(struct htab_rw_args *args, __u32 k, int stable)
{
	struct rw_value __arena *p;
	struct rw_value v;
	int err = 0;

	p = ak_htab_lookup(&rw_table, &k, &err);
	if (p && stable && p->check != rw_check(k, p->version))
		args->torn++;
	if (!p && stable && err == -ENOENT) {
		args->absent++;
		args->last_error = err;
	}
	if (!p && err == -EBUSY)
		args->busy++;
	else if (!p && err != -ENOENT)
		rw_count_error(args, err);
	err = ak_htab_lookup_copy(&rw_table, &k, &v);
	if (!err && v.check != rw_check(k, v.version)) {
		if (stable)
			args->torn_copy++;
		else
			args->wrong++;
	}
	if (err == -ENOENT && stable) {
		args->absent++;
		args->last_error = err;
	}
	if (err == -EBUSY)
		args->busy++;
	else if (err && err != -ENOENT)
		rw_count_error(args, err);
	args->lookups += 2;
}

/*
 * Reads until user space sets rw_stop, RUN_STEPS lookups a run (the next
 * run goes on with the next keys): -AK_EBUDGET to be run again while
 * rw_stop is clear, 0 once it is set.
 */
SEC("syscall")
int rw_reader(struct htab_rw_args *args)
{
	__u32 round, j, k, stop = args->done + RUN_STEPS / 128;

	for (round = args->done + (__u32)ak_opaque_zero(); round < stop && !rw_stop && can_loop;
	     round++) {
		for (j = ak_opaque_zero(); j < 64 && can_loop; j++) {
			k = (round * 64 + j) * 2654435761u;
			rw_read(args, k % RW_STABLE, 1);
			rw_read(args, args->first + k % args->count, 0);
		}
		__sync_fetch_and_add(&rw_reader_rounds, 1);
	}
	args->done = round;
	return rw_stop ? 0 : -AK_EBUDGET;
}

SEC("syscall")
int rw_maintain(void *ctx)
{
	return ak_htab_maintain(&rw_table);
}

SEC("syscall")
int destroy_table(void *ctx)
{
	int err = ak_htab_destroy(&table);

	return err ?: ak_alloc_trim();
}

char _license[] SEC("license") = "GPL";
