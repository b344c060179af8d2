// SPDX-License-Identifier: GPL-2.0
/*
 * The arenakit allocator against the 6.12 selftests' page_frag allocator
 * (tools/testing/selftests/bpf/bpf_arena_alloc.h, included from the
 * kernel tree at build time), in one arena: a run allocates @count
 * objects, then frees them, each loop timed with bpf_ktime_get_ns(); or,
 * in the steady state, frees one of a working set of live objects at random
 * and allocates its replacement, over and over. The driver
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
		slots = ak_alloc(ALLOC_BENCH_SLOTS * sizeof(*slots));
	return slots ? 0 : -ENOMEM;
}

/* Chunks of this many objects, each in a frame (and loop budget) of its own. */
#define CHUNK 8192

/*
 * One global function per allocator and direction: each is verified once
 * (both allocators inlined into one loop passed the verifier's limit).
 */
#define ALLOC_CHUNK(name, alloc)					\
__noinline unsigned long long name(__u32 from, __u32 to, __u32 size)	\
{									\
	unsigned long long failed = 0;					\
	void __arena *p;						\
	__u32 i;							\
									\
	for (i = from; i < to && i < ALLOC_BENCH_SLOTS && can_loop; i++) { \
		p = alloc(size);					\
		failed += !p;						\
		slots[i] = p;						\
	}								\
	return failed;							\
}

#define FREE_CHUNK(name, free)						\
__noinline int name(__u32 from, __u32 to)				\
{									\
	__u32 i;							\
									\
	for (i = from; i < to && i < ALLOC_BENCH_SLOTS && can_loop; i++) { \
		if (slots[i])						\
			free(slots[i]);					\
		slots[i] = 0;						\
	}								\
	return 0;							\
}

ALLOC_CHUNK(alloc_ours, ak_alloc)
ALLOC_CHUNK(alloc_frag, bpf_alloc)
FREE_CHUNK(free_ours, ak_free)
FREE_CHUNK(free_frag, bpf_free)

static void free_all(struct alloc_bench_args *a)
{
	__u32 end = a->first + a->count, c, to;
	int ours = a->kind == ALLOC_OURS;

	for (c = a->first + ak_opaque_zero(); c < end && can_loop; c += CHUNK) {
		to = c + CHUNK < end ? c + CHUNK : end;
		if (ours)
			free_ours(c, to);
		else
			free_frag(c, to);
	}
	/*
	 * The page_frag allocator frees a page when its last object goes, but
	 * keeps it as the CPU's current page, and would hand out objects in
	 * the freed page next run: forget it, as a fresh program would.
	 */
	if (!ours) {
		__u32 cpu = bpf_get_smp_processor_id();

		if (cpu < NR_CPUS)
			page_frag_cur_page[cpu] = 0;
	}
}

/* Each CPU's xorshift state for the steady-state case. */
__u64 steady_rng[ALLOC_BENCH_CPUS];

/*
 * @ops times: free a random object of the working set at @first, allocate
 * its replacement. A global function per allocator, as above.
 */
#define STEADY_CHUNK(name, alloc, free)					\
__noinline unsigned long long name(__u32 cpu, __u32 first, __u32 ops, __u32 size) \
{									\
	unsigned long long failed = 0, x;				\
	__u32 i, slot;							\
									\
	if (cpu >= ALLOC_BENCH_CPUS)					\
		return ops;						\
	x = steady_rng[cpu] ?: 0x9e3779b97f4a7c15ULL * (cpu + 1);	\
	for (i = ak_opaque_zero(); i < ops && can_loop; i++) {		\
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
	return failed + (ops - i);					\
}

/*
 * page_frag's bpf_free gives a page back when its count reaches 0 but keeps
 * it as the CPU's current page, and the next bpf_alloc carves the freed page
 * (which the kernel may have handed to arenakit meanwhile: both share this
 * arena). Forget the current page first when its last object goes, as the
 * alloc-then-free case does after its frees, so each allocator only ever
 * writes pages it holds.
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

STEADY_CHUNK(steady_ours, ak_alloc, ak_free)
STEADY_CHUNK(steady_frag, bpf_alloc, frag_free)

/* The steady state: @count operations on the working set at @first. */
SEC("syscall")
int steady(struct alloc_bench_args *a)
{
	__u32 c, n, size = a->size, cpu = a->cpu;
	int ours = a->kind == ALLOC_OURS;
	unsigned long long start, failed = 0;

	start = bpf_ktime_get_ns();
	for (c = ak_opaque_zero(); c < a->count && can_loop; c += CHUNK) {
		n = a->count - c < CHUNK ? a->count - c : CHUNK;
		failed += ours ? steady_ours(cpu, a->first, n, size) :
				 steady_frag(cpu, a->first, n, size);
	}
	a->alloc_ns = bpf_ktime_get_ns() - start;
	a->free_ns = 0;
	a->failed = failed;
	return 0;
}

SEC("syscall")
int alloc_free(struct alloc_bench_args *a)
{
	__u32 end = a->first + a->count, size = a->size, c, to;
	int ours = a->kind == ALLOC_OURS;
	unsigned long long start, failed = 0;

	start = bpf_ktime_get_ns();
	for (c = a->first + ak_opaque_zero(); c < end && can_loop; c += CHUNK) {
		to = c + CHUNK < end ? c + CHUNK : end;
		failed += ours ? alloc_ours(c, to, size) : alloc_frag(c, to, size);
	}
	a->alloc_ns = bpf_ktime_get_ns() - start;
	a->failed = failed;
	if (a->keep)
		return 0;
	start = bpf_ktime_get_ns();
	free_all(a);
	a->free_ns = bpf_ktime_get_ns() - start;
	return 0;
}

/* Free what a run with @keep left (the pages-used measurement). */
SEC("syscall")
int free_kept(struct alloc_bench_args *a)
{
	free_all(a);
	return 0;
}

char _license[] SEC("license") = "GPL";
