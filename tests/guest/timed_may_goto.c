// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Kernel patches 5 to 7: on x86-64 and arm64 with the JIT, a frame's may_goto budget
 * is time (BPF_MAY_GOTO_BUDGET_NS, 250 ms), not 8,388,608 steps; checks come
 * about a millisecond apart whatever a step costs; a spent budget stays
 * spent; and an expansion whose jump does not fit is refused. On a kernel
 * without them (KERNEL=stock) these tests skip, naming the feature.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>

#include <arenakit/arena.h>
#include "guest/guest.h"
#include "kernel_features.h"
#include "timed_may_goto.skel.h"

#define MS 1000000ULL
/* The window an endless loop must end in: the budget is 250 ms. */
#define BUDGET_MIN_NS (200 * MS)
#define BUDGET_MAX_NS (5000 * MS)
/* ... and one whose steps are slow: the budget, a slice and a margin. */
#define BUDGET_SLOW_MAX_NS (255 * MS)
/* The count budget (BPF_MAX_LOOPS): stock 6.12's, and where the JIT has no timed check. */
#define STOCK_COUNT 8388608ULL

static struct timed_may_goto *load(void)
{
	struct timed_may_goto *skel;

	guest_require_feature(ARENAKIT_TIMED_MAY_GOTO, "kernel/patches/0005-0007");
	skel = timed_may_goto__open_and_load();
	cr_assert(skel, "cannot load: %s", strerror(errno));
	return skel;
}

static void run(struct bpf_program *prog)
{
	int retval;

	cr_assert_eq(ak_run(prog, NULL, 0, &retval), 0);
	cr_assert_eq(retval, 0);
}

Test(timed_may_goto, endless_loop_ends_after_the_time_budget, .timeout = GUEST_TEST_TIMEOUT)
{
	struct timed_may_goto *skel = load();

	run(skel->progs.endless);
	cr_expect_geq(skel->bss->elapsed_ns, BUDGET_MIN_NS, "ended after %llu ms",
		      skel->bss->elapsed_ns / MS);
	cr_expect_leq(skel->bss->elapsed_ns, BUDGET_MAX_NS, "ended after %llu ms",
		      skel->bss->elapsed_ns / MS);
	cr_expect_neq(skel->bss->steps, STOCK_COUNT, "the count budget is still in force");
	printf("timed_may_goto: an endless loop ran %llu steps in %llu ms (%.2f ns per step)\n",
	       skel->bss->steps, skel->bss->elapsed_ns / MS,
	       (double)skel->bss->elapsed_ns / skel->bss->steps);
	timed_may_goto__destroy(skel);
}

/*
 * Twice the stock count completes when the machine runs it within the budget;
 * when it does not (three tries), the time budget is what stopped it.
 * Whether it fits is known only after a run: under TCG the rate moves
 * several times over between runs (4 vCPUs on a shared host), so no
 * estimate from another loop holds.
 */
Test(timed_may_goto, twice_the_stock_count_completes, .timeout = GUEST_TEST_TIMEOUT)
{
	struct timed_may_goto *skel = load();
	unsigned long long want = 2 * STOCK_COUNT, steps = 0, ms = 0;
	int tries;

	/* Three tries: a busy host slows one run, seldom three. */
	for (tries = 0; tries < 3 && steps < want; tries++) {
		skel->bss->target = want;
		run(skel->progs.counted);
		steps = skel->bss->steps;
		ms = skel->bss->elapsed_ns / MS;
		if (steps < want && (steps == STOCK_COUNT || ms * MS < BUDGET_MIN_NS))
			break;	/* not the time budget: fail below */
	}
	timed_may_goto__destroy(skel);
	if (steps < want && steps != STOCK_COUNT && ms * MS >= BUDGET_MIN_NS)
		cr_skip_test("this machine ran %llu steps in %llu ms, fewer than %llu", steps, ms,
			     want);
	cr_expect_eq(steps, want, "the loop stopped at %llu of %llu steps after %llu ms", steps,
		     want, ms);
	printf("timed_may_goto: %llu steps (twice the stock count) in %llu ms\n", steps, ms);
}

