/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Guest tests: real BPF on the arenakit kernel, inside the VM. A test loads
 * through the tool's loader (loader.h) and runs programs with the library's
 * <arenakit/user.h> (ak_run, ak_run_until_done), as any loader does.
 */
#ifndef ARENAKIT_TESTS_GUEST_H
#define ARENAKIT_TESTS_GUEST_H

#include <stddef.h>
#include <criterion/criterion.h>
#include <bpf/libbpf.h>

#include <arenakit/loop.h>
#include <arenakit/user.h>
#include "loader.h"
#include "bpf_test_shared.h"

/*
 * Open the object in @elf, load only @program and return it; the object
 * is in *@obj (bpf_object__close() it). Fails the test if the load fails.
 */
struct bpf_program *guest_load_one(const void *elf, size_t size, const char *object,
				   const char *program, struct bpf_object **obj);

/*
 * What a failed test program left with tests/guest/bpf_test.h ("file:line:
 * what"), or a note on its return value @retval.
 */
const char *guest_failure_report(struct bpf_object *obj, int retval);

/* Load @program alone from @elf, run it once, and require that it returns 0. */
void guest_run_test_program(const void *elf, size_t size, const char *object,
			    const char *program);

/*
 * Run @prog once from a thread pinned to @cpu, with @ctx as its context (a
 * syscall program's changes to it are copied back): its return value, or
 * -errno when pinning or the test run fails.
 */
int guest_run_on_cpu(const struct bpf_program *prog, int cpu, void *ctx, size_t ctx_size);

/*
 * ak_run_until_done() from a thread pinned to @cpu, with no limit on the
 * runs (the test's timeout is the limit): for a program whose run can end
 * before its work does (a lock stayed busy, or its budget ran out) and that
 * keeps its progress in @ctx. The last return value, or -errno when pinning
 * or a test run fails.
 */
int guest_run_on_cpu_until_done(const struct bpf_program *prog, int cpu, void *ctx,
				size_t ctx_size);

/*
 * guest_run_on_cpu_until_done() of @prog on CPUs 0..@cpus-1 at once, one
 * thread each, CPU i with the context at @ctxs + i * @ctx_size; each run's
 * result in @errs[i]. Returns when every thread has ended.
 */
void guest_run_on_cpus(const struct bpf_program *prog, int cpus, void *ctxs, size_t ctx_size,
		       int *errs);

/*
 * Skip the calling test, naming the feature and @patch, unless the running
 * kernel has @feature (enum arenakit_feature, kernel_features.h).
 */
void guest_require_feature(int feature, const char *patch);

/*
 * Load the raw @insns as syscall program @name (they must load: a refusal
 * fails the test with the verifier's log), run them once and return what
 * they returned. *@fd is the program, for the caller to close; with @fd
 * NULL it is closed here.
 */
struct bpf_insn;
unsigned int guest_run_insns(const char *name, const struct bpf_insn *insns, size_t count,
			     int *fd);

/* The allocator's statistics through the mmap, every CPU's part summed. */
struct ak_allocator;
struct ak_alloc_stats guest_alloc_stats(const struct ak_allocator *a);
#define guest_live_objects(skel) guest_alloc_stats(&(skel)->arena->ak_allocator).objects
#define guest_live_bytes(skel) guest_alloc_stats(&(skel)->arena->ak_allocator).bytes

/*
 * Open the object in @elf, try to load @program alone, and require that
 * the verifier (or libbpf) refuses it with @reason in its log, and that
 * the loader's report to the user quotes it.
 */
void guest_expect_rejected(const void *elf, size_t size, const char *program,
			   const char *reason);

/* Seconds before Criterion gives up on one guest test: a hang fails it. */
#define GUEST_TEST_TIMEOUT 120

/* One generated test: suite @obj (the skeleton's name), test @prog. */
#define GUEST_TEST(obj, prog)						\
	Test(obj, prog, .timeout = GUEST_TEST_TIMEOUT)			\
	{								\
		size_t size;						\
		const void *elf = obj##__elf_bytes(&size);		\
									\
		guest_run_test_program(elf, size, #obj, #prog);		\
	}

#endif
