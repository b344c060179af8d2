/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The hash the hash table's guest tests build htab.h with, before including
 * it: htab.h's own, or one chain for every key while one_chain is set (the
 * lost-update case, htab_calls.bpf.c). htab.bpf.c and htab_calls.bpf.c
 * include it both, so the library is built alike in each.
 */
#ifndef ARENAKIT_TESTS_GUEST_HTAB_TEST_HASH_H
#define ARENAKIT_TESTS_GUEST_HTAB_TEST_HASH_H

int one_chain;	/* force every key into one chain (the lost-update case) */

#define AK_HTAB_TEST_HASH(t, w, words) (one_chain ? 0x5eedULL : __ak_htab_pms(t, w, words))

#endif
