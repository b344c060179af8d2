// SPDX-License-Identifier: GPL-2.0
/*
 * The arenakit allocator against the 6.12 selftests' page_frag allocator
 * (tools/testing/selftests/bpf/bpf_arena_alloc.h, included from the
 * kernel tree at build time), in one arena: allocate @count objects, then
 * free them, each loop timed with bpf_ktime_get_ns(); or, in the steady
 * state, free one of a working set of live objects at random and allocate
 * its replacement, over and over. The driver
 * (bench/alloc_vs_frag.c) runs each on one CPU, and on two at once.
 */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>

#define ARENA_PAGES (1 << 18)	/* 1 GiB */
struct {
	__uint(type, BPF_MAP_TYPE_ARENA);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, ARENA_PAGES);
} arena SEC(".maps");

#include "bpf_arena_alloc.h"

#define AK_ALLOC_MAP arena
#include <arenakit/alloc.h>
#include "alloc_vs_frag.h"

/* The objects' pointers; allocated by setup (a global array would fill the ELF). */
void __arena *__arena *__arena_global slots;

SEC("syscall")
int setup(void *ctx)
{
	if (!slots)
		slots = ak_alloc(ALLOC_BENCH_SLOTS * sizeof(*slots), NULL);
	return slots ? 0 : -ENOMEM;
}

/*
 * A program that allocates and frees once, the least a user of the
 * allocator writes: what the allocator alone costs the verifier (section
 * verifier), and one alloc+free pair when run.
 */
SEC("syscall")
int alloc_free_once(void *ctx)
{
	void __arena *p = ak_alloc(16, NULL);

	return p ? ak_free(p) : -ENOMEM;
}

/*
 * Objects per call of a global function: each call is a frame with a loop
 * budget of its own, and this many operations stay far inside it even when
 * each takes a page kfunc (a free that gives a page back flushes every
 * CPU's TLB, which under TCG takes tens of microseconds).
 */
#define CHUNK 256

/*
 * One global function per allocator and direction: each is verified once
 * (both allocators inlined into one loop passed the verifier's limit).
 * Each returns the operations it made, and the allocations that failed
 * above bit 32.
 */
#define ALLOC_CHUNK(name, alloc)					\
__noinline __u64 name(__u32 from, __u32 n, __u32 size)			\
{									\
	__u64 failed = 0;						\
	void __arena *p;						\
	__u32 i;							\
									\
	for (i = ak_opaque_zero(); i < n && from + i < ALLOC_BENCH_SLOTS && can_loop; i++) { \
		p = alloc(size);					\
		failed += !p;						\
		slots[from + i] = p;					\
	}								\
	return failed << 32 | i;					\
}

#define FREE_CHUNK(name, free)						\
__noinline __u64 name(__u32 from, __u32 n)				\
{									\
	__u32 i;							\
									\
	for (i = ak_opaque_zero(); i < n && from + i < ALLOC_BENCH_SLOTS && can_loop; i++) { \
		if (slots[from + i])					\
			free(slots[from + i]);				\
		slots[from + i] = 0;					\
	}								\
	return i;							\
}

/*
 * page_frag's bpf_free gives a page back when its count reaches 0 but keeps
 * it as the CPU's current page, and the next bpf_alloc carves the freed page
 * (which the kernel may have handed to arenakit meanwhile: both share this
 * arena). Forget the current page first when its last object goes, so each
 * allocator only ever writes pages it holds.
 */
static __always_inline void frag_free(void __arena *p)
{
	__u32 cpu = bpf_get_smp_processor_id();
	void __arena *page = (void __arena *)((long)p & ~(PAGE_SIZE - 1));
	__u64 __arena *obj_cnt = page + PAGE_SIZE - 8;

	if (cpu < NR_CPUS && page_frag_cur_page[cpu] == page && *obj_cnt == 1)
		page_frag_cur_page[cpu] = 0;
	bpf_free(p);
}

/* Each CPU's xorshift state for the steady-state case. */
__u64 steady_rng[ALLOC_BENCH_CPUS];

/*
 * The steady state, @n times: free a random object of the working set at
 * @first and allocate its replacement.
 */
#define STEADY_CHUNK(name, alloc, free)					\
__noinline __u64 name(__u32 cpu, __u32 first, __u32 n, __u32 size)	\
{									\
	__u64 failed = 0, x;						\
	__u32 i, slot;							\
									\
	if (cpu >= ALLOC_BENCH_CPUS)					\
		return 0;						\
	x = steady_rng[cpu] ?: 0x9e3779b97f4a7c15ULL * (cpu + 1);	\
	for (i = ak_opaque_zero(); i < n && can_loop; i++) {		\
		x ^= x << 13;						\
		x ^= x >> 7;						\
		x ^= x << 17;						\
		slot = first + x % ALLOC_BENCH_WORKING;			\
		if (slot >= ALLOC_BENCH_SLOTS)				\
			break;						\
		if (slots[slot])					\
			free(slots[slot]);				\
		slots[slot] = alloc(size);				\
		failed += !slots[slot];					\
	}								\
	steady_rng[cpu] = x;						\
	return failed << 32 | i;					\
}

