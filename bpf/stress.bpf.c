// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF side of every `arenakit stress` scenario but exhaust (each in
 * user/stress_NAME.c): a list of up to 134M items built run by run, every
 * kind of walk over it, links broken on purpose (cycles, garbage, page 0,
 * freed pages), the glob matcher on inputs user space writes, misuse of the
 * allocator, the model's batches and the concurrent writers. Every result
 * is a count or an error, and user space checks that no walk ever returns a
 * wrong count without one.
 */
#include "stress.h"
#define AK_ARENA_PAGES STRESS_ARENA_PAGES
#include <arenakit/alloc.h>
#include <arenakit/glob.h>
#include <arenakit/htab.h>
#include "stress_items.h"
#include <arenakit/lock.h>

struct ak_list __arena_global list;
struct stress_item __arena *__arena_global slabs[STRESS_MAX_SLABS];
char __arena_global glob_pattern[STRESS_GLOB_BYTES];
char __arena_global glob_string[STRESS_GLOB_BYTES];

__u64 target;				/* items wanted (build) */
__u64 built;
long long walk_result[STRESS_WALKS];
__u32 walk_which;			/* the walk the next run of walks makes */
struct ak_list_cursor cursor;		/* count_resume's, between runs */
long long resume_result;

__u64 link_index, link_target;		/* set_link's arguments */
__u32 link_kind;
struct ak_list_node __arena *saved_next;	/* what set_link replaced */
__u64 bad_index;			/* check_all's bad node, as an index (~0: none) */
__u64 glob_len;
int glob_result;

/*
 * Link up to @n more items, from the slab the list ends in (a new one when
 * that is full), so that item i is always slab i / STRESS_SLAB_ITEMS,
 * entry i % STRESS_SLAB_ITEMS. A global function: a budget per call.
 */
__noinline long long add_items(__u64 n)
{
	__u64 first = built, s = first / STRESS_SLAB_ITEMS, at = first % STRESS_SLAB_ITEMS, i;
	struct stress_item __arena *slab;

	if (s >= STRESS_MAX_SLABS)
		return -ENOSPC;
	slab = slabs[s];
	if (!at || !slab) {
		slab = ak_alloc(STRESS_SLAB_ITEMS * sizeof(*slab));
		if (!slab)
			return -ENOMEM;
		slabs[s] = slab;
	}
	for (i = ak_opaque_zero(); i < n && at + i < STRESS_SLAB_ITEMS && can_loop; i++) {
		slab[at + i].key = first + i;
		ak_list_add_tail(&list, &slab[at + i].node);
	}
	return i;
}

/* Grow the list to @target items, STRESS_ITEMS_PER_RUN a run (slab-aligned). */
SEC("syscall")
int build(void *ctx)
{
	__u64 stop = built + STRESS_ITEMS_PER_RUN;
	long long added;

	if (!built)
		ak_list_init(&list);
	while (built < target && built < stop && can_loop) {
		added = add_items(target - built);
		if (added < 0)
			return added;
		built += added;
	}
	return built < target ? -AK_EBUDGET : 0;
}

static struct stress_item __arena *item(__u64 index)
{
	struct stress_item __arena *slab;

	slab = slabs[(index / STRESS_SLAB_ITEMS) & (STRESS_MAX_SLABS - 1)];

	return slab ? &slab[index % STRESS_SLAB_ITEMS] : 0;
}

/* Global, so each walk has a frame (and budget) of its own. */
__noinline long long walk_for_each(void)
{
	struct stress_item __arena *it;
	long long n = ak_opaque_zero(), status;

	ak_list_for_each_entry(it, &list, node)
		n++;
	status = ak_list_walk_status(it, &list, node);
	return status ? status : n;
}

__noinline long long walk_count_once(void)
{
	return ak_list_count(&list, 0);
}

/*
 * One walk a run (walk_which): a run holds its CPU for its whole walk, and
 * each of these may take seconds of a 100M-item list.
 */
SEC("syscall")
int walks(void *ctx)
{
	struct ak_list_node __arena *node = 0;
	long long err;

	switch (walk_which) {
	case STRESS_COUNT_ONCE:
		walk_result[STRESS_COUNT_ONCE] = walk_count_once();
		break;
	case STRESS_COUNT_ALL:
		walk_result[STRESS_COUNT_ALL] = ak_list_count_all(&list);
		break;
	case STRESS_FOR_EACH:
		walk_result[STRESS_FOR_EACH] = walk_for_each();
		break;
	case STRESS_FIND_ALL:
		err = ak_list_find_all(&list, ak_list_key_offset(struct stress_item, node, key),
				       ~0ULL, &node);
		walk_result[STRESS_FIND_ALL] = err ? err : node ? -EEXIST : 0;
		break;
	case STRESS_CHECK_ALL:
		walk_result[STRESS_CHECK_ALL] = ak_list_check_all(&list, &node);
		bad_index = node && node != &list.head ?
			    ak_container_of(node, struct stress_item, node)->key : ~0ULL;
		break;
	}
	return 0;
}

