// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * ns/op of the arena hash table and of BPF_MAP_TYPE_HASH, measured in the
 * same program run at 1k, 64k and 1M entries, with 4- and 16-byte keys.
 * Under TCG every time is inflated; the ratios are what count. The test
 * fails only if a lookup answers wrongly, never on speed.
 */
#include <stdio.h>
#include <string.h>

#include "guest/guest.h"
#include <arenakit/htab.h>
#include "guest/htab_perf.h"
#include "htab_perf.skel.h"

static void measure(unsigned int entries, int wide)
{
	struct htab_perf *skel = htab_perf__open();
	struct htab_perf_result *r;
	int retval;

	cr_assert(skel);
	skel->bss->entries = entries;
	skel->bss->reps = entries >= (1 << 19) ? 1 : (1 << 19) / entries;
	cr_assert_eq(arenakit_load_skeleton(skel->skeleton), 0);
	cr_assert_eq(arenakit_run(wide ? skel->progs.perf16 : skel->progs.perf4, &retval), 0);
	cr_assert_eq(retval, 0);
	r = &skel->bss->result;
	cr_expect_eq(r->errors, 0);
	cr_expect_eq(r->found, 2ULL * entries * skel->bss->reps,
		     "%llu lookups found something, want %u hits x %u x 2", r->found, entries,
		     skel->bss->reps);
	/* In a full run other tests share the CPUs; run alone with FILTER=htab_perf. */
	printf("htab_perf: %7u entries, %2d-byte keys (ns/op arena vs map, map/arena):"
	       " insert %.1f vs %.1f (%.2fx), update %.1f vs %.1f (%.2fx),"
	       " hit %.1f vs %.1f (%.2fx), miss %.1f vs %.1f (%.2fx)\n",
	       entries, wide ? 16 : 4,
	       r->arena_insert / 1e3, r->map_insert / 1e3, (double)r->map_insert / r->arena_insert,
	       r->arena_update / 1e3, r->map_update / 1e3, (double)r->map_update / r->arena_update,
	       r->arena_hit / 1e3, r->map_hit / 1e3, (double)r->map_hit / r->arena_hit,
	       r->arena_miss / 1e3, r->map_miss / 1e3, (double)r->map_miss / r->arena_miss);
	htab_perf__destroy(skel);
}

Test(htab_perf, arena_table_next_to_the_hash_map, .timeout = 600)
{
	static const unsigned int sizes[] = { 1024, 65536, 1 << 20 };
	unsigned int i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		measure(sizes[i], 0);
		measure(sizes[i], 1);
	}
}
