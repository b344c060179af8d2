// SPDX-License-Identifier: GPL-2.0
/*
 * Keys and values of the sizes htab.h promises (keys of 1..256 bytes, values
 * of 1..256), from the stack and from globals (.bss and .data): each test
 * stores a few entries, reads them back through ak_htab_lookup,
 * ak_htab_lookup_copy and ak_htab_lookup_and_delete, rewrites them in place,
 * deletes them, and compares every byte it reads with what was stored.
 *
 * That the programs load is half the test: a value over 8 bytes is copied
 * into the arena word by word, copies clang may merge into a memcpy without
 * the address cast, which the verifier refuses ("R0 invalid mem access
 * 'scalar'"); the other tests' values are all 8 bytes.
 *
 * Each test comes from tests/guest/htab_sizes_case.h, included once per
 * pair of sizes; between them they cover the key sizes 1, 3, 4, 8, 12, 16,
 * 33, 64 (copied to the stack) and 72, 256 (long keys, taken where they
 * are) and the value sizes 1, 7, 8, 9, 16, 24, 64, 75, 128, 255, 256.
 */
/*
 * The sizes at the edge of the stack: the CPU caches' paths of the
 * allocator take 16 to 32 bytes more of it (include/arenakit/README.md,
 * "Stack"), which these programs, tuned to the last byte, do not have.
 */
#define AK_ALLOC_CPUS 0
#include <arenakit/htab.h>
#include "guest/bpf_test.h"

/* Entries per table: a few, so that some share a bucket's chain. */
#define ENTRIES 6
/* Key and value bytes that fit on a test's stack together (htab_sizes_case.h). */
#define STACK_ROOM 288

/* Byte @i of a key or value of entry @n; @salt tells keys, values, rewrites apart. */
static __always_inline __u8 pattern(__u32 n, __u32 i, __u32 salt)
{
	return (__u8)((n * 67 + i * 13 + salt) ^ (i >> 3));
}

#define KEY_SIZE 4
#define VALUE_SIZE 1
#include "guest/htab_sizes_case.h"

#define KEY_SIZE 8
#define VALUE_SIZE 7
#include "guest/htab_sizes_case.h"

#define KEY_SIZE 4
#define VALUE_SIZE 8
#include "guest/htab_sizes_case.h"

#define KEY_SIZE 12
#define VALUE_SIZE 9
#include "guest/htab_sizes_case.h"

#define KEY_SIZE 16
#define VALUE_SIZE 16
#include "guest/htab_sizes_case.h"

#define KEY_SIZE 3
#define VALUE_SIZE 24
#include "guest/htab_sizes_case.h"

#define KEY_SIZE 33
#define VALUE_SIZE 64
#include "guest/htab_sizes_case.h"

#define KEY_SIZE 1
#define VALUE_SIZE 75
#include "guest/htab_sizes_case.h"

#define KEY_SIZE 64
#define VALUE_SIZE 128
#include "guest/htab_sizes_case.h"

#define KEY_SIZE 12
#define VALUE_SIZE 255
#include "guest/htab_sizes_case.h"

#define KEY_SIZE 64
#define VALUE_SIZE 256
#include "guest/htab_sizes_case.h"

#define KEY_SIZE 72
#define VALUE_SIZE 16
#include "guest/htab_sizes_case.h"

#define KEY_SIZE 256
#define VALUE_SIZE 8
#include "guest/htab_sizes_case.h"

#define KEY_SIZE 256
#define VALUE_SIZE 256
#include "guest/htab_sizes_case.h"

char _license[] SEC("license") = "GPL";
