/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The stress programs' teardown of a list of stress_item: include after
 * <arenakit/alloc.h> (it frees with ak_free).
 */
#ifndef ARENAKIT_STRESS_ITEMS_H
#define ARENAKIT_STRESS_ITEMS_H

/* Unlink and free every item: 0, -AK_EBUDGET (run again), or ak_free's error. */
static inline int stress_free_items(struct ak_list __arena *list)
{
	struct ak_list_node __arena *node;
	int err;

	while ((node = ak_list_first(list)) && can_loop) {
		ak_list_del(list, node);
		err = ak_free(ak_list_entry(node, struct stress_item, node));
		if (err)
			return err;
	}
	return ak_list_empty(list) ? 0 : -AK_EBUDGET;
}

#endif
