// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * misuse: a long seeded run of allocations and frees with double,
 * interior and foreign frees and stale cursors mixed in: each refused,
 * each counted, and the allocator's accounting back where it was. Its
 * program has a list of its own for the stale cursors.
 */
#include <stdio.h>
#include <string.h>

#include <arenakit/user.h>
#include "loader.h"
#include "stress_tool.h"
#include "stress_misuse.skel.h"

static int scenario_misuse(struct stress_run *s)
{
	struct stress_misuse *skel = stress_misuse__open();
	struct stress_misuse_counts *m;
	struct ak_alloc_stats st, before;
	unsigned long long ops = s->quick ? 20000 : 2000000;
	unsigned int runs;
	int retval, err;
	struct stress_row *r;

	err = stress_load("misuse", skel ? skel->skeleton : NULL);
	if (err)
		goto out;
	skel->bss->target = 1000;	/* the list, for the stale cursors */
	err = ak_run_until_done(skel->progs.build, NULL, 0, STRESS_MAX_RUNS, &retval, NULL);
	if (err || retval) {
		fprintf(stderr, "arenakit stress: misuse: its list: %s\n", strerror(-(err ?: retval)));
		err = err ?: retval;
		goto out;
	}
	m = &skel->bss->misuse;
	ak_alloc_stats_read(&skel->arena->ak_allocator, &before);
	memset(m, 0, sizeof(*m));
	skel->bss->rng = stress_seed_state(s->seed);
	skel->bss->ops_left = ops;
	r = stress_row(s, "misuse", "allocs, frees, misuse mixed in", ops);
	stress_progress(s, "misuse: %llu operations", ops);
	err = ak_run_until_done(skel->progs.misuse_run, NULL, 0, STRESS_MAX_RUNS, &retval, &runs);
	if (err || retval) {
		fprintf(stderr, "arenakit stress: misuse: %s\n", strerror(-(err ?: retval)));
		err = err ?: retval;
		goto out;
	}
	err = ak_run_until_done(skel->progs.misuse_teardown, NULL, 0, STRESS_MAX_RUNS, &retval,
				NULL);
	if (err || retval) {
		fprintf(stderr, "arenakit stress: misuse teardown: %s\n",
			strerror(-(err ?: retval)));
		err = err ?: retval;
		goto out;
	}
	stress_verdict(r, m->doubles && m->doubles_caught == m->doubles, 0,
		"double frees: %llu caught of %llu", m->doubles_caught, m->doubles);
	stress_verdict(r, m->interiors && m->interiors_caught == m->interiors, 0,
		"interior frees: %llu caught of %llu", m->interiors_caught, m->interiors);
	stress_verdict(r, m->foreigns && m->foreigns_caught == m->foreigns, 0,
		"foreign frees: %llu caught of %llu", m->foreigns_caught, m->foreigns);
	stress_verdict(r, m->stales && m->stales_caught == m->stales, 0,
		"stale cursors: %llu caught of %llu", m->stales_caught, m->stales);
	stress_verdict(r, !m->free_failed && !m->alloc_failed, 0,
		"legitimate calls refused: %llu frees, %llu allocations", m->free_failed,
		m->alloc_failed);
	/*
	 * A second free of an object whose pages already went back to the
	 * kernel (a large one, or the last of its page) finds no block there:
	 * it is refused all the same, but counted as a bad free.
	 */
	ak_alloc_stats_read(&skel->arena->ak_allocator, &st);
	stress_verdict(r, st.double_frees - before.double_frees +
		st.bad_frees - before.bad_frees == m->doubles + m->interiors + m->foreigns &&
		st.double_frees - before.double_frees <= m->doubles, 0,
		"stats: %llu double and %llu bad frees counted, %llu double and %llu other "
		"injected", st.double_frees - before.double_frees,
		st.bad_frees - before.bad_frees, m->doubles, m->interiors + m->foreigns);
	stress_verdict(r, st.objects == before.objects && st.bytes == before.bytes, 0,
		"after freeing everything: %llu objects, %llu bytes (before: %llu, %llu)",
		st.objects, st.bytes, before.objects, before.bytes);
	stress_verdict(r, st.pages == st.slab_pages + st.large_pages + st.spare_pages, 0,
		"pages %llu != slab %llu + large %llu + spare %llu", st.pages, st.slab_pages,
		st.large_pages, st.spare_pages);
	stress_progress_clear(s);
	printf("misuse: %llu allocations, %llu frees; caught %llu double, %llu interior, "
	       "%llu foreign frees and %llu stale cursors, in %u runs (stats: %llu double, "
	       "%llu bad frees)\n", m->allocs, m->frees, m->doubles_caught, m->interiors_caught,
	       m->foreigns_caught, m->stales_caught, runs, st.double_frees - before.double_frees,
	       st.bad_frees - before.bad_frees);
	stress_row_done(r);
	err = 0;
out:
	stress_misuse__destroy(skel);
	return err;
}

const struct stress_scenario stress_scenario_misuse = {
	.name = "misuse",
	.help = "2M random allocations and frees (--quick: 20k) with double,\n"
		"interior and foreign frees and stale cursors mixed in: each must\n"
		"be refused (-EINVAL, -AK_ESTALE) and counted, every legitimate\n"
		"call must succeed, and with the rest freed the allocator's\n"
		"objects and bytes must be back (a second free of an object whose\n"
		"pages went back to the kernel is counted as a bad free, not a\n"
		"double one)",
	.run = scenario_misuse,
};
