/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the hash table's host tests share: htab.h built for user space,
 * over heap pages (alloc_pages.c), with a test hash that can be switched
 * to a constant, so that every key shares one chain; one table per test
 * file, and the pages checked after each test.
 */
#ifndef ARENAKIT_TESTS_HTAB_HOST_H
#define ARENAKIT_TESTS_HTAB_HOST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>

static int one_chain;	/* force every key into one chain */

#define AK_HTAB_TEST_HASH(t, w, words) (one_chain ? 0x5eedULL : __ak_htab_pms(t, w, words))
#include "host/alloc_pages.h"
#include <arenakit/htab.h>
#include <arenakit/htab_user.h>

struct key16 {
	uint64_t a, b;
};

static struct ak_htab table;

static void teardown(void)
{
	expect_pages_accounted();
}

#endif