/* ak_list_count with a cursor, one run at a time: user space reruns it. */
SEC("syscall")
int count_resume(void *ctx)
{
	resume_result = ak_list_count(&list, &cursor);
	return 0;
}

SEC("syscall")
int set_link(void *ctx)
{
	struct stress_item __arena *it = item(link_index), *to;
	char __arena *page;

	if (!it)
		return -EINVAL;
	if (link_kind == STRESS_LINK_RESTORE) {
		if (saved_next)
			it->node.next = saved_next;
		saved_next = 0;
		return 0;
	}
	if (!saved_next)
		saved_next = it->node.next;
	switch (link_kind) {
	case STRESS_LINK_ITEM:
		to = item(link_target);
		if (!to)
			return -EINVAL;
		it->node.next = &to->node;
		return 0;
	case STRESS_LINK_VALUE:
		it->node.next = (struct ak_list_node __arena *)link_target;
		return 0;
	case STRESS_LINK_PAGE0:
		/* The arena's first page: the upper half of any arena address. */
		it->node.next = (struct ak_list_node __arena *)
			(((__u64)it & ~0xffffffffULL) | (link_target & 0xff8));
		return 0;
	case STRESS_LINK_FREED:
		page = ak_alloc(2 * AK_PAGE_SIZE);	/* whole pages of its own */
		if (!page)
			return -ENOMEM;
		ak_free(page);
		it->node.next = (struct ak_list_node __arena *)(page + 64);
		return 0;
	}
	return -EINVAL;
}

SEC("syscall")
int glob_one(void *ctx)
{
	glob_result = ak_glob_match_len(glob_pattern, glob_string,
					glob_len < STRESS_GLOB_BYTES ? glob_len : 0);
	return 0;
}

/*
 * misuse: a long random run of allocations and frees (xorshift64, seeded
 * by user space, so a run can be replayed), with double, interior and
 * foreign frees and stale cursors mixed in. Each must be refused (-EINVAL,
 * -AK_ESTALE) and change nothing; user space then checks the allocator's
 * counts and that freeing what is left gives every page back.
 */
__u64 rng;				/* the generator's state: never 0 */
__u64 ops_left;
struct stress_misuse misuse;
void __arena *__arena *__arena_global live;	/* STRESS_MISUSE_SLOTS objects or NULL */

static __u64 next_random(void)
{
	rng = stress_xorshift(rng);
	return rng;
}

static const unsigned int misuse_sizes[8] = { 8, 16, 24, 60, 100, 500, 2000, 5000 };

/* One operation; a global function, so the run's loop counts one step for it. */
__noinline int misuse_step(void)
{
	__u64 r = next_random(), k = r % 16;
	void __arena *__arena *slot = &live[r & (STRESS_MISUSE_SLOTS - 1)];
	void __arena *p = *slot;
	struct ak_list_cursor c;
	struct stress_item __arena *it;

	if (k == 10 && p) {			/* free, then free again */
		if (ak_free(p))
			misuse.free_failed++;
		*slot = 0;
		misuse.doubles++;
		misuse.doubles_caught += ak_free(p) == -EINVAL;
	} else if (k == 11 && p) {		/* a pointer inside the object */
		misuse.interiors++;
		misuse.interiors_caught += ak_free((char __arena *)p + 8) == -EINVAL;
	} else if (k == 12) {			/* arena memory the allocator never gave */
		misuse.foreigns++;
		misuse.foreigns_caught += ak_free(&list.len) == -EINVAL;
	} else if (k == 13 && built) {		/* a cursor, then a change, then a resume */
		it = item((r >> 20) % built);
		if (!it)
			return 0;
		c.pos = &it->node;
		c.list = &list;
		c.gen = list.gen;
		c.seen = it->key;
		ak_list_move(&list, list.head.next, &list);	/* a change, order kept */
		misuse.stales++;
		misuse.stales_caught += ak_list_count(&list, &c) == -AK_ESTALE && !c.pos;
	} else if (p) {
		if (ak_free(p))
			misuse.free_failed++;
		else
			misuse.frees++;
		*slot = 0;
	} else {
		p = ak_alloc(misuse_sizes[(r >> 32) & 7]);
		if (p) {
			*slot = p;
			misuse.allocs++;
		} else {
			misuse.alloc_failed++;
		}
	}
	return 0;
}

SEC("syscall")
int misuse_run(void *ctx)
{
	__u64 run_ops = STRESS_MISUSE_OPS_PER_RUN;

	if (!live) {
		live = ak_alloc(STRESS_MISUSE_SLOTS * sizeof(*live));
		if (!live)
			return -ENOMEM;
	}
	while (ops_left && run_ops && can_loop) {
		misuse_step();
		ops_left--;
		run_ops--;
	}
	return ops_left ? -AK_EBUDGET : 0;	/* run again to go on */
}

