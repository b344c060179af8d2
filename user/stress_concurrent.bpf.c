// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF side of `arenakit stress` concurrent (user/stress_concurrent.c):
 * writers on every CPU at once on one list under an ak_lock and one hash
 * table, each result logged for user space to replay.
 */
#include "stress.h"
#define AK_ARENA_PAGES STRESS_ARENA_PAGES
#include <arenakit/alloc.h>
#define AK_HTAB_PROG_MAX_KEY 8	/* the longest key its tables take */
#include <arenakit/htab.h>
#include "stress_items.h"
#include <arenakit/lock.h>

/*
 * concurrent: user space runs conc_run from STRESS_CONC_THREADS threads at
 * once, pinned across the CPUs, until each has made its operations.
 */
struct ak_lock __arena_global conc_lock;
struct ak_list __arena_global conc_list;
struct ak_htab __arena_global conc_htab;
struct stress_conc_thread __arena_global conc_threads[STRESS_CONC_THREADS];
long long __arena_global conc_log[STRESS_CONC_THREADS][STRESS_CONC_OPS];

SEC("syscall")
int conc_setup(void *ctx)
{
	conc_lock.locked = 0;
	ak_list_init(&conc_list);
	return ak_htab_init(&conc_htab, sizeof(__u32), sizeof(__u64), 0);
}

/* Take the thread's oldest item off the list, under the lock. */
static long long conc_pop_own(__u32 tid)
{
	struct stress_item __arena *it;
	long long err = ak_lock_acquire(&conc_lock);

	if (err)
		return err;
	ak_list_for_each_entry(it, &conc_list, node)
		if (it->key >> 32 == tid)
			break;
	if (it && &it->node != &conc_list.head && it->key >> 32 == tid) {
		ak_list_del(&conc_list, &it->node);
		ak_lock_release(&conc_lock);
		return ak_free(it);
	}
	/* Not found: the walk reached the end (-ENOENT) or was cut. */
	err = ak_list_walk_status(it, &conc_list, node) ?: -ENOENT;
	ak_lock_release(&conc_lock);
	return err;
}

__noinline long long conc_step(__u32 tid)
{
	struct stress_conc_thread __arena *t = &conc_threads[tid & (STRESS_CONC_THREADS - 1)];
	struct stress_item __arena *it;
	__u64 r, value;
	__u64 __arena *found;
	__u32 key;
	int err = 0;

	r = t->rng = stress_xorshift(t->rng);
	key = STRESS_CONC_KEY(tid, (r >> 8) % STRESS_CONC_KEYS);
	switch (r % 8) {
	case 0:
	case 1:
		it = ak_alloc(sizeof(*it), &err);
		if (!it)
			return err;
		it->key = STRESS_CONC_ITEM(tid, t->pushed);
		err = ak_lock_acquire(&conc_lock);
		if (err) {
			ak_free(it);
			return err;
		}
		ak_list_add_tail(&conc_list, &it->node);
		ak_lock_release(&conc_lock);
		t->pushed++;
		return 0;
	case 2:
		return conc_pop_own(tid);
	case 3:
	case 4:
	case 5:
		value = STRESS_CONC_VALUE(key, t->done);
		return ak_htab_update(&conc_htab, &key, &value, AK_HTAB_ANY);
	case 6:
		return ak_htab_delete(&conc_htab, &key);
	}
	found = ak_htab_lookup(&conc_htab, &key, &err);
	return found ? *found : err;
}

struct conc_ctx {
	__u32 tid;
};

SEC("syscall")
int conc_run(struct conc_ctx *ctx)
{
	__u32 tid = ctx->tid;
	struct stress_conc_thread __arena *t;
	__u64 stop;

	if (tid >= STRESS_CONC_THREADS)
		return -EINVAL;
	t = &conc_threads[tid];
	/*
	 * A share per run: these steps spin on locks and walk the list, so a
	 * run left to the loop budget alone (8M steps on a stock kernel) would
	 * hold its CPU far past the guest's soft-lockup watchdog. With the
	 * share a run stays short under either budget, counted or timed.
	 */
	stop = t->done + STRESS_CONC_OPS_PER_RUN;
	while (t->done < t->ops && t->done < STRESS_CONC_OPS && t->done < stop && can_loop) {
		conc_log[tid][t->done] = conc_step(tid);
		t->done++;
	}
	return t->done < t->ops ? -AK_EBUDGET : 0;
}

long long conc_list_check, conc_htab_check;

SEC("syscall")
int conc_check(void *ctx)
{
	stress_check(&conc_list, &conc_htab, &conc_list_check, &conc_htab_check);
	return 0;
}

SEC("syscall")
int conc_teardown(void *ctx)
{
	return stress_teardown(&conc_list, &conc_htab);
}

char _license[] SEC("license") = "GPL";
