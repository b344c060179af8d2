/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the two objects of tests/guest/linked/ and their driver,
 * tests/guest/linked.c, share: the items lists.bpf.c allocates and lists
 * (and tables.bpf.c frees), and how many.
 */
#ifndef ARENAKIT_TESTS_GUEST_LINKED_SHARED_H
#define ARENAKIT_TESTS_GUEST_LINKED_SHARED_H

#include <arenakit/list.h>

#define LINKED_ITEMS 100

struct linked_item {
	struct ak_list_node node;
	unsigned long long key;		/* 1..LINKED_ITEMS */
};

#endif
