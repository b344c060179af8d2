// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF side of `arenakit stress` model (user/stress_model.c): batches of
 * operations on a list and a hash table, each result left for user space
 * to check against its model.
 */
#include "stress.h"
#define AK_ARENA_PAGES STRESS_ARENA_PAGES
#include <arenakit/alloc.h>
#define AK_HTAB_PROG_MAX_KEY 8	/* the longest key its tables take */
#include <arenakit/htab.h>
#include "stress_items.h"

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
		it = ak_alloc(sizeof(*it), NULL);
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

char _license[] SEC("license") = "GPL";