/*
 * The page kfuncs alone: runs of @size pages each, taken by one
 * bpf_arena_alloc_pages() call a run (slots hold the runs; pages_take),
 * or given back by one bpf_arena_free_pages() call a run (pages_give).
 * What a page costs, and whether taking or giving back several at once
 * costs less a page, decides how the allocator should move pages.
 */
#define take_run(pages) bpf_arena_alloc_pages(&arena, NULL, pages, NUMA_NO_NODE, 0)
/* The allocator under the same one-argument shape as bpf_alloc. */
#define ours(size) ak_alloc(size, NULL)

ALLOC_CHUNK(alloc_ours, ours)
ALLOC_CHUNK(alloc_frag, bpf_alloc)
ALLOC_CHUNK(pages_take, take_run)
FREE_CHUNK(free_ours, ak_free)
FREE_CHUNK(free_frag, frag_free)
STEADY_CHUNK(steady_ours, ours, ak_free)
STEADY_CHUNK(steady_frag, bpf_alloc, frag_free)

/* Give back the @n runs of @per_call pages that pages_take took. */
__noinline __u64 pages_give(__u32 from, __u32 n, __u32 per_call)
{
	__u32 i;

	for (i = ak_opaque_zero(); i < n && from + i < ALLOC_BENCH_SLOTS && can_loop; i++) {
		if (slots[from + i])
			bpf_arena_free_pages(&arena, (void __arena *)slots[from + i], per_call);
		slots[from + i] = 0;
	}
	return i;
}

enum bench_op { OP_ALLOC, OP_FREE, OP_STEADY, OP_PAGES_TAKE, OP_PAGES_GIVE };

/*
 * @a->count operations of @op from @a->done on, CHUNK a call, timed: 0 when
 * all are made, -AK_EBUDGET when the loop budget cut the run (run it again).
 */
static __always_inline int run_op(struct alloc_bench_args *a, enum bench_op op)
{
	int ours = a->kind == ALLOC_OURS, err = 0;
	__u32 n, at, size = a->size;
	__u64 start, r;

	start = bpf_ktime_get_ns();
	while (a->done < a->count) {
		if (!can_loop) {
			err = -AK_EBUDGET;
			break;
		}
		n = a->count - a->done < CHUNK ? a->count - a->done : CHUNK;
		at = a->first + a->done;
		if (op == OP_ALLOC)
			r = ours ? alloc_ours(at, n, size) : alloc_frag(at, n, size);
		else if (op == OP_FREE)
			r = ours ? free_ours(at, n) : free_frag(at, n);
		else if (op == OP_PAGES_TAKE)
			r = pages_take(at, n, size);
		else if (op == OP_PAGES_GIVE)
			r = pages_give(at, n, size);
		else
			r = ours ? steady_ours(a->cpu, a->first, n, size) :
				   steady_frag(a->cpu, a->first, n, size);
		a->failed += r >> 32;
		a->done += (__u32)r;
		if ((__u32)r < n) {
			err = -AK_EBUDGET;	/* the call's own budget: go on next run */
			break;
		}
	}
	a->ns += bpf_ktime_get_ns() - start;
	return err;
}

/* Allocate @count objects of @size into the slots from @first. */
SEC("syscall")
int alloc_some(struct alloc_bench_args *a)
{
	return run_op(a, OP_ALLOC);
}

/* Free the @count objects in the slots from @first. */
SEC("syscall")
int free_some(struct alloc_bench_args *a)
{
	int err = run_op(a, OP_FREE);

	/*
	 * page_frag keeps the CPU's current page when its objects are gone and
	 * would hand out objects in it next case: forget it, as a fresh
	 * program would.
	 */
	if (!err && a->kind == ALLOC_PAGE_FRAG) {
		__u32 cpu = bpf_get_smp_processor_id();

		if (cpu < NR_CPUS)
			page_frag_cur_page[cpu] = 0;
	}
	return err;
}

/* The steady state: @count operations on the working set at @first. */
SEC("syscall")
int steady(struct alloc_bench_args *a)
{
	return run_op(a, OP_STEADY);
}

/* @count runs of @size pages each, one kfunc call a run, into the slots from @first. */
SEC("syscall")
int take_pages(struct alloc_bench_args *a)
{
	return run_op(a, OP_PAGES_TAKE);
}

/* Give back the @count runs of @size pages that take_pages took. */
SEC("syscall")
int give_pages(struct alloc_bench_args *a)
{
	return run_op(a, OP_PAGES_GIVE);
}

char _license[] SEC("license") = "GPL";
