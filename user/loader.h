/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The arenakit loader: the only way arenakit's user space loads BPF.
 *
 * Every load first checks that the running kernel is ours (its release
 * contains "-arenakit"), so nothing is ever loaded into the host's kernel by
 * accident. A load that fails prints the tail of the verifier's log, not only
 * an errno. All functions return 0 or a negative errno.
 */
#ifndef ARENAKIT_LOADER_H
#define ARENAKIT_LOADER_H

#include <stddef.h>
#include <stdio.h>
#include <bpf/libbpf.h>
#include <arenakit/loop.h>

#define ARENAKIT_RELEASE_MARK "-arenakit"

/*
 * Is the running kernel ours? Returns 0 if so, -EPERM if not, with the
 * reason written to @why (may be NULL).
 */
int arenakit_kernel_check(char *why, size_t why_len);

/* Load a skeleton (pass skel->skeleton) after the kernel check. */
int arenakit_load_skeleton(struct bpf_object_skeleton *skeleton);

/* Load an opened object after the kernel check. */
int arenakit_load_object(struct bpf_object *obj);

/*
 * Load a program made of raw instructions (the kernel feature probes and
 * their tests), after the kernel check: a sleepable syscall program, GPL.
 * Returns its
 * fd, or a negative errno with the verifier's log in @log (may be NULL).
 */
struct bpf_insn;
int arenakit_load_insns(const char *name, const struct bpf_insn *insns, size_t count,
			char *log, size_t log_size);

/*
 * libbpf's messages from the most recent load, verifier log included;
 * valid until the next load. Never NULL.
 */
const char *arenakit_load_log(void);

/*
 * Where failed loads are reported, verifier log tail included: stderr by
 * default; NULL mutes (tests that expect a failure).
 */
void arenakit_set_report_stream(FILE *stream);

/*
 * Run @prog once with BPF_PROG_TEST_RUN and no context (what SEC("syscall")
 * programs take). @retval gets the program's return value.
 */
int arenakit_run(const struct bpf_program *prog, int *retval);

/*
 * Run @prog once with @ctx (@ctx_size bytes) as its context; a syscall
 * program's changes to it are copied back. @retval as arenakit_run().
 * (ak_run of the installed <arenakit/user.h>, as are the _until_done
 * calls below: the tool uses what it ships.)
 */
int arenakit_run_ctx(const struct bpf_program *prog, void *ctx, size_t ctx_size, int *retval);

/*
 * Run @prog once with no context, for a caller that needs one number.
 * Return: the program's return value, or a negative errno if the run could
 * not be made (the two can only be told apart by a program that returns no
 * negative errno of its own).
 */
int arenakit_run_retval(const struct bpf_program *prog);

/*
 * Pin the calling thread to @cpu: a syscall program's test run takes no CPU
 * and runs where its caller does. 0 or -errno.
 */
int arenakit_pin_to_cpu(int cpu);

/*
 * The budget contract's user side (include/arenakit/loop.h): run @prog
 * again while it returns -AK_EBUDGET (its work was cut and it resumes from
 * a cursor it keeps), at most @max_runs times. @retval gets the last run's
 * value, @runs (may be NULL) how many runs were made.
 * Return: 0 once the program returned anything but -AK_EBUDGET;
 * -AK_EBUDGET if it still did after @max_runs runs; a negative errno if a
 * run could not be made.
 */
int arenakit_run_until_done(const struct bpf_program *prog, unsigned int max_runs,
			    int *retval, unsigned int *runs);

/*
 * arenakit_run_until_done() for a program that keeps its cursor in its
 * context: each run gets @ctx (@ctx_size bytes) as arenakit_run_ctx() does,
 * so the changes a run made are what the next run starts from. The CPU is
 * yielded between runs, so that a thread on the same CPU that the program
 * waits for (a lock holder) can go on. Return: as arenakit_run_until_done().
 */
int arenakit_run_ctx_until_done(const struct bpf_program *prog, void *ctx, size_t ctx_size,
				unsigned int max_runs, int *retval, unsigned int *runs);

#endif /* ARENAKIT_LOADER_H */
