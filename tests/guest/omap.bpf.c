// SPDX-License-Identifier: GPL-2.0
/*
 * omap.h under the real verifier, on a real arena: batches of calls from
 * tests/guest/omap.c, whose answers it checks against a model.
 */
#define AK_ARENA_PAGES 262144
#include <arenakit/omap.h>
#include "guest/bpf_test.h"
#include "omap_shared.h"

struct ak_omap __arena_global map;	/* 8-byte keys, 8-byte values */

struct omap_op __arena_global ops[OMAP_MAX_OPS];
unsigned int nops, next_op;
struct ak_omap_cursor walk;	/* OMAP_OP_WALK's, across runs */

SEC("syscall")
int init_map(void *ctx)
{
	return ak_omap_init(&map, sizeof(__u64), sizeof(__u64));
}

/*
 * A step of the live walk, from @k if @init: a frame of its own (run_ops'
 * deepest chain of calls, an update's, is near the stack's limit).
 */
__noinline __u64 walk_step(__u64 k, int init, __ak_nonnull __u64 *key_out, __ak_nonnull int *err)
{
	__u64 __arena *v = 0;

	if (init)
		ak_omap_cursor_init(&walk, &k, (__u64 *)NULL, 0);
	*err = ak_omap_next(&map, &walk, key_out, &v);
	return (__u64)v;
}

SEC("syscall")
int run_ops(void *ctx)
{
	unsigned int i = next_op + (unsigned int)ak_opaque_zero();
	struct omap_op __arena *op;
	__u64 k, v, out_k, out_v;
	__u64 __arena *p;
	int err;

	while (i < nops && i < OMAP_MAX_OPS) {
		ak_cond_break_label(cut);
		op = &ops[i];
		k = op->key;
		v = op->value;
		out_k = 0;
		out_v = 0;
		err = 0;
		p = 0;
		switch (op->kind) {
		case OMAP_OP_INSERT:
			err = ak_omap_update(&map, &k, &v, op->flags);
			break;
		case OMAP_OP_DELETE:
			err = ak_omap_lookup_and_delete(&map, &k, &out_v);
			break;
		case OMAP_OP_LOOKUP:
			p = ak_omap_lookup(&map, &k, &err);
			break;
		case OMAP_OP_BOUND:
			p = ak_omap_bound(&map, &k, op->flags, &out_k, &err);
			break;
		case OMAP_OP_WALK:
			p = (__u64 __arena *)walk_step(k, op->flags, &out_k, &err);
			break;
		default:
			err = ak_omap_pop_first(&map, &out_k, &out_v);
			break;
		}
		if (p)
			out_v = *p;
		op->err = err;
		op->out_key = out_k;
		op->out_value = out_v;
		i++;
	}
	next_op = i;
	return 0;
cut:
	next_op = i;
	return -AK_EBUDGET;
}

struct ak_omap __arena_global shared;	/* the 4-CPU test's: 8-byte keys and values */
__u64 __arena_global popped[CPU_MAX][CPU_MAX * CPU_KEYS];
unsigned int cpu_steps = 2048;	/* a run's steps before it returns -AK_EBUDGET */

SEC("syscall")
int init_shared(void *ctx)
{
	return ak_omap_init(&shared, sizeof(__u64), sizeof(__u64));
}

/*
 * Insert this CPU's keys (phase 0, then return), or pop until the map is
 * empty (phase 1); busy: return -AK_EBUDGET, to be run again.
 */
SEC("syscall")
int cpu_churn(struct omap_cpu_args *a)
{
	unsigned int cpu = a->cpu & (CPU_MAX - 1), steps;
	__u64 k, v;
	int err;

	for (steps = ak_opaque_zero(); steps < cpu_steps && a->phase < 2; steps++) {
		ak_cond_break_label(cut);
		if (a->phase == 0) {
			if (a->inserted >= CPU_KEYS) {
				a->phase = 1;	/* the driver runs the pops once every CPU is here */
				return 0;
			}
			k = (__u64)a->inserted * CPU_MAX + cpu;
			v = k * 3;
			err = ak_omap_update(&shared, &k, &v, AK_OMAP_NOEXIST);
			if (!err)
				a->inserted++;
		} else {
			err = ak_omap_pop_first(&shared, &k, &v);
			if (err == -ENOENT) {
				a->phase = 2;
				break;
			}
			if (!err) {
				if (v != k * 3)
					err = -EINVAL;	/* a value not its key's */
				else if (a->popped < CPU_MAX * CPU_KEYS)
					popped[cpu][a->popped++] = k;
			}
		}
		if (err == -EBUSY) {
			a->busy++;
			return -AK_EBUDGET;	/* a holder's vCPU is off: come back */
		}
		if (err) {
			a->err = err;
			return 0;
		}
	}
	return a->phase == 2 ? 0 : -AK_EBUDGET;
cut:
	return -AK_EBUDGET;
}