/* The budget is per frame: three nested frames each loop for about one. */
Test(timed_may_goto, three_nested_frames_each_get_the_budget, .timeout = GUEST_TEST_TIMEOUT)
{
	struct timed_may_goto *skel = load();
	unsigned long long *ns = skel->bss->level_ns, own;
	int depth;

	run(skel->progs.nested);
	for (depth = 1; depth <= 3; depth++) {
		own = ns[depth] - (depth < 3 ? ns[depth + 1] : 0);
		cr_expect_geq(own, BUDGET_MIN_NS, "frame %d looped %llu ms", depth, own / MS);
		cr_expect_leq(own, BUDGET_MAX_NS, "frame %d looped %llu ms", depth, own / MS);
		printf("timed_may_goto: frame %d looped %llu steps in %llu ms of its own\n", depth,
		       skel->bss->level_steps[depth], own / MS);
	}
	cr_expect_leq(ns[1], 3 * BUDGET_MAX_NS);
	timed_may_goto__destroy(skel);
}

/*
 * However much a step costs, the frame stops within about a slice (1 ms) of
 * its 250 ms: checks come by time, not every 65,535 steps (at which a 10 us
 * step would run 0.65 s before the first check). The 256 steps before the
 * first check are not timed, and not counted in either: the bound is those
 * steps, the budget, and the longer of a slice and a step. A step the host
 * stalled is a long step: the window's end moves by the longest step of
 * the run. So the test asks that one run of up to five land in the window,
 * and prints every run.
 */
#define SLOW_TRIES 5
#define UNTIMED_STEPS 256

/* A frame of @step_ns steps ended within the untimed steps, its budget and a slice or its longest step. */
static bool in_the_slow_window(unsigned long long ns, unsigned long long step_ns,
			       unsigned long long longest_step)
{
	return ns >= BUDGET_MIN_NS &&
	       ns <= UNTIMED_STEPS * step_ns + BUDGET_SLOW_MAX_NS + longest_step;
}

static void slow_steps_stop_within_the_budget(unsigned long long step_us)
{
	struct timed_may_goto *skel = load();
	unsigned long long ns, ms_x100;
	bool in_window = false;
	int tries;

	skel->bss->step_ns = step_us * 1000;
	for (tries = 0; tries < SLOW_TRIES && !in_window; tries++) {
		run(skel->progs.slow_steps);
		ns = skel->bss->elapsed_ns;
		in_window = in_the_slow_window(ns, step_us * 1000, skel->bss->longest_step_ns);
		ms_x100 = ns / (MS / 100);
		printf("timed_may_goto: %llu steps of %llu us ended after %llu.%02llu ms, "
		       "the longest step %llu us\n", skel->bss->steps, step_us, ms_x100 / 100,
		       ms_x100 % 100, skel->bss->longest_step_ns / 1000);
	}
	cr_expect(in_window, "%llu us steps: no run of %d ended within %llu ms and %d steps, "
		  "%llu ms and its longest step", step_us, SLOW_TRIES, BUDGET_MIN_NS / MS,
		  UNTIMED_STEPS, BUDGET_SLOW_MAX_NS / MS);
	timed_may_goto__destroy(skel);
}

Test(timed_may_goto, steps_of_10us_stop_within_the_bound, .timeout = GUEST_TEST_TIMEOUT)
{
	slow_steps_stop_within_the_budget(10);
}

Test(timed_may_goto, steps_of_30us_stop_within_the_bound, .timeout = GUEST_TEST_TIMEOUT)
{
	slow_steps_stop_within_the_budget(30);
}

/*
 * Stalls among the first timed steps (a preempted or faulting step; here
 * 30 ms waits) must not end the frame: only time measured does, and the
 * steps before the first check are not estimated from a sample a stall
 * inflated. Step 260 is among the 16 the first check times; after it the
 * check sizes the next count to one step (272), and the next again (273).
 * The series' v3 survived the first alone, and two ended its frame after
 * 288 steps. The stalls still count: an endless loop after them ends at
 * the budget, as without them.
 */
static const unsigned long long stall_steps[] = { 260, 272, 273 };

