// SPDX-License-Identifier: GPL-2.0
/*
 * What a bounded loop costs: empty loops bounded by each mechanism, and
 * whole walks of one arena list by each mechanism and by the library's
 * walks. bench/walk.c links the list through the arena mmap, so BPF and
 * the native walk in user space follow the same nodes in the same memory.
 *
 * Each walk is a function of its own (not inlined) that walks until its
 * budget ends it; the program calls it again from where it stopped, so
 * a walk of any length finishes in one run whether the kernel's budget is
 * the count or time. A case is timed with bpf_ktime_get_ns() around all
 * of its calls: what is measured is the walk, not the test run's set-up.
 */
#define AK_ARENA_PAGES (1 << 18)	/* 1 GiB: 8M 24-byte entries and room */
#include <arenakit/alloc.h>
#include <arenakit/list.h>
#include "walk.h"

/* Weak: on a kernel without it the programs that call it are not loaded. */
extern long bpf_can_loop(void *ptr__ign) __ksym __weak;

struct ak_list __arena_global walk_list;
struct walk_item __arena *__arena_global walk_items;
struct ak_list_node __arena *__arena_global walk_pos;

unsigned long long items_wanted;	/* alloc_items: how many entries */
unsigned long long iterations;		/* loop: iterations of the empty loop */
int case_id;				/* enum loop_case or enum walk_case */
unsigned long long result_ns;
long long result_count;			/* iterations run, or nodes walked */
int result_err;

struct ak_list_cursor walk_cursor;

/* Frames a walk may take: 8M nodes in frames of 65,535 steps at worst. */
#define MAX_FRAMES 200

SEC("syscall")
int alloc_items(void *ctx)
{
	walk_items = ak_alloc(items_wanted * sizeof(struct walk_item), NULL);
	return walk_items ? 0 : -ENOMEM;
}

SEC("syscall")
int free_items(void *ctx)
{
	int err = ak_free(walk_items);

	walk_items = 0;
	return err;
}

/* Empty loops. Each returns the iterations it ran. */

static __noinline long long loop_may_goto(unsigned long long n)
{
	unsigned long long i = ak_opaque_zero();

	if (!n)
		return 0;
	asm volatile("1: may_goto 2f\n"
		     "%[i] += 1\n"
		     "if %[i] < %[n] goto 1b\n"
		     "2:\n"
		     : [i] "+r"(i) : [n] "r"(n));
	return i;
}

static __noinline long long loop_cond_break(unsigned long long n)
{
	unsigned long long i;

	for (i = ak_opaque_zero(); i < n; i++) {
		cond_break;
		ak_barrier_var(i);
	}
	return i;
}

static __noinline long long loop_can_loop(unsigned long long n)
{
	unsigned long long i;

	for (i = ak_opaque_zero(); i < n && can_loop; i++)
		ak_barrier_var(i);
	return i;
}

static __noinline long long loop_bpf_for(unsigned long long n)
{
	long long count = ak_opaque_zero();
	int i;

	bpf_for(i, 0, n) {
		count++;
		ak_barrier_var(count);
	}
	return count;
}

static int loop_callback(__u32 index, void *ctx)
{
	return 0;
}

static __noinline long long loop_bpf_loop(unsigned long long n)
{
	return bpf_loop(n, loop_callback, NULL, 0);
}

static __noinline long long loop_in_frames(unsigned long long n, unsigned long long frame)
{
	unsigned long long done, step;
	long long got;

	for (done = ak_opaque_zero(); done < n && can_loop; done += got) {
		step = n - done < frame ? n - done : frame;
		got = loop_can_loop(step);
		if (got != step)
			return done + got;
	}
	return done;
}

