/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/user.h - the user-space side of arenakit, for a loader built on
 * libbpf: running a program under the budget contract (loop.h), and getting
 * a buffer or a string of the loader's into the arena, and what the
 * verifier said of a program (its statistics; its log on a refusal).
 *
 *	int retval;
 *	err = ak_run_until_done(skel->progs.setup, NULL, 0, 100, &retval, NULL);
 *	char *pat = ak_arena_strdup(skel->progs.arena_alloc, "*.c", &err);
 *	(pat points into the arena's mmap; a BPF program reads the same bytes)
 *
 * The arena's memory is mapped into the loader (skel->arena, or
 * bpf_map__initial_value()), so the loader writes objects there directly;
 * what it cannot do is allocate them, as ak_alloc is BPF. The BPF object
 * defines a program for that with AK_ALLOC_PROGRAM(name) (alloc.h), and
 * ak_arena_alloc() runs it. Header-only; link with libbpf. User space only.
 *
 * Errors are negative errnos: a call returns 0 or one; a call that returns
 * a pointer returns NULL on failure and sets *err to the reason (err may
 * be NULL), as ak_alloc() and ak_htab_lookup() do.
 */
#ifndef __ARENAKIT_USER_H
#define __ARENAKIT_USER_H

#ifdef __BPF__
#error "<arenakit/user.h> is for user space; a BPF object defines AK_ALLOC_PROGRAM (alloc.h)"
#elif defined(AK_ARENA_CLAMP)
#error "<arenakit/user.h> reads an arena's mmap, where AK_ARENA_CLAMP's promise does not hold (arena.h)"
#else

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#if defined(__aarch64__)
#include <sys/auxv.h>
#include <asm/hwcap.h>
#endif
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <arenakit/arena.h>
#include <arenakit/loop.h>

/**
 * ak_cpu_check - can this CPU's kernel JIT arenakit's programs?
 * @why: where to write the reason when it cannot (may be NULL)
 * @why_len: @why's bytes
 *
 * The library's programs use atomics on arena memory (the allocator, the
 * locks, the counters). On arm64 the 6.12 JIT emits those only with the
 * LSE atomics of ARMv8.1 (FEAT_LSE, the "atomics" of /proc/cpuinfo); on an
 * older core it refuses each program, and the verifier's message does not
 * say why. Call this before loading, as the arenakit tool does.
 *
 * Return: 0, or -EOPNOTSUPP with the reason in @why.
 */
static inline int ak_cpu_check(char *why, size_t why_len)
{
#if defined(__aarch64__)
	if (!(getauxval(AT_HWCAP) & HWCAP_ATOMICS)) {
		if (why)
			snprintf(why, why_len,
				 "this arm64 CPU has no LSE atomics (ARMv8.1's FEAT_LSE): the "
				 "kernel's BPF JIT cannot compile atomics on arena memory, which "
				 "arenakit's programs use; run them on an ARMv8.1 or newer core "
				 "(under QEMU, e.g. -cpu neoverse-n1 or max)");
		return -EOPNOTSUPP;
	}
#endif
	(void)why;
	(void)why_len;
	return 0;
}

/**
 * ak_run - run @prog once with BPF_PROG_TEST_RUN (SEC("syscall") programs)
 * @prog: a loaded program
 * @ctx: its context, or NULL (a syscall program's changes to it are copied
 *	back here)
 * @ctx_size: @ctx's bytes
 * @retval: the program's return value (0 if the run could not be made)
 *
 * The run's error is returned and the program's answer is in *@retval; a
 * caller whose program answers 0 or a negative errno folds the two:
 *
 *	err = ak_run(skel->progs.setup, NULL, 0, &retval) ?: retval;
 *
 * Return: 0, or a negative errno if the run could not be made (-EBADF: not
 * loaded).
 */
static inline int ak_run(const struct bpf_program *prog, void *ctx, size_t ctx_size, int *retval)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = ctx, .ctx_size_in = ctx_size);
	int fd = bpf_program__fd(prog);

	*retval = 0;
	if (fd < 0)
		return -EBADF;
	if (bpf_prog_test_run_opts(fd, &opts))
		return -errno;
	*retval = (int)opts.retval;
	return 0;
}