static void stall(struct timed_may_goto *skel, unsigned long long target, int stalls)
{
	int i;

	skel->bss->target = target;
	skel->bss->stall_ns = 30 * MS;
	for (i = 0; i < 3; i++)
		skel->data->stall_at[i] = i < stalls ? stall_steps[i] : ~0ULL;
	run(skel->progs.stalled);
	printf("timed_may_goto: %d stalls of 30 ms from step 260, then %llu of %llu steps "
	       "in %llu ms\n", stalls, skel->bss->steps, target, skel->bss->elapsed_ns / MS);
}

static void stalls_do_not_end_the_frame(int stalls)
{
	struct timed_may_goto *skel = load();
	unsigned long long ns = 0;
	int tries;

	stall(skel, 200000, stalls);
	cr_expect_eq(skel->bss->steps, 200000, "%d stalls: the frame ended after %llu steps, "
		     "%llu ms", stalls, skel->bss->steps, skel->bss->elapsed_ns / MS);
	/* In the window in one run of up to SLOW_TRIES, as slow steps are. */
	for (tries = 0; tries < SLOW_TRIES && !in_the_slow_window(ns, 0, 0); tries++) {
		stall(skel, ~0ULL, stalls);
		ns = skel->bss->elapsed_ns;
	}
	cr_expect(in_the_slow_window(ns, 0, 0), "after %d stalls, no run of %d ended within "
		  "%llu-%llu ms", stalls, SLOW_TRIES, BUDGET_MIN_NS / MS, BUDGET_SLOW_MAX_NS / MS);
	timed_may_goto__destroy(skel);
}

Test(timed_may_goto, one_stall_in_the_first_timed_steps_does_not_end_the_frame,
     .timeout = GUEST_TEST_TIMEOUT)
{
	stalls_do_not_end_the_frame(1);
}

Test(timed_may_goto, stalls_in_two_samples_in_a_row_do_not_end_the_frame,
     .timeout = GUEST_TEST_TIMEOUT)
{
	stalls_do_not_end_the_frame(2);
}

Test(timed_may_goto, stalls_in_three_samples_in_a_row_do_not_end_the_frame,
     .timeout = GUEST_TEST_TIMEOUT)
{
	stalls_do_not_end_the_frame(3);
}

/* The frames of @prog_fd whose budget ran out, from its fdinfo (kernel patch 5). */
static long long frames_expired(int prog_fd)
{
	char path[64], line[256];
	long long n = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", prog_fd);
	f = fopen(path, "r");
	cr_assert(f, "%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "may_goto_expired: %lld", &n) == 1)
			break;
	fclose(f);
	cr_assert_geq(n, 0, "%s has no may_goto_expired line", path);
	return n;
}

/*
 * Each frame that spends its budget is counted against its program, a
 * subprog's frames too; a loop that ends by its own condition is not.
 */
Test(timed_may_goto, each_frame_that_spends_its_budget_is_counted, .timeout = GUEST_TEST_TIMEOUT)
{
	struct timed_may_goto *skel = load();
	int endless = bpf_program__fd(skel->progs.endless);
	int nested = bpf_program__fd(skel->progs.nested);
	int counted = bpf_program__fd(skel->progs.counted);

	cr_expect_eq(frames_expired(endless), 0);
	run(skel->progs.endless);
	cr_expect_eq(frames_expired(endless), 1);
	run(skel->progs.endless);
	cr_expect_eq(frames_expired(endless), 2, "a second run adds one");
	run(skel->progs.nested);
	cr_expect_eq(frames_expired(nested), 3, "three subprog frames, on the program");
	skel->bss->target = 1000;
	run(skel->progs.counted);
	cr_expect_eq(skel->bss->steps, 1000);
	cr_expect_eq(frames_expired(counted), 0, "a loop that ended on its own");
	cr_expect_eq(frames_expired(endless), 2, "another program's runs add nothing");
	timed_may_goto__destroy(skel);
}

#define INSN ARENAKIT_INSN
#define MOV0 ARENAKIT_MOV0
#define ADD0 ARENAKIT_ADD0
#define MAY_GOTO ARENAKIT_MAY_GOTO
#define JA ARENAKIT_JA
#define EXIT ARENAKIT_EXIT
#define MOV64_REG(d, s) INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ADD64_IMM(d, imm) INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, imm)

/*
 * The frame's hidden state (struct bpf_may_goto_clock: count, since, steps)
 * sits right below the program's own stack, here 8 bytes: its steps at
 * r10 - 16. bpf_probe_read_kernel() copies them to r10 - 8, and the program
 * returns them.
 */
#define RETURN_THE_STEPS						\
	MOV64_REG(BPF_REG_1, BPF_REG_10), ADD64_IMM(BPF_REG_1, -8),	\
	INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_2, 0, 0, 8),		\
	MOV64_REG(BPF_REG_3, BPF_REG_10), ADD64_IMM(BPF_REG_3, -16),	\
	INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_probe_read_kernel),	\
	INSN(BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_0, BPF_REG_10, -8, 0), EXIT
