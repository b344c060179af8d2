// SPDX-License-Identifier: GPL-2.0
/*
 * The arena hash table against BPF_MAP_TYPE_HASH, side by side in one
 * program run: inserts into a pre-sized table, updates of present keys,
 * lookups that hit and lookups that miss, timed inside BPF with
 * bpf_ktime_get_ns() around each loop. tests/guest/htab_perf.c drives it
 * at several sizes and prints ns/op and ratios; the results also check
 * that every hit was found and no miss was.
 */
#define AK_ARENA_PAGES 262144
#include <arenakit/htab.h>
#include "guest/htab_perf.h"

struct key16 {
	__u64 a, b;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, HTAB_PERF_MAX);
	__type(key, __u32);
	__type(value, __u64);
} map4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, HTAB_PERF_MAX);
	__type(key, struct key16);
	__type(value, __u64);
} map16 SEC(".maps");

struct ak_htab __arena_global table4;
struct ak_htab __arena_global table16;

struct htab_perf_result result;
unsigned int entries;	/* set by user space */
unsigned int reps;	/* timed loops other than inserts run this many times */
int zero;

static __u32 key4(__u32 i)
{
	return i * 2654435761u;
}

static struct key16 key16(__u32 i)
{
	struct key16 k = { (__u64)i * 0x9e3779b97f4a7c15ULL, i };

	return k;
}

/*
 * ps per op of a loop, from the clock around it: @body runs `reps` times
 * (at least about 512k operations in all, well over the clock's steps under
 * TCG), inserts once.
 */
#define TIMED(field, body)						\
	({								\
		__u64 ___start = bpf_ktime_get_ns();			\
		unsigned int ___r;					\
									\
		for (___r = zero; ___r < reps && can_loop; ___r++) {	\
			body;						\
		}							\
		result.field = (bpf_ktime_get_ns() - ___start) * 1000 / (entries * reps); \
	})

#define TIMED_ONCE(field, body)						\
	({								\
		__u64 ___start = bpf_ktime_get_ns();			\
		body;							\
		result.field = (bpf_ktime_get_ns() - ___start) * 1000 / entries; \
	})

/*
 * One program per key type: the same eight timed loops over the arena
 * table @table and the map @map, keys made by @key_of(i).
 */
#define PERF_PROGRAM(name, table, map, key_type, key_of)		\
SEC("syscall")								\
int name(void *ctx)							\
{									\
	__u64 v = 1;							\
	__u64 __arena *p;						\
	key_type k;							\
	__u32 i;							\
	int err = 0;							\
									\
	if (ak_htab_init(&table, sizeof(k), sizeof(__u64), entries * 4 / 3 + 1)) \
		return -ENOMEM;						\
	TIMED_ONCE(arena_insert, for (i = zero; i < entries && can_loop; i++) { \
		k = key_of(i);						\
		err |= ak_htab_update(&table, &k, &v, AK_HTAB_NOEXIST);	\
	});								\
	TIMED_ONCE(map_insert, for (i = zero; i < entries && can_loop; i++) { \
		k = key_of(i);						\
		err |= bpf_map_update_elem(&map, &k, &v, BPF_NOEXIST);	\
	});								\
	TIMED(arena_update, for (i = zero; i < entries && can_loop; i++) { \
		k = key_of(i);						\
		err |= ak_htab_update(&table, &k, &v, AK_HTAB_EXIST);	\
	});								\
	TIMED(map_update, for (i = zero; i < entries && can_loop; i++) { \
		k = key_of(i);						\
		err |= bpf_map_update_elem(&map, &k, &v, BPF_EXIST);	\
	});								\
	TIMED(arena_hit, for (i = zero; i < entries && can_loop; i++) { \
		k = key_of(i);						\
		p = ak_htab_lookup(&table, &k, 0);			\
		result.found += p != 0;					\
	});								\
	TIMED(map_hit, for (i = zero; i < entries && can_loop; i++) {	\
		k = key_of(i);						\
		result.found += bpf_map_lookup_elem(&map, &k) != 0;	\
	});								\
	TIMED(arena_miss, for (i = zero; i < entries && can_loop; i++) { \
		k = key_of(i + entries);				\
		p = ak_htab_lookup(&table, &k, 0);			\
		result.found += p != 0;					\
	});								\
	TIMED(map_miss, for (i = zero; i < entries && can_loop; i++) { \
		k = key_of(i + entries);				\
		result.found += bpf_map_lookup_elem(&map, &k) != 0;	\
	});								\
	result.errors = err != 0;					\
	return 0;							\
}

PERF_PROGRAM(perf4, table4, map4, __u32, key4)
PERF_PROGRAM(perf16, table16, map16, struct key16, key16)

char _license[] SEC("license") = "GPL";