SEC("syscall")
int loop(void *ctx)
{
	unsigned long long n = iterations, start = bpf_ktime_get_ns();
	long long got;

	switch (case_id) {
	case LOOP_MAY_GOTO:
		got = loop_may_goto(n);
		break;
	case LOOP_COND_BREAK:
		got = loop_cond_break(n);
		break;
	case LOOP_CAN_LOOP:
		got = loop_can_loop(n);
		break;
	case LOOP_BPF_FOR:
		got = loop_bpf_for(n);
		break;
	case LOOP_BPF_LOOP:
		got = loop_bpf_loop(n);
		break;
	case LOOP_IN_FRAMES:
		got = loop_in_frames(n, LOOP_FRAME);
		break;
	case LOOP_FRAMES_NO_CHECK:
		got = loop_in_frames(n, LOOP_FIRST_CHECK);
		break;
	case LOOP_FRAMES_ONE_CHECK:
		got = loop_in_frames(n, LOOP_FIRST_CHECK + 1);
		break;
	case LOOP_FRAMES_TWO_CHECKS:
		got = loop_in_frames(n, LOOP_FIRST_CHECK + LOOP_PROBE + 1);
		break;
	default:
		return -EINVAL;
	}
	result_ns = bpf_ktime_get_ns() - start;
	result_count = got;
	return 0;
}

unsigned long long frame_steps;		/* frames: steps a frame */

/*
 * Calls of a frame of frame_steps steps, iterations / frame_steps of them:
 * what a frame of that length costs a call, its loop included, under the
 * kernel's bound (a count on stock, the clock's checks on ours).
 */
SEC("syscall")
int frames(void *ctx)
{
	unsigned long long n = iterations, start = bpf_ktime_get_ns();
	long long got = loop_in_frames(n, frame_steps);

	result_ns = bpf_ktime_get_ns() - start;
	result_count = got;
	return 0;
}

static __noinline long long loop_kfunc(unsigned long long n)
{
	unsigned long long i;

	for (i = ak_opaque_zero(); i < n && bpf_can_loop(0); i++)
		ak_barrier_var(i);
	return i;
}

/* Loaded only where the kernel has the kfunc (kernel patch 8). */
SEC("syscall")
int loop_can_loop_kfunc(void *ctx)
{
	unsigned long long n = iterations, start = bpf_ktime_get_ns();
	long long got = loop_kfunc(n);

	result_ns = bpf_ktime_get_ns() - start;
	result_count = got;
	return 0;
}

/*
 * Walks: global functions, so each is verified once, and each call has a
 * loop budget of its own. Each goes on from walk_pos until the end of the list or of its
 * budget, leaves walk_pos where it stopped and returns the nodes it passed.
 */

__noinline long long walk_can_loop(void)
{
	struct ak_list_node __arena *pos = walk_pos;
	long long n = ak_opaque_zero();

	while (pos != &walk_list.head && can_loop) {
		n++;
		pos = pos->next;
	}
	walk_pos = pos;
	return n;
}

/* The bare walk with ak_list_find's work per node: a key loaded and compared. */
__noinline long long walk_bare_find(void)
{
	struct ak_list_node __arena *pos = walk_pos;
	long long n = ak_opaque_zero();

	while (pos != &walk_list.head && can_loop) {
		if (ak_container_of(pos, struct walk_item, node)->key == ~0ULL)
			break;
		n++;
		pos = pos->next;
	}
	walk_pos = pos;
	return n;
}

__noinline long long walk_cond_break(void)
{
	struct ak_list_node __arena *pos = walk_pos;
	long long n = ak_opaque_zero();

	while (pos != &walk_list.head) {
		cond_break;
		n++;
		pos = pos->next;
	}
	walk_pos = pos;
	return n;
}

__noinline long long walk_bpf_for(void)
{
	struct ak_list_node __arena *pos = walk_pos;
	long long n = ak_opaque_zero();
	int i;

	bpf_for(i, 0, 1 << 23) {
		if (pos == &walk_list.head)
			break;
		n++;
		pos = pos->next;
	}
	walk_pos = pos;
	return n;
}

struct walk_state {
	struct ak_list_node __arena *pos;
	long long n;
};

static int walk_callback(__u32 index, struct walk_state *state)
{
	if (state->pos == &walk_list.head)
		return 1;
	state->n++;
	state->pos = state->pos->next;
	return 0;
}

__noinline long long walk_bpf_loop(void)
{
	struct walk_state state = { walk_pos, ak_opaque_zero() };

	bpf_loop(1 << 23, walk_callback, &state, 0);
	walk_pos = state.pos;
	return state.n;
}

