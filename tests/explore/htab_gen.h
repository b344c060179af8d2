/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What htab_gen.c (the calls, the model) and htab_gen_states.c (the states
 * they start from) share: the keys (htab_gen.c says how they meet in the
 * table's chains), the table, and the states.
 */
#ifndef ARENAKIT_TESTS_EXPLORE_HTAB_GEN_H
#define ARENAKIT_TESTS_EXPLORE_HTAB_GEN_H

#include "explore/gen.h"
#include <arenakit/omap.h>

#define KEY_P 1ULL
#define KEY_Q 17ULL
#define KEY_A 33ULL
#define UNIVERSE 64	/* keys 1..63 are checked after every schedule */

extern struct ak_htab __arena_global table;
/*
 * Beside it (state BESIDE), on the same allocator: a table with the same
 * seeds, whose P hashes as the table's P does, and an ordered map.
 */
extern struct ak_htab __arena_global other;
extern struct ak_omap __arena_global beside_map;

enum { SMALL, FULL, BEGUN, HELD, END, GROWN, RESEED, BESIDE, NSTATES };

extern const struct gen_state states[NSTATES];

#endif