#define ZERO_THE_STACK							\
	MOV0(0), INSN(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_0, -8, 0)

/*
 * Of the frame's state (24 bytes), the count's 8 count against the
 * 512-byte stack limit, as on kernels without the clock (counting all 24
 * refused the hash table's deep call chains, which load on stock): beside
 * 504 bytes of the program's own it fits, beside 512 it does not. Stock
 * 6.12 adds its count after the check, so 512 bytes and a may_goto load
 * there and run on 520.
 */
static int load_with_stack(int depth, char *log, size_t log_size)
{
	const struct bpf_insn insns[] = {
		MOV0(0), INSN(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_0, -depth, 0),
		MAY_GOTO(1), JA(-2), EXIT,
	};

	return arenakit_load_insns("mg_stack", insns, ARRAY_SIZE(insns), log,
				   log_size);
}

Test(timed_may_goto, the_count_counts_against_the_stack_limit, .timeout = GUEST_TEST_TIMEOUT)
{
	static char log[65536];
	int fd;

	load();
	fd = load_with_stack(504, log, sizeof(log));
	cr_expect_geq(fd, 0, "504 bytes and the count refused: %s\n%s", strerror(-fd), log);
	if (fd >= 0)
		close(fd);
	fd = load_with_stack(512, log, sizeof(log));
	cr_expect_lt(fd, 0, "512 bytes and the count (520) loaded");
	if (fd >= 0)
		close(fd);
	cr_expect(strstr(log, "combined stack size of 1 calls is 528. Too large"),
		  "the log says:\n%s", log);
}

/*
 * Once the budget is spent, the frame's steps are -1 (BPF_MAY_GOTO_SPENT):
 * no clock reading can make it go on again, and a later may_goto leaves
 * without a check. Were a spent budget a count of 0, which also means
 * "check due", every later may_goto would read the clock again, and one
 * that read it earlier than the last would go on.
 */
Test(timed_may_goto, a_spent_budget_stays_spent, .timeout = GUEST_TEST_TIMEOUT)
{
	const struct bpf_insn insns[] = {
		ZERO_THE_STACK,
		MAY_GOTO(1), JA(-2),	/* loop until the budget is spent */
		MAY_GOTO(1), JA(-2),	/* and again: leaves at once */
		RETURN_THE_STEPS,
	};

	load();
	cr_expect_eq((int)guest_run_insns("spent_may_goto", insns, ARRAY_SIZE(insns), NULL),
		     -1, "the frame's steps after its budget");
}

/* bpf_can_loop() leaves the same mark, and returns 0 from then on. */
Test(timed_may_goto, bpf_can_loop_stays_spent, .timeout = GUEST_TEST_TIMEOUT)
{
	struct bpf_insn call = INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, 0);
	struct bpf_insn r1_0 = INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_1, 0, 0, 0);
	struct bpf_insn again = INSN(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_0, 0, -3, 0);

	load();
	guest_require_feature(ARENAKIT_CAN_LOOP_KFUNC, "kernel/patches/0008");
	call.imm = arenakit_can_loop_btf_id();
	cr_assert_gt(call.imm, 0, "no BTF id for bpf_can_loop: %d", call.imm);
	{
		const struct bpf_insn insns[] = {
			ZERO_THE_STACK,
			r1_0, call, again,	/* while (bpf_can_loop(0)) */
			r1_0, call, again,	/* and again: 0 at once */
			RETURN_THE_STEPS,
		};

		cr_expect_eq((int)guest_run_insns("spent_can_loop", insns,
						  ARRAY_SIZE(insns), NULL),
			     -1, "the frame's steps after its budget");
	}
}

