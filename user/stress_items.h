/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the stress programs share over a list of stress_item and a hash
 * table: include after <arenakit/htab.h> (it frees with ak_free).
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

/* Free every item and the table's nodes and buckets. */
static inline int stress_teardown(struct ak_list __arena *list, struct ak_htab __arena *h)
{
	int err = stress_free_items(list);

	return err ? err : ak_htab_destroy(h);
}

/* Both whole checks, each 0 when its structure is sound. */
static inline void stress_check(struct ak_list __arena *list, struct ak_htab __arena *h,
				long long *list_check, long long *htab_check)
{
	*list_check = ak_list_check_all(list, 0);
	*htab_check = ak_htab_check_all(h, 0);
}

#endif