__u32 __arena_global writers_done;
unsigned int stable_next;	/* init_stable's place, when its budget cut it */

SEC("syscall")
int init_stable(void *ctx)
{
	unsigned int i;
	__u64 k, v;
	int err;

	if (!stable_next && (err = ak_omap_init(&shared, sizeof(__u64), sizeof(__u64))))
		return err;
	for (i = stable_next; i < READ_STABLE; i++) {
		ak_cond_break_label(cut);
		k = 2ULL * i;
		v = k * 3;
		err = ak_omap_update(&shared, &k, &v, AK_OMAP_NOEXIST);
		if (err)
			return err;
		stable_next = i + 1;
	}
	return 0;
cut:
	return -AK_EBUDGET;
}

/* A writer's step: its batch's next insert or delete; 1 once its rounds are done. */
static int write_step(struct omap_read_args *a)
{
	__u64 k = 2ULL * (a->at * READ_WRITERS + (a->cpu % READ_WRITERS)) + 1, v = k * 3;
	int err;

	err = a->deleting ? ak_omap_delete(&shared, &k) :
			    ak_omap_update(&shared, &k, &v, AK_OMAP_NOEXIST);
	if (err)
		return err;
	a->done++;
	if (++a->at < READ_BATCH)
		return 0;
	a->at = 0;
	a->deleting = !a->deleting;
	if (!a->deleting && ++a->round == READ_ROUNDS) {
		__sync_fetch_and_add(&writers_done, 1);
		return 1;
	}
	return 0;
}

/*
 * A live walk of 8 steps from stable key @k: the stable keys after it in
 * order, each once, whatever odd keys come between; 1 if it did not.
 * Apart: its cursor is not on the stack under an update's calls (the
 * verifier's 512 bytes across a chain of calls).
 */
__ak_apart int walk_wrong(struct omap_read_args *a, __u64 k)
{
	struct ak_omap_cursor c;
	__u64 want = k, got;
	__u64 __arena *v;
	unsigned int i;
	int err = 0;

	ak_omap_cursor_init(&c, &k, NULL, 0);
	for (i = 0; i < 8 && want < 2ULL * READ_STABLE; i++) {
		err = ak_omap_next(&shared, &c, &got, &v);
		if (err)
			return err != -EBUSY && err != -AK_EBUDGET;
		a->walked++;
		if (*v != got * 3 || got > want || (got < want && !(got & 1)))
			return 1;	/* another value, a stable key skipped, or one twice */
		if (got == want)
			want += 2;
	}
	return 0;
}

/* A reader's step: a random stable key looked up, its value checked. */
static int read_step(struct omap_read_args *a)
{
	__u64 k = 2ULL * (bpf_get_prandom_u32() % READ_STABLE);
	__u64 __arena *v;
	int err = 0;

	v = ak_omap_lookup(&shared, &k, &err);
	if (!v && err != -ENOENT)
		return err;
	if (!v || *v != k * 3)
		a->wrong++;
	if (!(a->done % 8) && walk_wrong(a, k))
		a->wrong++;
	a->done++;
	return ak_read_once(writers_done) == READ_WRITERS;
}

SEC("syscall")
int read_churn(struct omap_read_args *a)
{
	unsigned int steps;
	int ret;

	for (steps = ak_opaque_zero(); steps < cpu_steps; steps++) {
		ak_cond_break_label(cut);
		ret = a->reader ? read_step(a) : write_step(a);
		if (ret == 1)
			return 0;
		if (ret == -EBUSY || ret == -AK_EBUDGET) {
			a->busy++;
			return -AK_EBUDGET;	/* a holder's vCPU is off: come back */
		}
		if (ret) {
			a->err = ret;
			return 0;
		}
	}
	return -AK_EBUDGET;
cut:
	return -AK_EBUDGET;
}

char _license[] SEC("license") = "GPL";