/*
 * A timed may_goto becomes ten insns; the jumps to its target from the
 * fourth and the eighth must fit in 16 bits: forward, off + 6 <= 32767;
 * backward, off - 7 >= -32768. At the edge the program loads, and a spent
 * budget takes the may_goto to its target; one past it, the program is
 * refused with -ERANGE. A first loop spends the budget; the may_goto at the
 * edge then jumps over @fill insns, or back over them, to "r0 = 42".
 */
static struct bpf_insn *edge_program(int may_goto_off, size_t *count)
{
	int forward = may_goto_off > 0, n = 0, fill, i;
	struct bpf_insn *p;

	fill = forward ? may_goto_off - 1 : -may_goto_off - 3;
	p = calloc(fill + 10, sizeof(*p));
	cr_assert(p);
	p[n++] = MOV0(0);
	p[n++] = MAY_GOTO(1);		/* loop until the budget is spent */
	p[n++] = JA(-2);
	if (forward) {
		p[n++] = MAY_GOTO(may_goto_off);
		for (i = 0; i < fill; i++)
			p[n++] = ADD0(1);
		p[n++] = EXIT;
		p[n++] = MOV0(42);	/* the target */
		p[n++] = EXIT;
	} else {
		p[n++] = JA(2);
		p[n++] = MOV0(42);	/* the target */
		p[n++] = EXIT;
		for (i = 0; i < fill; i++)
			p[n++] = ADD0(1);
		p[n++] = MAY_GOTO(may_goto_off);
		p[n++] = EXIT;
	}
	*count = n;
	return p;
}

static void edge_loads(int may_goto_off)
{
	size_t count;
	struct bpf_insn *p = edge_program(may_goto_off, &count);

	load();
	cr_expect_eq(guest_run_insns("may_goto_edge", p, count, NULL), 42,
		     "may_goto %+d missed its target", may_goto_off);
	free(p);
}

static void edge_refused(int may_goto_off)
{
	size_t count, size = 16 << 20;	/* the log of 64k insns verified */
	struct bpf_insn *p = edge_program(may_goto_off, &count);
	char *log = malloc(size);
	int fd;

	cr_assert(log);
	load();
	fd = arenakit_load_insns("may_goto_far", p, count, log, size);
	cr_expect_eq(fd, -ERANGE, "may_goto %+d: %s", may_goto_off,
		     fd >= 0 ? "loaded" : strerror(-fd));
	if (fd >= 0)
		close(fd);
	cr_expect(strstr(log, "too far for its 10-insn expansion"), "the log ends:\n%s",
		  log + (strlen(log) > 400 ? strlen(log) - 400 : 0));
	free(log);
	free(p);
}

Test(timed_may_goto, forward_edge_loads, .timeout = GUEST_TEST_TIMEOUT)
{
	edge_loads(32761);
}

Test(timed_may_goto, one_past_the_forward_edge_is_refused, .timeout = GUEST_TEST_TIMEOUT)
{
	edge_refused(32762);
}

Test(timed_may_goto, backward_edge_loads, .timeout = GUEST_TEST_TIMEOUT)
{
	edge_loads(-32761);
}

Test(timed_may_goto, one_past_the_backward_edge_is_refused, .timeout = GUEST_TEST_TIMEOUT)
{
	edge_refused(-32762);
}

/*
 * Where stock 6.12's four-insn expansion wraps the offset: at -32768 its
 * jump back became +32767, and a program that loaded oopsed when run.
 */
Test(timed_may_goto, offsets_stock_wrapped_are_refused, .timeout = GUEST_TEST_TIMEOUT)
{
	edge_refused(32766);
	edge_refused(-32768);
}
