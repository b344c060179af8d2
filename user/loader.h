/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The arenakit loader: the only way arenakit's user space loads BPF.
 *
 * Every load first checks that the running kernel is ours (its release
 * contains "-arenakit"), so nothing is ever loaded into the host's kernel by
 * accident. A load that fails prints the tail of the verifier's log, not only
 * an errno. Errors are negative errnos.
 *
 * Running what was loaded is the library's: ak_run() and ak_run_until_done()
 * of <arenakit/user.h>, which the tool uses as any loader does. What is here
 * is what the tool needs beyond it.
 */
#ifndef ARENAKIT_LOADER_H
#define ARENAKIT_LOADER_H

#include <stddef.h>
#include <stdio.h>
#include <bpf/libbpf.h>

#define ARENAKIT_RELEASE_MARK "-arenakit"

/*
 * Is the running kernel ours, on a CPU its JIT can compile our programs for
 * (ak_cpu_check(), user.h)? Returns 0 if so, -EPERM if the kernel is not
 * ours, -EOPNOTSUPP if the CPU cannot, with the reason written to @why (may
 * be NULL).
 */
int arenakit_kernel_check(char *why, size_t why_len);

/* Load a skeleton (pass skel->skeleton) after the kernel check. */
int arenakit_load_skeleton(struct bpf_object_skeleton *skeleton);

/* Load an opened object after the kernel check. */
int arenakit_load_object(struct bpf_object *obj);

/*
 * Load a program made of raw instructions (the kernel feature probes and
 * their tests), after the kernel check: a sleepable syscall program, GPL.
 * Returns its fd, or a negative errno with the verifier's log in @log (may
 * be NULL).
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
 * Pin the calling thread to @cpu: a syscall program's test run takes no CPU
 * and runs where its caller does. 0 or -errno.
 */
int arenakit_pin_to_cpu(int cpu);

#endif /* ARENAKIT_LOADER_H */