__noinline long long walk_lib_count(void)
{
	return ak_list_count(&walk_list, &walk_cursor);
}

__noinline long long walk_lib_find(void)
{
	struct ak_list_node __arena *found;
	int err;

	err = ak_list_find(&walk_list, ak_list_key_offset(struct walk_item, node, key), ~0ULL,
			   &walk_cursor, &found);
	return err ?: found ? -EEXIST : 0;
}

__noinline long long walk_lib_check(void)
{
	struct ak_list_node __arena *bad = 0;

	return ak_list_check(&walk_list, &walk_cursor, &bad);
}

__noinline long long walk_lib_for_each(void)
{
	struct walk_item __arena *item;
	long long n = ak_opaque_zero();
	int err;

	ak_list_for_each_entry_resume(item, &walk_list, node, &walk_cursor)
		n++;
	err = ak_list_walk_save(item, &walk_list, node, &walk_cursor);
	result_count += n;
	return err;
}

/* Frames until a walk that reports how far it got (walk_pos) is through. */
#define WALK_FRAMES(walk)						\
	({								\
		long long ___n = 0;					\
		int ___f;						\
									\
		for (___f = ak_opaque_zero();				\
		     ___f < MAX_FRAMES && walk_pos != &walk_list.head && can_loop; ___f++) \
			___n += walk();					\
		walk_pos == &walk_list.head ? ___n : -AK_EBUDGET;	\
	})

/* Frames until a library walk, which resumes from walk_cursor, is through. */
#define LIB_FRAMES(walk)						\
	({								\
		long long ___r = -AK_EBUDGET;				\
		int ___f;						\
									\
		for (___f = ak_opaque_zero();				\
		     ___f < MAX_FRAMES && ___r == -AK_EBUDGET && can_loop; ___f++) \
			___r = walk();					\
		___r;							\
	})

SEC("syscall")
int walk(void *ctx)
{
	unsigned long long start;
	long long got;

	walk_pos = walk_list.head.next;
	__builtin_memset(&walk_cursor, 0, sizeof(walk_cursor));
	result_count = 0;
	start = bpf_ktime_get_ns();
	switch (case_id) {
	case WALK_CAN_LOOP:
		got = WALK_FRAMES(walk_can_loop);
		break;
	case WALK_COND_BREAK:
		got = WALK_FRAMES(walk_cond_break);
		break;
	case WALK_BPF_FOR:
		got = WALK_FRAMES(walk_bpf_for);
		break;
	case WALK_BPF_LOOP:
		got = WALK_FRAMES(walk_bpf_loop);
		break;
	case WALK_BARE_FIND:
		got = WALK_FRAMES(walk_bare_find);
		break;
	case WALK_LIB_COUNT:
		got = LIB_FRAMES(walk_lib_count);
		break;
	case WALK_LIB_FIND:
		/* Not found, having passed every node. */
		got = LIB_FRAMES(walk_lib_find) ?: (long long)walk_list.len;
		break;
	case WALK_LIB_CHECK:
		/* Sound, having passed every node. */
		got = LIB_FRAMES(walk_lib_check) ?: (long long)walk_list.len;
		break;
	case WALK_LIB_FOR_EACH:
		got = LIB_FRAMES(walk_lib_for_each) ?: result_count;
		break;
	default:
		return -EINVAL;
	}
	result_ns = bpf_ktime_get_ns() - start;
	result_count = got;
	return 0;
}

__noinline long long walk_kfunc(void)
{
	struct ak_list_node __arena *pos = walk_pos;
	long long n = ak_opaque_zero();

	while (pos != &walk_list.head && bpf_can_loop(0)) {
		n++;
		pos = pos->next;
	}
	walk_pos = pos;
	return n;
}

/* Loaded only where the kernel has the kfunc (kernel patch 8). */
SEC("syscall")
int walk_can_loop_kfunc(void *ctx)
{
	unsigned long long start;
	long long got;

	walk_pos = walk_list.head.next;
	start = bpf_ktime_get_ns();
	got = WALK_FRAMES(walk_kfunc);
	result_ns = bpf_ktime_get_ns() - start;
	result_count = got;
	return 0;
}

char _license[] SEC("license") = "GPL";
