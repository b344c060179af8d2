// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Loops without a bound the verifier understands are refused, and the log
 * says why. This is what may_goto exists to lift.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest/guest.h"
#include "verifier.skel.h"

static void expect_rejected(const char *program, const char *reason)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts);
	struct bpf_object *obj;
	struct bpf_program *prog;
	size_t size;
	const void *elf = verifier__elf_bytes(&size);
	char *report_text = NULL;
	size_t report_size;
	FILE *report;
	int err;

	obj = bpf_object__open_mem(elf, size, &opts);
	cr_assert(obj, "cannot open verifier: %s", strerror(errno));
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

Test(verifier, rejects_loop_waiting_on_a_flag, .timeout = GUEST_TEST_TIMEOUT)
{
	expect_rejected("reject_infinite_loop", "infinite loop detected");
}