/**
 * ak_run_until_done - the budget contract's user side: run @prog again
 * while it returns -AK_EBUDGET
 * @prog: a loaded program that resumes cut work (a cursor it keeps, in its
 *	globals or in @ctx)
 * @ctx: its context, or NULL: each run starts from what the last one left
 * @ctx_size: @ctx's bytes
 * @max_runs: the most runs to make
 * @retval: the last run's return value
 * @runs: how many runs were made (may be NULL)
 *
 * The CPU is yielded between runs, so that a thread on the same CPU that
 * the program waits for (a lock holder) can go on.
 *
 * Return: 0 once the program returned anything but -AK_EBUDGET (which is
 * in *@retval); -AK_EBUDGET if it still did after @max_runs runs; a
 * negative errno if a run could not be made.
 */
static inline int ak_run_until_done(const struct bpf_program *prog, void *ctx, size_t ctx_size,
				    unsigned int max_runs, int *retval, unsigned int *runs)
{
	unsigned int done = 0;
	int err = 0;

	*retval = -AK_EBUDGET;
	while (*retval == -AK_EBUDGET && done < max_runs) {
		if (done)
			sched_yield();
		err = ak_run(prog, ctx, ctx_size, retval);
		if (err)
			break;
		done++;
	}
	if (runs)
		*runs = done;
	if (err)
		return err;
	return *retval == -AK_EBUDGET ? -AK_EBUDGET : 0;
}

/* ak_verifier_log_keep()'s levels: the kernel's BPF_LOG_STATS and BPF_LOG_LEVEL1. */
#define AK_VERIFIER_LOG_STATS 4U
#define AK_VERIFIER_LOG_FULL 1U

/**
 * struct ak_verifier_stats - what the verifier spent on one program, as
 * veristat reports it
 * @insns_processed: instructions it processed (bpf_prog_info's verified_insns;
 *	the load fails past 1,000,000)
 * @verify_usec: the time it took, in microseconds
 * @total_states: states it stored
 * @peak_states: the most it held at once
 * @stack_depth: the stack of the program and its subprograms, their
 *	depths summed (a bound on any call chain's, which must stay within
 *	512 bytes)
 * @jited_bytes: the size of its JITed code
 *
 * @insns_processed and @jited_bytes come from the loaded program; the rest
 * from the statistics the verifier writes at the end of a kept log.
 */
struct ak_verifier_stats {
	unsigned int insns_processed;
	unsigned int verify_usec;
	unsigned int total_states;
	unsigned int peak_states;
	unsigned int stack_depth;
	unsigned int jited_bytes;
};

/**
 * ak_verifier_log_keep - keep @prog's verifier log in @buf (call between
 * the object's open and its load)
 * @prog: the program, opened and not loaded (skel->progs.name)
 * @buf: where the kernel writes the log, NUL-terminated
 * @size: @buf's bytes
 * @level: AK_VERIFIER_LOG_STATS for its statistics and, if the program is
 *	refused, the verifier's reason (a few hundred bytes: 4 KiB will do),
 *	or with AK_VERIFIER_LOG_FULL added, every instruction's state as well
 *	(megabytes for a program with loops)
 *
 * A log that does not fit fails the load with -ENOSPC, as the kernel says
 * (and libbpf does not retry into a bigger buffer it was given). After the
 * load, ak_verifier_stats() reads the statistics, and on a refusal
 * ak_verifier_log_tail() finds the reason at the log's end.
 *
 * Return: 0, -EINVAL for no buffer or no level, -EBUSY if @prog is loaded.
 */
static inline int ak_verifier_log_keep(struct bpf_program *prog, char *buf, size_t size,
				       unsigned int level)
{
	int err;

	if (!buf || size < 2 || !level ||
	    (level & ~(AK_VERIFIER_LOG_STATS | AK_VERIFIER_LOG_FULL)))
		return -EINVAL;
	err = bpf_program__set_log_buf(prog, buf, size);
	if (err)
		return err;	/* loaded already: @buf is left as it is */
	buf[0] = '\0';
	return bpf_program__set_log_level(prog, level);
}

/* The number after @label in @log, into *@value; 0, or -ENODATA if absent. */
static inline int __ak_log_number(const char *log, const char *label, unsigned int *value)
{
	const char *at = strstr(log, label);

	if (!at || sscanf(at + strlen(label), "%u", value) != 1)
		return -ENODATA;
	return 0;
}

/**
 * ak_verifier_stats - what the verifier spent on @prog, after its load
 * @prog: a loaded program (its log kept by ak_verifier_log_keep(), for all
 *	but @insns_processed and @jited_bytes)
 * @stats: the figures; a figure the log does not have is 0
 *
 * Return: 0; -ENODATA if @prog's log was not kept or has no statistics (the
 * fields from the loaded program are still filled); -EBADF if @prog is not
 * loaded; another negative errno from bpf_prog_get_info_by_fd().
 */
