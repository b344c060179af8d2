// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "guest/guest.h"
#include "kernel_features.h"
#include <arenakit/alloc.h>

struct ak_alloc_stats guest_alloc_stats(const struct ak_allocator *a)
{
	struct ak_alloc_stats s;

	cr_assert_eq(ak_alloc_stats_read(a, &s), 0);
	return s;
}

void guest_require_feature(int feature, const char *patch)
{
	int has = arenakit_feature_probe(feature);

	cr_assert_geq(has, 0, "the probe for %s failed: %s", arenakit_feature_name(feature),
		      strerror(-has));
	if (!has)
		cr_skip_test("this kernel lacks %s (%s)", arenakit_feature_name(feature), patch);
}

unsigned int guest_run_insns(const char *name, const struct bpf_insn *insns, size_t count,
			     int *fd)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	static char log[16 << 20];	/* the log of 64k insns verified */
	int prog = arenakit_load_insns(name, insns, count, log, sizeof(log));

	cr_assert_geq(prog, 0, "%s refused: %s\n%s", name, strerror(-prog), log);
	cr_assert_eq(bpf_prog_test_run_opts(prog, &opts), 0);
	if (fd)
		*fd = prog;
	else
		close(prog);
	return opts.retval;
}

int guest_run_on_cpu(const struct bpf_program *prog, int cpu, void *ctx, size_t ctx_size)
{
	int err = arenakit_pin_to_cpu(cpu), retval;

	if (!err)
		err = ak_run(prog, ctx, ctx_size, &retval);
	return err ? err : retval;
}

int guest_run_on_cpu_until_done(const struct bpf_program *prog, int cpu, void *ctx,
				size_t ctx_size)
{
	int err = arenakit_pin_to_cpu(cpu), retval;

	if (!err)
		err = ak_run_until_done(prog, ctx, ctx_size, UINT_MAX, &retval, NULL);
	return err && err != -AK_EBUDGET ? err : retval;
}

struct cpu_run {
	const struct bpf_program *prog;
	int cpu;
	void *ctx;
	size_t ctx_size;
	int err;
};

static void *cpu_run_thread(void *arg)
{
	struct cpu_run *r = arg;

	r->err = guest_run_on_cpu_until_done(r->prog, r->cpu, r->ctx, r->ctx_size);
	return NULL;
}

void guest_run_on_cpus(const struct bpf_program *prog, int cpus, void *ctxs, size_t ctx_size,
		       int *errs)
{
	struct cpu_run *runs = calloc(cpus, sizeof(*runs));
	pthread_t *threads = calloc(cpus, sizeof(*threads));
	int i;

	cr_assert(runs && threads);
	for (i = 0; i < cpus; i++) {
		runs[i] = (struct cpu_run){ prog, i, (char *)ctxs + i * ctx_size, ctx_size, 0 };
		cr_assert_eq(pthread_create(&threads[i], NULL, cpu_run_thread, &runs[i]), 0);
	}
	for (i = 0; i < cpus; i++) {
		pthread_join(threads[i], NULL);
		errs[i] = runs[i].err;
	}
	free(runs);
	free(threads);
}

struct bpf_program *guest_load_one(const void *elf, size_t size, const char *object,
				   const char *program, struct bpf_object **obj)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = object);
	struct bpf_program *prog, *wanted = NULL;
	int err;

	*obj = bpf_object__open_mem(elf, size, &opts);
	cr_assert(*obj, "cannot open BPF object %s: %s", object, strerror(errno));
	bpf_object__for_each_program(prog, *obj) {
		int is_wanted = !strcmp(bpf_program__name(prog), program);

		bpf_program__set_autoload(prog, is_wanted);
		if (is_wanted)
			wanted = prog;
	}
	cr_assert(wanted, "object %s has no program %s", object, program);
	err = arenakit_load_object(*obj);
	cr_assert_eq(err, 0, "%s/%s does not load: %s (the verifier's log is above)",
		     object, program, strerror(-err));
	return wanted;
}

const char *guest_failure_report(struct bpf_object *obj, int retval)
{
	struct bpf_map *map;
	const char *report;
	size_t size;

	if (retval == -AK_EBUDGET)
		return "the loop budget cut it (-AK_EBUDGET)";
	bpf_object__for_each_map(map, obj) {
		const char *name = bpf_map__name(map);
		size_t len = strlen(name), want = strlen(TEST_REPORT_SECTION);

		if (len < want || strcmp(name + len - want, TEST_REPORT_SECTION))
			continue;
		report = bpf_map__initial_value(map, &size);
		if (report && size && report[0])
			return report;	/* NUL-terminated by bpf_snprintf */
	}
	return "(no report: the program does not use tests/guest/bpf_test.h)";
}

void guest_run_test_program(const void *elf, size_t size, const char *object,
			    const char *program)
{
	struct bpf_object *obj;
	struct bpf_program *prog = guest_load_one(elf, size, object, program, &obj);
	int err, retval = -1;

	err = ak_run(prog, NULL, 0, &retval);
	cr_assert_eq(err, 0, "%s/%s: BPF_PROG_TEST_RUN failed: %s", object, program,
		     strerror(-err));
	if (retval)
		cr_expect_fail("%s/%s returned %d: %s", object, program, retval,
			       guest_failure_report(obj, retval));
	bpf_object__close(obj);
}

void guest_expect_rejected(const void *elf, size_t size, const char *program,
			   const char *reason)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts);
	struct bpf_object *obj;
	struct bpf_program *prog;
	char *report_text = NULL;
	size_t report_size;
	FILE *report;
	int err;

	obj = bpf_object__open_mem(elf, size, &opts);
	cr_assert(obj, "cannot open the object of %s: %s", program, strerror(errno));
	bpf_object__for_each_program(prog, obj)
		bpf_program__set_autoload(prog, !strcmp(bpf_program__name(prog), program));

	report = open_memstream(&report_text, &report_size);
	cr_assert(report);
	arenakit_set_report_stream(report);
	err = arenakit_load_object(obj);
	arenakit_set_report_stream(stderr);
	fclose(report);

	cr_expect_neq(err, 0, "%s loaded, but the verifier should refuse it", program);
	cr_expect_neq(err, -EPERM, "%s was not tried: %s", program, arenakit_load_log());
	cr_expect(strstr(arenakit_load_log(), reason),
		  "%s: the log does not say \"%s\"; it says:\n%s", program, reason,
		  arenakit_load_log());
	/* What a user sees: the failure and the verifier's reason, not an errno alone. */
	cr_expect(strstr(report_text, "the verifier said"), "report:\n%s", report_text);
	cr_expect(strstr(report_text, reason), "report:\n%s", report_text);
	free(report_text);
	bpf_object__close(obj);
}