/*
 * Free what the run left, then the slots; each free must succeed. A run the
 * loop budget cuts says so and the next goes on from teardown_at.
 */
__u64 teardown_at;

SEC("syscall")
int misuse_teardown(void *ctx)
{
	for (; live && teardown_at < STRESS_MISUSE_SLOTS; teardown_at++) {
		if (!can_loop)
			return -AK_EBUDGET;
		if (live[teardown_at] && ak_free(live[teardown_at]))
			misuse.free_failed++;
		live[teardown_at] = 0;
	}
	if (live && ak_free(live))
		misuse.free_failed++;
	live = 0;
	teardown_at = 0;
	return 0;
}

/*
 * model: user space fills model_ops with a batch and reruns model_run
 * until it returns 0; each operation's result goes back in its slot.
 */
struct ak_list __arena_global model_list;
struct ak_htab __arena_global model_htab;
struct stress_op __arena_global model_ops[STRESS_MODEL_BATCH];
__u32 model_n, model_done;
int model_ready;

static struct ak_list_node __arena *model_find(__u64 key, long long *err)
{
	struct ak_list_node __arena *node;

	*err = ak_list_find(&model_list, ak_list_key_offset(struct stress_item, node, key), key,
			    0, &node);
	if (!*err && !node)
		*err = -ENOENT;
	return *err ? 0 : node;
}

__noinline long long model_list_op(__arg_arena struct stress_op __arena *op)
{
	struct stress_item __arena *it;
	struct ak_list_node __arena *node;
	long long err;

	switch (op->kind) {
	case STRESS_OP_LIST_ADD_HEAD:
	case STRESS_OP_LIST_ADD_TAIL:
		it = ak_alloc(sizeof(*it));
		if (!it)
			return -ENOMEM;
		it->key = op->key;
		if (op->kind == STRESS_OP_LIST_ADD_HEAD)
			ak_list_add_head(&model_list, &it->node);
		else
			ak_list_add_tail(&model_list, &it->node);
		return 0;
	case STRESS_OP_LIST_DEL:
		node = model_find(op->key, &err);
		if (!node)
			return err;
		ak_list_del(&model_list, node);
		return ak_free(ak_list_entry(node, struct stress_item, node));
	case STRESS_OP_LIST_POP:
		node = ak_list_first(&model_list);
		if (!node)
			return -ENOENT;
		it = ak_list_entry(node, struct stress_item, node);
		err = it->key;
		ak_list_del(&model_list, node);
		return ak_free(it) ?: err;
	case STRESS_OP_LIST_TO_TAIL:
		node = model_find(op->key, &err);
		if (!node)
			return err;
		ak_list_move_tail(&model_list, node, &model_list);
		return 0;
	}
	return -EINVAL;
}

__noinline long long model_htab_op(__arg_arena struct stress_op __arena *op)
{
	__u32 key = op->key;
	__u64 value = op->value;
	__u64 __arena *found;
	int err = 0;

	switch (op->kind) {
	case STRESS_OP_HTAB_UPDATE:
		return ak_htab_update(&model_htab, &key, &value, op->flags);
	case STRESS_OP_HTAB_DELETE:
		return ak_htab_delete(&model_htab, &key);
	case STRESS_OP_HTAB_LOOKUP:
		found = ak_htab_lookup(&model_htab, &key, &err);
		return found ? *found : err;
	case STRESS_OP_HTAB_TAKE:
		err = ak_htab_lookup_and_delete(&model_htab, &key, &value);
		return err ? err : value;
	}
	return -EINVAL;
}

SEC("syscall")
int model_run(void *ctx)
{
	struct stress_op __arena *op;
	int err;

	if (!model_ready) {
		ak_list_init(&model_list);
		/* The smallest table: the run grows it, step by step, many times. */
		err = ak_htab_init(&model_htab, sizeof(__u32), sizeof(__u64), 0);
		if (err)
			return err;
		model_ready = 1;
	}
	while (model_done < model_n && model_done < STRESS_MODEL_BATCH && can_loop) {
		op = &model_ops[model_done];
		op->result = op->kind < STRESS_OP_HTAB_UPDATE ? model_list_op(op) :
			     model_htab_op(op);
		model_done++;
	}
	return model_done < model_n ? -AK_EBUDGET : 0;
}

/* Whole-structure checks after a batch: both must be sound. */
long long model_list_check, model_htab_check;

SEC("syscall")
int model_check(void *ctx)
{
	stress_check(&model_list, &model_htab, &model_list_check, &model_htab_check);
	return 0;
}

/* Free every item and the table; the allocator's counts go back to baseline. */
SEC("syscall")
int model_teardown(void *ctx)
{
	int err = stress_teardown(&model_list, &model_htab);

	if (!err)
		model_ready = 0;
	return err;
}

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
		it = ak_alloc_err(sizeof(*it), &err);
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
