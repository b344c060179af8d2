// SPDX-License-Identifier: GPL-2.0
/*
 * The arena hash table against BPF_MAP_TYPE_HASH, side by side in one
 * program: inserts into a pre-sized table, updates of present keys,
 * lookups that hit and lookups that miss, deletes of every key, each
 * timed inside BPF with bpf_ktime_get_ns() around its loop. A case leaves
 * both empty and the table destroyed, so runs repeat. The counts let the
 * driver (bench/htab_vs_map.c) check that every hit was found and no miss was.
 */
#define AK_ARENA_PAGES 262144
#define AK_HTAB_PROG_MAX_KEY 16	/* the longest key its tables take */
#include <arenakit/htab.h>
#include "htab_vs_map.h"
#include "phase.bpf.h"

struct key16 {
	__u64 a, b;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, HTAB_BENCH_MAX);
	__type(key, __u32);
	__type(value, __u64);
} map4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, HTAB_BENCH_MAX);
	__type(key, struct key16);
	__type(value, __u64);
} map16 SEC(".maps");

struct ak_htab __arena_global table4;
struct ak_htab __arena_global table16;

struct htab_bench_result result;
unsigned int entries;	/* set by user space */
unsigned int reps;	/* update and lookup loops run this many times */
/*
 * Reserve nodes for every entry before the inserts (ak_htab_reserve), as
 * BPF_MAP_TYPE_HASH preallocates its elements; without the pool, a delete
 * that empties a page gives the page back to the kernel.
 */
unsigned int pool;
unsigned int wide;	/* the table fill_pool and teardown work on: 16-byte keys */

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
 * Keys [from, to) through one operation on the table (map == 0) or the
 * map. A global function: the verifier checks it once, on its own, not
 * once per state of the caller's loop; and each chunk gets a loop budget
 * of its own whatever the kernel's budget is (a count, or time). Returns
 * the index it reached (see BENCH_TIMED); result.errors counts the
 * operations that failed.
 */
#define HTAB_CHUNK(name, table, hmap, key_type, key_of)		\
__noinline int name(enum htab_op op, int map, __u32 from, __u32 to) \
{									\
	__u64 v = 1, found = 0;						\
	key_type k;							\
	__u32 i;							\
	int err = 0;							\
									\
	for (i = from; i < to && can_loop; i++) {			\
		k = key_of(i);						\
		switch (op * 2 + map) {					\
		case HTAB_INSERT * 2:					\
			err |= ak_htab_update(&table, &k, &v, AK_HTAB_NOEXIST); \
			break;						\
		case HTAB_INSERT * 2 + 1:				\
			err |= bpf_map_update_elem(&hmap, &k, &v, BPF_NOEXIST); \
			break;						\
		case HTAB_UPDATE * 2:					\
			err |= ak_htab_update(&table, &k, &v, AK_HTAB_EXIST); \
			break;						\
		case HTAB_UPDATE * 2 + 1:				\
			err |= bpf_map_update_elem(&hmap, &k, &v, BPF_EXIST); \
			break;						\
		case HTAB_DELETE * 2:					\
			err |= ak_htab_delete(&table, &k);		\
			break;						\
		case HTAB_DELETE * 2 + 1:				\
			err |= bpf_map_delete_elem(&hmap, &k);		\
			break;						\
		case HTAB_HIT * 2:					\
		case HTAB_MISS * 2:					\
			found += ak_htab_lookup(&table, &k, 0) != 0;	\
			break;						\
		default:						\
			found += bpf_map_lookup_elem(&hmap, &k) != 0;	\
			break;						\
		}							\
	}								\
	result.found += found;						\
	if (err)							\
		result.errors++;					\
	return i;							\
}

/* The phase a run works on: set by user space, resumed by BENCH_TIMED. */
struct bench_phase phase;

/*
 * Before and after each run of a timed program, programs of their own
 * (the verifier's count is per program): the pool before the inserts; the
 * table and the pool's pages gone after, so that each run starts alike.
 */
SEC("syscall")
int fill_pool(void *ctx)
{
	struct ak_htab __arena *table = wide ? &table16 : &table4;
	int err, i;

	err = ak_htab_init(table, wide ? sizeof(struct key16) : sizeof(__u32), sizeof(__u64),
			   entries * 4 / 3 + 1);
	for (i = ak_opaque_zero(); i < 64 && !err && pool && can_loop; i++) {
		err = ak_htab_reserve(table, entries);
		if (err != -AK_EBUDGET)
			break;
	}
	return err;
}

SEC("syscall")
int teardown(void *ctx)
{
	struct ak_htab __arena *table = wide ? &table16 : &table4;
	int err = -AK_EBUDGET, i;

	for (i = ak_opaque_zero(); i < 64 && err == -AK_EBUDGET && can_loop; i++)
		err = ak_htab_destroy(table);
	for (i = ak_opaque_zero(); i < 64 && can_loop; i++)
		if (ak_alloc_trim() != -AK_EBUDGET)
			break;
	return err;
}

/* One program per key type: the phase user space set, resumable (see phase). */
#define BENCH_PROGRAM(name, table, hmap, key_type, key_of)		\
HTAB_CHUNK(name##_chunk, table, hmap, key_type, key_of)		\
SEC("syscall")								\
int name(void *ctx)							\
{									\
	int once = phase.op == HTAB_INSERT || phase.op == HTAB_DELETE;	\
	__u32 times = once ? 1 : reps;					\
	int err;							\
									\
	/* A miss looks up the keys above them. */			\
	err = BENCH_TIMED(phase, name##_chunk, times,			\
			  phase.op == HTAB_MISS ? entries : 0, entries); \
	if (!err && phase.op < HTAB_OPS && phase.side < 2)		\
		result.ps[phase.op][phase.side] = BENCH_PS_PER_OP(phase, entries, times); \
	return err;							\
}

BENCH_PROGRAM(htab4, table4, map4, __u32, key4)
BENCH_PROGRAM(htab16, table16, map16, struct key16, key16)

char _license[] SEC("license") = "GPL";
