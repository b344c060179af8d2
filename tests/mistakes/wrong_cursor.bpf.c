// SPDX-License-Identifier: GPL-2.0
/*
 * A mistake tests/system/toolchain_system.c compiles: a hash table's cursor
 * given to a list walk.
 */
#include <arenakit/list.h>
#define AK_HTAB_PROG_MAX_KEY 8	/* no table here: the fewest table functions */
#include <arenakit/htab.h>

struct ak_list __arena_global events;

SEC("syscall")
int count_with_the_wrong_cursor(void *ctx)
{
	struct ak_htab_cursor cursor = {};

	return ak_list_count(&events, &cursor);
}

char _license[] SEC("license") = "GPL";
