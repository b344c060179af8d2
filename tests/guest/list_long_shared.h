/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What tests/guest/list_long.bpf.c and list_long.c share. */
#ifndef LIST_LONG_SHARED_H
#define LIST_LONG_SHARED_H

/* AK_LIST_DEFINE_EACH_ALL's state: the keys summed, up to the key it stops at. */
struct each_state {
	unsigned long long sum, visited, stop_at;
};

#endif
