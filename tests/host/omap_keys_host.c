// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * omap.h's keys in user space: byte strings (ak_omap_key_bytes) walk in
 * strcmp order, and one-word keys bound as a sorted array's.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>

/* One thread: nothing races, so a find's read section follows links as they are, as in BPF. */
#define AK_ARENA_CLAMP(p) (p)
#include "host/alloc_pages.h"
#include <arenakit/omap.h>

static struct ak_omap map;

static void teardown(void)
{
	expect_pages_accounted();
}

TestSuite(omap_keys_host, .fini = teardown);

struct name_key {
	unsigned long long w[3];	/* 24 bytes of a name */
};

static int by_strcmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

/*
 * Names packed by ak_omap_key_bytes come back from a walk in strcmp's
 * order, prefixes first; a name longer than the key is cut to its size.
 */
Test(omap_keys_host, byte_string_keys_walk_in_strcmp_order)
{
	static char names[2000][25];
	unsigned int seed = 11, i, j, n = 0;
	struct ak_omap_cursor c;
	struct name_key k, got;
	uint64_t value = 0, *p;
	char text[25];
	int err;

	cr_assert_eq(ak_omap_init(&map, sizeof(k), sizeof(value)), 0);
	for (i = 0; i < 2000; i++) {
		unsigned int len = rand_r(&seed) % 25;

		/* Few letters, so that names share prefixes and one is another's. */
		for (j = 0; j < len; j++)
			text[j] = 'a' + rand_r(&seed) % 3;
		text[len] = 0;
		ak_omap_key_bytes(k.w, 3, (const unsigned char *)text, len);
		err = ak_omap_update(&map, &k, &value, AK_OMAP_NOEXIST);
		if (bsearch(text, names, n, sizeof(names[0]), by_strcmp)) {
			cr_assert_eq(err, -EEXIST, "\"%s\" is there: %d", text, err);
			continue;
		}
		cr_assert_eq(err, 0, "\"%s\" is new: %d", text, err);
		memcpy(names[n++], text, sizeof(text));
		qsort(names, n, sizeof(names[0]), by_strcmp);
	}
	ak_omap_cursor_init(&c, NULL, NULL, 1);
	for (i = 0; !(err = ak_omap_next(&map, &c, &got, &p)); i++) {
		cr_assert_lt(i, n);
		for (j = 0; j < 24; j++)
			text[j] = got.w[j / 8] >> (56 - j % 8 * 8);
		text[24] = 0;
		cr_assert_str_eq(text, names[i], "name %u", i);
	}
	cr_assert_eq(err, -ENOENT);
	cr_assert_eq(i, n);
	/* Past the key's size: the same key. */
	memset(text, 'c', 24);
	ak_omap_key_bytes(k.w, 3, (const unsigned char *)"cccccccccccccccccccccccccc", 26);
	cr_assert_eq(ak_omap_lookup(&map, &k, &err) != NULL,
		     bsearch(text, names, n, sizeof(names[0]), by_strcmp) != NULL);
	cr_assert_eq(ak_omap_destroy(&map), 0);
	printf("omap_host: %u distinct names of 2000 walked in strcmp order\n", n);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * One-word keys (their own search): bounds at and after every key of a
 * random set, the words at either end among them, against a sorted array.
 */
Test(omap_keys_host, one_word_keys_bound_as_a_sorted_array)
{
	static uint64_t keys[3000];
	unsigned long long k, got, value = 7;
	unsigned int seed = 5, n = 0, i, strict, at;
	uint64_t probe;
	int err;

	cr_assert_eq(ak_omap_init(&map, sizeof(k), sizeof(value)), 0);
	keys[n++] = 0;
	keys[n++] = ~0ULL;
	keys[n++] = ~0ULL - 1;
	while (n < 3000)
		keys[n++] = (uint64_t)rand_r(&seed) << 33 ^ (uint64_t)rand_r(&seed) << 2;
	for (i = 0; i < n; i++) {
		k = keys[i];
		err = ak_omap_update(&map, &k, &value, AK_OMAP_ANY);
		cr_assert_eq(err, 0);
	}
	qsort(keys, n, sizeof(keys[0]), u64_cmp);
	for (i = 1, at = 1; i < n; i++)	/* unique */
		if (keys[i] != keys[at - 1])
			keys[at++] = keys[i];
	n = at;
	cr_assert_eq(ak_omap_count(&map), n);
	cr_assert_eq(ak_omap_check(&map), 0);
	for (i = 0; i < 3 * n; i++) {
		probe = i % 3 == 0 ? keys[i / 3] : i % 3 == 1 ? keys[i / 3] + 1 : keys[i / 3] - 1;
		for (strict = 0; strict < 2; strict++) {
			for (at = 0; at < n && (keys[at] < probe || (strict && keys[at] == probe));
			     at++)
				;
			k = probe;
			got = 0;
			if (at == n) {
				cr_assert_null(ak_omap_bound(&map, &k, strict, &got, &err),
					       "%llx strict %u: nothing after", (unsigned long long)probe,
					       strict);
				cr_assert_eq(err, -ENOENT);
			} else {
				cr_assert_not_null(ak_omap_bound(&map, &k, strict, &got, &err));
				cr_assert_eq(got, keys[at], "%llx strict %u: %llx, want %llx",
					     (unsigned long long)probe, strict, got,
					     (unsigned long long)keys[at]);
			}
		}
	}
	cr_assert_eq(ak_omap_destroy(&map), 0);
	printf("omap_host: %u one-word keys, %u bounds each way as a sorted array's\n", n, 3 * n);
}
