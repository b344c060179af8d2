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

enum perf_op {
	ARENA_INSERT, MAP_INSERT, ARENA_UPDATE, MAP_UPDATE,
	ARENA_HIT, MAP_HIT, ARENA_MISS, MAP_MISS,
};

/*
 * Keys [from, to) through one operation. A function of its own (not
 * inlined), so that each chunk of CHUNK keys gets a loop budget of its own
 * whatever the kernel's budget is (a count, or time): a whole table in one
 * frame is cut. A chunk cut all the same is counted in result.errors.
 */
#define CHUNK 16384
#define PERF_CHUNK(name, table, map, key_type, key_of)			\
static __noinline int name(enum perf_op op, __u32 from, __u32 to)	\
{									\
	__u64 v = 1, found = 0;						\
	__u64 __arena *p;						\
	key_type k;							\
	__u32 i;							\
	int err = 0;							\
									\
	for (i = from; i < to && can_loop; i++) {			\
		k = key_of(i);						\
		switch (op) {						\
		case ARENA_INSERT:					\
			err |= ak_htab_update(&table, &k, &v, AK_HTAB_NOEXIST); \
			break;						\
		case MAP_INSERT:					\
			err |= bpf_map_update_elem(&map, &k, &v, BPF_NOEXIST); \
			break;						\
		case ARENA_UPDATE:					\
			err |= ak_htab_update(&table, &k, &v, AK_HTAB_EXIST); \
			break;						\
		case MAP_UPDATE:					\
			err |= bpf_map_update_elem(&map, &k, &v, BPF_EXIST); \
			break;						\
		case ARENA_HIT:						\
		case ARENA_MISS:					\
			p = ak_htab_lookup(&table, &k, 0);		\
			found += p != 0;				\
			break;						\
		default:						\
			found += bpf_map_lookup_elem(&map, &k) != 0;	\
			break;						\
		}							\
	}								\
	result.found += found;						\
	if (err || i < to)						\
		result.errors++;					\
	return 0;							\
}

/*
 * ps per op of @op over the table's keys (a miss looks up the keys above
 * them), from the clock around the whole loop: `reps` times (at least
 * about 512k operations in all, well over the clock's steps under TCG),
 * inserts once.
 */
#define TIMED(chunk, field, op, times)					\
	({								\
		__u64 ___start = bpf_ktime_get_ns();			\
		__u32 ___base = (op) == ARENA_MISS || (op) == MAP_MISS ? entries : 0; \
		__u32 ___r, ___c, ___end;				\
									\
		for (___r = zero; ___r < (times) && can_loop; ___r++)	\
			for (___c = zero; ___c < entries && can_loop; ___c += CHUNK) { \
				___end = ___c + CHUNK < entries ? ___c + CHUNK : entries; \
				chunk((op), ___base + ___c, ___base + ___end); \
			}						\
		result.field = (bpf_ktime_get_ns() - ___start) * 1000 / (entries * (times)); \
	})

/* One program per key type: the same eight timed loops, arena and map. */
#define PERF_PROGRAM(name, table, map, key_type, key_of)		\
PERF_CHUNK(name##_chunk, table, map, key_type, key_of)			\
SEC("syscall")								\
int name(void *ctx)							\
{									\
	if (ak_htab_init(&table, sizeof(key_type), sizeof(__u64), entries * 4 / 3 + 1)) \
		return -ENOMEM;						\
	TIMED(name##_chunk, arena_insert, ARENA_INSERT, 1);		\
	TIMED(name##_chunk, map_insert, MAP_INSERT, 1);			\
	TIMED(name##_chunk, arena_update, ARENA_UPDATE, reps);		\
	TIMED(name##_chunk, map_update, MAP_UPDATE, reps);		\
	TIMED(name##_chunk, arena_hit, ARENA_HIT, reps);		\
	TIMED(name##_chunk, map_hit, MAP_HIT, reps);			\
	TIMED(name##_chunk, arena_miss, ARENA_MISS, reps);		\
	TIMED(name##_chunk, map_miss, MAP_MISS, reps);			\
	return 0;							\
}

PERF_PROGRAM(perf4, table4, map4, __u32, key4)
PERF_PROGRAM(perf16, table16, map16, struct key16, key16)

char _license[] SEC("license") = "GPL";