static inline int ak_verifier_stats(const struct bpf_program *prog,
				    struct ak_verifier_stats *stats)
{
	struct bpf_prog_info info = {};
	__u32 info_len = sizeof(info);
	const char *log, *depth;
	unsigned int frame;
	size_t log_size;
	int fd = bpf_program__fd(prog), err;

	memset(stats, 0, sizeof(*stats));
	if (fd < 0)
		return -EBADF;
	if (bpf_prog_get_info_by_fd(fd, &info, &info_len))
		return -errno;
	stats->insns_processed = info.verified_insns;
	stats->jited_bytes = info.jited_prog_len;
	log = bpf_program__log_buf(prog, &log_size);
	if (!log || !log_size)
		return -ENODATA;
	err = __ak_log_number(log, "verification time ", &stats->verify_usec);
	__ak_log_number(log, " total_states ", &stats->total_states);
	__ak_log_number(log, " peak_states ", &stats->peak_states);
	/* "stack depth 24+0+16": one figure per subprogram. */
	depth = strstr(log, "stack depth ");
	if (depth) {
		depth += strlen("stack depth ");
		while (sscanf(depth, "%u", &frame) == 1) {
			stats->stack_depth += frame;
			depth += strspn(depth, "0123456789");
			if (*depth++ != '+')
				break;
		}
	}
	return err;
}

/**
 * ak_verifier_log_tail - the last @lines lines of a verifier log (where a
 * refused program's reason is: its last line, or with the statistics kept
 * (AK_VERIFIER_LOG_STATS) the line before their three)
 * @log: the log, or a part of one (libbpf's message between "-- BEGIN PROG
 *	LOAD LOG --" and "-- END PROG LOAD LOG --")
 * @len: its bytes
 * @lines: how many lines to keep, at least 1
 *
 * Return: the first byte of the tail, within @log (the whole of it if it
 * has no more lines than that).
 */
static inline const char *ak_verifier_log_tail(const char *log, size_t len, unsigned int lines)
{
	const char *tail = log + len;
	unsigned int seen = 0;

	/* A last line without its newline counts as a line. */
	if (tail > log && tail[-1] == '\n')
		tail--;
	for (; tail > log; tail--)
		if (tail[-1] == '\n' && ++seen >= lines)
			break;
	return tail;
}

/**
 * ak_arena_alloc - allocate @size bytes of arena memory from user space
 * @alloc_prog: the object's AK_ALLOC_PROGRAM
 * @size: bytes, 1..AK_ALLOC_MAX
 * @err: on NULL, set to the allocator's answer (-EINVAL, -E2BIG, -ENOMEM,
 *	...) or to why the program could not run (may be NULL)
 *
 * Return: the object, at its address in the arena's mmap, or NULL (see
 * *@err).
 */
static inline void *ak_arena_alloc(const struct bpf_program *alloc_prog, size_t size, int *err)
{
	struct ak_alloc_request req = { .size = size };
	int retval, e = ak_run(alloc_prog, &req, sizeof(req), &retval);

	if (!e)
		e = retval ? retval : req.addr ? 0 : -ENOMEM;
	if (e) {
		if (err)
			*err = e;
		return NULL;
	}
	return (void *)(unsigned long)req.addr;
}

/**
 * ak_arena_memdup - a copy of @len bytes of @buf in the arena
 * @alloc_prog: the object's AK_ALLOC_PROGRAM
 * @buf: the bytes
 * @len: how many, 1..AK_ALLOC_MAX
 * @err: as ak_arena_alloc()
 *
 * Return: the copy, in the arena's mmap, or NULL (see *@err).
 */
static inline void *ak_arena_memdup(const struct bpf_program *alloc_prog, const void *buf,
				    size_t len, int *err)
{
	void *copy = ak_arena_alloc(alloc_prog, len, err);

	if (copy)
		memcpy(copy, buf, len);
	return copy;
}

/**
 * ak_arena_strdup - a copy of the string @s, its NUL included, in the arena
 * @alloc_prog: the object's AK_ALLOC_PROGRAM
 * @s: the string
 * @err: as ak_arena_alloc()
 *
 * Return: the copy, in the arena's mmap, or NULL (see *@err).
 */
static inline char *ak_arena_strdup(const struct bpf_program *alloc_prog, const char *s,
				    int *err)
{
	return ak_arena_memdup(alloc_prog, s, strlen(s) + 1, err);
}

#endif /* __BPF__ */
#endif /* __ARENAKIT_USER_H */
